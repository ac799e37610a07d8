#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The user-space unwinder (src/unwind/unwind.c) on real blocked threads.

Programs built with plain -O2 (no frame pointers) block forever under known
chains of static functions (tests/integration/unwind/). build/tests/unwind/
unwind_probe stops each thread for a moment with ptrace, copies its
registers and the top of its stack as offcpu's BPF side would, and unwinds
the copy; then `gdb -batch -ex 'thread apply all bt'` prints the same
blocked process, and the two are compared frame by frame (return addresses).

Run as root from the repository root after
`make build/tests/unwind/waiters build/tests/unwind/cv_waiter build/tests/unwind/unwind_probe`.
Prints one line per check and ends with "N passed, N failed".
"""
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as t  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UNWIND = os.path.join(ROOT, "build", "tests", "unwind")
PROBE = os.path.join(UNWIND, "unwind_probe")
PYTHON = "/usr/bin/python3"
GDB_FRAMES = os.path.join(ROOT, "tests", "integration", "unwind", "gdb_frames.py")

# x86-64 system calls the test programs block in.
BLOCKING_SYSCALLS = {0: "read", 35: "nanosleep", 202: "futex", 230: "clock_nanosleep"}
# The outermost frames of a process's main thread and of its other threads.
ROOTS = re.compile(r"^(_start|(__GI___)?clone3?)$")


def run(args, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 120)
    return subprocess.run(args, **kw)


class Program:
    """A test program started, and stopped (killed) on exit from the with block."""

    def __init__(self, args, threads):
        self.args = args
        self.threads = threads

    def __enter__(self):
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.strip() == "ready", "%s did not start: %r" % (self.args[0], line)
        wait_blocked(self.proc.pid, self.threads)
        return self.proc

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()


def blocked_syscall(pid, tid):
    try:
        with open("/proc/%d/task/%d/syscall" % (pid, tid)) as f:
            fields = f.read().split()
    except OSError:
        return None
    if not fields or not fields[0].isdigit():
        return None  # "running"
    return BLOCKING_SYSCALLS.get(int(fields[0]))


def wait_blocked(pid, nr_threads, timeout=20.0):
    """Until the process has nr_threads threads, each in a blocking system call."""
    def tids():
        return [int(tid) for tid in os.listdir("/proc/%d/task" % pid)]
    t.wait_until(lambda: len(tids()) == nr_threads and
                 all(blocked_syscall(pid, tid) for tid in tids()), timeout,
                 lambda: "threads of %d all blocked: %s" % (
                     pid, {tid: blocked_syscall(pid, tid) for tid in tids()}))


def probe(pid, size=None):
    """tid -> what unwind_probe reports of it."""
    args = [PROBE] + (["-s", str(size)] if size else []) + [str(pid)]
    r = run(args)
    assert r.returncode == 0, "unwind_probe failed: %s" % r.stderr.strip()
    threads = {}
    for line in r.stdout.splitlines():
        t = json.loads(line)
        t["addrs"] = [int(f["addr"], 16) for f in t["frames"]]
        t["names"] = [f["sym"] for f in t["frames"]]
        threads[t["tid"]] = t
    return threads


def gdb_stacks(pid):
    """tid -> gdb's physical frames, leaf first: (pc, name). gdb also lists
    frames it makes up from DWARF rather than finds on the stack: inlined
    calls, and tail calls it infers from call-site information (a function
    that ends in a jump to another has no frame of its own, and no unwinder
    working from the stack can show one): gdb_frames.py says which, and
    they are left out."""
    r = run(["gdb", "-nx", "-batch", "-ex", "set pagination off", "-ex", "thread apply all bt",
             "-x", GDB_FRAMES, "-p", str(pid)])
    line = [l for l in r.stdout.splitlines() if l.startswith("GDB_FRAMES ")]
    assert line, "gdb printed no frames: %s" % r.stderr.strip()[-500:]
    stacks = {}
    for tid, frames in json.loads(line[0].split(" ", 1)[1]).items():
        stacks[int(tid)] = [(f["pc"], f["name"] or "??") for f in frames
                            if f["type"] in ("NORMAL", "SIGTRAMP")]
    return stacks


def gdb_stacks_blocked(pid, tids, waits, tries=20):
    """gdb_stacks once each of tids is caught blocked as in one of its
    waits (its stack, or a cut-short wait's frames, all gdb's): a thread
    woken every period may be running, between two waits, when gdb stops
    it (seen under load: the mutex thread in pthread_mutex_lock's fast
    path), and its stack then is no wait's."""
    def caught(tid, gdb):
        pcs = [pc for pc, _ in trusted(gdb.get(tid, []))]
        return any(w["addrs"] and w["addrs"] == pcs[:len(w["addrs"])] for w in waits.get(tid, []))

    def asleep(tid):
        try:
            with open("/proc/%d/task/%d/stat" % (pid, tid)) as f:
                return f.read().rsplit(")", 1)[1].split()[0] == "S"
        except OSError:
            return False
    for _ in range(tries):
        # Attach when every one is asleep: ten attaches at random moments
        # of a loaded fresh-clone run all found the mutex thread running.
        try:
            t.wait_until(lambda: all(asleep(tid) for tid in tids), 2.0, "all asleep")
        except AssertionError:
            pass  # gdb looks anyway; the next try waits again
        gdb = gdb_stacks(pid)
        if all(caught(tid, gdb) for tid in tids):
            break
    return gdb


def trusted(gdb_frames):
    """gdb's frames up to where its own unwinding went astray (a zero PC)."""
    out = []
    for pc, name in gdb_frames:
        if pc == 0:
            break
        out.append((pc, name))
    return out


def compare(ours, gdb_frames, whole=True):
    """Frame by frame, ours are gdb's; whole: the same number of frames too."""
    good = trusted(gdb_frames)
    for i, (pc, name) in enumerate(good):
        assert i < len(ours["addrs"]), "%s (%d) ends at frame %d, gdb goes on with %s" % (
            ours["comm"], ours["tid"], i, name)
        assert ours["addrs"][i] == pc, "%s (%d) frame %d: ours 0x%x (%s), gdb's 0x%x (%s)" % (
            ours["comm"], ours["tid"], i, ours["addrs"][i], ours["names"][i], pc, name)
    if whole:
        assert len(good) == len(gdb_frames), "gdb went astray on %s: %s" % (ours["comm"],
                                                                          gdb_frames)
        assert len(ours["addrs"]) == len(good), "%s (%d): %d frames, gdb's %d: %s against %s" % (
            ours["comm"], ours["tid"], len(ours["addrs"]), len(good), ours["names"],
            [n for _, n in good])
    return len(good)


def assert_chain(ours, chain):
    """chain (leaf first) appears in order, one frame after the other."""
    names = ours["names"]
    for i in range(len(names) - len(chain) + 1):
        if names[i:i + len(chain)] == chain:
            return
    raise AssertionError("%s (%d): %s not in %s" % (ours["comm"], ours["tid"], chain, names))


def assert_root(ours):
    assert ours["stop"] == "root", "%s (%d) stopped at %s: %s" % (
        ours["comm"], ours["tid"], ours["stop"], ours["names"])
    assert ROOTS.match(ours["names"][-1] or ""), "%s (%d) ends in %s" % (
        ours["comm"], ours["tid"], ours["names"][-1])


def by_comm(threads):
    return {t["comm"]: t for t in threads.values()}


WAITERS_CHAINS = {
    "waiters": [["nap", "sleep_c", "sleep_b", "sleep_a", "main"]],
    "mutex": [["take_lock", "lock_c", "lock_b", "lock_a", "run", "start_thread"]],
    "pipe": [["drain", "read_c", "read_b", "read_a", "run", "start_thread"]],
    "nocfi": [["nocfi_inner", "nocfi_sleep", "nocfi_c", "nocfi_b", "nocfi_a", "run"]],
    "debugframe": [["debugframe_inner", "debugframe_sleep", "debugframe_c", "debugframe_b",
                    "debugframe_a", "run"]],
    # The handler, then through the signal frame to the interrupted code.
    "signal": [["nap", "on_signal_c"],
               ["__pthread_kill_implementation", "raise_it", "raise_c", "raise_b", "raise_a",
                "run", "start_thread"]],
}
WAITERS_LEAVES = {
    "waiters": "clock_nanosleep",
    "mutex": "__lll_lock_wait",
    "pipe": "__read",
    "nocfi": "clock_nanosleep",
    "debugframe": "clock_nanosleep",
    "signal": "clock_nanosleep",
}


def test_c_chains_whole_and_as_gdb_prints_them():
    """nanosleep, pthread_mutex_lock, a pipe read: whole to _start or
    clone3, every frame gdb's; .debug_frame from the separate debug file
    (no frame pointer step); a signal handler's stack through the signal
    frame (CFI expressions over the saved context); a library without CFI
    by frame pointers, where gdb itself goes astray after its first frame."""
    with Program([os.path.join(UNWIND, "waiters")], 7) as proc:
        ours = by_comm(probe(proc.pid, 65536))
        gdb = gdb_stacks(proc.pid)
    for comm, chains in WAITERS_CHAINS.items():
        t = ours[comm]
        assert t["names"][0] == WAITERS_LEAVES[comm], "%s leaf %s" % (comm, t["names"][0])
        for chain in chains:
            assert_chain(t, chain)
        assert_root(t)
        compare(t, gdb[t["tid"]], whole=comm != "nocfi")
    assert ours["debugframe"]["fp_frames"] == 0, ours["debugframe"]
    assert ours["nocfi"]["fp_frames"] == 2, ours["nocfi"]
    for comm in ("waiters", "mutex", "pipe", "debugframe", "signal"):
        assert ours[comm]["fp_frames"] == 0, ours[comm]
    # gdb's prologue analysis fails on the library without CFI: the frames
    # it gets right are ours, and ours go on to the root.
    assert len(trusted(gdb[ours["nocfi"]["tid"]])) < len(ours["nocfi"]["addrs"])


def test_cxx_condition_variable_wait_as_gdb_prints_it():
    """std::condition_variable::wait is a jump to pthread_cond_wait in
    libstdc++ (no frame of its own): the wait is pthread_cond_wait called by
    wait_ready. The main thread waits in std::thread::join."""
    with Program([os.path.join(UNWIND, "cv_waiter")], 2) as proc:
        ours = by_comm(probe(proc.pid))
        gdb = gdb_stacks(proc.pid)
    t = ours["condvar"]
    assert_chain(t, ["pthread_cond_wait", "wait_ready(int)", "cv_c(int)", "cv_b(int)",
                     "cv_a(int)"])
    assert_root(t)
    compare(t, gdb[t["tid"]])
    main = ours["cv_waiter"]
    assert_chain(main, ["join_waiter(std::thread&)", "main"])
    assert "std::thread::join()" in main["names"], main["names"]
    assert_root(main)
    compare(main, gdb[main["tid"]])


PY_SCRIPT = """
import threading, time
lock = threading.Lock()
lock.acquire()
threading.Thread(target=lock.acquire).start()
print("ready", flush=True)
time.sleep(100000)
"""


def test_python_sleep_and_lock_reach_the_interpreter_and_main():
    """Debian's own python3 (no frame pointers, no debug symbols): time.sleep
    and a threading.Lock wait reach _PyEval_EvalFrameDefault and, for the
    main thread, Py_BytesMain; every frame gdb's."""
    with Program([PYTHON, "-c", PY_SCRIPT], 2) as proc:
        ours = probe(proc.pid)
        gdb = gdb_stacks(proc.pid)
    main, waiter = ours[proc.pid], [t for tid, t in ours.items() if tid != proc.pid][0]
    for t in (main, waiter):
        assert "_PyEval_EvalFrameDefault" in t["names"], t["names"]
        assert_root(t)
        compare(t, gdb[t["tid"]])
    assert "Py_BytesMain" in main["names"], main["names"]
    assert main["names"][0] == "clock_nanosleep", main["names"]


def test_stack_deeper_than_the_copy_is_cut_short_nothing_invented():
    """48 frames of 1 KiB under nanosleep: with 8 and 16 KiB copies the
    stack stops at the copy's end, flagged, every frame it has gdb's; with
    64 KiB it is whole."""
    with Program([os.path.join(UNWIND, "waiters")], 7) as proc:
        gdb = gdb_stacks(proc.pid)
        cut = {size: by_comm(probe(proc.pid, size))["deep"] for size in (8192, 16384)}
        whole = by_comm(probe(proc.pid, 65536))["deep"]
    deep_gdb = gdb[whole["tid"]]
    for size, t in cut.items():
        assert t["stop"] == "stack-end", "%d bytes: stopped at %s" % (size, t["stop"])
        assert t["stack_bytes"] == size, t["stack_bytes"]
        assert 4 < len(t["addrs"]) < len(deep_gdb), "%d bytes: %d frames" % (size, len(t["addrs"]))
        compare(t, deep_gdb[:len(t["addrs"])])
    assert len(cut[8192]["addrs"]) < len(cut[16384]["addrs"])
    assert_root(whole)
    compare(whole, deep_gdb)


# offcpu itself on the same programs, their waits ending every PERIOD_MS.
OFFCPU = os.path.join(ROOT, "offcpu")
PERIOD_MS = 50


def offcpu_waits(pid, *options, duration="1500ms"):
    """tid -> offcpu's waits of process pid (json), and the stats record."""
    r = run([OFFCPU, "-p", str(pid), "-m", "0", "-d", duration, "-f", "json"] + list(options))
    assert r.returncode == 0, "offcpu failed: %s" % r.stderr.strip()[-500:]
    by_tid, stats = {}, None
    for line in r.stdout.splitlines():
        rec = json.loads(line)
        if rec["type"] == "stats":
            stats = rec
        elif rec["type"] == "offcpu":
            frames = rec["user_stack"]
            rec["addrs"] = [int(f["addr"], 16) for f in frames]
            rec["names"] = [f.get("sym") for f in frames]
            by_tid.setdefault(rec["tid"], []).append(rec)
    assert stats is not None, "no stats record"
    return by_tid, stats


def thread_comms(pid):
    comms = []
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
            comms.append(f.read().strip())
    return comms


def tids_by_comm(pid):
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
            out[f.read().strip()] = int(tid)
    return out


def rooted(w):
    return bool(w["names"]) and bool(ROOTS.match(w["names"][-1] or ""))


def assert_waits_as_gdb(comm, waits, gdb_frames, leaf, chains):
    """Every wait of the thread in its leaf (None: every wait holding the
    first chain's first frame) has the chains and reaches the root; at least
    one is gdb's stack, frame by frame and whole."""
    if leaf is None:
        mine = [w for w in waits if chains[0][0] in w["names"]]
    else:
        mine = [w for w in waits if w["names"] and w["names"][0] == leaf]
    assert mine, "%s: no wait in %s: %s" % (comm, leaf, [w["names"][:3] for w in waits])
    for w in mine:
        for chain in chains:
            assert_chain(w, chain)
        assert rooted(w), "%s: a wait ends in %s: %s" % (comm, w["names"][-1], w["names"])
    good = trusted(gdb_frames)
    assert any(w["addrs"] == [pc for pc, _ in good] for w in mine), \
        "%s: no wait is gdb's %s: %s" % (comm, [n for _, n in good], mine[0]["names"])
    return mine


def test_offcpu_dwarf_every_wait_whole_as_gdb_prints_it():
    """offcpu -p (default --call-graph dwarf) on the -O2 waiters: each
    wait in nanosleep, the mutex, the pipe read, through a signal frame and
    .debug_frame, carries the whole chain to its root, gdb's frames."""
    with Program([os.path.join(UNWIND, "waiters"), str(PERIOD_MS)], 8) as proc:
        tids = tids_by_comm(proc.pid)
        waits, stats = offcpu_waits(proc.pid)
        gdb = gdb_stacks_blocked(proc.pid, [tids[c] for c in WAITERS_CHAINS if c != "nocfi"],
                                 waits)
    for comm, chains in WAITERS_CHAINS.items():
        if comm == "nocfi":
            continue  # gdb goes astray there: its own test below
        assert_waits_as_gdb(comm, waits.get(tids[comm], []), gdb[tids[comm]],
                            WAITERS_LEAVES[comm], chains)
    nocfi = [w for w in waits[tids["nocfi"]] if w["names"] and w["names"][0] == "clock_nanosleep"]
    assert nocfi, waits[tids["nocfi"]]
    for w in nocfi:
        assert_chain(w, WAITERS_CHAINS["nocfi"][0])
        assert rooted(w), w["names"]
    # Only the deep recursion (past 16 KiB) stopped before its root. Waits
    # without a user stack (recovered after a hidden switch-in; open at the
    # stop, whose stack the iterator could not read)
    # have nothing to cut.
    deep = [w for w in waits[tids["deep"]] if w["addrs"]]
    short = [w for tid, ws in waits.items() for w in ws if w["addrs"] and not rooted(w)]
    assert all(w["tid"] == tids["deep"] for w in short), [(w["comm"], w["names"]) for w in short]
    assert stats["user_stack_cut_short"] == len(short) >= len(deep) > 0, (stats, len(short))
    assert stats["user_stack_at_switch_out"] == 0, stats


def test_preempted_anywhere_unwinds_to_the_root():
    """A thread preempted at every instruction of -O2 code (spinner: two
    hogs share its CPU) unwinds whole from each: epilogues too, where the
    CFI still places a popped register below the stack pointer."""
    proc = subprocess.Popen([os.path.join(UNWIND, "spinner")], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        # "ready" once the threads are made; each names itself when it runs.
        t.wait_until(lambda: sorted(thread_comms(proc.pid)) ==
                     ["hog", "hog", "spinner", "spinner"], 30,
                     lambda: "spinner's threads named: %s" % thread_comms(proc.pid))
        tids = tids_by_comm(proc.pid)
        waits, stats = offcpu_waits(proc.pid, duration="2s")
    finally:
        proc.kill()
        proc.wait()
    mine = [w for w in waits.get(tids["spinner"], []) if w["state"] == "preempted" and w["addrs"]]
    assert len(mine) >= 20, len(mine)
    cut = [w["names"] for w in mine if not rooted(w)]
    assert not cut, "%d of %d preempted waits cut short: %s" % (len(cut), len(mine), cut[:5])
    leaves = {w["names"][0] for w in mine}
    assert {"spin_leaf", "mix"} & leaves, leaves
    chain = ["spin_leaf", "spin_c", "spin_b", "spin_a"]
    for w in mine:
        at = [n for n in w["names"] if n and n.startswith("spin_")]
        # Preempted in spinner's own loop, between two calls: no spin_ frame.
        assert at == chain[-len(at):] if at else w["names"][0] == "spinner", w["names"]


def test_offcpu_cxx_condition_variable_wait_as_gdb_prints_it():
    """Each std::condition_variable::wait, woken every period: whole, gdb's."""
    with Program([os.path.join(UNWIND, "cv_waiter"), str(PERIOD_MS)], 3) as proc:
        tids = tids_by_comm(proc.pid)
        waits, stats = offcpu_waits(proc.pid)
        gdb = gdb_stacks_blocked(proc.pid, [tids["condvar"]], waits)
    assert_waits_as_gdb("condvar", waits.get(tids["condvar"], []), gdb[tids["condvar"]], None,
                        [["pthread_cond_wait", "wait_ready(int)", "cv_c(int)", "cv_b(int)",
                          "cv_a(int)"]])


PY_PERIODIC = """
import threading, time
lock = threading.Lock()
lock.acquire()
def waiter():
    while True:
        lock.acquire(timeout=0.05)
threading.Thread(target=waiter).start()
print("ready", flush=True)
while True:
    time.sleep(0.05)
"""


def test_offcpu_python_sleep_and_lock_reach_the_interpreter_and_main():
    """Debian's python3 under offcpu: time.sleep and threading.Lock waits
    reach _PyEval_EvalFrameDefault, the main thread's Py_BytesMain, the root.
    Once offcpu has found CPython in the process (at its first wait), the
    Python frames that call ran stand in its place."""
    with Program([PYTHON, "-c", PY_PERIODIC], 2) as proc:
        waits, stats = offcpu_waits(proc.pid)
        main_tid = proc.pid
    assert len(waits) == 2, waits.keys()
    for tid, ws in waits.items():
        blocked = [w for w in ws if w["state"] == "interruptible"]
        assert blocked, [w["names"] for w in ws]
        # A wait recovered after a hidden switch-in has no stacks.
        for w in [w for w in blocked if w["kernel_stack"] or w["user_stack"]]:
            python = [f.get("sym") for f in w["user_stack"] if f.get("kind") == "python"]
            assert "_PyEval_EvalFrameDefault" in w["names"] or python, w["names"]
            if python:
                assert python[0] == ("<module>" if tid == main_tid else "waiter"), python
            assert rooted(w), w["names"]
            if tid == main_tid:
                assert "Py_BytesMain" in w["names"], w["names"]


def test_offcpu_stack_deeper_than_size_cut_short_counted_nothing_invented():
    """--call-graph dwarf,8192 on the 48 KiB recursion: each wait stops
    before its root, is counted, and every frame it has is gdb's."""
    with Program([os.path.join(UNWIND, "waiters"), str(PERIOD_MS)], 8) as proc:
        tids = tids_by_comm(proc.pid)
        waits, stats = offcpu_waits(proc.pid, "--call-graph", "dwarf,8192")
        gdb = gdb_stacks_blocked(proc.pid, [tids["deep"]], waits)
    deep = [w for w in waits[tids["deep"]] if w["addrs"]]
    deep_gdb = gdb[tids["deep"]]
    # A hidden switch-in's wait, recovered at the next switch-out, has no
    # stacks left to take: nothing to cut short.
    short = [w for ws in waits.values() for w in ws if w["addrs"] and not rooted(w)]
    assert stats["user_stack_cut_short"] == len(short) >= len(deep) > 0, (stats, len(short))
    slept = [w for w in deep if w["names"] and w["names"][0] == "clock_nanosleep"]
    assert slept, [w["names"][:3] for w in deep]
    for w in slept:
        assert not rooted(w), w["names"]
        assert 4 < len(w["addrs"]) < len(deep_gdb), len(w["addrs"])
        assert w["addrs"] == [pc for pc, _ in deep_gdb[:len(w["addrs"])]], w["names"]


def test_offcpu_fp_mode_finds_the_leafs_caller():
    """--call-graph fp on the waiters built with frame pointers: libc's
    wrappers have none, so the frame chain skips the function that called
    them; the leaf's CFI over the words at the SP puts it back."""
    with Program([os.path.join(UNWIND, "waiters_fp"), str(PERIOD_MS)], 8) as proc:
        tids = tids_by_comm(proc.pid)
        waits, stats = offcpu_waits(proc.pid, "--call-graph", "fp")
    expected = {
        "waiters_fp": ("clock_nanosleep", ["clock_nanosleep", "nanosleep", "nap", "sleep_c",
                                           "sleep_b", "sleep_a", "main"]),
        "pipe": ("__read", ["__read", "drain", "read_c", "read_b", "read_a", "run"]),
        "mutex": ("__lll_lock_wait", ["__lll_lock_wait", "pthread_mutex_lock", "take_lock",
                                      "lock_c", "lock_b", "lock_a", "run"]),
    }
    for comm, (leaf, chain) in expected.items():
        mine = [w for w in waits.get(tids[comm], []) if w["names"] and w["names"][0] == leaf]
        assert mine, "%s: no wait in %s" % (comm, leaf)
        for w in mine:
            assert w["names"][:len(chain)] == chain, "%s: %s" % (comm, w["names"])


GO_PROGRAM = """package main

import "time"

//go:noinline
func napper() { time.Sleep(20 * time.Millisecond) }

func main() {
	println("ready")
	for {
		napper()
	}
}
"""


def test_offcpu_go_binary_by_frame_pointers_at_switch_out():
    """Go registers no rseq: its threads' user stacks are walked by frame
    pointers at switch-out, counted, in dwarf mode too; they end at the
    goroutine switch, and time.Sleep's park is the class of the M's wait."""
    import shutil
    import tempfile
    d = tempfile.mkdtemp(prefix="offcpu-go-")
    try:
        waits, stats = run_go_program(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    # An M's stack ends at runtime.mcall, as gdb's does; the
    # goroutine it parked (main.napper in time.Sleep) names the wait's class.
    mine = [w for ws in waits.values() for w in ws
            if w["names"] and w["names"][-1] == "runtime.mcall" and w["wait"] == "sleep"]
    assert len(mine) >= 10, [(w["wait"], w["names"]) for ws in waits.values() for w in ws][:5]
    assert not [w for ws in waits.values() for w in ws if "main.napper" in w["names"]]
    # Every wait whose switch-out offcpu saw has the stack walked there; the
    # others began before the recording (no switch-out seen), were still open
    # at its stop, or were recovered after a hidden switch-in.
    unseen_out = (stats["waits_open_at_start"] + stats["waits_open_at_stop"] +
                  stats["switch_in_recovered"])
    assert stats["emitted"] > 0 and stats["user_stack_at_switch_out"] > 0, stats
    assert 0 <= stats["emitted"] - stats["user_stack_at_switch_out"] <= unseen_out, stats


def run_go_program(d):
    with open(os.path.join(d, "main.go"), "w") as f:
        f.write(GO_PROGRAM)
    with open(os.path.join(d, "go.mod"), "w") as f:
        f.write("module gosleep\ngo 1.19\n")
    r = run(["go", "build", "-o", "gosleep", "."], cwd=d, timeout=300)
    assert r.returncode == 0, r.stderr
    proc = subprocess.Popen([os.path.join(d, "gosleep")], stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr.readline().strip() == "ready"
        waits, stats = offcpu_waits(proc.pid, "-m", "1ms", duration="1s")
    finally:
        proc.kill()
        proc.wait()
    return waits, stats


def main():
    return t.run_suite(globals())


if __name__ == "__main__":
    sys.exit(main())
