// SPDX-License-Identifier: GPL-2.0
/*
 * unwind [-s SIZE] PID...: the user-space CPU of unwinding, per stack, on
 * the stacks of every thread of the given (blocked) processes, captured
 * once with ptrace as offcpu's BPF side would copy them (SIZE bytes,
 * default 16384): a stack whose files are all new (a new unwinder each
 * time: open, read and parse each file's CFI), one whose files are cached
 * but whose rules are not (a one-slot rule cache), and a repeated stack.
 * CPU time is the process's own (CLOCK_PROCESS_CPUTIME_ID). Prints one
 * markdown table and the CPU share at 1,000 and 10,000 unwound waits/s.
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tests/integration/unwind/capture.h"
#include "proc/procmaps.h"
#include "unwind/unwind.h"

#define MAX_STACKS 256
#define MAX_FRAMES 127
#define COLD_ROUNDS 5
#define WARM_ROUNDS 2000

struct stack {
	int pid;
	struct capture c;
	struct proc_maps *maps;
};

static struct stack stacks[MAX_STACKS];
static size_t nr_stacks;
static uint64_t fresh_opens; /* files read by the unwinders made for one stack */

static double cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int capture_process(int pid, size_t size, struct proc_maps *maps)
{
	char path[64];
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir)) && nr_stacks < MAX_STACKS) {
		struct stack *s = &stacks[nr_stacks];

		if (d->d_name[0] == '.')
			continue;
		if (capture_thread(atoi(d->d_name), size, &s->c))
			continue;
		s->pid = pid;
		s->maps = maps;
		nr_stacks++;
	}
	closedir(dir);
	return procmaps__read_pid(pid, maps);
}

/* Unwinds every stack once; returns the frames. */
static size_t unwind_all(struct unwinder *u, bool fresh, const struct unwinder_opts *opts)
{
	uint64_t pcs[MAX_FRAMES];
	struct unwind_result res;
	size_t i, frames = 0;

	for (i = 0; i < nr_stacks; i++) {
		if (fresh && unwinder__new(opts, &u))
			exit(1);
		if (unwinder__unwind(u, (uint32_t)stacks[i].pid, stacks[i].maps, &stacks[i].c.regs,
				     &stacks[i].c.stack, pcs, MAX_FRAMES, &res))
			exit(1);
		frames += res.nr;
		if (fresh) {
			struct unwinder_stats st;

			unwinder__stats(u, &st);
			fresh_opens += st.modules_opened;
			unwinder__free(u);
		}
	}
	return frames;
}

int main(int argc, char **argv)
{
	static struct proc_maps maps[64];
	struct unwinder_opts one_slot = { .rule_slots = 1 };
	struct unwinder_stats st;
	double t, cold, uncached, warm, opens_per_stack;
	size_t size = 16384, frames = 0, i;
	struct unwinder *u;
	int a = 1, r;

	if (argc > 2 && !strcmp(argv[1], "-s")) {
		size = strtoul(argv[2], NULL, 0);
		a = 3;
	}
	if (a >= argc || argc - a > 64) {
		fprintf(stderr, "usage: unwind [-s SIZE] PID...\n");
		return 2;
	}
	for (i = 0; (int)i < argc - a; i++)
		if (capture_process(atoi(argv[a + i]), size, &maps[i])) {
			fprintf(stderr, "unwind: cannot capture %s\n", argv[a + i]);
			return 1;
		}
	if (!nr_stacks)
		return 1;

	/* Every file new: what the first stack through a file pays. */
	unwinder__new(NULL, &u);
	frames = unwind_all(u, false, NULL);
	unwinder__free(u);
	t = cpu_ns();
	for (r = 0; r < COLD_ROUNDS; r++)
		unwind_all(NULL, true, NULL);
	cold = (cpu_ns() - t) / COLD_ROUNDS / (double)nr_stacks;
	opens_per_stack = (double)fresh_opens / COLD_ROUNDS / (double)nr_stacks;

	/* Files cached, rules not. */
	unwinder__new(&one_slot, &u);
	unwind_all(u, false, NULL);
	t = cpu_ns();
	for (r = 0; r < WARM_ROUNDS / 10; r++)
		unwind_all(u, false, NULL);
	uncached = (cpu_ns() - t) / (WARM_ROUNDS / 10) / (double)nr_stacks;
	unwinder__free(u);

	/* Everything cached: the same stacks again. */
	unwinder__new(NULL, &u);
	unwind_all(u, false, NULL);
	t = cpu_ns();
	for (r = 0; r < WARM_ROUNDS; r++)
		unwind_all(u, false, NULL);
	warm = (cpu_ns() - t) / WARM_ROUNDS / (double)nr_stacks;
	unwinder__stats(u, &st);

	printf("%zu stacks of %d processes, %.1f frames each, copies of %zu bytes; "
	       "%" PRIu64 " files, %.0f KiB of CFI cached\n\n",
	       nr_stacks, argc - a, (double)frames / (double)nr_stacks, size, st.modules_cached,
	       (double)st.bytes_cached / 1024);
	printf("| unwinding one stack | CPU us | per frame | at 1,000/s | at 10,000/s |\n");
	printf("|---|---:|---:|---:|---:|\n");
	printf("| every file new (open, read, parse its CFI: %.1f files a stack, %.0f us each) "
	       "| %.1f | %.2f | %.1f%% | %.1f%% |\n",
	       opens_per_stack, cold / 1e3 / opens_per_stack, cold / 1e3,
	       cold / 1e3 * nr_stacks / frames, cold / 1e4, cold / 1e3);
	printf("| files cached, rules not (dwarf_cfi_addrframe every frame) | %.2f | %.3f | "
	       "%.2f%% | %.1f%% |\n",
	       uncached / 1e3, uncached / 1e3 * nr_stacks / frames, uncached / 1e4, uncached / 1e3);
	printf("| all cached (a stack seen before) | %.2f | %.3f | %.2f%% | %.2f%% |\n", warm / 1e3,
	       warm / 1e3 * nr_stacks / frames, warm / 1e4, warm / 1e3);
	unwinder__free(u);
	return 0;
}
