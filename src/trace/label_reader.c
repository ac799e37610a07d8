// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "classify/reads.h"
#include "lib/hash_table.h"
#include "lib/log.h"
#include "lib/u32_key.h"
#include "proc/proc_creds.h"
#include "proc/procmaps.h"
#include "symbols/datasyms.h"
#include "trace/label_reader.h"

struct matched {
	uint32_t pid;
	const struct read_group *group;
	unsigned int version;
	struct offcpu_reads reads; /* as given to BPF: a fork has the same */
};

/* A binary looked up once, by device and inode, for every process running it. */
struct binary {
	dev_t dev;
	ino_t ino;
	struct timespec mtime; /* a file rewritten in place is read again */
	const struct read_group *group;
	int err; /* datasyms__lookup's */
	struct datasyms syms;
};

#define MAX_BINARIES 16

struct label_reader {
	const struct rule_set *rules;
	struct hash_table *procs; /* pid -> matched */
	struct binary binaries[MAX_BINARIES];
	size_t nr_binaries;
	label_reader_sink_fn sink;
	void *sink_ctx;
	bool read_data; /* --read-data: the reads marked data too */
};

int label_reader__new(const struct rule_set *rules, struct label_reader **out)
{
	struct label_reader *lr = calloc(1, sizeof(*lr));

	if (!lr)
		return -ENOMEM;
	lr->rules = rules;
	lr->procs = hash_table__new(u32_key__hash, u32_key__equal);
	if (!lr->procs) {
		free(lr);
		return -ENOMEM;
	}
	if (reads__use_pg_events(rules))
		log__info("PostgreSQL's wait event names: %s",
			  rules->pg_events_path ?: "offcpu's built-in tables");
	*out = lr;
	return 0;
}

void label_reader__free(struct label_reader *lr)
{
	if (!lr)
		return;
	hash_table__free_values(lr->procs, free);
	free(lr);
}

static int read_comm(uint32_t pid, char *comm, size_t size)
{
	char path[64];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	ok = fgets(comm, (int)size, f) != NULL;
	fclose(f);
	if (!ok)
		return -EIO;
	comm[strcspn(comm, "\n")] = '\0';
	return 0;
}

static const struct read_group *group_of(const struct label_reader *lr, const char *comm)
{
	size_t i;

	for (i = 0; i < lr->rules->nr_groups; i++) {
		if (!strcmp(lr->rules->groups[i].comm, comm))
			return &lr->rules->groups[i];
	}
	return NULL;
}

/* The load base of the file st maps in pid: where its offset 0 would be. */
static int load_base(uint32_t pid, const struct stat *st, const struct datasyms *d, uint64_t *base)
{
	struct proc_maps maps = { 0 };
	size_t i;
	int err = procmaps__read_pid((int)pid, &maps);

	if (err)
		return err;
	err = -ENOENT;
	for (i = 0; i < maps.nr; i++) {
		const struct proc_map *m = &maps.maps[i];
		uint64_t vaddr;

		if (m->inode != st->st_ino || m->dev_major != major(st->st_dev) ||
		    m->dev_minor != minor(st->st_dev))
			continue;
		if (!datasyms__offset_to_vaddr(d, m->file_offset, &vaddr))
			continue;
		*base = m->start - vaddr;
		err = 0;
		break;
	}
	procmaps__free(&maps);
	return err;
}

/* The binary's symbols, read once per binary (a cluster runs one for dozens of processes). */
static const struct binary *binary_of(struct label_reader *lr, int fd, const struct stat *st,
				      const struct read_group *g)
{
	const char *names[RULES_MAX_READS];
	struct binary *b;
	size_t i;

	for (i = 0; i < lr->nr_binaries; i++) {
		b = &lr->binaries[i];
		if (b->dev == st->st_dev && b->ino == st->st_ino && b->group == g &&
		    b->mtime.tv_sec == st->st_mtim.tv_sec &&
		    b->mtime.tv_nsec == st->st_mtim.tv_nsec)
			return b;
	}
	/* Past the cache's room the oldest goes: binaries replaced under a running cluster. */
	if (lr->nr_binaries == MAX_BINARIES) {
		memmove(&lr->binaries[0], &lr->binaries[1],
			(MAX_BINARIES - 1) * sizeof(lr->binaries[0]));
		lr->nr_binaries--;
	}
	b = &lr->binaries[lr->nr_binaries++];
	b->dev = st->st_dev;
	b->ino = st->st_ino;
	b->mtime = st->st_mtim;
	b->group = g;
	for (i = 0; i < g->nr_reads; i++)
		names[i] = g->reads[i].symbol;
	b->err = datasyms__lookup(fd, names, g->nr_reads, g->version_prefix, &b->syms);
	return b;
}

/* The group's reads in pid's addresses; -ENOENT when its binary lacks a symbol. */
static int resolve(struct label_reader *lr, uint32_t pid, const struct read_group *g,
		   struct offcpu_reads *reads, unsigned int *version)
{
	const struct datasyms *d;
	const struct binary *b;
	char path[64];
	struct stat st;
	uint64_t base;
	size_t i;
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	/*
	 * The symbols give the addresses read: not those of a program the
	 * process may only run (mode 0711), which the kernel execs for it.
	 */
	err = proc_creds__check_fd(pid, fd);
	if (err || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return err ? err : -ENOENT;
	}
	b = binary_of(lr, fd, &st, g);
	close(fd);
	if (b->err)
		return b->err;
	d = &b->syms;
	for (i = 0; i < g->nr_reads; i++) {
		if (!d->found[i])
			return -ENOENT;
	}
	err = load_base(pid, &st, d, &base);
	if (err)
		return err;
	memset(reads, 0, sizeof(*reads));
	for (i = 0; i < g->nr_reads; i++) {
		/* A read of users' data not asked for is not given to BPF at all. */
		if (g->reads[i].data && !lr->read_data)
			continue;
		reads->addr[i] = base + d->vaddr[i];
		reads->width[i] = (__u8)g->reads[i].width;
		reads->deref[i] = g->reads[i].deref;
		reads->string[i] = g->reads[i].string;
	}
	*version = d->version;
	return 0;
}

static void forget(struct label_reader *lr, uint32_t pid)
{
	free(hash_table__remove(lr->procs, &pid));
}

void label_reader__match(struct label_reader *lr, uint32_t pid)
{
	const struct read_group *g;
	struct offcpu_reads reads;
	struct matched *m;
	char comm[32];
	unsigned int version = 0;
	int err;

	/* Matched already (the scan before attaching): the same image, the same reads. */
	if (hash_table__find(lr->procs, &pid))
		return;
	if (!lr->sink || read_comm(pid, comm, sizeof(comm)))
		return;
	g = group_of(lr, comm);
	if (!g || !g->nr_reads)
		return;
	err = resolve(lr, pid, g, &reads, &version);
	if (err == -EACCES)
		log__info("process %u (%s): its program is not one it may read: no labels", pid,
			  comm);
	if (err)
		return;
	m = malloc(sizeof(*m));
	if (!m)
		return;
	m->pid = pid;
	m->group = g;
	m->version = version;
	m->reads = reads;
	if (hash_table__insert(lr->procs, &m->pid, m)) {
		free(m);
		return;
	}
	if (lr->sink(lr->sink_ctx, pid, &reads)) {
		log__info("cannot give BPF the reads of process %u", pid);
		forget(lr, pid);
		return;
	}
	log__info("process %u (%s): labels read at block time (version %u)", pid, comm, version);
}

void label_reader__read_data(struct label_reader *lr, bool on)
{
	lr->read_data = on;
}

void label_reader__attach(struct label_reader *lr, label_reader_sink_fn fn, void *ctx)
{
	struct dirent *e;
	DIR *dir;

	lr->sink = fn;
	lr->sink_ctx = ctx;
	if (!lr->rules->nr_groups)
		return;
	dir = opendir("/proc");
	if (!dir)
		return;
	while ((e = readdir(dir))) {
		char *end;
		unsigned long pid = strtoul(e->d_name, &end, 10);

		if (*end || !pid || pid > UINT32_MAX)
			continue;
		label_reader__match(lr, (uint32_t)pid);
	}
	closedir(dir);
}

void label_reader__exec(struct label_reader *lr, uint32_t pid)
{
	/* A new image: BPF dropped its reads at the exec. */
	forget(lr, pid);
	if (lr->rules->nr_groups)
		label_reader__match(lr, pid);
}

void label_reader__fork(struct label_reader *lr, uint32_t parent, uint32_t child)
{
	const struct matched *p = hash_table__find(lr->procs, &parent);
	struct matched *m;

	if (!p)
		return;
	forget(lr, child);
	m = malloc(sizeof(*m));
	if (!m)
		return;
	*m = *p;
	m->pid = child;
	if (hash_table__insert(lr->procs, &m->pid, m)) {
		free(m);
		return;
	}
	/*
	 * BPF copied the parent's reads at the fork, if it had them then; a
	 * parent matched after (between attaching and the scan) had none.
	 */
	if (lr->sink && lr->sink(lr->sink_ctx, child, &m->reads))
		forget(lr, child);
}

void label_reader__exit(struct label_reader *lr, uint32_t pid)
{
	forget(lr, pid);
}

void label_reader__labels(const struct label_reader *lr, uint32_t pid, uint32_t mask,
			  const __u64 *values, const char *text, struct label_values *out)
{
	const struct matched *m;
	size_t i;

	out->nr = 0;
	if (!mask || !lr)
		return;
	m = hash_table__find(lr->procs, &pid);
	if (!m)
		return;
	for (i = 0; i < m->group->nr_reads && i < OFFCPU_MAX_READS; i++) {
		const struct label_read *r = &m->group->reads[i];

		if (!(mask & (1u << i)))
			continue;
		if (r->string) {
			/* At most OFFCPU_READ_STR_LEN bytes, terminated or not. */
			snprintf(out->bufs[out->nr], sizeof(out->bufs[out->nr]), "%.*s",
				 OFFCPU_READ_STR_LEN - 1, text);
		} else if (!reads__decode(r->decoder, lr->rules->pg_events, m->version, values[i],
					  out->bufs[out->nr], sizeof(out->bufs[out->nr])))
			continue;
		out->items[out->nr].name = r->label;
		out->items[out->nr].value = out->bufs[out->nr];
		out->nr++;
	}
}
