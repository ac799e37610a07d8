// SPDX-License-Identifier: GPL-2.0
/*
 * What copying the user stack at rseq_update costs, one way per program
 * (bench/stack_copy attaches one at a time): the current thread's user SP
 * from bpf_task_pt_regs, SIZE bytes from there into a per-CPU buffer with
 * bpf_probe_read_user, then into the ring buffer. Not offcpu's program:
 * the copy is taken at every rseq_update here, where offcpu would take it
 * only for waits that passed its filters.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

#define MAX_COPY 16384

struct copy_buf {
	__u64 sp;
	__u64 len;
	__u8 data[MAX_COPY + 4096]; /* slack: the verifier bounds a masked offset plus a page */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct copy_buf);
} bufs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 << 20);
} events SEC(".maps");

/* Outcomes, summed by the loader: copies made, copy failures, ring buffer full. */
__u64 copies, copy_failures, drops, bytes;
/* Only this command's threads copy (every program pays for the check alike). */
const volatile char target_comm[16] = "sched-pipe";

static __always_inline bool targeted(void)
{
	char comm[16];
	int i;

	bpf_get_current_comm(comm, sizeof(comm));
	for (i = 0; i < 16; i++) {
		if (comm[i] != target_comm[i])
			return false;
		if (!comm[i])
			return true;
	}
	return true;
}

static __always_inline __u64 user_sp(void)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());

	return PT_REGS_SP_CORE(regs);
}

static __always_inline struct copy_buf *buf_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&bufs, &zero);
}

/* Fixed size: SIZE bytes from the SP, then bpf_ringbuf_output of all of it. */
static __always_inline int copy_fixed(__u32 size)
{
	struct copy_buf *b = buf_get();

	if (!targeted() || !b)
		return 0;
	b->sp = user_sp();
	if (size > MAX_COPY)
		return 0;
	if (bpf_probe_read_user(b->data, size, (void *)b->sp)) {
		__sync_fetch_and_add(&copy_failures, 1);
		return 0;
	}
	b->len = size;
	if (bpf_ringbuf_output(&events, b, size + 16, BPF_RB_NO_WAKEUP))
		__sync_fetch_and_add(&drops, 1);
	else
		__sync_fetch_and_add(&bytes, size + 16);
	__sync_fetch_and_add(&copies, 1);
	return 0;
}

SEC("tp_btf/rseq_update")
int BPF_PROG(empty_rseq)
{
	return targeted();
}

SEC("tp_btf/rseq_update")
int BPF_PROG(read_8k_output)
{
	return copy_fixed(8192);
}

SEC("tp_btf/rseq_update")
int BPF_PROG(read_16k_output)
{
	return copy_fixed(16384);
}

struct vma_ctx {
	__u64 end;
};

static long vma_end(struct task_struct *task, struct vm_area_struct *vma, struct vma_ctx *ctx)
{
	ctx->end = BPF_CORE_READ(vma, vm_end);
	return 0;
}

/* Clamped to the stack's mapping (bpf_find_vma), output with its own length. */
static __always_inline int copy_clamped(__u32 size)
{
	struct vma_ctx ctx = {};
	struct copy_buf *b = buf_get();
	__u64 len;

	if (!targeted() || !b)
		return 0;
	b->sp = user_sp();
	if (bpf_find_vma(bpf_get_current_task_btf(), b->sp, vma_end, &ctx, 0) || ctx.end <= b->sp) {
		__sync_fetch_and_add(&copy_failures, 1);
		return 0;
	}
	len = ctx.end - b->sp;
	if (len > size)
		len = size;
	if (len > MAX_COPY || len == 0)
		return 0;
	if (bpf_probe_read_user(b->data, len, (void *)b->sp)) {
		__sync_fetch_and_add(&copy_failures, 1);
		return 0;
	}
	b->len = len;
	len += 16;
	if (len > sizeof(*b))
		return 0;
	if (bpf_ringbuf_output(&events, b, len, BPF_RB_NO_WAKEUP))
		__sync_fetch_and_add(&drops, 1);
	else
		__sync_fetch_and_add(&bytes, len);
	__sync_fetch_and_add(&copies, 1);
	return 0;
}

SEC("tp_btf/rseq_update")
int BPF_PROG(vma_clamped_8k_output)
{
	return copy_clamped(8192);
}

SEC("tp_btf/rseq_update")
int BPF_PROG(vma_clamped_16k_output)
{
	return copy_clamped(16384);
}

/* No per-CPU buffer: a fixed 8 KiB record reserved, the stack read straight into it. */
SEC("tp_btf/rseq_update")
int BPF_PROG(reserve_8k_read_into)
{
	struct copy_buf *r;

	if (!targeted())
		return 0;
	r = bpf_ringbuf_reserve(&events, 16 + 8192, 0);
	if (!r) {
		__sync_fetch_and_add(&drops, 1);
		return 0;
	}
	r->sp = user_sp();
	r->len = 8192;
	if (bpf_probe_read_user(r->data, 8192, (void *)r->sp)) {
		__sync_fetch_and_add(&copy_failures, 1);
		bpf_ringbuf_discard(r, 0);
		return 0;
	}
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	__sync_fetch_and_add(&bytes, 16 + 8192);
	__sync_fetch_and_add(&copies, 1);
	return 0;
}

/* A record of the clamped length (dynptr), written from the per-CPU buffer. */
SEC("tp_btf/rseq_update")
int BPF_PROG(vma_clamped_8k_dynptr)
{
	struct vma_ctx vc = {};
	struct copy_buf *b = buf_get();
	struct bpf_dynptr ptr;
	__u64 len;

	if (!targeted() || !b)
		return 0;
	b->sp = user_sp();
	if (bpf_find_vma(bpf_get_current_task_btf(), b->sp, vma_end, &vc, 0) || vc.end <= b->sp) {
		__sync_fetch_and_add(&copy_failures, 1);
		return 0;
	}
	len = vc.end - b->sp;
	if (len > 8192)
		len = 8192;
	if (len == 0)
		return 0;
	if (bpf_probe_read_user(b->data, len, (void *)b->sp)) {
		__sync_fetch_and_add(&copy_failures, 1);
		return 0;
	}
	b->len = len;
	if (bpf_ringbuf_reserve_dynptr(&events, len + 16, 0, &ptr)) {
		bpf_ringbuf_discard_dynptr(&ptr, 0);
		__sync_fetch_and_add(&drops, 1);
		return 0;
	}
	bpf_dynptr_write(&ptr, 0, b, len + 16, 0);
	bpf_ringbuf_submit_dynptr(&ptr, BPF_RB_NO_WAKEUP);
	__sync_fetch_and_add(&bytes, len + 16);
	__sync_fetch_and_add(&copies, 1);
	return 0;
}

/*
 * Page by page, no bpf_find_vma: from the SP to its page's end, then whole
 * pages, up to 16 KiB, stopping at the first page that cannot be read (the
 * stack's end, or a page not present), output with the length copied.
 */
SEC("tp_btf/rseq_update")
int BPF_PROG(pages_16k_output)
{
	struct copy_buf *b = buf_get();
	__u64 len = 0, chunk;
	int i;

	if (!targeted() || !b)
		return 0;
	b->sp = user_sp();
	chunk = 4096 - (b->sp & 4095);
	for (i = 0; i < MAX_COPY / 4096 + 1; i++) {
		if (len + chunk > MAX_COPY)
			chunk = MAX_COPY - len;
		if (chunk == 0 || chunk > 4096)
			break;
		if (bpf_probe_read_user(b->data + (len & (MAX_COPY - 1)), chunk,
					(void *)(b->sp + len)))
			break;
		len += chunk;
		chunk = 4096;
	}
	if (!len) {
		__sync_fetch_and_add(&copy_failures, 1);
		return 0;
	}
	b->len = len;
	len += 16;
	if (len > sizeof(*b))
		return 0;
	if (bpf_ringbuf_output(&events, b, len, BPF_RB_NO_WAKEUP))
		__sync_fetch_and_add(&drops, 1);
	else
		__sync_fetch_and_add(&bytes, len);
	__sync_fetch_and_add(&copies, 1);
	return 0;
}

/* The reference: an empty program on the switch, over the same run. */
SEC("tp_btf/sched_switch")
int BPF_PROG(empty_switch)
{
	return 0;
}
