// SPDX-License-Identifier: GPL-2.0
/* The text report's stacks, read from folded_lines' text (folded_lines.h). */
#include <string.h>

#include "output/text_stack.h"

/* "[NAMESPACE.NAME=VALUE]": what folded_lines puts after [wait] for each label. */
bool text_stack__is_label_frame(const char *frame)
{
	size_t len = strcspn(frame, ";");
	const char *eq = memchr(frame, '=', len);

	return len > 4 && frame[0] == '[' && frame[len - 1] == ']' && eq &&
	       memchr(frame, '.', (size_t)(eq - frame));
}

/* Past the ';' at text[len] and the field after it; len itself at the line's end. */
size_t text_stack__next_field(const char *text, size_t len)
{
	if (text[len] != ';')
		return len;
	return len + 1 + strcspn(text + len + 1, ";");
}

/*
 * Leaf first, as BCC's offcputime prints: where it blocked on top. frames
 * is ";root;...;leaf", walked from its end: a user frame can bring up to
 * FRAME_NAMES_MAX_INLINES inlined names with it, so no array sized by the
 * stack depth can hold every name, and the leaf is the one a cut would lose.
 * The folded "_[k]" suffix read as part of a name: each run of kernel or
 * user frames is headed by a "kernel:" or "user:" line instead.
 */
void text_stack__print_leaf_first(FILE *out, const char *frames)
{
	static const char kernel_suffix[] = "_[k]";
	const size_t suffix_len = sizeof(kernel_suffix) - 1;
	const char *end = frames + strlen(frames), *sep, *name;
	int side = -1, kernel;
	size_t len;

	while (end > frames) {
		sep = memrchr(frames, ';', (size_t)(end - frames));
		name = sep ? sep + 1 : frames;
		len = (size_t)(end - name);
		kernel = len > suffix_len && !memcmp(end - suffix_len, kernel_suffix, suffix_len);
		if (kernel)
			len -= suffix_len;
		/* The "--" between a waker's stack and the wakee's belongs to neither. */
		if (len == 2 && !memcmp(name, "--", 2)) {
			fprintf(out, "    --\n");
			side = -1;
		} else {
			if (kernel != side)
				fprintf(out, "    %s:\n", kernel ? "kernel" : "user");
			side = kernel;
			fprintf(out, "      %.*s\n", (int)len, name);
		}
		if (!sep)
			break;
		end = sep;
	}
}
