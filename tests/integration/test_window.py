#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A profile is the profile of its window: a wait begun before tracing
adds only its time since tracing began, in every format, in a report of
the recording, and in offcpu serve's counters; json keeps the whole wait.

The truth is the workload's own clock (open_waits: when it blocked, when
it woke) and the tracers' own run, timed by this script around them.

Run as root from the repository root after `make test-build`.
"""
import os
import re
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as t  # noqa: E402
import test_serve as serve  # noqa: E402
from test_open_waits import Workload  # noqa: E402

UNITS = {"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1.0}


def text_total(path):
    text = open(path).read()
    m = re.search(r"^offcpu: \d+ waits?, ([\d.]+) (s|ms|us|ns) off CPU in total", text, re.M)
    assert m, text[:400]
    return float(m.group(1)) * UNITS[m.group(2)]


def dot_total(path):
    return sum(int(x) for x in re.findall(r"blocked_ns=(\d+)", open(path).read()))


def pprof_total(path):
    samples, _, _ = t.parse_pprof_raw(t.go_pprof(["-raw", path]))
    return sum(s["ns"] for s in samples)


def json_total(path):
    waits, _ = t.read_json_lines(path)
    return sum(w["weight_ns"] for w in waits)


TOTALS = {"text": (".txt", text_total), "folded": (".folded", t.folded_total),
          "json": (".json", json_total), "svg": (".svg", t.svg_total),
          "pprof": (".pb.gz", pprof_total), "dot": (".dot", dot_total)}


class Run:
    """One offcpu -p PID -d DUR -f FORMAT, timed: when it said it was
    tracing (attached, its window begun just before) and when it exited."""

    def __init__(self, pid, fmt, duration, args=()):
        self.fmt = fmt
        self.out = os.path.join(t.TMP, "window-%d%s" % (time.monotonic_ns(), TOTALS[fmt][0]))
        self.args = ["-p", str(pid), "-d", duration, "-f", fmt, "-o", self.out] + list(args)
        self.error = None
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def run(self):
        try:
            p = t.start_tracer(self.args)
            self.tracing_ns = time.monotonic_ns()
            _, err = t.finish_tracer(p, 120)
            self.exited_ns = time.monotonic_ns()
            assert p.returncode == 0, err
        except Exception as e:  # said by join()
            self.error = e

    def join(self):
        self.thread.join()
        if self.error:
            raise self.error
        return self

    def total(self):
        return TOTALS[self.fmt][1](self.out)


def record_all(pid, duration, formats):
    """One tracer per format at once, all on the same workload."""
    return {r.fmt: r for r in [Run(pid, f, duration) for f in formats]}


def check_near(got, truth, what, within=0.10):
    assert abs(got - truth) <= within * truth, "%s: %.3f s, truth %.3f s" % (
        what, got / 1e9, truth / 1e9)


def test_asleep_before_adds_only_the_recording_to_every_total():
    """A thread blocked since a second before offcpu -d 3s, still blocked at
    its stop: 3 s in each format's total, live and reported again, not the
    4+ s it has waited; json keeps that whole duration."""
    wl = Workload("read", 0)
    try:
        # The second blocked before the recording (the subject).
        time.sleep(1)
        runs = record_all(wl.p.pid, "3s", ("text", "folded", "json", "svg", "pprof"))
        for r in runs.values():
            r.join()
    finally:
        wl.kill()
    tid = wl.p.pid
    waits, stats = t.read_json_lines(runs["json"].out)
    (w,), = [[w for w in waits if w["tid"] == tid]]
    totals = {fmt: r.total() for fmt, r in runs.items()}
    for fmt, r in sorted(runs.items()):
        print("    %-6s %.3f s; the wait %.3f s; offcpu ran %.3f s" % (
            fmt, totals[fmt] / 1e9, w["duration_ns"] / 1e9, (r.exited_ns - r.tracing_ns) / 1e9))
    for fmt, r in runs.items():
        # -d 3s, and no more than this run's own length around it (its stop
        # and its output take longer on a loaded machine): not the wait's.
        ran = r.exited_ns - r.tracing_ns
        assert 0.97 * 3e9 <= totals[fmt] <= ran + 100e6, (fmt, totals[fmt], ran)
    assert w.get("open") == "both", w.get("open")
    # The whole truth: blocked before the recording, duration to its stop.
    assert abs(w["ts_ns"] - w["duration_ns"] - wl.blocked[tid]) < 20e6, (w, wl.blocked)
    assert stats["recording_start_ts_ns"] < runs["json"].tracing_ns, stats
    print("    json: tracing said %.1f ms after its window began" % (
        (runs["json"].tracing_ns - stats["recording_start_ts_ns"]) / 1e6))
    check_near(w["weight_ns"], w["ts_ns"] - stats["recording_start_ts_ns"], "json weight_ns", 0.001)
    assert w["duration_ns"] > 1.25 * 3e9, w["duration_ns"]
    # A report of the recording: the same numbers, to the nanosecond where they are exact.
    total = json_total(runs["json"].out)
    for fmt in ("folded", "svg", "pprof"):
        out = t.report_of(runs["json"].out, TOTALS[fmt][0])
        assert TOTALS[fmt][1](out) == total, (fmt, TOTALS[fmt][1](out), total)
    check_near(text_total(t.report_of(runs["json"].out, ".txt")), total, "report text", 0.001)
    assert open(t.report_of(runs["json"].out, ".json")).read() == open(runs["json"].out).read()
    # The text report's "so far" is the whole wait.
    text = open(runs["text"].out).read()
    m = re.search(r"^  #1 tid %d .*  ([\d.]+) s so far$" % tid, text, re.M)
    assert m, text[:1200]
    assert float(m.group(1)) > 1.25 * 3, m.group(0)


def test_woken_after_asleep_before_dot_edges_count_the_window():
    """Blocked a second before offcpu -d 8s and woken 7 s after blocking: the
    pipe read (woken by the writer thread) and the writer's nanosleep (by a
    timer) are edges of the wait-for graph worth their time since tracing
    began, not their 7 s; json's weight_ns alike, and a report's dot."""
    for attempt in range(3):
        wl = Workload("read", 7000)
        try:
            # The second blocked before the recording (the subject).
            time.sleep(1)
            runs = record_all(wl.p.pid, "8s", ("dot", "json"))
            wl.read_line()
            for r in runs.values():
                r.join()
        finally:
            wl.kill()
        tid = wl.p.pid
        woke = wl.woke[tid]
        # A loaded machine may take the 6 s to start tracing: then again.
        if all(r.tracing_ns < woke - 1.5e9 for r in runs.values()):
            break
        print("    offcpu started too late; again")
    else:
        raise AssertionError("offcpu never started within 5.5 s")
    waits, stats = t.read_json_lines(runs["json"].out)
    woken = [w for w in waits if w.get("open") == "before"]
    assert sorted(w["wait"].split(":")[0] for w in woken) == ["pipe", "sleep"], woken
    for w in woken:
        assert w["duration_ns"] > 6.8e9, w
        check_near(w["weight_ns"], w["ts_ns"] - stats["recording_start_ts_ns"], "json weight_ns",
                   0.001)
    # Each edge's blocked time: from tracing's start to the wakeup (less its
    # run queue). The dot tracer's start: as long before it said so as the
    # json tracer's was (json's recording_start_ts_ns, checked above).
    dot = runs["dot"]
    started = dot.tracing_ns - (runs["json"].tracing_ns - stats["recording_start_ts_ns"])
    truth = 2 * (woke - started)
    got = dot.total()
    print("    dot %.3f s, truth %.3f s; the waits %.3f s" % (
        got / 1e9, truth / 1e9, sum(w["duration_ns"] for w in woken) / 1e9))
    check_near(got, truth, "dot")
    reported = dot_total(t.report_of(runs["json"].out, ".dot"))
    check_near(reported, sum(w["weight_ns"] - w["runq_ns"] for w in woken), "report dot", 0.001)


def test_dropped_waits_count_only_the_window():
    """-M 100ms drops every wait of a workload blocked a second before
    offcpu -d 6s: the pipe read and the writer's nanosleep that end inside
    (dropped by the BPF side) and main's sleep still open at the stop
    (dropped at the stop) add to above_max_duration_ns only their time
    since tracing began."""
    for attempt in range(3):
        wl = Workload("read", 5000)
        try:
            # The second blocked before the recording (the subject).
            time.sleep(1)
            run = Run(wl.p.pid, "json", "6s", ["-M", "100ms"])
            wl.read_line()
            run.join()
        finally:
            wl.kill()
        woke = wl.woke[wl.p.pid]
        if run.tracing_ns < woke - 1e9:
            break
        print("    offcpu started too late; again")
    else:
        raise AssertionError("offcpu never started within 3 s")
    _, stats = t.read_json_lines(run.out)
    start = stats["recording_start_ts_ns"]
    # At least the two waits to the wakeup; at most those and main's sleep
    # from the wakeup to the stop (this VM may hide its switch-in: then it
    # is recovered, ended earlier).
    woken = 2 * (woke - start)
    most = woken + (start + stats["recording_duration_ns"] - woke)
    got = stats["above_max_duration_ns"]
    print("    above -M %.3f s, %.3f to %.3f s since tracing began; the waits began %.3f s "
          "before it" % (got / 1e9, woken / 1e9, most / 1e9, (start - wl.blocked[wl.p.pid]) / 1e9))
    print("    %d waits above -M" % stats["above_max_duration"])
    assert stats["above_max_duration"] >= 2, stats
    assert 0.95 * woken <= got <= 1.05 * most, (got, woken, most)


def start_serve(pid):
    """offcpu serve -p PID, timed as Run times a tracer: when it said it was
    serving (tracing began just before). Its stderr is drained meanwhile."""
    addr = "127.0.0.1:%d" % serve.free_port()
    p = subprocess.Popen([t.OFFCPU, "serve", "-v", "--listen", addr, "-p", str(pid)],
                         stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    said = []
    for line in p.stderr:
        said.append(line)
        if "serving on" in line:
            serving_ns = time.monotonic_ns()
            threading.Thread(target=p.stderr.read, daemon=True).start()
            return p, addr, serving_ns
    p.wait()
    raise AssertionError("offcpu serve did not start: " + "".join(said))


def scrape(addr):
    with urllib.request.urlopen("http://%s/metrics" % addr, timeout=30) as r:
        return serve.parse_exposition(r.read().decode())[1]


def test_serve_counts_only_since_it_started():
    """offcpu serve started about 2 s into a 4 s pipe read (and the writer's
    4 s nanosleep): offcpu_off_cpu_seconds_total has their time since serve
    began tracing, not their whole 4 s each."""
    wl = Workload("read", 4000)
    srv = None
    try:
        # About 2 s into the read when serve starts (the subject).
        time.sleep(1.5)
        srv, addr, serving_ns = start_serve(wl.p.pid)
        wl.read_line()
        woke = wl.woke[wl.p.pid]
        assert serving_ns < woke - 500e6, "offcpu serve started too late"
        # The pipe read and the writer's nanosleep; not a preemption of main after it.
        mine = [dict(comm="open_waits", wait="pipe"), dict(comm="open_waits", wait="sleep")]
        # Both counted, 10 s at most (the checks below say what was not).
        last = {}

        def both_ended():
            last["samples"] = scrape(addr)
            last["ended"] = [serve.value(last["samples"], "offcpu_waits_total", **m)
                             for m in mine]
            return last["ended"] == [1, 1]
        t.poll_until(both_ended, 10)
        samples, ended = last["samples"], last["ended"]
    finally:
        wl.kill()
        if srv:
            srv.terminate()
            assert srv.wait(timeout=30) == 0
    assert ended == [1, 1], samples
    seconds = sum(serve.value(samples, "offcpu_off_cpu_seconds_total", **m) for m in mine)
    truth = 2 * (woke - serving_ns) / 1e9
    print("    serve: %.3f s in the 2 waits, truth %.3f s; the waits %.3f s" % (
        seconds, truth, 2 * (woke - wl.blocked[wl.p.pid]) / 1e9))
    check_near(seconds * 1e9, truth * 1e9, "offcpu_off_cpu_seconds_total")


def main():
    return t.run_suite(globals())


if __name__ == "__main__":
    sys.exit(main())
