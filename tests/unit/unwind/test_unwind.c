// SPDX-License-Identifier: GPL-2.0
/*
 * The unwinder on a child of this test blocked in nanosleep under a chain
 * of static functions: captured with ptrace as the BPF side will copy it,
 * unwound whole; cut short (and flagged, with only real frames) by a short
 * copy or a full array; the CFI cache bounded; a mapped file truncated
 * under it read without SIGBUS.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../integration/unwind/capture.h"
#include "lib/array.h"
#include "lib/clock.h"
#include "lib/inline_pool.h"
#include "lib/strpool.h"
#include "proc/procmaps.h"
#include "symbols/symbolizer.h"
#include "unwind/unwind.h"

#define MAX_FRAMES 128
#define STACK_COPY 65536

__attribute__((noipa)) static int child_nap(int s)
{
	struct timespec ts = { s, 0 };

	for (;;)
		nanosleep(&ts, NULL);
	return 0;
}

__attribute__((noipa)) static int child_c(int x)
{
	return child_nap(x) + 1;
}

__attribute__((noipa)) static int child_b(int x)
{
	return child_c(x) + 1;
}

__attribute__((noipa)) static int child_a(int x)
{
	return child_b(x) + 1;
}

static const char *const chain[] = { "child_nap", "child_c", "child_b", "child_a" };

struct blocked {
	pid_t pid;
	struct capture capture;
	struct proc_maps maps;
};

static bool in_nanosleep(pid_t pid)
{
	char path[64], buf[64] = "";
	FILE *f;
	int nr = -1;

	snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f))
		nr = atoi(buf);
	fclose(f);
	return nr == 230 || nr == 35; /* clock_nanosleep, nanosleep */
}

static void wait_blocked(struct blocked *b)
{
	int i;

	for (i = 0; i < 2000 && !in_nanosleep(b->pid); i++)
		usleep(5000);
	assert_true(in_nanosleep(b->pid));
	assert_int_equal(capture_thread(b->pid, STACK_COPY, &b->capture), 0);
	assert_int_equal(procmaps__read_pid(b->pid, &b->maps), 0);
}

/* A child that shares this binary's layout: its functions are ours. */
static int start_forked(void **state)
{
	struct blocked *b = calloc(1, sizeof(*b));

	if (!b)
		return -1;
	*state = b;
	b->pid = fork();
	if (b->pid < 0)
		return -1;
	if (!b->pid)
		_exit(child_a(1000));
	wait_blocked(b);
	return 0;
}

/* Run even when a test fails: no child outlives its test. */
static int stop(void **state)
{
	struct blocked *b = *state;

	if (b->pid > 0) {
		kill(b->pid, SIGKILL);
		waitpid(b->pid, NULL, 0);
	}
	free(b->capture.buf);
	procmaps__free(&b->maps);
	free(b);
	return 0;
}

static struct unwind_result unwind(struct unwinder *u, const struct blocked *b, size_t size,
				   uint64_t *pcs, size_t max)
{
	struct unwind_stack stack = b->capture.stack;
	struct unwind_result res;

	if (size < stack.size)
		stack.size = size;
	assert_int_equal(unwinder__unwind(u, (uint32_t)b->pid, &b->maps, &b->capture.regs, &stack,
					  pcs, max, &res),
			 0);
	return res;
}

/* The symbol names of pcs, as the symbolizer gives them. */
static void names(const struct blocked *b, const uint64_t *pcs, size_t nr, const char **out)
{
	static struct strpool *strings;
	static struct inline_pool *inlines;
	struct symbolizer *s;
	size_t i;

	if (!strings) {
		strings = strpool__new();
		inlines = inline_pool__new();
	}
	assert_int_equal(symbolizer__new(strings, inlines, NULL, &s), 0);
	for (i = 0; i < nr; i++) {
		struct frame f = { 0 };

		symbolizer__user(s, (uint32_t)b->pid, pcs[i], i == 0, clock__monotonic_ns(), &f);
		out[i] = f.sym ? f.sym : "?";
	}
	symbolizer__free(s);
}

/* The chain, in order and adjacent: what gdb shows. */
static void assert_chain(const char **sym, size_t nr)
{
	size_t i, j;

	for (i = 0; i + ARRAY_SIZE(chain) < nr; i++) {
		for (j = 0; j < ARRAY_SIZE(chain) && !strcmp(sym[i + j], chain[j]); j++)
			;
		if (j == ARRAY_SIZE(chain))
			return;
	}
	fail_msg("no child_nap..child_a chain in the %zu frames (leaf %s)", nr, nr ? sym[0] : "-");
}

static void whole_stack_to_start(void **state)
{
	uint64_t pcs[MAX_FRAMES];
	const char *sym[MAX_FRAMES];
	struct unwind_result res;
	struct unwinder *u;
	struct blocked *b = *state;

	assert_int_equal(unwinder__new(NULL, &u), 0);
	res = unwind(u, b, STACK_COPY, pcs, MAX_FRAMES);
	names(b, pcs, res.nr, sym);
	assert_int_equal(res.stop, UNWIND_STOP_ROOT);
	assert_string_equal(sym[res.nr - 1], "_start");
	assert_int_equal(pcs[0], b->capture.regs.r[UNWIND_REG_RIP]);
	assert_chain(sym, res.nr);
	assert_int_equal(res.fp_frames, 0);
	unwinder__free(u);
}

/*
 * Every copy shorter than the stack needs: stopped at the copy's end,
 * flagged, and what it has is the whole stack's first frames.
 */
static void short_copy_is_cut_short_with_real_frames(void **state)
{
	uint64_t whole[MAX_FRAMES], pcs[MAX_FRAMES];
	struct unwind_result all, res;
	struct unwinder *u;
	struct blocked *b = *state;
	size_t size;

	assert_int_equal(unwinder__new(NULL, &u), 0);
	all = unwind(u, b, STACK_COPY, whole, MAX_FRAMES);
	assert_int_equal(all.stop, UNWIND_STOP_ROOT);
	for (size = 0; size < 256; size += 8) {
		res = unwind(u, b, size, pcs, MAX_FRAMES);
		assert_int_equal(res.stop, UNWIND_STOP_STACK_END);
		assert_true(res.nr >= 1 && res.nr < all.nr);
		assert_memory_equal(pcs, whole, res.nr * sizeof(*pcs));
	}
	unwinder__free(u);
}

/* A full array is cut short too; one that just holds the stack is not. */
static void full_array_is_cut_short(void **state)
{
	uint64_t whole[MAX_FRAMES], pcs[MAX_FRAMES];
	struct unwind_result all, res;
	struct unwinder *u;
	struct blocked *b = *state;

	assert_int_equal(unwinder__new(NULL, &u), 0);
	all = unwind(u, b, STACK_COPY, whole, MAX_FRAMES);
	res = unwind(u, b, STACK_COPY, pcs, 3);
	assert_int_equal(res.stop, UNWIND_STOP_MAX_FRAMES);
	assert_int_equal(res.nr, 3);
	assert_memory_equal(pcs, whole, 3 * sizeof(*pcs));
	res = unwind(u, b, STACK_COPY, pcs, all.nr);
	assert_int_equal(res.stop, UNWIND_STOP_ROOT);
	assert_int_equal(res.nr, all.nr);
	res = unwind(u, b, STACK_COPY, pcs, all.nr - 1);
	assert_int_equal(res.stop, UNWIND_STOP_MAX_FRAMES);
	unwinder__free(u);
}

/*
 * One file's CFI kept at most: the stack still unwinds whole, reading the
 * files again; with room, the second stack reads none and hits the rules.
 */
static void cache_bounded_and_reused(void **state)
{
	uint64_t whole[MAX_FRAMES], pcs[MAX_FRAMES];
	struct unwinder_opts one = { .max_modules = 1 };
	struct unwinder_stats st;
	struct unwind_result all, res;
	struct unwinder *u;
	struct blocked *b = *state;

	assert_int_equal(unwinder__new(&one, &u), 0);
	all = unwind(u, b, STACK_COPY, whole, MAX_FRAMES);
	assert_int_equal(all.stop, UNWIND_STOP_ROOT);
	unwinder__stats(u, &st);
	assert_int_equal(st.modules_cached, 1);
	assert_true(st.modules_evicted >= 1);
	unwinder__free(u);

	assert_int_equal(unwinder__new(NULL, &u), 0);
	res = unwind(u, b, STACK_COPY, pcs, MAX_FRAMES);
	assert_int_equal(res.nr, all.nr);
	assert_memory_equal(pcs, whole, all.nr * sizeof(*pcs));
	unwinder__stats(u, &st);
	assert_int_equal(st.modules_evicted, 0);
	assert_int_equal(st.rule_hits, 0);
	res = unwind(u, b, STACK_COPY, pcs, MAX_FRAMES);
	unwinder__stats(u, &st);
	assert_int_equal(st.modules_opened, st.modules_cached);
	/* One lookup a frame: the last one's CFI says it has no caller. */
	assert_int_equal(st.rule_hits, all.nr);
	assert_memory_equal(pcs, whole, all.nr * sizeof(*pcs));
	unwinder__free(u);
}

static void copy_file(const char *from, int out)
{
	char buf[65536];
	int in = open(from, O_RDONLY);
	ssize_t n;

	assert_true(in >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	close(in);
}

/* The file offset of code in this process: where its copy holds it. */
static uint64_t own_file_offset(const void *code)
{
	uint64_t addr = (uint64_t)(uintptr_t)code, offset;
	const struct proc_map *m;
	struct proc_maps maps;

	assert_int_equal(procmaps__read_pid(getpid(), &maps), 0);
	m = procmaps__find(&maps, addr);
	assert_non_null(m);
	offset = addr - m->start + m->file_offset;
	procmaps__free(&maps);
	return offset;
}

/*
 * A file mapped by the traced process, truncated by its user (running
 * executables cannot be, libraries and other mappings can): what was read
 * of it stays good, and reading it through a mapping would SIGBUS us.
 * Here a child maps a copy of this binary; the registers say it stopped
 * at child_nap's first instruction, with a zero return address on its
 * stack. Read once, then truncated: the CFI read then still unwinds it
 * (and child_c, whose rules were not looked up before). A
 * new unwinder opens the truncated file, finds nothing, and says the
 * stack was cut short there rather than guess.
 */
static void truncated_file_no_sigbus(void **state)
{
	char path[] = "/tmp/offcpu-unwind-XXXXXX";
	uint64_t zero_ra[2] = { 0, 0 }, pcs[4];
	struct unwind_stack stack = { 0x10000, (const unsigned char *)zero_ra, sizeof(zero_ra) };
	struct unwind_regs regs = { .valid = (1u << UNWIND_REG_RIP) | (1u << UNWIND_REG_RSP) };
	struct blocked *b = *state;
	const struct proc_map *copy = NULL;
	struct unwind_result res;
	struct unwinder *u, *fresh;
	struct stat st;
	size_t i;
	int fd;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	copy_file("/proc/self/exe", fd);
	assert_int_equal(fstat(fd, &st), 0);
	b->pid = fork();
	assert_true(b->pid >= 0);
	if (!b->pid) {
		if (mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) ==
		    MAP_FAILED)
			_exit(1);
		for (;;)
			pause();
	}
	for (i = 0; i < 2000 && !copy; i++) {
		procmaps__free(&b->maps);
		assert_int_equal(procmaps__read_pid(b->pid, &b->maps), 0);
		for (size_t k = 0; k < b->maps.nr; k++)
			if (b->maps.maps[k].inode == st.st_ino)
				copy = &b->maps.maps[k];
		if (!copy)
			usleep(5000);
	}
	assert_non_null(copy);
	regs.r[UNWIND_REG_RIP] = copy->start + own_file_offset(child_nap);
	regs.r[UNWIND_REG_RSP] = stack.start;

	assert_int_equal(unwinder__new(NULL, &u), 0);
	assert_int_equal(
	    unwinder__unwind(u, (uint32_t)b->pid, &b->maps, &regs, &stack, pcs, 4, &res), 0);
	assert_int_equal(res.stop, UNWIND_STOP_ROOT);
	assert_int_equal(res.nr, 1);

	assert_int_equal(ftruncate(fd, 4096), 0);
	close(fd);
	/* Another function: its rules are not cached, its CFI is read again. */
	regs.r[UNWIND_REG_RIP] = copy->start + own_file_offset(child_c);
	assert_int_equal(
	    unwinder__unwind(u, (uint32_t)b->pid, &b->maps, &regs, &stack, pcs, 4, &res), 0);
	assert_int_equal(res.stop, UNWIND_STOP_ROOT);

	assert_int_equal(unwinder__new(NULL, &fresh), 0);
	assert_int_equal(
	    unwinder__unwind(fresh, (uint32_t)b->pid, &b->maps, &regs, &stack, pcs, 4, &res), 0);
	assert_int_equal(res.stop, UNWIND_STOP_UNREADABLE);
	assert_int_equal(res.nr, 1);
	unwinder__free(fresh);
	unwinder__free(u);
	unlink(path);
}

static int no_child(void **state)
{
	*state = calloc(1, sizeof(struct blocked));
	return *state ? 0 : -1;
}

static void stop_names(void **state)
{
	(void)state;
	assert_string_equal(unwind__stop_name(UNWIND_STOP_ROOT), "root");
	assert_string_equal(unwind__stop_name(UNWIND_STOP_STACK_END), "stack-end");
	assert_string_equal(unwind__stop_name(UNWIND_STOP_LOOP), "loop");
	assert_string_equal(unwind__stop_name((enum unwind_stop)99), "?");
}

static void refuses_registers_without_ip(void **state)
{
	struct unwind_regs regs = { .valid = 1u << UNWIND_REG_RSP };
	struct unwind_stack stack = { 0 };
	struct proc_maps maps = { 0 };
	struct unwind_result res;
	struct unwinder *u;
	uint64_t pcs[4];

	(void)state;
	assert_int_equal(unwinder__new(NULL, &u), 0);
	assert_int_equal(unwinder__unwind(u, 1, &maps, &regs, &stack, pcs, 4, &res), -EINVAL);
	regs.valid |= 1u << UNWIND_REG_RIP;
	assert_int_equal(unwinder__unwind(u, 1, &maps, &regs, &stack, pcs, 4, &res), 0);
	assert_int_equal(res.nr, 1);
	assert_int_equal(res.stop, UNWIND_STOP_NOT_CODE);
	unwinder__free(u);
	assert_int_equal(unwinder__new(&(struct unwinder_opts){ .rule_slots = 3 }, &u), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(whole_stack_to_start, start_forked, stop),
		cmocka_unit_test_setup_teardown(short_copy_is_cut_short_with_real_frames,
						start_forked, stop),
		cmocka_unit_test_setup_teardown(full_array_is_cut_short, start_forked, stop),
		cmocka_unit_test_setup_teardown(cache_bounded_and_reused, start_forked, stop),
		cmocka_unit_test_setup_teardown(truncated_file_no_sigbus, no_child, stop),
		cmocka_unit_test(stop_names),
		cmocka_unit_test(refuses_registers_without_ip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
