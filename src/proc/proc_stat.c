// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/proc_stat.h"

/* A stat line is under 400 bytes; its comm is at most 64 (a kernel thread's). */
#define STAT_READ_MAX 1024

/* Fields after the comm's ")": 3 is state, 20 num_threads, 22 starttime. */
#define FIELD_STATE 3
#define FIELD_THREADS 20
#define FIELD_START 22

int proc_stat__parse(const char *buf, size_t len, struct proc_stat *out)
{
	char line[STAT_READ_MAX], *p, *end;
	unsigned long long value;
	unsigned int field;

	if (len >= sizeof(line))
		len = sizeof(line) - 1;
	memcpy(line, buf, len);
	line[len] = '\0';
	/* The comm is whatever the process named itself: the last ')' ends it. */
	p = strrchr(line, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->state = p[2];
	p += 3;
	for (field = FIELD_STATE + 1; field <= FIELD_START; field++) {
		if (*p != ' ')
			return -EINVAL;
		errno = 0;
		value = strtoull(p + 1, &end, 10);
		/* Some fields are signed (priority, nice): only ours must be numbers. */
		if (end == p + 1 || errno)
			return -EINVAL;
		if (field == FIELD_THREADS)
			out->threads = value > UINT32_MAX ? UINT32_MAX : (uint32_t)value;
		else if (field == FIELD_START)
			out->start_ticks = value;
		p = end;
	}
	return 0;
}

int proc_stat__read(uint32_t pid, struct proc_stat *out)
{
	char path[32], buf[STAT_READ_MAX];
	ssize_t len;
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ESRCH ? -ENOENT : -errno;
	len = read(fd, buf, sizeof(buf));
	err = len < 0 ? -errno : 0;
	close(fd);
	/* Reaped between the open and the read. */
	if (err == -ESRCH)
		return -ENOENT;
	return err ?: proc_stat__parse(buf, (size_t)len, out);
}

bool proc_stat__exited(const struct proc_stat *st)
{
	return (st->state == 'Z' || st->state == 'X') && st->threads <= 1;
}

bool proc_stat__pid_exited(uint32_t pid)
{
	struct proc_stat st;
	int err = proc_stat__read(pid, &st);

	return err == -ENOENT || (!err && proc_stat__exited(&st));
}
