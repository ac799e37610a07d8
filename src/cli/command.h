/* SPDX-License-Identifier: GPL-2.0 */
/* -- COMMAND: start it held at a gate, trace it, release it, wait for it. */
#ifndef OFFCPU_COMMAND_H
#define OFFCPU_COMMAND_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

/*
 * The signal dispositions and mask offcpu was started with. An ignored
 * signal and the mask survive exec, so the command would run with offcpu's
 * own (SIGPIPE ignored, for one) unless it gets these back.
 */
struct command_signals {
	sigset_t mask;
	struct sigaction actions[NSIG];
};

struct command {
	pid_t pid;
	int gate_fd; /* closing it lets the child exec */
	int status;  /* exit status to return, valid once exited */
	bool exited;
};

/* Call before offcpu changes any disposition or the mask. */
void command_signals__save(struct command_signals *saved);

/* Forks; the child waits at the gate, restores saved, then execs argv. */
int command__start(char *const *argv, const struct command_signals *saved, struct command *cmd);
/* Tracing is attached: let it run. */
void command__release(struct command *cmd);
/* Non-blocking; true once it has exited. */
bool command__poll_exit(struct command *cmd);
void command__kill(struct command *cmd);

#endif
