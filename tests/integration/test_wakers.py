#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Who woke each wait, and how long it then waited for a CPU.

The workloads (wake_workload.c) know their wakers and time their own
waits; perf sched timehist, run over the very same workload, is the
reference for the run-queue split.
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
import test_unwind as tu  # noqa: E402

WAKE = os.path.join(t.ROOT, "build", "tests", "wake_workload")
WAKER_NOFP = os.path.join(t.ROOT, "build", "tests", "waker_nofp")


def workload_lines(stdout):
    """What wake_workload printed: (tids by name, truth by name, children)."""
    tids, truth, children = {}, {}, []
    for line in stdout.splitlines():
        f = line.split()
        if f and f[0] == "tid":
            tids[f[1]] = int(f[2])
        elif f and f[0] == "truth":
            truth.setdefault(f[1], []).append(int(f[2]))
        elif f and f[0] == "child":
            children.append(int(f[1]))
    return tids, truth, children


def traced(mode, *args, tracer_args=(), fmt="json", wrap=()):
    """offcpu -- wake_workload MODE ARGS: (waits or output path, tids by name, truth, children)."""
    out = os.path.join(t.TMP, "wake-%s-%d.%s" % (mode, os.getpid(), fmt))
    cmd = list(wrap) + [t.OFFCPU, "-f", fmt, "-o", out] + list(tracer_args) + \
        ["--", WAKE, mode] + [str(a) for a in args]
    r = t.run(cmd, timeout=300)
    assert r.returncode == 0, "%s: %d %s" % (cmd, r.returncode, r.stderr)
    tids, truth, children = workload_lines(r.stdout)
    if fmt == "json":
        waits, stats = t.read_json_lines(out)
        return waits, tids, truth, children, out
    return out, tids, truth, children, out


def of_tid(waits, tid):
    return [w for w in waits if w["tid"] == tid]


def test_condvar_waker_is_the_peer_and_blocked_time_its_clock():
    waits, tids, truth, _, _ = traced("condvar", 12, 50, tracer_args=["-m", "5ms"])
    mine = [w for w in of_tid(waits, tids["waiter"]) if w["wait"].startswith("lock")]
    assert len(mine) == 12, "waiter's waits: %d of 12" % len(mine)
    # The peer's clock starts once it has seen the waiter waiting (it polls,
    # and may itself wait for a CPU then); the waiter's own starts as it
    # says it waits, just before it blocks. Its blocked time lies between.
    for w, peer_ns, since_ns in zip(mine, truth["peer"], truth["waiting"]):
        assert w["waker"]["tid"] == tids["peer"], w["waker"]
        assert w["waker"]["comm"] == "peer" and "context" not in w["waker"], w["waker"]
        assert 0 <= w["runq_ns"] <= w["duration_ns"]
        blocked = w["duration_ns"] - w["runq_ns"]
        assert 0.98 * peer_ns <= blocked <= 1.02 * since_ns, \
            "blocked %d ns, the peer's clock %d ns, the waiter's %d ns" % (
                blocked, peer_ns, since_ns)


def perf_timehist(data, tid):
    """The thread's switch-ins as perf sched timehist shows them: (wait time, sch delay) in ns."""
    # Other threads on the machine may have any bytes in their names.
    r = t.run(["perf", "sched", "timehist", "-i", data], timeout=300, errors="replace")
    assert r.returncode == 0, r.stderr
    tag = re.compile(r"\[%d[/\]]" % tid)
    return [(float(f[-3]) * 1e6, float(f[-2]) * 1e6)
            for f in (line.split() for line in r.stdout.splitlines() if tag.search(line))]


def matched(waits, lines):
    """(wait, perf line) pairs of the same switch-ins, found in order by duration = wait time.

    Each side may have switch-ins the other lacks at the edges: perf sees a new
    thread's first switch-in, which has no start for offcpu; either may lose
    one (this VM hides some switch-ins, docs/accuracy.md). Totals alone would count them."""
    pairs, i, j = [], 0, 0
    while i < len(waits) and j < len(lines):
        def same(a, b):
            return abs(waits[a]["duration_ns"] - lines[b][0]) <= 50_000 + 0.001 * lines[b][0]
        if same(i, j):
            pairs.append((waits[i], lines[j]))
            i, j = i + 1, j + 1
            continue
        skip = next(((di, dj) for di, dj in ((0, 1), (1, 0), (1, 1), (0, 2), (2, 0))
                     if i + di < len(waits) and j + dj < len(lines) and same(i + di, j + dj)),
                    (1, 1))
        i, j = i + skip[0], j + skip[1]
    return pairs


def test_runq_matches_perf_sched_timehist_on_one_cpu():
    data = os.path.join(t.TMP, "sched-%d.data" % os.getpid())
    waits, tids, _, _, _ = traced(
        "pinned", 100, 10, tracer_args=["-m", "0"],
        wrap=["perf", "sched", "record", "-q", "-o", data])
    # The sleeper: woken by its timer, then runnable behind the hog.
    sleeper = of_tid(waits, tids["sleeper"])
    assert len(sleeper) >= 100, len(sleeper)
    pairs = matched(sleeper, perf_timehist(data, tids["sleeper"]))
    assert len(pairs) >= 0.9 * len(sleeper), "%d of %d waits found in perf's" % (
        len(pairs), len(sleeper))
    runq = sum(w["runq_ns"] for w, _ in pairs)
    blocked = sum(w["duration_ns"] - w["runq_ns"] for w, _ in pairs)
    # perf's runnable time: "sch delay" after a wakeup; a preempted wait has
    # none, all its "wait time" is runnable (as all of it is runq_ns).
    woken = [(w, line) for w, line in pairs if w["state"] not in ("preempted", "running")]
    delay = sum(line[1] for _, line in woken) + sum(
        line[0] for w, line in pairs if w["state"] in ("preempted", "running"))
    wait = sum(line[0] for _, line in woken)
    woken_delay = sum(line[1] for _, line in woken)
    assert runq > 0.02 * (runq + blocked), "runq %d of %d: the hogs never delayed it" % (
        runq, runq + blocked)
    assert abs(runq - delay) <= 0.05 * delay, "runq %d ns, perf's sch delay %d ns" % (
        runq, delay)
    assert abs(blocked - (wait - woken_delay)) <= 0.05 * (wait - woken_delay), \
        "blocked %d ns, perf's wait time - sch delay %d ns" % (blocked, wait - woken_delay)
    # The hog waits runnable (preempted), but for its move to CPU 0 (sched_setaffinity,
    # woken by the migration thread): perf counts the runnable time as its wait time.
    hog = of_tid(waits, tids["hog"])
    runnable = [w for w in hog if w["state"] in ("preempted", "running")]
    assert len(runnable) >= len(hog) - 2, [(w["state"], w["wait"]) for w in hog]
    assert all(w["runq_ns"] == w["duration_ns"] and "waker" not in w for w in runnable)
    # Its waits are many and alike (the sleeper's turns): too alike to pair by
    # duration, each too short for a missing one at the edges to matter. Totals.
    hog_runq = sum(w["runq_ns"] for w in hog)
    wait = sum(line[0] for line in perf_timehist(data, tids["hog"]))
    assert abs(hog_runq - wait) <= 0.05 * wait, "hog runq %d ns, perf's wait %d ns" % (
        hog_runq, wait)


def woken(waits, stats):
    """The waits with a waker: the rest must be counted in wakers_unseen,
    and be at most one in a thousand."""
    unseen = [w for w in waits if "waker" not in w]
    assert len(unseen) <= stats["wakers_unseen"], (unseen, stats["wakers_unseen"])
    assert stats["wakers_unseen"] <= max(1, len(waits) // 1000), stats["wakers_unseen"]
    return [w for w in waits if "waker" in w]


def test_timer_pipe_and_child_wakers():
    waits, tids, _, children, out = traced("contexts", 10, 20, tracer_args=["-m", "5ms"])
    _, stats = t.read_json_lines(out)
    naps = [w for w in of_tid(waits, tids["napper"]) if w["wait"] == "sleep"]
    assert len(naps) >= 9, naps
    naps = woken(naps, stats)
    contexts = [w["waker"].get("context") for w in naps]
    assert all(c in ("hardirq", "softirq") for c in contexts), contexts
    # An interrupt's waker names the task it interrupted, whichever it was,
    # and the CPU it ran on.
    assert all("tid" in w["waker"] and "comm" in w["waker"] for w in naps)
    assert all(0 <= w["waker"]["cpu"] < os.cpu_count() for w in naps), [w["waker"] for w in naps]
    reads = [w for w in of_tid(waits, tids["reader"]) if w["wait"] == "pipe"]
    assert len(reads) >= 9, reads
    reads = woken(reads, stats)
    assert all(w["waker"]["tid"] == tids["writer"] for w in reads), [
        w["waker"] for w in reads]
    child_waits = [w for w in of_tid(waits, tids["main"]) if w["wait"] == "child"]
    assert len(child_waits) >= 9, [(w["wait"], w.get("waker")) for w in of_tid(
        waits, tids["main"])]
    child_waits = woken(child_waits, stats)
    assert all(w["waker"]["pid"] in children and "context" not in w["waker"]
               for w in child_waits), [w["waker"] for w in child_waits]


def test_loopback_reader_is_woken_by_the_sender():
    """A TCP read over loopback ends in NET_RX's softirq, which runs on the
    sending thread as it enables bottom halves again: its waker is that
    thread, not "[softirq]", as a pipe's reader is woken by the writer."""
    waits, tids, _, _, _ = traced("loopback", 10, 20, tracer_args=["-m", "5ms"])
    reads = [w for w in of_tid(waits, tids["client"]) if w["wait"].startswith("net")]
    assert len(reads) >= 9, [(w["wait"], w.get("waker")) for w in of_tid(waits, tids["client"])]
    assert all(w["waker"]["tid"] == tids["server"] and "context" not in w["waker"]
               for w in reads), [w["waker"] for w in reads]


def dot_graph(path):
    """Nodes {id: label}, edges {(from label, to label)}, knot labels."""
    text = open(path).read()
    r = t.run(["dot", "-Tsvg", path, "-o", path + ".svg"])
    assert r.returncode == 0, r.stderr
    nodes, knots, edges = {}, set(), set()
    for m in re.finditer(r'^\s*(n\d+) \[label="([^"]*)"([^\]]*)\];', text, re.M):
        nodes[m.group(1)] = m.group(2)
        if "knot=true" in m.group(3):
            knots.add(m.group(2))
    for m in re.finditer(r"^\s*(n\d+) -> (n\d+) \[", text, re.M):
        edges.add((nodes[m.group(1)], nodes[m.group(2)]))
    return nodes, edges, knots


def test_chain_knot_is_the_slow_worker():
    path, tids, _, _, _ = traced("chain", 15, 20, tracer_args=["-m", "0"], fmt="dot")
    _, edges, knots = dot_graph(path)
    a, b, c = ("chain-%s %d" % (n, tids["chain-" + n]) for n in "abc")
    assert (c, b) in edges and (b, a) in edges, edges
    assert c in knots, (c, knots)
    assert a not in knots and b not in knots, knots
    # The text report says the same.
    report = run_report(path.replace(".dot", ".json"), ["chain", 15, 20])
    section = report.split("\nKnots")[1].split("\n\n")[0]
    assert re.search(r"#1 woke .*: chain-c \d+$", section, re.M), section
    assert "chain-a" not in section and "chain-b" not in section, section


def run_report(json_path, workload):
    r = t.run([t.OFFCPU, "-m", "0", "-f", "json", "-o", json_path, "--", WAKE] +
              [str(a) for a in workload])
    assert r.returncode == 0, r.stderr
    r = t.run([t.OFFCPU, "report", json_path])
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_ping_pong_wakers_are_the_peer_even_before_the_switch_out():
    """A semaphore ping-pong on two CPUs: the peer's post often comes as the
    waiter is between its sleeping state and its switch-out, before the
    wait is traced. Every blocked wait still names the peer (before, about
    1 in 6,000 had no waker), and no wait is given a wakeup that made its
    thread runnable before it blocked."""
    waits, tids, _, _, out = traced("convoy", 20000, tracer_args=["-m", "0"])
    _, stats = t.read_json_lines(out)
    peer = {tids["convoy-x"]: tids["convoy-y"], tids["convoy-y"]: tids["convoy-x"]}
    sems = [w for w in waits if w["tid"] in peer and w["wait"] == "lock:semaphore"]
    assert len(sems) >= 10000, len(sems)
    unseen = [w for w in sems if "waker" not in w]
    assert len(unseen) <= stats["wakers_unseen"] <= len(sems) // 10000, (
        len(unseen), stats["wakers_unseen"], len(sems))
    wrong = [w for w in sems if "waker" in w and w["waker"]["tid"] != peer[w["tid"]]]
    assert not wrong, wrong[:3]
    print("    %d semaphore waits, %d without a waker" % (len(sems), len(unseen)))


def test_convoy_is_one_knot():
    path, tids, _, _, _ = traced("convoy", 200, tracer_args=["-m", "0"], fmt="dot")
    _, edges, knots = dot_graph(path)
    x, y = ("convoy-%s %d" % (n, tids["convoy-" + n]) for n in "xy")
    assert (x, y) in edges and (y, x) in edges, edges
    assert x in knots and y in knots, knots
    text = open(path).read()
    assert re.search(r"heaviest knot: (%s, %s|%s, %s)" % (x, y, y, x), text), text[:400]


def test_group_by_waker_and_woken_by_table():
    waits, tids, _, _, path = traced("contexts", 6, 20, tracer_args=["-m", "5ms"])
    r = t.run([t.OFFCPU, "report", "--group-by", "waker", path])
    assert r.returncode == 0, r.stderr
    assert "\nBy waker (top 20)\n" in r.stdout, r.stdout
    by_waker = r.stdout.split("\nBy waker")[1].split("\n\n")[0]
    assert re.search(r"^\s+writer\s+\d+\s+%d\s" % tids["writer"], by_waker, re.M), by_waker
    assert re.search(r"^\s+\[(hard|soft)irq\]\s", by_waker, re.M), by_waker
    woken = r.stdout.split("\nWoken by")[1].split("\n\n")[0]
    assert "writer %d -> reader %d" % (tids["writer"], tids["reader"]) in woken, woken
    # Blocked and run-queue columns add up to the off-CPU one in every table.
    assert "blocked" in r.stdout and "run queue" in r.stdout


def test_fields_survive_report_round_trip():
    waits, _, _, _, path = traced("contexts", 4, 10, tracer_args=["-m", "1ms", "--wakers"])
    assert any(w.get("waker", {}).get("kernel_stack") for w in waits), "no waker stacks"
    again = os.path.join(t.TMP, "wake-again.json")
    r = t.run([t.OFFCPU, "report", "-o", again, path])
    assert r.returncode == 0, r.stderr
    back, _ = t.read_json_lines(again)

    def key(w):
        return (w["tid"], w["ts_ns"])
    assert sorted(map(key, waits)) == sorted(map(key, back))
    by_key = {key(w): w for w in back}
    for w in waits:
        b = by_key[key(w)]
        assert b["runq_ns"] == w["runq_ns"] and b.get("waker") == w.get("waker"), (w, b)


def test_pprof_has_runq_and_go_tool_pprof_reads_it():
    waits, tids, _, _, path = traced("pinned", 30, 10, tracer_args=["-m", "0"])
    pb = os.path.join(t.TMP, "wake.pb.gz")
    r = t.run([t.OFFCPU, "report", "-o", pb, path])
    assert r.returncode == 0, r.stderr
    r = t.run(["go", "tool", "pprof", "-raw", pb], timeout=300)
    assert r.returncode == 0, r.stderr
    assert "runq/nanoseconds" in r.stdout, r.stdout[:500]
    r = t.run(["go", "tool", "pprof", "-sample_index=runq", "-top", pb], timeout=300)
    assert r.returncode == 0, r.stderr
    total = sum(w["runq_ns"] for w in waits)
    m = re.search(r"of ([\d.]+)(ms|s|us) total", r.stdout)
    assert m, r.stdout[:500]
    scale = {"s": 1e9, "ms": 1e6, "us": 1e3}[m.group(2)]
    assert abs(float(m.group(1)) * scale - total) <= 0.01 * total + 1e4, (m.group(0), total)


def folded_total(path):
    total = 0
    for line in open(path):
        total += int(line.rsplit(" ", 1)[1])
    return total


def test_folded_time_runq_and_blocked_split_off_cpu():
    waits, tids, _, _, path = traced("pinned", 30, 10, tracer_args=["-m", "0"])
    totals = {}
    for kind in ("off-cpu", "blocked", "runq"):
        out = os.path.join(t.TMP, "wake-%s.folded" % kind)
        r = t.run([t.OFFCPU, "report", "--time", kind, "-o", out, path])
        assert r.returncode == 0, r.stderr
        totals[kind] = folded_total(out)
    assert totals["runq"] == sum(w["runq_ns"] for w in waits)
    assert totals["off-cpu"] == totals["runq"] + totals["blocked"]
    r = t.run([t.OFFCPU, "report", "--time", "queued", path])
    assert r.returncode == 2 and "'queued'" in r.stderr, r.stderr


def test_wakers_off_wake_stacks():
    out = os.path.join(t.TMP, "wake-offwake.json")
    r = t.run([t.OFFCPU, "--wakers", "--call-graph", "fp", "-m", "5ms", "-f", "json", "-o",
               out, "--", WAKE, "contexts", "6", "20"])
    assert r.returncode == 0, r.stderr
    tids = {f[1]: int(f[2]) for f in (line.split() for line in r.stdout.splitlines())
            if f and f[0] == "tid"}
    waits, stats = t.read_json_lines(out)
    reads = [w for w in of_tid(waits, tids["reader"]) if w["wait"] == "pipe"]
    assert reads, "no pipe reads"
    with_stack = [w for w in reads if w["waker"].get("kernel_stack")]
    assert len(with_stack) >= len(reads) - 1, (len(with_stack), len(reads))
    for w in with_stack:
        ksyms = [f.get("sym", "") for f in w["waker"]["kernel_stack"]]
        assert any("pipe_write" in s for s in ksyms), ksyms
        # By frame pointers: libc's write keeps none, so its caller is skipped.
        usyms = [f.get("sym", "") for f in w["waker"]["user_stack"]]
        assert usyms and "write" in usyms[0] and "start_thread" in usyms, usyms
    assert stats["waker_stacks"] >= len(with_stack)
    # Off-wake folded: the waker's frames above the wakee's, after "--".
    folded = os.path.join(t.TMP, "wake-offwake.folded")
    r = t.run([t.OFFCPU, "report", "-o", folded, out])
    assert r.returncode == 0, r.stderr
    lines = [line for line in open(folded) if line.startswith("reader;")
             and ";--;" in line]
    assert lines, open(folded).read()[:2000]
    top = lines[0].rsplit(" ", 1)[0].split(";")
    after = top[top.index("--") + 1:]
    assert after[-1] == "writer" and any("pipe_write" in f for f in after), after
    svg = os.path.join(t.TMP, "wake-offwake.svg")
    r = t.run([t.OFFCPU, "report", "-o", svg, out])
    assert r.returncode == 0, r.stderr
    assert "<title>--\n" in open(svg).read(), "no -- frame in the svg"


# The feeder's calls down to its write, callers after callees (waker_nofp.c).
FEED_CHAIN = ["feed_c", "feed_b", "feed_a", "feeder", "start_thread"]


def nofp_waker(*tracer_args):
    """--wakers -m 0 -- waker_nofp: (waits, stats, tids by name, the drainer's pipe waits)."""
    out = os.path.join(t.TMP, "wake-nofp-%d.json" % os.getpid())
    cmd = [t.OFFCPU, "--wakers", "-m", "0", "-f", "json", "-o", out] + list(tracer_args) + \
        ["--", WAKER_NOFP, "8", "20"]
    r = t.run(cmd, timeout=300)
    assert r.returncode == 0, "%s: %d %s" % (cmd, r.returncode, r.stderr)
    tids = {f[1]: int(f[2]) for f in (line.split() for line in r.stdout.splitlines())
            if f and f[0] == "tid"}
    waits, stats = t.read_json_lines(out)
    reads = [w for w in of_tid(waits, tids["drainer"]) if w["wait"] == "pipe"]
    # Each round's write wakes the drainer once, and again once it read half.
    assert len(reads) >= 8, [(w["wait"], w.get("waker")) for w in of_tid(waits, tids["drainer"])]
    assert all(w.get("waker", {}).get("tid") == tids["feeder"] for w in reads), [
        w.get("waker") for w in reads]
    return waits, stats, tids, reads


def test_waker_without_frame_pointers_unwound_as_every_stack():
    """A waker built -O2 without frame pointers: its user stack at each
    wakeup is whole, from libc's write through its chain of calls to the
    thread's root, every frame named (no heap or stack word taken for a
    return address), and address for address the stack of the feeder's own
    wait in that same write, blocked on the full pipe right after the
    wakeup, which is unwound as every wait's is."""
    waits, stats, tids, reads = nofp_waker()
    own = {tuple(f["addr"] for f in w["user_stack"])
           for w in of_tid(waits, tids["feeder"]) if w["wait"] == "pipe" and w["user_stack"]}
    assert own, [(w["wait"], w["user_stack"]) for w in of_tid(waits, tids["feeder"])]
    with_stack = [w for w in reads if w["waker"].get("user_stack")]
    assert len(with_stack) >= len(reads) - stats["waker_stack_failures"], (
        len(with_stack), len(reads), stats["waker_stack_failures"])
    assert stats["waker_stack_failures"] <= 1, stats["waker_stack_failures"]
    for w in with_stack:
        stack = w["waker"]["user_stack"]
        syms = [f.get("sym", f["addr"]) for f in stack]
        assert all(f.get("sym") and f.get("module") for f in stack), syms
        assert "feed_c" in syms, syms
        at = syms.index("feed_c")
        assert at >= 1 and all("write" in s for s in syms[:at]), syms
        assert syms[at:at + len(FEED_CHAIN)] == FEED_CHAIN, syms
        assert len(syms) == at + len(FEED_CHAIN) + 1 and "clone" in syms[-1], syms
        assert tuple(f["addr"] for f in stack) in own, (syms, own)
        ksyms = [f.get("sym", "") for f in w["waker"]["kernel_stack"]]
        assert any("pipe_write" in s for s in ksyms), ksyms
    # Every waker record found its wait (but one whose switch-in was never seen).
    assert stats["waker_stacks_unmatched"] <= stats["switch_in_unseen"] + \
        stats["switch_in_recovered"], stats
    print("    %d of %d waker stacks whole to %s" % (len(with_stack), len(reads), syms[-1]))


def in_write(pid, tid):
    try:
        with open("/proc/%d/task/%d/syscall" % (pid, tid)) as f:
            return f.read().split()[0] == "1"
    except (OSError, IndexError):
        return False


def test_waker_stack_is_gdbs_frame_for_frame():
    """The waker's stack at each wakeup, frame for frame as gdb prints the
    waker blocked in the same write from the same calls: waker_nofp's
    feeder, once the rounds are done, writes once more into the full pipe
    nobody reads, and stays there for gdb."""
    out = os.path.join(t.TMP, "wake-nofp-gdb-%d.json" % os.getpid())
    prog = subprocess.Popen([WAKER_NOFP, "8", "20", "hang"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    tracer = None
    try:
        # -v says "tracing" on stderr once attached.
        tracer = subprocess.Popen([t.OFFCPU, "-v", "-p", str(prog.pid), "--wakers", "-m", "0",
                                   "-f", "json", "-o", out], stderr=subprocess.PIPE, text=True)
        said = []
        for line in tracer.stderr:
            said.append(line)
            if "tracing" in line:
                break
        assert said and "tracing" in said[-1], "offcpu did not start: %s" % "".join(said)
        prog.stdin.write("go\n")
        prog.stdin.flush()
        tids = {}
        for line in prog.stdout:
            f = line.split()
            if f and f[0] == "tid":
                tids[f[1]] = int(f[2])
            elif f == ["done"]:
                break
        assert "feeder" in tids and "drainer" in tids, tids
        t.wait_until(lambda: in_write(prog.pid, tids["feeder"]), 30,
                     "the feeder blocked in its last write")
        tracer.send_signal(signal.SIGINT)
        _, err = tracer.communicate(timeout=120)
        assert tracer.returncode == 0, err
        gdb = tu.gdb_stacks(prog.pid)[tids["feeder"]]
    finally:
        if tracer and tracer.poll() is None:
            tracer.kill()
            tracer.wait()
        prog.kill()
        prog.wait()
    assert [n for _, n in gdb if n in FEED_CHAIN] == FEED_CHAIN, gdb
    waits, _ = t.read_json_lines(out)
    reads = [w for w in of_tid(waits, tids["drainer"]) if w["wait"] == "pipe" and
             w.get("waker", {}).get("tid") == tids["feeder"] and w["waker"].get("user_stack")]
    assert len(reads) >= 8, [(w["wait"], w.get("waker")) for w in of_tid(waits, tids["drainer"])]
    for w in reads:
        frames = w["waker"]["user_stack"]
        tu.compare({"comm": "feeder", "tid": tids["feeder"],
                    "addrs": [int(f["addr"], 16) for f in frames],
                    "names": [f.get("sym") for f in frames]}, gdb)


def test_waker_stacks_under_call_graph_fp_stay_frame_pointer_walks():
    """--call-graph fp keeps the kernel's frame-pointer walk for wakers as
    for waits: through code without frame pointers it gets no further than
    the leaf libc's write, the chain below it unseen."""
    waits, stats, tids, reads = nofp_waker("--call-graph", "fp")
    with_stack = [w for w in reads if w["waker"].get("user_stack")]
    assert len(with_stack) >= len(reads) - 1, (len(with_stack), len(reads))
    for w in with_stack:
        syms = [f.get("sym", f["addr"]) for f in w["waker"]["user_stack"]]
        assert "write" in syms[0] and "feed_b" not in syms, syms


def test_no_wakeup_program_costs_nothing_when_off():
    """Without the wakeup program (the bench's baseline) waits carry no waker."""
    env = dict(os.environ, OFFCPU_NO_WAKEUPS="1")
    out = os.path.join(t.TMP, "wake-off.json")
    r = t.run([t.OFFCPU, "-m", "5ms", "-f", "json", "-o", out, "--", WAKE, "contexts", "3",
               "10"], env=env)
    assert r.returncode == 0, r.stderr
    waits, _ = t.read_json_lines(out)
    assert waits and not any("waker" in w for w in waits)


def main():
    return t.run_suite(globals())


if __name__ == "__main__":
    sys.exit(main())
