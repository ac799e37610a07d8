// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/hash_table.h"
#include "python/python_files.h"

/* Files remembered at most: then all are forgotten (a machine running that many executables). */
#define FILES_MAX 4096

struct file_key {
	uint64_t dev, ino, size, mtime_sec, mtime_nsec;
};

struct file_seen {
	struct file_key key;
	int err;
	struct python_elf elf;
};

struct python_files {
	struct hash_table *files; /* struct file_key -> struct file_seen */
};

static uint64_t key_hash(const void *key)
{
	return hash_table__hash_bytes(key, sizeof(struct file_key), 0);
}

static bool key_equal(const void *a, const void *b)
{
	return !memcmp(a, b, sizeof(struct file_key));
}

struct python_files *python_files__new(void)
{
	struct python_files *files = calloc(1, sizeof(*files));

	if (!files)
		return NULL;
	files->files = hash_table__new(key_hash, key_equal);
	if (!files->files) {
		free(files);
		return NULL;
	}
	return files;
}

void python_files__free(struct python_files *files)
{
	if (!files)
		return;
	hash_table__free_values(files->files, free);
	free(files);
}

int python_files__read(struct python_files *files, int fd, const struct symbol_limits *limits,
		       struct python_elf *out)
{
	struct file_seen *seen;
	struct file_key key;
	struct stat st;
	int err;

	if (fstat(fd, &st))
		return -errno;
	memset(&key, 0, sizeof(key));
	key.dev = st.st_dev;
	key.ino = st.st_ino;
	key.size = (uint64_t)st.st_size;
	key.mtime_sec = (uint64_t)st.st_mtim.tv_sec;
	key.mtime_nsec = (uint64_t)st.st_mtim.tv_nsec;
	seen = hash_table__find(files->files, &key);
	if (seen) {
		*out = seen->elf;
		return seen->err;
	}
	seen = calloc(1, sizeof(*seen));
	if (!seen)
		return python_elf__read(fd, limits, out);
	seen->key = key;
	err = python_elf__read(fd, limits, &seen->elf);
	seen->err = err;
	*out = seen->elf;
	/* Only what the file is: not an error of this read alone (memory, budget). */
	if (err && err != -ENOENT) {
		free(seen);
		return err;
	}
	if (hash_table__size(files->files) >= FILES_MAX) {
		struct hash_table *fresh = hash_table__new(key_hash, key_equal);

		if (fresh) {
			hash_table__free_values(files->files, free);
			files->files = fresh;
		}
	}
	if (hash_table__insert(files->files, &seen->key, seen))
		free(seen);
	return err;
}
