// SPDX-License-Identifier: GPL-2.0
/*
 * What the running kernel offers offcpu: its BTF's tracepoints and
 * fields, and its release for what only the verifier can tell. Read for
 * the load (tracer.c) and listed by offcpu --version -v, so a user whose
 * kernel lacks something sees what and what it costs before asking.
 */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lib/log.h"
#include "trace/kernel_features.h"

int kernel_features__tracepoint_args(const struct btf *vmlinux, const char *name)
{
	char typedef_name[128];
	const struct btf_type *t;
	int id;

	snprintf(typedef_name, sizeof(typedef_name), "btf_trace_%s", name);
	id = btf__find_by_name_kind(vmlinux, typedef_name, BTF_KIND_TYPEDEF);
	if (id < 0)
		return -ENOENT;
	t = btf__type_by_id(vmlinux, id);
	while (t && (btf_is_typedef(t) || btf_is_ptr(t)))
		t = btf__type_by_id(vmlinux, t->type);
	if (!t || !btf_is_func_proto(t))
		return -ENOENT;
	/* The first argument is the tracepoint's private data pointer. */
	return btf_vlen(t) - 1;
}

struct btf *kernel_features__load_btf(const char *path)
{
	struct btf *btf = btf__parse(path, NULL);
	char text[128];
	int err;

	if (btf)
		return btf;
	err = -errno;
	if (err == -ENOENT)
		log__error("this kernel has no BTF (%s: %s); offcpu needs CONFIG_DEBUG_INFO_BTF",
			   path, strerror(-err));
	else if (err == -EACCES || err == -EPERM)
		log__error("cannot read the kernel's BTF (%s: %s)", path, strerror(-err));
	else
	{
		/* libbpf's own codes (-4000 and below) are not errno values. */
		libbpf_strerror(err, text, sizeof(text));
		log__error("the kernel's BTF (%s) is not valid BTF: %s", path, text);
	}
	return NULL;
}

/* Whether struct name has a member called member, at its top level. */
static bool has_member(const struct btf *vmlinux, const char *name, const char *member)
{
	int id = btf__find_by_name_kind(vmlinux, name, BTF_KIND_STRUCT);
	const struct btf_member *m;
	const struct btf_type *t;
	int i;

	if (id < 0)
		return false;
	t = btf__type_by_id(vmlinux, id);
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++) {
		if (!strcmp(btf__name_by_offset(vmlinux, m->name_off), member))
			return true;
	}
	return false;
}

/*
 * The verifier trusts a global function's task_struct argument from
 * 6.8 (KF_ARG / arg:trusted tags): only a load can tell, and offcpu's
 * does, falling back on its own; the list goes by the release.
 */
static bool release_at_least(const char *release, int major, int minor)
{
	int a = 0, b = 0;

	if (sscanf(release, "%d.%d", &a, &b) != 2)
		return false;
	return a > major || (a == major && b >= minor);
}

static const struct {
	const char *what;
	const char *without;
} features[KERNEL_FEATURE_COUNT] = {
	[KERNEL_FEATURE_RSEQ_UPDATE] = {
		"tracepoint rseq_update",
		"user stacks are read at every switch-out, before the wait's duration is known, "
		"not only for the waits kept",
	},
	[KERNEL_FEATURE_LOCAL_TIMER] = {
		"tracepoints local_timer_entry, local_timer_exit (x86)",
		"a wakeup by a timer expiring in the local timer's interrupt names the task it "
		"interrupted, not hardirq",
	},
	[KERNEL_FEATURE_SCHED_INFO] = {
		"task_struct::sched_info, cfs_rq::rq (CONFIG_SCHED_INFO, CONFIG_FAIR_GROUP_SCHED)",
		"waits have no run-queue time (runq_ns)",
	},
	[KERNEL_FEATURE_LOCK_CONTENTION] = {
		"tracepoints contention_begin, contention_end (5.19)",
		"a wait on a kernel lock names its system call's object at most, not the lock",
	},
};

bool kernel_features__has(const struct btf *vmlinux, enum kernel_feature feature)
{
	switch (feature) {
	case KERNEL_FEATURE_RSEQ_UPDATE:
		return kernel_features__tracepoint_args(vmlinux, "rseq_update") >= 0;
	case KERNEL_FEATURE_LOCAL_TIMER:
		return kernel_features__tracepoint_args(vmlinux, "local_timer_entry") >= 0 &&
		       kernel_features__tracepoint_args(vmlinux, "local_timer_exit") >= 0;
	case KERNEL_FEATURE_SCHED_INFO:
		return has_member(vmlinux, "task_struct", "sched_info") &&
		       has_member(vmlinux, "cfs_rq", "rq");
	case KERNEL_FEATURE_LOCK_CONTENTION:
		return kernel_features__tracepoint_args(vmlinux, "contention_begin") >= 0 &&
		       kernel_features__tracepoint_args(vmlinux, "contention_end") >= 0;
	default:
		return false;
	}
}

bool kernel_features__preempt_rt(void)
{
	struct utsname u;

	return uname(&u) == 0 && strstr(u.version, " PREEMPT_RT ") != NULL;
}

void kernel_features__say_missing(enum kernel_feature feature)
{
	log__warn("this kernel lacks the %s: %s", features[feature].what, features[feature].without);
}

/* The tracepoints whose programs are left out when the kernel has none. */
static const char *const optional_tracepoints[] = {
	"rseq_update",	    "local_timer_entry", "local_timer_exit",
	"contention_begin", "contention_end",
};

bool kernel_features__optional_tracepoint(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(optional_tracepoints) / sizeof(optional_tracepoints[0]); i++) {
		if (!strcmp(name, optional_tracepoints[i]))
			return true;
	}
	return false;
}

struct listing {
	FILE *out;
	const struct btf *vmlinux;
	int missing;
};

static void list_required(const char *name, void *ctx)
{
	struct listing *l = ctx;
	bool found = kernel_features__tracepoint_args(l->vmlinux, name) >= 0;

	if (kernel_features__optional_tracepoint(name))
		return;
	if (!found)
		l->missing++;
	fprintf(l->out, "  %-3s  tracepoint %s\n", found ? "yes" : "no", name);
}

/* A map type's probe: creating one, which needs CAP_BPF (else "?"). */
static void list_map(struct listing *l, enum bpf_map_type type, const char *what)
{
	/* Unprivileged, a refusal looks like a type the kernel lacks. */
	int found = geteuid() ? -EPERM : libbpf_probe_bpf_map_type(type, NULL);

	if (found == 0)
		l->missing++;
	fprintf(l->out, "  %-3s  %s%s\n", found > 0 ? "yes" : found == 0 ? "no" : "?", what,
		found < 0 ? " (not probed: needs root)" : "");
}

static void list_optional(FILE *out, bool found, const char *what, const char *without)
{
	fprintf(out, "  %-3s  %s\n       without: %s\n", found ? "yes" : "no", what, without);
}

int kernel_features__print(FILE *out, const char *btf_path, kernel_features_each_fn each_tracepoint)
{
	const char *path = btf_path ? btf_path : KERNEL_BTF_PATH;
	struct listing l = { .out = out };
	struct utsname u;
	int i;
	struct btf *vmlinux;
	int err;

	if (uname(&u)) {
		err = -errno;
		log__error("cannot read the kernel's release: %s", strerror(-err));
		return err;
	}
	fprintf(out, "kernel %s %s\n", u.release, u.version);
	vmlinux = kernel_features__load_btf(path);
	if (!vmlinux)
		return -ENOENT;
	l.vmlinux = vmlinux;
	fprintf(out, "BTF %s\nrequired:\n", path);
	err = each_tracepoint(list_required, &l);
	if (err) {
		btf__free(vmlinux);
		return err;
	}
	list_map(&l, BPF_MAP_TYPE_TASK_STORAGE, "task local storage (5.11)");
	list_map(&l, BPF_MAP_TYPE_RINGBUF, "ring buffer (5.8)");
	fputs("optional:\n", out);
	for (i = 0; i < KERNEL_FEATURE_COUNT; i++)
		list_optional(out, kernel_features__has(vmlinux, i), features[i].what,
			      features[i].without);
	list_optional(out, release_at_least(u.release, 6, 8),
		      "trusted task arguments of global functions (6.8)",
		      "waits open at the start or the stop come without Python frames and rule "
		      "packs' labels");
	fprintf(out, "preemption: %s\n",
		strstr(u.version, "PREEMPT_RT") ? "PREEMPT_RT (waits on spinlocks sleep: lock:rt-spin)"
		: strstr(u.version, "PREEMPT_DYNAMIC") ? "PREEMPT_DYNAMIC"
		: strstr(u.version, "PREEMPT") ? "PREEMPT"
						 : "none");
	btf__free(vmlinux);
	if (l.missing) {
		fprintf(out, "%d required feature%s missing: offcpu cannot trace here\n",
			l.missing, l.missing == 1 ? " is" : "s are");
		return -ENOENT;
	}
	return 0;
}
