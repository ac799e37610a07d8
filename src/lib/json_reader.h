/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small JSON parser for offcpu's own JSON Lines recordings: one value
 * per call, parsed into a tree. Integers keep all 64 bits.
 *
 * Ours rather than Debian's jansson or json-c. Measured on a 538 MB
 * recording (483,042 waits of a real system-wide run, frames with
 * module_off, build_id, file and line), each line parsed and every field
 * recording.c reads looked up, CPU time of three runs on this VM: ours
 * 2.0-2.2 s, json-c 0.16 3.2-3.3 s, jansson 2.14 6.3-6.5 s. jansson also
 * refuses a line holding a byte that is not UTF-8 ("unable to decode byte
 * 0xff") and integers above 2^63-1, and a recording of hostile process
 * names must read back. json-c would do (raw bytes pass unless
 * JSON_TOKENER_VALIDATE_UTF8), at 1.5 times the time and a library more;
 * what the libraries have over this file is OSS-Fuzz, which
 * tests/fuzz/fuzz_recording stands in for here.
 */
#ifndef OFFCPU_JSON_READER_H
#define OFFCPU_JSON_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json_value {
	enum json_type type;
	bool boolean;
	bool is_u64; /* a non-negative integer that fits: u64 holds it exactly */
	uint64_t u64;
	double number;
	char *string; /* JSON_STRING, NUL-terminated (a \u0000 ends it early) */
	size_t nr;    /* items of an array or members of an object */
	struct json_value *items;
	char **keys; /* JSON_OBJECT: keys[i] names items[i] */
};

/*
 * Parses text[0..len) as exactly one value (surrounding white space
 * allowed). On error returns -EINVAL and sets *error to a static message
 * and *error_at to the offset where it was found.
 */
int json_reader__parse(const char *text, size_t len, struct json_value *out, const char **error,
		       size_t *error_at);
void json_value__free(struct json_value *v);
/* The member named key of an object; NULL if absent or v is no object. */
const struct json_value *json_value__member(const struct json_value *v, const char *key);

#endif
