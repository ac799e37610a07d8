// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/array.h"
#include "symbols/limits.h"

/*
 * 1 GiB for every file of every process at once, twice one
 * process's share (so the largest process alone never leaves the others
 * unnamed) and twenty times what every file on a busy host held (offcpu
 * serve system wide beside three sessions' builds and tests: 45 files,
 * 51-54 MB); but at most a quarter of RAM, so that a user's processes
 * cannot make root's offcpu what a small host runs out of memory for.
 */
static uint64_t total_spend_default(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
	uint64_t quarter =
	    pages > 0 && page_size > 0 ? (uint64_t)pages * (uint64_t)page_size / 4 : UINT64_MAX;

	return quarter < (1ULL << 30) ? quarter : 1ULL << 30;
}

/*
 * Far above what real files need: libc's debug file has 73 sections and
 * 10,000 function symbols, a 250 MB browser binary a few hundred thousand
 * symbols (about 60 MB with their names); C++ names run to a few hundred
 * bytes, rarely 2,000.
 */
void limits__defaults(struct symbol_limits *limits)
{
	*limits = (struct symbol_limits){
		.max_file_bytes = 4ULL << 30,
		.max_sections = 32768,
		.max_symbols = 4 << 20,
		.max_name_len = 4096,
		.max_file_spend_bytes = 256 << 20,
		.max_process_spend_bytes = 512 << 20,
		.max_total_spend_bytes = total_spend_default(),
		.reread_interval_ns = 100 * 1000 * 1000,
	};
}

static const struct {
	const char *name;
	size_t offset;
	size_t size;
} fields[] = {
#define FIELD(f)                                                                                   \
	{                                                                                          \
#f, offsetof(struct symbol_limits, f), sizeof(((struct symbol_limits *)0)->f)      \
	}
	FIELD(max_file_bytes),	   FIELD(max_sections),		 FIELD(max_symbols),
	FIELD(max_name_len),	   FIELD(max_file_spend_bytes),	 FIELD(max_process_spend_bytes),
	FIELD(reread_interval_ns), FIELD(max_total_spend_bytes),
#undef FIELD
};

static int set_field(struct symbol_limits *limits, const char *item, size_t len)
{
	const char *eq = memchr(item, '=', len);
	unsigned long long value;
	char number[24], *end;
	size_t i, name_len;

	if (!eq || (size_t)(item + len - eq - 1) >= sizeof(number) || eq + 1 == item + len)
		return -EINVAL;
	name_len = (size_t)(eq - item);
	memcpy(number, eq + 1, (size_t)(item + len - eq - 1));
	number[item + len - eq - 1] = '\0';
	if (number[0] < '0' || number[0] > '9')
		return -EINVAL;
	errno = 0;
	value = strtoull(number, &end, 10);
	if (errno || *end)
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		char *at = (char *)limits + fields[i].offset;

		if (strlen(fields[i].name) != name_len || memcmp(fields[i].name, item, name_len))
			continue;
		if (fields[i].size == sizeof(uint32_t)) {
			uint32_t v = (uint32_t)value;

			if (value > UINT32_MAX)
				return -EINVAL;
			memcpy(at, &v, sizeof(v));
		} else {
			uint64_t v = value;

			memcpy(at, &v, sizeof(v));
		}
		return 0;
	}
	return -EINVAL;
}

int limits__parse(struct symbol_limits *limits, const char *text, const char **bad)
{
	struct symbol_limits parsed = *limits;
	const char *item = text;

	for (;;) {
		size_t len = strcspn(item, ",");

		if (set_field(&parsed, item, len)) {
			*bad = item;
			return -EINVAL;
		}
		if (!item[len])
			break;
		item += len + 1;
	}
	*limits = parsed;
	return 0;
}

int read_budget__charge(struct read_budget *budget, uint64_t bytes)
{
	if (bytes > budget->left) {
		budget->exhausted = true;
		return -E2BIG;
	}
	budget->left -= bytes;
	return 0;
}
