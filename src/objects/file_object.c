// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "objects/file_object.h"

/* include/uapi/linux/magic.h */
#define PIPEFS_MAGIC 0x50495045
#define ANON_INODE_FS_MAGIC 0x09041934
/* include/net/tcp_states.h */
#define TCP_LISTEN 10

/* The kernel's own dev_t (include/linux/kdev_t.h): the major above 20 bits of minor. */
static dev_t user_dev(uint32_t kdev)
{
	return makedev(kdev >> 20, kdev & 0xfffff);
}

/* A path longer than the name keeps its end, where the file's own name is, after "...". */
static void copy_path(char *buf, size_t size, const char *path)
{
	size_t len = strlen(path);

	if (len < size)
		memcpy(buf, path, len + 1);
	else
		snprintf(buf, size, "...%s", path + len - (size - 4));
}

/*
 * Its path as the process sees it (/proc/PID/task/TID/fd/FD), if that
 * path, inside the process's root, is the inode BPF read, on its device:
 * the fd may hold another file since, or the file be renamed or removed.
 */
static bool path_of(const char *proc, uint32_t pid, const struct offcpu_file *f, char *buf,
		    size_t size)
{
	char link[128], target[PATH_MAX], rooted[PATH_MAX + 64];
	struct stat st;
	ssize_t n;
	int len;

	len = snprintf(link, sizeof(link), "%s/%u/task/%u/fd/%u", proc, pid, f->tid ?: pid, f->fd);
	if (len < 0 || (size_t)len >= sizeof(link))
		return false;
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0 || target[0] != '/')
		return false;
	target[n] = '\0';
	len = snprintf(rooted, sizeof(rooted), "%s/%u/root%s", proc, pid, target);
	if (len < 0 || (size_t)len >= sizeof(rooted))
		return false;
	if (stat(rooted, &st) || st.st_ino != f->ino || st.st_dev != user_dev(f->dev)) {
		/*
		 * A file removed while open, a memfd: the kernel names it
		 * "/memfd:NAME (deleted)", a path nothing is at. The fd link
		 * itself leads to the open file: if that is the inode BPF read,
		 * the kernel's name is its own.
		 */
		if (n < 10 || strcmp(target + n - 10, " (deleted)") || stat(link, &st) ||
		    st.st_ino != f->ino || st.st_dev != user_dev(f->dev))
			return false;
	}
	copy_path(buf, size, target);
	return true;
}

static void name_path(const char *proc, uint32_t pid, const struct offcpu_file *f,
		      const char *unnamed, struct object_name *out)
{
	if (path_of(proc, pid, f, out->name, sizeof(out->name)))
		return;
	snprintf(out->name, sizeof(out->name), "%s:[%" PRIu64 "]", unnamed, (uint64_t)f->ino);
	out->failed = true;
}

static const char *inet_protocol(const struct offcpu_file *f)
{
	switch (f->sock_protocol) {
	case IPPROTO_TCP:
		return "tcp";
	case IPPROTO_UDP:
		return "udp";
	case IPPROTO_UDPLITE:
		return "udplite";
	case IPPROTO_SCTP:
		return "sctp";
	case IPPROTO_MPTCP:
		return "mptcp";
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		return "icmp";
	}
	return f->sock_type == SOCK_RAW ? "raw" : "ip";
}

static void endpoint(const struct offcpu_file *f, const uint8_t *addr, uint16_t port, char *buf,
		     size_t size)
{
	char text[INET6_ADDRSTRLEN];

	if (f->sock_family == AF_INET6) {
		inet_ntop(AF_INET6, addr, text, sizeof(text));
		snprintf(buf, size, "[%s]:%u", text, port);
	} else {
		inet_ntop(AF_INET, addr, text, sizeof(text));
		snprintf(buf, size, "%s:%u", text, port);
	}
}

static bool zero(const uint8_t *bytes, size_t size)
{
	size_t i;

	for (i = 0; i < size; i++)
		if (bytes[i])
			return false;
	return true;
}

bool file_object__inet_name(const struct offcpu_file *f, char *buf, size_t size)
{
	char local[INET6_ADDRSTRLEN + 10], peer[INET6_ADDRSTRLEN + 10];
	const char *proto = inet_protocol(f), *six = f->sock_family == AF_INET6 ? "6" : "";

	if (f->sock_family != AF_INET && f->sock_family != AF_INET6)
		return false;
	endpoint(f, f->local_addr, f->local_port, local, sizeof(local));
	if (f->sock_protocol == IPPROTO_TCP && f->sock_state == TCP_LISTEN) {
		snprintf(buf, size, "%s%s %s listening", proto, six, local);
		return true;
	}
	if (!f->peer_port && zero(f->peer_addr, sizeof(f->peer_addr))) {
		snprintf(buf, size, "%s%s %s", proto, six, local);
		return true;
	}
	endpoint(f, f->peer_addr, f->peer_port, peer, sizeof(peer));
	snprintf(buf, size, "%s%s %s -> %s", proto, six, local, peer);
	return true;
}

/*
 * A line of /proc/net/unix (net/unix/af_unix.c, unix_seq_show()):
 * "%pK: %08X %08X %08X %04X %02X %5lu", then " PATH" if it is bound.
 * Whether it is one; *path NULL when it has none.
 */
static bool unix_line(char *line, uint64_t *ino, const char **path)
{
	unsigned long long inode;
	int at = -1;

	if (sscanf(line, "%*x: %*x %*x %*x %*x %*x %llu%n", &inode, &at) != 1 || at < 0)
		return false;
	*ino = inode;
	*path = line[at] == ' ' ? line + at + 1 : NULL;
	return line[at] == ' ' || line[at] == '\0';
}

int file_object__unix_path(FILE *net_unix, uint64_t ino, char *buf, size_t size)
{
	char *line = NULL, *found = NULL;
	bool after_match = false, forged = false;
	size_t cap = 0;
	ssize_t n;
	int matches = 0;

	while ((n = getline(&line, &cap, net_unix)) > 0) {
		const char *path;
		uint64_t at;
		bool parsed;

		if (line[n - 1] == '\n')
			line[--n] = '\0';
		parsed = unix_line(line, &at, &path);
		/*
		 * A path with a line end in it goes on on the next line: its
		 * name is not the part before. What follows a match must be a
		 * line of its own.
		 */
		if (after_match && !parsed)
			forged = true;
		after_match = false;
		if (!parsed || at != ino)
			continue;
		matches++;
		after_match = true;
		free(found);
		found = path ? strdup(path) : NULL;
		if (path && !found)
			break;
	}
	free(line);
	if (matches > 1 || forged) {
		free(found);
		return -EEXIST;
	}
	if (!found)
		return -ENOENT;
	copy_path(buf, size, found);
	free(found);
	return 0;
}

int file_object__epoll_fds(FILE *fdinfo, uint64_t ino, uint32_t *count)
{
	char *line = NULL;
	size_t cap = 0;
	int err = 0;

	*count = 0;
	while (getline(&line, &cap, fdinfo) > 0) {
		if (!strncmp(line, "ino:", 4) && strtoull(line + 4, NULL, 10) != ino)
			err = -ESTALE;
		else if (!strncmp(line, "tfd:", 4))
			(*count)++;
	}
	free(line);
	return err;
}

static void name_unix(const char *proc, uint32_t pid, const struct offcpu_file *f,
		      struct object_name *out)
{
	char path[sizeof(out->name) - 5], file[64];
	FILE *in;
	int err = -EIO;

	/* The process's own network namespace: where its socket is. */
	snprintf(file, sizeof(file), "%s/%u/net/unix", proc, pid);
	in = fopen(file, "re");
	if (in) {
		err = file_object__unix_path(in, f->ino, path, sizeof(path));
		fclose(in);
	}
	if (!err) {
		snprintf(out->name, sizeof(out->name), "unix %s", path);
		return;
	}
	snprintf(out->name, sizeof(out->name), "unix:[%" PRIu64 "]", (uint64_t)f->ino);
	if (err != -ENOENT)
		out->failed = true;
}

static void name_socket(const char *proc, uint32_t pid, const struct offcpu_file *f,
			struct object_name *out)
{
	const char *family = "socket";

	out->kind = "socket";
	if (file_object__inet_name(f, out->name, sizeof(out->name)))
		return;
	switch (f->sock_family) {
	case AF_UNIX:
		name_unix(proc, pid, f, out);
		return;
	case AF_NETLINK:
		family = "netlink";
		break;
	case AF_PACKET:
		family = "packet";
		break;
	case AF_VSOCK:
		family = "vsock";
		break;
	}
	snprintf(out->name, sizeof(out->name), "%s:[%" PRIu64 "]", family, (uint64_t)f->ino);
}

/*
 * An epoll and the fds it watches: its fd must still be an epoll, and its
 * fdinfo's inode the one read (all epolls share one anonymous inode, so
 * another epoll on the same fd since cannot be told apart).
 */
static void name_epoll(const char *proc, uint32_t pid, const struct offcpu_file *f,
		       struct object_name *out)
{
	static const char epoll_link[] = "anon_inode:[eventpoll]";
	char path[128], target[sizeof(epoll_link)];
	uint32_t count = 0;
	ssize_t n;
	FILE *in = NULL;
	int err = -EIO;

	out->kind = "epoll";
	snprintf(path, sizeof(path), "%s/%u/task/%u/fd/%u", proc, pid, f->tid ?: pid, f->fd);
	n = readlink(path, target, sizeof(target));
	if (n == (ssize_t)sizeof(epoll_link) - 1 && !memcmp(target, epoll_link, (size_t)n)) {
		snprintf(path, sizeof(path), "%s/%u/task/%u/fdinfo/%u", proc, pid, f->tid ?: pid,
			 f->fd);
		in = fopen(path, "re");
	}
	if (in) {
		err = file_object__epoll_fds(in, f->ino, &count);
		fclose(in);
	}
	if (err) {
		snprintf(out->name, sizeof(out->name), "epoll");
		out->failed = true;
		return;
	}
	snprintf(out->name, sizeof(out->name), "epoll (%u fd%s)", count, count == 1 ? "" : "s");
}

/* A file with no path of its own (eventfd, epoll, timerfd...): named by its dentry. */
static void name_anon(const char *proc, uint32_t pid, const struct offcpu_file *f,
		      struct object_name *out)
{
	char dname[OFFCPU_FILE_DNAME_LEN + 1];

	memcpy(dname, f->dname, OFFCPU_FILE_DNAME_LEN);
	dname[OFFCPU_FILE_DNAME_LEN] = '\0';
	if (!strcmp(dname, "[eventpoll]")) {
		name_epoll(proc, pid, f, out);
		return;
	}
	if (!strcmp(dname, "[eventfd]")) {
		out->kind = "eventfd";
		snprintf(out->name, sizeof(out->name), "eventfd");
		return;
	}
	out->kind = "file";
	snprintf(out->name, sizeof(out->name), "anon_inode:%s", dname);
}

void file_object__name(const char *proc, uint32_t pid, uint32_t nr, const struct offcpu_file *f,
		       struct object_name *out)
{
	uint32_t type = f->mode & S_IFMT;

	if (nr == OFFCPU_NR_FLOCK || nr == OFFCPU_NR_FCNTL) {
		out->kind = nr == OFFCPU_NR_FLOCK ? "flock" : "posix lock";
		name_path(proc, pid, f, "file", out);
	} else if (type == S_IFIFO && f->magic == PIPEFS_MAGIC) {
		out->kind = "pipe";
		snprintf(out->name, sizeof(out->name), "pipe:[%" PRIu64 "]", (uint64_t)f->ino);
	} else if (type == S_IFIFO) {
		out->kind = "fifo";
		name_path(proc, pid, f, "fifo", out);
	} else if (type == S_IFSOCK) {
		name_socket(proc, pid, f, out);
	} else if (f->magic == ANON_INODE_FS_MAGIC) {
		name_anon(proc, pid, f, out);
	} else {
		out->kind = "file";
		name_path(proc, pid, f, "file", out);
	}
}
