/* SPDX-License-Identifier: GPL-2.0 */
/* Kernel symbols from /proc/kallsyms, modules and BPF programs included. */
#ifndef OFFCPU_KSYMS_H
#define OFFCPU_KSYMS_H

#include <stdint.h>
#include <stdio.h>

struct ksym {
	uint64_t addr;
	const char *name;
	const char *module; /* NULL for the core kernel */
};

struct ksyms;

/* One kallsyms line: "ffffffff81000000 T _stext" or "... t name\t[module]". */
int ksyms__parse_line(const char *line, uint64_t *addr, char *type, char *name, size_t name_size,
		      char *module, size_t module_size);
int ksyms__load(FILE *file, struct ksyms **out);
int ksyms__load_system(struct ksyms **out);
/*
 * The symbol addr is in: kallsyms has no sizes, so a symbol ends where the
 * next one starts. NULL before the first or after the last text symbol.
 */
const struct ksym *ksyms__find(const struct ksyms *ks, uint64_t addr);
void ksyms__free(struct ksyms *ks);

#endif
