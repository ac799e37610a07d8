/* SPDX-License-Identifier: GPL-2.0 */
/* -- COMMAND: start it held at a gate, trace it, release it, wait for it. */
#ifndef OFFCPU_COMMAND_H
#define OFFCPU_COMMAND_H

#include <stdbool.h>
#include <sys/types.h>

struct command {
	pid_t pid;
	int gate_fd; /* closing it lets the child exec */
	int status;  /* exit status to return, valid once exited */
	bool exited;
};

/* Forks; the child waits at the gate, then execs argv. */
int command__start(char *const *argv, struct command *cmd);
/* Tracing is attached: let it run. */
void command__release(struct command *cmd);
/* Non-blocking; true once it has exited. */
bool command__poll_exit(struct command *cmd);
void command__kill(struct command *cmd);

#endif
