/* SPDX-License-Identifier: GPL-2.0 */
/* offcpu's exit statuses besides 0 (offcpu.1: 1 environment, 2 usage). */
#ifndef OFFCPU_EXIT_STATUS_H
#define OFFCPU_EXIT_STATUS_H

#include <signal.h>

#define EXIT_ENVIRONMENT 1
#define EXIT_USAGE 2
/* Output cut short by a closed pipe (offcpu | head): quiet, as if SIGPIPE ended it. */
#define EXIT_PIPE (128 + SIGPIPE)

#endif
