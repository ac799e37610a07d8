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
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as t  # noqa: E402

WORKLOAD = os.path.join(t.ROOT, "build", "tests", "oncpu_workload")
HZ = 997
SECONDS = "3"


def run_workload(args, seconds=SECONDS):
    """offcpu -F HZ -f json -- oncpu_workload: its json records and the
    workload's own account of each thread, {tid: (function, cpu_ns, wall_ns)}."""
    out = os.path.join(t.TMP, "oncpu-%d.json" % len(os.listdir(t.TMP)))
    cpu = str(os.cpu_count() - 1)
    r = t.run([t.OFFCPU, "-F", str(HZ), "-f", "json", "-o", out] + args +
              ["--", WORKLOAD, seconds, cpu])
    assert r.returncode == 0, "offcpu failed: %d %s" % (r.returncode, r.stderr)
    threads = {}
    for line in r.stdout.splitlines():
        m = re.match(r"thread (\d+) (\w+) (\d+) (\d+)$", line)
        if m:
            threads[int(m.group(1))] = (m.group(2), int(m.group(3)), int(m.group(4)))
    assert len(threads) == 3, "the workload said: %r" % r.stdout
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
    assert stats["ringbuf_unread"] == 0, stats
    assert stats["oncpu_samples"] == len(samples), \
        "oncpu_samples %d, %d records" % (stats["oncpu_samples"], len(samples))
    assert stats["oncpu_dropped"] == 0, stats
    # Every sample of every CPU is one of three: sent, filtered, idle.
    ticks = stats["oncpu_samples"] + stats["oncpu_filtered"] + stats["oncpu_idle"]
    expected = float(SECONDS) * HZ * os.cpu_count()
    assert 0.8 * expected < ticks < 1.3 * expected, \
        "%d ticks of %d CPUs at %d Hz in about %s s" % (ticks, os.cpu_count(), HZ, SECONDS)


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
    """perf record -F on the same workload: the top functions' shares of
    the on-CPU samples within 5 points of perf's."""
    if not os.path.exists("/usr/bin/perf"):
        raise t.Skip("perf is not installed")
    cpu = str(os.cpu_count() - 1)
    data = os.path.join(t.TMP, "perf.data")
    r = t.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(HZ), "-o", data, "--",
               WORKLOAD, SECONDS, cpu])
    assert r.returncode == 0, r.stderr
    r = t.run(["perf", "report", "-i", data, "--stdio", "--sort", "sym", "-q"])
    assert r.returncode == 0, r.stderr
    perf = {}
    for line in r.stdout.splitlines():
        m = re.match(r"\s*([\d.]+)%.*\] (\S+)", line)
        if m:
            perf[m.group(2)] = perf.get(m.group(2), 0.0) + float(m.group(1))
    threads, waits, samples, stats = run_workload([])
    ours = collections.Counter()
    for s in samples:
        stack = s.get("kernel_stack") or s.get("user_stack") or []
        ours[stack[0].get("sym", "?") if stack else "?"] += 1
    n = sum(ours.values())
    problems = []
    for function in ("compute_burst", "spin_pinned"):
        mine = 100.0 * ours[function] / n
        if abs(mine - perf.get(function, 0.0)) > 5:
            problems.append("%s: %.1f%% here, %.1f%% in perf" %
                            (function, mine, perf.get(function, 0.0)))
    assert not problems, "; ".join(problems) + "; perf: %s" % sorted(perf.items(),
                                                                    key=lambda x: -x[1])[:5]


def test_freq_refused_where_it_cannot_apply():
    for args, why in ((["snapshot", "-F", "99"], "snapshot"),
                      (["serve", "-F", "99"], "serve"),
                      (["report", "-F", "99", "x.json"], "report")):
        r = t.run([t.OFFCPU] + args)
        assert r.returncode != 0 and "--freq" in r.stderr and r.stderr.count("\n") == 1, \
            "%s: %d %r" % (why, r.returncode, r.stderr)
    r = t.run([t.OFFCPU, "-F", "10001", "-d", "1s"])
    assert r.returncode != 0 and "--freq" in r.stderr, r.stderr


def workload_pprof(args, seconds=SECONDS):
    """offcpu -F HZ -f pprof -- oncpu_workload: the profile's path and the
    workload's own account of each thread, {tid: (function, cpu_ns, wall_ns)}."""
    out = os.path.join(t.TMP, "oncpu-%d.pb.gz" % len(os.listdir(t.TMP)))
    cpu = str(os.cpu_count() - 1)
    r = t.run([t.OFFCPU, "-F", str(HZ), "-f", "pprof", "-o", out] + args +
              ["--", WORKLOAD, seconds, cpu])
    assert r.returncode == 0, "offcpu failed: %d %s" % (r.returncode, r.stderr)
    threads = {}
    for line in r.stdout.splitlines():
        m = re.match(r"thread (\d+) (\w+) (\d+) (\d+)$", line)
        if m:
            threads[int(m.group(1))] = (m.group(2), int(m.group(3)), int(m.group(4)))
    assert len(threads) == 3, "the workload said: %r" % r.stdout
    return out, threads


def raw_samples(raw):
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
    path, threads = workload_pprof(["-m", "0"])
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
    types, samples = raw_samples(t.go_pprof(["-raw", path]))
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
    path, threads = workload_pprof(["-m", "0"])
    types, samples = raw_samples(t.go_pprof(["-raw", path]))
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
    focused = sum(v["cpu"] for v, _ in raw_samples(tags)[1])
    assert focused == cpu[tid], (focused, cpu[tid])


if __name__ == "__main__":
    sys.exit(t.run_suite(globals()))
