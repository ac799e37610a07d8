// SPDX-License-Identifier: GPL-2.0
/*
 * The floor of each of offcpu's programs: an empty program on each
 * tracepoint offcpu attaches to, of the same attach type (bench/run
 * programs). Their sum over a workload is what the design's hooks cost
 * before any of them does anything.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sched_switch")
int BPF_PROG(empty_sched_switch)
{
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(empty_sched_waking)
{
	return 0;
}

SEC("tp_btf/rseq_update")
int BPF_PROG(empty_rseq_update)
{
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(empty_process_exit)
{
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(empty_process_exec)
{
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(empty_process_fork)
{
	return 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(empty_irq_entry)
{
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(empty_irq_exit)
{
	return 0;
}

SEC("tp_btf/local_timer_entry")
int BPF_PROG(empty_timer_entry)
{
	return 0;
}

SEC("tp_btf/local_timer_exit")
int BPF_PROG(empty_timer_exit)
{
	return 0;
}

SEC("tp_btf/softirq_raise")
int BPF_PROG(empty_softirq_raise)
{
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(empty_softirq_entry)
{
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(empty_softirq_exit)
{
	return 0;
}
