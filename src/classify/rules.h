/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The user's wait-class rules: parsing --rules files and finding rule packs
 * by name, and the one glob matcher over a stack's frames that both these
 * rules and the built-in ones of classify.c use. A user rule names kernel or
 * user frames by glob; all its globs must match some frame of the stack for
 * the wait to take its class.
 */
#ifndef OFFCPU_RULES_H
#define OFFCPU_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "profile/frame.h"

enum rule_scope {
	RULE_KERNEL,
	RULE_USER,
	RULE_LABEL, /* "label NAME GLOB CLASS", the wait's label NAME matches GLOB */
};

struct wait_rule {
	enum rule_scope scope;
	char **globs;
	size_t nr_globs;
	char *wait_class; /* "class" or "class:detail" */
	char *label;	  /* RULE_LABEL: the label's name */
};

/* "read SYMBOL [deref] u8|u16|u32|u64 as LABEL [decode DECODER]". */
struct label_read {
	char *symbol;
	char *label;
	char *decoder; /* reads.h's decoders by name; "dec" by default ("text" for str) */
	unsigned int width;
	bool deref;
	bool string; /* "str": a C string, at most OFFCPU_READ_STR_LEN - 1 bytes of it */
	bool data;   /* "data": it can hold users' data; read only with --read-data */
};

/*
 * "process COMM [version PREFIX]" and the read lines after it:
 * what to read from processes of that command name whose own binary
 * defines every symbol. PREFIX finds the version in the binary's
 * read-only data: the number after the first string starting with it.
 */
#define RULES_MAX_READS 4

struct read_group {
	char *comm;
	char *version_prefix; /* NULL: none */
	struct label_read reads[RULES_MAX_READS];
	size_t nr_reads;
};

struct pg_events;

struct rule_set {
	struct wait_rule *rules;
	size_t nr;
	struct read_group *groups;
	size_t nr_groups;
	/* The pg_* decoders' tables, read from pg_events_path; NULL: those built in. */
	struct pg_events *pg_events;
	char *pg_events_path;
	bool pg_events_looked_up; /* once, for the first rules file that decodes with them */
};

/*
 * Appends the rules of one file: "kernel|user GLOB [GLOB...] CLASS[:DETAIL]"
 * per line, '#' comments. On error nothing is appended: -EINVAL is a bad
 * line (*bad_line is the line, why says what is wrong); any other negative
 * errno, that the file could not be read to its end or held in memory.
 */
int rules__parse(FILE *file, struct rule_set *set, unsigned int *bad_line, const char **why);
/*
 * A --rules argument: a file, or the name of a rule pack shipped beside the
 * binary (rules/NAME.rules) or installed (../share/offcpu/rules from the
 * binary's folder, then /usr/share/offcpu/rules). Fills
 * path with what it opened; NULL when there is neither.
 */
FILE *rules__open(const char *arg, char *path, size_t path_size);
/*
 * A file a rules file's decoders read (PG_EVENTS_FILE): beside that rules
 * file (rules_path, as rules__open filled it), else where packs are found.
 * Fills path with what it opened, *file NULL when there is none: 0, or
 * -EPERM when the file beside is not to be trusted (not a regular file, a
 * link, writable by others, or another user's than root, ours or the rules
 * file's owner), -errno when it cannot be opened; path names it.
 */
int rules__open_beside(const char *rules_path, const char *name, char *path, size_t path_size,
		       FILE **file);
void rules__free(struct rule_set *set);

/* Does the symbol match the glob? Compiler clones (".isra.0", ".cold") match their origin. */
bool rules__symbol_matches(const char *glob, const char *sym);
/* Does any frame (one with a symbol) match the glob? */
bool rules__frames_match(const char *glob, const struct frame *frames, size_t nr);
/* A RULE_LABEL rule against a wait's label value (NULL: no such label). */
bool rules__label_matches(const struct wait_rule *rule, const char *value);
bool rules__match(const struct wait_rule *rule, const struct frame *kernel, size_t nr_kernel,
		  const struct frame *user, size_t nr_user);
/* cpu, sleep, lock, io, net, poll, pipe, child, signal, pagefault, idle or other, :detail. */
bool rules__valid_class(const char *wait_class);

#endif
