/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A program's own variables by name (its .dynsym and .symtab,
 * objects included, which elfsyms.c leaves out), the version string in its
 * read-only data, and where a mapped file offset lands in its addresses:
 * what a rule pack's read lines need to find a value in a process.
 */
#ifndef OFFCPU_DATASYMS_H
#define OFFCPU_DATASYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DATASYMS_MAX 4
#define DATASYMS_MAX_LOADS 16

struct datasyms {
	uint64_t vaddr[DATASYMS_MAX]; /* ELF virtual address of each name */
	bool found[DATASYMS_MAX];
	unsigned int version; /* the number after the version prefix; 0: none */
	struct {
		uint64_t vaddr;
		uint64_t offset;
		uint64_t filesz;
	} loads[DATASYMS_MAX_LOADS]; /* PT_LOAD segments */
	size_t nr_loads;
};

/*
 * Looks up nr names (at most DATASYMS_MAX) in the ELF file open at fd and,
 * with a version_prefix, the first string of .rodata that is the prefix,
 * a blank and a number ("PostgreSQL 15.20 (Debian 15.20-0+deb12u1)..."). Read as symbols/elf_file.h
 * reads files, within the default limits. -ENOEXEC: no ELF file; other negative errno.
 */
int datasyms__lookup(int fd, const char *const *names, size_t nr, const char *version_prefix,
		     struct datasyms *out);
/* The virtual address of a file offset in a load segment; false if none holds it. */
bool datasyms__offset_to_vaddr(const struct datasyms *d, uint64_t offset, uint64_t *vaddr);
/* The major version in a string such as "PostgreSQL 15.20 (Debian...)" after its prefix. */
unsigned int datasyms__parse_version(const char *text, size_t len);

#endif
