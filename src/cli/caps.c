// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli/caps.h"
#include "lib/log.h"

/* CAP_CHECKPOINT_RESTORE (40) opens /proc/PID/map_files since Linux 5.9. */
#define CAP_CHECKPOINT_RESTORE_NR 40

static int last_cap(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	int last = CAP_LAST_CAP;

	if (f) {
		if (fscanf(f, "%d", &last) != 1)
			last = CAP_LAST_CAP;
		fclose(f);
	}
	return last;
}

static bool has_capability(const struct __user_cap_data_struct *data, int cap)
{
	return data[cap / 32].effective & (1u << (cap % 32));
}

bool caps__can_trace(void)
{
	struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { 0 };

	/* Cannot tell: let loading say what is missing. */
	if (syscall(SYS_capget, &header, data))
		return true;
	return has_capability(data, CAP_SYS_ADMIN) ||
	       (has_capability(data, CAP_BPF) && has_capability(data, CAP_PERFMON));
}

int caps__drop_after_attach(void)
{
	struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { 0 };
	int last = last_cap(), cap, i;
	__u64 keep =
	    1ULL << CAP_SYS_PTRACE | 1ULL << CAP_DAC_READ_SEARCH | 1ULL << CAP_DAC_OVERRIDE;

	if (last >= CAP_CHECKPOINT_RESTORE_NR)
		keep |= 1ULL << CAP_CHECKPOINT_RESTORE_NR;
	else
		keep |= 1ULL << CAP_SYS_ADMIN;
	if (syscall(SYS_capget, &header, data))
		return -errno;
	/*
	 * The bounding set first: dropping from it needs CAP_SETPCAP, dropped
	 * below. Without CAP_SETPCAP (CAP_BPF and CAP_PERFMON alone) it stays as
	 * it was: it bounds only what an exec could gain, and offcpu execs
	 * nothing once attached (the command was forked before).
	 */
	for (cap = 0; cap <= last && cap < 64; cap++) {
		if (!(keep & (1ULL << cap)))
			prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
	}
	for (i = 0; i < _LINUX_CAPABILITY_U32S_3; i++) {
		__u32 mask = (__u32)(keep >> (32 * i));

		data[i].effective &= mask;
		data[i].permitted &= mask;
		data[i].inheritable = 0;
	}
	if (syscall(SYS_capset, &header, data))
		return -errno;
	return 0;
}

void caps__drop_or_warn(const char *after)
{
	int err = caps__drop_after_attach();

	if (err)
		log__warn("cannot drop capabilities after %s (%s): offcpu keeps every privilege it "
			  "was started with until it exits",
			  after, strerror(-err));
}
