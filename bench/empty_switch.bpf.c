// SPDX-License-Identifier: GPL-2.0
/* The floor: an empty program on the same hook offcpu uses. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sched_switch")
int BPF_PROG(empty_sched_switch)
{
	return 0;
}
