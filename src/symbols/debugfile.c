// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/array.h"
#include "proc/proc_root.h"
#include "symbols/debugfile.h"
#include "symbols/elf_section.h"

/* Never wait for a FIFO's writer; the type is checked once it is open. */
#define CANDIDATE_FLAGS (O_RDONLY | O_NONBLOCK | O_CLOEXEC)

static bool is_debug_file_of(int fd, struct elf_file *f, const unsigned char *id, size_t id_len)
{
	unsigned char debug_id[ELF_BUILD_ID_MAX];
	struct elf_file debug;
	bool same;

	if (elf_file__open(&debug, fd, f->limits, f->budget))
		return false;
	same = elf_section__build_id(&debug, debug_id) == id_len && !memcmp(id, debug_id, id_len);
	elf_file__close(&debug);
	return same;
}

/*
 * The CRC32 .gnu_debuglink asks of a file without a build ID to match:
 * of its size as opened, paid for first, and not a byte more.
 */
static bool crc_matches(int fd, uint64_t size, struct read_budget *budget, uint32_t expected)
{
	unsigned char buf[65536];
	uLong crc = crc32(0L, Z_NULL, 0);
	uint64_t done = 0;

	if (read_budget__charge(budget, size))
		return false;
	while (done < size) {
		size_t want = size - done < sizeof(buf) ? (size_t)(size - done) : sizeof(buf);
		ssize_t n = read(fd, buf, want);

		if (n <= 0)
			return false;
		crc = crc32(crc, buf, (uInt)n);
		done += (uint64_t)n;
	}
	return (uint32_t)crc == expected;
}

/*
 * A candidate debug file, kept only if it is a regular file of sane size
 * owned by root or by f's owner (one a process names was opened only if
 * the process may read it), and the one: the same build ID, or for a
 * file without one, the CRC32 its .gnu_debuglink gives. Else closed.
 */
static int verified(int fd, struct elf_file *f, const unsigned char *id, size_t id_len,
		    uint32_t crc)
{
	struct stat st;
	bool ok;

	if (fd < 0)
		return fd;
	ok = !fstat(fd, &st) && S_ISREG(st.st_mode) && (st.st_uid == 0 || st.st_uid == f->uid) &&
	     (uint64_t)st.st_size <= f->limits->max_file_bytes;
	if (ok)
		ok = id_len ? is_debug_file_of(fd, f, id, id_len)
			    : crc_matches(fd, (uint64_t)st.st_size, f->budget, crc);
	if (ok)
		return fd;
	close(fd);
	return -ENOENT;
}

int debugfile__build_id_path(const unsigned char *id, size_t len,
			     char path[DEBUG_BUILD_ID_PATH_MAX])
{
	size_t at, i;

	if (len < 2 || len > ELF_BUILD_ID_MAX)
		return -EINVAL;
	at = (size_t)snprintf(path, DEBUG_BUILD_ID_PATH_MAX, DEBUG_ROOT "/.build-id/%02x/", id[0]);
	for (i = 1; i < len; i++)
		at += (size_t)snprintf(path + at, DEBUG_BUILD_ID_PATH_MAX - at, "%02x", id[i]);
	snprintf(path + at, DEBUG_BUILD_ID_PATH_MAX - at, ".debug");
	return 0;
}

/* By build ID, in root's tree (whose symlinks are its own). */
static int open_by_build_id(struct elf_file *f, const unsigned char *id, size_t len)
{
	char path[DEBUG_BUILD_ID_PATH_MAX];
	int fd;

	if (debugfile__build_id_path(id, len, path))
		return -ENOENT;
	fd = open(path, CANDIDATE_FLAGS);
	return verified(fd < 0 ? -errno : fd, f, id, len, 0);
}

/* A file the process names: inside its root when there is a process, never through a symlink. */
static int open_named(uint32_t pid, const char *path)
{
	int fd;

	if (pid)
		return proc_root__open(pid, path, CANDIDATE_FLAGS | O_NOFOLLOW);
	fd = open(path, CANDIDATE_FLAGS | O_NOFOLLOW);
	return fd < 0 ? -errno : fd;
}

/*
 * By .gnu_debuglink, where GDB looks: beside the file, in .debug/ beside it,
 * and under /usr/lib/debug with the file's directory.
 */
static int open_by_link(struct elf_file *f, uint32_t pid, const char *file_path,
			const unsigned char *id, size_t id_len)
{
	static const char *const formats[] = { "%.*s/%s", "%.*s/.debug/%s", DEBUG_ROOT "%.*s/%s" };
	Elf_Data *link = elf_section__by_name(f, ".gnu_debuglink", NULL);
	const char *name, *slash;
	char path[PATH_MAX];
	uint32_t crc;
	size_t name_len, i;
	int dir_len, fd;

	if (!link || !link->d_buf || !file_path || link->d_size < 8)
		return -ENOENT;
	name = link->d_buf;
	name_len = strnlen(name, link->d_size);
	/* The name, NUL-padded to 4 bytes, then its CRC32. */
	if (name_len == 0 || name_len >= link->d_size || strchr(name, '/') ||
	    ((name_len + 4) & ~3UL) + 4 > link->d_size)
		return -ENOENT;
	memcpy(&crc, (const char *)link->d_buf + ((name_len + 4) & ~3UL), sizeof(crc));
	slash = strrchr(file_path, '/');
	dir_len = slash ? (int)(slash - file_path) : 0;
	for (i = 0; i < ARRAY_SIZE(formats); i++) {
		if ((size_t)snprintf(path, sizeof(path), formats[i], dir_len, file_path, name) >=
		    sizeof(path))
			continue;
		fd = verified(open_named(pid, path), f, id, id_len, crc);
		if (fd >= 0)
			return fd;
	}
	return -ENOENT;
}

int debugfile__open(struct elf_file *f, uint32_t pid, const char *path)
{
	unsigned char id[ELF_BUILD_ID_MAX];
	size_t id_len = elf_section__build_id(f, id);
	int fd = open_by_build_id(f, id, id_len);

	return fd >= 0 ? fd : open_by_link(f, pid, path, id, id_len);
}
