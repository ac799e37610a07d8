// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: DUR, LIST, numbers and state lists from the command line. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "classify/states.h"
#include "lib/parse.h"
#include "symbols/demangle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *demangled;
	struct id_list list = { 0 };
	uint64_t value;
	uint32_t mask;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	parse__duration_ns(text, &value);
	parse__uint(text, 1, UINT32_MAX, &value);
	id_list__parse(text, &list);
	id_list__free(&list);
	states__parse_list(text, &mask);
	/* Symbol names come from files the traced processes map. */
	demangled = demangle__symbol(text);
	free(demangled);
	free(text);
	return 0;
}
