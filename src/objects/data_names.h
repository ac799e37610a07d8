/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names an address in a process's data as perf and gdb would: the
 * variable that holds it (its .symtab, its debug file's, else its .dynsym:
 * "orders_lock", "queue_cv+0x28"), else the mapping it is in ("[heap]",
 * "[stack]", "[anon]", "libfoo.so+0x2040"). A process's mappings are
 * read from /proc when first needed and again when an address is in none
 * of them; each file's variables once, within the symbolizer's limits.
 */
#ifndef OFFCPU_DATA_NAMES_H
#define OFFCPU_DATA_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "symbols/limits.h"

struct data_names;

int data_names__new(const struct symbol_limits *limits, struct data_names **out);
/*
 * addr's name in pid's memory into buf (truncated to size). -ENOENT: no
 * mapping holds it; -ESRCH: pid's mappings cannot be read.
 */
int data_names__name(struct data_names *d, uint32_t pid, uint64_t addr, char *buf, size_t size);
/* The process is gone, or replaced its image: its mappings mean nothing now. */
void data_names__forget(struct data_names *d, uint32_t pid);
void data_names__free(struct data_names *d);

#endif
