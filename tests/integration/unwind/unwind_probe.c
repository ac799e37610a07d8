// SPDX-License-Identifier: GPL-2.0
/*
 * unwind_probe [-s SIZE] PID: each thread of PID, stopped for a moment
 * with ptrace, its registers and top SIZE bytes of stack (default 16384)
 * copied as offcpu's BPF side would, unwound by src/unwind/unwind.c and
 * symbolized; one JSON line per thread:
 * {"tid":N,"comm":"S","stop":"root","fp_frames":N,"stack_bytes":N,
 *  "frames":[{"addr":"0x..","sym":"S","module":"S"}...]}, leaf first.
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "lib/clock.h"
#include "lib/inline_pool.h"
#include "lib/strpool.h"
#include "proc/procmaps.h"
#include "symbols/symbolizer.h"
#include "unwind/unwind.h"

#define MAX_FRAMES 256
#define MAX_THREADS 256

static void print_string(const char *s)
{
	putchar('"');
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		if ((unsigned char)*s >= 0x20)
			putchar(*s);
	}
	putchar('"');
}

static void read_comm(int pid, int tid, char *comm, size_t size)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	comm[0] = 0;
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(comm, (int)size, f))
		comm[strcspn(comm, "\n")] = 0;
	fclose(f);
}

static int list_threads(int pid, int *tids, int max)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir)) && n < max)
		if (d->d_name[0] != '.')
			tids[n++] = atoi(d->d_name);
	closedir(dir);
	return n;
}

static void print_thread(struct symbolizer *sym, int pid, int tid, const struct capture *c,
			 const uint64_t *pcs, const struct unwind_result *res)
{
	char comm[32];
	size_t i;

	read_comm(pid, tid, comm, sizeof(comm));
	printf("{\"tid\":%d,\"comm\":", tid);
	print_string(comm);
	printf(",\"stop\":\"%s\",\"fp_frames\":%zu,\"stack_bytes\":%zu,\"frames\":[",
	       unwind__stop_name(res->stop), res->fp_frames, c->stack.size);
	for (i = 0; i < res->nr; i++) {
		struct frame f = { 0 };

		symbolizer__user(sym, (uint32_t)pid, pcs[i], i == 0, clock__monotonic_ns(), &f);
		printf("%s{\"addr\":\"0x%" PRIx64 "\",\"sym\":", i ? "," : "", pcs[i]);
		print_string(f.sym);
		printf(",\"module\":");
		print_string(f.module);
		putchar('}');
	}
	printf("]}\n");
}

int main(int argc, char **argv)
{
	static struct capture captures[MAX_THREADS];
	static int tids[MAX_THREADS];
	struct strpool *strings = strpool__new();
	struct inline_pool *inlines = inline_pool__new();
	struct symbolizer *sym = NULL;
	struct unwinder *u = NULL;
	struct proc_maps maps;
	size_t size = 16384;
	int pid, n, i;

	if (argc == 4 && !strcmp(argv[1], "-s")) {
		size = strtoul(argv[2], NULL, 0);
		argv += 2;
		argc -= 2;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: unwind_probe [-s SIZE] PID\n");
		return 2;
	}
	pid = atoi(argv[1]);
	n = list_threads(pid, tids, MAX_THREADS);
	if (n <= 0 || !strings || !inlines || unwinder__new(NULL, &u) ||
	    symbolizer__new(strings, inlines, NULL, &sym)) {
		fprintf(stderr, "unwind_probe: cannot start on pid %d\n", pid);
		return 1;
	}
	/* Every thread first, then the slower reading of files and symbols. */
	for (i = 0; i < n; i++) {
		int err = capture_thread(tids[i], size, &captures[i]);

		if (err) {
			fprintf(stderr, "unwind_probe: cannot capture thread %d: %s\n", tids[i],
				strerror(-err));
			return 1;
		}
	}
	if (procmaps__read_pid(pid, &maps)) {
		fprintf(stderr, "unwind_probe: cannot read the maps of %d\n", pid);
		return 1;
	}
	for (i = 0; i < n; i++) {
		uint64_t pcs[MAX_FRAMES];
		struct unwind_result res;

		if (unwinder__unwind(u, (uint32_t)pid, &maps, &captures[i].regs, &captures[i].stack,
				     pcs, MAX_FRAMES, &res)) {
			fprintf(stderr, "unwind_probe: unwinding thread %d failed\n", tids[i]);
			return 1;
		}
		print_thread(sym, pid, tids[i], &captures[i], pcs, &res);
		free(captures[i].buf);
	}
	procmaps__free(&maps);
	symbolizer__free(sym);
	unwinder__free(u);
	inline_pool__free(inlines);
	strpool__free(strings);
	return 0;
}
