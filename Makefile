# SPDX-License-Identifier: GPL-2.0
#
# make          build ./offcpu
# make check    the layout check and the unit tests (also under ASan/UBSan):
#               no root, no network, about a minute after make
# make test     every test: layout, unit, fuzz and integration, after
#               make test-deps (tests/README.md: tiers, one suite, one test)
# make test-kernels  the integration checks on Debian 12's 6.1 kernels under qemu
# make bench    cost per context switch beside BCC offcputime (bench/run)
# make deps     install the Debian packages that building and running offcpu need
# make test-deps  install what only the tests need (packages, tests/browser's npm modules)
# make static   build/offcpu-static, every library linked in, to copy to another host
# make install  offcpu, its man pages and rule packs under DESTDIR/PREFIX (/usr/local)
# make V=1      show the commands

OUTPUT := build
CLANG ?= clang
BPFTOOL ?= bpftool
CC ?= gcc
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
ARCH := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/;s/ppc64le/powerpc/;s/s390x/s390/')

WARNINGS := -Wall -Wextra -Werror
CFLAGS ?= -O2 -g
ALL_CFLAGS := -std=gnu11 $(WARNINGS) $(CFLAGS) -MMD -MP -I$(OUTPUT) -Isrc -D_GNU_SOURCE
# libmicrohttpd: offcpu serve's HTTP server.
LDLIBS := -lbpf -ldw -lelf -lz -liberty -lm -lmicrohttpd -lpthread
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror -I$(OUTPUT) -Isrc

# src/ is one folder per stage of the pipeline (docs/design.md, "Source layout");
# everything but main.c also goes into the unit tests. Objects mirror it
# under $(OUTPUT)/obj.
STAGES := lib profile proc symbols python objects unwind classify trace output serve cli
LIB_SRCS := $(filter-out src/cli/main.c,$(foreach s,$(STAGES),$(wildcard src/$(s)/*.c)))
LIB_OBJS := $(patsubst src/%.c,$(OUTPUT)/obj/%.o,$(LIB_SRCS))
# tests/unit/ mirrors src/: tests/unit/STAGE/test_NAME.c.
UNIT_SRCS := $(wildcard tests/unit/*/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/unit/%,$(UNIT_SRCS))
UNIT_ASAN_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/asan/%,$(UNIT_SRCS))
SANITIZE := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
SYMBOLS_DIR := $(OUTPUT)/tests/symbols
SYMBOL_PROGRAMS := $(addprefix $(SYMBOLS_DIR)/,libsymlib.so symprog-pie symprog-nopie \
	symprog-debuglink symprog-stripped)
# Processes hostile to the symbolizer and the library whose debug link they aim.
HOSTILE_DIR := $(OUTPUT)/tests/hostile
HOSTILE_PROGRAMS := $(addprefix $(HOSTILE_DIR)/,hostile libhostile.so)
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,$(OUTPUT)/fuzz/fuzz_%,$(wildcard tests/fuzz/fuzz_*.c))
# Recursive (=): the unwinder's programs are defined further down.
WORKLOADS = $(OUTPUT)/tests/workload $(OUTPUT)/tests/workload-static $(OUTPUT)/tests/cxx_workload $(SYMBOL_PROGRAMS) \
	$(OUTPUT)/tests/open_waits \
	$(UNWIND_PROGRAMS) $(HOSTILE_PROGRAMS) $(OUTPUT)/tests/short_waits
# Workloads with known wakers (tests/integration/test_wakers.py).
WORKLOADS += $(OUTPUT)/tests/wake_workload $(OUTPUT)/tests/waker_nofp
# The open-wait race's stress (tests/integration/test_open_race.py).
WORKLOADS += $(OUTPUT)/tests/open_race
# Threads of known CPU time (tests/integration/test_oncpu.py).
WORKLOADS += $(OUTPUT)/tests/oncpu_workload
# Threads waiting on locks of every kind, held by threads of known names (test_objects.py).
WORKLOADS += $(OUTPUT)/tests/lock_workload
# Threads waiting on a pipe, a FIFO, sockets, an eventfd, an epoll, a flock (test_objects.py).
WORKLOADS += $(OUTPUT)/tests/fd_workload
# Threads waiting on kernel locks (an inode's i_rwsem, mmap_lock) a known thread holds.
WORKLOADS += $(OUTPUT)/tests/kernel_lock_workload
# PostgreSQL's own names of its wait events (tests/integration/test_postgres_events.py).
WORKLOADS += $(OUTPUT)/tests/pg_names.so
# test_offcpu.py's: LD_PRELOAD libraries that fail offcpu's calls or refuse O_TMPFILE, a
# process that retitles itself, one that lives 100 ms, one that dlopens a library late.
WORKLOADS += $(addprefix $(OUTPUT)/tests/,faults.so no_tmpfile.so retitle shortpoll liblatelib.so \
	latemain)

# Building and running offcpu: the compilers, bpftool, the libraries it
# links, and libc's debug symbols, which name glibc's lock functions for the
# wait classes (docs/wait-classes.md); liblzma and libbz2 for make static
# (libdw's own, not pulled in by libdw-dev alone).
DEB_PACKAGES := clang make gcc libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev libiberty-dev \
	libc6-dbg liblzma-dev libbz2-dev libmicrohttpd-dev
# Only the tests: cmocka, the C++ workload, BCC's offcputime and perf to
# compare with, PostgreSQL, go tool pprof, Chromium and node for the SVG,
# clang's fuzzer runtime, unshare, gdb, and Prometheus to scrape offcpu serve;
# qemu and busybox-static to boot the kernel matrix (tests/kernels/).
TEST_DEB_PACKAGES := g++ libcmocka-dev python3 libbpf-tools linux-perf postgresql-15 golang-go \
	chromium nodejs libclang-rt-14-dev util-linux gdb graphviz prometheus strace \
	qemu-system-x86 busybox-static

ifeq ($(V),1)
Q :=
msg =
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.PHONY: all check test test-build test-kernels test-deps bench bench-unwind deps clean install static
.DELETE_ON_ERROR:

all: offcpu

$(OUTPUT) $(OUTPUT)/tests:
	$(Q)mkdir -p $@

$(OUTPUT)/vmlinux.h: | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@

$(OUTPUT)/offcpu.bpf.o: src/bpf/offcpu.bpf.c $(wildcard src/bpf/*.h) src/offcpu.h $(OUTPUT)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/offcpu.skel.h: $(OUTPUT)/offcpu.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name offcpu_bpf > $@

# The flame graph's script, as a C string literal for output_svg.c; its
# comment lines stay in the source, not in every SVG.
$(OUTPUT)/flamegraph_js.inc: src/output/flamegraph.js | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)sed -e '/^[[:space:]]*\/\//d' -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $< > $@

# PostgreSQL's wait event names (rules/postgres-wait-events.tsv) built into
# pg_events.c, for a binary without the file beside it (make static's, copied
# alone): its lines as a C string literal, without the comments.
$(OUTPUT)/postgres_wait_events.inc: rules/postgres-wait-events.tsv | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q){ echo '""'; sed -e '/^#/d' -e '/^[[:space:]]*$$/d' -e 's/\\/\\\\/g' -e 's/"/\\"/g' \
		-e 's/\t/\\t/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; } > $@

# The same library is built three ways: plain (obj/), under ASan/UBSan
# (asan/obj/) and instrumented for libFuzzer (fuzz/obj/), each object once,
# then linked into every binary of its kind. output_svg.c includes the flame
# graph's script, tracer.c the skeleton, pg_events.c PostgreSQL's names.
OBJ_DIRS := $(OUTPUT)/obj $(OUTPUT)/asan/obj $(OUTPUT)/fuzz/obj
$(addsuffix /output/output_svg.o,$(OBJ_DIRS)): $(OUTPUT)/flamegraph_js.inc
$(addsuffix /trace/tracer.o,$(OBJ_DIRS)): $(OUTPUT)/offcpu.skel.h
$(addsuffix /classify/pg_events.o,$(OBJ_DIRS)): $(OUTPUT)/postgres_wait_events.inc

$(OUTPUT)/obj/%.o: src/%.c | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

ASAN_CFLAGS := $(ALL_CFLAGS) -O1 $(SANITIZE)
ASAN_OBJS := $(patsubst src/%.c,$(OUTPUT)/asan/obj/%.o,$(LIB_SRCS))
$(ASAN_OBJS) $(OUTPUT)/asan/obj/cli/main.o: $(OUTPUT)/asan/obj/%.o: src/%.c | $(OUTPUT)
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ASAN_CFLAGS) -c $< -o $@

# libFuzzer's coverage and the sanitizers in the library; the fuzzer's
# runtime (its main) only in the targets' link. Static pattern rules: make
# deletes the objects of a plain one after linking (intermediate files).
FUZZ_CFLAGS := -std=gnu11 -g -O1 -fno-sanitize-recover=all -MMD -MP -I$(OUTPUT) -Isrc -D_GNU_SOURCE
FUZZ_OBJS := $(patsubst src/%.c,$(OUTPUT)/fuzz/obj/%.o,$(LIB_SRCS))
$(FUZZ_OBJS): $(OUTPUT)/fuzz/obj/%.o: src/%.c | $(OUTPUT)
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined -c $< -o $@

offcpu: $(OUTPUT)/obj/cli/main.o $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $^ $(LDLIBS) -o $@

# Debian 12 ships every library offcpu links as a static archive too; libdw's
# own needs (liblzma, libbz2) come along. glibc static is fine: offcpu uses no
# NSS and no dlopen.
# Not libmicrohttpd: its .a needs GnuTLS's, which needs p11-kit's,
# which Debian 12 does not ship; the static binary has no offcpu serve.
STATIC_LDLIBS := $(filter-out -lmicrohttpd,$(LDLIBS)) -llzma -lbz2
STATIC_LIB_OBJS := $(filter-out $(OUTPUT)/obj/serve/server.o $(OUTPUT)/obj/serve/serve.o,$(LIB_OBJS))
$(OUTPUT)/obj/cli/main-static.o: src/cli/main.c $(OUTPUT)/offcpu.skel.h | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -DOFFCPU_STATIC -c $< -o $@

$(OUTPUT)/offcpu-static: $(OUTPUT)/obj/cli/main-static.o $(STATIC_LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -static $^ $(STATIC_LDLIBS) -o $@

static: $(OUTPUT)/offcpu-static

# What several unit tests share (tests/unit/NAME_fixtures.h across stages,
# tests/unit/STAGE/NAME_fixtures.h within one), an object for each build,
# linked into every unit test. Static pattern rules, as for the library.
UNIT_FIXTURES := $(wildcard tests/unit/*_fixtures.c tests/unit/*/*_fixtures.c)
UNIT_FIXTURE_OBJS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/unit/%.o,$(UNIT_FIXTURES))
UNIT_ASAN_FIXTURE_OBJS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/asan/%.o,$(UNIT_FIXTURES))
$(UNIT_FIXTURE_OBJS): $(OUTPUT)/tests/unit/%.o: tests/unit/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(UNIT_ASAN_FIXTURE_OBJS): $(OUTPUT)/tests/asan/%.o: tests/unit/%.c
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ASAN_CFLAGS) -c $< -o $@

# The headers a test's dependency file adds to $^ stay off the command line.
$(OUTPUT)/tests/unit/%: tests/unit/%.c $(LIB_OBJS) $(UNIT_FIXTURE_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(filter %.c %.o,$^) $(LDLIBS) -lcmocka -o $@

# The unit tests again, with the library under the sanitizers.
$(OUTPUT)/tests/asan/%: tests/unit/%.c $(ASAN_OBJS) $(UNIT_ASAN_FIXTURE_OBJS)
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ASAN_CFLAGS) $(filter %.c %.o,$^) $(LDLIBS) -lcmocka -o $@

# Built with frame pointers so its user stacks unwind through its own code.
$(OUTPUT)/tests/workload: tests/integration/workload.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 $(WARNINGS) -O1 -g -fno-omit-frame-pointer -fno-inline -pthread $< -o $@

$(OUTPUT)/tests/pg_names.so: tests/integration/pg_names.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 $(WARNINGS) -O1 -fPIC -shared $< -o $@

$(OUTPUT)/tests/wake_workload: tests/integration/wake_workload.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 $(WARNINGS) -O1 -g -fno-omit-frame-pointer -pthread $< -o $@

# A waker without frame pointers, as distributions build: its stack at a wakeup needs CFI.
$(OUTPUT)/tests/waker_nofp: tests/integration/waker_nofp.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 $(WARNINGS) -O2 -g -fomit-frame-pointer -pthread $< -o $@

# Static, to run alone in a chroot for the container-symlink test.
$(OUTPUT)/tests/workload-static: tests/integration/workload.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 $(WARNINGS) -O1 -g -fno-omit-frame-pointer -fno-inline -pthread -static $< -o $@

# Many short waits and a few long ones (tests/integration/test_accounting.py).
$(OUTPUT)/tests/short_waits: tests/integration/accounting/short_waits.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 $(WARNINGS) -O1 -g -fno-omit-frame-pointer -pthread $< -o $@

# Waits open at a recording's start or stop; built as Debian builds (no frame pointers).
$(OUTPUT)/tests/open_waits: tests/integration/open_waits.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 $(WARNINGS) -O2 -g -pthread $< -o $@

# The open-wait race: threads blocking ~100 us at a time; frame pointers for fp mode's walk.
$(OUTPUT)/tests/open_race: tests/integration/open_race.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 $(WARNINGS) -O1 -g -fno-omit-frame-pointer -pthread $< -o $@

# Threads of known CPU time; built as Debian builds (no frame pointers), so only dwarf
# mode unwinds them whole.
$(OUTPUT)/tests/oncpu_workload: tests/integration/oncpu/oncpu_workload.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 $(WARNINGS) -O2 -g -pthread $< -o $@

# test_offcpu.py's programs, with the flags it once compiled them with itself: -O1, no -g,
# no frame pointers (-O1 omits them).
$(OUTPUT)/tests/faults.so $(OUTPUT)/tests/no_tmpfile.so: $(OUTPUT)/tests/%.so: \
		tests/integration/%.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -shared -fPIC -O1 -Wall -Werror $< -o $@ -ldl

$(OUTPUT)/tests/liblatelib.so: tests/integration/latelib.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -shared -fPIC -O1 -Wall -Werror $< -o $@

$(OUTPUT)/tests/retitle $(OUTPUT)/tests/shortpoll: $(OUTPUT)/tests/%: \
		tests/integration/%.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -O1 -Wall -Werror $< -o $@

$(OUTPUT)/tests/latemain: tests/integration/latemain.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -O1 -Wall -Werror $< -o $@ -ldl

# Frame pointers, so fp mode's stacks reach the libc lock functions that tell a lock's kind.
$(OUTPUT)/tests/lock_workload: tests/integration/objects/lock_workload.cpp | $(OUTPUT)/tests
	$(call msg,CXX,$@)
	$(Q)$(CXX) -std=c++17 $(WARNINGS) -O1 -g -fno-omit-frame-pointer -pthread $< -o $@

$(OUTPUT)/tests/fd_workload: tests/integration/objects/fd_workload.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 $(WARNINGS) -O1 -g -fno-omit-frame-pointer -pthread $< -o $@

$(OUTPUT)/tests/kernel_lock_workload: tests/integration/objects/kernel_lock_workload.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 $(WARNINGS) -O1 -g -fno-omit-frame-pointer -pthread $< -o $@

# C++ with templates, for demangling.
$(OUTPUT)/tests/cxx_workload: tests/integration/cxx_workload.cpp | $(OUTPUT)/tests
	$(call msg,CXX,$@)
	$(Q)$(CXX) -std=c++17 $(WARNINGS) -O1 -g -fno-omit-frame-pointer -fno-inline $< -o $@

# The symbol tests' programs: a shared library; PIE and non-PIE executables
# with their DWARF; one stripped with a separate debug file found by
# .gnu_debuglink; one stripped with nothing left but .dynsym and .eh_frame.
SYMBOL_CFLAGS := -std=gnu11 $(WARNINGS) -O2 -g -fno-omit-frame-pointer
$(SYMBOLS_DIR):
	$(Q)mkdir -p $@

$(SYMBOLS_DIR)/libsymlib.so: tests/integration/symbols/symlib.c | $(SYMBOLS_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(SYMBOL_CFLAGS) -fPIC -shared $< -o $@

$(SYMBOLS_DIR)/symprog-pie: tests/integration/symbols/symprog.c $(SYMBOLS_DIR)/libsymlib.so
	$(call msg,CC,$@)
	$(Q)$(CC) $(SYMBOL_CFLAGS) -fPIE -pie $< -L$(SYMBOLS_DIR) -lsymlib '-Wl,-rpath,$$ORIGIN' -o $@

$(SYMBOLS_DIR)/symprog-nopie: tests/integration/symbols/symprog.c $(SYMBOLS_DIR)/libsymlib.so
	$(call msg,CC,$@)
	$(Q)$(CC) $(SYMBOL_CFLAGS) -fno-PIE -no-pie $< -L$(SYMBOLS_DIR) -lsymlib '-Wl,-rpath,$$ORIGIN' -o $@

$(SYMBOLS_DIR)/symprog-debuglink: $(SYMBOLS_DIR)/symprog-pie
	$(call msg,STRIP,$@)
	$(Q)objcopy --only-keep-debug $< $@.debug
	$(Q)strip --strip-all -o $@ $<
	$(Q)cd $(SYMBOLS_DIR) && objcopy --add-gnu-debuglink=symprog-debuglink.debug symprog-debuglink

$(SYMBOLS_DIR)/symprog-stripped: $(SYMBOLS_DIR)/symprog-pie
	$(call msg,STRIP,$@)
	$(Q)strip --strip-all -o $@ $<

# The unwinder's tests (tests/integration/unwind/): programs built with plain
# -O2, no frame pointers; a library with frame pointers and no unwind
# tables; one whose CFI is only in .debug_frame, moved to a separate debug
# file found by .gnu_debuglink; the probe that copies and unwinds stacks.
UNWIND_DIR := $(OUTPUT)/tests/unwind
UNWIND_CFLAGS := -O2 -g -pthread $(WARNINGS)
UNWIND_PROGRAMS := $(addprefix $(UNWIND_DIR)/,waiters waiters_fp cv_waiter spinner unwind_probe)
$(UNWIND_DIR):
	$(Q)mkdir -p $@

$(UNWIND_DIR)/libnocfi.so: tests/integration/unwind/nocfi_lib.c | $(UNWIND_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 $(UNWIND_CFLAGS) -fPIC -shared -fno-omit-frame-pointer \
		-fno-asynchronous-unwind-tables -fno-unwind-tables -g0 $< -o $@

$(UNWIND_DIR)/libdebugframe.so: tests/integration/unwind/debugframe_lib.c | $(UNWIND_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 $(UNWIND_CFLAGS) -fPIC -shared -fno-asynchronous-unwind-tables $< -o $@.full
	$(Q)objcopy --only-keep-debug $@.full $@.debug
	$(Q)strip --strip-debug -o $@ $@.full
	$(Q)cd $(UNWIND_DIR) && objcopy --add-gnu-debuglink=libdebugframe.so.debug libdebugframe.so

$(UNWIND_DIR)/waiters: tests/integration/unwind/waiters.c $(UNWIND_DIR)/libnocfi.so $(UNWIND_DIR)/libdebugframe.so
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 $(UNWIND_CFLAGS) $< -L$(UNWIND_DIR) -lnocfi -ldebugframe '-Wl,-rpath,$$ORIGIN' -o $@

# The same with frame pointers, for --call-graph fp (libc has none: the leaf's caller).
$(UNWIND_DIR)/waiters_fp: tests/integration/unwind/waiters.c $(UNWIND_DIR)/libnocfi.so $(UNWIND_DIR)/libdebugframe.so
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 $(UNWIND_CFLAGS) -fno-omit-frame-pointer $< -L$(UNWIND_DIR) -lnocfi -ldebugframe '-Wl,-rpath,$$ORIGIN' -o $@

$(UNWIND_DIR)/spinner: tests/integration/unwind/spinner.c | $(UNWIND_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 $(UNWIND_CFLAGS) $< -o $@

$(UNWIND_DIR)/cv_waiter: tests/integration/unwind/cv_waiter.cpp | $(UNWIND_DIR)
	$(call msg,CXX,$@)
	$(Q)$(CXX) -std=c++17 $(UNWIND_CFLAGS) $< -o $@

$(UNWIND_DIR)/unwind_probe: tests/integration/unwind/unwind_probe.c $(LIB_OBJS) | $(UNWIND_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $^ $(LDLIBS) -o $@
# A stripped library without a build ID: its debug file is found only by
# its .gnu_debuglink name and checked by CRC32.
$(HOSTILE_DIR):
	$(Q)mkdir -p $@

$(HOSTILE_DIR)/hostile: tests/integration/hostile/hostile.c | $(HOSTILE_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(SYMBOL_CFLAGS) $< -ldl -o $@

$(HOSTILE_DIR)/libhostile.so: tests/integration/hostile/hostile_lib.c | $(HOSTILE_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(SYMBOL_CFLAGS) -fPIC -shared -Wl,--build-id=none $< -o $@.full
	$(Q)objcopy --only-keep-debug $@.full $@.debug
	$(Q)strip --strip-all -o $@ $@.full
	$(Q)cd $(HOSTILE_DIR) && objcopy --add-gnu-debuglink=libhostile.so.debug libhostile.so
	$(Q)rm -f $@.full

# offcpu itself under ASan/UBSan and LeakSanitizer, for the soak test.
$(OUTPUT)/offcpu-asan: $(OUTPUT)/asan/obj/cli/main.o $(ASAN_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ASAN_CFLAGS) $^ $(LDLIBS) -o $@

# libFuzzer targets, one per parser of untrusted input (clang's runtime);
# their dependency files beside the objects, where bench/fuzz's
# build/fuzz/fuzz_* finds none.
$(OUTPUT)/fuzz:
	$(Q)mkdir -p $@

$(OUTPUT)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJS) | $(OUTPUT)/fuzz
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -MF $(OUTPUT)/fuzz/obj/$(@F).d -fsanitize=fuzzer,address,undefined \
		$(filter %.c %.o,$^) $(LDLIBS) -o $@

# The quick tier: nothing that needs root, the network or a package besides
# the build's and cmocka.
check: $(UNIT_BINS) $(UNIT_ASAN_BINS)
	$(Q)tests/run check

# What the tests need is installed first: the unit tests need cmocka to build.
test: test-deps
	$(Q)$(MAKE) --no-print-directory test-build
	$(Q)tests/run

# The kernel matrix (tests/kernels/): Debian 12's own 6.1 kernels, booted
# under qemu with TCG, an initramfs of busybox, the static offcpu and static
# workloads, the checks run inside (tests/kernels/test_kernels.py, which
# downloads the kernels into $(KERNELS_DIR)). Part of make test, last.
KERNELS_DIR := $(OUTPUT)/kernels
KERNELS_INITRAMFS := $(KERNELS_DIR)/initramfs.gz
KERNELS_WORKLOAD := $(OUTPUT)/tests/kernel_waits

$(KERNELS_WORKLOAD): tests/kernels/kernel_waits.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 $(WARNINGS) -O1 -g -fno-omit-frame-pointer -pthread -static $< -o $@

# The floor the guest measures offcpu's cost against, as make bench does.
KERNELS_EMPTY := $(OUTPUT)/bench/empty_switch-static

$(KERNELS_EMPTY): bench/empty_switch.c | $(OUTPUT)/bench
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -static $< $(STATIC_LDLIBS) -o $@

$(KERNELS_INITRAMFS): tests/kernels/initramfs tests/kernels/init tests/kernels/checks.sh \
		$(OUTPUT)/offcpu-static $(OUTPUT)/tests/workload-static $(KERNELS_WORKLOAD) \
		$(KERNELS_EMPTY) $(OUTPUT)/bench/empty_switch.bpf.o
	$(call msg,CPIO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)tests/kernels/initramfs $@ $(OUTPUT)/offcpu-static $(OUTPUT)/tests/workload-static \
		$(KERNELS_WORKLOAD) $(KERNELS_EMPTY) $(OUTPUT)/bench/empty_switch.bpf.o


test-kernels: test-deps $(KERNELS_INITRAMFS)
	$(Q)tests/run kernels

test-build: offcpu $(OUTPUT)/offcpu-asan $(UNIT_BINS) $(UNIT_ASAN_BINS) $(WORKLOADS) $(FUZZ_TARGETS) \
	$(KERNELS_INITRAMFS)

$(OUTPUT)/bench:
	$(Q)mkdir -p $@

$(OUTPUT)/bench/empty_switch.bpf.o: bench/empty_switch.bpf.c $(OUTPUT)/vmlinux.h | $(OUTPUT)/bench
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/bench/empty_all.bpf.o: bench/empty_all.bpf.c $(OUTPUT)/vmlinux.h | $(OUTPUT)/bench
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/bench/clocks.bpf.o: bench/clocks.bpf.c $(OUTPUT)/vmlinux.h | $(OUTPUT)/bench
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/bench/empty_switch: bench/empty_switch.c | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(LDLIBS) -o $@

$(OUTPUT)/bench/symbolize: bench/symbolize.c $(LIB_OBJS) | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $^ $(LDLIBS) -o $@

bench: offcpu $(OUTPUT)/bench/empty_switch $(OUTPUT)/bench/empty_switch.bpf.o \
		$(OUTPUT)/bench/empty_all.bpf.o $(OUTPUT)/bench/clocks.bpf.o $(OUTPUT)/bench/symbolize
	$(Q)bench/run
	$(Q)bench/kernel_leaf
	$(Q)$(OUTPUT)/bench/symbolize

# The two halves of unwinding without frame pointers (bench/unwinding): the
# BPF cost of copying user stacks, and the user-space CPU of unwinding them.
$(OUTPUT)/bench/stack_copy.bpf.o: bench/stack_copy.bpf.c $(OUTPUT)/vmlinux.h | $(OUTPUT)/bench
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/bench/stack_copy.skel.h: $(OUTPUT)/bench/stack_copy.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name stack_copy_bpf > $@

$(OUTPUT)/bench/stack_copy: bench/stack_copy.c $(OUTPUT)/bench/stack_copy.skel.h
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -I$(OUTPUT)/bench $< $(LDLIBS) -lpthread -o $@

$(OUTPUT)/bench/unwind: bench/unwind.c $(LIB_OBJS) | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $^ $(LDLIBS) -o $@

bench-unwind: $(OUTPUT)/bench/stack_copy $(OUTPUT)/bench/unwind $(UNWIND_PROGRAMS)
	$(Q)bench/unwinding

# go tool pprof reads the pprof output; Chromium, driven by playwright-core
# from the npm registry (pinned in tests/browser/package-lock.json), opens the SVG.
deps:
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(DEB_PACKAGES)

# Quiet and quick when everything is there, so that every make test can
# run it; Debian's nodejs has no npm, a NodeSource one has its own.
test-deps:
	$(Q)missing=; for p in $(TEST_DEB_PACKAGES); do \
		dpkg-query -W -f='$${db:Status-Status}' $$p 2>/dev/null | grep -qx installed || \
			missing="$$missing $$p"; \
	done; \
	command -v npm >/dev/null || missing="$$missing npm"; \
	if [ -n "$$missing" ]; then \
		echo "test-deps: installing$$missing"; \
		apt-get update && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; \
	fi
	$(Q)[ tests/browser/node_modules/.package-lock.json -nt tests/browser/package-lock.json ] || \
		(cd tests/browser && npm ci --no-audit --no-fund)

# The binary finds its packs at ../share/offcpu/rules from its own folder.
PREFIX ?= /usr/local
BINDIR := $(PREFIX)/bin
MAN1DIR := $(PREFIX)/share/man/man1
RULESDIR := $(PREFIX)/share/offcpu/rules

install: offcpu
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MAN1DIR) $(DESTDIR)$(RULESDIR)
	$(Q)install -m 0755 offcpu $(DESTDIR)$(BINDIR)/offcpu
	$(Q)install -m 0644 offcpu.1 offcpu-report.1 offcpu-serve.1 offcpu-snapshot.1 \
		$(DESTDIR)$(MAN1DIR)/
	$(Q)install -m 0644 rules/*.rules rules/*.tsv $(DESTDIR)$(RULESDIR)/

clean:
	$(Q)rm -rf $(OUTPUT) offcpu

-include $(wildcard $(addsuffix /*/*.d,$(OBJ_DIRS)) $(OUTPUT)/tests/unit/*.d \
	$(OUTPUT)/tests/unit/*/*.d $(OUTPUT)/tests/asan/*.d $(OUTPUT)/tests/asan/*/*.d \
	$(OUTPUT)/fuzz/obj/*.d $(OUTPUT)/bench/*.d)
