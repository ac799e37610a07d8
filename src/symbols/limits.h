/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What reading the files of a traced process may cost offcpu. offcpu runs
 * as root and reads what any user's process maps or names (its binaries,
 * their debug files, its perf map, its /proc files): a file that costs
 * nothing to make (a sparse 1 TiB file, 5,000,000 section headers in a
 * 320 MB hole, 2,000 symbols naming one 1 MiB string) must not cost
 * offcpu more than these. What exceeds them is skipped, and its frames
 * are counted in symbol_misses.
 */
#ifndef OFFCPU_LIMITS_H
#define OFFCPU_LIMITS_H

#include <stdbool.h>
#include <stdint.h>

struct symbol_limits {
	uint64_t max_file_bytes;	  /* larger ELF or debug files are not read */
	uint32_t max_sections;		  /* nor files with more section (or program) headers */
	uint32_t max_symbols;		  /* function symbols kept per file */
	uint32_t max_name_len;		  /* longer symbol names are skipped */
	uint64_t max_file_spend_bytes;	  /* read and kept for one file and its debug file */
	uint64_t max_process_spend_bytes; /* the same, for every file one process brought */
	/*
	 * The same, held at once by every file (and perf map)
	 * of every process: a fork bomb gets this, not one process's share
	 * per process.
	 */
	uint64_t max_total_spend_bytes;
	uint64_t reread_interval_ns; /* a process's maps or perf map, again at most this often */
};

void limits__defaults(struct symbol_limits *limits);
/*
 * "name=value,name=value" over the defaults, names as in the struct,
 * values plain numbers (bytes, nanoseconds). -EINVAL on anything else,
 * naming it in *bad (limits is then left as it was).
 */
int limits__parse(struct symbol_limits *limits, const char *text, const char **bad);

/*
 * Bytes that may still be spent reading one file (or for one process),
 * charged before they are read or allocated, so the cap is never passed.
 */
struct read_budget {
	uint64_t left;
	bool exhausted; /* something was refused for want of bytes */
};

/* 0, and bytes charged; -E2BIG (nothing charged) if fewer are left. */
int read_budget__charge(struct read_budget *budget, uint64_t bytes);

#endif
