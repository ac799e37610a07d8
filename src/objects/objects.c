// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/hash_table.h"
#include "lib/u32_key.h"
#include "objects/data_names.h"
#include "objects/file_object.h"
#include "objects/futex_lock.h"
#include "objects/kernel_lock.h"
#include "objects/objects.h"

/* clock_nanosleep's flags (include/uapi/linux/time.h); waitid's idtype (linux/wait.h). */
#define TIMER_ABSTIME 1
#define P_ALL 0
#define P_PID 1
#define P_PGID 2
#define P_PIDFD 3

/* A holder's name is read again after this long: a thread may rename itself. */
#define HOLDER_TTL_NS 1000000000ull

struct holder {
	uint32_t tid;
	uint32_t pid;
	uint64_t read_ns;
	char comm[OFFCPU_COMM_LEN + 1];
};

struct objects {
	struct data_names *names;
	struct hash_table *holders; /* tid -> struct holder */
};

int objects__new(const struct symbol_limits *limits, struct objects **out)
{
	struct objects *objs = calloc(1, sizeof(*objs));
	int err;

	if (!objs)
		return -ENOMEM;
	err = data_names__new(limits, &objs->names);
	objs->holders = hash_table__new(u32_key__hash, u32_key__equal);
	if (err || !objs->holders) {
		objects__free(objs);
		return err ?: -ENOMEM;
	}
	*out = objs;
	return 0;
}

void objects__free(struct objects *objs)
{
	if (!objs)
		return;
	data_names__free(objs->names);
	hash_table__free_values(objs->holders, free);
	free(objs);
}

void objects__forget(struct objects *objs, uint32_t pid)
{
	data_names__forget(objs->names, pid);
}

/* A /proc file's first line, without its newline; false if it cannot be read. */
static bool read_line(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return true;
}

/* The Tgid: line of /proc/TID/status, for a holder in another process. */
static uint32_t tgid_of(uint32_t tid)
{
	char path[64], buf[512], *at;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	at = strstr(buf, "\nTgid:");
	return at ? (uint32_t)strtoul(at + 6, NULL, 10) : 0;
}

/*
 * The holder's process and name: the waiter's own process first, where a
 * process-private lock's holder is; else whichever process the TID is in.
 */
static bool read_holder(uint32_t pid, struct holder *h)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, h->tid);
	if (read_line(path, h->comm, sizeof(h->comm))) {
		h->pid = pid;
		return true;
	}
	h->pid = tgid_of(h->tid);
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", h->pid, h->tid);
	return h->pid && read_line(path, h->comm, sizeof(h->comm));
}

static void name_holder(struct objects *objs, uint32_t pid, uint32_t tid, struct object_name *out)
{
	struct holder *h = u32_key__find_or_add(objs->holders, tid, sizeof(*h),
						offsetof(struct holder, tid), NULL);
	uint64_t now = clock__monotonic_ns();
	struct holder fresh = { .tid = tid };

	out->holder_tid = tid;
	out->holder_pid = pid;
	if (!h)
		return;
	/* A holder gone since keeps the name it had: a lock outlives its holder's exit. */
	if (!h->read_ns || now - h->read_ns >= HOLDER_TTL_NS) {
		if (read_holder(pid, &fresh))
			*h = fresh;
		else if (!h->read_ns)
			out->failed = true;
		h->read_ns = now;
	}
	if (h->pid)
		out->holder_pid = h->pid;
	snprintf(out->holder_comm, sizeof(out->holder_comm), "%s", h->comm);
}

static void name_address(struct objects *objs, uint32_t pid, uint64_t addr, struct object_name *out)
{
	out->addr = addr;
	if (data_names__name(objs->names, pid, addr, out->name, sizeof(out->name))) {
		snprintf(out->name, sizeof(out->name), "0x%" PRIx64, addr);
		out->failed = true;
	}
}

static void name_futex(struct objects *objs, uint32_t pid, const struct offcpu_object *o,
		       const struct stack *user_stack, struct object_name *out)
{
	struct futex_lock lock;

	futex_lock__decode(o, user_stack, &lock);
	out->kind = futex_lock__kind_name(lock.kind);
	name_address(objs, pid, lock.addr, out);
	if (lock.holder_unread)
		out->failed = true;
	if (lock.holder_tid)
		name_holder(objs, pid, lock.holder_tid, out);
}

/* struct futex_waitv (include/uapi/linux/futex.h): val, uaddr, flags, reserved. */
#define FUTEX_WAITV_SIZE 24
#define FUTEX_WAITV_UADDR 8

static void name_futex_waitv(struct objects *objs, uint32_t pid, const struct offcpu_object *o,
			     struct object_name *out)
{
	uint64_t first;
	size_t len;

	out->kind = "futex";
	if (o->window_addr != o->args[0] || o->window_len < FUTEX_WAITV_UADDR + sizeof(first) ||
	    o->window_len > OFFCPU_OBJECT_WINDOW) {
		out->failed = true;
		return;
	}
	memcpy(&first, o->window + FUTEX_WAITV_UADDR, sizeof(first));
	name_address(objs, pid, first, out);
	len = strlen(out->name);
	if (o->args[1] > 1)
		snprintf(out->name + len, sizeof(out->name) - len, " and %" PRIu64 " more",
			 (uint64_t)o->args[1] - 1);
}

/* "20 ms", "1.5 s": the largest unit that leaves at most three decimals. */
static void format_duration(uint64_t ns, char *buf, size_t size)
{
	static const struct {
		uint64_t ns;
		const char *unit;
	} units[] = { { 1000000000ull, "s" }, { 1000000ull, "ms" }, { 1000ull, "us" } };
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (ns >= units[i].ns) {
			snprintf(buf, size, "%.*f %s", ns % units[i].ns ? 3 : 0,
				 (double)ns / (double)units[i].ns, units[i].unit);
			return;
		}
	}
	snprintf(buf, size, "%" PRIu64 " ns", ns);
}

static void name_timer(const struct offcpu_object *o, bool absolute, struct object_name *out)
{
	int64_t ts[2];
	char text[48];

	out->kind = "timer";
	if (absolute) {
		snprintf(out->name, sizeof(out->name), "timer to a deadline");
		return;
	}
	if (o->window_len < sizeof(ts) || o->window_len > OFFCPU_OBJECT_WINDOW) {
		snprintf(out->name, sizeof(out->name), "timer");
		out->failed = true;
		return;
	}
	memcpy(ts, o->window, sizeof(ts));
	if (ts[0] < 0 || ts[1] < 0 || ts[1] >= 1000000000) {
		snprintf(out->name, sizeof(out->name), "timer");
		return;
	}
	format_duration((uint64_t)ts[0] * 1000000000ull + (uint64_t)ts[1], text, sizeof(text));
	snprintf(out->name, sizeof(out->name), "timer %s", text);
}

/* wait4's pid argument, as the man page reads it. */
static void name_wait4(int32_t pid, struct object_name *out)
{
	out->kind = "child";
	if (pid > 0)
		snprintf(out->name, sizeof(out->name), "pid %d", pid);
	else if (pid == -1)
		snprintf(out->name, sizeof(out->name), "any child");
	else if (pid == 0)
		snprintf(out->name, sizeof(out->name), "any child in its process group");
	else
		snprintf(out->name, sizeof(out->name), "any child in process group %d", -pid);
}

static void name_waitid(uint32_t idtype, int32_t id, struct object_name *out)
{
	out->kind = "child";
	if (idtype == P_PID)
		snprintf(out->name, sizeof(out->name), "pid %d", id);
	else if (idtype == P_PGID)
		snprintf(out->name, sizeof(out->name), "any child in process group %d", id);
	else if (idtype == P_PIDFD)
		snprintf(out->name, sizeof(out->name), "the child of pidfd %d", id);
	else
		snprintf(out->name, sizeof(out->name), "any child");
}

/* The holder is the lock's, read in BPF: a task pointer means nothing here. */
static void name_kernel_lock(const struct offcpu_kernel_lock *k, const struct stack *kernel_stack,
			     struct object_name *out)
{
	out->kind = kernel_lock__kind_name(k->flags);
	out->addr = k->addr;
	if (!kernel_lock__name(k, kernel_stack, out->name, sizeof(out->name)))
		out->failed = true;
	if (k->holder == OFFCPU_KLOCK_HOLDER_UNREAD)
		out->failed = true;
	if (k->holder != OFFCPU_KLOCK_HOLDER_TASK)
		return;
	out->holder_pid = k->holder_pid;
	out->holder_tid = k->holder_tid;
	snprintf(out->holder_comm, sizeof(out->holder_comm), "%.*s", (int)sizeof(k->holder_comm),
		 k->holder_comm);
}

bool objects__name(struct objects *objs, uint32_t pid, const struct offcpu_object *o,
		   const struct stack *user_stack, const struct stack *kernel_stack,
		   struct object_name *out)
{
	memset(out, 0, sizeof(*out));
	/* Inside the system call, more specific than its object: a write()'s inode lock. */
	if (o->kernel_lock.taken) {
		name_kernel_lock(&o->kernel_lock, kernel_stack, out);
		return true;
	}
	if (!o->taken)
		return false;
	/* A call on one fd: the file it held, read at the switch-in. */
	if (o->file.taken) {
		file_object__name("/proc", pid, o->syscall, &o->file, out);
		return true;
	}
	switch (o->syscall) {
	case OFFCPU_NR_FUTEX:
		name_futex(objs, pid, o, user_stack, out);
		return true;
	case OFFCPU_NR_FUTEX_WAITV:
		name_futex_waitv(objs, pid, o, out);
		return out->name[0] != '\0';
	case OFFCPU_NR_NANOSLEEP:
		name_timer(o, false, out);
		return true;
	case OFFCPU_NR_CLOCK_NANOSLEEP:
		name_timer(o, o->args[1] & TIMER_ABSTIME, out);
		return true;
	case OFFCPU_NR_WAIT4:
		name_wait4((int32_t)o->args[0], out);
		return true;
	case OFFCPU_NR_WAITID:
		name_waitid((uint32_t)o->args[0], (int32_t)o->args[1], out);
		return true;
	}
	return false;
}
