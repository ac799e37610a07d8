// SPDX-License-Identifier: GPL-2.0
/*
 * The file a wait on one fd waited on: sockets by their addresses, the
 * parsers of /proc/net/unix and an epoll's fdinfo, and the names in a
 * /proc tree laid out in a temporary directory, whose fd links point at
 * real files: a path is given only where it still is the inode read.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <cmocka.h>

#include "objects/file_object.h"

#define PID 4242
#define TID 4243
#define PIPEFS_MAGIC 0x50495045
#define ANON_INODE_FS_MAGIC 0x09041934
#define EXT4_MAGIC 0xef53

static char tree[64];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void at(char *buf, size_t size, const char *rest)
{
	snprintf(buf, size, "%s/%d%s", tree, PID, rest);
}

/* TREE/PID/{root -> /, net/unix, task/TID/fd/, task/TID/fdinfo/}. */
static int setup(void **state)
{
	char path[PATH_MAX];

	(void)state;
	snprintf(tree, sizeof(tree), "/tmp/test_file_object.XXXXXX");
	if (!mkdtemp(tree))
		return -1;
	at(path, sizeof(path), "");
	mkdir(path, 0700);
	at(path, sizeof(path), "/net");
	mkdir(path, 0700);
	at(path, sizeof(path), "/task");
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/%d/task/%d", tree, PID, TID);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/%d/task/%d/fd", tree, PID, TID);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/%d/task/%d/fdinfo", tree, PID, TID);
	mkdir(path, 0700);
	at(path, sizeof(path), "/root");
	return symlink("/", path);
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tree);
	return system(cmd);
}

/* fd N of the thread is a link to target, as /proc shows it. */
static void fd_link(int fd, const char *target)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%d/task/%d/fd/%d", tree, PID, TID, fd);
	unlink(path);
	assert_int_equal(symlink(target, path), 0);
}

/* What BPF reads of the file at path: its inode and the kernel's encoding of its device. */
static struct offcpu_file file_at(const char *path, int fd)
{
	struct offcpu_file f = { .taken = 1, .tid = TID, .fd = fd, .magic = EXT4_MAGIC };
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	f.ino = st.st_ino;
	f.mode = st.st_mode;
	f.dev = major(st.st_dev) << 20 | minor(st.st_dev);
	return f;
}

static struct offcpu_file inet(int family, int protocol, const void *local, uint16_t lport,
			       const void *peer, uint16_t pport, size_t addr_len)
{
	struct offcpu_file f = { .taken = 1, .mode = S_IFSOCK, .sock_family = family };

	f.sock_protocol = protocol;
	f.sock_type = protocol == 6 ? SOCK_STREAM : SOCK_DGRAM;
	memcpy(f.local_addr, local, addr_len);
	memcpy(f.peer_addr, peer, addr_len);
	f.local_port = lport;
	f.peer_port = pport;
	f.sock_state = 1; /* TCP_ESTABLISHED */
	return f;
}

static void sockets_by_their_ends(void **state)
{
	const uint8_t lo[4] = { 127, 0, 0, 1 }, any[4] = { 0 }, lo6[16] = { [15] = 1 };
	struct offcpu_file f;
	char buf[160];

	(void)state;
	f = inet(AF_INET, 6, lo, 40122, lo, 5432, 4);
	assert_true(file_object__inet_name(&f, buf, sizeof(buf)));
	assert_string_equal(buf, "tcp 127.0.0.1:40122 -> 127.0.0.1:5432");
	f.sock_state = 10; /* TCP_LISTEN */
	assert_true(file_object__inet_name(&f, buf, sizeof(buf)));
	assert_string_equal(buf, "tcp 127.0.0.1:40122 listening");
	f = inet(AF_INET, 17, any, 53, any, 0, 4);
	assert_true(file_object__inet_name(&f, buf, sizeof(buf)));
	assert_string_equal(buf, "udp 0.0.0.0:53");
	f = inet(AF_INET6, 6, lo6, 5432, lo6, 40122, 16);
	assert_true(file_object__inet_name(&f, buf, sizeof(buf)));
	assert_string_equal(buf, "tcp6 [::1]:5432 -> [::1]:40122");
	f.sock_family = AF_UNIX;
	assert_false(file_object__inet_name(&f, buf, sizeof(buf)));
}

static int unix_path_of(const char *text, uint64_t ino, char *buf, size_t size)
{
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	int err;

	assert_non_null(in);
	err = file_object__unix_path(in, ino, buf, size);
	fclose(in);
	return err;
}

static const char NET_UNIX[] =
    "Num       RefCount Protocol Flags    Type St Inode Path\n"
    "0000000000000000: 00000002 00000000 00010000 0001 01 30101 /run/db.sock\n"
    "0000000000000000: 00000003 00000000 00000000 0001 03 30102 /run/a path \x1b[2J\n"
    "0000000000000000: 00000003 00000000 00000000 0001 03 30103\n"
    "0000000000000000: 00000002 00000000 00010000 0001 01 30104 @abstract\n";

static void unix_paths_from_proc_net_unix(void **state)
{
	char buf[160];

	(void)state;
	assert_int_equal(unix_path_of(NET_UNIX, 30101, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/run/db.sock");
	assert_int_equal(unix_path_of(NET_UNIX, 30102, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/run/a path \x1b[2J");
	assert_int_equal(unix_path_of(NET_UNIX, 30104, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "@abstract");
	/* Unbound, or not there. */
	assert_int_equal(unix_path_of(NET_UNIX, 30103, buf, sizeof(buf)), -ENOENT);
	assert_int_equal(unix_path_of(NET_UNIX, 99, buf, sizeof(buf)), -ENOENT);
}

static void a_path_with_a_line_end_names_nothing(void **state)
{
	/* A line forged inside another socket's path claims 30101's inode. */
	static const char forged[] =
	    "Num       RefCount Protocol Flags    Type St Inode Path\n"
	    "0000000000000000: 00000002 00000000 00010000 0001 01 30107 /tmp/x\n"
	    "0000000000000000: 00000002 00000000 00010000 0001 01 30101 /etc/fake\n"
	    "0000000000000000: 00000002 00000000 00010000 0001 01 30101 /run/db.sock\n";
	/* A path going on on the next line: the part before it is not its name. */
	static const char split[] =
	    "0000000000000000: 00000002 00000000 00010000 0001 01 30108 /tmp/a\n"
	    "b\n";
	char buf[160];

	(void)state;
	assert_int_equal(unix_path_of(forged, 30101, buf, sizeof(buf)), -EEXIST);
	assert_int_equal(unix_path_of(split, 30108, buf, sizeof(buf)), -EEXIST);
}

static void an_epoll_counts_its_fds(void **state)
{
	static const char info[] = "pos:\t0\nflags:\t02000002\nmnt_id:\t16\nino:\t1057\n"
				   "tfd:        5 events:       19 data:                5  pos:0 "
				   "ino:1234 sdev:8\n"
				   "tfd:        7 events:       19 data:                7  pos:0 "
				   "ino:1235 sdev:8\n";
	uint32_t count;
	FILE *in;

	(void)state;
	in = fmemopen((void *)info, strlen(info), "r");
	assert_int_equal(file_object__epoll_fds(in, 1057, &count), 0);
	assert_int_equal(count, 2);
	fclose(in);
	/* The fd holds another file now. */
	in = fmemopen((void *)info, strlen(info), "r");
	assert_int_equal(file_object__epoll_fds(in, 1058, &count), -ESTALE);
	fclose(in);
}

static void files_named_by_their_path_only_if_it_is_theirs(void **state)
{
	char path[PATH_MAX], other[PATH_MAX];
	struct object_name n;
	struct offcpu_file f;

	(void)state;
	snprintf(path, sizeof(path), "%s/data \x1b[31m file", tree);
	write_file(path, "x");
	snprintf(other, sizeof(other), "%s/other", tree);
	write_file(other, "y");
	fd_link(3, path);
	f = file_at(path, 3);
	memset(&n, 0, sizeof(n));
	file_object__name(tree, PID, 0, &f, &n);
	assert_string_equal(n.kind, "file");
	assert_string_equal(n.name, path);
	assert_false(n.failed);
	/* fsync or flock on it. */
	memset(&n, 0, sizeof(n));
	file_object__name(tree, PID, 73, &f, &n);
	assert_string_equal(n.kind, "flock");
	assert_string_equal(n.name, path);
	/* The fd holds another file since the wait: not its name. */
	fd_link(3, other);
	memset(&n, 0, sizeof(n));
	file_object__name(tree, PID, 0, &f, &n);
	snprintf(other, sizeof(other), "file:[%llu]", (unsigned long long)f.ino);
	assert_string_equal(n.name, other);
	assert_true(n.failed);
	/* The same inode on another device is another file. */
	fd_link(3, path);
	f.dev ^= 1;
	memset(&n, 0, sizeof(n));
	file_object__name(tree, PID, 0, &f, &n);
	assert_string_equal(n.name, other);
	assert_true(n.failed);
	/* Gone: the fd is closed. */
	f = file_at(path, 4);
	memset(&n, 0, sizeof(n));
	file_object__name(tree, PID, 0, &f, &n);
	assert_true(n.failed);
}

static void pipes_fifos_and_anonymous_files(void **state)
{
	char path[PATH_MAX], info[PATH_MAX], text[64];
	struct offcpu_file f = { .taken = 1, .tid = TID, .fd = 5, .ino = 77 };
	struct object_name n;

	(void)state;
	f.mode = S_IFIFO | 0600;
	f.magic = PIPEFS_MAGIC;
	memset(&n, 0, sizeof(n));
	file_object__name(tree, PID, 0, &f, &n);
	assert_string_equal(n.kind, "pipe");
	assert_string_equal(n.name, "pipe:[77]");
	snprintf(path, sizeof(path), "%s/a fifo", tree);
	assert_int_equal(mkfifo(path, 0600), 0);
	fd_link(5, path);
	f = file_at(path, 5);
	memset(&n, 0, sizeof(n));
	file_object__name(tree, PID, 0, &f, &n);
	assert_string_equal(n.kind, "fifo");
	assert_string_equal(n.name, path);
	/* eventfd and epoll share one inode; their dentries tell them apart. */
	f = (struct offcpu_file){
		.taken = 1, .tid = TID, .fd = 6, .ino = 1057, .magic = ANON_INODE_FS_MAGIC
	};
	memcpy(f.dname, "[eventfd]", 10);
	memset(&n, 0, sizeof(n));
	file_object__name(tree, PID, 0, &f, &n);
	assert_string_equal(n.kind, "eventfd");
	assert_string_equal(n.name, "eventfd");
	memcpy(f.dname, "[eventpoll]", 12);
	fd_link(6, "anon_inode:[eventpoll]");
	snprintf(info, sizeof(info), "%s/%d/task/%d/fdinfo/6", tree, PID, TID);
	write_file(info, "pos:\t0\nino:\t1057\ntfd: 5 events: 19\ntfd: 7 events: 19\n"
			 "tfd: 9 events: 19\n");
	memset(&n, 0, sizeof(n));
	file_object__name(tree, PID, 0, &f, &n);
	assert_string_equal(n.kind, "epoll");
	assert_string_equal(n.name, "epoll (3 fds)");
	assert_false(n.failed);
	/* Its fd is no epoll now. */
	fd_link(6, "anon_inode:[eventfd]");
	memset(&n, 0, sizeof(n));
	file_object__name(tree, PID, 0, &f, &n);
	assert_string_equal(n.name, "epoll");
	assert_true(n.failed);
	memcpy(f.dname, "[timerfd]", 10);
	memset(&n, 0, sizeof(n));
	file_object__name(tree, PID, 0, &f, &n);
	assert_string_equal(n.name, "anon_inode:[timerfd]");
	snprintf(text, sizeof(text), "%s", n.kind);
	assert_string_equal(text, "file");
}

static void unix_sockets_by_path_or_inode(void **state)
{
	char path[PATH_MAX];
	struct offcpu_file f = { .taken = 1,
				 .tid = TID,
				 .fd = 7,
				 .mode = S_IFSOCK,
				 .sock_family = AF_UNIX,
				 .ino = 30101 };
	struct object_name n;

	(void)state;
	at(path, sizeof(path), "/net/unix");
	write_file(path, NET_UNIX);
	memset(&n, 0, sizeof(n));
	file_object__name(tree, PID, 45, &f, &n);
	assert_string_equal(n.kind, "socket");
	assert_string_equal(n.name, "unix /run/db.sock");
	f.ino = 30103;
	memset(&n, 0, sizeof(n));
	file_object__name(tree, PID, 45, &f, &n);
	assert_string_equal(n.name, "unix:[30103]");
	assert_false(n.failed);
	f.sock_family = AF_NETLINK;
	memset(&n, 0, sizeof(n));
	file_object__name(tree, PID, 45, &f, &n);
	assert_string_equal(n.name, "netlink:[30103]");
}

static void a_long_path_keeps_its_end(void **state)
{
	char dir[512], path[PATH_MAX], name[] = "the-file-itself";
	struct object_name n;
	struct offcpu_file f;
	size_t len;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/%0200d", tree, 0);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	write_file(path, "z");
	fd_link(8, path);
	f = file_at(path, 8);
	memset(&n, 0, sizeof(n));
	file_object__name(tree, PID, 0, &f, &n);
	len = strlen(n.name);
	assert_int_equal(len, sizeof(n.name) - 1);
	assert_memory_equal(n.name, "...", 3);
	assert_string_equal(n.name + len - strlen(name), name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sockets_by_their_ends),
		cmocka_unit_test(unix_paths_from_proc_net_unix),
		cmocka_unit_test(a_path_with_a_line_end_names_nothing),
		cmocka_unit_test(an_epoll_counts_its_fds),
		cmocka_unit_test(files_named_by_their_path_only_if_it_is_theirs),
		cmocka_unit_test(pipes_fifos_and_anonymous_files),
		cmocka_unit_test(unix_sockets_by_path_or_inode),
		cmocka_unit_test(a_long_path_keeps_its_end),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
