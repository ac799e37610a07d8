#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The open-wait race: the open-wait iterator (offcpu snapshot, a
recording's stop) reads the stacks of a thread it found off CPU while the
thread may wake and run on the other CPU. A thread that ran meanwhile is
written without stacks, counted in open_wait_stacks_raced; every open wait
that has stacks must have the ones of its block.

The workload (open_race) blocks a hundred microseconds at a time, in
nanosleep or on a futex, in a dozen threads: the iterator often visits one
as it wakes. Run as root from the repository root after `make test-build`;
prints one line per check and ends with "N passed, N failed".
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as t  # noqa: E402

OPEN_RACE = os.path.join(t.ROOT, "build", "tests", "open_race")
SLEEPERS, PAIRS, SLEEP_US = 6, 3, 100
SNAPSHOTS = 24  # half in each unwinding mode
RECORDINGS = 6

# The two ways the workload's threads block: the kernel stack's first frame
# (offcpu trims __schedule and schedule), a frame it must hold further
# down, and the user frames that called into it.
BLOCKS = {
    "do_nanosleep": ("hrtimer_nanosleep", ["clock_nanosleep", "nanosleep"]),
    "futex_do_wait": ("futex_wait", ["syscall"]),
}
LOOPS = {"race-sleep": "sleep_loop", "race-futex": "futex_loop"}
# Where bpf_get_task_stack starts when the leaf scan could not put the
# __sched frames back. The scan shared its per-CPU buffer with sched_switch,
# which the preemptible iterator let rewrite it: a miss in about one
# nanosleep wait in twelve. With its own buffer about 1% remain here and
# 4.3% in one CI run (12 of 278), cause not known; the test bounds them,
# and each is counted in kernel_leaf_missed.
LEAF_MISSED = {"hrtimer_nanosleep": "do_nanosleep", "futex_wait": "futex_do_wait"}
LEAF_MISS = "leaf-miss"
MAX_LEAF_MISS = 0.08


class Workload:
    def __init__(self):
        self.p = subprocess.Popen([OPEN_RACE, str(SLEEPERS), str(PAIRS), str(SLEEP_US)],
                                  stdout=subprocess.PIPE, text=True)
        assert self.p.stdout.readline().strip() == "ready"

    def kill(self):
        self.p.kill()
        self.p.wait()


def syms(stack):
    return [f.get("sym") or "" for f in stack]


def check_stacks(w, fp):
    """The stacks of one of the workload's open waits that has them: those of
    a block in nanosleep or futex, the user stack the caller of that very
    call (a kernel stack of one block beside a user stack of another is a
    torn read). False for a thread preempted elsewhere (not a block: its
    stacks are not known here)."""
    kernel, user = syms(w["kernel_stack"]), syms(w["user_stack"])
    if kernel[0] in LEAF_MISSED and w["state"] == "interruptible":
        # The leaf scan gave up: the stack as bpf_get_task_stack
        # gives it, the rest of it still that block's. Counted, bounded.
        assert kernel[-1] == "entry_SYSCALL_64_after_hwframe", kernel
        assert LOOPS[w["comm"]] in user, (kernel[0], user)
        return LEAF_MISS
    if kernel[0] not in BLOCKS:
        # Woken, then preempted on its way out (its state says runnable):
        # no block to check against. A sleeping thread is always in one.
        assert w["state"] in ("preempted", "running"), (w["state"], kernel, user)
        return False
    below, callers = BLOCKS[kernel[0]]
    assert below in kernel, kernel
    assert kernel[-1] == "entry_SYSCALL_64_after_hwframe", kernel
    loop = LOOPS[w["comm"]]
    assert loop in user, (kernel[0], user)
    # The user leaf: libc's wrappers of that system call, then the loop. In
    # fp mode libc (no frame pointers) may lose its wrapper's caller.
    leaf = user[:user.index(loop)]
    assert leaf and leaf[0] == callers[0], (kernel[0], user)
    assert fp or leaf == callers, (kernel[0], user)
    return True


def open_waits(lines, pid):
    """The workload threads' open waits, and the stats record."""
    stats = lines[-1]
    assert stats["type"] == "stats", stats
    waits = [w for w in lines[:-1] if w["type"] == "offcpu" and w["pid"] == pid and
             w["comm"] in LOOPS and w.get("open") in ("after", "both")]
    return waits, stats


def test_open_wait_stacks_under_waking_threads():
    """Snapshots and recordings' stops of threads waking every ~100 us:
    every open wait read with stacks has its block's stacks (the kernel's
    leaf put back, and the user stack of the same call), and in a
    snapshot exactly the waits counted in open_wait_stacks_raced went
    without them (-m 0: every wait's stacks are read)."""
    work = Workload()
    pid = work.p.pid
    checked = raced = seen = missed = 0
    try:
        for i in range(SNAPSHOTS):
            fp = i % 2 == 1
            r = t.run([t.OFFCPU, "snapshot", "-m", "0", "-p", str(pid), "-f", "json"] +
                      (["--call-graph", "fp"] if fp else []))
            assert r.returncode == 0, r.stderr[-500:]
            waits, stats = open_waits([json.loads(l) for l in r.stdout.splitlines()], pid)
            seen += len(waits)
            without = [w for w in waits if not w["kernel_stack"]]
            assert len(without) == stats["open_wait_stacks_raced"], (
                "%d open waits without stacks, %d counted raced" %
                (len(without), stats["open_wait_stacks_raced"]))
            raced += len(without)
            missed_here = 0
            for w in waits:
                if w["kernel_stack"]:
                    got = check_stacks(w, fp)
                    missed_here += got == LEAF_MISS
                    checked += got is True
            # Every leaf missed is counted (with the misses of stacks not checked here).
            assert missed_here <= stats["kernel_leaf_missed"], (
                missed_here, stats["kernel_leaf_missed"])
            missed += missed_here
        for i in range(RECORDINGS):
            # --sample-rate: the completed waits mostly dropped; the open
            # waits, which it does not sample, are all written.
            r = t.run([t.OFFCPU, "-m", "0", "--sample-rate", "1000", "-p", str(pid), "-d",
                       "300ms", "-f", "json"])
            assert r.returncode == 0, r.stderr[-500:]
            waits, stats = open_waits([json.loads(l) for l in r.stdout.splitlines()], pid)
            seen += len(waits)
            # At the stop a thread that woke after sched_switch was detached
            # goes without stacks too, uncounted: raced ones are a part.
            without = [w for w in waits if not w["kernel_stack"]]
            assert stats["open_wait_stacks_raced"] <= len(without), (
                len(without), stats["open_wait_stacks_raced"])
            raced += stats["open_wait_stacks_raced"]
            for w in waits:
                if w["kernel_stack"]:
                    got = check_stacks(w, False)
                    missed += got == LEAF_MISS
                    checked += got is True
    finally:
        work.kill()
    print("# %d open waits, %d with their block's stacks checked, %d raced, %d leaf missed" %
          (seen, checked, raced, missed))
    # A dozen threads in each of 30 looks, most caught blocked.
    assert checked >= 100, (seen, checked, raced)
    assert missed <= MAX_LEAF_MISS * (checked + missed), (missed, checked)


def main():
    return t.run_suite(globals())


if __name__ == "__main__":
    sys.exit(main())
