// SPDX-License-Identifier: GPL-2.0
#include <signal.h>

#include "lib/stop_signals.h"

void stop_signals__hold(sigset_t *saved)
{
	sigset_t stop;

	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, saved);
}
