// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/proc_root.h"
#include "symbols/elfsyms.h"
#include "symbols/perfmap.h"

/* A JIT that writes more than this is not one a person reads a profile of. */
#define PERFMAP_MAX_SYMBOLS (1 << 20)
#define PERFMAP_NAME_MAX 1024
/* Two addresses in hex, two spaces, a name: a longer line is no symbol. */
#define PERFMAP_LINE_MAX (2 * 16 + 2 + PERFMAP_NAME_MAX + 16)

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
	len = strlen(line);
	while (len && isspace((unsigned char)line[len - 1]))
		len--;
	if (len == 0 || len > PERFMAP_NAME_MAX)
		return -EINVAL;
	/* NULL name: out of memory. */
	name = strndup(line, len);
	sym->name = name;
	return 0;
}

/*
 * One line into buf without its newline, NUL-terminated. *len: its length
 * (size or more: it did not fit, and the rest was skipped); *used: the
 * bytes taken from file, newline included. false at the end of the file
 * before a newline: *len and *used are then those of the incomplete line.
 */
static bool read_line(FILE *file, char *buf, size_t size, size_t *len, uint64_t *used)
{
	int c;

	*len = 0;
	*used = 0;
	while ((c = getc_unlocked(file)) != EOF) {
		(*used)++;
		if (c == '\n')
			break;
		if (*len < size - 1)
			buf[*len] = (char)c;
		(*len)++;
	}
	buf[*len < size ? *len : size - 1] = '\0';
	return c == '\n';
}

/* The rest of a line too long to be a symbol's, read before: false if it goes on still. */
static bool skip_long_line(FILE *file, struct perfmap *map)
{
	int c;

	while ((c = getc_unlocked(file)) != EOF) {
		map->read_bytes++;
		if (c == '\n')
			return true;
	}
	return false;
}

/* The entries from nr_old on, sorted, merged into the sorted ones before them. */
static int merge_new(struct perfmap *map, size_t nr_old)
{
	size_t nr_new = map->nr - nr_old, i, j, at;
	struct elf_symbol *added;

	if (nr_new > 1)
		qsort(map->syms + nr_old, nr_new, sizeof(*map->syms), compare_symbols);
	if (!nr_new || !nr_old || map->syms[nr_old - 1].start <= map->syms[nr_old].start)
		return 0;
	added = malloc(nr_new * sizeof(*added));
	if (!added)
		return -ENOMEM;
	memcpy(added, map->syms + nr_old, nr_new * sizeof(*added));
	/* From the back; of equal starts the newer goes after, where the floor search finds it. */
	i = nr_old;
	j = nr_new;
	at = map->nr;
	while (j > 0) {
		if (i > 0 && map->syms[i - 1].start > added[j - 1].start)
			map->syms[--at] = map->syms[--i];
		else
			map->syms[--at] = added[--j];
	}
	free(added);
	return 0;
}

int perfmap__parse(FILE *file, struct perfmap *map, struct read_budget *budget)
{
	char line[PERFMAP_LINE_MAX];
	size_t nr_old = map->nr, cap = map->cap, len;
	uint64_t used;
	int err = 0;

	if (map->in_long_line) {
		if (!skip_long_line(file, map))
			return 0;
		map->in_long_line = false;
	}
	while (map->nr < PERFMAP_MAX_SYMBOLS) {
		struct elf_symbol sym;

		if (!read_line(file, line, sizeof(line), &len, &used)) {
			/*
			 * An incomplete line is read again once it is whole, unless it
			 * is already too long to be a symbol's: then never again.
			 */
			if (len >= sizeof(line)) {
				map->bad_lines++;
				map->read_bytes += used;
				map->in_long_line = true;
			}
			break;
		}
		if (len >= sizeof(line) || memchr(line, '\0', len) ||
		    parse_line(line, &sym) == -EINVAL) {
			map->bad_lines++;
			map->read_bytes += used;
			continue;
		}
		if (!sym.name) {
			err = -ENOMEM;
			break;
		}
		if (read_budget__charge(budget, sizeof(sym) + strlen(sym.name) + 1)) {
			free((char *)sym.name);
			break;
		}
		if (map->nr == cap) {
			struct elf_symbol *grown;

			cap = cap ? cap * 2 : 64;
			grown = realloc(map->syms, cap * sizeof(*grown));
			if (!grown) {
				free((char *)sym.name);
				err = -ENOMEM;
				break;
			}
			map->syms = grown;
			map->cap = cap;
		}
		map->syms[map->nr++] = sym;
		map->read_bytes += used;
	}
	return merge_new(map, nr_old) ?: err;
}

/*
 * The map its JIT wrote: owned by the process's real UID (or root), so no
 * other user plants one for it in /tmp, and one the process itself may read.
 */
int perfmap__open(int pid, FILE **out)
{
	struct proc_creds creds;
	char path[96];
	struct stat st;
	int fd, err = proc_creds__read((uint32_t)pid, &creds);

	if (err)
		return err;
	snprintf(path, sizeof(path), "/tmp/perf-%ld.map", creds.ns_pid >= 0 ? creds.ns_pid : pid);
	/* O_NONBLOCK: a planted FIFO must not hang us before the type check. */
	fd = proc_root__open_as((uint32_t)pid, &creds, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return fd == -ELOOP || fd == -EACCES ? -EPERM : fd;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (st.st_uid != creds.uid && st.st_uid != 0) ||
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

int perfmap__update(int pid, struct perfmap *map, struct read_budget *budget)
{
	struct stat st;
	FILE *file;
	int err = perfmap__open(pid, &file);

	if (err)
		return err;
	if (fstat(fileno(file), &st)) {
		err = -errno;
		fclose(file);
		return err;
	}
	/* Another file, or one cut shorter: not the one read so far. */
	if ((uint64_t)st.st_dev != map->dev || (uint64_t)st.st_ino != map->inode ||
	    (uint64_t)st.st_size < map->read_bytes) {
		perfmap__free(map);
		map->dev = (uint64_t)st.st_dev;
		map->inode = (uint64_t)st.st_ino;
	}
	if ((uint64_t)st.st_size > map->read_bytes) {
		if (fseeko(file, (off_t)map->read_bytes, SEEK_SET))
			err = -errno;
		else
			err = perfmap__parse(file, map, budget);
	}
	fclose(file);
	return err;
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
	memset(map, 0, sizeof(*map));
}
