/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What offcpu's BPF side will copy at block time, taken here with ptrace
 * from a thread blocked in a system call: its user registers and the top
 * size bytes of its stack, from its SP up to the end of the stack's
 * mapping. For the unwinder's tests and benchmark.
 */
#ifndef UNWIND_CAPTURE_H
#define UNWIND_CAPTURE_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unwind/unwind.h"

struct capture {
	struct unwind_regs regs;
	struct unwind_stack stack;
	unsigned char *buf; /* the caller frees it */
};

/* Page by page: a copy near the top of the stack ends with its mapping. */
static inline size_t capture_read_stack(pid_t tid, uint64_t sp, unsigned char *buf, size_t size)
{
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	size_t got = 0;

	while (got < size) {
		uint64_t at = sp + got;
		size_t chunk = (size_t)(page - at % page);
		struct iovec local, remote;
		ssize_t n;

		if (chunk > size - got)
			chunk = size - got;
		local = (struct iovec){ buf + got, chunk };
		remote = (struct iovec){ (void *)(uintptr_t)at, chunk };
		n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
		if (n <= 0)
			break;
		got += (size_t)n;
		if ((size_t)n < chunk)
			break;
	}
	return got;
}

/* Stops the thread, copies its registers and stack, lets it go on. */
static inline int capture_thread(pid_t tid, size_t size, struct capture *out)
{
	struct user_regs_struct regs;
	int status, err = 0;

	out->buf = malloc(size ? size : 1);
	if (!out->buf)
		return -ENOMEM;
	if (ptrace(PTRACE_SEIZE, tid, 0, 0))
		return -errno;
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) || waitpid(tid, &status, __WALL) != tid ||
	    ptrace(PTRACE_GETREGS, tid, 0, &regs))
		err = -errno;
	if (!err) {
		unwind_regs__from_user(&out->regs, &regs);
		out->stack.start = regs.rsp;
		out->stack.data = out->buf;
		out->stack.size = capture_read_stack(tid, regs.rsp, out->buf, size);
	}
	ptrace(PTRACE_DETACH, tid, 0, 0);
	return err;
}

#endif
