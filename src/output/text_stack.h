/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The text report's stacks, from folded_lines' text: the heading fields
 * of a line ("comm;[state];[wait]", "comm;[on-cpu]", label pseudo-frames)
 * and its frames, printed leaf first under "kernel:" and "user:".
 */
#ifndef OFFCPU_TEXT_STACK_H
#define OFFCPU_TEXT_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Whether frame (up to its ';') is a "[NAMESPACE.NAME=VALUE]" label pseudo-frame. */
bool text_stack__is_label_frame(const char *frame);
/* Past the ';' at text[len] and the field after it; len itself at the line's end. */
size_t text_stack__next_field(const char *text, size_t len);
/* frames, ";root;...;leaf", leaf first, a line each, indented under "kernel:"/"user:". */
void text_stack__print_leaf_first(FILE *out, const char *frames);

#endif
