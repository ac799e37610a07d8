// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/parse.h"

struct duration_unit {
	const char *suffix;
	uint64_t ns;
};

static const struct duration_unit duration_units[] = {
	{ "ns", 1ULL },		{ "us", 1000ULL },	 { "ms", 1000000ULL },
	{ "s", 1000000000ULL }, { "m", 60000000000ULL },
};

/* Digits only: strtoull would accept signs, spaces and hex. */
static int parse_digits(const char *text, size_t len, uint64_t *out)
{
	uint64_t value = 0;
	size_t i;

	if (len == 0)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (!isdigit((unsigned char)text[i]))
			return -EINVAL;
		if (value > (UINT64_MAX - (uint64_t)(text[i] - '0')) / 10)
			return -ERANGE;
		value = value * 10 + (uint64_t)(text[i] - '0');
	}
	*out = value;
	return 0;
}

/*
 * The fraction's nanoseconds: "25" of "0.25ms" is 250000. Exact or -EINVAL:
 * the fraction, its trailing zeros dropped, must be whole nanoseconds.
 */
static int fraction_ns(const char *text, size_t len, uint64_t unit_ns, uint64_t *out)
{
	uint64_t value, scale = 1;
	size_t i;
	int err;

	while (len > 0 && text[len - 1] == '0')
		len--;
	for (i = 0; i < len; i++) {
		if (unit_ns % (scale * 10))
			return -EINVAL;
		scale *= 10;
	}
	if (len == 0) {
		*out = 0;
		return 0;
	}
	err = parse_digits(text, len, &value);
	if (err)
		return err;
	*out = value * (unit_ns / scale);
	return 0;
}

int parse__duration_ns(const char *text, uint64_t *out_ns)
{
	size_t len = strlen(text), digits = 0, point, fraction = 0;
	uint64_t value, part;
	size_t i;
	int err;

	while (digits < len && isdigit((unsigned char)text[digits]))
		digits++;
	err = parse_digits(text, digits, &value);
	if (err)
		return err;
	if (digits == len) {
		/* Only a bare 0 may go without a unit. */
		if (value != 0)
			return -EINVAL;
		*out_ns = 0;
		return 0;
	}
	/* "1.5s": digits on both sides of the point, then the unit. */
	point = digits;
	if (text[point] == '.') {
		while (point + 1 + fraction < len &&
		       isdigit((unsigned char)text[point + 1 + fraction]))
			fraction++;
		if (fraction == 0)
			return -EINVAL;
		digits = point + 1 + fraction;
	}
	for (i = 0; i < ARRAY_SIZE(duration_units); i++) {
		const struct duration_unit *u = &duration_units[i];

		if (strcmp(text + digits, u->suffix))
			continue;
		part = 0;
		if (fraction) {
			err = fraction_ns(text + point + 1, fraction, u->ns, &part);
			if (err)
				return err;
		}
		if (value > UINT64_MAX / u->ns || value * u->ns > UINT64_MAX - part)
			return -ERANGE;
		*out_ns = value * u->ns + part;
		return 0;
	}
	return -EINVAL;
}

int parse__uint(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t value;
	int err = parse_digits(text, strlen(text), &value);

	if (err)
		return err;
	if (value < min || value > max)
		return -ERANGE;
	*out = value;
	return 0;
}

int id_list__parse(const char *text, struct id_list *list)
{
	size_t nr = 1, added = 0;
	const char *p = text;
	uint32_t *ids;

	for (p = text; *p; p++)
		nr += *p == ',';
	ids = realloc(list->ids, (list->nr + nr) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	list->ids = ids;
	p = text;
	for (;;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		uint64_t value;
		int err = parse_digits(p, len, &value);

		if (!err && (value == 0 || value > INT32_MAX))
			err = -ERANGE;
		if (err)
			return err;
		ids[list->nr + added++] = (uint32_t)value;
		if (!end)
			break;
		p = end + 1;
	}
	list->nr += added;
	return 0;
}

void id_list__free(struct id_list *list)
{
	free(list->ids);
	list->ids = NULL;
	list->nr = 0;
}
