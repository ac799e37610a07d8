#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Waits that have not ended and hidden switch-ins recovered: the real BPF
program, workloads whose waits span a recording's start or stop, and offcpu
snapshot.

Run as root from the repository root after `make test-build`. Prints one
line per check and ends with "N passed, N failed".
"""
import json
import os
import re
import signal
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as t  # noqa: E402

OPEN_WAITS = os.path.join(t.ROOT, "build", "tests", "open_waits")


class Workload:
    """open_waits MODE WAKE_MS: its threads' block and wake times, its own clock."""

    def __init__(self, mode, wake_ms):
        self.p = subprocess.Popen([OPEN_WAITS, mode, str(wake_ms)], stdout=subprocess.PIPE,
                                  text=True)
        self.blocked = {}  # tid -> CLOCK_MONOTONIC ns
        self.woke = {}
        self.read_line()

    def read_line(self):
        kind, tid, ns = self.p.stdout.readline().split()
        (self.blocked if kind == "blocked" else self.woke)[int(tid)] = int(ns)

    def kill(self):
        self.p.kill()
        self.p.wait()

    def asleep(self):
        """Whether every thread that said it blocks is asleep in the kernel
        (it says so just before its call)."""
        return all(asleep(self.p.pid, tid) for tid in self.blocked)


def asleep(pid, tid):
    try:
        with open("/proc/%d/task/%d/stat" % (pid, tid)) as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("S", "D")
    except OSError:
        return False


def syms(stack):
    return [f.get("sym") or "" for f in stack]


def waits_of(waits, tid):
    return [w for w in waits if w["tid"] == tid]


def check_pipe_read(w, user_function):
    kernel = syms(w["kernel_stack"])
    assert [s for s in kernel if "pipe_read" in s], "kernel stack %s" % kernel
    assert w["state"] == "interruptible", w["state"]
    assert w["wait"] == "pipe" or w["wait"].startswith("pipe:"), w["wait"]
    user = syms(w["user_stack"])
    assert "block_in_read" in user and user_function in user, "user stack %s" % user


def start_of(w):
    return w["ts_ns"] - w["duration_ns"]


def test_hung_read_open_at_both_ends():
    # Blocked in read() 1.5 s before offcpu -d 2s starts, still blocked at
    # its stop: one wait, open at both ends, dated from the kernel's times.
    for mode in ("dwarf", "fp"):
        wl = Workload("read", 0)
        try:
            # The 1.5 s blocked before the recording (the subject).
            time.sleep(1.5)
            waits, stats = t.trace_json(["-p", str(wl.p.pid), "--call-graph", mode], "2s")
        finally:
            wl.kill()
        tid = wl.p.pid
        mine = waits_of(waits, tid)
        assert len(mine) == 1, (mode, mine, stats)
        w = mine[0]
        assert w.get("open") == "both", (mode, w.get("open"))
        # Its own clock: blocked at wl.blocked, still waiting at the stop (ts_ns).
        truth = w["ts_ns"] - wl.blocked[tid]
        assert truth >= 3.5e9, truth
        assert abs(w["duration_ns"] - truth) <= 0.05 * truth, (w["duration_ns"], truth)
        # Dated to well within 5%: the kernel's stamp of the switch-out, converted.
        assert abs(start_of(w) - wl.blocked[tid]) < 20e6, (start_of(w), wl.blocked[tid])
        if mode == "dwarf":
            check_pipe_read(w, "main")
        else:
            # Frame pointers: this -O2 program keeps none, so the leaf only (mended).
            kernel = syms(w["kernel_stack"])
            assert [s for s in kernel if "pipe_read" in s], kernel
            assert syms(w["user_stack"])[:1] == ["__read"], syms(w["user_stack"])
        assert stats["waits_open_at_start"] == 1 and stats["waits_open_at_stop"] == 1, stats
        assert stats["waits_started"] == 1 and stats["no_start"] == 0, stats


def test_wait_begun_before_ends_whole():
    # Blocked 1 s before the recording, woken during it: one whole wait,
    # marked begun before, as long as the thread's own clock says. Woken
    # once offcpu has attached, however long a loaded machine took to start it.
    wl = Workload("read", -1)
    out = os.path.join(t.TMP, "before.json")
    try:
        time.sleep(1)
        tracer = t.start_tracer(["-d", "4s", "-p", str(wl.p.pid), "-f", "json", "-o", out])
        attached = time.monotonic_ns()
        wl.p.send_signal(signal.SIGUSR1)
        wl.read_line()
        _, err = tracer.communicate(timeout=60)
        assert tracer.returncode == 0, err
    finally:
        wl.kill()
    tid = wl.p.pid
    assert attached < wl.woke[tid], (attached, wl.woke[tid])
    waits, stats = t.read_json_lines(out)
    # Then it sleeps: that wait is open at the stop.
    mine = [w for w in waits_of(waits, tid) if w["wait"] != "sleep"]
    assert len(mine) == 1, (mine, stats)
    w = mine[0]
    truth = wl.woke[tid] - wl.blocked[tid]
    assert w.get("open") == "before", w.get("open")
    assert abs(w["duration_ns"] - truth) <= 0.05 * truth, (w["duration_ns"], truth)
    check_pipe_read(w, "main")
    # Its writer thread sleeps since the start too.
    assert stats["no_start"] == 0 and stats["waits_open_at_start"] == 2, stats


def snapshot(args):
    r = t.run([t.OFFCPU, "snapshot"] + args)
    assert r.returncode == 0, r.stderr
    return r


def snapshot_json(args):
    lines = [json.loads(l) for l in snapshot(["-f", "json"] + args).stdout.splitlines()]
    assert lines and lines[-1]["type"] == "stats", lines[-1:]
    waits = lines[:-1]
    t.check_named_inside_symbols(waits)
    return waits, lines[-1]


def test_snapshot_lists_the_hung_thread():
    wl = Workload("thread", 0)
    try:
        # Blocked a second: well past the snapshot's -m 50ms.
        time.sleep(1)
        waits, stats = snapshot_json(["-p", str(wl.p.pid), "-m", "50ms"])
        text = snapshot(["-p", str(wl.p.pid), "-m", "50ms"]).stdout
        folded = snapshot(["-p", str(wl.p.pid), "-m", "50ms", "-f", "folded"]).stdout
    finally:
        wl.kill()
    (reader,) = wl.blocked
    mine = waits_of(waits, reader)
    assert len(mine) == 1, waits
    w = mine[0]
    assert w["comm"] == "ow_reader" and w.get("open") == "after", w
    truth = w["ts_ns"] - wl.blocked[reader]
    assert truth > 1e9 and abs(w["duration_ns"] - truth) <= 0.05 * truth, (w["duration_ns"],
                                                                        truth)
    check_pipe_read(w, "reader")
    # The spinner runs: listed only if it waited 50 ms for a CPU just then.
    for s in waits_of(waits, wl.p.pid):
        assert s["state"] == "preempted" and s["wait"] == "cpu", s
    assert [x["duration_ns"] for x in waits] == sorted((x["duration_ns"] for x in waits),
                                                      reverse=True), "not longest first"
    assert "Still waiting (longest first)" in text and "ow_reader" in text, text
    assert re.search(r"^ow_reader;\[interruptible\];\[pipe\];\[still-waiting\];.*pipe_read",
                     folded, re.M), folded


def test_snapshot_and_stop_select_by_cgroup():
    # The iterators run as offcpu, not as the thread: --cgroup is tested on
    # the task's own cgroup (and its parents), nested here.
    _, paths = t.make_cgroups("ow-outer", "ow-outer/inner")
    inside = Workload("read", 0)
    outside = Workload("read", 0)
    try:
        t.move_to_cgroup(paths[1], inside.p.pid)
        waits, _ = snapshot_json(["--cgroup", paths[0], "-m", "0"])
        recorded, _ = t.trace_json(["--cgroup", paths[0]], "1s")
    finally:
        inside.kill()
        outside.kill()
        # Reaped, but rmdir is EBUSY until the cgroup says it is empty.
        t.wait_until(lambda: "populated 0" in open(os.path.join(paths[0], "cgroup.events")).read(),
                     30, "the cgroups empty")
        t.remove_cgroups(paths)
    for listed in (waits, recorded):
        assert {w["pid"] for w in listed} == {inside.p.pid}, [(w["pid"], w["comm"]) for w in listed]
    assert [w.get("open") for w in recorded] == ["both"], recorded


def test_snapshot_kernel_thread_idle():
    waits, _ = snapshot_json(["-k", "-m", "10ms"])
    idle = [w for w in waits if t.KTHREAD_COMMS.match(w["comm"]) and w["state"] == "idle"]
    assert idle, [(w["comm"], w["state"], w["wait"]) for w in waits][:20]
    assert all(w["wait"] == "idle" or w["wait"].startswith("idle:") for w in idle), \
        [(w["comm"], w["wait"]) for w in idle]
    assert all(not w["user_stack"] for w in waits), "a kernel thread with a user stack"


def test_snapshot_bad_input():
    for args in (["-d", "1s"], ["--", "true"], ["stray"]):
        r = t.run([t.OFFCPU, "snapshot"] + args)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) <= 2, (args, r.stderr)


def balance(stats):
    return stats["waits_started"] - (stats["waits_completed"] + stats["switch_in_recovered"] +
                                     stats["switch_in_unseen"] + stats["waits_open_at_stop"])


def test_counters_balance_under_command():
    # A child left blocked when the command exits is open at the stop.
    out = os.path.join(t.TMP, "balance-command.json")
    r = t.run_command_traced(["-f", "json", "-o", out], [
        "sh", "-c", "%s read 0 >/dev/null 2>&1 & echo $! > %s/child; %s sleep ow_sleep 20 10" %
        (OPEN_WAITS, t.TMP, t.WORKLOAD)])
    try:
        assert r.returncode == 0, r.stderr
        waits, stats = t.read_json_lines(out)
    finally:
        t.run(["kill", open(os.path.join(t.TMP, "child")).read().strip()])
    assert balance(stats) == 0, stats
    assert stats["waits_open_at_stop"] >= 1 and stats["waits_open_at_start"] == 0, stats
    hung = [w for w in waits if w.get("open") == "after" and "block_in_read" in syms(w["user_stack"])]
    assert len(hung) == 1, [(w["comm"], w.get("open")) for w in waits if w.get("open")]


def test_counters_balance_system_wide():
    for attempt in range(2):
        waits, stats = t.trace_json(["-m", "0"], "1s")
        # A thread dated by the start's iterator as it switched in: both may
        # count it (the compare-and-swap keeps one start); at most one here.
        if abs(balance(stats)) <= 1:
            break
    assert abs(balance(stats)) <= 1, (balance(stats), stats)
    assert stats["waits_open_at_start"] > 0 and stats["waits_open_at_stop"] > 0, stats
    opened = [w for w in waits if w.get("open")]
    assert {w["open"] for w in opened} <= {"before", "after", "both"}, opened
    assert len([w for w in opened if w["open"] in ("after", "both")]) <= \
        stats["waits_open_at_stop"], stats


def test_hidden_switch_ins_recovered():
    # This VM hides every switch away from its init's threads (PID 1): the
    # thread switched in then used to lose its wait (switch_in_unseen).
    # Its start of run is sched_info.last_arrival: recovered, none lost.
    total = {"switch_in_recovered": 0, "switch_in_unseen": 0}
    for attempt in range(3):
        _, stats = t.trace_json(["-m", "0"], "2s")
        for k in total:
            total[k] += stats[k]
        if total["switch_in_recovered"] >= 3:
            break
    assert total["switch_in_recovered"] >= 1, total
    assert total["switch_in_unseen"] * 20 <= total["switch_in_recovered"], total


def test_clock_conversion_error():
    # The kernel's times converted to offcpu's clock, measured against the
    # traced switches themselves (--measure-clock).
    # Switches of its own, 1 ms sleeps for the whole recording: an idle
    # machine (CI's) switches too little for the counts below (75 and 749
    # in 2 s, seen). Each sleep ends from idle, where last_arrival is
    # early more often (see docs/design.md): 4 of 2,670 switch-ins off by more
    # than 1 ms once, against 7 of 251,356 on a busy machine. A broken
    # conversion is off by more for most (se.exec_start: 85%).
    out = os.path.join(t.TMP, "clock.json")
    load = subprocess.Popen([t.WORKLOAD, "sleep", "wl_clock", "20000", "1"])
    try:
        r = t.run([t.OFFCPU, "-d", "2s", "-m", "0", "--measure-clock", "-f", "json", "-o", out])
    finally:
        load.kill()
        load.wait()
    assert r.returncode == 0, r.stderr
    found = {}
    for m in re.finditer(r"clock error, (.+?): n (\d+) mean \|e\| (\d+) ns max \|e\| (\d+) ns "
                         r"mean e (-?\d+) ns, waits (\d+) ns, over 1 ms (\d+), over 10 ms (\d+)",
                         r.stderr):
        found[m.group(1)] = [int(x) for x in m.groups()[1:]]
        print("    %s: %s" % (m.group(1), m.groups()[1:]))
    n, mean, _, _, _, over1, _ = found["switch-in from last_arrival"]
    assert n > 1000 and mean < 50000 and over1 * 200 <= n, found
    n, mean, _, _, _, over1, over10 = found["switch-out from last_arrival + run"]
    assert n > 1000 and mean < 1000000 and over10 * 100 <= n, found


def test_open_waits_round_trip_through_report():
    wl = Workload("read", 0)
    out = os.path.join(t.TMP, "open-recording.json")
    try:
        t.wait_until(wl.asleep, 30, "the reader asleep in read()")
        r = t.run([t.OFFCPU, "-d", "1s", "-p", str(wl.p.pid), "-f", "json", "-o", out])
        assert r.returncode == 0, r.stderr
    finally:
        wl.kill()
    again = t.run([t.OFFCPU, "report", "-f", "json", out])
    assert again.returncode == 0, again.stderr
    assert again.stdout == open(out).read()
    folded = t.run([t.OFFCPU, "report", "-f", "folded", out]).stdout
    assert ";[still-waiting];" in folded, folded
    bad = os.path.join(t.TMP, "bad-open.json")
    with open(out) as f, open(bad, "w") as g:
        g.write(f.read().replace('"open":"both"', '"open":"sometimes"'))
    r = t.run([t.OFFCPU, "report", "-f", "json", bad])
    assert r.returncode == 2 and "open" in r.stderr, r.stderr


def sleeping_backend(conn):
    """A psql session whose backend sleeps in SELECT pg_sleep(120); its
    process and the backend's pid, once pg_stat_activity shows it waiting."""
    psql = ["runuser", "-u", "postgres", "--", t.PG_BIN + "/psql", "-At", "-X"] + conn + \
        ["postgres"]
    p = subprocess.Popen(psql + ["-c", "SELECT pg_sleep(120)"], stdout=subprocess.DEVNULL)

    def sleeping():
        r = t.run(psql + ["-c", "SELECT pid FROM pg_stat_activity WHERE wait_event = 'PgSleep'"])
        return r.stdout.strip() and int(r.stdout.split()[0])
    try:
        return p, t.wait_until(sleeping, 60, "a backend sleeping in pg_sleep")
    except AssertionError:
        p.kill()
        p.wait()
        raise


def test_open_waits_carry_the_labels_of_a_rule_pack():
    """A PostgreSQL backend in pg_sleep: its open wait, in a snapshot and at
    a recording's stop, has the wait event and backend type a rule pack
    reads, as the waits that end do."""
    import test_postgres_events as pg
    with pg.cluster() as conn:
        p, backend = sleeping_backend(conn)
        try:
            # pg_stat_activity says PgSleep before the backend's epoll_wait.
            t.wait_until(lambda: asleep(backend, backend), 30, "the backend asleep")
            snap, _ = snapshot_json(["--rules", "postgres", "-p", str(backend)])
            stopped, _ = t.trace_json(["--rules", "postgres", "-p", str(backend)], "1s")
        finally:
            p.kill()
            p.wait()
    want = {"pg.wait_event": "Timeout:PgSleep", "pg.backend_type": "client backend"}
    for name, waits in (("snapshot", snap), ("stop", stopped)):
        mine = [w for w in waits if w["tid"] == backend and "open" in w]
        assert len(mine) == 1, (name, [(w["tid"], w.get("open")) for w in waits])
        labels = mine[0].get("labels", {})
        assert {k: labels.get(k) for k in want} == want, (name, labels)


def main():
    return t.run_suite(globals())


if __name__ == "__main__":
    sys.exit(main())
