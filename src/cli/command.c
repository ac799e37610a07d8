// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/command.h"

void command_signals__save(struct command_signals *saved)
{
	int sig;

	memset(saved, 0, sizeof(*saved));
	sigprocmask(SIG_SETMASK, NULL, &saved->mask);
	/*
	 * Every signal, not a list to keep in step with what main() changes.
	 * Those glibc reserves for itself fail and stay zeroed: SIG_DFL.
	 */
	for (sig = 1; sig < NSIG; sig++)
		sigaction(sig, NULL, &saved->actions[sig]);
}

/* In the child, between fork and exec: only async-signal-safe calls. */
static void restore_signals(const struct command_signals *saved)
{
	int sig;

	/* Dispositions first: a signal the old mask unblocks meets its own action. */
	for (sig = 1; sig < NSIG; sig++)
		sigaction(sig, &saved->actions[sig], NULL);
	sigprocmask(SIG_SETMASK, &saved->mask, NULL);
}

int command__start(char *const *argv, const struct command_signals *saved, struct command *cmd)
{
	int gate[2];
	char byte;

	memset(cmd, 0, sizeof(*cmd));
	cmd->gate_fd = -1;
	if (pipe2(gate, O_CLOEXEC))
		return -errno;
	cmd->pid = fork();
	if (cmd->pid < 0) {
		close(gate[0]);
		close(gate[1]);
		return -errno;
	}
	if (cmd->pid == 0) {
		close(gate[1]);
		/* EOF on the gate: offcpu is attached (or gone: then do not run). */
		if (read(gate[0], &byte, 1) != 1)
			_exit(127);
		restore_signals(saved);
		execvp(argv[0], argv);
		/* The one message the child prints: stdout is the command's. */
		fprintf(stderr, "offcpu: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(gate[0]);
	cmd->gate_fd = gate[1];
	return 0;
}

void command__release(struct command *cmd)
{
	char go = 1;

	if (cmd->gate_fd < 0)
		return;
	if (write(cmd->gate_fd, &go, 1) != 1)
		kill(cmd->pid, SIGKILL);
	close(cmd->gate_fd);
	cmd->gate_fd = -1;
}

bool command__poll_exit(struct command *cmd)
{
	int status;
	pid_t r;

	if (cmd->exited)
		return true;
	r = waitpid(cmd->pid, &status, WNOHANG);
	if (r != cmd->pid)
		return false;
	cmd->exited = true;
	/* A shell's convention: 128 + the signal that killed it. */
	cmd->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return true;
}

void command__kill(struct command *cmd)
{
	if (cmd->gate_fd >= 0) {
		close(cmd->gate_fd);
		cmd->gate_fd = -1;
	}
	if (cmd->pid > 0 && !cmd->exited) {
		kill(cmd->pid, SIGKILL);
		waitpid(cmd->pid, NULL, 0);
		cmd->exited = true;
	}
}
