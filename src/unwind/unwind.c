// SPDX-License-Identifier: GPL-2.0
/*
 * libdw's CFI reader (dwarf_getcfi_elf, dwarf_cfi_addrframe) and our own
 * small evaluator of its rules, rather than libdwfl's unwinder
 * (dwfl_attach_state, dwfl_thread_getframes): libdwfl finds, opens and
 * maps modules and their debug files by path itself, where every file
 * here must come through the process's map_files and be read without
 * mmap; and its per-process state would be rebuilt for every stack of a
 * short-lived process, where ours is per file, shared by all.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/hash_table.h"
#include "proc/proc_root.h"
#include "proc/proc_stat.h"
#include "symbols/debugfile.h"
#include "symbols/elf_file.h"
#include "symbols/elf_section.h"
#include "symbols/limits.h"
#include "unwind/cfi_check.h"
#include "unwind/unwind.h"

#define DEFAULT_MAX_MODULES 256
#define DEFAULT_MAX_BYTES (64u << 20)
#define DEFAULT_RULE_SLOTS 4096
/* A .debug_frame larger than this is not read (libc's .eh_frame is 150 KiB). */
#define MAX_DEBUG_FRAME_BYTES (64u << 20)
/* DWARF expressions in CFI are a handful of operations: deeper is hostile. */
#define EVAL_STACK_DEPTH 16

/* (dev, inode) of the vdso, which is no file: ours is the same image. */
#define VDSO_KEY UINT64_MAX

struct segment {
	uint64_t file_offset;
	uint64_t vaddr;
	uint64_t size;
};

struct module {
	uint64_t key[2]; /* dev, inode */
	uint64_t id;	 /* never reused: rule cache entries of a freed module match nothing */
	struct segment *segments;
	size_t nr_segments;
	Elf *elf; /* read with ELF_C_READ; holds .eh_frame's data */
	Dwarf_CFI *eh_cfi;
	/* .debug_frame alone in an ELF image of our own, for libdw to read */
	void *debug_image;
	Elf *debug_elf;
	Dwarf *debug_dwarf;
	Dwarf_CFI *debug_cfi;
	/* A program outside cfi_check's bounds: libdw runs none of that section's */
	bool eh_rejected, debug_rejected;
	void *vdso_image;
	bool unreadable; /* could not be opened or read: no frame is guessed in it */
	size_t bytes;
	struct module *lru_prev, *lru_next;
};

enum rule_kind {
	RULE_UNDEFINED,
	RULE_SAME,
	RULE_AT_CFA,   /* saved at CFA + offset */
	RULE_CFA_PLUS, /* is CFA + offset */
	RULE_REGISTER, /* is register reg (+ offset, for the CFA) */
	RULE_EXPR,     /* saved at the address ops compute */
	RULE_VAL_EXPR, /* is the value ops compute */
};

struct rule {
	uint8_t kind;
	uint8_t reg;
	uint32_t nops;
	int64_t offset;
	const Dwarf_Op *ops; /* interned in the module's Dwarf_CFI: lives as long as it */
};

/* What CFI says of one code address, decoded once. */
struct frame_rules {
	uint64_t module_id; /* 0: empty slot */
	uint64_t vaddr;
	struct rule cfa;
	struct rule regs[UNWIND_NR_REGS];
	uint8_t ra_reg;
	bool signal_frame;
};

struct unwinder {
	struct hash_table *modules; /* by (dev, inode) */
	struct module *lru_head, *lru_tail;
	size_t nr_modules, bytes;
	size_t max_modules, max_bytes;
	uint64_t next_module_id;
	struct frame_rules *rules; /* direct mapped by (module, address) */
	size_t rule_mask;
	struct unwinder_stats stats;
};

static const char *const stop_names[] = {
	[UNWIND_STOP_ROOT] = "root",	       [UNWIND_STOP_MAX_FRAMES] = "max-frames",
	[UNWIND_STOP_STACK_END] = "stack-end", [UNWIND_STOP_UNREADABLE] = "unreadable",
	[UNWIND_STOP_NO_CFI] = "no-cfi",       [UNWIND_STOP_BAD_CFI] = "bad-cfi",
	[UNWIND_STOP_NOT_CODE] = "not-code",   [UNWIND_STOP_LOOP] = "loop",
};

const char *unwind__stop_name(enum unwind_stop stop)
{
	return (size_t)stop < ARRAY_SIZE(stop_names) ? stop_names[stop] : "?";
}

#ifdef __x86_64__
void unwind_regs__from_user(struct unwind_regs *out, const struct user_regs_struct *regs)
{
	out->r[UNWIND_REG_RAX] = regs->rax;
	out->r[UNWIND_REG_RDX] = regs->rdx;
	out->r[UNWIND_REG_RCX] = regs->rcx;
	out->r[UNWIND_REG_RBX] = regs->rbx;
	out->r[UNWIND_REG_RSI] = regs->rsi;
	out->r[UNWIND_REG_RDI] = regs->rdi;
	out->r[UNWIND_REG_RBP] = regs->rbp;
	out->r[UNWIND_REG_RSP] = regs->rsp;
	out->r[UNWIND_REG_R8] = regs->r8;
	out->r[UNWIND_REG_R9] = regs->r9;
	out->r[UNWIND_REG_R10] = regs->r10;
	out->r[UNWIND_REG_R11] = regs->r11;
	out->r[UNWIND_REG_R12] = regs->r12;
	out->r[UNWIND_REG_R13] = regs->r13;
	out->r[UNWIND_REG_R14] = regs->r14;
	out->r[UNWIND_REG_R15] = regs->r15;
	out->r[UNWIND_REG_RIP] = regs->rip;
	out->valid = (1u << UNWIND_NR_REGS) - 1;
}
#endif

static uint64_t hash_key(const void *key)
{
	return hash_table__hash_bytes(key, 2 * sizeof(uint64_t), 0);
}

static bool equal_key(const void *a, const void *b)
{
	return !memcmp(a, b, 2 * sizeof(uint64_t));
}

int unwinder__new(const struct unwinder_opts *opts, struct unwinder **out)
{
	struct unwinder *u = calloc(1, sizeof(*u));
	size_t slots = opts && opts->rule_slots ? opts->rule_slots : DEFAULT_RULE_SLOTS;

	if (!u)
		return -ENOMEM;
	if (slots & (slots - 1)) {
		free(u);
		return -EINVAL;
	}
	u->max_modules = opts && opts->max_modules ? opts->max_modules : DEFAULT_MAX_MODULES;
	u->max_bytes = opts && opts->max_bytes ? opts->max_bytes : DEFAULT_MAX_BYTES;
	u->next_module_id = 1;
	u->rule_mask = slots - 1;
	u->rules = calloc(slots, sizeof(*u->rules));
	u->modules = hash_table__new(hash_key, equal_key);
	if (!u->rules || !u->modules) {
		unwinder__free(u);
		return -ENOMEM;
	}
	elf_version(EV_CURRENT);
	*out = u;
	return 0;
}

static void module_free(struct module *m)
{
	if (!m)
		return;
	if (m->eh_cfi)
		dwarf_cfi_end(m->eh_cfi);
	/* debug_cfi belongs to debug_dwarf. */
	dwarf_end(m->debug_dwarf);
	elf_end(m->debug_elf);
	elf_end(m->elf);
	free(m->debug_image);
	free(m->vdso_image);
	free(m->segments);
	free(m);
}

static void module_free_value(void *m)
{
	module_free(m);
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	hash_table__free_values(u->modules, module_free_value);
	free(u->rules);
	free(u);
}

void unwinder__stats(const struct unwinder *u, struct unwinder_stats *out)
{
	*out = u->stats;
	out->modules_cached = u->nr_modules;
	out->bytes_cached = u->bytes;
}

static void lru_unlink(struct unwinder *u, struct module *m)
{
	if (m->lru_prev)
		m->lru_prev->lru_next = m->lru_next;
	else
		u->lru_head = m->lru_next;
	if (m->lru_next)
		m->lru_next->lru_prev = m->lru_prev;
	else
		u->lru_tail = m->lru_prev;
	m->lru_prev = m->lru_next = NULL;
}

static void lru_push_front(struct unwinder *u, struct module *m)
{
	m->lru_next = u->lru_head;
	m->lru_prev = NULL;
	if (u->lru_head)
		u->lru_head->lru_prev = m;
	u->lru_head = m;
	if (!u->lru_tail)
		u->lru_tail = m;
}

/* Drops the least recently used files until the bounds hold; keep stays. */
static void evict(struct unwinder *u, const struct module *keep)
{
	while ((u->nr_modules > u->max_modules || u->bytes > u->max_bytes) && u->lru_tail &&
	       u->lru_tail != keep) {
		struct module *m = u->lru_tail;

		lru_unlink(u, m);
		hash_table__remove(u->modules, m->key);
		u->nr_modules--;
		u->bytes -= m->bytes;
		u->stats.modules_evicted++;
		module_free(m);
	}
}

/*
 * Its loaded segments, by which addresses map to what CFI speaks of. A
 * file shorter than they say was truncated under its mapping: -EIO.
 */
static int read_segments(Elf *elf, uint64_t file_size, struct module *m)
{
	size_t nr, i;
	GElf_Ehdr ehdr;

	if (elf_getphdrnum(elf, &nr) || !gelf_getehdr(elf, &ehdr))
		return -EINVAL;
	if (ehdr.e_shoff > file_size ||
	    (uint64_t)ehdr.e_shnum * ehdr.e_shentsize > file_size - ehdr.e_shoff)
		return -EIO;
	m->segments = calloc(nr ? nr : 1, sizeof(*m->segments));
	if (!m->segments)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		GElf_Phdr phdr;

		if (!gelf_getphdr(elf, (int)i, &phdr) || phdr.p_type != PT_LOAD)
			continue;
		if (phdr.p_offset > file_size || phdr.p_filesz > file_size - phdr.p_offset)
			return -EIO;
		m->segments[m->nr_segments++] = (struct segment){
			.file_offset = phdr.p_offset,
			.vaddr = phdr.p_vaddr,
			.size = phdr.p_filesz,
		};
	}
	return 0;
}

static bool is_x86_64(Elf *elf)
{
	GElf_Ehdr ehdr;

	return elf && elf_kind(elf) == ELF_K_ELF && gelf_getehdr(elf, &ehdr) &&
	       ehdr.e_ident[EI_CLASS] == ELFCLASS64 && ehdr.e_machine == EM_X86_64;
}

/*
 * The bytes of a section, decompressed if need be; NULL when absent, empty
 * or over the cap. A compressed one is charged the size its header gives
 * before libelf inflates it: a 1 MB library's .debug_frame inflated to 1 GiB
 * (1.1 GB RSS for one process, 3.2 GB for three) before the cap was checked.
 * libelf (0.188, __libelf_decompress) inflates into a buffer of ch_size
 * and fails when the stream needs more: a header that lies cannot pass it.
 */
static Elf_Data *section_data(Elf *elf, const char *name, struct read_budget *budget)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		GElf_Chdr chdr;
		const char *n;
		Elf_Data *data;
		uint64_t size;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS)
			continue;
		n = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (!n || strcmp(n, name))
			continue;
		if (shdr.sh_size > MAX_DEBUG_FRAME_BYTES)
			return NULL;
		size = shdr.sh_size;
		if (shdr.sh_flags & SHF_COMPRESSED) {
			if (!gelf_getchdr(scn, &chdr) || chdr.ch_size > MAX_DEBUG_FRAME_BYTES)
				return NULL;
			size += chdr.ch_size; /* the compressed bytes, then what they inflate to */
		}
		if (read_budget__charge(budget, size))
			return NULL;
		if ((shdr.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
			return NULL;
		data = elf_getdata(scn, NULL);
		return data && data->d_size && data->d_size <= MAX_DEBUG_FRAME_BYTES ? data : NULL;
	}
	return NULL;
}

/*
 * libdw reads .debug_frame only through a Dwarf, and dwarf_begin_elf of a
 * whole debug file reads (and decompresses) every DWARF section: 50-60 ms
 * and megabytes for libc's. So the one section goes into an ELF image of
 * its own: header, .debug_frame, .shstrtab, section headers.
 */
static int load_debug_frame(struct module *m, Elf *from, struct read_budget *budget)
{
	static const char names[] = "\0.debug_frame\0.shstrtab";
	Elf_Data *data = section_data(from, ".debug_frame", budget);
	size_t frame_at = sizeof(Elf64_Ehdr), names_at, shdrs_at, size;
	GElf_Ehdr from_ehdr;
	Elf64_Ehdr *ehdr;
	Elf64_Shdr *shdr;
	unsigned char *image;

	if (!data || !gelf_getehdr(from, &from_ehdr))
		return -ENOENT;
	names_at = frame_at + data->d_size;
	shdrs_at = (names_at + sizeof(names) + 7) & ~(size_t)7;
	size = shdrs_at + 3 * sizeof(Elf64_Shdr);
	if (read_budget__charge(budget, size))
		return -E2BIG;
	image = calloc(1, size);
	if (!image)
		return -ENOMEM;
	ehdr = (Elf64_Ehdr *)image;
	memcpy(ehdr->e_ident, from_ehdr.e_ident, EI_NIDENT);
	ehdr->e_type = from_ehdr.e_type;
	ehdr->e_machine = from_ehdr.e_machine;
	ehdr->e_version = EV_CURRENT;
	ehdr->e_ehsize = sizeof(Elf64_Ehdr);
	ehdr->e_shentsize = sizeof(Elf64_Shdr);
	ehdr->e_shoff = shdrs_at;
	ehdr->e_shnum = 3;
	ehdr->e_shstrndx = 2;
	memcpy(image + frame_at, data->d_buf, data->d_size);
	memcpy(image + names_at, names, sizeof(names));
	shdr = (Elf64_Shdr *)(image + shdrs_at);
	shdr[1] = (Elf64_Shdr){ .sh_name = 1,
				.sh_type = SHT_PROGBITS,
				.sh_offset = frame_at,
				.sh_size = data->d_size,
				.sh_addralign = 8 };
	shdr[2] = (Elf64_Shdr){ .sh_name = 14,
				.sh_type = SHT_STRTAB,
				.sh_offset = names_at,
				.sh_size = sizeof(names),
				.sh_addralign = 1 };
	m->debug_image = image;
	if (cfi_check__section(from_ehdr.e_ident, data, false, NULL)) {
		m->debug_rejected = true;
		m->bytes += size;
		return 0;
	}
	m->debug_elf = elf_memory((char *)image, size);
	m->debug_dwarf = m->debug_elf ? dwarf_begin_elf(m->debug_elf, DWARF_C_READ, NULL) : NULL;
	m->debug_cfi = m->debug_dwarf ? dwarf_getcfi(m->debug_dwarf) : NULL;
	if (!m->debug_cfi)
		return -EINVAL;
	m->bytes += size;
	return 0;
}

/* .debug_frame: the file's own, else its separate debug file's (checked as the file was). */
static void find_debug_frame(struct module *m, struct elf_file *f, uint32_t pid, const char *path)
{
	struct elf_file debug;
	int fd;

	if (load_debug_frame(m, f->elf, f->budget) != -ENOENT)
		return;
	fd = debugfile__open(f, pid, path);
	if (fd < 0)
		return;
	if (!elf_file__open(&debug, fd, f->limits, f->budget)) {
		if (is_x86_64(debug.elf))
			load_debug_frame(m, debug.elf, f->budget);
		elf_file__close(&debug);
	}
	close(fd);
}

static size_t section_bytes(struct elf_file *f, const char *name)
{
	Elf_Data *data = elf_section__by_name(f, name, NULL);

	return data ? data->d_size : 0;
}

/*
 * libdw's .eh_frame (dwarf_getcfi_elf, 0.188) is found through
 * PT_GNU_EH_FRAME where there is one: the search table there, and the
 * bytes at its eh_frame_ptr in the segment holding it. The section checked
 * must be those bytes, and the table must point only into its chain.
 */
static int check_eh_frame(struct elf_file *f, const GElf_Ehdr *ehdr)
{
	uint64_t frame_vaddr;
	Elf_Data *frame = elf_section__by_name(f, ".eh_frame", &frame_vaddr), *hdr = NULL;
	Elf_Scn *scn = elf_section__find(f, ".eh_frame");
	struct cfi_hdr table = { 0 };
	bool in_segment = false;
	GElf_Shdr shdr;
	size_t nr, i;

	if (!frame || !scn || !gelf_getshdr(scn, &shdr) || elf_getphdrnum(f->elf, &nr))
		return -EBADMSG;
	for (i = 0; i < nr; i++) {
		GElf_Phdr phdr;

		if (!gelf_getphdr(f->elf, (int)i, &phdr))
			return -EBADMSG;
		if (phdr.p_type == PT_LOAD && frame_vaddr >= phdr.p_vaddr &&
		    frame_vaddr - phdr.p_vaddr < phdr.p_filesz)
			in_segment = shdr.sh_offset == phdr.p_offset + (frame_vaddr - phdr.p_vaddr);
		if (phdr.p_type == PT_GNU_EH_FRAME && !hdr) {
			if (read_budget__charge(f->budget, phdr.p_filesz))
				return -E2BIG;
			hdr = elf_getdata_rawchunk(f->elf, (int64_t)phdr.p_offset, phdr.p_filesz,
						   ELF_T_BYTE);
			if (!hdr)
				return -EBADMSG;
			table.vaddr = phdr.p_vaddr;
		}
	}
	/* Else that of the .eh_frame_hdr section (getcfi_shdr). */
	if (!hdr && (hdr = elf_section__by_name(f, ".eh_frame_hdr", &table.vaddr)))
		in_segment = true;
	if (!hdr)
		return cfi_check__section(ehdr->e_ident, frame, true, NULL);
	if (!in_segment)
		return -EBADMSG;
	table.bytes = hdr->d_buf;
	table.size = hdr->d_size;
	table.frame_vaddr = frame_vaddr;
	return cfi_check__section(ehdr->e_ident, frame, true, &table);
}

/* f takes the fd's content it needs now; the fd may be closed afterwards. */
static int load_elf(struct module *m, struct elf_file *f, uint64_t size, uint32_t pid,
		    const char *path)
{
	GElf_Ehdr ehdr;
	int err;

	if (!is_x86_64(f->elf) || !gelf_getehdr(f->elf, &ehdr))
		return -EINVAL;
	err = read_segments(f->elf, size, m);
	if (err)
		return err;
	m->eh_cfi = dwarf_getcfi_elf(f->elf);
	m->bytes += section_bytes(f, ".eh_frame") + section_bytes(f, ".eh_frame_hdr");
	if (m->eh_cfi && check_eh_frame(f, &ehdr))
		m->eh_rejected = true;
	if (path)
		find_debug_frame(m, f, pid, path);
	return 0;
}

/*
 * map_files is the very file the process mapped (in its mount namespace,
 * or deleted since); by name, only if it is still that file.
 */
static int open_mapped_file(uint32_t pid, const struct proc_map *map, uint64_t *size)
{
	struct stat st;
	int fd = procmaps__open_file(pid, map, true);

	/*
	 * A process that exited has neither map_files nor a root, but its
	 * stacks are still to be unwound (a reader behind a short-lived
	 * command; offcpu reaps it only later). The path as offcpu sees it is
	 * taken only if it is that very file, by the checks below, and one the
	 * process may read: a zombie's credentials are still in its status.
	 * A file refused for them is not looked for again by path.
	 */
	if (fd < 0 && fd != -EACCES && map->path[0] == '/') {
		int err;

		fd = open(map->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0)
			return -errno;
		err = proc_creds__check_fd(pid, fd);
		if (err) {
			close(fd);
			return err;
		}
	}
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_ino != map->inode ||
	    major(st.st_dev) != map->dev_major || minor(st.st_dev) != map->dev_minor) {
		close(fd);
		return -EINVAL;
	}
	*size = (uint64_t)st.st_size;
	return fd;
}

/* The symbolizer's limits on what one file may cost; a file of its own budget. */
static void file_limits(struct symbol_limits *limits, struct read_budget *budget)
{
	limits__defaults(limits);
	budget->left = limits->max_file_spend_bytes;
	budget->exhausted = false;
}

static int open_file_module(struct module *m, uint32_t pid, const struct proc_map *map)
{
	struct symbol_limits limits;
	struct read_budget budget;
	struct elf_file f;
	uint64_t size = 0;
	int fd = open_mapped_file(pid, map, &size);
	int err;

	if (fd < 0)
		return fd;
	/* Read, never mapped, headers checked against the file: see elf_file.h. */
	file_limits(&limits, &budget);
	err = elf_file__open(&f, fd, &limits, &budget);
	if (err) {
		close(fd);
		return err;
	}
	err = load_elf(m, &f, size, pid, map->path);
	if (err) {
		elf_file__close(&f);
		close(fd);
		return err;
	}
	m->elf = elf_file__detach(&f);
	close(fd);
	return 0;
}

/* The vdso's image is the same in every process: a copy of ours. */
static int open_vdso_module(struct module *m, const struct proc_map *map)
{
	const void *image = (const void *)getauxval(AT_SYSINFO_EHDR);
	size_t size = map->end - map->start;
	struct proc_maps own;
	const struct proc_map *own_map;
	struct symbol_limits limits;
	struct read_budget budget;
	struct elf_file f;
	int err;

	if (!image || procmaps__read_pid(getpid(), &own))
		return -ENOENT;
	own_map = procmaps__find(&own, (uint64_t)(uintptr_t)image);
	err = own_map && own_map->end - own_map->start == size ? 0 : -ENOENT;
	procmaps__free(&own);
	if (err)
		return err;
	m->vdso_image = malloc(size);
	if (!m->vdso_image)
		return -ENOMEM;
	memcpy(m->vdso_image, image, size);
	file_limits(&limits, &budget);
	err = elf_file__open_memory(&f, m->vdso_image, size, &limits, &budget);
	if (err)
		return err;
	err = load_elf(m, &f, size, 0, NULL);
	if (err) {
		elf_file__close(&f);
		return err;
	}
	m->elf = elf_file__detach(&f);
	m->bytes += size;
	return 0;
}

static struct module *new_module(struct unwinder *u, const uint64_t key[2])
{
	struct module *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	memcpy(m->key, key, sizeof(m->key));
	m->id = u->next_module_id++;
	m->bytes = sizeof(*m);
	return m;
}

/*
 * A process gone before its stacks were read (a short-lived one, behind a
 * reader that lags) opens no file through /proc/PID: that says nothing of
 * the file. Marked unreadable for good, libc was, for every process after
 * it: a `sleep` gone before its waits were read left the next process's
 * stacks at their leaf (test_exec_mid_run_and_traced_pid_exiting_early,
 * 1 run in 6 beside two busy loops). Its frames stop as unreadable, and
 * nothing is kept.
 */
static struct module gone_process_module = { .unreadable = true };

/*
 * The file mapped at map, its CFI read at its first use; NULL in *out for
 * anonymous memory (JIT code). A file that cannot be read (gone, not the
 * mapped file any more, truncated under its mapping) is kept too, marked,
 * so it is not tried again for every frame.
 */
static int get_module(struct unwinder *u, uint32_t pid, const struct proc_map *map,
		      struct module **out)
{
	bool vdso = !strcmp(map->path, "[vdso]");
	uint64_t key[2] = { vdso ? VDSO_KEY : ((uint64_t)map->dev_major << 32) | map->dev_minor,
			    vdso ? VDSO_KEY : map->inode };
	struct module *m;

	*out = NULL;
	if (!vdso && (map->path[0] == '[' || !map->inode))
		return 0;
	m = hash_table__find(u->modules, key);
	if (m) {
		if (m != u->lru_head) {
			lru_unlink(u, m);
			lru_push_front(u, m);
		}
		*out = m;
		return 0;
	}
	m = new_module(u, key);
	if (!m)
		return -ENOMEM;
	if (vdso ? open_vdso_module(m, map) : open_file_module(m, pid, map)) {
		module_free(m);
		/*
		 * Seen: `-- COMMAND` exited before its first waits were read (a
		 * loaded machine), libc marked unreadable for good, every stack
		 * of it cut at its leaf.
		 */
		if (!vdso && proc_stat__pid_exited(pid)) {
			*out = &gone_process_module;
			return 0;
		}
		m = new_module(u, key);
		if (!m)
			return -ENOMEM;
		m->unreadable = true;
	}
	if (hash_table__insert(u->modules, m->key, m)) {
		module_free(m);
		return -ENOMEM;
	}
	u->stats.modules_opened++;
	u->nr_modules++;
	u->bytes += m->bytes;
	lru_push_front(u, m);
	evict(u, m);
	*out = m;
	return 0;
}

/* An address in the mapping to the ELF virtual address CFI speaks of. */
static bool to_vaddr(const struct module *m, const struct proc_map *map, uint64_t addr,
		     uint64_t *vaddr)
{
	uint64_t offset = addr - map->start + map->file_offset;
	size_t i;

	for (i = 0; i < m->nr_segments; i++) {
		const struct segment *s = &m->segments[i];

		if (offset >= s->file_offset && offset - s->file_offset < s->size) {
			*vaddr = offset - s->file_offset + s->vaddr;
			return true;
		}
	}
	return false;
}

static int decode_rule(Dwarf_Frame *frame, int regno, struct rule *r)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;

	*r = (struct rule){ .kind = RULE_UNDEFINED };
	if (dwarf_frame_register(frame, regno, mem, &ops, &nops))
		return -EINVAL;
	if (!nops) {
		r->kind = ops ? RULE_UNDEFINED : RULE_SAME;
		return 0;
	}
	if (ops != mem) {
		/* An expression, interned in the Dwarf_CFI. */
		r->kind = ops[nops - 1].atom == DW_OP_stack_value ? RULE_VAL_EXPR : RULE_EXPR;
		r->ops = ops;
		r->nops = (uint32_t)nops;
		return 0;
	}
	/* The simple rules libdw spells in mem (dwarf_frame_register.c). */
	if (nops == 1 && ops[0].atom == DW_OP_regx) {
		if (ops[0].number >= UNWIND_NR_REGS)
			return -EINVAL;
		r->kind = RULE_REGISTER;
		r->reg = (uint8_t)ops[0].number;
		return 0;
	}
	if (ops[0].atom != DW_OP_call_frame_cfa)
		return -EINVAL;
	if (nops > 1 && ops[1].atom == DW_OP_plus_uconst)
		r->offset = (int64_t)ops[1].number;
	r->kind = ops[nops - 1].atom == DW_OP_stack_value ? RULE_CFA_PLUS : RULE_AT_CFA;
	return 0;
}

static int decode_frame(Dwarf_Frame *frame, struct frame_rules *fr)
{
	Dwarf_Addr start, end;
	Dwarf_Op *ops;
	size_t nops;
	int ra, i;

	ra = dwarf_frame_info(frame, &start, &end, &fr->signal_frame);
	if (ra < 0 || ra >= UNWIND_NR_REGS || dwarf_frame_cfa(frame, &ops, &nops))
		return -EINVAL;
	fr->ra_reg = (uint8_t)ra;
	if (!nops)
		return -EINVAL; /* the CFA is undefined */
	if (nops == 1 && ops[0].atom == DW_OP_bregx) {
		if (ops[0].number >= UNWIND_NR_REGS)
			return -EINVAL;
		/* That op lives in frame, which is freed: copy it. */
		fr->cfa = (struct rule){ .kind = RULE_REGISTER,
					 .reg = (uint8_t)ops[0].number,
					 .offset = (int64_t)ops[0].number2 };
	} else {
		fr->cfa =
		    (struct rule){ .kind = RULE_VAL_EXPR, .ops = ops, .nops = (uint32_t)nops };
	}
	for (i = 0; i < UNWIND_NR_REGS; i++)
		if (decode_rule(frame, i, &fr->regs[i]))
			return -EINVAL;
	return 0;
}

/*
 * The rules for vaddr: cached, else from .eh_frame, else .debug_frame.
 * -ENOENT when neither covers it, -EINVAL when what covers it is unusable.
 */
static int find_rules(struct unwinder *u, struct module *m, uint64_t vaddr,
		      const struct frame_rules **out)
{
	uint64_t h = (m->id * 0x9e3779b97f4a7c15ull) ^ (vaddr * 0xff51afd7ed558ccdull);
	struct frame_rules *fr = &u->rules[(h >> 20) & u->rule_mask];
	Dwarf_Frame *frame = NULL;
	int err;

	if (fr->module_id == m->id && fr->vaddr == vaddr) {
		u->stats.rule_hits++;
		*out = fr;
		return 0;
	}
	u->stats.rule_misses++;
	/* Checked once at the file's load; rejected, its section is never run. */
	if (m->eh_rejected)
		goto rejected;
	if (!m->eh_cfi || dwarf_cfi_addrframe(m->eh_cfi, vaddr, &frame)) {
		if (m->debug_rejected)
			goto rejected;
		if (!m->debug_cfi || dwarf_cfi_addrframe(m->debug_cfi, vaddr, &frame))
			return -ENOENT;
	}
	fr->module_id = 0;
	err = decode_frame(frame, fr);
	free(frame);
	if (err)
		return err;
	fr->module_id = m->id;
	fr->vaddr = vaddr;
	*out = fr;
	return 0;
rejected:
	u->stats.cfi_rejected++;
	return -EBADMSG;
}

struct step {
	const struct unwind_regs *regs; /* the callee's */
	const struct unwind_stack *stack;
	uint64_t cfa;
	enum unwind_stop stop; /* why the last failing call failed */
};

static int read_word(struct step *s, uint64_t addr, size_t size, uint64_t *out)
{
	const struct unwind_stack *st = s->stack;
	uint64_t value = 0;

	if (addr < st->start) {
		s->stop = UNWIND_STOP_UNREADABLE;
		return -EFAULT;
	}
	if (addr - st->start > st->size || st->size - (addr - st->start) < size) {
		s->stop = UNWIND_STOP_STACK_END;
		return -EFAULT;
	}
	memcpy(&value, st->data + (addr - st->start), size); /* x86-64: little endian */
	*out = value;
	return 0;
}

static int reg_value(struct step *s, uint64_t reg, uint64_t *out)
{
	if (reg >= UNWIND_NR_REGS || !(s->regs->valid & (1u << reg))) {
		s->stop = UNWIND_STOP_UNREADABLE;
		return -EINVAL;
	}
	*out = s->regs->r[reg];
	return 0;
}

static int unsupported(struct step *s)
{
	s->stop = UNWIND_STOP_BAD_CFI;
	return -EINVAL;
}

/*
 * The DWARF expressions CFI uses (PLT entries, signal frames, realigned
 * stacks): arithmetic on registers and the CFA, and loads from the copied
 * stack. Anything else is no unwind rule we can follow here.
 */
static int evaluate(struct step *s, const Dwarf_Op *ops, size_t nops, uint64_t *out)
{
	uint64_t stack[EVAL_STACK_DEPTH], a, b, v;
	size_t sp = 0, i;

	for (i = 0; i < nops; i++) {
		const Dwarf_Op *op = &ops[i];
		uint8_t atom = op->atom;

		/* Every op pushes at most one value and pops at most two. */
		if (sp >= EVAL_STACK_DEPTH)
			return unsupported(s);
		if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31) {
			stack[sp++] = atom - DW_OP_lit0;
			continue;
		}
		if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31) {
			if (reg_value(s, atom - DW_OP_breg0, &v))
				return -EINVAL;
			stack[sp++] = v + op->number;
			continue;
		}
		if (atom >= DW_OP_reg0 && atom <= DW_OP_reg31 && nops == 1)
			return reg_value(s, atom - DW_OP_reg0, out);
		switch (atom) {
		case DW_OP_regx:
			if (nops != 1)
				return unsupported(s);
			return reg_value(s, op->number, out);
		case DW_OP_bregx:
			if (reg_value(s, op->number, &v))
				return -EINVAL;
			stack[sp++] = v + op->number2;
			continue;
		case DW_OP_call_frame_cfa:
			stack[sp++] = s->cfa;
			continue;
		case DW_OP_const1u:
		case DW_OP_const1s:
		case DW_OP_const2u:
		case DW_OP_const2s:
		case DW_OP_const4u:
		case DW_OP_const4s:
		case DW_OP_const8u:
		case DW_OP_const8s:
		case DW_OP_constu:
		case DW_OP_consts:
			stack[sp++] = op->number;
			continue;
		case DW_OP_dup:
			if (sp < 1)
				return unsupported(s);
			stack[sp] = stack[sp - 1];
			sp++;
			continue;
		case DW_OP_over:
			if (sp < 2)
				return unsupported(s);
			stack[sp] = stack[sp - 2];
			sp++;
			continue;
		case DW_OP_pick:
			if (op->number >= sp)
				return unsupported(s);
			stack[sp] = stack[sp - 1 - op->number];
			sp++;
			continue;
		case DW_OP_stack_value:
			if (i != nops - 1)
				return unsupported(s);
			continue;
		default:
			break;
		}
		if (sp < 1)
			return unsupported(s);
		a = stack[sp - 1];
		switch (atom) {
		case DW_OP_drop:
			sp--;
			continue;
		case DW_OP_deref:
			if (read_word(s, a, 8, &stack[sp - 1]))
				return -EFAULT;
			continue;
		case DW_OP_deref_size:
			if (op->number < 1 || op->number > 8)
				return unsupported(s);
			if (read_word(s, a, op->number, &stack[sp - 1]))
				return -EFAULT;
			continue;
		case DW_OP_plus_uconst:
			stack[sp - 1] = a + op->number;
			continue;
		case DW_OP_neg:
			stack[sp - 1] = -a;
			continue;
		case DW_OP_not:
			stack[sp - 1] = ~a;
			continue;
		case DW_OP_abs:
			stack[sp - 1] = (int64_t)a < 0 ? -a : a;
			continue;
		default:
			break;
		}
		if (sp < 2)
			return unsupported(s);
		b = stack[sp - 2]; /* the second entry: b OP a */
		sp--;
		switch (atom) {
		case DW_OP_swap:
			stack[sp - 1] = a;
			stack[sp++] = b;
			continue;
		case DW_OP_plus:
			v = b + a;
			break;
		case DW_OP_minus:
			v = b - a;
			break;
		case DW_OP_mul:
			v = b * a;
			break;
		case DW_OP_and:
			v = b & a;
			break;
		case DW_OP_or:
			v = b | a;
			break;
		case DW_OP_xor:
			v = b ^ a;
			break;
		case DW_OP_shl:
			v = a < 64 ? b << a : 0;
			break;
		case DW_OP_shr:
			v = a < 64 ? b >> a : 0;
			break;
		case DW_OP_shra:
			v = (uint64_t)((int64_t)b >> (a < 63 ? a : 63));
			break;
		case DW_OP_eq:
			v = b == a;
			break;
		case DW_OP_ne:
			v = b != a;
			break;
		case DW_OP_lt:
			v = (int64_t)b < (int64_t)a;
			break;
		case DW_OP_le:
			v = (int64_t)b <= (int64_t)a;
			break;
		case DW_OP_gt:
			v = (int64_t)b > (int64_t)a;
			break;
		case DW_OP_ge:
			v = (int64_t)b >= (int64_t)a;
			break;
		default:
			return unsupported(s);
		}
		stack[sp - 1] = v;
	}
	if (!sp)
		return unsupported(s);
	*out = stack[sp - 1];
	return 0;
}

/* The caller's value of one register; false when it has none (undefined). */
static int apply_rule(struct step *s, const struct rule *r, int reg, uint64_t *out, bool *known)
{
	uint64_t v;

	*known = true;
	switch (r->kind) {
	case RULE_UNDEFINED:
		*known = false;
		return 0;
	case RULE_SAME:
		if (!(s->regs->valid & (1u << reg))) {
			*known = false;
			return 0;
		}
		*out = s->regs->r[reg];
		return 0;
	case RULE_AT_CFA:
		return read_word(s, s->cfa + (uint64_t)r->offset, 8, out);
	case RULE_CFA_PLUS:
		*out = s->cfa + (uint64_t)r->offset;
		return 0;
	case RULE_REGISTER:
		if (reg_value(s, r->reg, &v))
			return -EINVAL;
		*out = v + (uint64_t)r->offset;
		return 0;
	case RULE_EXPR:
		if (evaluate(s, r->ops, r->nops, &v))
			return -EINVAL;
		return read_word(s, v, 8, out);
	case RULE_VAL_EXPR:
		return evaluate(s, r->ops, r->nops, out);
	}
	return unsupported(s);
}

/* One frame up by CFI: caller's registers into next. */
static int step_cfi(struct step *s, const struct frame_rules *fr, struct unwind_regs *next)
{
	bool known;
	uint64_t v;
	int reg;

	if (fr->cfa.kind == RULE_REGISTER) {
		if (reg_value(s, fr->cfa.reg, &v))
			return -EINVAL;
		s->cfa = v + (uint64_t)fr->cfa.offset;
	} else if (evaluate(s, fr->cfa.ops, fr->cfa.nops, &s->cfa)) {
		return -EINVAL;
	}
	next->valid = 0;
	for (reg = 0; reg < UNWIND_NR_REGS; reg++) {
		enum unwind_stop stop = s->stop;
		int err = apply_rule(s, &fr->regs[reg], reg, &v, &known);

		/*
		 * A register saved below the SP the thread was stopped at: an
		 * epilogue popped it, and GCC's CFI keeps its save rule to the
		 * function's end (push rbx ... pop rbx, then pop rbp: rbx still
		 * at CFA-24). Its value there is dead: the caller's is unknown,
		 * and the return address still leads on. Seen at about 1 in 40
		 * preemptions of -O2 code (test_unwind.py's spinner).
		 */
		if (err == -EFAULT && reg != fr->ra_reg && s->stop == UNWIND_STOP_UNREADABLE) {
			s->stop = stop;
			known = false;
		} else if (err) {
			return -EINVAL;
		}
		if (known) {
			next->r[reg] = v;
			next->valid |= 1u << reg;
		}
	}
	/* The return address column becomes the caller's IP. */
	if (fr->ra_reg != UNWIND_REG_RIP) {
		if (next->valid & (1u << fr->ra_reg)) {
			next->r[UNWIND_REG_RIP] = next->r[fr->ra_reg];
			next->valid |= 1u << UNWIND_REG_RIP;
		} else {
			next->valid &= ~(1u << UNWIND_REG_RIP);
		}
	}
	/* The psABI's CFA is the caller's SP, whatever the FDE says of RSP. */
	if (fr->regs[UNWIND_REG_RSP].kind == RULE_UNDEFINED ||
	    fr->regs[UNWIND_REG_RSP].kind == RULE_SAME) {
		next->r[UNWIND_REG_RSP] = s->cfa;
		next->valid |= 1u << UNWIND_REG_RSP;
	}
	return 0;
}

/*
 * One frame up by frame pointer: [rbp] is the caller's rbp, [rbp + 8] the
 * return address. Only an rbp inside the copy and above the SP is
 * followed; the registers a CFI frame would restore are lost.
 */
static int step_fp(struct step *s, struct unwind_regs *next)
{
	const struct unwind_regs *r = s->regs;
	uint64_t bp = r->r[UNWIND_REG_RBP], saved_bp, ra;

	if (!(r->valid & (1u << UNWIND_REG_RBP)) || bp < r->r[UNWIND_REG_RSP] || bp & 7 ||
	    bp < s->stack->start) {
		s->stop = UNWIND_STOP_NO_CFI;
		return -EINVAL;
	}
	if (read_word(s, bp, 8, &saved_bp) || read_word(s, bp + 8, 8, &ra))
		return -EFAULT;
	next->valid = (1u << UNWIND_REG_RBP) | (1u << UNWIND_REG_RSP) | (1u << UNWIND_REG_RIP);
	next->r[UNWIND_REG_RBP] = saved_bp;
	next->r[UNWIND_REG_RSP] = bp + 16;
	next->r[UNWIND_REG_RIP] = ra;
	return 0;
}

/*
 * The caller of cur into next, by the CFI of the code at cur's IP, else
 * by frame pointer where no CFI covers it. Sets res->stop and returns
 * false where unwinding ends.
 */
static bool step(struct unwinder *u, uint32_t pid, const struct proc_maps *maps,
		 const struct unwind_stack *stack, const struct unwind_regs *cur, bool *after_call,
		 struct unwind_regs *next, struct unwind_result *res, int *err)
{
	uint64_t ip = cur->r[UNWIND_REG_RIP], vaddr;
	const struct proc_map *map = procmaps__find(maps, ip);
	const struct frame_rules *fr = NULL;
	struct step s = { .regs = cur, .stack = stack };
	bool signal_frame = false;
	struct module *m = NULL;
	int found = -ENOENT;

	if (!map) {
		res->stop = UNWIND_STOP_NOT_CODE;
		return false;
	}
	*err = get_module(u, pid, map, &m);
	if (*err)
		return false;
	/*
	 * A return address may be just past a call that ends its function
	 * (a noreturn callee): the call's rules are those of the address before.
	 */
	if (m && m->unreadable) {
		res->stop = UNWIND_STOP_UNREADABLE;
		return false;
	}
	if (m && to_vaddr(m, map, ip - *after_call, &vaddr))
		found = find_rules(u, m, vaddr, &fr);
	if (!found) {
		if (step_cfi(&s, fr, next))
			goto stop;
		signal_frame = fr->signal_frame;
		if (!(next->valid & (1u << UNWIND_REG_RIP))) {
			res->stop = UNWIND_STOP_ROOT; /* _start, a thread's clone: no caller */
			return false;
		}
	} else if (found == -ENOENT) {
		if (step_fp(&s, next))
			goto stop;
		res->fp_frames++;
	} else {
		res->cfi_rejected = found == -EBADMSG;
		res->stop = UNWIND_STOP_BAD_CFI;
		return false;
	}
	/* A signal frame's caller was interrupted: its IP is no return address. */
	*after_call = !signal_frame;
	if (!next->r[UNWIND_REG_RIP]) {
		res->stop = UNWIND_STOP_ROOT;
		return false;
	}
	if (!(next->valid & (1u << UNWIND_REG_RSP))) {
		res->stop = UNWIND_STOP_UNREADABLE;
		return false;
	}
	/* The stack grows down: a caller's frame is above its callee's, but after a signal. */
	if (next->r[UNWIND_REG_RSP] <= cur->r[UNWIND_REG_RSP] && !signal_frame) {
		res->stop = UNWIND_STOP_LOOP;
		return false;
	}
	if (!procmaps__find(maps, next->r[UNWIND_REG_RIP])) {
		res->stop = UNWIND_STOP_NOT_CODE;
		return false;
	}
	return true;
stop:
	res->stop = s.stop;
	return false;
}

int unwinder__unwind(struct unwinder *u, uint32_t pid, const struct proc_maps *maps,
		     const struct unwind_regs *regs, const struct unwind_stack *stack,
		     uint64_t *pcs, size_t max_pcs, struct unwind_result *res)
{
	const uint32_t need = (1u << UNWIND_REG_RIP) | (1u << UNWIND_REG_RSP);
	struct unwind_regs frames[2];
	bool after_call = false; /* the IP is a return address, not where the thread stopped */
	size_t at = 0;
	int err = 0;

	*res = (struct unwind_result){ .stop = UNWIND_STOP_MAX_FRAMES };
#ifndef __x86_64__
	return -EOPNOTSUPP;
#endif
	if ((regs->valid & need) != need || !max_pcs)
		return -EINVAL;
	frames[0] = *regs;
	pcs[res->nr++] = regs->r[UNWIND_REG_RIP];
	/* One step past a full array, to tell a whole stack from one cut short. */
	while (step(u, pid, maps, stack, &frames[at], &after_call, &frames[!at], res, &err)) {
		at = !at;
		if (res->nr == max_pcs) {
			res->stop = UNWIND_STOP_MAX_FRAMES;
			return 0;
		}
		pcs[res->nr++] = frames[at].r[UNWIND_REG_RIP];
	}
	return err;
}
