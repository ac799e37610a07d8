/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The processes a rule pack's read lines match, and the labels
 * of their waits. A process matches a "process COMM" group when its comm
 * is COMM and its own binary (/proc/PID/exe) defines every symbol the
 * group reads; its addresses are the symbols' plus its load base, given to
 * BPF, which reads them when a wait of it reaches user space. Its forks
 * inherit the match (BPF copies it at fork: a PostgreSQL backend forks
 * without exec); an exec matches again. A process that does not match
 * (a "postgres" that is no PostgreSQL) is left alone, without a word.
 */
#ifndef OFFCPU_LABEL_READER_H
#define OFFCPU_LABEL_READER_H

#include <stddef.h>
#include <stdint.h>

#include "classify/rules.h"
#include "offcpu.h"
#include "profile/profile.h"

struct label_reader;

/* Gives BPF a process's reads (NULL: none). */
typedef int (*label_reader_sink_fn)(void *ctx, uint32_t pid, const struct offcpu_reads *reads);

/* rules must outlive it; without read groups it does nothing. */
int label_reader__new(const struct rule_set *rules, struct label_reader **out);
void label_reader__free(struct label_reader *lr);
/* --read-data: also the reads a pack marks as data (a statement's text). */
void label_reader__read_data(struct label_reader *lr, bool on);
/* Where matches go; then matches the processes running now (again: once more after attaching). */
void label_reader__attach(struct label_reader *lr, label_reader_sink_fn fn, void *ctx);
void label_reader__exec(struct label_reader *lr, uint32_t pid);
void label_reader__fork(struct label_reader *lr, uint32_t parent, uint32_t child);
void label_reader__exit(struct label_reader *lr, uint32_t pid);
/* Matches pid now if it is not matched yet (the scans; exec forgets it first). */
void label_reader__match(struct label_reader *lr, uint32_t pid);

#define LABEL_VALUE_MAX 96

/* A wait's labels: up to OFFCPU_MAX_READS, values in bufs. */
struct label_values {
	struct label items[OFFCPU_MAX_READS];
	char bufs[OFFCPU_MAX_READS][LABEL_VALUE_MAX];
	size_t nr;
};

/*
 * The labels of a wait of pid whose read values are these (mask: which
 * were read; text: the record's read_str, OFFCPU_READ_STR_LEN bytes).
 */
void label_reader__labels(const struct label_reader *lr, uint32_t pid, uint32_t mask,
			  const __u64 *values, const char *text, struct label_values *out);

#endif
