// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: a json recording given to offcpu report, and what it becomes
 * in every format. A recording may hold any bytes in its names, so each
 * output is checked as its readers need it: JSON and text well-formed
 * UTF-8, text and folded without a control a terminal would obey, the SVG
 * without a character XML 1.0 refuses. A failed check aborts.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "trace/recording.h"

/* Unicode's table 3-7 of well-formed UTF-8, apart from lib/utf8.c. */
static bool well_formed(const unsigned char *s, size_t len)
{
	size_t i = 0, n, k;

	while (i < len) {
		unsigned char b = s[i], lo = 0x80, hi = 0xbf;

		if (b < 0x80) {
			i++;
			continue;
		}
		if (b >= 0xc2 && b <= 0xdf) {
			n = 1;
		} else if (b >= 0xe0 && b <= 0xef) {
			n = 2;
			lo = b == 0xe0 ? 0xa0 : 0x80;
			hi = b == 0xed ? 0x9f : 0xbf;
		} else if (b >= 0xf0 && b <= 0xf4) {
			n = 3;
			lo = b == 0xf0 ? 0x90 : 0x80;
			hi = b == 0xf4 ? 0x8f : 0xbf;
		} else {
			return false;
		}
		if (i + n >= len || s[i + 1] < lo || s[i + 1] > hi)
			return false;
		for (k = 2; k <= n; k++) {
			if (s[i + k] < 0x80 || s[i + k] > 0xbf)
				return false;
		}
		i += n + 1;
	}
	return true;
}

enum check { CHECK_NONE, CHECK_TERMINAL, CHECK_JSON, CHECK_XML };

static void check(const unsigned char *s, size_t len, enum check what)
{
	size_t i;

	if (what == CHECK_NONE)
		return;
	if (!well_formed(s, len))
		abort();
	for (i = 0; i < len; i++) {
		/* JSON escapes every control but its line ends; text and folded show them escaped.
		 */
		if (s[i] < 0x20 && s[i] != '\n' &&
		    (what != CHECK_XML || (s[i] != '\t' && s[i] != '\r')))
			abort();
		if (what == CHECK_XML && s[i] == 0xef && i + 2 < len && s[i + 1] == 0xbf &&
		    s[i + 2] >= 0xbe)
			abort(); /* U+FFFE, U+FFFF */
		if (what != CHECK_XML && (s[i] == 0x7f || (s[i] == 0xc2 && s[i + 1] < 0xa0)))
			abort(); /* DEL, C1 */
	}
}

static void write_all(const struct profile *p)
{
	static const struct {
		int (*write)(FILE *, const struct profile *, const struct output_opts *);
		enum check check;
	} formats[] = {
		{ output_text__write, CHECK_TERMINAL }, { output_folded__write, CHECK_TERMINAL },
		{ output_json__write, CHECK_JSON },	{ output_svg__write, CHECK_XML },
		{ output_pprof__write, CHECK_NONE },	{ output_dot__write, CHECK_TERMINAL },
	};
	struct output_opts opts = { .group_by = GROUP_BY_TITLE, .lines = true };
	size_t i, size;
	char *text;
	FILE *out;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		text = NULL;
		size = 0;
		out = open_memstream(&text, &size);
		if (!out)
			return;
		if (formats[i].write(out, p, &opts)) {
			fclose(out);
			free(text);
			continue;
		}
		fclose(out);
		check((const unsigned char *)text, size, formats[i].check);
		free(text);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *file = fmemopen((void *)data, size, "r");
	struct id_list none = { 0 };
	struct recording_filter all = { .pids = &none,
					.tids = &none,
					.max_duration_ns = UINT64_MAX };
	struct profile *p;

	if (!file)
		return 0;
	if (!profile__new(true, &p)) {
		if (!recording__read(file, "fuzz", &all, p))
			write_all(p);
		profile__free(p);
	}
	fclose(file);
	return 0;
}
