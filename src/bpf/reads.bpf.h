/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A rule pack's `read` lines: values read in a waiting process's own
 * memory into its wait's record (PostgreSQL's wait event), at rseq_update
 * and by the open-wait iterator. Apart because only the processes a pack
 * matched pay for it.
 */
#ifndef OFFCPU_READS_BPF_H
#define OFFCPU_READS_BPF_H

/*
 * The processes a rule pack's `read` lines matched, each with
 * what to read (user space resolved the symbols in the process's own ELF
 * file and load base). Looked up only for a wait about to be sent from
 * rseq_update, in the blocked thread's own context: PostgreSQL clears its
 * wait event only after returning to user space, so it still holds the
 * event it blocked under. Other processes pay nothing more per switch.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* tracer.c sizes it: 65,536 with a pack's reads */
	__type(key, __u32);
	__type(value, struct offcpu_reads);
} reads_by_pid SEC(".maps");

/*
 * A C string at addr in task's memory, as bpf_probe_read_user_str() reads
 * the current thread's (there is no such helper for another task): its
 * OFFCPU_READ_STR_LEN bytes, or, when they run into a page that cannot be
 * read, those up to the end of addr's page. Whether it holds a character.
 */
static __always_inline bool read_task_str(char *dst, __u64 addr, struct task_struct *task)
{
	__u32 first;

	if (bpf_copy_from_user_task(dst, OFFCPU_READ_STR_LEN, (void *)addr, task, 0)) {
		first = COPY_PAGE - (addr & (COPY_PAGE - 1));
		if (first >= OFFCPU_READ_STR_LEN ||
		    bpf_copy_from_user_task(dst, first, (void *)addr, task, 0))
			return false;
		dst[first] = '\0';
	}
	dst[OFFCPU_READ_STR_LEN - 1] = '\0';
	return dst[0] != '\0';
}

/* In task's memory (read_user()); NULL: the current thread's. */
static __always_inline void read_one(struct offcpu_wait_record *r, const struct offcpu_reads *spec,
				     int i, struct task_struct *task)
{
	__u64 addr = spec->addr[i], value = 0;
	__u32 width = spec->width[i];
	bool read;
	long err;

	if (!width || width > 8)
		return;
	if (spec->deref[i] && (read_user(&addr, sizeof(addr), addr, task) || !addr))
		return;
	if (spec->string[i]) {
		/* Only with --read-data: the first bytes of a C string (a statement). */
		if (task)
			read = read_task_str(r->read_str, addr, task);
		else
			read = bpf_probe_read_user_str(r->read_str, sizeof(r->read_str),
						       (void *)addr) > 1;
		if (read)
			r->read_mask |= 1u << i;
		return;
	}
	/* Little-endian: the low bytes of value are the width-byte integer. */
	switch (width) {
	case 1:
		err = read_user(&value, 1, addr, task);
		break;
	case 2:
		err = read_user(&value, 2, addr, task);
		break;
	case 4:
		err = read_user(&value, 4, addr, task);
		break;
	default:
		err = read_user(&value, 8, addr, task);
		break;
	}
	if (err)
		return;
	r->read_values[i] = value;
	r->read_mask |= 1u << i;
}

/*
 * Process tgid's declared values, into the wait's record, read in task's
 * memory (NULL: the current thread's, which is tgid's).
 */
static __always_inline void take_reads_of(struct offcpu_wait_record *r, __u32 tgid,
					  struct task_struct *task)
{
	const struct offcpu_reads *spec = bpf_map_lookup_elem(&reads_by_pid, &tgid);
	int i;

	if (!spec)
		return;
	for (i = 0; i < OFFCPU_MAX_READS; i++)
		read_one(r, spec, i, task);
}

static __always_inline void take_reads(struct offcpu_wait_record *r)
{
	take_reads_of(r, bpf_get_current_pid_tgid() >> 32, NULL);
}

/*
 * The open-wait iterator's: t's process's values, read in t's memory. A
 * global function, verified apart: the iterator's own stack, with the
 * Python walk's beside it, would pass the verifier's 512 bytes.
 */
__noinline int take_open_reads(struct task_struct *t __arg_trusted, struct offcpu_wait_record *r)
{
	if (r)
		take_reads_of(r, t->tgid, t);
	return 0;
}

/* A fork without exec (a PostgreSQL backend) runs the same image: same addresses. */
static __always_inline void inherit_reads(__u32 parent_tgid, __u32 child_tgid)
{
	const struct offcpu_reads *spec = bpf_map_lookup_elem(&reads_by_pid, &parent_tgid);

	if (spec)
		bpf_map_update_elem(&reads_by_pid, &child_tgid, spec, BPF_ANY);
}

#endif
