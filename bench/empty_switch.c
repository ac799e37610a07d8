// SPDX-License-Identifier: GPL-2.0
/* Loads and attaches every program of a BPF object (bench/empty_*.bpf.o) until SIGINT or SIGTERM. */
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *prog;

	if (argc != 2) {
		fprintf(stderr, "usage: empty_switch OBJECT\n");
		return 2;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "empty_switch: cannot load %s\n", argv[1]);
		return 1;
	}
	bpf_object__for_each_program (prog, obj) {
		if (!bpf_program__attach(prog)) {
			fprintf(stderr, "empty_switch: cannot attach\n");
			return 1;
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	while (!stop)
		pause();
	bpf_object__close(obj);
	return 0;
}
