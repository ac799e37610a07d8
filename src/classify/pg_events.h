/* SPDX-License-Identifier: GPL-2.0 */
/* PostgreSQL's wait event and backend type names, per major version. */
#ifndef OFFCPU_PG_EVENTS_H
#define OFFCPU_PG_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Class IDs are the wait event's top byte: 0x01 LWLock ... 0x0A IO, 0x0B InjectionPoint (17). */
#define PG_WAIT_CLASSES 0x0C

/* A major version offcpu has tables for (14..17). */
bool pg_events__supported(unsigned int version);
/*
 * "Class:Event" as pg_stat_activity names it, into buf; "Class:0xNNNN"
 * for an event the version's tables do not name. false for 0: no wait.
 */
bool pg_events__wait_event(unsigned int version, uint32_t info, char *buf, size_t size);
/* "client backend", "checkpointer"...; "0xN" when unknown. */
bool pg_events__backend_type(unsigned int version, uint32_t type, char *buf, size_t size);
size_t pg_events__class_size(unsigned int version, unsigned int class);

#endif
