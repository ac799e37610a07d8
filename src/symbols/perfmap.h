/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /tmp/perf-PID.map: the symbols a JIT (V8, the JVM with perf-map-agent,
 * .NET, LuaJIT...) writes for code in anonymous memory, "START SIZE name"
 * per line in hex. The parser takes a FILE; the opener is careful, since
 * offcpu runs as root and the file belongs to whoever runs the target.
 */
#ifndef OFFCPU_PERFMAP_H
#define OFFCPU_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "symbols/elf_symbol.h"
#include "symbols/limits.h"

struct perfmap {
	struct elf_symbol *syms; /* sorted by start; names owned */
	size_t nr;
	size_t cap;
	size_t bad_lines;    /* skipped, not fatal: the file is the target's */
	uint64_t read_bytes; /* of the file, up to its last whole line read */
	bool in_long_line;   /* read_bytes is inside a line too long to be a symbol's */
	uint64_t dev;	     /* the file read (perfmap__update) */
	uint64_t inode;
};

/*
 * Adds the well-formed lines from file's position on to map (zeroed for
 * a new one), for as long as the budget pays for them: a JIT only ever
 * appends, so a map is read once, line by line as it grows. An incomplete
 * last line is left for the next read, as a JIT may be writing it; one
 * longer than any symbol's is skipped without being kept. -ENOMEM is the
 * only error.
 */
int perfmap__parse(FILE *file, struct perfmap *map, struct read_budget *budget);
/*
 * Opens the map of pid inside its own mount namespace and with its
 * namespace PID, without following symlinks, only if it is a regular file
 * owned by the process's user or root, one the process may read itself
 * (proc_creds__may_read), and at most PERFMAP_MAX_BYTES.
 * -ENOENT when there is none, -EPERM when it fails a check.
 */
int perfmap__open(int pid, FILE **out);
/*
 * pid's map, opened as perfmap__open does, read on from where map stopped
 * (from the start if it is another file than the one read, or shorter).
 */
int perfmap__update(int pid, struct perfmap *map, struct read_budget *budget);
const struct elf_symbol *perfmap__find(const struct perfmap *map, uint64_t addr);
void perfmap__free(struct perfmap *map);

#define PERFMAP_MAX_BYTES (64 << 20)

#endif
