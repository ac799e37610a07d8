/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /tmp/perf-PID.map: the symbols a JIT (V8, the JVM with perf-map-agent,
 * .NET, LuaJIT...) writes for code in anonymous memory, "START SIZE name"
 * per line in hex. The parser takes a FILE; the opener is careful, since
 * offcpu runs as root and the file belongs to whoever runs the target.
 */
#ifndef OFFCPU_PERFMAP_H
#define OFFCPU_PERFMAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "symbols/elfsyms.h"

struct perfmap {
	struct elf_symbol *syms; /* sorted by start; names owned */
	size_t nr;
	size_t bad_lines; /* skipped, not fatal: the file is the target's */
};

/* Reads every well-formed line; -ENOMEM is the only error. */
int perfmap__parse(FILE *file, struct perfmap *out);
/*
 * Opens the map of pid inside its own mount namespace and with its
 * namespace PID, without following symlinks, only if it is a regular file
 * owned by the process's user or root and at most PERFMAP_MAX_BYTES.
 * -ENOENT when there is none, -EPERM when it fails a check.
 */
int perfmap__open(int pid, FILE **out);
const struct elf_symbol *perfmap__find(const struct perfmap *map, uint64_t addr);
void perfmap__free(struct perfmap *map);

#define PERFMAP_MAX_BYTES (64 << 20)

#endif
