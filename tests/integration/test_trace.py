#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The timeline (-f trace): every wait a slice on its thread's track, every
wakeup a flow from the waker's, in the Trace Event Format Perfetto opens.

Perfetto is not installed here, so each trace goes through import(), a
strict parser written to the rules of Perfetto's JSON importer
(src/trace_processor/importers/json/ and common/slice_tracker.cc,
flow_tracker.cc, trace_sorter.h): events sorted by ts, and at one ts an
"E" first, then "X"s longest first, then the rest in the file's order;
an "X" without a numeric dur is dropped; per track, a stack of open slices, popped only when a later slice
begins there (an end before, or at, the new slice's ts); a slice that
begins inside the top one and ends past it is dropped; only thread_name and
process_name metadata count; flows are keyed by id, cat and name; an "s"
binds to the top of its track's stack, an "f" with "bp":"e" to the top of
its own; an "f" whose "s" came not before it has no start; an instant
event ("i") of thread scope ("s":"t") is a slice of no duration on its
thread's track, on its stack like the others. import() is
stricter than Perfetto where Perfetto would silently do something else:
a drop, an unbound flow, one bound to a slice that had ended (the top of
a stack nothing popped), or events of one track and ts whose file order
differs from that sort (older Perfetto kept the file's order) is an
error here.

Workloads: wake_workload.c (condvar: a waiter woken by a named peer;
contexts: a napper woken by timer interrupts), a Python script with hostile
thread names asleep across the whole recording (open waits), and a
synthetic recording of 200,000 waits converted by offcpu report.
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_hostile_names as hostile  # noqa: E402
import harness as t  # noqa: E402
import test_wakers as wakers  # noqa: E402

WAKE = wakers.WAKE
# output_trace.c's process of interrupt tracks.
INTERRUPTS_PID = 0x400001


class TraceError(AssertionError):
    pass


def to_ns(v, what):
    """Perfetto's CoerceToTs of a JSON number: llround(us * 1000)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TraceError("%s: %r is not a number" % (what, v))
    return int(round(v * 1000))


class Slice:
    def __init__(self, e, ts, dur, depth, parent):
        self.e, self.ts, self.dur, self.end = e, ts, dur, ts + dur
        self.track = (e["pid"], e["tid"])
        self.name, self.cat, self.args = e["name"], e.get("cat"), e.get("args", {})
        self.depth, self.parent = depth, parent
        self.flows_in, self.flows_out, self.children = [], [], []
        if parent is not None:
            parent.children.append(self)

    def wait(self):
        """The wait slice this one is, or is nested in (its run-queue part)."""
        return self.parent if self.name == "runq" else self


class Trace:
    def __init__(self, doc):
        self.doc = doc
        self.slices, self.flows, self.instants = [], [], []
        self.threads, self.processes = {}, {}
        self.other = doc.get("otherData", {})

    def on(self, tid, names=None):
        return [s for s in self.slices if s.track[1] == tid and
                (names is None or s.name in names)]


def check_event(e):
    if not isinstance(e, dict):
        raise TraceError("event %r is no object" % (e,))
    ph = e.get("ph")
    if ph not in ("M", "X", "s", "f", "i"):
        raise TraceError("unexpected phase %r: %r" % (ph, e))
    for key in ("pid", "tid"):
        if isinstance(e.get(key), bool) or not isinstance(e.get(key), int):
            raise TraceError("%s %r of %r" % (key, e.get(key), e))
    if not isinstance(e.get("name"), str):
        raise TraceError("name of %r" % (e,))
    if ph == "M":
        if e["name"] not in ("thread_name", "process_name") or \
                not isinstance(e.get("args", {}).get("name"), str):
            raise TraceError("metadata Perfetto ignores: %r" % (e,))
        return
    to_ns(e.get("ts"), "ts of %r" % (e,))
    if ph == "i":
        if e.get("s") != "t":
            raise TraceError("an instant not on its thread's track: %r" % (e,))
    elif ph == "X":
        if to_ns(e.get("dur"), "dur of %r" % (e,)) < 0:
            raise TraceError("negative dur: %r" % (e,))
    else:
        if isinstance(e.get("id"), bool) or not isinstance(e.get("id"), int):
            raise TraceError("flow id of %r" % (e,))
        if not isinstance(e.get("cat"), str):
            raise TraceError("flow cat of %r" % (e,))
        if ph == "f" and e.get("bp") != "e":
            raise TraceError("an f that binds to the next slice, not its own: %r" % (e,))


def import_trace(path):
    """The trace as Perfetto's importer builds it, or TraceError."""
    raw = open(path, "rb").read()
    text = hostile.clean(raw, path)
    doc = json.loads(text)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise TraceError("no traceEvents array")
    tr = Trace(doc)
    timed = []
    for index, e in enumerate(doc["traceEvents"]):
        check_event(e)
        if e["ph"] == "M":
            table = tr.threads if e["name"] == "thread_name" else tr.processes
            table[e["tid"] if e["name"] == "thread_name" else e["pid"]] = e["args"]["name"]
        else:
            timed.append((to_ns(e["ts"], "ts"), index, e))
    # The JSON importer's order: by ts; at one ts an "E" first, then "X"s,
    # longest first, then the rest, each in the file's order. Older
    # versions kept the file's order at one ts: the file must agree.
    def key(item):
        ts, index, e = item
        rank = -2**63 if e["ph"] == "E" else 2**63 - to_ns(e["dur"], "dur") \
            if e["ph"] == "X" else 2**63
        return (ts, rank, index)
    timed.sort(key=key)
    last = {}
    for ts, index, e in timed:
        track = (e["pid"], e["tid"], ts)
        if last.get(track, -1) > index:
            raise TraceError("at %d ns on track %r the file's order is not the sort's: %r" % (
                ts, track[:2], e))
        last[track] = index
    stacks, open_flows, done = {}, {}, set()
    for ts, _, e in timed:
        track = (e["pid"], e["tid"])
        stack = stacks.setdefault(track, [])
        if e["ph"] in ("X", "i"):
            dur = to_ns(e["dur"], "dur") if e["ph"] == "X" else 0
            while stack and (stack[-1].end < ts or
                             (stack[-1].end == ts and not (stack[-1].dur == 0 and dur == 0))):
                stack.pop()
            if stack and ts < stack[-1].end < ts + dur:
                raise TraceError("dropped as overlapping: %r over %r" % (e, stack[-1].e))
            s = Slice(e, ts, dur, len(stack), stack[-1] if stack else None)
            stack.append(s)
            (tr.slices if e["ph"] == "X" else tr.instants).append(s)
            continue
        top = stack[-1] if stack else None
        if top is None:
            raise TraceError("flow event with no slice on its track: %r" % (e,))
        if not top.ts <= ts < top.end:
            raise TraceError("flow event binds to a slice that ended before it: %r -> %r" % (
                e, top.e))
        key = (e["id"], e["cat"], e["name"])
        if e["ph"] == "s":
            if key in open_flows or key in done:
                raise TraceError("flow id used twice: %r" % (e,))
            open_flows[key] = top
        else:
            src = open_flows.pop(key, None)
            if src is None:
                raise TraceError("flow end without a start before it: %r" % (e,))
            done.add(key)
            tr.flows.append((src, top))
            src.flows_out.append(top)
            top.flows_in.append(src)
    if open_flows:
        raise TraceError("%d flows never end, e.g. %r" % (len(open_flows),
                                                          next(iter(open_flows))))
    for s in tr.slices + tr.instants:
        if s.track[1] not in tr.threads or s.track[0] not in tr.processes:
            raise TraceError("track %r has no thread_name/process_name" % (s.track,))
    return tr


def workload(mode, *args, tracer_args=(), fmt="json"):
    """offcpu -o OUT -- wake_workload MODE ARGS: (OUT, tids by name, truth by name)."""
    out = os.path.join(t.TMP, "trace-%s-%d.%s" % (mode, time.monotonic_ns(),
                                                  "trace.json" if fmt == "trace" else "json"))
    cmd = [t.OFFCPU, "-o", out] + list(tracer_args) + ["--", WAKE, mode] + \
        [str(a) for a in args]
    r = t.run(cmd, timeout=300)
    assert r.returncode == 0, "%s: %d %s" % (cmd, r.returncode, r.stderr)
    tids, truth, _ = wakers.workload_lines(r.stdout)
    return out, tids, truth


def report(recording, *args, out=None):
    out = out or os.path.join(t.TMP, "report-%d.trace.json" % time.monotonic_ns())
    r = t.run([t.OFFCPU, "report", "-o", out] + list(args) + [recording], timeout=300)
    assert r.returncode == 0, r.stderr
    return out


def wait_slices(tr, tid):
    return [s for s in tr.on(tid) if s.cat and s.cat.startswith("wait")]


def flow_from(s, tid):
    """The flows into a wait (its slice or its run-queue part) from track tid."""
    return [src for p in [s] + s.children for src in p.flows_in if src.track[1] == tid]


def test_condvar_recording_converted_every_wait_a_slice_and_flows():
    rec, tids, _ = workload("condvar", 12, 50, tracer_args=["-m", "0"])
    waits, stats = t.read_json_lines(rec)
    tr = import_trace(report(rec))
    assert tr.threads.get(tids["waiter"]) == "waiter", tr.threads
    assert tr.threads.get(tids["peer"]) == "peer", tr.threads
    for name in ("waiter", "peer"):
        tid = tids[name]
        mine = [w for w in waits if w["tid"] == tid]
        slices = wait_slices(tr, tid)
        assert len(slices) == len(mine), "%s: %d slices for %d waits" % (
            name, len(slices), len(mine))
        by_start = {s.ts: s for s in slices}
        for w in mine:
            start = w["ts_ns"] - w["duration_ns"]
            s = by_start.get(start)
            assert s is not None, "%s: no slice at %d ns: %r" % (name, start, w)
            assert s.name == w["wait"] and abs(s.dur - w["duration_ns"]) < 1000, (s.e, w)
            assert s.args["state"] == w["state"] and s.args["runq_ns"] == w.get("runq_ns", 0)
            assert s.args["blocked_ns"] == w["duration_ns"] - w.get("runq_ns", 0)
            if w.get("runq_ns") and w["runq_ns"] < w["duration_ns"]:
                runq = [c for c in s.children if c.name == "runq"]
                assert len(runq) == 1 and runq[0].end == s.end and \
                    abs(runq[0].dur - w["runq_ns"]) < 1000, (s.e, w)
            if w["kernel_stack"]:
                assert s.args["kernel_stack"].split("\n")[0] == w["kernel_stack"][0]["sym"]
    woken = [w for w in waits if w["tid"] == tids["waiter"] and
             w.get("waker", {}).get("tid") == tids["peer"]]
    assert len(woken) >= 11, "the waiter's waits the peer ended: %d" % len(woken)
    # The run-queue time counts from the enqueue, which for a thread of an
    # idle CPU comes when that CPU takes the waker's IPI: by then the peer
    # may be asleep again. Such a wakeup leaves the peer's last microsecond
    # before that sleep: it ran when it woke the waiter.
    peer_waits = [(w["ts_ns"] - w["duration_ns"], w["ts_ns"]) for w in waits
                  if w["tid"] == tids["peer"]]
    with_flow, moved = 0, 0
    for w in woken:
        s = by_start_of(tr, tids["waiter"])[w["ts_ns"] - w["duration_ns"]]
        srcs = flow_from(s, tids["peer"])
        wakeup = w["ts_ns"] - w["runq_ns"]
        asleep = [b for b, e in peer_waits if b <= wakeup < e]
        if len(srcs) != 1 or srcs[0].name != "wakeup":
            continue
        if asleep:
            # 1 us before the sleep, the slice up to it (its last ns is the next mark's).
            ok = asleep[0] - 1002 <= srcs[0].ts < asleep[0] and srcs[0].end < asleep[0]
            moved += ok
        else:
            # The wakeup slice begins a ns before the wakeup, 3 more at a switch-in.
            ok = abs(srcs[0].ts - wakeup) <= 4
        with_flow += ok
    print("# %d of %d wakeups by the peer drawn from its wakeup slice, %d of them moved "
          "before the peer's next sleep" % (with_flow, len(woken), moved))
    assert with_flow >= 0.9 * len(woken), "flows from the peer: %d of %d" % (
        with_flow, len(woken))
    assert tr.other["waits_drawn"] == len([s for s in tr.slices if s.cat.startswith("wait")])


def by_start_of(tr, tid):
    return {s.ts: s for s in wait_slices(tr, tid)}


def test_direct_trace_output_by_extension():
    out, tids, truth = workload("condvar", 12, 50, tracer_args=["-m", "5ms"], fmt="trace")
    tr = import_trace(out)
    mine = [s for s in wait_slices(tr, tids["waiter"]) if s.name.startswith("lock")]
    assert len(mine) == 12, "waiter's lock slices: %d of 12" % len(mine)
    # What the recorder measured is test_wakers.py's to check; here, that
    # the slices say it: the times of the wait, to the microsecond.
    for s in mine:
        assert abs(s.dur - s.args["duration_ns"]) < 1000, s.e
        assert s.args["waker_tid"] == tids["peer"], s.args
    assert sum(s.dur for s in mine) >= 0.9 * sum(truth["peer"]), (mine, truth)
    flows = [s for s in mine if flow_from(s, tids["peer"])]
    assert len(flows) >= 0.9 * 12, "flows from the peer: %d of 12" % len(flows)
    assert tr.processes.get(mine[0].track[0], "").endswith("condvar 12 50"), tr.processes


def test_interrupt_wakeups_on_their_own_tracks():
    out, tids, _ = workload("contexts", 10, 20, tracer_args=["-m", "5ms"], fmt="trace")
    tr = import_trace(out)
    naps = [s for s in wait_slices(tr, tids["napper"]) if s.name == "sleep"]
    assert len(naps) >= 9, "napper's sleeps: %d" % len(naps)
    assert tr.processes.get(INTERRUPTS_PID) == "interrupts", tr.processes
    drawn = 0
    for s in naps:
        assert s.args["waker"] in ("hardirq", "softirq"), s.args
        # Each CPU's interrupts on a track of their own.
        assert 0 <= s.args["waker_cpu"] < os.cpu_count(), s.args
        srcs = [src for part in [s] + s.children for src in part.flows_in]
        if len(srcs) == 1 and srcs[0].track[0] == INTERRUPTS_PID and \
                tr.threads[srcs[0].track[1]] == "CPU %d %s" % (
                    s.args["waker_cpu"], s.args["waker"]) and \
                srcs[0].args["interrupted_tid"] == s.args["interrupted_tid"]:
            drawn += 1
    assert drawn >= 0.9 * len(naps), "interrupt flows: %d of %d" % (drawn, len(naps))
    # The pipe reader's waker is the writer thread, on its own track.
    reads = [s for s in wait_slices(tr, tids["reader"]) if s.name.startswith("pipe")]
    assert reads and sum(1 for s in reads if flow_from(s, tids["writer"])) >= 0.9 * len(reads)


def test_open_waits_drawn_to_the_edge_and_hostile_names_escaped():
    p = hostile.start_hostile()
    try:
        out = os.path.join(t.TMP, "hostile.trace.json")
        r = t.run([t.OFFCPU, "-p", str(p.pid), "-m", "0", "-d", "1s", "-o", out])
        assert r.returncode == 0, r.stderr
    finally:
        p.kill()
        p.wait()
    tr = import_trace(out)
    start = tr.other["recording_start_ts_ns"]
    last_end = max(s.end for s in tr.slices)
    asleep = [s for s in tr.slices if s.cat == "wait,open"]
    # The main thread and the five named ones sleep through it all.
    both = [s for s in asleep if s.args.get("open") == "both"]
    assert len(both) >= 6, [s.e for s in asleep]
    for s in both:
        assert s.ts == start and s.args["drawn_to_edge"] == "start", s.e
        assert s.args["duration_ns"] > s.dur, s.e
        assert s.end == last_end, (s.e, last_end)
    names = set(tr.threads.values())
    for name in hostile.NAMES:
        # json_writer's reading: bytes that are no character become U+FFFD.
        assert name.decode("utf-8", errors="replace") in names, (name, names)
    assert any("\x1b[2J" in n for n in names), names
    # The title as offcpu reads it (controls already shown as '?').
    assert "<svg>&amp\"'" in tr.processes[p.pid], tr.processes


def test_window_cuts_the_recording():
    rec, tids, _ = workload("condvar", 12, 50, tracer_args=["-m", "0"])
    waits, stats = t.read_json_lines(rec)
    begin = stats["recording_start_ts_ns"]
    lo, hi = begin + 200_000_000, begin + 400_000_000
    tr = import_trace(report(rec, "--from", "0.2", "--to", "400ms"))
    assert tr.other["drawn_from_ts_ns"] == lo and tr.other["drawn_to_ts_ns"] == hi, tr.other
    inside = [w for w in waits if w["ts_ns"] > lo and w["ts_ns"] - w["duration_ns"] < hi]
    slices = [s for s in tr.slices if s.cat.startswith("wait")]
    assert len(slices) == len(inside) and inside, (len(slices), len(inside))
    cut = 0
    for s in slices:
        assert lo <= s.ts and s.end <= hi, s.e
        if s.args.get("drawn_to_edge"):
            cut += 1
            assert s.ts == lo or s.end == hi, s.e
    assert cut == sum(1 for w in inside if w["ts_ns"] - w["duration_ns"] < lo or
                      w["ts_ns"] > hi)
    assert tr.other["waits_outside_the_window"] == len(waits) - len(inside)
    # A window is the timeline's; the other formats say so.
    r = t.run([t.OFFCPU, "report", "-f", "text", "--from", "1", rec])
    assert r.returncode == 2 and "-f trace" in r.stderr, r.stderr
    r = t.run([t.OFFCPU, "report", "-f", "trace", "--from", "2", "--to", "1s", rec])
    assert r.returncode == 2 and "--from" in r.stderr, r.stderr
    r = t.run([t.OFFCPU, "report", "-f", "trace", "--to", "soon", rec])
    assert r.returncode == 2 and "'soon'" in r.stderr, r.stderr


def test_system_wide_trace_imports_cleanly():
    """The documented first run: everything, every wait, as Perfetto would import it."""
    out = os.path.join(t.TMP, "all.trace.json")
    # A ping-pong that runs through the recording: a quiet machine alone
    # had 60 waits in 2 s once its idle kernel threads were left out.
    busy = subprocess.Popen([WAKE, "convoy", "100000000"], stdout=subprocess.DEVNULL)
    try:
        # -F: the samples of the convoy's running threads between its wakeups.
        r = t.run([t.OFFCPU, "-m", "0", "-F", "997", "-d", "2s", "-o", out])
    finally:
        busy.kill()
        busy.wait()
    assert r.returncode == 0, r.stderr
    tr = import_trace(out)
    waits = [s for s in tr.slices if s.cat.startswith("wait")]
    pingpong = [s for s in waits if s.track[0] == busy.pid]
    assert len(waits) == tr.other["waits_drawn"] and len(pingpong) > 100, (
        len(waits), len(pingpong))
    assert len(tr.flows) == tr.other["wakeup_flows"] and tr.flows, tr.other
    # Every wait a task ended and the trace drew a wakeup for, it drew an arrow for.
    woken = [s for s in waits if "waker_tid" in s.args]
    arrows = [s for s in woken if s.flows_in or any(c.flows_in for c in s.children)]
    assert len(arrows) >= 0.9 * len(woken), (len(arrows), len(woken))
    assert len(tr.instants) == tr.other["oncpu_samples_drawn"] > 0, tr.other


def trace_engine(path):
    """What DevTools' trace engine (tests/browser/trace_engine_check.mjs) made of a trace."""
    module = os.path.join(t.BROWSER, "node_modules", "@paulirish", "trace_engine")
    if not os.path.isdir(module):
        r = t.run(["make", "-s", "-C", t.ROOT, "test-deps"], timeout=1800)
        assert os.path.isdir(module), "make test-deps did not install @paulirish/trace_engine: " \
            "%s%s" % (r.stdout[-500:], r.stderr[-500:])
    r = t.run(["node", os.path.join(t.BROWSER, "trace_engine_check.mjs"), path], timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.splitlines()[-1])


def wakeup_to_runq(tr):
    """The arrows from a wakeup slice to a run-queue slice, as DevTools would see them."""
    return set(frozenset([(src.name, src.track, src.ts), (dst.name, dst.track, dst.ts)])
               for src, dst in tr.flows if src.name == "wakeup" and dst.name == "runq")


def devtools_flows(devtools):
    return set(frozenset((name, (pid, tid), to_ns(ts, "ts")) for name, pid, tid, ts in flow)
               for flow in devtools["flows"])


def test_devtools_trace_engine_binds_the_same_flows():
    """A second importer, with its own rule: a flow event binds to the slice
    of its thread, ts and cat. It binds every arrow from a wakeup slice to a
    run-queue slice, the same as Perfetto's: all of a synthetic recording's,
    whose waits all have run-queue time, and the condvar workload's."""
    rec = os.path.join(t.TMP, "devtools.json")
    synthetic_recording(rec, 2000)
    out = report(rec)
    tr = import_trace(out)
    ours, devtools = wakeup_to_runq(tr), trace_engine(out)
    assert len(ours) >= 0.9 * 2000, len(ours)
    assert devtools_flows(devtools) == ours, len(devtools_flows(devtools) ^ ours)
    # With -F: the samples' instant events change no arrow in either importer.
    out, tids, _ = workload("condvar", 12, 50, tracer_args=["-m", "0", "-F", "997"],
                            fmt="trace")
    tr = import_trace(out)
    assert tr.instants, "no on-CPU samples drawn"
    devtools = trace_engine(out)
    threads = set(tuple(x) for x in devtools["threads"])
    pid = wait_slices(tr, tids["waiter"])[0].track[0]
    assert (pid, tids["waiter"]) in threads and (pid, tids["peer"]) in threads, threads
    theirs, ours = devtools_flows(devtools), wakeup_to_runq(tr)
    assert theirs == ours, ("DevTools only:", list(theirs - ours)[:3],
                            "Perfetto only:", list(ours - theirs)[:3])


def synthetic_recording(path, nr_waits, threads=50):
    """nr_waits waits of threads that take turns: each waits 0.9 ms of every 1 ms,
    woken (0.5 us before it runs) by the thread that ended its own wait 1 us
    earlier, which is then running."""
    kernel = [{"addr": "0xffffffff8100%04x" % i, "sym": "kfunc_%d" % i, "off": 16,
               "module": "[kernel.kallsyms]"} for i in range(12)]
    user = [{"addr": "0x5555000%05x" % i, "sym": "ufunc_%d" % i, "off": 8,
             "module": "/usr/bin/synthetic", "module_off": i} for i in range(8)]
    begin = 1_000_000_000_000
    with open(path, "w") as f:
        for i in range(nr_waits):
            tid = 1000 + i % threads
            end = begin + 10_000_000 + (i // threads) * 1_000_000 + (i % threads) * 1000
            waker = 1000 + (i - 1) % threads
            w = {"type": "offcpu", "ts_ns": end, "pid": 1000, "tid": tid,
                 "comm": "t%d" % (i % threads), "state": "interruptible",
                 "wait": "lock:futex", "duration_ns": 900_000, "weight_ns": 900_000,
                 "cpu": i % 4, "kernel_stack": kernel[i % 3:], "user_stack": user[i % 2:],
                 "runq_ns": 500, "waker": {"pid": 1000, "tid": waker,
                                              "comm": "t%d" % (waker - 1000)}}
            f.write(json.dumps(w, separators=(",", ":")) + "\n")
        f.write(json.dumps({"type": "stats", "recording_start_ts_ns": begin,
                            "recording_duration_ns": 10_000_000 + nr_waits * 20_000}) + "\n")


def run_rss(args):
    """(peak RSS in bytes, CPU seconds) of offcpu ARGS, which must succeed."""
    status, err, cpu, rss_kib = t.offcpu_measured(args, timeout=600)
    assert status == 0, err
    return rss_kib * 1024, cpu


def test_large_recording_in_bounded_memory():
    n = 200_000
    rec = os.path.join(t.TMP, "large.json")
    synthetic_recording(rec, n)
    size = os.path.getsize(rec)
    trace = os.path.join(t.TMP, "large.trace.json")
    rss, cpu = run_rss(["report", "-o", trace, rec])
    # The same recording read back and written as json: what holding it costs.
    rss_json, _ = run_rss(["report", "-f", "json", "-o", "/dev/null", rec])
    out = os.path.getsize(trace)
    print("  %d waits: recording %.1f MB, trace %.1f MB (%.1f MB per 100k waits), "
          "%.2f s CPU per 100k waits, peak RSS %.1f MB (json report: %.1f MB)" % (
              n, size / 1e6, out / 1e6, out / 1e6 * 100_000 / n, cpu * 100_000 / n,
              rss / 1e6, rss_json / 1e6))
    # Streamed: the trace is never held whole, nor the recording.
    assert rss < 0.5 * out and rss < 0.5 * size, \
        "peak RSS %d for a %d-byte recording, a %d-byte trace" % (rss, size, out)
    # Beyond holding the waits, as the json report does: where each slice
    # begins and ends, 64 bytes a wait, and qsort's copy of them.
    assert rss < 2 * rss_json, "trace writer's RSS %d, the json report's %d" % (rss, rss_json)
    tr = import_trace(trace)
    assert len([s for s in tr.slices if s.cat == "wait"]) == n
    assert len(tr.flows) >= 0.99 * n, "flows: %d of %d" % (len(tr.flows), n)


def test_on_cpu_samples_are_instants_between_the_waits():
    """-F: each sample of the recording an instant on its thread's track at
    its time, with its stacks, never inside a slice a flow could bind to
    (the import refuses that); what is left out is counted."""
    workload_bin = os.path.join(t.ROOT, "build", "tests", "oncpu_workload")
    rec = os.path.join(t.TMP, "trace-oncpu-%d.json" % time.monotonic_ns())
    r = t.run([t.OFFCPU, "-F", "997", "-m", "0", "-o", rec, "--", workload_bin, "2", "1"],
              timeout=300)
    assert r.returncode == 0, r.stderr
    with open(rec) as f:
        samples = [x for x in map(json.loads, f) if x["type"] == "oncpu"]
    spinners = {int(line.split()[1]) for line in r.stdout.splitlines()
                if line.startswith("thread ") and line.split()[2] == "spin_pinned"}
    tr = import_trace(report(rec, "-f", "trace"))
    other = tr.other
    assert other["oncpu_samples_drawn"] == len(tr.instants), other
    assert other["oncpu_samples_drawn"] + other["oncpu_samples_inside_a_slice"] + \
        other["oncpu_samples_outside_the_window"] == len(samples), (other, len(samples))
    # A few at most fall in a microsecond's wakeup slice of a running thread.
    assert other["oncpu_samples_inside_a_slice"] <= 0.01 * len(samples), other
    at = {(x["tid"], x["ts_ns"]) for x in samples}
    for s in tr.instants:
        assert (s.track[1], s.ts) in at, "an instant no sample is at: %r" % s.e
        assert s.name == "on-cpu" and s.args["weight_ns"] == 10 ** 9 // 997, s.e
    named = [s for s in tr.instants if s.track[1] in spinners and
             "spin_pinned" in s.args.get("user_stack", "")]
    assert len(named) >= 0.9 * len([s for s in tr.instants if s.track[1] in spinners]) > 100, \
        "%d samples of the spinners in spin_pinned" % len(named)
    # Between its waits: a running thread is in none of its own.
    for s in tr.instants:
        assert s.depth == 0, "a sample inside a slice: %r in %r" % (s.e, s.parent.e)


def main():
    return t.run_suite(globals())


if __name__ == "__main__":
    sys.exit(main())
