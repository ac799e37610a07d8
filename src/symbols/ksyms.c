// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/bsearch.h"
#include "symbols/ksyms.h"

struct ksyms {
	struct ksym *syms;
	size_t nr;
	/* Past the last symbol nothing is known: bound it. */
	uint64_t end;
};

/* Longest kernel symbol is KSYM_NAME_LEN (512) since 6.1. */
#define KSYM_NAME_MAX 512
#define MODULE_NAME_MAX 64
/* The largest kernel function seen is well below this. */
#define LAST_SYMBOL_MAX_SIZE (1 << 20)

int ksyms__parse_line(const char *line, uint64_t *addr, char *type, char *name, size_t name_size,
		      char *module, size_t module_size)
{
	const char *p, *end;
	char *after;
	size_t len;

	errno = 0;
	*addr = strtoull(line, &after, 16);
	if (after == line || errno || after[0] != ' ' || !after[1] || after[2] != ' ')
		return -EINVAL;
	*type = after[1];
	p = after + 3;
	len = strcspn(p, "\t \n");
	if (len == 0 || len >= name_size)
		return -EINVAL;
	memcpy(name, p, len);
	name[len] = '\0';
	module[0] = '\0';
	p += len;
	p += strspn(p, "\t ");
	if (*p == '[') {
		end = strchr(p, ']');
		if (!end || (size_t)(end - p - 1) >= module_size)
			return -EINVAL;
		memcpy(module, p + 1, end - p - 1);
		module[end - p - 1] = '\0';
	}
	return 0;
}

static int compare_ksyms(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static bool is_text(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

int ksyms__load(FILE *file, struct ksyms **out)
{
	char name[KSYM_NAME_MAX], module[MODULE_NAME_MAX], type;
	struct ksyms *ks = calloc(1, sizeof(*ks));
	size_t cap = 0, size = 0;
	char *line = NULL;
	bool nonzero = false;
	int err = 0;

	if (!ks)
		return -ENOMEM;
	while (getline(&line, &size, file) > 0) {
		uint64_t addr;
		struct ksym *s;

		if (ksyms__parse_line(line, &addr, &type, name, sizeof(name), module,
				      sizeof(module)))
			continue;
		nonzero |= addr != 0;
		if (!is_text(type))
			continue;
		if (ks->nr == cap) {
			struct ksym *grown;

			cap = cap ? cap * 2 : 4096;
			grown = realloc(ks->syms, cap * sizeof(*grown));
			if (!grown) {
				err = -ENOMEM;
				break;
			}
			ks->syms = grown;
		}
		s = &ks->syms[ks->nr];
		s->addr = addr;
		s->name = strdup(name);
		s->module = module[0] ? strdup(module) : NULL;
		if (!s->name || (module[0] && !s->module)) {
			free((char *)s->name);
			free((char *)s->module);
			err = -ENOMEM;
			break;
		}
		ks->nr++;
	}
	free(line);
	/* kptr_restrict hides every address behind zeros. */
	if (!err && (!nonzero || ks->nr == 0))
		err = -EPERM;
	if (err) {
		ksyms__free(ks);
		return err;
	}
	qsort(ks->syms, ks->nr, sizeof(*ks->syms), compare_ksyms);
	ks->end = ks->syms[ks->nr - 1].addr + LAST_SYMBOL_MAX_SIZE;
	*out = ks;
	return 0;
}

int ksyms__load_system(struct ksyms **out)
{
	FILE *file = fopen("/proc/kallsyms", "re");
	int err;

	if (!file)
		return -errno;
	err = ksyms__load(file, out);
	fclose(file);
	return err;
}

const struct ksym *ksyms__find(const struct ksyms *ks, uint64_t addr)
{
	if (addr >= ks->end)
		return NULL;
	return BSEARCH_FLOOR(ks->syms, ks->nr, addr, addr);
}

void ksyms__free(struct ksyms *ks)
{
	size_t i;

	if (!ks)
		return;
	for (i = 0; i < ks->nr; i++) {
		free((char *)ks->syms[i].name);
		free((char *)ks->syms[i].module);
	}
	free(ks->syms);
	free(ks);
}
