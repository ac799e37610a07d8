// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/hash_table.h"
#include "lib/u32_key.h"
#include "proc/procmaps.h"
#include "python/python.h"
#include "python/python_elf.h"
#include "python/python_files.h"

struct python_process {
	uint32_t pid;
	bool checked; /* detection ran on this image */
	bool found;
	struct python_layout layout;
	uint64_t code_type;
	int mem_fd;
	struct python_memory mem;
	struct hash_table *codes; /* code object address -> struct python_code */
};

struct python {
	struct strpool *strings;
	const struct symbol_limits *limits;
	struct hash_table *processes; /* pid -> python_process */
	struct python_files *files;   /* what each executable and libpython is */
	const char *kind;
};

static uint64_t hash_u64(const void *key)
{
	return hash_table__hash_bytes(key, sizeof(uint64_t), 0);
}

static bool equal_u64(const void *a, const void *b)
{
	return *(const uint64_t *)a == *(const uint64_t *)b;
}

static void code_free(void *value)
{
	struct python_code *c = value;

	python_code__clear(c);
	free(c);
}

static void process_free(void *value)
{
	struct python_process *p = value;

	if (!p)
		return;
	hash_table__free_values(p->codes, code_free);
	if (p->mem_fd >= 0)
		close(p->mem_fd);
	free(p);
}

int python__new(struct strpool *strings, const struct symbol_limits *limits, struct python **out)
{
	struct python *py = calloc(1, sizeof(*py));

	if (!py)
		return -ENOMEM;
	py->strings = strings;
	py->limits = limits;
	py->processes = hash_table__new(u32_key__hash, u32_key__equal);
	py->files = python_files__new();
	py->kind = strpool__intern(strings, PYTHON_FRAME_KIND);
	if (!py->processes || !py->files || !py->kind) {
		python__free(py);
		return -ENOMEM;
	}
	*out = py;
	return 0;
}

void python__free(struct python *py)
{
	if (!py)
		return;
	hash_table__free_values(py->processes, process_free);
	python_files__free(py->files);
	free(py);
}

void python__mark_strings(const struct python *py, struct strpool *strings)
{
	strpool__mark(strings, py->kind);
}

static struct python_process *process_of(struct python *py, uint32_t pid)
{
	bool added;
	struct python_process *p = u32_key__find_or_add(
	    py->processes, pid, sizeof(*p), offsetof(struct python_process, pid), &added);

	if (!p || !added)
		return p;
	p->mem_fd = -1;
	p->codes = hash_table__new(hash_u64, equal_u64);
	if (!p->codes) {
		hash_table__remove(py->processes, &pid);
		process_free(p);
		return NULL;
	}
	return p;
}

/* /proc/PID/mem, opened once per image: pread needs no stop of the process. */
static int mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct python_process *p = ctx;
	ssize_t n;

	if (p->mem_fd < 0 || addr > INT64_MAX)
		return -EFAULT;
	n = pread(p->mem_fd, buf, len, (off_t)addr);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* "python3.9", "libpython3.10.so.1.0": the version a file name says (before 3.11). */
static uint16_t version_of_name(const char *path)
{
	const char *base = strrchr(path, '/');
	unsigned int major, minor;

	base = base ? base + 1 : path;
	if (!strncmp(base, "lib", 3))
		base += 3;
	if (sscanf(base, "python%u.%u", &major, &minor) != 2 || major != 3 || minor > 255)
		return 0;
	return (uint16_t)(3 << 8 | minor);
}

static bool worth_a_look(const struct proc_map *map, bool first_file)
{
	const char *base = strrchr(map->path, '/');

	if (map->path[0] != '/')
		return false;
	base = base ? base + 1 : map->path;
	/* The executable (its first mapping), whatever its name, and libpython. */
	return first_file || !strncmp(base, "libpython", 9);
}

/* The layout of the CPython mapped at map (a file with _PyRuntime); -ENOENT if none. */
static int layout_from_file(struct python_process *p, const struct proc_map *map,
			    const struct python_elf *e)
{
	uint64_t vaddr, bias, runtime;
	uint8_t debug[PYTHON_DEBUG_OFFSETS_SIZE];
	uint32_t version_hex = 0;
	uint16_t version;

	if (python_elf__vaddr(e, map->file_offset, &vaddr))
		return -ENOENT;
	bias = map->start - vaddr;
	runtime = e->runtime + bias;
	if (e->version &&
	    !p->mem.read(p->mem.ctx, e->version + bias, &version_hex, sizeof(version_hex)))
		version = (uint16_t)(version_hex >> 16);
	else
		version = version_of_name(map->path);
	if (version >= 0x030d) {
		if (p->mem.read(p->mem.ctx, runtime, debug, sizeof(debug)) ||
		    python_layout__from_debug_offsets(debug, sizeof(debug), &p->layout))
			return -ENOENT;
	} else if (python_layout__of_version(version, &p->layout)) {
		return -ENOENT;
	}
	p->layout.frames.runtime = runtime;
	p->code_type = e->code_type ? e->code_type + bias : 0;
	return 0;
}

int python__detect(struct python *py, uint32_t pid, const struct proc_maps *maps,
		   struct offcpu_python_layout *out)
{
	struct python_process *p = process_of(py, pid);
	char path[64];
	size_t i;
	int err = -ENOENT;

	if (!p)
		return -ENOMEM;
	if (p->checked) {
		if (!p->found)
			return -ENOENT;
		*out = p->layout.frames;
		return 0;
	}
	p->checked = true;
	snprintf(path, sizeof(path), "/proc/%u/mem", pid);
	p->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
	p->mem.read = mem_read;
	p->mem.ctx = p;
	if (p->mem_fd < 0 || !maps) {
		if (p->mem_fd >= 0)
			close(p->mem_fd);
		p->mem_fd = -1;
		return -ENOENT;
	}
	for (i = 0; i < maps->nr && err; i++) {
		const struct proc_map *map = &maps->maps[i];
		struct python_elf e;
		int fd;

		if (!worth_a_look(map, i == 0))
			continue;
		fd = procmaps__open_file(pid, map, false);
		if (fd < 0)
			continue;
		if (!python_files__read(py->files, fd, py->limits, &e))
			err = layout_from_file(p, map, &e);
		close(fd);
	}
	if (err) {
		/* Not kept open for every process on the machine that runs no CPython. */
		close(p->mem_fd);
		p->mem_fd = -1;
		return err;
	}
	p->found = true;
	*out = p->layout.frames;
	return 0;
}

int python__add_process(struct python *py, uint32_t pid, const struct python_layout *layout,
			uint64_t code_type, const struct python_memory *m)
{
	struct python_process *p = process_of(py, pid);

	if (!p)
		return -ENOMEM;
	p->checked = true;
	p->found = true;
	p->layout = *layout;
	p->code_type = code_type;
	p->mem = *m;
	return 0;
}

void python__fork(struct python *py, uint32_t parent_pid, uint32_t child_pid)
{
	struct python_process *parent = hash_table__find(py->processes, &parent_pid);
	struct python_process *child;
	char path[64];

	if (!parent || !parent->found)
		return;
	python__forget(py, child_pid);
	child = process_of(py, child_pid);
	if (!child)
		return;
	child->checked = true;
	child->found = true;
	child->layout = parent->layout;
	child->code_type = parent->code_type;
	snprintf(path, sizeof(path), "/proc/%u/mem", child_pid);
	child->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
	child->mem.read = mem_read;
	child->mem.ctx = child;
}

void python__forget(struct python *py, uint32_t pid)
{
	process_free(hash_table__remove(py->processes, &pid));
}

/* What the BPF walk sends as a code object's identity (offcpu.h's names). */
static uint64_t names_of(const struct python_process *p, const struct python_code *c)
{
	if (p->layout.frames.code_names_words == 4)
		return offcpu_python_names(c->id.filename, c->id.name, c->id.qualname,
					   c->id.linetable);
	return offcpu_python_names(c->id.filename, c->id.name, c->id.linetable, 0);
}

/*
 * The code object of frame pf as read, or read now. Where the walk sent
 * its identity, that tells whether the object cached at its address is
 * still the one, and whether the one read now is the one the walk saw: a
 * code object freed after the wait and another allocated at its address
 * before this read is not named (NULL), never named as the other. Without
 * it, one read of the header tells a cached one is still there; where it
 * cannot be read (the process is gone) the cached one is kept: nothing can
 * have replaced it.
 */
static const struct python_code *code_at(struct python_process *p,
					 const struct offcpu_python_frame *pf)
{
	bool has_names = p->layout.frames.code_names != OFFCPU_PY_NONE && pf->names;
	uint64_t addr = pf->code;
	struct python_code *c = hash_table__find(p->codes, &addr);
	struct python_code_id id;
	int err;

	if (c && has_names && names_of(p, c) == pf->names)
		return c;
	if (c && !has_names) {
		err = python_code__id(&p->layout.code, &p->mem, addr, p->code_type, &id);
		if (err == -EFAULT || (!err && python_code__same(&id, &c->id)))
			return c;
	}
	if (c)
		code_free(hash_table__remove(p->codes, &addr));
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	if (python_code__read(&p->layout.code, &p->mem, addr, p->code_type, c) ||
	    hash_table__insert(p->codes, &c->addr, c)) {
		code_free(c);
		return NULL;
	}
	return has_names && names_of(p, c) != pf->names ? NULL : c;
}

size_t python__name(struct python *py, const struct offcpu_python_record *r, struct frame *out,
		    size_t max, uint64_t *unnamed)
{
	struct python_process *p = hash_table__find(py->processes, &r->pid);
	size_t i, n = r->frames;

	if (n > OFFCPU_PY_MAX_FRAMES)
		n = OFFCPU_PY_MAX_FRAMES;
	if (n > max)
		n = max;
	for (i = 0; i < n; i++) {
		const struct offcpu_python_frame *pf = &r->frame[i];
		const struct python_code *c = p && p->found ? code_at(p, pf) : NULL;
		struct frame *f = &out[i];

		memset(f, 0, sizeof(*f));
		f->addr = pf->code;
		f->kind = py->kind;
		if (!c) {
			(*unnamed)++;
			continue;
		}
		f->sym = strpool__intern(py->strings, c->qualname);
		f->file = strpool__intern(py->strings, c->filename);
		f->off = python_code__offset(c, &p->layout, pf->instr);
		f->line = python_code__line(c, &p->layout, pf->instr);
		/*
		 * A frame is at a call, which its line table always places (a
		 * preempted leaf at any instruction: a few have no location). A
		 * frame whose line cannot be computed is not shown as line 0 of
		 * a named function: unnamed and counted.
		 */
		if (!f->sym || !f->file || !f->line) {
			f->sym = NULL;
			f->file = NULL;
			f->line = 0;
			(*unnamed)++;
		}
	}
	return n;
}
