// SPDX-License-Identifier: GPL-2.0
/*
 * PostgreSQL's names for its wait events and backend types, per major
 * version, as pg_stat_activity shows them. A wait event is a uint32: the
 * class in the top byte (PG_WAIT_LWLOCK 0x01 ... PG_WAIT_IO 0x0A,
 * utils/wait_event.h), the event in the low 16 bits. The names are data,
 * rules/postgres-wait-events.tsv (whose header says the format, where each
 * version's names come from and how to add a release), so that a
 * PostgreSQL release is a change to that file: offcpu reads it when a
 * rules file decodes with these tables, and builds a copy in for when
 * there is none (a static binary copied alone to another host). A value
 * no line names (an extension's tranche or event, a version without
 * lines) stays "Class:0xNNNN": never guessed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "classify/pg_events.h"
#include "lib/array.h"
#include "lib/bsearch.h"

/* The class field of a backend type's line, past the wait classes. */
#define BACKEND_TYPES PG_WAIT_CLASSES
/* A '*' line's event: after every number of its class. */
#define ANY_EVENT 0x10000u
#define MAX_NAME 63
#define MAX_LINE 255
#define MAX_VERSION 999

/*
 * pgstat_get_wait_event_type()'s names, the same in every version from 14;
 * 17 added PG_WAIT_INJECTIONPOINT 0x0B (utils/wait_event.h), whose events
 * are all registered at run time (WaitEventInjectionPointNew): numbers.
 * A new class is a change here, not only to the data.
 */
static const char *const class_names[PG_WAIT_CLASSES] = {
	[0x01] = "LWLock", [0x03] = "Lock",	      [0x04] = "BufferPin", [0x05] = "Activity",
	[0x06] = "Client", [0x07] = "Extension",      [0x08] = "IPC",	    [0x09] = "Timeout",
	[0x0A] = "IO",	   [0x0B] = "InjectionPoint",
};

#define INJECTION_POINT 0x0B
#define INJECTION_POINT_FROM 17

struct pg_entry {
	uint64_t key; /* version << 32 | class << 20 | event (ANY_EVENT for '*') */
	unsigned int line;
	char name[MAX_NAME + 1];
};

struct pg_events {
	struct pg_entry *entries; /* sorted by key */
	size_t nr;
};

static uint64_t key_of(unsigned int version, unsigned int cls, unsigned int event)
{
	return (uint64_t)version << 32 | (uint64_t)cls << 20 | event;
}

/* rules/postgres-wait-events.tsv without its comments, as a C string literal (Makefile). */
static const char builtin_text[] =
#include "postgres_wait_events.inc"
    ;

static struct pg_events builtin_none;
static const struct pg_events *builtin;
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

static void parse_builtin(void)
{
	FILE *file = fmemopen((void *)builtin_text, strlen(builtin_text), "r");
	struct pg_events *tables = NULL;
	unsigned int line;
	const char *why;

	/* The unit tests check it names what the file does; no memory leaves it empty. */
	builtin = &builtin_none;
	if (!file)
		return;
	if (!pg_events__parse(file, &tables, &line, &why))
		builtin = tables;
	fclose(file);
}

static const struct pg_events *tables_or_builtin(const struct pg_events *tables)
{
	if (tables)
		return tables;
	pthread_once(&builtin_once, parse_builtin);
	return builtin;
}

/*
 * One line into buf, without its newline: 1, or 0 at the end of the file;
 * -E2BIG past MAX_LINE bytes, -EILSEQ for a NUL byte, so that neither is
 * read as a shorter line.
 */
static int read_line(FILE *file, char *buf, size_t *bytes)
{
	size_t len = 0;
	int c;

	while ((c = getc_unlocked(file)) != EOF) {
		(*bytes)++;
		if (c == '\n')
			break;
		if (!c)
			return -EILSEQ;
		if (len == MAX_LINE)
			return -E2BIG;
		buf[len++] = (char)c;
	}
	buf[len] = '\0';
	return c != EOF || len;
}

static int class_of(const char *name)
{
	size_t i;

	if (!strcmp(name, "BackendType"))
		return BACKEND_TYPES;
	for (i = 0; i < ARRAY_SIZE(class_names); i++) {
		if (class_names[i] && !strcmp(class_names[i], name))
			return (int)i;
	}
	return -1;
}

/* "0x" and 1 to 4 hex digits. */
static int number_of(const char *s, unsigned int *out)
{
	size_t n;

	if (strncmp(s, "0x", 2))
		return -EINVAL;
	n = strspn(s + 2, "0123456789abcdefABCDEF");
	if (!n || n > 4 || s[2 + n])
		return -EINVAL;
	*out = (unsigned int)strtoul(s + 2, NULL, 16);
	return 0;
}

static int parse_entry(char *line, struct pg_entry *e, const char **why)
{
	char *fields[4], *rest = line;
	unsigned int version, event;
	size_t i, n;
	int cls;

	for (i = 0; i < 4; i++)
		fields[i] = strsep(&rest, "\t");
	if (!fields[3] || rest) {
		*why = "expected four fields separated by tabs: VERSION CLASS EVENT NAME";
		return -EINVAL;
	}
	n = strspn(fields[0], "0123456789");
	version = n && n <= 3 && !fields[0][n] ? (unsigned int)strtoul(fields[0], NULL, 10) : 0;
	if (!version || version > MAX_VERSION) {
		*why = "the version is a PostgreSQL major version, 1 to 999";
		return -EINVAL;
	}
	cls = class_of(fields[1]);
	if (cls < 0) {
		*why = "unknown class (LWLock, Lock, BufferPin, Activity, Client, Extension, IPC, "
		       "Timeout, IO, InjectionPoint, BackendType)";
		return -EINVAL;
	}
	if (cls == INJECTION_POINT && version < INJECTION_POINT_FROM) {
		*why = "InjectionPoint is a class from PostgreSQL 17";
		return -EINVAL;
	}
	if (!strcmp(fields[2], "*") && cls != BACKEND_TYPES) {
		event = ANY_EVENT;
	} else if (number_of(fields[2], &event)) {
		*why = cls == BACKEND_TYPES ? "a backend type is 0x and 1 to 4 hex digits"
					    : "an event is 0x and 1 to 4 hex digits, or '*'";
		return -EINVAL;
	}
	n = strlen(fields[3]);
	for (i = 0; i < n && fields[3][i] >= ' ' && fields[3][i] <= '~'; i++)
		;
	if (!n || n > MAX_NAME || i < n) {
		*why = "a name is 1 to 63 printable ASCII characters";
		return -EINVAL;
	}
	e->key = key_of(version, (unsigned int)cls, event);
	memcpy(e->name, fields[3], n + 1);
	return 0;
}

static int by_key_then_line(const void *a, const void *b)
{
	const struct pg_entry *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

int pg_events__parse(FILE *file, struct pg_events **out, unsigned int *bad_line, const char **why)
{
	struct pg_events *tables = calloc(1, sizeof(*tables));
	char line[MAX_LINE + 1];
	unsigned int number = 0;
	size_t bytes = 0, cap = 0, i;
	int err = 0, got;

	*out = NULL;
	if (!tables) {
		*why = "out of memory";
		return -ENOMEM;
	}
	/* A read error's errno is getc's, not one left by an open tried before. */
	errno = 0;
	while ((got = read_line(file, line, &bytes)) != 0) {
		struct pg_entry *e;

		number++;
		if (bytes > PG_EVENTS_MAX_BYTES) {
			*why = "the file is larger than 1 MiB";
			err = -EINVAL;
			break;
		}
		if (got < 0) {
			*why = got == -E2BIG ? "a line is at most 255 bytes" : "a NUL byte";
			err = -EINVAL;
			break;
		}
		if (line[0] == '#' || !line[strspn(line, " \t")])
			continue;
		if (tables->nr == cap) {
			struct pg_entry *grown;

			cap = cap ? cap * 2 : 1024;
			grown = realloc(tables->entries, cap * sizeof(*grown));
			if (!grown) {
				*why = "out of memory";
				err = -ENOMEM;
				break;
			}
			tables->entries = grown;
		}
		e = &tables->entries[tables->nr];
		err = parse_entry(line, e, why);
		if (err)
			break;
		e->line = number;
		tables->nr++;
	}
	if (!err && ferror(file)) {
		*why = "the file cannot be read to its end";
		err = -(errno ?: EIO);
	}
	if (!err && tables->nr) {
		qsort(tables->entries, tables->nr, sizeof(*tables->entries), by_key_then_line);
		/* Of the lines that name an event named before, the first in the file. */
		for (i = 1; i < tables->nr; i++) {
			if (tables->entries[i].key != tables->entries[i - 1].key)
				continue;
			if (!err || tables->entries[i].line < number)
				number = tables->entries[i].line;
			*why = "a second name for the same version, class and event";
			err = -EINVAL;
		}
	}
	if (err) {
		*bad_line = number;
		pg_events__free(tables);
		return err;
	}
	*out = tables;
	return 0;
}

void pg_events__free(struct pg_events *tables)
{
	if (!tables)
		return;
	free(tables->entries);
	free(tables);
}

/* The entry of the greatest key <= key; NULL if none. */
static const struct pg_entry *floor_of(const struct pg_events *tables, uint64_t key)
{
	return BSEARCH_FLOOR(tables->entries, tables->nr, key, key);
}

static const char *name_of(const struct pg_events *tables, unsigned int version, unsigned int cls,
			   unsigned int event)
{
	const struct pg_entry *e = floor_of(tables, key_of(version, cls, event));

	return e && e->key == key_of(version, cls, event) ? e->name : NULL;
}

bool pg_events__supported(const struct pg_events *tables, unsigned int version)
{
	const struct pg_entry *e =
	    floor_of(tables_or_builtin(tables), (uint64_t)version << 32 | UINT32_MAX);

	return e && e->key >> 32 == version;
}

bool pg_events__wait_event(const struct pg_events *tables, unsigned int version, uint32_t info,
			   char *buf, size_t size)
{
	unsigned int cls = info >> 24, event = info & 0xffff;
	const char *name;

	if (!info)
		return false;
	if (cls >= PG_WAIT_CLASSES || !class_names[cls] ||
	    (cls == INJECTION_POINT && version < INJECTION_POINT_FROM)) {
		snprintf(buf, size, "0x%08x", info);
		return true;
	}
	tables = tables_or_builtin(tables);
	name = name_of(tables, version, cls, event);
	if (!name)
		name = name_of(tables, version, cls, ANY_EVENT);
	if (name)
		snprintf(buf, size, "%s:%s", class_names[cls], name);
	else
		snprintf(buf, size, "%s:0x%04x", class_names[cls], event);
	return true;
}

bool pg_events__backend_type(const struct pg_events *tables, unsigned int version, uint32_t type,
			     char *buf, size_t size)
{
	const char *name = type < ANY_EVENT
			       ? name_of(tables_or_builtin(tables), version, BACKEND_TYPES, type)
			       : NULL;

	if (name)
		snprintf(buf, size, "%s", name);
	else
		snprintf(buf, size, "0x%x", type);
	return true;
}

size_t pg_events__class_size(const struct pg_events *tables, unsigned int version, unsigned int cls)
{
	const struct pg_entry *e;

	if (cls >= PG_WAIT_CLASSES)
		return 0;
	e = floor_of(tables_or_builtin(tables), key_of(version, cls, 0xffff));
	if (!e || e->key < key_of(version, cls, 0))
		return 0;
	return (size_t)(e->key & 0xffff) + 1;
}
