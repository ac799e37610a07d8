// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/perfmap.h"
#include "symbols/proc_root.h"

/* A JIT that writes more than this is not one a person reads a profile of. */
#define PERFMAP_MAX_SYMBOLS (1 << 20)
#define PERFMAP_NAME_MAX 1024

static int compare_symbols(const void *a, const void *b)
{
	const struct elf_symbol *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* "7f0a1c000000 40 LazyCompile:~main app.js:1" */
static int parse_line(const char *line, struct elf_symbol *sym)
{
	char *end, *name;
	size_t len;

	errno = 0;
	sym->start = strtoull(line, &end, 16);
	if (end == line || *end != ' ' || errno)
		return -EINVAL;
	line = end + 1;
	sym->size = strtoull(line, &end, 16);
	if (end == line || *end != ' ' || errno || sym->size == 0 ||
	    sym->start + sym->size < sym->start)
		return -EINVAL;
	line = end + 1;
	len = strcspn(line, "\n");
	while (len && isspace((unsigned char)line[len - 1]))
		len--;
	if (len == 0 || len > PERFMAP_NAME_MAX)
		return -EINVAL;
	name = strndup(line, len);
	sym->name = name;
	return name ? 0 : -ENOMEM;
}

int perfmap__parse(FILE *file, struct perfmap *out)
{
	struct perfmap map = { 0 };
	size_t cap = 0, size = 0;
	char *line = NULL;
	int err = 0;

	while (getline(&line, &size, file) > 0 && map.nr < PERFMAP_MAX_SYMBOLS) {
		struct elf_symbol sym;

		err = parse_line(line, &sym);
		if (err == -EINVAL) {
			map.bad_lines++;
			err = 0;
			continue;
		}
		if (err)
			break;
		if (map.nr == cap) {
			struct elf_symbol *grown;

			cap = cap ? cap * 2 : 64;
			grown = realloc(map.syms, cap * sizeof(*grown));
			if (!grown) {
				free((char *)sym.name);
				err = -ENOMEM;
				break;
			}
			map.syms = grown;
		}
		map.syms[map.nr++] = sym;
	}
	free(line);
	if (err) {
		perfmap__free(&map);
		return err;
	}
	/* An empty map has no array to sort (found by tests/fuzz/fuzz_perfmap). */
	if (map.nr > 1)
		qsort(map.syms, map.nr, sizeof(*map.syms), compare_symbols);
	*out = map;
	return 0;
}

/* The process's real UID and its PID in its own namespace, from /proc/PID/status. */
static int read_status(int pid, uid_t *uid, long *ns_pid)
{
	char path[64], *line = NULL;
	size_t size = 0;
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	*ns_pid = pid;
	while (getline(&line, &size, f) > 0) {
		if (!strncmp(line, "Uid:", 4)) {
			*uid = (uid_t)strtoul(line + 4, NULL, 10);
			found = 1;
		} else if (!strncmp(line, "NSpid:", 6)) {
			/* The last one is its PID in its innermost namespace. */
			char *last = strrchr(line, '\t') ?: line + 6;

			*ns_pid = strtol(last, NULL, 10);
		}
	}
	free(line);
	fclose(f);
	return found ? 0 : -EINVAL;
}

int perfmap__open(int pid, FILE **out)
{
	char path[96];
	struct stat st;
	long ns_pid = pid;
	uid_t uid = (uid_t)-1;
	int fd, err = read_status(pid, &uid, &ns_pid);

	if (err)
		return err;
	snprintf(path, sizeof(path), "/tmp/perf-%ld.map", ns_pid);
	/* O_NONBLOCK: a planted FIFO must not hang us before the type check. */
	fd = proc_root__open((uint32_t)pid, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return fd == -ELOOP ? -EPERM : fd;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (st.st_uid != uid && st.st_uid != 0) ||
	    st.st_size > PERFMAP_MAX_BYTES) {
		close(fd);
		return -EPERM;
	}
	*out = fdopen(fd, "r");
	if (!*out) {
		err = -errno;
		close(fd);
		return err;
	}
	return 0;
}

const struct elf_symbol *perfmap__find(const struct perfmap *map, uint64_t addr)
{
	return elfsyms__symbol_containing(map->syms, map->nr, addr);
}

void perfmap__free(struct perfmap *map)
{
	size_t i;

	for (i = 0; i < map->nr; i++)
		free((char *)map->syms[i].name);
	free(map->syms);
	map->syms = NULL;
	map->nr = 0;
}
