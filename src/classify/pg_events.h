/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PostgreSQL's wait event and backend type names, per major version, read
 * from rules/postgres-wait-events.tsv (its header says the format) or from
 * the copy of that file built into offcpu.
 */
#ifndef OFFCPU_PG_EVENTS_H
#define OFFCPU_PG_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Class IDs are the wait event's top byte: 0x01 LWLock ... 0x0A IO, 0x0B InjectionPoint (17). */
#define PG_WAIT_CLASSES 0x0C

/* The tables' file, found beside the rules file that decodes with them or where packs are. */
#define PG_EVENTS_FILE "postgres-wait-events.tsv"
/* A larger file is refused: today's is about 40 KiB. */
#define PG_EVENTS_MAX_BYTES (1u << 20)

struct pg_events;

/*
 * The tables of one file. On error nothing is kept: -EINVAL is bad data
 * (*bad_line is the line, why says what is wrong: a malformed line, an
 * unknown class, a second name for one event, a file past
 * PG_EVENTS_MAX_BYTES); any other negative errno, that the file could not
 * be read to its end or held in memory.
 */
int pg_events__parse(FILE *file, struct pg_events **out, unsigned int *bad_line, const char **why);
void pg_events__free(struct pg_events *tables);

/* The lookups take the tables read from a file, or NULL for the built-in ones. */
bool pg_events__supported(const struct pg_events *tables, unsigned int version);
/*
 * "Class:Event" as pg_stat_activity names it, into buf; "Class:0xNNNN"
 * for an event the version's tables do not name. false for 0: no wait.
 */
bool pg_events__wait_event(const struct pg_events *tables, unsigned int version, uint32_t info,
			   char *buf, size_t size);
/* "client backend", "checkpointer"...; "0xN" when unknown. */
bool pg_events__backend_type(const struct pg_events *tables, unsigned int version, uint32_t type,
			     char *buf, size_t size);
/* A version's table of one class: its last event's number plus one. */
size_t pg_events__class_size(const struct pg_events *tables, unsigned int version,
			     unsigned int cls);

#endif
