// SPDX-License-Identifier: GPL-2.0
#include "output/text_column.h"

/* A UTF-8 continuation byte: part of the character before it. */
static int is_continuation(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

size_t text_column__width(const char *s)
{
	size_t width = 0;

	for (; *s; s++)
		width += !is_continuation((unsigned char)*s);
	return width;
}

void text_column__print(FILE *out, const char *s, size_t width)
{
	size_t shown = text_column__width(s), len = 0, columns = 0;

	if (shown <= width) {
		fputs(s, out);
		for (; shown < width; shown++)
			fputc(' ', out);
		return;
	}
	/* width - 1 characters, whole: the cut falls before a character's first byte. */
	while (s[len] && (columns < width - 1 || is_continuation((unsigned char)s[len]))) {
		if (!is_continuation((unsigned char)s[len]))
			columns++;
		len++;
	}
	fprintf(out, "%.*s" TEXT_COLUMN_ELLIPSIS, (int)len, s);
}
