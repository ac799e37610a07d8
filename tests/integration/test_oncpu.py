#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""-F: on-CPU samples beside the waits, against threads whose CPU time the
kernel itself measured (CLOCK_THREAD_CPUTIME_ID) and against perf record
on the same workload."""
import collections
import json
import math
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as t  # noqa: E402

WORKLOAD = os.path.join(t.ROOT, "build", "tests", "oncpu_workload")
HZ = 997
SECONDS = "3"


def workload_threads(stdout):
    """The workload's own account of each thread, {tid: (function, cpu_ns, wall_ns)}."""
    threads = {}
    for line in stdout.splitlines():
        m = re.match(r"thread (\d+) (\w+) (\d+) (\d+)$", line)
        if m:
            threads[int(m.group(1))] = (m.group(2), int(m.group(3)), int(m.group(4)))
    assert len(threads) == 3, "the workload said: %r" % stdout[:500]
    return threads


def run_workload_to(fmt, args=(), seconds=SECONDS):
    """offcpu -F HZ -f FMT -- oncpu_workload: the file it wrote and the
    workload's own account of each thread (workload_threads)."""
    out = os.path.join(t.TMP, "oncpu-%d.%s" % (len(os.listdir(t.TMP)), fmt))
    cpu = str(os.cpu_count() - 1)
    r = t.run([t.OFFCPU, "-F", str(HZ), "-f", fmt, "-o", out] + list(args) +
              ["--", WORKLOAD, seconds, cpu])
    assert r.returncode == 0, "offcpu failed: %d %s" % (r.returncode, r.stderr)
    return out, workload_threads(r.stdout)


def run_workload(args, seconds=SECONDS):
    """offcpu -F HZ -f json -- oncpu_workload: the workload's threads, and
    the recording's waits, samples and stats."""
    out, threads = run_workload_to("json", args, seconds)
    waits, stats = t.read_json_lines(out)
    with open(out) as f:
        records = [json.loads(line) for line in f if line.strip()]
    samples = [s for s in records if s["type"] == "oncpu"]
    return threads, waits, samples, stats


def syms(stack):
    return [f.get("sym", "") for f in stack or []]


def test_samples_weigh_the_period_and_the_counters_add_up():
    threads, waits, samples, stats = run_workload(["-m", "0"])
    period = 10 ** 9 // HZ
    assert samples, "no oncpu records"
    assert all(s["weight_ns"] == period for s in samples), \
        "weights other than 1e9/HZ: %s" % sorted({s["weight_ns"] for s in samples})
    # -- COMMAND: the workload's threads and its main thread only.
    assert {s["pid"] for s in samples} == {next(iter(samples))["pid"]}
    assert stats["ringbuf_unread"] == 0 and stats["oncpu_unread"] == 0, stats
    assert stats["oncpu_samples"] == len(samples), \
        "oncpu_samples %d, %d records" % (stats["oncpu_samples"], len(samples))
    assert stats["oncpu_dropped"] == 0, stats
    assert stats["recording_sample_period_ns"] == period, stats
    # Every sample of every CPU is one of three: sent, filtered, idle.
    ticks = stats["oncpu_samples"] + stats["oncpu_filtered"] + stats["oncpu_idle"]
    expected = stats["recording_duration_ns"] / period * os.cpu_count()
    assert 0.8 * expected < ticks < 1.3 * expected, \
        "%d ticks of %d CPUs at %d Hz in %.3f s" % (ticks, os.cpu_count(), HZ,
                                                    stats["recording_duration_ns"] / 1e9)


def test_samples_left_at_the_stop_are_counted():
    """A reader slowed to 2 ms a record cannot keep up with 997 samples a
    second: what the stop's reading leaves in the ring is counted, sample
    by sample, in oncpu_unread, never lost unsaid."""
    out = os.path.join(t.TMP, "oncpu-slow.json")
    env = dict(os.environ, OFFCPU_TEST_RECORD_DELAY_US="2000")
    r = t.run([t.OFFCPU, "-F", str(HZ), "-f", "json", "-o", out, "--", WORKLOAD, "1",
               str(os.cpu_count() - 1)], env=env)
    assert r.returncode == 0, "offcpu failed: %d %s" % (r.returncode, r.stderr)
    with open(out) as f:
        records = [json.loads(line) for line in f if line.strip()]
    samples = [x for x in records if x["type"] == "oncpu"]
    stats = records[-1]
    period = 10 ** 9 // HZ
    assert stats["oncpu_unread"] > 0, stats
    assert stats["oncpu_samples"] == len(samples) + stats["oncpu_unread"], \
        "oncpu_samples %d, %d read, %d unread" % (stats["oncpu_samples"], len(samples),
                                                  stats["oncpu_unread"])
    assert stats["oncpu_unread_ns"] == stats["oncpu_unread"] * period, stats


def test_sampling_without_samples_still_says_so():
    """-F over a process that never runs: no sample, but the pprof has its
    cpu and wall types, and the json recording its period, as with samples."""
    sleeper = t.subprocess.Popen(["sleep", "30"])
    try:
        rec = os.path.join(t.TMP, "oncpu-none.json")
        r = t.run([t.OFFCPU, "-F", "99", "-p", str(sleeper.pid), "-d", "1s", "-f", "json",
                   "-o", rec])
        assert r.returncode == 0, r.stderr
    finally:
        sleeper.kill()
        sleeper.wait()
    with open(rec) as f:
        records = [json.loads(line) for line in f if line.strip()]
    assert not [x for x in records if x["type"] == "oncpu"], records[:3]
    assert records[-1]["recording_sample_period_ns"] == 10 ** 9 // 99, records[-1]
    pb = os.path.join(t.TMP, "oncpu-none.pb.gz")
    r = t.run([t.OFFCPU, "report", "-o", pb, rec])
    assert r.returncode == 0, r.stderr
    types, _ = t.pprof_raw_samples(t.go_pprof(["-raw", pb]))
    assert types == ["samples", "off_cpu", "runq", "cpu", "wall"], types


def test_sampled_cpu_time_is_the_threads_own():
    """Per thread, the sampled on-CPU time is within 10% of its
    CLOCK_THREAD_CPUTIME_ID, and with its waits (-m 0: every one) within 5%
    of its life."""
    threads, waits, samples, stats = run_workload(["-m", "0"])
    period = 10 ** 9 // HZ
    on = collections.Counter()
    for s in samples:
        on[s["tid"]] += s["weight_ns"]
    off = collections.Counter()
    for w in waits:
        off[w["tid"]] += w["duration_ns"]
    problems = []
    for tid, (function, cpu_ns, wall_ns) in sorted(threads.items()):
        n = on[tid] // period
        # Four standard deviations of a count of n, or 10%, whichever is more.
        allowed = max(0.10 * cpu_ns, 4 * math.sqrt(max(n, 1)) * period)
        if abs(on[tid] - cpu_ns) > allowed:
            problems.append("%s %d: sampled %.3f s on CPU, its clock %.3f s" %
                            (function, tid, on[tid] / 1e9, cpu_ns / 1e9))
        total = on[tid] + off[tid]
        if abs(total - wall_ns) > 0.05 * wall_ns + 4 * math.sqrt(max(n, 1)) * period:
            problems.append("%s %d: on %.3f + off %.3f = %.3f s, its life %.3f s" %
                            (function, tid, on[tid] / 1e9, off[tid] / 1e9, total / 1e9,
                             wall_ns / 1e9))
    assert not problems, "; ".join(problems)


def test_samples_are_in_the_computing_function_with_whole_stacks():
    """95% of each thread's samples have its compute function on top of
    the user stack, and, in dwarf mode on code built without frame
    pointers, the stack goes down to start_thread."""
    threads, waits, samples, stats = run_workload([])
    problems = []
    for tid, (function, cpu_ns, wall_ns) in sorted(threads.items()):
        mine = [s for s in samples if s["tid"] == tid]
        assert len(mine) > 100, "%s %d: %d samples" % (function, tid, len(mine))
        inside = [s for s in mine if function in syms(s.get("user_stack"))[:3]]
        whole = [s for s in inside if "start_thread" in syms(s.get("user_stack"))]
        if len(inside) < 0.95 * len(mine):
            tops = collections.Counter(tuple(syms(s.get("user_stack"))[:2]) for s in mine)
            problems.append("%s %d: %d of %d samples in it; tops %s" %
                            (function, tid, len(inside), len(mine), tops.most_common(4)))
        if len(whole) < 0.95 * len(inside):
            problems.append("%s %d: %d of %d stacks reach start_thread" %
                            (function, tid, len(whole), len(inside)))
    assert not problems, "; ".join(problems)


def test_fp_mode_samples_name_the_function():
    """--call-graph fp: no frame pointers here, but the leaf is where the
    thread was interrupted: each thread's samples are in its function."""
    threads, waits, samples, stats = run_workload(["--call-graph", "fp"], seconds="1")
    for tid, (function, cpu_ns, wall_ns) in sorted(threads.items()):
        mine = [s for s in samples if s["tid"] == tid]
        inside = [s for s in mine if function in syms(s.get("user_stack"))[:1]]
        assert len(inside) >= 0.9 * len(mine) > 0, \
            "%s %d: %d of %d samples in it" % (function, tid, len(inside), len(mine))


def test_shares_match_perf_record():
    """perf record -F on the same workload, at the same time: the top
    functions' shares of the on-CPU samples within 5 points of perf's. Two
    runs one after the other differed by 6 points on a loaded machine."""
    if not os.path.exists("/usr/bin/perf"):
        raise t.Skip("perf is not installed")
    cpu = str(os.cpu_count() - 1)
    data = os.path.join(t.TMP, "perf.data")
    out = os.path.join(t.TMP, "oncpu-beside-perf.json")
    wl = subprocess.Popen([WORKLOAD, "4", cpu], stdout=subprocess.DEVNULL)
    try:
        # The same window for both: offcpu attached first and stopped last,
        # tens of milliseconds around perf's 1.5 s. The workload's threads
        # change pace over its life: windows 0.5 s apart differed by 7 points.
        tracer = t.start_tracer(["-F", str(HZ), "-p", str(wl.pid), "-f", "json", "-o", out])
        # Stopped as a user stops it, by SIGINT after its window (perf record
        # then dies of that signal, which it raises again): with a command to
        # time it ("-- sleep 1.5"), it died of SIGTERM in 4 runs of 5.
        perf = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(HZ),
                                 "-p", str(wl.pid), "-o", data], stderr=subprocess.PIPE,
                                text=True)
        time.sleep(1.5)
        perf.send_signal(signal.SIGINT)
        _, perf_err = perf.communicate(timeout=60)
        assert perf.returncode in (0, -signal.SIGINT), \
            "perf record: %d %s" % (perf.returncode, perf_err)
        tracer.send_signal(signal.SIGINT)
        _, err = t.finish_tracer(tracer, 60)
        assert tracer.returncode == 0, "offcpu: %d %s" % (tracer.returncode, err)
    finally:
        wl.kill()
        wl.wait()
    r = t.run(["perf", "report", "-i", data, "--stdio", "--sort", "sym", "-q"])
    assert r.returncode == 0, r.stderr
    perf = {}
    for line in r.stdout.splitlines():
        m = re.match(r"\s*([\d.]+)%.*\] (\S+)", line)
        if m:
            perf[m.group(2)] = perf.get(m.group(2), 0.0) + float(m.group(1))
    with open(out) as f:
        samples = [s for s in map(json.loads, f) if s["type"] == "oncpu"]
    ours = collections.Counter()
    for s in samples:
        stack = s.get("kernel_stack") or s.get("user_stack") or []
        ours[stack[0].get("sym", "?") if stack else "?"] += 1
    n = sum(ours.values())
    assert n, "no samples"
    problems = []
    for function in ("compute_burst", "spin_pinned"):
        mine = 100.0 * ours[function] / n
        if abs(mine - perf.get(function, 0.0)) > 5:
            problems.append("%s: %.1f%% here, %.1f%% in perf" %
                            (function, mine, perf.get(function, 0.0)))
    assert not problems, "; ".join(problems) + "; perf: %s" % sorted(perf.items(),
                                                                    key=lambda x: -x[1])[:5]


def test_python_on_cpu_has_its_python_frames():
    """A Python thread computing: its samples carry the Python frames it
    runs, spin() under inner(), middle(), outer(), as its waits do."""
    app = os.path.join(t.ROOT, "tests", "integration", "python", "app.py")
    out = os.path.join(t.TMP, "oncpu-python.json")
    r = t.run([t.OFFCPU, "-F", str(HZ), "-f", "json", "-o", out, "--",
               "/usr/bin/python3", app, "compute", "15"])
    assert r.returncode == 0, "offcpu failed: %d %s" % (r.returncode, r.stderr)
    with open(out) as f:
        records = [json.loads(line) for line in f if line.strip()]
    samples = [s for s in records if s["type"] == "oncpu"]
    # Its run time, from offcpu's own switches: as many samples as periods in it.
    run_ns = sum(x["run_ns"] for x in records if x["type"] == "thread")
    assert len(samples) >= 0.8 * run_ns / (10 ** 9 // HZ) > 0, \
        "%d samples in %.3f s on CPU" % (len(samples), run_ns / 1e9)
    pythons = [[f.get("sym") for f in s["user_stack"] if f.get("kind") == "python"]
               for s in samples]
    chained = [p for p in pythons if p[:1] in (["spin"], ["spin.<locals>.<genexpr>"]) and
               "inner" in p and p.index("inner") < p.index("middle") < p.index("outer")]
    # 1.5 s computing after 0.2 s of start-up and sleep: most samples are in spin().
    assert len(chained) >= 0.75 * len(samples), \
        "%d of %d samples in spin() under inner/middle/outer: %s" % (
            len(chained), len(samples),
            collections.Counter(tuple(p[:4]) for p in pythons).most_common(5))


def test_freq_refused_where_it_cannot_apply():
    """One line naming --freq, then the usual pointer to the command's --help, exit 2."""
    for args, why in ((["snapshot", "-F", "99"], "snapshot"),
                      (["report", "-F", "99", "x.json"], "report")):
        r = t.run([t.OFFCPU] + args)
        lines = r.stderr.splitlines()
        hint = "Try 'offcpu %s --help'." % why
        assert r.returncode == 2 and len(lines) == 2 and "--freq" in lines[0] and \
            lines[1] == hint, "%s: %d %r" % (why, r.returncode, r.stderr)
    r = t.run([t.OFFCPU, "-F", "10001", "-d", "1s"])
    assert r.returncode == 2 and "--freq" in r.stderr, r.stderr


DURATION = re.compile(r"(±?)([\d.]+) (s|ms|us)")


def seconds_of(number, unit):
    return float(number) * {"s": 1.0, "ms": 1e-3, "us": 1e-6}[unit]


def where_the_time_went(text):
    """The text report's rows of "Where the time went": {tid: {"on",
    "error", "run", "runq", "blocked", "total" (seconds), "classes"}}, and
    its headline's on-CPU total."""
    head = re.search(r"^on CPU ([\d.]+) (s|ms|us) sampled \(±", text, re.M)
    assert head, "no on-CPU headline:\n%s" % text[:2000]
    section = text.split("\nWhere the time went, by thread (top 20; ", 1)
    assert len(section) == 2, "no section:\n%s" % text[:2000]
    lines = section[1].split("\n\n", 1)[0].splitlines()
    assert "run time" in lines[1], lines[1]
    rows = {}
    for line in lines[2:]:
        m = re.match(r"  .{16} +(\d+) +(\d+) (.*)$", line)
        if not m:
            continue
        # on CPU, its ± ("-" without a sample), run time (exact; "-" without an
        # account), run queue, blocked, total, then the classes.
        cells = re.match(r"\s*(\S+ \S+)\s+(±\S+ \S+|-)\s+(\S+ \S+|-)\s+(\S+ \S+)\s+"
                         r"(\S+ \S+)\s+(\S+ \S+)\s*(.*)$", m.group(3))
        assert cells, "row %r" % line
        values = [0.0 if c == "-" else seconds_of(*DURATION.fullmatch(c).group(2, 3))
                  for c in cells.groups()[:6]]
        rows[int(m.group(2))] = dict(zip(("on", "error", "run", "runq", "blocked", "total"),
                                         values), classes=cells.group(7))
    return rows, seconds_of(head.group(1), head.group(2))


def test_text_report_says_where_the_time_went():
    """The text report under -F, -m 0 (every wait): each thread's sampled
    on-CPU time within 10% (or 4 sigma) of its CLOCK_THREAD_CPUTIME_ID,
    its exact run time beside it within 2% and what the host stole (the
    clock leaves steal out, offcpu's switches do not), and on CPU + run queue +
    blocked, the row's total, within 5% of its life; the top on-CPU
    stacks are in the threads' functions."""
    cpu = str(os.cpu_count() - 1)
    stolen_ns = -t.steal_ns()
    r = t.run([t.OFFCPU, "-F", str(HZ), "-m", "0", "--", WORKLOAD, SECONDS, cpu])
    stolen_ns += t.steal_ns()
    assert r.returncode == 0, "offcpu failed: %d %s" % (r.returncode, r.stderr)
    threads = workload_threads(r.stdout)
    rows, headline_on = where_the_time_went(r.stdout)
    problems = []
    for tid, (function, cpu_ns, wall_ns) in sorted(threads.items()):
        row = rows.get(tid)
        if not row:
            problems.append("%s %d: no row" % (function, tid))
            continue
        cpu_s, wall_s = cpu_ns / 1e9, wall_ns / 1e9
        if abs(row["on"] - cpu_s) > max(0.10 * cpu_s, 4 * row["error"]):
            problems.append("%s %d: sampled %.3f s ±%.3f, its clock %.3f s" %
                            (function, tid, row["on"], row["error"], cpu_s))
        if abs(row["run"] - cpu_s) > 0.02 * cpu_s + 0.002 + stolen_ns / 1e9:
            problems.append("%s %d: run time %.3f s, its clock %.3f s, %.3f s stolen" %
                            (function, tid, row["run"], cpu_s, stolen_ns / 1e9))
        parts = row["on"] + row["runq"] + row["blocked"]
        # Each of the four shown to 1 ms at most (seconds, three decimals).
        if abs(parts - row["total"]) > 2e-3:
            problems.append("%s %d: %.6f + %.6f + %.6f is not its total %.6f" %
                            (function, tid, row["on"], row["runq"], row["blocked"],
                             row["total"]))
        if abs(row["total"] - wall_s) > max(0.05 * wall_s, 4 * row["error"]):
            problems.append("%s %d: on %.3f + run queue %.3f + blocked %.3f = %.3f s, "
                            "its life %.3f s" % (function, tid, row["on"], row["runq"],
                                                 row["blocked"], row["total"], wall_s))
    # The pinned threads share one CPU: most of their time off CPU is in the run queue.
    for tid, (function, cpu_ns, wall_ns) in threads.items():
        if function == "spin_pinned" and tid in rows and rows[tid]["runq"] < 0.3 * wall_ns / 1e9:
            problems.append("spin_pinned %d: run queue %.3f s of %.3f s" %
                            (tid, rows[tid]["runq"], wall_ns / 1e9))
    # Every thread sampled has its row: they add up to the headline, each
    # figure rounded to three decimals of its unit (half a millisecond at most).
    summed = sum(row["on"] for row in rows.values())
    if abs(summed - headline_on) > 0.5e-3 * (len(rows) + 1):
        problems.append("rows sum to %.6f s on CPU, the headline says %.6f s" %
                        (summed, headline_on))
    stacks = r.stdout.split("\nTop on-CPU stacks (leaf first)\n", 1)
    assert len(stacks) == 2, "no top on-CPU stacks"
    stacks = stacks[1].split("\n\n", 1)[0]
    leaves = re.findall(r"^  #\d+ oncpu_workload;\[on-cpu\]  .*\n(?:    kernel:\n(?:      .*\n)*)?"
                        r"    user:\n      (\S+)", stacks + "\n", re.M)
    for function in ("spin_pinned", "compute_burst"):
        if function not in leaves[:3]:
            problems.append("%s not on top of the first on-CPU stacks: %s" %
                            (function, leaves[:5]))
    assert not problems, "; ".join(problems) + "\n" + r.stdout.split("\nOff-CPU time", 1)[0]


# --- pprof ---------------------------------------------------------------------------------------

def top_functions(text):
    """go tool pprof -top: (function, flat share in %) by flat, largest first."""
    rows = []
    for line in text.splitlines():
        m = re.match(r"^\s*[\d.]+\w*\s+([\d.]+)%\s+[\d.]+%\s+[\d.]+\w*\s+[\d.]+%\s+(.+)$",
                     line)
        if m:
            rows.append((m.group(2).strip(), float(m.group(1))))
    return rows


def test_pprof_cpu_index_is_led_by_the_computing_functions():
    """-f pprof under -F: the cpu sample type is led by the workload's two
    computing functions, which hold nearly all of it; wall is the default
    type and its total is off_cpu's plus cpu's."""
    path, threads = run_workload_to("pprof", ["-m", "0"])
    cpu = t.go_pprof(["-sample_index=cpu", "-top", path])
    assert "Type: cpu" in cpu, cpu[:2000]
    rows = top_functions(cpu)
    assert {f for f, _ in rows[:2]} == {"spin_pinned", "compute_burst"}, rows[:5]
    assert rows[0][1] + rows[1][1] >= 90, rows[:5]
    wall = t.go_pprof(["-sample_index=wall", "-top", path])
    assert "Type: wall" in wall, wall[:2000]
    assert "Type: wall" in t.go_pprof(["-top", path]), "wall is not the default"
    # spin_pinned's two threads share a CPU: half their wall time off it, preempted.
    assert "spin_pinned" in [f for f, _ in top_functions(wall)[:4]], top_functions(wall)[:6]
    types, samples = t.pprof_raw_samples(t.go_pprof(["-raw", path]))
    assert types == ["samples", "off_cpu", "runq", "cpu", "wall"], types
    totals = {k: sum(v[k] for v, _ in samples) for k in types}
    assert totals["wall"] == totals["off_cpu"] + totals["cpu"] > 0, totals


def test_pprof_cpu_and_wall_per_thread_are_the_threads_own():
    """Per thread, the pprof's cpu values sum within 10% of its
    CLOCK_THREAD_CPUTIME_ID, and its wall values (on + off CPU, -m 0)
    within 5% of its life, each give or take the sampling error; a
    sample is a wait (no cpu, wall = off_cpu, a wait class) or on CPU
    (no off_cpu, wall = cpu = its count of periods, state on-cpu, which
    no wait has: a wait's "running" is a yield)."""
    path, threads = run_workload_to("pprof", ["-m", "0"])
    types, samples = t.pprof_raw_samples(t.go_pprof(["-raw", path]))
    period = 10 ** 9 // HZ
    cpu, wall, n = collections.Counter(), collections.Counter(), collections.Counter()
    problems = []
    for values, labels in samples:
        tid = int(labels.get("thread.id", 0))
        if labels["thread.state"] == "on-cpu":
            if values["off_cpu"] or values["runq"] or values["cpu"] != values["wall"] or \
                    values["cpu"] != values["samples"] * period or "wait.class" in labels:
                problems.append("on-CPU sample %r %r" % (values, labels))
            n[tid] += values["samples"]
        elif values["cpu"] or values["wall"] != values["off_cpu"] or "wait.class" not in labels:
            problems.append("wait %r %r" % (values, labels))
        cpu[tid] += values["cpu"]
        wall[tid] += values["wall"]
    for tid, (function, cpu_ns, wall_ns) in sorted(threads.items()):
        error = 4 * math.sqrt(max(n[tid], 1)) * period
        print("# %s %d: cpu %.3f s (its clock %.3f), wall %.3f s (its life %.3f)" %
              (function, tid, cpu[tid] / 1e9, cpu_ns / 1e9, wall[tid] / 1e9, wall_ns / 1e9))
        if abs(cpu[tid] - cpu_ns) > max(0.10 * cpu_ns, error):
            problems.append("%s %d: cpu %.3f s, its clock %.3f s" %
                            (function, tid, cpu[tid] / 1e9, cpu_ns / 1e9))
        if abs(wall[tid] - wall_ns) > 0.05 * wall_ns + error:
            problems.append("%s %d: wall %.3f s, its life %.3f s" %
                            (function, tid, wall[tid] / 1e9, wall_ns / 1e9))
    assert not problems, "; ".join(problems[:10])
    # go tool pprof's own slicing by thread agrees with the sums above.
    tid = max(threads, key=lambda x: threads[x][1])
    tags = t.go_pprof(["-sample_index=cpu", "-tagfocus=thread.id=%d" % tid, "-raw", path])
    focused = sum(v["cpu"] for v, _ in t.pprof_raw_samples(tags)[1])
    assert focused == cpu[tid], (focused, cpu[tid])


# --- folded and svg -------------------------------------------------------------------------------

# The function each of the workload's threads starts in, by what it computes in.
ENTRY = {"compute_burst": "mixed", "spin_pinned": "pinned"}


def test_folded_on_cpu_lines_weigh_the_threads_cpu_time():
    """-F -f folded: "comm;[on-cpu];frames VALUE" lines, VALUE a whole
    number of periods. Summed by the function the workload's threads
    start in, within 10% of those threads' CLOCK_THREAD_CPUTIME_ID, mostly
    in their computing function; with the waits' lines (-m 0: every wait),
    within 5% of their lives. The waits' lines keep [state];[wait class]."""
    out, threads = run_workload_to("folded", ["-m", "0"])
    period = 10 ** 9 // HZ
    on, off, inside = (collections.Counter() for _ in range(3))
    nr_on = nr_off = 0
    problems = []
    for line in open(out):
        stack, value = line.rstrip("\n").rsplit(" ", 1)
        frames, value = stack.split(";"), int(value)
        entry = next((e for e in ENTRY.values() if "start_thread;%s" % e in stack), None)
        if frames[1] == "[on-cpu]":
            nr_on += 1
            if value % period:
                problems.append("not a whole number of periods: %r" % line)
            if entry:
                on[entry] += value
                if any(f in frames for f, e in ENTRY.items() if e == entry):
                    inside[entry] += value
            continue
        nr_off += 1
        if not (re.match(r"^\[[a-z-]+\]$", frames[1]) and frames[2].startswith("[") and
                frames[2].endswith("]")):
            problems.append("a wait's line without [state];[wait class]: %r" % line)
        if entry:
            off[entry] += value
    assert nr_on and nr_off, "%d on-CPU lines, %d of waits" % (nr_on, nr_off)
    for function, entry in ENTRY.items():
        mine = [v for v in threads.values() if v[0] == function]
        cpu_ns = sum(v[1] for v in mine)
        wall_ns = sum(v[2] for v in mine)
        n = on[entry] // period
        slack = 4 * math.sqrt(max(n, 1)) * period
        if abs(on[entry] - cpu_ns) > max(0.10 * cpu_ns, slack):
            problems.append("%s: %.3f s on CPU in folded lines, its threads' clocks %.3f s" %
                            (function, on[entry] / 1e9, cpu_ns / 1e9))
        if inside[entry] < 0.9 * on[entry]:
            problems.append("%s: in %.3f s of its threads' %.3f s on CPU" %
                            (function, inside[entry] / 1e9, on[entry] / 1e9))
        if abs(on[entry] + off[entry] - wall_ns) > 0.05 * wall_ns + slack:
            problems.append("%s: on %.3f + off %.3f s, its threads' lives %.3f s" %
                            (function, on[entry] / 1e9, off[entry] / 1e9, wall_ns / 1e9))
    assert not problems, "; ".join(problems)


def hue_and_saturation(css):
    """A computed fill, "rgb(r, g, b)": its hue in degrees and saturation 0-1."""
    import colorsys
    r, g, b = (int(x) / 255 for x in re.findall(r"\d+", css)[:3])
    h, _, s = colorsys.rgb_to_hls(r, g, b)
    return h * 360, s


def test_svg_on_cpu_warm_waits_cool_in_browser():
    """-F -f svg in Chromium: an [on-cpu] frame beside the wait classes,
    holding the samples and no wait; every on-CPU frame red to yellow,
    every colored wait frame green to violet; the legend, title and
    details say on CPU; its legend entry zooms to it and search finds
    compute_burst's time there. Drawn the same without scripts."""
    out, threads = run_workload_to("svg", seconds="2")
    artifacts = os.path.join(t.ROOT, "build", "artifacts")
    os.makedirs(artifacts, exist_ok=True)
    shot = os.path.join(artifacts, "flamegraph-oncpu.png")
    r = t.node([os.path.join(t.BROWSER, "flamegraph_oncpu_check.js"), out, "compute_burst",
                shot], timeout=180)
    assert r.returncode == 0, r.stderr
    seen = json.loads(r.stdout)
    assert seen["errors"] == [], seen["errors"]
    frames = seen["frames"]
    classes = [f for f in frames if f["depth"] == 1 and f["kind"] == "class"]
    on_cpu = [f for f in classes if f["name"] == "[on-cpu]"]
    assert len(on_cpu) == 1 and len(classes) > 1, [f["name"] for f in classes]
    assert on_cpu[0]["samples"] > 0 and on_cpu[0]["waits"] == 0, on_cpu[0]
    assert all(f["waits"] > 0 and f["samples"] == 0 for f in classes if f is not on_cpu[0])
    problems = []
    warm = cool = 0
    for f in frames:
        if f["depth"] == 0:
            continue
        hue, saturation = hue_and_saturation(f["fill"])
        if f["cls"] == "[on-cpu]":
            warm += 1
            if not (saturation > 0.5 and hue <= 60):
                problems.append("on CPU %s: %s" % (f["name"], f["fill"]))
            if "on CPU" not in f["tooltip"] or "sample" not in f["tooltip"]:
                problems.append("on CPU %s: %r" % (f["name"], f["tooltip"]))
        elif saturation > 0.1:  # "other", unknown and merged classes are grey
            cool += 1
            if not 90 <= hue <= 300:
                problems.append("off CPU %s: %s" % (f["name"], f["fill"]))
            if "off CPU" not in f["tooltip"]:
                problems.append("off CPU %s: %r" % (f["name"], f["tooltip"]))
    assert warm > 5 and cool > 5 and not problems, (warm, cool, problems[:10])
    assert any(f["name"] == "compute_burst" and f["cls"] == "[on-cpu]" for f in frames)
    assert any(f["name"] == "spin_pinned" and f["cls"] == "[on-cpu]" for f in frames)
    assert seen["legend"][0].startswith("[on-cpu] "), seen["legend"]
    assert seen["title"].startswith("On-CPU time: ") and "off-CPU time: " in seen["title"]
    assert "warm on CPU" in seen["hint"], seen["hint"]
    assert re.match(r"^\[on-cpu\]: [\d.]+ m?s on CPU, [\d.]+% of all, \d+ samples$",
                    seen["onCpuDetails"]), seen["onCpuDetails"]
    assert " off CPU, " in seen["waitDetails"] and "wait" in seen["waitDetails"], seen
    # Its legend entry zooms to it: full width, the waits out of sight.
    assert seen["zoomed"] == "[on-cpu]" and seen["zoomedWidth"] > 1170, seen
    assert seen["hiddenWhileZoomed"] == 0 and seen["waitsHiddenWhileZoomed"] > 0, seen
    # Search, zoomed: compute_burst's on-CPU time, counted once.
    expected = sum(f["ns"] for f in frames
                   if f["name"] == "compute_burst" and f["cls"] == "[on-cpu]")
    assert seen["matchedFrames"] > 0 and seen["matchedNs"] == expected, seen
    # The file alone colors and places every frame as the script draws them.
    r = t.node([os.path.join(t.BROWSER, "flamegraph_static_check.js"), out], timeout=180)
    assert r.returncode == 0, r.stderr
    static = json.loads(r.stdout)
    plain, scripted = static["noScript"], static["script"]
    assert plain["errors"] == [] and scripted["errors"] == [], static
    assert [f["fill"] for f in plain["frames"]] == [f["fill"] for f in scripted["frames"]]
    assert [e["cls"] for e in plain["legend"]] == plain["classes"], plain["legend"]


if __name__ == "__main__":
    sys.exit(t.run_suite(globals()))
