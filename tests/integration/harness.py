# SPDX-License-Identifier: GPL-2.0
"""The integration suites' harness: where offcpu and the workloads are,
running offcpu and reading what it wrote, cgroups, the hostile programs,
pprof and the reports, and run_suite, which runs a suite's tests.

The suites import it as t (test_offcpu.py the names it uses); none of it
is a test.
"""
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OFFCPU = os.path.join(ROOT, "offcpu")
OFFCPU_ASAN = os.path.join(ROOT, "build", "offcpu-asan")
WORKLOAD = os.path.join(ROOT, "build", "tests", "workload")
SYMBOLS = os.path.join(ROOT, "build", "tests", "symbols")
TMP = tempfile.mkdtemp(prefix="offcpu-test-")

# Voluntary waits: what the workload times around its blocking calls.
BLOCKED_STATES = {"interruptible", "uninterruptible", "idle"}
KTHREAD_COMMS = re.compile(r"^(kworker/|ksoftirqd/|rcu_|migration/|kcompactd|kthreadd|khugepaged)")


def run(args, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 120)
    return subprocess.run(args, **kw)


BROWSER = os.path.join(ROOT, "tests", "browser")


def node(args, **kw):
    """node on a tests/browser script. Its modules (playwright-core,
    speedscope) are npm's, not Debian's, in tests/browser/node_modules,
    which git does not hold: a fresh checkout or worktree has none, and
    only make test ran make test-deps. A suite run alone installs them the
    same way, and fails saying so if that cannot."""
    if not os.path.isdir(os.path.join(BROWSER, "node_modules", "playwright-core")):
        r = run(["make", "-s", "-C", ROOT, "test-deps"], timeout=1800)
        assert os.path.isdir(os.path.join(BROWSER, "node_modules", "playwright-core")), \
            "make test-deps did not install tests/browser's modules: %s%s" % (r.stdout, r.stderr)
    return run(["node"] + args, **kw)


def read_json_lines(path):
    with open(path) as f:
        records = [json.loads(line) for line in f if line.strip()]
    assert records, "empty output"
    assert records[-1]["type"] == "stats", "last line is not the stats record"
    waits = [r for r in records if r["type"] == "offcpu"]
    check_named_inside_symbols(waits)
    return waits, records[-1]


SYMBOL_SIZES = {}


def debug_files(path):
    """The separate debug files binutils would use for path."""
    found = []
    m = re.search(r"Build ID: ([0-9a-f]+)", run(["readelf", "-n", path], errors="replace").stdout)
    if m:
        found.append("/usr/lib/debug/.build-id/%s/%s.debug" % (m.group(1)[:2], m.group(1)[2:]))
    r = run(["readelf", "--string-dump=.gnu_debuglink", path], errors="replace")
    m = re.search(r"\]\s+(\S+)", r.stdout)
    if m:
        found.append(os.path.join(os.path.dirname(path), m.group(1)))
    return [f for f in found if os.path.isfile(f)]


def symbol_sizes(path):
    """Function name (demangled, unversioned) -> the sizes nm gives it, in path
    and in its debug files."""
    if path not in SYMBOL_SIZES:
        sizes = {}
        for source in [path] + debug_files(path):
            for dynamic in ([], ["-D"]):
                r = run(["nm", "-S", "-C", "--defined-only"] + dynamic + [source],
                        errors="replace")
                for line in r.stdout.splitlines():
                    m = re.match(r"^[0-9a-f]+ ([0-9a-f]+) [TtWwi] (.+)$", line)
                    if m:
                        name = m.group(2).split("@")[0]
                        sizes.setdefault(name, []).append(int(m.group(1), 16))
        SYMBOL_SIZES[path] = sizes
    return SYMBOL_SIZES[path]


def check_named_inside_symbols(waits):
    """Across every test: a user frame is named only by a symbol that holds it.

    The leaf is where the thread stopped; every other frame is a return
    address, whose call is the instruction before it: that is what the
    symbolizer names (addr - 1), so a call that ends its function (a
    noreturn callee) gives off == size, and is still inside.
    """
    for w in waits:
        for depth, f in enumerate(w["user_stack"]):
            sym, module = f.get("sym"), f.get("module", "")
            # Unwind-table names ("lib!0x..."), perf maps, the vdso and files
            # gone or in another namespace have no file here for nm to read.
            if (not sym or re.match(r"^.+!0x[0-9a-f]+$", sym) or
                    not module.startswith("/") or module.startswith("/tmp/perf-") or
                    not os.path.isfile(module)):
                continue
            sizes = symbol_sizes(module).get(sym)
            assert sizes, "%s: frame named %s, which nm does not know" % (module, sym)
            named = f["off"] if depth == 0 else f["off"] - 1
            assert any(0 <= named < size for size in sizes), \
                "%s: %s+%d is outside the symbol (sizes %s)" % (module, sym, f["off"], sizes)


def wait_until(predicate, timeout, what):
    """predicate() polled every 20 ms until it is true (returned), failing
    with what after timeout seconds: a wait on an event, where a fixed
    sleep was too short on a loaded machine and too long on an idle one.
    what may be a function, called at the failure: the state it names then
    (a log read to its end), not when the wait began."""
    value = poll_until(predicate, timeout)
    if not value:
        raise AssertionError("not in %g s: %s" % (timeout, what() if callable(what) else what))
    return value


def poll_until(predicate, timeout):
    """predicate() polled every 20 ms until it is true or timeout seconds
    have passed; its last value. For an event that may never come and need
    not (a count that reaches n unless the kernel hid some of its waits),
    the assertion after it saying what was wrong."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.02)


def perf_events_open(pid, n=1):
    """How many perf_event fds process pid holds, once it holds n."""
    def count():
        found = 0
        try:
            for fd in os.listdir("/proc/%d/fd" % pid):
                try:
                    if os.readlink("/proc/%d/fd/%s" % (pid, fd)) == "anon_inode:[perf_event]":
                        found += 1
                except OSError:
                    pass
        except OSError:
            pass
        return found if found >= n else 0
    return count


def trace_json(args, seconds="1s"):
    out = os.path.join(TMP, "trace-%d.json" % time.monotonic_ns())
    r = run([OFFCPU, "-d", seconds, "-f", "json", "-o", out] + args)
    assert r.returncode == 0, "offcpu failed: %d %s" % (r.returncode, r.stderr)
    return read_json_lines(out)


def start_tracer(args, binary=OFFCPU, **popen_args):
    """offcpu in the background, returned once its programs are attached
    (and its capabilities dropped): -v says so on stderr. A fixed sleep was
    too short on a loaded machine."""
    p = subprocess.Popen([binary, "-v"] + args, stderr=subprocess.PIPE, text=True,
                         **popen_args)
    # -v's routine lines (a CPython found in a process running at the
    # start) may come first. Reading to EOF after a first line that was not
    # "tracing;" hung a full run: offcpu was tracing, for 13 minutes.
    said = []
    for line in p.stderr:
        if line.startswith("offcpu: tracing;"):
            return p
        said.append(line)
    p.kill()
    p.communicate()
    raise AssertionError("offcpu did not start tracing: " + "".join(said))


def finish_tracer(p, timeout):
    """p.communicate(timeout), but a tracer that does not exit in time is
    looked at (its threads' stacks by gdb, its state and RSS) and killed, so
    that the failure says where it was and no orphan traces on under the
    later tests (one ran 13 minutes into a full run, growing to 3.5 GiB)."""
    try:
        return p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        where = where_is(p.pid)
        p.kill()
        p.communicate()
        raise AssertionError("offcpu did not exit in %d s: %s" % (timeout, where))


def where_is(pid):
    """A process's state, RSS and its threads' stacks, as gdb prints them."""
    status = ""
    try:
        with open("/proc/%d/status" % pid) as f:
            status = " ".join(l.strip() for l in f if l.startswith(("State", "VmRSS")))
    except OSError:
        pass
    bt = run(["gdb", "-q", "-batch", "-p", str(pid), "-ex", "thread apply all bt 12"])
    frames = [l for l in bt.stdout.splitlines() if l.startswith(("#", "Thread"))]
    return "(%s) %s" % (status, " | ".join(frames[:40]))


def run_command_traced(args, command):
    """offcpu ARGS -- COMMAND for tests that count the command's waits.

    This VM's kernel delivers no sched_switch away from its init's threads,
    so the thread switched in after one of them has its switch-in hidden:
    offcpu recovers that wait from the kernel's own stamp of the switch
    (switch_in_recovered), so one recording is enough. Before, such a wait
    was only counted (switch_in_unseen) and the recording was taken
    again."""
    return run([OFFCPU, "--stats"] + args + ["--"] + command)


def recovered(wait):
    """A wait whose switch-in the kernel hid, recovered at the thread's next
    switch-out: its state and duration, but no stacks (gone by then)."""
    return not wait["kernel_stack"] and not wait["user_stack"]


def user_syms(wait):
    return [f.get("sym") for f in wait["user_stack"]]


# --- cgroups --------------------------------------------------------------------------------------

def cgroup2_root():
    with open("/proc/self/mounts") as f:
        for line in f:
            fields = line.split()
            if fields[2] == "cgroup2":
                return fields[1]
    raise AssertionError("no cgroup2 mount on this machine")


def move_to_cgroup(path, pid):
    with open(os.path.join(path, "cgroup.procs"), "w") as f:
        f.write(str(pid))


def remove_cgroup(path):
    """Kills what a churn left in the cgroup (a shell's last child may still
    be running or exiting) and removes it once it is empty."""
    for _ in range(50):
        for line in open(os.path.join(path, "cgroup.procs")):
            try:
                os.kill(int(line), signal.SIGKILL)
            except OSError:
                pass
        try:
            os.rmdir(path)
            return
        except OSError:
            time.sleep(0.1)
    os.rmdir(path)


def make_cgroups(*names):
    """Nested cgroup v2 directories under the root, made in order; returned
    with the root's path first."""
    root = cgroup2_root()
    paths = [os.path.join(root, name) for name in names]
    for path in paths:
        os.mkdir(path)
    return root, paths


def remove_cgroups(paths):
    for path in reversed(paths):
        if os.path.isdir(path):
            os.rmdir(path)


# --- PostgreSQL ---------------------------------------------------------------------------------

PG_BIN = "/usr/lib/postgresql/15/bin"


def as_postgres(args, **kw):
    return run(["runuser", "-u", "postgres", "--"] + args, **kw)


def pg_client_backends(data):
    """How many client backends the cluster in directory data has: its
    postmaster's children titled for a user and a database ("postgres:
    postgres postgres [local] ..."), not those of another cluster."""
    with open(os.path.join(data, "postmaster.pid")) as f:
        postmaster = f.readline().strip()
    n = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[1] != postmaster:
                    continue
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                n += f.read().startswith(b"postgres: postgres postgres ")
        except OSError:
            pass
    return n


# --- hostile files, names and paths ---------------------------------------------------------------
# What a user's process points offcpu at, run as nobody beside offcpu.

HOSTILE_DIR = os.path.join(ROOT, "build", "tests", "hostile")
HOSTILE = os.path.join(HOSTILE_DIR, "hostile")
NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


def nobody_dir():
    """A directory of nobody's own, where its files go."""
    d = tempfile.mkdtemp(prefix="offcpu-hostile-")
    os.chown(d, 65534, 65534)
    return d


def nobody_copy(source, d, name=None):
    path = os.path.join(d, name or os.path.basename(source))
    shutil.copy(source, path)
    os.chown(path, 65534, 65534)
    return path


def start_hostile(args):
    """tests/integration/hostile/hostile as nobody, returned once it is set up."""
    p = subprocess.Popen(NOBODY + [HOSTILE] + args, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    assert line == "ready\n", "hostile %s: %r" % (args, line)
    return p


def stop(p):
    p.kill()
    p.wait()


def peak_rss_kib(pid):
    """VmHWM: the peak of this process image alone. (A child's ru_maxrss is
    at least its parent's RSS when it was forked, this test's included.)"""
    try:
        with open("/proc/%d/status" % pid) as f:
            m = re.search(r"^VmHWM:\s+(\d+)", f.read(), re.M)
        return int(m.group(1)) if m else 0
    except OSError:
        return 0


def offcpu_measured(args, timeout=60, env=None):
    """offcpu ARGS to its end, and what it cost: (status, stderr, CPU seconds,
    peak RSS in KiB, as last seen before it exited). Killed, and status -9,
    if it outlives timeout."""
    p = subprocess.Popen([OFFCPU] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, env=env)
    deadline = time.monotonic() + timeout
    rss = 0
    while True:
        rss = max(rss, peak_rss_kib(p.pid))
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            p.kill()
            _, status, usage = os.wait4(p.pid, 0)
            break
        time.sleep(0.02)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, p.stderr.read(), usage.ru_utime + usage.ru_stime, rss


def elf_header(phnum=0, shoff=0, shnum=0, shstrndx=0):
    """An ELF64 little-endian x86-64 shared object's header, program headers right after it."""
    return struct.pack("<16sHHIQQQIHHHHHH", b"\x7fELF\x02\x01\x01" + bytes(9), 3, 62, 1, 0,
                       64 if phnum else 0, shoff, 0, 64, 56, phnum, 64, shnum, shstrndx)


def section_header(name=0, kind=0, flags=0, addr=0, offset=0, size=0, link=0, info=0, align=1,
                   entsize=0):
    return struct.pack("<IIQQQQIIQQ", name, kind, flags, addr, offset, size, link, info, align,
                       entsize)


def write_elf_with_symbols(path, names, strtab=None):
    """An ELF file mapped whole at address 0 (one PT_LOAD), with one 16-byte
    function symbol a name, from 0x1000 on. names are offsets into strtab
    when it is given, else strings."""
    if strtab is None:
        strtab, offsets = b"\0", []
        for name in names:
            offsets.append(len(strtab))
            strtab += name.encode() + b"\0"
    else:
        offsets = names
    text = 0x1000
    text_size = 16 * len(offsets)
    symtab = bytes(24) + b"".join(struct.pack("<IBBHQQ", o, 0x12, 0, 1, text + 16 * i, 16)
                                  for i, o in enumerate(offsets))
    shstrtab = b"\0.text\0.symtab\0.strtab\0.shstrtab\0"
    symtab_at = text + text_size
    strtab_at = symtab_at + len(symtab)
    shstrtab_at = strtab_at + len(strtab)
    shoff = (shstrtab_at + len(shstrtab) + 7) & ~7
    end = shoff + 5 * 64
    phdr = struct.pack("<IIQQQQQQ", 1, 5, 0, 0, 0, end, end, 0x1000)
    with open(path, "wb") as f:
        f.write(elf_header(phnum=1, shoff=shoff, shnum=5, shstrndx=4) + phdr)
        f.seek(symtab_at)
        f.write(symtab + strtab + shstrtab)
        f.seek(shoff)
        f.write(section_header() +
                section_header(1, 1, 6, text, text, text_size, align=16) +
                section_header(7, 2, 0, 0, symtab_at, len(symtab), 3, 1, 8, 24) +
                section_header(15, 3, 0, 0, strtab_at, len(strtab)) +
                section_header(23, 3, 0, 0, shstrtab_at, len(shstrtab)))
    os.chown(path, 65534, 65534)


# --- pprof, svg and offcpu report -----------------------------------------------------------------

def go_pprof(args):
    # pprof keeps state under $HOME; a throwaway one keeps the tests apart from the user's.
    env = dict(os.environ, HOME=TMP, GOCACHE=os.path.join(TMP, "gocache"))
    r = run(["go", "tool", "pprof"] + args, env=env)
    assert r.returncode == 0, "go tool pprof %s: %s" % (args, r.stderr)
    return r.stdout


def parse_pprof_raw(text):
    """go tool pprof -raw: samples with their values and labels, locations, mappings."""
    samples, locations, mappings = [], {}, []
    section = None
    for line in text.splitlines():
        if line.startswith("Samples:"):
            section = "samples"
            continue
        if line.startswith("Locations"):
            section = "locations"
            continue
        if line.startswith("Mappings"):
            section = "mappings"
            continue
        if section == "samples":
            # A third value, runq/nanoseconds: the run-queue time after the wakeup.
            m = re.match(r"^\s+(\d+)\s+(\d+)(?:\s+(\d+))?: ([\d ]*)$", line)
            if m:
                samples.append({"count": int(m.group(1)), "ns": int(m.group(2)),
                                "runq_ns": int(m.group(3) or 0),
                                "locations": [int(x) for x in m.group(4).split()],
                                "labels": {}})
            elif samples and line.strip():
                for key, value in re.findall(r"([a-z.]+):\[([^\]]*)\]", line):
                    samples[-1]["labels"][key] = value
        elif section == "locations":
            # A pseudo-location ("[no stack]": a recovered wait) has no mapping.
            m = re.match(r"^\s+(\d+): (0x[0-9a-f]+) (?:M=(\d+) )?(.*) \S*:\d+ s=\d+", line)
            if m:
                locations[int(m.group(1))] = {"mapping": int(m.group(3) or 0),
                                              "functions": [m.group(4)]}
            else:
                m = re.match(r"^\s+(.*) \S*:\d+ s=\d+", line)
                if m and locations:
                    locations[max(locations)]["functions"].append(m.group(1))
        elif section == "mappings" and line.strip():
            mappings.append(line)
    return samples, locations, mappings


def elf_build_id(path):
    r = run(["readelf", "-n", path])
    m = re.search(r"Build ID: ([0-9a-f]+)", r.stdout)
    assert m, "no build ID in %s" % path
    return m.group(1)


def pb_fields(data):
    """One protocol buffer message: [(field number, int or bytes)]."""
    fields, at = [], 0

    def varint():
        nonlocal at
        value = shift = 0
        while True:
            byte = data[at]
            at += 1
            value |= (byte & 0x7f) << shift
            shift += 7
            if byte < 0x80:
                return value

    while at < len(data):
        key = varint()
        if key & 7 == 0:
            fields.append((key >> 3, varint()))
        elif key & 7 == 2:
            n = varint()
            fields.append((key >> 3, data[at:at + n]))
            at += n
        else:
            raise AssertionError("wire type %d" % (key & 7))
    return fields


def pb_varints(values):
    """A repeated scalar field: packed (bytes), or one varint per field."""
    out = []
    for v in values:
        if isinstance(v, int):
            out.append(v)
            continue
        value = shift = 0
        for byte in v:
            value |= (byte & 0x7f) << shift
            shift += 7
            if byte < 0x80:
                out.append(value)
                value = shift = 0
    return out


def report_of(recording, extension, args=()):
    out = os.path.join(TMP, "report-%d%s" % (time.monotonic_ns(), extension))
    r = run([OFFCPU, "report", "-o", out] + list(args) + [recording])
    assert r.returncode == 0, "report %s: %s" % (extension, r.stderr)
    assert r.stderr == "", r.stderr
    return out


def folded_total(path):
    return sum(int(line.rsplit(" ", 1)[1]) for line in open(path))


def svg_total(path):
    text = open(path).read()
    return int(re.search(r'<svg [^>]*data-total="(\d+)"', text).group(1))


# --- the runner -----------------------------------------------------------------------------------

class Skip(Exception):
    """A test that cannot run here (what it needs is not installed): run_suite
    says why and counts it failed, never passed."""


def run_suite(namespace, setup=None, cleanup=None):
    """Runs the test_* functions of a suite's globals (names on the command
    line pick those containing one); prints "N passed, N failed". setup runs
    before the first test (its failure is printed; the tests that need what
    it made fail), cleanup after the last, however they ended."""
    if os.geteuid() != 0:
        print("integration tests need root (they load BPF programs)")
        print("0 passed, 1 failed")
        return 1
    tests = [(n, f) for n, f in namespace.items() if n.startswith("test_") and callable(f)]
    if len(sys.argv) > 1:
        tests = [(n, f) for n, f in tests if any(a in n for a in sys.argv[1:])]
    passed = failed = 0
    try:
        if setup:
            try:
                setup()
            except Exception:
                traceback.print_exc()
        for name, fn in tests:
            try:
                fn()
                print("ok - %s" % name)
                passed += 1
            except Skip as e:
                print("FAIL - %s: not run: %s" % (name, e))
                failed += 1
            except Exception as e:
                print("FAIL - %s: %s" % (name, e))
                if not isinstance(e, AssertionError):
                    traceback.print_exc()
                failed += 1
            sys.stdout.flush()
    finally:
        if cleanup:
            cleanup()
        # A suite's recordings (-m 0, system wide) take up to 3 GiB: 53 GiB
        # of them filled this machine's disk. OFFCPU_KEEP_TMP=1 keeps them.
        if not os.environ.get("OFFCPU_KEEP_TMP"):
            shutil.rmtree(TMP, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


def steal_ns():
    """The time the host took this machine's CPUs away, all CPUs (/proc/stat's steal)."""
    with open("/proc/stat") as f:
        return int(f.readline().split()[8]) * 10**9 // os.sysconf("SC_CLK_TCK")


def pprof_raw_samples(raw):
    """go tool pprof -raw: its sample types and each sample's values by
    type and labels, [({type: value}, {label: value})]."""
    types, samples, section = [], [], None
    for line in raw.splitlines():
        if line.startswith("Samples:"):
            section = "types"
            continue
        if line.startswith("Locations"):
            break
        if section == "types":
            types = [x.split("/")[0] for x in line.replace("[dflt]", "").split()]
            section = "samples"
            continue
        m = re.match(r"^\s+(\d+(?:\s+\d+)*): [\d ]*$", line)
        if section == "samples" and m:
            values = [int(x) for x in m.group(1).split()]
            assert len(values) == len(types), line
            samples.append((dict(zip(types, values)), {}))
        elif section == "samples" and samples and line.strip():
            for key, value in re.findall(r"([a-z.]+):\[([^\]]*)\]", line):
                samples[-1][1][key] = value
    return types, samples
