#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The kernel leaf, checked against perf for the same waits.

bpf_get_task_stack() of a blocked task drops every __sched function
(do_nanosleep, schedule_hrtimeout_range_clock...): offcpu's kernel stacks
must be perf's stacks of the same switch-outs (`perf record -e
sched:sched_switch -g`), address by address, less only the scheduler
frames (__schedule, schedule) at the leaf.

Run as root from the repository root after `make`; prints one line per
check and ends with "N passed, N failed".
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as t  # noqa: E402

# Three threads, each blocking 20 ms at a time in one way, named after it.
LEAF_WORKLOAD = r"""
import ctypes, os, select, sys, threading, time

libc = ctypes.CDLL(None, use_errno=True)

def named(name):
    libc.prctl(15, name.encode(), 0, 0, 0)  # PR_SET_NAME

def nanosleeper():
    named("leaf-nanosleep")
    while True:
        time.sleep(0.02)

def epoller():
    named("leaf-epoll")
    ep = select.epoll()
    while True:
        ep.poll(0.02)

def poller():
    named("leaf-poll")
    p = select.poll()
    r, w = os.pipe()
    p.register(r, select.POLLIN)
    while True:
        p.poll(20)

for f in (nanosleeper, epoller, poller):
    threading.Thread(target=f, daemon=True).start()
print("ready", flush=True)  # the test waits for the threads' names in /proc
time.sleep(600)
"""

# The function right below schedule() that decided to sleep, per thread.
LEAF_CALLERS = {
    "leaf-nanosleep": "do_nanosleep",
    "leaf-epoll": "schedule_hrtimeout_range_clock",
    "leaf-poll": "schedule_hrtimeout_range_clock",
}
# The system call each thread blocks in; a thread also waits elsewhere (the
# GIL's futex), which has a leaf of its own.
LEAF_SYSCALLS = {
    "leaf-nanosleep": "__x64_sys_clock_nanosleep",
    "leaf-epoll": "__x64_sys_epoll_wait",
    "leaf-poll": "__x64_sys_poll",
}
# What offcpu trims at the leaf, and perf shows: the tracepoint (perf's walk starts
# in __traceiter_sched_switch once a BPF program is attached to it too) and the
# scheduler core.
TRIMMED = re.compile(r"^(__schedule|schedule|__traceiter_.*|__bpf_trace_.*|bpf_trace_run.*|"
                     r"perf_trace_.*)$")


def perf_switch_out_stacks(path, tids):
    """tid -> set of kernel stacks (addresses, leaf first) perf recorded at its switch-outs,
    less the scheduler's own frames at the leaf."""
    out = t.run(["perf", "script", "-i", path, "-F", "tid,event,ip,sym"], timeout=120)
    assert out.returncode == 0, out.stderr[-500:]
    stacks = {}
    for block in out.stdout.split("\n\n"):
        lines = [l for l in block.splitlines() if l.strip()]
        if not lines:
            continue
        m = re.match(r"\s*(\d+)\s+sched:sched_switch", lines[0])
        if not m or int(m.group(1)) not in tids:
            continue
        frames = []
        for line in lines[1:]:
            f = line.split()
            addr = int(f[0], 16)
            if addr < 0xffff800000000000:
                break  # the user stack follows
            frames.append((addr, f[1].split("+")[0] if len(f) > 1 else None))
        while frames and frames[0][1] and TRIMMED.match(frames[0][1]):
            frames.pop(0)
        stacks.setdefault(int(m.group(1)), set()).add(tuple(a for a, _ in frames))
    return stacks


def test_kernel_leaf_is_perfs():
    """offcpu's kernel stacks of nanosleep, epoll_wait and poll are perf's of the
    same switch-outs, from the function that decided to sleep (do_nanosleep,
    schedule_hrtimeout_range_clock) on: never less."""
    d = tempfile.mkdtemp(prefix="offcpu-leaf-")
    script = os.path.join(d, "leaf.py")
    with open(script, "w") as f:
        f.write(LEAF_WORKLOAD)
    proc = subprocess.Popen(["/usr/bin/python3", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        comms = {}

        def all_named():
            comms.clear()
            for tid in os.listdir("/proc/%d/task" % proc.pid):
                try:
                    with open("/proc/%d/task/%s/comm" % (proc.pid, tid)) as f:
                        comms[int(tid)] = f.read().strip()
                except OSError:
                    pass
            return len([c for c in comms.values() if c in LEAF_CALLERS]) == 3
        t.wait_until(all_named, 30, "the workload's three threads named leaf-*")
        mine = {tid: c for tid, c in comms.items() if c in LEAF_CALLERS}
        assert len(mine) == 3, comms
        data = os.path.join(d, "perf.data")
        perf = subprocess.Popen(["perf", "record", "-q", "-o", data, "-e", "sched:sched_switch",
                                 "-g", "-p", str(proc.pid)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # perf attached (one event a thread) before offcpu's waits start.
        t.wait_until(t.perf_events_open(perf.pid, len(comms)), 30,
                     "perf record attached to the workload's threads")
        r = t.run([t.OFFCPU, "-p", str(proc.pid), "-m", "5ms", "-d", "1500ms", "-f", "json"])
        # perf records on 0.2 s past offcpu's last waits.
        time.sleep(0.2)
        perf.send_signal(signal.SIGINT)
        perf.communicate(timeout=60)
        assert r.returncode == 0, r.stderr[-500:]
        perf_stacks = perf_switch_out_stacks(data, set(mine))
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(d, ignore_errors=True)
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    stats = lines[-1]
    assert stats["type"] == "stats", stats
    checked = {c: 0 for c in LEAF_CALLERS}
    missed = 0
    for w in lines[:-1]:
        if w["type"] != "offcpu" or w["tid"] not in mine:
            continue
        # A wait recovered from a hidden switch-in has no stacks.
        if not w["kernel_stack"] and not w["user_stack"]:
            continue
        # Open at the stop: the iterator's stacks are test_open_race's,
        # which allows the leaf scan's rare miss there (about 1% of open
        # waits of threads waking every 100 us). The switch-in's reads, of a
        # thread that cannot run, are what is tested here.
        if w.get("open") in ("after", "both"):
            continue
        comm = mine[w["tid"]]
        addrs = tuple(int(f["addr"], 16) for f in w["kernel_stack"])
        names = [f.get("sym") for f in w["kernel_stack"]]
        stacks = perf_stacks.get(w["tid"], ())
        if addrs not in stacks:
            # The scan gave up: the stack as bpf_get_task_stack gave it,
            # perf's less the __sched frames at its top, flagged and counted.
            assert LEAF_CALLERS[comm] not in names and any(
                len(s) > len(addrs) and s[len(s) - len(addrs):] == addrs for s in stacks), (
                "%s: offcpu's %s is no stack perf recorded for that thread, nor its end: %s" %
                (comm, names, [list(map(hex, s)) for s in stacks][:3]))
            missed += 1
            continue
        # Preempted on its way in or out of the call (seen under load:
        # exit_to_user_mode_loop first): no function decided to sleep.
        if w["state"] != "interruptible" or LEAF_SYSCALLS[comm] not in names:
            continue
        if names[0] != LEAF_CALLERS[comm]:
            assert LEAF_CALLERS[comm] not in names, (comm, names)
            missed += 1
            continue
        checked[comm] += 1
    assert all(n >= 10 for n in checked.values()), checked
    # Every miss is counted, and they are rare: one in CI's 225, none in
    # 5,200 here beside three busy loops, disk writes and perf.
    assert missed <= stats["kernel_leaf_missed"], (missed, stats["kernel_leaf_missed"])
    assert missed * 50 <= sum(checked.values()), (missed, checked)


def main():
    return t.run_suite(globals())


if __name__ == "__main__":
    sys.exit(main())
