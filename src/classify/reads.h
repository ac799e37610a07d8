/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Values a rule pack reads from a matched process at block time,
 * and how they become labels. The lines of a rules file that declare them:
 *
 *   process COMM [version PREFIX]
 *   read SYMBOL [deref] u8|u16|u32|u64|str as LABEL [decode DECODER] [data]
 *
 * A value is the integer at the symbol's address or, with deref, at the
 * pointer stored there; str, the first bytes of the C string there (one
 * a process line). A read marked data (a statement's text can hold
 * anyone's data) is made only when the user asks (--read-data). Decoders turn it into the label's
 * text: dec, hex, and those of a program's own tables (pg_wait_event, pg_backend_type), given the
 * major version found in the binary.
 */
#ifndef OFFCPU_READS_H
#define OFFCPU_READS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classify/rules.h"

/* Parses a process or read line's tokens into set; -EINVAL with why. */
int reads__parse_process(char **tokens, int n, struct rule_set *set, const char **why);
int reads__parse_read(char **tokens, int n, struct rule_set *set, const char **why);
void reads__free_groups(struct rule_set *set);

bool reads__decoder_known(const char *decoder);
/* Does a read of the set decode with PostgreSQL's tables (pg_wait_event, pg_backend_type)? */
bool reads__use_pg_events(const struct rule_set *set);
/*
 * The label text of a value read: written into buf (always terminated);
 * version is the binary's major version, 0 when unknown; pg_events the
 * set's PostgreSQL tables (NULL: the built-in ones). false: the value says
 * there is no such label now (a wait event of 0: no wait).
 */
bool reads__decode(const char *decoder, const struct pg_events *pg_events, unsigned int version,
		   uint64_t value, char *buf, size_t size);

#endif
