// SPDX-License-Identifier: GPL-2.0
/*
 * stack_copy [ROUNDS [LOOPS]]: the BPF cost of copying user stacks at
 * rseq_update, each way of bench/stack_copy.bpf.c attached alone while
 * `perf bench sched pipe -l LOOPS` runs, beside an empty sched_switch
 * program over the same switches. Times are the kernel's own accounting
 * (BPF_ENABLE_STATS: run_time_ns and run_cnt of each program), as
 * bench/run reads them; "x empty" divides by the empty sched_switch
 * program's time per run in the same run. A thread drains the ring buffer
 * meanwhile. Prints one markdown table. "above empty rseq" is what trying
 * a copy adds to the empty program (the same filter on comm, no copy): a
 * copy that fails still costs the reads up to the fault.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stack_copy.skel.h"

static const char *const variants[] = {
	"empty_rseq",
	"read_8k_output",
	"read_16k_output",
	"reserve_8k_read_into",
	"vma_clamped_8k_output",
	"vma_clamped_16k_output",
	"vma_clamped_8k_dynptr",
	"pages_16k_output",
};

#define NR_VARIANTS (sizeof(variants) / sizeof(variants[0]))

struct sums {
	double ns, runs, ref_ns, ref_runs, seconds, copies, failures, drops, bytes;
};

static volatile int stop_draining;

static int drained(void *ctx, void *data, size_t size)
{
	(void)ctx;
	(void)data;
	(void)size;
	return 0;
}

static void *drain(void *arg)
{
	struct ring_buffer *rb = arg;

	/* The programs do not wake us (as offcpu's do not, per record): look every ms. */
	while (!stop_draining) {
		ring_buffer__consume(rb);
		usleep(1000);
	}
	return NULL;
}

static int prog_stats(struct bpf_program *prog, double *ns, double *runs)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		return -1;
	*ns = (double)info.run_time_ns;
	*runs = (double)info.run_cnt;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int measure(struct stack_copy_bpf *skel, struct bpf_program *prog, int loops, struct sums *s)
{
	struct bpf_program *ref = skel->progs.empty_switch;
	double ns0, runs0, rns0, rruns0, ns1, runs1, rns1, rruns1, t0;
	__u64 copies = skel->bss->copies, failures = skel->bss->copy_failures;
	__u64 drops = skel->bss->drops, bytes = skel->bss->bytes;
	struct bpf_link *link = bpf_program__attach(prog);
	char cmd[128];

	if (!link)
		return -1;
	snprintf(cmd, sizeof(cmd), "perf bench sched pipe -l %d > /dev/null", loops);
	prog_stats(prog, &ns0, &runs0);
	prog_stats(ref, &rns0, &rruns0);
	t0 = now_s();
	if (system(cmd)) {
		bpf_link__destroy(link);
		return -1;
	}
	s->seconds += now_s() - t0;
	prog_stats(prog, &ns1, &runs1);
	prog_stats(ref, &rns1, &rruns1);
	bpf_link__destroy(link);
	s->ns += ns1 - ns0;
	s->runs += runs1 - runs0;
	s->ref_ns += rns1 - rns0;
	s->ref_runs += rruns1 - rruns0;
	s->copies += (double)(skel->bss->copies - copies);
	s->failures += (double)(skel->bss->copy_failures - failures);
	s->drops += (double)(skel->bss->drops - drops);
	s->bytes += (double)(skel->bss->bytes - bytes);
	return 0;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 3, loops = argc > 2 ? atoi(argv[2]) : 30000;
	struct sums sums[NR_VARIANTS] = {};
	struct stack_copy_bpf *skel;
	struct bpf_link *ref_link;
	struct ring_buffer *rb;
	pthread_t drainer;
	int stats_fd, r;
	size_t i;

	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	skel = stack_copy_bpf__open_and_load();
	if (stats_fd < 0 || !skel) {
		fprintf(stderr, "stack_copy: cannot load the BPF object (root?)\n");
		return 1;
	}
	ref_link = bpf_program__attach(skel->progs.empty_switch);
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), drained, NULL, NULL);
	if (!ref_link || !rb || pthread_create(&drainer, NULL, drain, rb)) {
		fprintf(stderr, "stack_copy: cannot attach\n");
		return 1;
	}
	for (r = 0; r < rounds; r++)
		for (i = 0; i < NR_VARIANTS; i++) {
			struct bpf_program *prog =
			    bpf_object__find_program_by_name(skel->obj, variants[i]);

			if (!prog || measure(skel, prog, loops, &sums[i])) {
				fprintf(stderr, "stack_copy: %s failed\n", variants[i]);
				return 1;
			}
		}
	stop_draining = 1;
	pthread_join(drainer, NULL);

	printf("perf bench sched pipe -l %d, %d rounds; rseq_update runs system wide, "
	       "only its sched-pipe threads copy\n\n",
	       loops, rounds);
	printf("| rseq_update program | ns/run | x empty switch | ns/run above empty rseq "
	       "| copies | bytes/copy | copy failures | ring buffer drops |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
	for (i = 0; i < NR_VARIANTS; i++) {
		const struct sums *s = &sums[i];
		double ns = s->runs ? s->ns / s->runs : 0, ref = s->ref_ns / s->ref_runs;
		double empty = sums[0].runs ? sums[0].ns / sums[0].runs : 0;

		printf("| %s | %.0f | %.1f | %+.0f | %.0f | %.0f | %.0f | %.0f |\n", variants[i],
		       ns, ns / ref, ns - empty, s->copies, s->copies ? s->bytes / s->copies : 0,
		       s->failures, s->drops);
	}
	printf("\nempty sched_switch program: %.0f ns/run over the same runs\n",
	       sums[0].ref_ns / sums[0].ref_runs);
	ring_buffer__free(rb);
	bpf_link__destroy(ref_link);
	stack_copy_bpf__destroy(skel);
	close(stats_fd);
	return 0;
}
