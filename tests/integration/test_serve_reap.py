#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Integration tests of offcpu serve's processes whose exit record was
lost: offcpu serve looks at each process it holds every 10 s and frees the
ones gone (at two looks in a row) as their exit record would have.

The exit records a full ring buffer loses are lost on purpose, all of them
(OFFCPU_TEST_DROP_EXIT=1), under a churn of short-lived processes in a
cgroup of their own: what is held (OFFCPU_TEST_MEMSTATS's processes)
follows the processes started in the last two looks, returns to what lived
before once the churn ends, each churned process is reaped once and the
long-lived ones never; the windows still name the churned processes'
functions while they live. Then 2,000 live processes held: a look's cost,
and none reaped.

SERVE_REAP_BINARY runs another build (one without the reaping fails,
saying what it held). Run as root from the repository root after `make
test-build`. Prints one line per check and ends with "N passed, N failed".
"""
import os
import re
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as t  # noqa: E402
import test_serve as ts  # noqa: E402

TMP = t.TMP
WORKLOAD = t.WORKLOAD
BINARY = os.environ.get("SERVE_REAP_BINARY", t.OFFCPU)
CHURN_SECONDS = int(os.environ.get("SERVE_REAP_SECONDS", "40"))
MANY = int(os.environ.get("SERVE_REAP_MANY", "2000"))
# trace/reaper.h: a look every REAPER_INTERVAL_NS, a process gone freed at its second.
INTERVAL_S = 10
# What a process gone may stay held: two looks, the loop's ticks, memstats' second.
HELD_S = 2 * INTERVAL_S + 5
REAPED = re.compile(r"^reaped: pid (\d+)$", re.M)
LOOK = re.compile(r"^reap: held (\d+) reaped (\d+) took (\d+) us$", re.M)

# Started in the cgroup: a process every 0.2 s, each sleeping 3 x 100 ms, its
# pid and start time written as it starts; its children are waited for.
CHURNER = r"""
import subprocess, sys, time
workload, out = sys.argv[1], open(sys.argv[2], "w")
running, i = [], 0
while True:
    i += 1
    p = subprocess.Popen([workload, "sleep", "wlr_%d" % i, "3", "100"])
    out.write("%d %f\n" % (p.pid, time.monotonic()))
    out.flush()
    running.append(p)
    running = [p for p in running if p.poll() is None]
    # A process every 0.2 s: the churn's pace.
    time.sleep(0.2)
"""


def processes(serve):
    """What the last memstats line says the symbolizer holds."""
    stats = ts.memstats(serve.log)
    return stats[-1]["processes"] if stats else None


def start_in(cgroup, argv):
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                            preexec_fn=lambda: t.move_to_cgroup(cgroup, os.getpid()))


def started(path):
    """The churner's (pid, monotonic start) so far."""
    out = []
    with open(path) as f:
        for line in f:
            if line.endswith("\n"):
                pid, at = line.split()
                out.append((int(pid), float(at)))
    return out


def note_reaped(serve, reaped_at):
    now = time.monotonic()
    for pid in REAPED.findall(serve.stderr()):
        reaped_at.setdefault(int(pid), now)


def window_names(raw, comm_re):
    """Per sample of a comm matching comm_re: its frames' function names."""
    samples, locations, _ = t.parse_pprof_raw(raw)
    out = []
    for s in samples:
        if re.match(comm_re, s["labels"].get("thread.name", "")):
            out.append((s["labels"]["thread.name"],
                        [fn for loc in s["locations"] for fn in locations[loc]["functions"]]))
    return out


def sleeps_named(named):
    """The samples of the workload's sleep_ms (clock_nanosleep under main) and
    how many of them have sleep_ms between: all, when its symbols are read."""
    sleeps = [names for _, names in named if "clock_nanosleep" in names and "main" in names]
    return len(sleeps), sum("sleep_ms" in names for names in sleeps)


def save_window(reply, name):
    assert reply[0] == 200, reply
    path = os.path.join(TMP, name)
    with open(path, "wb") as f:
        f.write(reply[2])
    return ts.pprof_raw(path)


def test_serve_reap_processes_whose_exit_was_lost():
    """CHURN_SECONDS (40) of a process every 0.2 s (workload sleep, 300 ms)
    in a cgroup, served with its exit records dropped (OFFCPU_TEST_DROP_EXIT),
    beside a long-lived sleeper: the processes held stay within those started
    in the last HELD_S (25) s plus what lived before, and come back to that
    once the churn ends (without the reaping they were every process run);
    every churned process is reaped once, neither the sleeper nor the
    churner ever; processes_reaped in /metrics counts them; a window in the
    churn names the churned processes' sleep_ms, one at the end the
    sleeper's."""
    top = os.path.join(t.cgroup2_root(), "offcpu-reap-%d" % os.getpid())
    os.mkdir(top)
    pids_path = os.path.join(TMP, "reap-churn-pids")
    serve = sleeper = churner = None
    try:
        serve = ts.Serve(["--cgroup", top, "-m", "0"], binary=BINARY,
                         env={"OFFCPU_TEST_DROP_EXIT": "1", "OFFCPU_TEST_MEMSTATS": "1"})
        sleeper = start_in(top, [WORKLOAD, "sleep", "wlr_long", "100000", "200"])
        # The baseline: a memstats line once the sleeper is held (its waits counted).
        t.wait_until(lambda: ts.waits_of(serve, "wlr_long"), 60, "serve counting wlr_long's waits")
        lines = len(ts.memstats(serve.log))
        t.wait_until(lambda: len(ts.memstats(serve.log)) > lines, 30,
                     "a memstats line after the sleeper's waits")
        baseline = processes(serve)
        assert baseline is not None, serve.stderr()[-2000:]
        churner = start_in(top, [sys.executable, "-c", CHURNER, WORKLOAD, pids_path])
        began = time.monotonic()
        held = []  # (monotonic, processes held, of them the churn's started in HELD_S)
        reaped_at = {}  # pid -> when its "reaped:" line was first read
        windows = []
        opened = False
        while time.monotonic() - began < CHURN_SECONDS:
            # A reading a second through the churn: its pace.
            time.sleep(1)
            now = time.monotonic()
            recent = sum(1 for _, at in started(pids_path) if at >= now - HELD_S)
            held.append((now - began, processes(serve), recent))
            note_reaped(serve, reaped_at)
            if not opened and now - began >= 10:
                opened = True
                w = threading.Thread(target=lambda: windows.append(
                    serve.get("/debug/pprof/offcpu?seconds=5")))
                w.start()
        churner.kill()
        churner.wait()
        churner = None
        churned = started(pids_path)
        # The last ones end within 300 ms; then two looks.
        ended = time.monotonic()
        while time.monotonic() - ended < HELD_S:
            # A reading a second for HELD_S: what is held after the churn.
            time.sleep(1)
            now = time.monotonic()
            recent = sum(1 for _, at in churned if at >= now - HELD_S)
            held.append((now - began, processes(serve), recent))
            note_reaped(serve, reaped_at)
        w.join()
        late = serve.get("/debug/pprof/offcpu?seconds=3")
        _, text = serve.metrics()
        assert serve.stop() == 0, serve.stderr()[-3000:]
        log = serve.stderr()
        reaped = [int(p) for p in REAPED.findall(log)]
        looks = [tuple(int(x) for x in m) for m in LOOK.findall(log)]
        _, samples = ts.parse_exposition(text)
        metric = ts.value(samples, "offcpu_processes_reaped_total")
        churned_pids = set(p for p, _ in churned)
        print("# %d processes churned in %d s (baseline %d held): held at most %d during the "
              "churn, %d at the end; %d reaped (%d of the churn's), processes_reaped %s; "
              "%d looks, the longest %d us" %
              (len(churned), CHURN_SECONDS, baseline,
               max(h for s, h, _ in held if s <= CHURN_SECONDS), held[-1][1], len(reaped),
               len(churned_pids & set(reaped)), metric, len(looks),
               max(x[2] for x in looks) if looks else -1))
        assert len(churned) >= CHURN_SECONDS * 2, len(churned)
        # The churner's pid and the sleeper's stay; the churn goes as it ran.
        for s, h, recent in held:
            assert h <= baseline + 1 + recent + 3, (s, h, recent, held)
        assert held[-1][1] <= baseline + 3, held
        assert sleeper.pid not in reaped and sleeper.poll() is None
        assert len(reaped) == len(set(reaped)), sorted(reaped)
        # The churner's own pid, held from its first wait, is killed now, not yet reaped.
        missed = churned_pids - set(reaped)
        assert len(missed) <= len(churned) // 20, (len(missed), len(churned))
        assert metric > 0 and metric == len(reaped), (metric, len(reaped))
        # The grace: gone at two looks in a row, INTERVAL_S apart, not sooner (each
        # sleeps 300 ms from before its Popen returned), and not much later either.
        after = sorted(reaped_at[p] - (at + 0.3) for p, at in churned if p in reaped_at)
        print("# reaped %.1f to %.1f s after its end (median %.1f)" %
              (after[0], after[-1], after[len(after) // 2]))
        assert after[0] >= INTERVAL_S - 0.2 and after[-1] <= HELD_S + 5, after
        # While they lived, their functions were named: the reaping freed only the gone.
        named = window_names(save_window(windows[0], "reap-window.pb.gz"), r"^wlr_\d+$")
        sleeps, with_sleep_ms = sleeps_named(named)
        print("# window in the churn: %d samples of the churn's processes, %d in sleep_ms, "
              "%d of them named" % (len(named), sleeps, with_sleep_ms))
        assert sleeps >= 10 and with_sleep_ms == sleeps, named[:5]
        named = window_names(save_window(late, "reap-late.pb.gz"), r"^wlr_long$")
        sleeps, with_sleep_ms = sleeps_named(named)
        assert sleeps >= 1 and with_sleep_ms == sleeps, named
    finally:
        for p in (churner, sleeper):
            if p:
                p.kill()
                p.wait()
        if serve and serve.p.poll() is None:
            serve.stop()
        t.remove_cgroup(top)


def test_serve_reap_look_cost_with_many_processes():
    """MANY (2,000) processes each waking every second (workload sleep) in a
    cgroup, held by offcpu serve: two looks or more, each at MANY held or
    more, none reaped (they all live), each under a second; the sleepers'
    functions still named in a window after them. The look's time is
    printed: one read of /proc/PID/stat each."""
    top = os.path.join(t.cgroup2_root(), "offcpu-reap-many-%d" % os.getpid())
    os.mkdir(top)
    serve = spawner = None
    try:
        serve = ts.Serve(["--cgroup", top, "-m", "0"], binary=BINARY,
                         env={"OFFCPU_TEST_MEMSTATS": "5"})
        # One shell starts them all, so that the test's own process is not slowed by it.
        spawner = subprocess.Popen(
            ["sh", "-c", "echo $$ > %s/cgroup.procs; i=0; while [ $i -lt %d ]; do "
             "i=$((i+1)); %s sleep wlm_$i 100000 1000 & done; wait" % (top, MANY, WORKLOAD)])
        t.wait_until(lambda: len(open(os.path.join(top, "cgroup.procs")).read().split()) >=
                     MANY + 1, 120, "the sleepers started")

        def full_looks():
            return [m for m in LOOK.findall(serve.stderr()) if int(m[0]) >= MANY]
        # Two looks after every sleeper's first wait: each holding them all.
        t.wait_until(lambda: len(full_looks()) >= 2, 3 * INTERVAL_S + 60,
                     lambda: "two looks holding %d: %s" % (MANY, LOOK.findall(serve.stderr())))
        window = serve.get("/debug/pprof/offcpu?seconds=3")
        assert serve.stop() == 0, serve.stderr()[-3000:]
        log = serve.stderr()
        looks = [tuple(int(x) for x in m) for m in LOOK.findall(log)]
        full = [x for x in looks if x[0] >= MANY]
        print("# %d processes: looks (held, reaped, us): %r; RSS at the end %s" %
              (MANY, looks, ts.memstats(serve.log)[-1].get("rss")))
        assert len(full) >= 2, looks
        assert all(x[1] == 0 for x in looks), looks
        assert all(x[2] < 1000000 for x in full), looks
        named = window_names(save_window(window, "reap-many.pb.gz"), r"^wlm_\d+$")
        sleeps, with_sleep_ms = sleeps_named(named)
        print("# window after the looks: %d samples of the sleepers, %d in sleep_ms, %d named" %
              (len(named), sleeps, with_sleep_ms))
        assert sleeps >= MANY // 4 and with_sleep_ms == sleeps, named[:5]
    finally:
        if spawner:
            spawner.kill()
            spawner.wait()
        if serve and serve.p.poll() is None:
            serve.stop()
        t.remove_cgroup(top)


def main():
    return t.run_suite(globals())


if __name__ == "__main__":
    sys.exit(main())
