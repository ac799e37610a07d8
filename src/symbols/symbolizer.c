// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/hash_table.h"
#include "lib/log.h"
#include "lib/u32_key.h"
#include "proc/proc_root.h"
#include "proc/proc_stat.h"
#include "proc/procmaps.h"
#include "profile/recording_schema.h"
#include "symbols/debuginfo.h"
#include "symbols/demangle.h"
#include "symbols/elfsyms.h"
#include "symbols/limits.h"
#include "symbols/perfmap.h"
#include "symbols/symbolizer.h"

struct code_line;

/* Code lines in a list of their own: a file's, or those of files freed. */
struct line_list {
	struct code_line *first;
	struct code_line *last;
};

/* A mapped file, shared by every process that maps it. */
struct dso {
	uint64_t dev;
	uint64_t inode;
	struct elfsyms *syms;	 /* NULL: no symbols could be read */
	const char *build_id;	 /* interned; NULL: none */
	struct debuginfo *debug; /* NULL: no DWARF */
	/* Freed once no process maps it (symbolizer__free_unmapped). */
	unsigned long mappings; /* processes' mappings of it */
	uint64_t bytes;		/* what reading it cost (limits.h), for symbolizer__stats */
	struct line_list lines; /* the code lines noted from it */
};

/*
 * How often a process may have its maps or perf map read again: a few
 * reads at once, then one per period (the generic cell rate algorithm),
 * the period the longer of the interval and REREAD_COST_FACTOR times what
 * the last read took. A stack that misses them is what asks for a read,
 * and a process whose stacks always miss (a return address in no mapping,
 * in code its perf map does not name) would have them read at every wait:
 * 20,000 mappings, or a 6 MB perf map, in every 2 ms.
 */
#define REREAD_BURST 4
#define REREAD_COST_FACTOR 20

struct rereads {
	uint64_t due_ns;  /* when the next one is due; up to REREAD_BURST - 1 periods early */
	uint64_t cost_ns; /* of the last read */
};

/*
 * A process that exec'd is snapshot at once (the binary, ld.so, the vdso),
 * but the dynamic loader maps its libraries a millisecond later, and a
 * short-lived process may be gone by the time a stack misses them (seen: a
 * 100 ms command lost its libc frames in 1 of 3 runs). Until its snapshot
 * holds more files than those two, its maps are read again every
 * YOUNG_REREAD_NS, for YOUNG_MAX_NS at most (a binary without libraries),
 * by symbolizer__tick. At most YOUNG_MAX processes at once (an exec storm):
 * the others wait for a stack to miss, as before.
 */
#define YOUNG_MAX 64
#define YOUNG_REREAD_NS (1000 * 1000ULL)
#define YOUNG_MAX_NS (100 * 1000 * 1000ULL)
#define YOUNG_LOADER_FILES 2

struct young {
	uint32_t pid;
	uint64_t exec_ns;
};

struct process {
	uint32_t pid;
	uint32_t parent_pid; /* from a fork record; 0 once it execs */
	struct proc_maps maps;
	struct dso **dsos; /* one per mapping */
	uint64_t read_at_ns;
	bool loaded;		     /* its maps were read, or tried */
	bool gone;		     /* they could not be read */
	bool counted;		     /* in processes_gone */
	struct perfmap perfmap;	     /* JIT symbols for its anonymous code */
	uint64_t perfmap_read_at_ns; /* 0: not read yet */
	const char *perfmap_module;
	struct rereads maps_rereads;
	struct rereads perfmap_rereads;
	uint64_t spent_bytes; /* reading the files it brought (limits.h) */
	/* See max_total_spend_bytes and retry_unpaid(). */
	uint64_t perfmap_bytes; /* what its perf map holds */
	bool unpaid_for_total;	/* a file of it was skipped for want of the total's room */
	uint64_t unpaid_room;	/* the room left then */
	struct rereads unpaid_rereads;
};

/*
 * A user frame's code as the frame itself names it. Equal keys are the
 * same code: the same file (path and build ID), offset and symbol.
 */
struct code_key {
	const char *module; /* interned, all three */
	const char *build_id;
	const char *sym;
	uint64_t module_off;
};

/*
 * Where the source line of some code is looked up, and once it was, what
 * it is: kept here rather than in each frame, which stays pure data.
 */
struct code_line {
	struct code_key key;
	struct debuginfo *debug; /* its dso's; NULL once the dso is freed */
	uint64_t vaddr;		 /* of the call, for a return address */
	bool resolved;
	struct source_location where;
	/* In its dso's list, or, once the dso is freed, in dead_lines. */
	struct dso *dso; /* NULL: its dso was freed, the line resolved */
	uint64_t dead_ns;
	struct code_line *prev;
	struct code_line *next;
};

struct symbolizer {
	struct strpool *strings;
	struct inline_pool *inlines;
	struct ksyms *ksyms;
	struct hash_table *processes; /* pid -> struct process */
	struct hash_table *dsos;      /* dev+inode -> struct dso */
	struct hash_table *lines;     /* code_key -> code_line, for code with DWARF */
	struct dso vdso;
	bool vdso_loaded;
	/* Stands for a file a process could not pay for: not cached, another may. */
	struct dso unpaid;
	struct symbol_limits limits;
	uint64_t processes_gone;
	const char *kernel_module;
	struct young young[YOUNG_MAX];
	size_t nr_young;
	/* offcpu serve: see symbolizer__free_unmapped. */
	bool free_unmapped;
	uint64_t lines_needed_since_ns; /* UINT64_MAX: no frame named so far needs its line */
	struct line_list dead_lines;	/* of freed files, by dead_ns */
	/* What every file and perf map holds, for max_total_spend_bytes. */
	uint64_t file_bytes;
	uint64_t perfmap_bytes;
	bool total_warned; /* the one warning that it is full */
};

static uint64_t hash_dso_key(const void *key)
{
	return hash_table__hash_bytes(key, 2 * sizeof(uint64_t), 0);
}

static bool equal_dso_key(const void *a, const void *b)
{
	return memcmp(a, b, 2 * sizeof(uint64_t)) == 0;
}

static uint64_t hash_code_key(const void *key)
{
	return hash_table__hash_bytes(key, sizeof(struct code_key), 0);
}

static bool equal_code_key(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct code_key)) == 0;
}

int symbolizer__new(struct strpool *strings, struct inline_pool *inlines, struct ksyms *ksyms,
		    struct symbolizer **out)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	limits__defaults(&s->limits);
	s->strings = strings;
	s->inlines = inlines;
	s->ksyms = ksyms;
	s->lines_needed_since_ns = UINT64_MAX;
	s->processes = hash_table__new(u32_key__hash, u32_key__equal);
	s->dsos = hash_table__new(hash_dso_key, equal_dso_key);
	s->lines = hash_table__new(hash_code_key, equal_code_key);
	s->kernel_module = strpool__intern(strings, "[kernel.kallsyms]");
	if (!s->processes || !s->dsos || !s->lines || !s->kernel_module) {
		symbolizer__free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

void symbolizer__set_limits(struct symbolizer *s, const struct symbol_limits *limits)
{
	s->limits = *limits;
}

static void process_free(void *value)
{
	struct process *p = value;

	perfmap__free(&p->perfmap);
	procmaps__free(&p->maps);
	free(p->dsos);
	free(p);
}

static void dso_free(void *value)
{
	struct dso *dso = value;

	elfsyms__free(dso->syms);
	debuginfo__free(dso->debug);
	free(dso);
}

static void lines__append(struct line_list *list, struct code_line *line)
{
	line->prev = list->last;
	line->next = NULL;
	if (list->last)
		list->last->next = line;
	else
		list->first = line;
	list->last = line;
}

static void lines__unlink(struct line_list *list, struct code_line *line)
{
	if (line->prev)
		line->prev->next = line->next;
	else
		list->first = line->next;
	if (line->next)
		line->next->prev = line->prev;
	else
		list->last = line->prev;
	line->prev = line->next = NULL;
}

static void line_free(struct symbolizer *s, struct code_line *line)
{
	hash_table__remove(s->lines, &line->key);
	free(line);
}

/*
 * No process maps the file any more. Its symbols and DWARF go now: a file
 * mapped again later is read again (a few milliseconds, against memory
 * that followed every file ever mapped: 61 to 192 MiB in 150 s of
 * bench/soak-serve beside other sessions' builds, each rebuilt binary a
 * new file with its DWARF). Its code lines that a frame named so far may
 * still need (a window open since before now) are looked up first and
 * kept, resolved, until every window open now has closed
 * (symbolizer__lines_needed_since); the others go with it. Lines rather
 * than a reference from each window to each file: a window's frames are
 * found by key, so a line freed too early costs that line, never memory
 * safety, and the files of a window's frames, often still mapped, are
 * not held for its length.
 */
static void dso_unmapped(struct symbolizer *s, struct dso *dso)
{
	uint64_t now = clock__monotonic_ns();
	bool needed = s->lines_needed_since_ns <= now;
	struct code_line *line;

	hash_table__remove(s->dsos, &dso->dev);
	s->file_bytes -= dso->bytes;
	while ((line = dso->lines.first)) {
		lines__unlink(&dso->lines, line);
		if (!needed) {
			line_free(s, line);
			continue;
		}
		if (!line->resolved)
			debuginfo__lookup(line->debug, line->vaddr, s->strings, s->inlines,
					  &line->where);
		line->resolved = true;
		line->debug = NULL;
		line->dso = NULL;
		line->dead_ns = now;
		lines__append(&s->dead_lines, line);
	}
	dso_free(dso);
}

/* The file dsos of a process's mappings: counted while it maps them. */
static bool counted_dso(const struct symbolizer *s, const struct dso *dso)
{
	return dso && dso != &s->vdso && dso != &s->unpaid;
}

static void hold_dsos(struct symbolizer *s, struct dso **dsos, size_t nr)
{
	size_t i;

	for (i = 0; dsos && i < nr; i++)
		if (counted_dso(s, dsos[i]))
			dsos[i]->mappings++;
}

static void release_dsos(struct symbolizer *s, struct dso **dsos, size_t nr)
{
	size_t i;

	for (i = 0; dsos && i < nr; i++) {
		struct dso *dso = dsos[i];

		if (!counted_dso(s, dso) || --dso->mappings || !s->free_unmapped)
			continue;
		dso_unmapped(s, dso);
	}
}

/* The process leaves the symbolizer: its files may go with it. */
static void process_release(struct symbolizer *s, struct process *p)
{
	s->perfmap_bytes -= p->perfmap_bytes;
	release_dsos(s, p->dsos, p->maps.nr);
	process_free(p);
}

void symbolizer__free_unmapped(struct symbolizer *s)
{
	s->free_unmapped = true;
}

void symbolizer__lines_needed_since(struct symbolizer *s, uint64_t since_ns)
{
	struct code_line *line;

	s->lines_needed_since_ns = since_ns;
	while ((line = s->dead_lines.first) && line->dead_ns < since_ns) {
		lines__unlink(&s->dead_lines, line);
		line_free(s, line);
	}
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	hash_table__free_values(s->processes, process_free);
	hash_table__free_values(s->dsos, dso_free);
	hash_table__free_values(s->lines, free);
	elfsyms__free(s->vdso.syms);
	ksyms__free(s->ksyms);
	free(s);
}

void symbolizer__kernel(struct symbolizer *s, uint64_t addr, struct frame *f)
{
	/* Kernel stack entries are return addresses: the call is before them. */
	const struct ksym *ks = s->ksyms ? ksyms__find(s->ksyms, addr - 1) : NULL;
	char module[80];

	memset(f, 0, sizeof(*f));
	f->addr = addr;
	f->kernel = true;
	f->module = s->kernel_module;
	f->module_off = addr;
	if (!ks)
		return;
	f->sym = strpool__intern(s->strings, ks->name);
	f->off = addr - ks->addr;
	if (ks->module) {
		snprintf(module, sizeof(module), "[%s]", ks->module);
		f->module = strpool__intern(s->strings, module);
	}
}

/* The file's build ID, interned; NULL when it has none. */
static const char *interned_build_id(struct symbolizer *s, const struct elfsyms *es)
{
	return es && elfsyms__build_id(es)[0] ? strpool__intern(s->strings, elfsyms__build_id(es))
					      : NULL;
}

/* The vdso is the same image in every process: read our own. */
static struct dso *vdso_dso(struct symbolizer *s, const struct proc_map *map)
{
	const void *image = (const void *)getauxval(AT_SYSINFO_EHDR);

	if (!s->vdso_loaded) {
		struct read_budget budget = { s->limits.max_file_spend_bytes, false };
		struct elfsyms_opts opts = { .limits = &s->limits, .budget = &budget };

		s->vdso_loaded = true;
		if (image &&
		    elfsyms__open_memory(image, map->end - map->start, &opts, &s->vdso.syms))
			s->vdso.syms = NULL;
		s->vdso.build_id = interned_build_id(s, s->vdso.syms);
	}
	return &s->vdso;
}

/* Source lines from the file's own DWARF, else from its separate debug file. */
static void open_debuginfo(struct symbolizer *s, struct dso *dso, int fd,
			   struct read_budget *budget)
{
	int debug_fd = elfsyms__take_debug_fd(dso->syms);

	if (elfsyms__has_dwarf(dso->syms))
		debuginfo__open_fd(fd, &s->limits, budget, &dso->debug);
	else if (debug_fd >= 0)
		debuginfo__open_fd(debug_fd, &s->limits, budget, &dso->debug);
	if (debug_fd >= 0)
		close(debug_fd);
}

static const char *why_unread(int err)
{
	switch (err) {
	case -ENOEXEC:
		return "not an ELF file this machine runs";
	case -EFBIG:
		return "over a size limit";
	case -E2BIG:
		return "over its read budget";
	case -EINVAL:
		return "malformed";
	default:
		return strerror(-err);
	}
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* -errno when the file could not be opened, else 0 (read or not). */
static int read_dso(struct symbolizer *s, struct dso *dso, uint32_t pid,
		    const struct proc_map *map, struct read_budget *budget)
{
	/* Its debug link is looked up beside it, inside the process's root. */
	struct elfsyms_opts opts = { pid, map->path, &s->limits, budget, false };
	int fd = procmaps__open_file(pid, map, true), err = fd < 0 ? fd : 0;

	if (fd >= 0) {
		err = elfsyms__open_fd(fd, &opts, &dso->syms);
		if (err)
			dso->syms = NULL;
		else
			open_debuginfo(s, dso, fd, budget);
		close(fd);
	}
	if (!dso->syms)
		log__info("no symbols for %s (pid %u): %s", map->path, pid, why_unread(err));
	else if (elfsyms__skipped(dso->syms))
		log__info("%s (pid %u): %zu function symbols skipped, over a limit", map->path, pid,
			  elfsyms__skipped(dso->syms));
	return fd < 0 ? err : 0;
}

/* What the process may still spend on its files and perf map (max_process_spend_bytes). */
static uint64_t process_left(const struct symbolizer *s, const struct process *p)
{
	return s->limits.max_process_spend_bytes -
	       min_u64(p->spent_bytes, s->limits.max_process_spend_bytes);
}

/* What every process's files and perf maps may still take at once (max_total_spend_bytes). */
static uint64_t total_left(const struct symbolizer *s)
{
	uint64_t held = s->file_bytes + s->perfmap_bytes;

	return s->limits.max_total_spend_bytes - min_u64(held, s->limits.max_total_spend_bytes);
}

/*
 * A file (or perf map) not read because what every file
 * holds leaves too little room. Said once in a warning, not once per file
 * (a fork bomb of distinct files would bring thousands); -v names the
 * others.
 */
static void total_full(struct symbolizer *s, uint32_t pid, const char *path)
{
	if (s->total_warned) {
		log__info("%s (pid %u): not read, past the %" PRIu64 " bytes all files may cost",
			  path, pid, s->limits.max_total_spend_bytes);
		return;
	}
	s->total_warned = true;
	log__warn("%s (pid %u) not read: all processes' files already hold the %" PRIu64
		  " bytes they may together; its frames, and those of the files skipped after it "
		  "(-v names them), count in symbol_misses",
		  path, pid, s->limits.max_total_spend_bytes);
}

/* The process could not have a file read for want of the total's room: see retry_unpaid(). */
static struct dso *unpaid_for_total(struct symbolizer *s, struct process *p,
				    const struct proc_map *map, uint64_t room)
{
	p->unpaid_for_total = true;
	p->unpaid_room = room;
	total_full(s, p->pid, map->path);
	return &s->unpaid;
}

/*
 * A mapped file's symbols and DWARF, read once for every process that
 * maps it, and paid for by the first: within the per-file limit, what is
 * left of that process's, and what all files together may still hold. A
 * file cut short by its own limit is kept as read; one the process could
 * not pay for is not cached, so that a process which spent its share does
 * not leave a library unnamed for the others, and one the total had no
 * room for is not either, nor charged to the process: it is tried again
 * once there is room.
 */
static struct dso *file_dso(struct symbolizer *s, struct process *p, const struct proc_map *map)
{
	uint64_t key[2] = { ((uint64_t)map->dev_major << 32) | map->dev_minor, map->inode };
	struct dso *dso = hash_table__find(s->dsos, key);
	uint64_t own_left = process_left(s, p), all_left = total_left(s);
	uint64_t granted = min_u64(s->limits.max_file_spend_bytes, min_u64(own_left, all_left));
	struct read_budget budget = { granted, false };
	/* What bounds the read, where not the file's own limit: the smaller share. */
	bool process_bound = own_left < s->limits.max_file_spend_bytes && own_left <= all_left;
	bool total_bound = all_left < s->limits.max_file_spend_bytes && all_left < own_left;

	if (dso)
		return dso;
	if (total_bound && !all_left)
		return unpaid_for_total(s, p, map, all_left);
	if (process_bound && !own_left)
		return &s->unpaid;
	dso = calloc(1, sizeof(*dso));
	if (!dso)
		return NULL;
	dso->dev = key[0];
	dso->inode = key[1];
	/*
	 * A process gone before its stacks were read opens no file through
	 * /proc/PID: that says nothing of the file, which the next process
	 * mapping it must still get named ("no symbols for libc.so.6 (pid N):
	 * No such file or directory" left libc unnamed for the run).
	 */
	if (read_dso(s, dso, p->pid, map, &budget) && proc_stat__pid_exited(p->pid)) {
		dso_free(dso);
		return &s->unpaid;
	}
	if (budget.exhausted && total_bound) {
		dso_free(dso);
		return unpaid_for_total(s, p, map, all_left);
	}
	p->spent_bytes += granted - budget.left;
	dso->bytes = granted - budget.left;
	if (budget.exhausted && process_bound) {
		log__info("%s (pid %u): not read, past the %" PRIu64 " bytes its files may cost",
			  map->path, p->pid, s->limits.max_process_spend_bytes);
		dso_free(dso);
		return &s->unpaid;
	}
	if (budget.exhausted)
		log__info("%s (pid %u): read in part, past the %" PRIu64 " bytes a file may cost",
			  map->path, p->pid, s->limits.max_file_spend_bytes);
	dso->build_id = interned_build_id(s, dso->syms);
	if (hash_table__insert(s->dsos, &dso->dev, dso)) {
		dso_free(dso);
		return NULL;
	}
	s->file_bytes += dso->bytes;
	return dso;
}

static int read_process(struct symbolizer *s, struct process *p)
{
	struct proc_maps maps;
	struct dso **dsos;
	size_t i;
	int err;

	p->read_at_ns = clock__monotonic_ns();
	err = procmaps__read_pid((int)p->pid, &maps);
	/* What every read costs again; the files new to it are read once. */
	p->maps_rereads.cost_ns = clock__monotonic_ns() - p->read_at_ns;
	if (err)
		return err;
	/* A zombie's maps read fine and are empty: its memory is gone. */
	if (maps.nr == 0) {
		procmaps__free(&maps);
		return -ESRCH;
	}
	dsos = calloc(maps.nr ? maps.nr : 1, sizeof(*dsos));
	if (!dsos) {
		procmaps__free(&maps);
		return -ENOMEM;
	}
	for (i = 0; i < maps.nr; i++) {
		const struct proc_map *m = &maps.maps[i];

		if (!strcmp(m->path, "[vdso]"))
			dsos[i] = vdso_dso(s, m);
		else if (m->inode)
			dsos[i] = file_dso(s, p, m);
	}
	/* The new ones held before the old are let go: a file in both stays. */
	hold_dsos(s, dsos, maps.nr);
	release_dsos(s, p->dsos, p->maps.nr);
	procmaps__free(&p->maps);
	free(p->dsos);
	p->maps = maps;
	p->dsos = dsos;
	return 0;
}

/* Distinct files mapped executable: the binary and ld.so just after exec. */
static size_t mapped_files(const struct proc_maps *maps)
{
	size_t nr = 0, i;

	for (i = 0; i < maps->nr; i++) {
		const struct proc_map *m = &maps->maps[i], *prev = i ? m - 1 : NULL;

		if (m->inode &&
		    (!prev || prev->inode != m->inode || prev->dev_major != m->dev_major ||
		     prev->dev_minor != m->dev_minor))
			nr++;
	}
	return nr;
}

static void count_gone(struct symbolizer *s, struct process *p)
{
	if (!p->counted) {
		p->counted = true;
		s->processes_gone++;
	}
}

static struct process *find_or_add(struct symbolizer *s, uint32_t pid)
{
	return u32_key__find_or_add(s->processes, pid, sizeof(struct process),
				    offsetof(struct process, pid), NULL);
}

static struct process *get_process(struct symbolizer *s, uint32_t pid)
{
	struct process *p = find_or_add(s, pid);

	if (p && !p->loaded) {
		p->loaded = true;
		p->gone = read_process(s, p) != 0;
	}
	return p;
}

/*
 * The process whose mappings stand for pid's: its own, or, when it exited
 * before they were read and never exec'd, its parent's.
 */
static struct process *mappings_of(struct symbolizer *s, uint32_t pid)
{
	struct process *p = get_process(s, pid), *parent;

	if (!p || !p->gone)
		return p;
	if (p->parent_pid) {
		parent = get_process(s, p->parent_pid);
		if (parent && !parent->gone)
			return parent;
	}
	count_gone(s, p);
	return p;
}

static void add_young(struct symbolizer *s, uint32_t pid)
{
	size_t i;

	for (i = 0; i < s->nr_young && s->young[i].pid != pid; i++)
		;
	if (i == s->nr_young) {
		if (s->nr_young == YOUNG_MAX)
			return;
		s->nr_young++;
	}
	s->young[i] = (struct young){ pid, clock__monotonic_ns() };
}

void symbolizer__exec(struct symbolizer *s, uint32_t pid)
{
	struct process *p = find_or_add(s, pid);

	if (!p)
		return;
	/*
	 * Now, while it lives: the binary, ld.so and the vdso are mapped. The
	 * libraries ld.so maps next are read when a stack first misses them.
	 */
	release_dsos(s, p->dsos, p->maps.nr);
	procmaps__free(&p->maps);
	free(p->dsos);
	p->dsos = NULL;
	p->parent_pid = 0;
	p->loaded = true;
	p->gone = read_process(s, p) != 0;
	if (!p->gone && mapped_files(&p->maps) == YOUNG_LOADER_FILES)
		add_young(s, pid);
}

int symbolizer__poll_timeout_ms(const struct symbolizer *s, int timeout_ms)
{
	return s->nr_young && timeout_ms > (int)(YOUNG_REREAD_NS / 1000000)
		   ? (int)(YOUNG_REREAD_NS / 1000000)
		   : timeout_ms;
}

/* Whether pid is still young: not gone, its libraries not yet mapped, not too old. */
static bool still_young(struct symbolizer *s, const struct young *y, uint64_t now)
{
	struct process *p = hash_table__find(s->processes, &y->pid);

	if (!p || p->gone || now - y->exec_ns > YOUNG_MAX_NS)
		return false;
	if (now - p->read_at_ns < YOUNG_REREAD_NS)
		return true;
	/* Gone in between: the snapshot at exec stays, and a miss is counted. */
	if (read_process(s, p))
		return false;
	return mapped_files(&p->maps) <= YOUNG_LOADER_FILES;
}

void symbolizer__tick(struct symbolizer *s)
{
	uint64_t now = clock__monotonic_ns();
	size_t i = 0;

	while (i < s->nr_young) {
		if (still_young(s, &s->young[i], now))
			i++;
		else
			s->young[i] = s->young[--s->nr_young];
	}
}

void symbolizer__fork(struct symbolizer *s, uint32_t parent_pid, uint32_t child_pid)
{
	struct process *p = find_or_add(s, child_pid);

	if (p)
		p->parent_pid = parent_pid;
}

void symbolizer__exit(struct symbolizer *s, uint32_t pid)
{
	struct process *p = hash_table__remove(s->processes, &pid);

	if (p)
		process_release(s, p);
}

static void code_key_of(const struct frame *f, struct code_key *key)
{
	/* Hashed and compared whole: padding (32-bit ABIs) must be zero too. */
	memset(key, 0, sizeof(*key));
	key->module = f->module;
	key->build_id = f->build_id;
	key->sym = f->sym;
	key->module_off = f->module_off;
}

/*
 * The frame's code has DWARF at vaddr: noted for symbolizer__resolve_lines.
 * The first frame of some code decides where its line is looked up, as the
 * profile keeps the first of the frames it finds equal: a leaf and a return
 * address at the same offset are one frame there, and one line here.
 */
static void note_code_line(struct symbolizer *s, const struct frame *f, struct dso *dso,
			   uint64_t vaddr)
{
	struct code_key key;
	struct code_line *line;

	code_key_of(f, &key);
	line = hash_table__find(s->lines, &key);
	/* Its file was freed, and the same code is mapped again: it lives with this one. */
	if (line && !line->dso) {
		lines__unlink(&s->dead_lines, line);
		line->dso = dso;
		lines__append(&dso->lines, line);
	}
	if (line)
		return;
	line = calloc(1, sizeof(*line));
	if (!line)
		return;
	memcpy(&line->key, &key, sizeof(key));
	line->debug = dso->debug;
	line->vaddr = vaddr;
	line->dso = dso;
	if (hash_table__insert(s->lines, &line->key, line)) {
		free(line);
		return;
	}
	lines__append(&dso->lines, line);
}

void symbolizer__resolve_lines(struct symbolizer *s, struct frame *f)
{
	struct code_key key;
	struct code_line *line;

	if (f->kernel || !f->module)
		return;
	code_key_of(f, &key);
	line = hash_table__find(s->lines, &key);
	if (!line)
		return;
	if (!line->resolved) {
		debuginfo__lookup(line->debug, line->vaddr, s->strings, s->inlines, &line->where);
		line->resolved = true;
	}
	f->file = line->where.file;
	f->line = line->where.line;
	f->inlined = line->where.inlined;
}

uint64_t symbolizer__processes_gone(const struct symbolizer *s)
{
	return s->processes_gone;
}

void symbolizer__for_each_process(const struct symbolizer *s, void (*fn)(void *ctx, uint32_t pid),
				  void *ctx)
{
	struct hash_table_iter it = { 0 };
	const void *key;

	while (hash_table__next(s->processes, &it, &key, NULL))
		fn(ctx, *(const uint32_t *)key);
}

void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *out)
{
	const struct code_line *line;

	memset(out, 0, sizeof(*out));
	out->file_bytes = s->file_bytes;
	out->perfmap_bytes = s->perfmap_bytes;
	out->processes = hash_table__size(s->processes);
	out->files = hash_table__size(s->dsos);
	out->lines = hash_table__size(s->lines);
	for (line = s->dead_lines.first; line; line = line->next)
		out->dead_lines++;
}

/*
 * A line's key must stay marked while the line lives: s->lines compares
 * keys by address, and a key string freed and its address reused would
 * give this line to other code.
 */
void symbolizer__mark_strings(const struct symbolizer *s, struct strpool *strings)
{
	struct hash_table_iter it = { 0 };
	void *value;

	strpool__mark(strings, s->kernel_module);
	strpool__mark(strings, s->vdso.build_id);
	strpool__mark(strings, s->unpaid.build_id);
	while (hash_table__next(s->dsos, &it, NULL, &value))
		strpool__mark(strings, ((const struct dso *)value)->build_id);
	memset(&it, 0, sizeof(it));
	while (hash_table__next(s->processes, &it, NULL, &value))
		strpool__mark(strings, ((const struct process *)value)->perfmap_module);
	/* The dead lines too: they are in s->lines until freed. */
	memset(&it, 0, sizeof(it));
	while (hash_table__next(s->lines, &it, NULL, &value)) {
		const struct code_line *line = value;

		strpool__mark(strings, line->key.module);
		strpool__mark(strings, line->key.build_id);
		strpool__mark(strings, line->key.sym);
		strpool__mark(strings, line->where.file);
		inline_pool__mark(s->inlines, line->where.inlined, strings);
	}
}

bool symbolizer__maps_known(struct symbolizer *s, uint32_t pid)
{
	struct process *p = get_process(s, pid);

	return p && p->loaded && !p->gone && p->maps.nr;
}

/*
 * Code that no symbol names, in a function the unwind tables know: named
 * by module and function start ("postgres!0x4a3f20"), as
 * unnamed_function__name says.
 */
static void unnamed_function(struct symbolizer *s, struct frame *f, const struct elfsyms *es,
			     const char *path, uint64_t vaddr, uint64_t leaf_adjust)
{
	const struct elf_symbol *fn = elfsyms__find_function(es, vaddr);
	char name[160];

	if (!fn)
		return;
	unnamed_function__name(path, fn->start, name, sizeof(name));
	f->sym = strpool__intern(s->strings, name);
	f->off = vaddr - fn->start + leaf_adjust;
}

/* Whether the process may have its maps or perf map read again now. */
static bool may_reread(const struct symbolizer *s, struct rereads *r, uint64_t now)
{
	uint64_t period = s->limits.reread_interval_ns;

	if (r->cost_ns > period / REREAD_COST_FACTOR)
		period = r->cost_ns * REREAD_COST_FACTOR;
	if (r->due_ns > now + (REREAD_BURST - 1) * period)
		return false;
	r->due_ns = (r->due_ns > now ? r->due_ns : now) + period;
	return true;
}

/*
 * The files of a process skipped while all files held what
 * they may are read once there is more room (in offcpu serve, a file no
 * process maps any more gives its bytes back): tried again when a frame
 * falls in one of them, if more room is left than at the last try, as
 * often as may_reread allows, since each try reads as far as the room.
 */
static void retry_unpaid(struct symbolizer *s, struct process *p)
{
	size_t i;

	if (!p->unpaid_for_total || total_left(s) <= p->unpaid_room ||
	    !may_reread(s, &p->unpaid_rereads, clock__monotonic_ns()))
		return;
	p->unpaid_for_total = false;
	for (i = 0; i < p->maps.nr; i++) {
		struct dso *dso;

		if (p->dsos[i] != &s->unpaid)
			continue;
		dso = file_dso(s, p, &p->maps.maps[i]);
		if (!dso)
			continue;
		p->dsos[i] = dso;
		hold_dsos(s, &p->dsos[i], 1);
	}
}

/*
 * JIT code lives in anonymous memory, named in the process's perf map.
 * Read when first needed, and on (from where the last read stopped: a JIT
 * only appends) when a stack newer than the last read misses it, as often
 * as may_reread allows. Its symbols are paid for from the process's share.
 */
static const struct elf_symbol *jit_symbol(struct symbolizer *s, struct process *p, uint64_t addr,
					   uint64_t seen_ns)
{
	const struct elf_symbol *sym = perfmap__find(&p->perfmap, addr);
	uint64_t now = clock__monotonic_ns(), own_left, all_left, spent;
	struct read_budget budget;
	char module[64];
	int err;

	if (sym || p->perfmap_read_at_ns > seen_ns)
		return sym;
	if (p->perfmap_read_at_ns && !may_reread(s, &p->perfmap_rereads, now))
		return NULL;
	p->perfmap_read_at_ns = now;
	if (!p->perfmap_module) {
		snprintf(module, sizeof(module), "/tmp/perf-%u.map", p->pid);
		p->perfmap_module = strpool__intern(s->strings, module);
	}
	own_left = process_left(s, p);
	all_left = total_left(s);
	budget = (struct read_budget){ min_u64(own_left, all_left), false };
	err = perfmap__update((int)p->pid, &p->perfmap, &budget);
	spent = min_u64(own_left, all_left) - budget.left;
	p->spent_bytes += spent;
	p->perfmap_bytes += spent;
	s->perfmap_bytes += spent;
	if (err == -ENOMEM) {
		perfmap__free(&p->perfmap);
		s->perfmap_bytes -= p->perfmap_bytes;
		p->perfmap_bytes = 0;
	}
	if (budget.exhausted && all_left < own_left)
		total_full(s, p->pid, p->perfmap_module);
	p->perfmap_rereads.cost_ns = clock__monotonic_ns() - now;
	return perfmap__find(&p->perfmap, addr);
}

const struct proc_maps *symbolizer__maps(struct symbolizer *s, uint32_t pid, uint64_t addr,
					 uint64_t seen_ns)
{
	struct process *p = mappings_of(s, pid);

	if (!p || p->gone)
		return NULL;
	if (!procmaps__find(&p->maps, addr) && p->read_at_ns < seen_ns &&
	    may_reread(s, &p->maps_rereads, clock__monotonic_ns()))
		read_process(s, p);
	return p->gone ? NULL : &p->maps;
}

const struct proc_maps *symbolizer__maps_since(struct symbolizer *s, uint32_t pid,
					       uint64_t since_ns, uint64_t *read_ns)
{
	struct process *p = find_or_add(s, pid);

	*read_ns = 0;
	if (!p)
		return NULL;
	if (!p->loaded) {
		p->loaded = true;
		p->gone = read_process(s, p) != 0;
	} else if (!p->gone && p->read_at_ns < since_ns &&
		   mapped_files(&p->maps) <= YOUNG_LOADER_FILES && read_process(s, p)) {
		/* Gone since: the snapshot stays for the stacks still to come. */
		return NULL;
	}
	if (p->gone)
		return NULL;
	*read_ns = p->read_at_ns;
	return &p->maps;
}

bool symbolizer__user(struct symbolizer *s, uint32_t pid, uint64_t addr, bool is_leaf,
		      uint64_t seen_ns, struct frame *f)
{
	uint64_t lookup = is_leaf ? addr : addr - 1;
	struct process *p = mappings_of(s, pid);
	const struct proc_map *map = NULL;
	const struct elf_symbol *sym;
	char *demangled;
	struct dso *dso;
	uint64_t vaddr;

	memset(f, 0, sizeof(*f));
	f->addr = addr;
	f->module_off = addr;
	if (!p)
		return false;
	if (!p->gone)
		map = procmaps__find(&p->maps, lookup);
	/*
	 * Mapped after the snapshot (dlopen, or libraries ld.so mapped after
	 * we looked): only a snapshot older than the stack can be stale. If
	 * the process is gone by now, the old snapshot stays.
	 */
	if (!map && !p->gone && p->read_at_ns < seen_ns &&
	    may_reread(s, &p->maps_rereads, clock__monotonic_ns())) {
		if (!read_process(s, p))
			map = procmaps__find(&p->maps, lookup);
		else
			count_gone(s, p); /* its stack names code it mapped after the snapshot */
	}
	if (!map)
		return false;
	f->module = strpool__intern(s->strings, map->path[0] ? map->path : "[anon]");
	f->module_off = addr - map->start + map->file_offset;
	dso = p->dsos[map - p->maps.maps];
	if (dso == &s->unpaid) {
		retry_unpaid(s, p);
		dso = p->dsos[map - p->maps.maps];
		/* Files are freed only in offcpu serve: elsewhere, no room comes back. */
		if (dso == &s->unpaid)
			return s->free_unmapped && p->unpaid_for_total;
	}
	/* Anonymous executable memory (not the vdso, which has its image). */
	if (!dso) {
		const struct elf_symbol *jit = jit_symbol(s, p, lookup, seen_ns);

		if (jit) {
			f->sym = strpool__intern(s->strings, jit->name);
			f->off = addr - jit->start;
			f->module = p->perfmap_module;
			f->module_off = addr - jit->start;
			return false;
		}
	}
	if (!dso || !dso->syms)
		return false;
	f->build_id = dso->build_id;
	if (elfsyms__offset_to_vaddr(dso->syms, lookup - map->start + map->file_offset, &vaddr))
		return false;
	sym = elfsyms__find(dso->syms, vaddr);
	if (!sym) {
		unnamed_function(s, f, dso->syms, map->path, vaddr, addr - lookup);
	} else {
		demangled = demangle__symbol(sym->name);
		if (demangled) {
			f->sym = strpool__intern(s->strings, demangled);
			f->system_name = strpool__intern(s->strings, sym->name);
			free(demangled);
		} else {
			f->sym = strpool__intern(s->strings, sym->name);
		}
		f->off = vaddr - sym->start + (addr - lookup);
	}
	if (dso->debug)
		note_code_line(s, f, dso, vaddr);
	return false;
}
