// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify/pg_events.h"
#include "classify/reads.h"
#include "lib/array.h"

static const char *const decoders[] = { "dec", "hex", "text", "pg_wait_event", "pg_backend_type" };

bool reads__decoder_known(const char *decoder)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(decoders); i++) {
		if (!strcmp(decoders[i], decoder))
			return true;
	}
	return false;
}

static bool is_pg_decoder(const char *decoder)
{
	return !strcmp(decoder, "pg_wait_event") || !strcmp(decoder, "pg_backend_type");
}

bool reads__use_pg_events(const struct rule_set *set)
{
	size_t i, k;

	for (i = 0; i < set->nr_groups; i++) {
		for (k = 0; k < set->groups[i].nr_reads; k++) {
			if (is_pg_decoder(set->groups[i].reads[k].decoder))
				return true;
		}
	}
	return false;
}

bool reads__decode(const char *decoder, const struct pg_events *pg_events, unsigned int version,
		   uint64_t value, char *buf, size_t size)
{
	if (!strcmp(decoder, "pg_wait_event"))
		return pg_events__wait_event(pg_events, version, (uint32_t)value, buf, size);
	if (!strcmp(decoder, "pg_backend_type"))
		return pg_events__backend_type(pg_events, version, (uint32_t)value, buf, size);
	if (!strcmp(decoder, "text"))
		return false; /* text is not a number: label_reader takes it as it is */
	if (!strcmp(decoder, "hex"))
		snprintf(buf, size, "0x%llx", (unsigned long long)value);
	else
		snprintf(buf, size, "%llu", (unsigned long long)value);
	return true;
}

/* A label name: it becomes a JSON key, a pprof label and a --group-by key. */
static bool valid_name(const char *s)
{
	const char *dot = strchr(s, '.');
	size_t n = strlen(s);

	/* NAMESPACE.NAME, so that --group-by tells it from its own keys. */
	if (!n || n > 64 || !dot || dot == s || !dot[1])
		return false;
	for (; *s; s++) {
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("_.-", *s)))
			return false;
	}
	return true;
}

static void group_free(struct read_group *g)
{
	size_t i;

	free(g->comm);
	free(g->version_prefix);
	for (i = 0; i < g->nr_reads; i++) {
		free(g->reads[i].symbol);
		free(g->reads[i].label);
		free(g->reads[i].decoder);
	}
}

void reads__free_groups(struct rule_set *set)
{
	size_t i;

	for (i = 0; i < set->nr_groups; i++)
		group_free(&set->groups[i]);
	free(set->groups);
	set->groups = NULL;
	set->nr_groups = 0;
}

int reads__parse_process(char **tokens, int n, struct rule_set *set, const char **why)
{
	struct read_group *grown, *g;

	if ((n != 2 && n != 4) || (n == 4 && strcmp(tokens[2], "version"))) {
		*why = "expected: process COMM [version PREFIX]";
		return -EINVAL;
	}
	if (strlen(tokens[1]) > 15) {
		*why = "a command name (comm) is at most 15 bytes";
		return -EINVAL;
	}
	grown = realloc(set->groups, (set->nr_groups + 1) * sizeof(*grown));
	if (!grown) {
		*why = "out of memory";
		return -ENOMEM;
	}
	set->groups = grown;
	g = &set->groups[set->nr_groups];
	memset(g, 0, sizeof(*g));
	g->comm = strdup(tokens[1]);
	g->version_prefix = n == 4 ? strdup(tokens[3]) : NULL;
	if (!g->comm || (n == 4 && !g->version_prefix)) {
		group_free(g);
		*why = "out of memory";
		return -ENOMEM;
	}
	set->nr_groups++;
	return 0;
}

static unsigned int width_of(const char *type)
{
	if (!strcmp(type, "u8"))
		return 1;
	if (!strcmp(type, "u16"))
		return 2;
	if (!strcmp(type, "u32"))
		return 4;
	if (!strcmp(type, "u64"))
		return 8;
	/* The pointer's width: what BPF checks is set; the text goes elsewhere. */
	if (!strcmp(type, "str"))
		return 8;
	return 0;
}

int reads__parse_read(char **tokens, int n, struct rule_set *set, const char **why)
{
	const char *decoder = "dec";
	bool deref = false, string, data = false;
	struct read_group *g;
	struct label_read *r;
	unsigned int width;
	size_t k;
	int i = 2;

	if (!set->nr_groups) {
		*why = "a read line belongs to the process line above it: none here";
		return -EINVAL;
	}
	g = &set->groups[set->nr_groups - 1];
	if (n > 2 && !strcmp(tokens[2], "deref")) {
		deref = true;
		i++;
	}
	if (n > i + 3 && !strcmp(tokens[n - 1], "data")) {
		data = true;
		n--;
	}
	if (n != i + 3 && n != i + 5) {
		*why = "expected: read SYMBOL [deref] u8|u16|u32|u64|str as LABEL [decode DECODER] "
		       "[data]";
		return -EINVAL;
	}
	width = width_of(tokens[i]);
	if (!width) {
		*why = "the width is u8, u16, u32, u64 or str";
		return -EINVAL;
	}
	string = !strcmp(tokens[i], "str");
	if (string)
		decoder = "text";
	if (strcmp(tokens[i + 1], "as") || (n == i + 5 && strcmp(tokens[i + 3], "decode"))) {
		*why = "expected: read SYMBOL [deref] u8|u16|u32|u64|str as LABEL [decode DECODER] "
		       "[data]";
		return -EINVAL;
	}
	if (!valid_name(tokens[i + 2])) {
		*why = "a label name is NAMESPACE.NAME: up to 64 letters, digits, '_', '.' or '-'";
		return -EINVAL;
	}
	if (n == i + 5) {
		decoder = tokens[i + 4];
		if (!reads__decoder_known(decoder)) {
			*why = "unknown decoder (dec, hex, text, pg_wait_event, pg_backend_type)";
			return -EINVAL;
		}
		if (string != !strcmp(decoder, "text")) {
			*why = "str reads decode as text, and only they";
			return -EINVAL;
		}
	}
	for (k = 0; string && k < g->nr_reads; k++) {
		if (g->reads[k].string) {
			*why = "one str read per process line";
			return -EINVAL;
		}
	}
	if (g->nr_reads == RULES_MAX_READS) {
		*why = "at most 4 read lines per process line";
		return -EINVAL;
	}
	r = &g->reads[g->nr_reads];
	r->symbol = strdup(tokens[1]);
	r->label = strdup(tokens[i + 2]);
	r->decoder = strdup(decoder);
	r->width = width;
	r->deref = deref;
	r->string = string;
	r->data = data;
	if (!r->symbol || !r->label || !r->decoder) {
		free(r->symbol);
		free(r->label);
		free(r->decoder);
		*why = "out of memory";
		return -ENOMEM;
	}
	g->nr_reads++;
	return 0;
}
