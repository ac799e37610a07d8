// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/hash_table.h"
#include "lib/u32_key.h"
#include "objects/data_names.h"
#include "proc/procmaps.h"
#include "symbols/demangle.h"
#include "symbols/elfsyms.h"

/* Files whose variables are held at once; past it, all are let go and read again as needed. */
#define MAX_FILES 256

struct process_maps {
	uint32_t pid;
	struct proc_maps maps;
	uint64_t read_ns; /* 0: never read */
};

struct file_key {
	uint32_t dev_major;
	uint32_t dev_minor;
	uint64_t inode;
};

struct file_vars {
	struct file_key key;
	struct elfsyms *syms; /* NULL: the file could not be read */
};

struct data_names {
	struct symbol_limits limits;
	struct hash_table *processes; /* pid -> struct process_maps */
	struct hash_table *files;     /* struct file_key -> struct file_vars */
};

static uint64_t hash_file_key(const void *key)
{
	return hash_table__hash_bytes(key, sizeof(struct file_key), 0);
}

static bool equal_file_key(const void *a, const void *b)
{
	return !memcmp(a, b, sizeof(struct file_key));
}

int data_names__new(const struct symbol_limits *limits, struct data_names **out)
{
	struct data_names *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	d->limits = *limits;
	d->processes = hash_table__new(u32_key__hash, u32_key__equal);
	d->files = hash_table__new(hash_file_key, equal_file_key);
	if (!d->processes || !d->files) {
		data_names__free(d);
		return -ENOMEM;
	}
	*out = d;
	return 0;
}

static void process_free(void *value)
{
	struct process_maps *p = value;

	procmaps__free(&p->maps);
	free(p);
}

static void file_free(void *value)
{
	struct file_vars *f = value;

	elfsyms__free(f->syms);
	free(f);
}

void data_names__free(struct data_names *d)
{
	if (!d)
		return;
	hash_table__free_values(d->processes, process_free);
	hash_table__free_values(d->files, file_free);
	free(d);
}

void data_names__forget(struct data_names *d, uint32_t pid)
{
	struct process_maps *p = hash_table__remove(d->processes, &pid);

	if (p)
		process_free(p);
}

static int read_maps(struct process_maps *p, uint64_t now)
{
	struct proc_maps maps;
	int err = procmaps__read_pid_all((int)p->pid, &maps);

	if (err)
		return err;
	procmaps__free(&p->maps);
	p->maps = maps;
	p->read_ns = now;
	return 0;
}

/*
 * The mapping holding addr: read again if it is in none of those held
 * (a heap grown, a thread's stack made since), no more often than the
 * symbolizer reads a process's maps again.
 */
static const struct proc_map *mapping_of(struct data_names *d, uint32_t pid, uint64_t addr,
					 const struct proc_maps **maps)
{
	struct process_maps *p = u32_key__find_or_add(d->processes, pid, sizeof(*p),
						      offsetof(struct process_maps, pid), NULL);
	const struct proc_map *m;
	uint64_t now = clock__monotonic_ns();

	if (!p)
		return NULL;
	if (!p->read_ns && read_maps(p, now))
		return NULL;
	m = procmaps__find(&p->maps, addr);
	if (!m && now - p->read_ns >= d->limits.reread_interval_ns && !read_maps(p, now))
		m = procmaps__find(&p->maps, addr);
	*maps = &p->maps;
	return m;
}

static struct elfsyms *read_vars(struct data_names *d, uint32_t pid, const struct proc_map *map)
{
	struct read_budget budget = { .left = d->limits.max_file_spend_bytes };
	struct elfsyms_opts opts = {
		.pid = pid,
		.path = map->path,
		.limits = &d->limits,
		.budget = &budget,
		.objects = true,
	};
	struct elfsyms *syms = NULL;
	int fd = procmaps__open_file(pid, map, true);

	if (fd < 0)
		return NULL;
	if (elfsyms__open_fd(fd, &opts, &syms))
		syms = NULL;
	close(fd);
	return syms;
}

static const struct elfsyms *vars_of(struct data_names *d, uint32_t pid, const struct proc_map *map)
{
	struct file_key key = { map->dev_major, map->dev_minor, map->inode };
	struct file_vars *f = hash_table__find(d->files, &key);

	if (f)
		return f->syms;
	if (hash_table__size(d->files) >= MAX_FILES) {
		hash_table__free_values(d->files, file_free);
		d->files = hash_table__new(hash_file_key, equal_file_key);
		if (!d->files)
			return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->key = key;
	f->syms = read_vars(d, pid, map);
	if (hash_table__insert(d->files, &f->key, f)) {
		file_free(f);
		return NULL;
	}
	return f->syms;
}

/*
 * The file mapping addr's ELF address is reckoned from: its own, or for
 * anonymous memory right after a file's (its .bss past the last page the
 * file fills), that file's.
 */
static const struct proc_map *file_of(const struct proc_maps *maps, const struct proc_map *m)
{
	if (m->path[0] == '/')
		return m;
	if (m->path[0] == '\0' && m > maps->maps && m[-1].end == m->start && m[-1].path[0] == '/')
		return &m[-1];
	return NULL;
}

/*
 * Where the file's first page is mapped, the mapping at its offset 0: the
 * load bias, from which every address of the file (its .bss too) is an
 * ELF address. NULL if the process has it no more.
 */
static const struct proc_map *first_page(const struct proc_maps *maps, const struct proc_map *file)
{
	const struct proc_map *m;

	for (m = file; m >= maps->maps; m--) {
		if (m->inode == file->inode && m->dev_major == file->dev_major &&
		    m->dev_minor == file->dev_minor && m->file_offset == 0)
			return m;
	}
	return NULL;
}

static bool variable_name(struct data_names *d, uint32_t pid, const struct proc_maps *maps,
			  const struct proc_map *file, uint64_t addr, char *buf, size_t size)
{
	const struct proc_map *first = first_page(maps, file);
	const struct elfsyms *syms = first ? vars_of(d, pid, file) : NULL;
	const struct elf_symbol *sym;
	char *demangled;
	uint64_t vaddr;

	if (!syms || elfsyms__offset_to_vaddr(syms, 0, &vaddr))
		return false;
	vaddr += addr - first->start;
	sym = elfsyms__find(syms, vaddr);
	if (!sym)
		return false;
	/* C++'s file-scope statics are mangled (_ZL11orders_lock): named as gdb prints them. */
	demangled = demangle__symbol(sym->name);
	if (vaddr == sym->start)
		snprintf(buf, size, "%s", demangled ? demangled : sym->name);
	else
		snprintf(buf, size, "%s+0x%" PRIx64, demangled ? demangled : sym->name,
			 vaddr - sym->start);
	free(demangled);
	return true;
}

int data_names__name(struct data_names *d, uint32_t pid, uint64_t addr, char *buf, size_t size)
{
	const struct proc_maps *maps = NULL;
	const struct proc_map *m = mapping_of(d, pid, addr, &maps);
	const struct proc_map *file;
	const char *base;

	if (!m)
		return maps ? -ENOENT : -ESRCH;
	file = file_of(maps, m);
	if (file && variable_name(d, pid, maps, file, addr, buf, size))
		return 0;
	if (m->path[0] == '/') {
		base = strrchr(m->path, '/') + 1;
		snprintf(buf, size, "%s+0x%" PRIx64, base, m->file_offset + (addr - m->start));
	} else {
		snprintf(buf, size, "%s", m->path[0] ? m->path : "[anon]");
	}
	return 0;
}
