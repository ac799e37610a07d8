// SPDX-License-Identifier: GPL-2.0
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "proc/proctitle.h"

/* Enough for any server's title; the rest of a long command line is cut. */
#define CMDLINE_READ_MAX 4096

size_t proctitle__from_cmdline(const char *cmdline, size_t len, char *out, size_t out_size)
{
	size_t n = 0, i;

	if (!out_size)
		return 0;
	for (i = 0; i < len && n + 1 < out_size; i++) {
		unsigned char c = (unsigned char)cmdline[i];

		if (c == '\0')
			c = ' ';
		else if (c < 0x20 || c == 0x7f)
			c = '?';
		out[n++] = (char)c;
	}
	while (n > 0 && out[n - 1] == ' ')
		n--;
	out[n] = '\0';
	return n;
}

size_t proctitle__read(int pid, char *out, size_t out_size)
{
	char path[64], buf[CMDLINE_READ_MAX];
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (out_size)
			out[0] = '\0';
		return 0;
	}
	len = read(fd, buf, sizeof(buf));
	close(fd);
	return proctitle__from_cmdline(buf, len > 0 ? (size_t)len : 0, out, out_size);
}

bool proctitle__due(struct proctitle_age *age, uint64_t now_ns)
{
	/* Records come from every CPU, not in time order: an older one is not due. */
	if (age->read && (now_ns < age->read_ns || now_ns - age->read_ns < PROCTITLE_REFRESH_NS))
		return false;
	age->read = true;
	age->read_ns = now_ns;
	return true;
}
