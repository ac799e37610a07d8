/* SPDX-License-Identifier: GPL-2.0 */
/* Every user message goes through here, to stderr; stdout carries data only. */
#ifndef OFFCPU_LOG_H
#define OFFCPU_LOG_H

#include <stdbool.h>

void log__set_verbose(bool verbose);
bool log__is_verbose(void);
void log__error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log__warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log__info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
