// SPDX-License-Identifier: GPL-2.0
// A traced process that points offcpu at hostile files, for the tests of
// what a traced user can make the symbolizer read. Run as an ordinary user (the tests use nobody); each mode sets
// its comm to the name given, says "ready" on stdout once it is set up,
// then blocks ROUNDS times for MS ms:
//
//   hostile truncate NAME LIB ROUNDS MS
//       dlopen LIB (libsymlib.so, with DWARF), wait inside it, then
//       truncate LIB to 0 bytes and pause until killed
//   hostile dlopen NAME LIB FUNC ROUNDS MS
//       dlopen LIB and wait inside FUNC(ms)
//   hostile frames NAME OFFSET ROUNDS MS FILE...
//       map each FILE executable and wait under fake frames, one return
//       address per file at its mapping + OFFSET + 1
//   hostile perfmap NAME LINES JUNK_BYTES ROUNDS MS
//       write /tmp/perf-PID.map (LINES valid lines, then JUNK_BYTES of
//       junk), then wait under a frame in anonymous executable memory
//       that the map does not name, at another address each time
//   hostile jitat NAME ADDR ROUNDS MS
//       map anonymous executable memory at ADDR (hex) and wait under a
//       frame in it, as a JIT whose perf map names ADDR would
//   hostile maps NAME MAPPINGS ROUNDS MS
//       make MAPPINGS executable mappings, then wait under a return
//       address in none of them, another each time
//
// Fake frames: x86-64 frame-pointer unwinding follows %rbp through
// {next frame, return address} pairs, so a chain built in memory is what
// the kernel reads as the user stack at the system call.
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct fake_frame {
	struct fake_frame *next;
	uint64_t ret;
};

/* nanosleep(ts) with %rbp at frames: fake_stack_sleep(frames, ts). */
long fake_stack_sleep(const struct fake_frame *frames, const struct timespec *ts);
__asm__(".text\n"
	".globl fake_stack_sleep\n"
	".type fake_stack_sleep, @function\n"
	"fake_stack_sleep:\n"
	"	push %rbp\n"
	"	mov %rdi, %rbp\n"
	"	mov %rsi, %rdi\n"
	"	xor %esi, %esi\n"
	"	mov $35, %eax\n" /* SYS_nanosleep */
	"	syscall\n"
	"	pop %rbp\n"
	"	ret\n"
	".size fake_stack_sleep, .-fake_stack_sleep\n");

static struct timespec ms_to_ts(int ms)
{
	return (struct timespec){ ms / 1000, (long)(ms % 1000) * 1000000L };
}

static void ready(const char *name)
{
	prctl(PR_SET_NAME, name);
	printf("ready\n");
	fflush(stdout);
}

static void *open_library(const char *path, const char *func, void (**fn)(int))
{
	void *lib = dlopen(path, RTLD_NOW);

	if (!lib) {
		fprintf(stderr, "hostile: %s\n", dlerror());
		exit(1);
	}
	*fn = (void (*)(int))dlsym(lib, func);
	if (!*fn) {
		fprintf(stderr, "hostile: no %s in %s\n", func, path);
		exit(1);
	}
	return lib;
}

static int run_truncate(const char *name, const char *path, int rounds, int ms)
{
	void (*wait)(int);
	int i;

	open_library(path, "symlib_wait", &wait);
	ready(name);
	for (i = 0; i < rounds; i++)
		wait(ms);
	/* Every page of it offcpu may have mapped now lies past the end of the file. */
	if (truncate(path, 0)) {
		perror("hostile: truncate");
		return 1;
	}
	for (;;)
		pause();
}

static int run_dlopen(const char *name, const char *path, const char *func, int rounds, int ms)
{
	void (*wait)(int);
	int i;

	open_library(path, func, &wait);
	ready(name);
	for (i = 0; i < rounds; i++)
		wait(ms);
	return 0;
}

static void *map_executable(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	void *at;

	if (fd < 0 || fstat(fd, &st)) {
		perror(path);
		exit(1);
	}
	at = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (at == MAP_FAILED) {
		perror("hostile: mmap");
		exit(1);
	}
	close(fd);
	return at;
}

static int run_frames(const char *name, uint64_t offset, int rounds, int ms, int nr, char **paths)
{
	struct fake_frame *frames = calloc((size_t)nr, sizeof(*frames));
	struct timespec ts = ms_to_ts(ms);
	int i;

	if (!frames)
		return 1;
	for (i = 0; i < nr; i++) {
		frames[i].ret = (uint64_t)(uintptr_t)map_executable(paths[i]) + offset + 1;
		frames[i].next = i + 1 < nr ? &frames[i + 1] : NULL;
	}
	ready(name);
	for (i = 0; i < rounds; i++)
		fake_stack_sleep(frames, &ts);
	return 0;
}

/* 1 MiB of anonymous executable memory, as a JIT has. */
#define JIT_BYTES (1 << 20)

static int run_perfmap(const char *name, long lines, long junk, int rounds, int ms)
{
	unsigned char *code =
	    mmap(NULL, JIT_BYTES, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct timespec ts = ms_to_ts(ms);
	struct fake_frame frame = { 0 };
	char path[64];
	FILE *map;
	long i;

	if (code == MAP_FAILED)
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	map = fopen(path, "w");
	if (!map)
		return 1;
	/* Symbols far away from the code: no stack address is in any of them. */
	for (i = 0; i < lines; i++)
		fprintf(map, "%lx 10 hostile_jit_function_number_%ld\n", 0x100000000L + i * 0x100,
			i);
	for (i = 0; i < junk; i++)
		fputc(i % 61 == 60 ? '\n' : 'x', map);
	fclose(map);
	ready(name);
	for (i = 0; i < rounds; i++) {
		frame.ret = (uint64_t)(uintptr_t)code + (uint64_t)(i * 16 % JIT_BYTES) + 1;
		fake_stack_sleep(&frame, &ts);
	}
	unlink(path);
	return 0;
}

static int run_jitat(const char *name, uint64_t addr, int rounds, int ms)
{
	void *code = mmap((void *)(uintptr_t)addr, JIT_BYTES, PROT_READ | PROT_EXEC,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	struct timespec ts = ms_to_ts(ms);
	struct fake_frame frame = { 0 };
	int i;

	if (code != (void *)(uintptr_t)addr)
		return 1;
	frame.ret = addr + 0x10 + 1;
	ready(name);
	for (i = 0; i < rounds; i++)
		fake_stack_sleep(&frame, &ts);
	return 0;
}

static int run_maps(const char *name, long nr, int rounds, int ms)
{
	long page = sysconf(_SC_PAGESIZE), i;
	struct timespec ts = ms_to_ts(ms);
	struct fake_frame frame = { 0 };
	/* Every other page executable: neighbours that differ never merge into one mapping. */
	unsigned char *area =
	    mmap(NULL, (size_t)(2 * nr * page), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (area == MAP_FAILED)
		return 1;
	for (i = 0; i < nr; i++) {
		if (mprotect(area + 2 * i * page, (size_t)page, PROT_READ | PROT_EXEC)) {
			perror("hostile: mprotect");
			return 1;
		}
	}
	ready(name);
	for (i = 0; i < rounds; i++) {
		/* Low memory this process never maps. */
		frame.ret = 0x8000 + (uint64_t)(i * 16 % 0x7000) + 1;
		fake_stack_sleep(&frame, &ts);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "truncate"))
		return run_truncate(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]));
	if (argc == 7 && !strcmp(argv[1], "dlopen"))
		return run_dlopen(argv[2], argv[3], argv[4], atoi(argv[5]), atoi(argv[6]));
	if (argc >= 7 && !strcmp(argv[1], "frames"))
		return run_frames(argv[2], strtoull(argv[3], NULL, 0), atoi(argv[4]), atoi(argv[5]),
				  argc - 6, argv + 6);
	if (argc == 7 && !strcmp(argv[1], "perfmap"))
		return run_perfmap(argv[2], atol(argv[3]), atol(argv[4]), atoi(argv[5]),
				   atoi(argv[6]));
	if (argc == 6 && !strcmp(argv[1], "jitat"))
		return run_jitat(argv[2], strtoull(argv[3], NULL, 16), atoi(argv[4]), atoi(argv[5]));
	if (argc == 6 && !strcmp(argv[1], "maps"))
		return run_maps(argv[2], atol(argv[3]), atoi(argv[4]), atoi(argv[5]));
	fprintf(stderr, "usage: see the comment at the top of hostile.c\n");
	return 2;
}
