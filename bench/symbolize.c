// SPDX-License-Identifier: GPL-2.0
/*
 * What symbolization costs, measured on this machine's own libc and a
 * built test program (`make bench` runs it after bench/run):
 *
 *   first frame of a file: its ELF symbols (and debug file's) read once
 *   first source line of a file: its DWARF opened (compressed debug files)
 *   per new process: its maps read, its files found in the cache
 *   per new stack: 16 user frames named, then their lines and inlines
 *   per wait on a lock: the object named (its variable, its holder)
 *
 * usage: symbolize [PROCESSES [STACKS]]
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/clock.h"
#include "objects/objects.h"
#include "proc/procmaps.h"
#include "symbols/elfsyms.h"
#include "symbols/symbolizer.h"

#define FRAMES_PER_STACK 16

static double now_us(void)
{
	return (double)clock__monotonic_ns() / 1e3;
}

/* Addresses inside libc's named functions in this process, to stand for return addresses. */
static size_t libc_addresses(uint64_t *out, size_t max)
{
	struct proc_maps maps;
	size_t i, nr = 0;

	if (procmaps__read_pid(getpid(), &maps))
		return 0;
	for (i = 0; i < maps.nr && nr < max; i++) {
		const struct proc_map *m = &maps.maps[i];
		uint64_t a;

		if (!strstr(m->path, "/libc.so") || !(m->end > m->start) || m->file_offset == 0)
			continue;
		/* Every 97th byte of its first text mapping: most are inside a function. */
		for (a = m->start + 1; a < m->end && nr < max; a += 97)
			out[nr++] = a;
		break;
	}
	procmaps__free(&maps);
	return nr;
}

static pthread_mutex_t bench_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * A wait on bench_lock as the switch-out takes it, held by this thread:
 * its variable named from this program's symbols, its holder's name read.
 */
static void objects_cost(int waits)
{
	static const char *const names[] = { "__lll_lock_wait", "pthread_mutex_lock" };
	struct stack *stack = calloc(1, sizeof(*stack) + 2 * sizeof(stack->frames[0]));
	struct offcpu_object o = { .taken = 1, .syscall = 202 };
	struct symbol_limits limits;
	struct object_name name;
	struct objects *objs;
	double t0, t1;
	int i;

	limits__defaults(&limits);
	if (!stack || objects__new(&limits, &objs))
		return;
	stack->nr = 2;
	stack->frames[0].sym = names[0];
	stack->frames[1].sym = names[1];
	pthread_mutex_lock(&bench_lock);
	o.args[0] = (uint64_t)&bench_lock;
	o.args[1] = 128;
	o.args[2] = 2;
	o.window_addr = o.args[0] - OFFCPU_OBJECT_BEFORE;
	o.window_len = OFFCPU_OBJECT_WINDOW;
	memcpy(o.window + OFFCPU_OBJECT_BEFORE, &bench_lock,
	       OFFCPU_OBJECT_WINDOW - OFFCPU_OBJECT_BEFORE);
	t0 = now_us();
	objects__name(objs, getpid(), &o, stack, NULL, &name);
	t1 = now_us();
	printf("first lock named in a file (all maps, the file's variables): %.2f ms (%s, held by "
	       "%s)\n",
	       (t1 - t0) / 1e3, name.name, name.holder_comm);
	t0 = now_us();
	for (i = 0; i < waits; i++)
		objects__name(objs, getpid(), &o, stack, NULL, &name);
	t1 = now_us();
	printf("per wait on a lock, named (variable and holder known): %.2f us over %d\n",
	       (t1 - t0) / waits, waits);
	pthread_mutex_unlock(&bench_lock);
	objects__free(objs);
	free(stack);
}

int main(int argc, char **argv)
{
	int processes = argc > 1 ? atoi(argv[1]) : 200;
	int stacks = argc > 2 ? atoi(argv[2]) : 2000;
	struct strpool *strings = strpool__new();
	struct inline_pool *inlines = inline_pool__new();
	struct symbolizer *s;
	struct frame f, *frames;
	uint64_t *addrs;
	size_t nr_addrs, named = 0, lined = 0;
	double t0, t1;
	pid_t *children;
	int i, j;

	if (!strings || !inlines || symbolizer__new(strings, inlines, NULL, &s))
		return 1;
	addrs = calloc(1 << 20, sizeof(*addrs));
	frames = calloc((size_t)stacks * FRAMES_PER_STACK, sizeof(*frames));
	children = calloc((size_t)processes, sizeof(*children));
	nr_addrs = addrs ? libc_addresses(addrs, 1 << 20) : 0;
	if (!frames || !children || nr_addrs < FRAMES_PER_STACK) {
		fprintf(stderr, "symbolize: libc not found in own maps\n");
		return 1;
	}

	t0 = now_us();
	symbolizer__user(s, getpid(), addrs[0], false, clock__monotonic_ns(), &f);
	t1 = now_us();
	printf("first frame in libc (maps, ELF and debug-file symbols): %.2f ms\n",
	       (t1 - t0) / 1e3);
	t0 = now_us();
	symbolizer__resolve_lines(s, &f);
	t1 = now_us();
	printf("first source line in libc (its DWARF opened): %.2f ms\n", (t1 - t0) / 1e3);

	/* Distinct stacks: each frame a different libc address. */
	t0 = now_us();
	for (i = 0; i < stacks * FRAMES_PER_STACK; i++) {
		symbolizer__user(s, getpid(), addrs[(size_t)i % nr_addrs], false,
				 clock__monotonic_ns(), &frames[i]);
		named += frames[i].sym != NULL;
	}
	t1 = now_us();
	printf("per new stack of %d frames, names: %.1f us (%zu of %d frames named)\n",
	       FRAMES_PER_STACK, (t1 - t0) / stacks, named, stacks * FRAMES_PER_STACK);
	t0 = now_us();
	for (i = 0; i < stacks * FRAMES_PER_STACK; i++) {
		symbolizer__resolve_lines(s, &frames[i]);
		lined += frames[i].file != NULL;
	}
	t1 = now_us();
	printf("per new stack of %d frames, lines and inlines: %.1f us (%zu with a line)\n",
	       FRAMES_PER_STACK, (t1 - t0) / stacks, lined);

	/* New processes of a binary already cached: their maps are what costs. */
	for (i = 0; i < processes; i++) {
		children[i] = fork();
		if (children[i] == 0) {
			pause();
			_exit(0);
		}
	}
	usleep(100000);
	t0 = now_us();
	for (i = 0; i < processes; i++) {
		for (j = 0; j < 4; j++)
			symbolizer__user(s, (uint32_t)children[i], addrs[(size_t)j * 31 % nr_addrs],
					 false, clock__monotonic_ns(), &f);
		symbolizer__exit(s, (uint32_t)children[i]);
	}
	t1 = now_us();
	printf("per new process (maps read, 4 frames, freed at exit): %.1f us over %d\n",
	       (t1 - t0) / processes, processes);
	for (i = 0; i < processes; i++) {
		kill(children[i], SIGKILL);
		waitpid(children[i], NULL, 0);
	}
	objects_cost(100000);
	symbolizer__free(s);
	inline_pool__free(inlines);
	strpool__free(strings);
	free(addrs);
	free(frames);
	free(children);
	return 0;
}
