#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What a user sees first in each view, on this machine's own waits.

Every aggregate view (text, folded, svg, pprof, dot, offcpu serve's
profile windows and /metrics) leaves the waits of kernel threads idling
(wait class idle) out unless -k or named threads ask for them, and says
so where its format can; the text report puts its summary before its
long sections. The real BPF program, system wide, against this VM's own
kernel threads, a thread of its own that sleeps 5 ms at a time for the
whole suite (so that every window holds waits that ended in it, however
quiet the machine), and workloads left waiting across the stop.

Run as root from the repository root after `make` and `make
build/tests/workload`; prints one line per check and "N passed, N failed".
"""
import gzip
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as t  # noqa: E402
import test_serve as ts  # noqa: E402

OFFCPU, TMP, run = t.OFFCPU, t.TMP, t.run

# The loops of kernel threads waiting for work, as the leaf of their stack.
IDLE_LOOPS = ("worker_thread", "smpboot_thread_fn", "kthreadd", "rcu_gp_kthread")


# The suite's own waits, ending all the time: a quiet machine's system-wide
# window may hold no wait but the idle ones and those open across it.
TICKER = []


def start_ticker():
    TICKER.append(subprocess.Popen([t.WORKLOAD, "sleep", "wl_views_tick", "1000000", "5"],
                                   stdout=subprocess.DEVNULL))


def stop_ticker():
    for p in TICKER:
        p.kill()
        p.wait()


def record(args, extension, seconds="2s"):
    out = os.path.join(TMP, "views-%d%s" % (time.monotonic_ns(), extension))
    r = run([OFFCPU, "-d", seconds, "-o", out] + args)
    assert r.returncode == 0, r.stderr
    return out


def is_idle(wait_class):
    return wait_class == "idle" or wait_class.startswith("idle:")


def folded_lines(path):
    """(frames, value) of each line."""
    lines = []
    for line in open(path):
        frames, value = line.rsplit(" ", 1)
        lines.append((frames.split(";"), int(value)))
    return lines


def idle_loop_leaf(frames):
    """A kernel thread blocked in its loop, waiting for work (not preempted there)."""
    kernel = [f[:-len("_[k]")] for f in frames if f.endswith("_[k]")]
    return bool(kernel) and kernel[-1] in IDLE_LOOPS and frames[1] != "[preempted]"


def test_folded_leaves_idle_kernel_threads_to_k():
    default = folded_lines(record([], ".folded"))
    shown = folded_lines(record(["-k"], ".folded"))
    idle = [(f, v) for f, v in shown if is_idle(f[2][1:-1])]
    # -k: kernel threads only, and most of their time is spent waiting for work.
    assert idle and any(idle_loop_leaf(f) for f, _ in idle), shown[:5]
    assert sum(v for _, v in idle) > 0.5 * sum(v for _, v in shown), shown[:5]
    leaked = [";".join(f) for f, _ in default if is_idle(f[2][1:-1]) or idle_loop_leaf(f)]
    total = sum(v for _, v in default)
    leaked_ns = sum(v for f, v in default if is_idle(f[2][1:-1]) or idle_loop_leaf(f))
    print("# folded: %d lines, %d idle of %.3f s; -k: %d idle lines of %d" %
          (len(default), len(leaked), total / 1e9, len(idle), len(shown)))
    assert default and not leaked, "%.1f%% idle: %s" % (100.0 * leaked_ns / total, leaked[:3])


def svg_classes(text):
    """The base wait class of each frame, and of each legend entry."""
    frames = re.findall(r'<g class="f" [^>]*data-c="([^"]*)"', text)
    legend = re.findall(r'<g class="button legend-item" data-c="([^"]*)"', text)
    return frames, legend


def test_svg_leaves_idle_kernel_threads_to_k_and_says_so():
    text = open(record([], ".svg")).read()
    frames, legend = svg_classes(text)
    m = re.search(r'<text id="subtitle"[^>]*>hidden: ([^<]*)</text>', text)
    assert m and "kernel threads idling" in m.group(1) and "-k" in m.group(1), text[:3000]
    # (A worker busy in a work item still has worker_thread under it: only
    # the idle class tells the waiting ones.)
    assert frames and "idle" not in frames and "idle" not in legend, legend
    text = open(record(["-k"], ".svg")).read()
    frames, legend = svg_classes(text)
    assert 'id="subtitle"' not in text, text[:3000]
    assert "idle" in legend and "idle" in frames, legend
    assert any("<title>%s\n" % loop in text for loop in IDLE_LOOPS), text[:3000]


def pprof_classes(path):
    """off_cpu nanoseconds by wait.class, and the profile's comments."""
    with gzip.open(path) as f:
        top = t.pb_fields(f.read())
    strings = [v.decode() for n, v in top if n == 6]
    by_class = {}
    for raw in (v for n, v in top if n == 2):
        sample = t.pb_fields(raw)
        values = t.pb_varints([v for n, v in sample if n == 2])
        for label in (dict(t.pb_fields(v)) for n, v in sample if n == 3):
            if strings[label[1]] == "wait.class":
                wait = strings[label[2]]
                by_class[wait] = by_class.get(wait, 0) + values[1]
    return by_class, [strings[v] for n, v in top if n == 13]


def test_pprof_leaves_idle_kernel_threads_to_k_and_says_so():
    by_class, comments = pprof_classes(record([], ".pb.gz"))
    hidden = [c for c in comments if c.startswith("offcpu hidden: ")]
    print("# pprof classes: %s" % sorted(by_class.items(), key=lambda kv: -kv[1])[:4])
    assert by_class and not [c for c in by_class if is_idle(c)], by_class
    assert len(hidden) == 1 and "kernel threads idling" in hidden[0], comments
    by_class, comments = pprof_classes(record(["-k"], ".pb.gz"))
    assert [c for c in by_class if is_idle(c)], by_class
    assert not [c for c in comments if c.startswith("offcpu hidden: ")], comments


def pprof_file(path):
    """The main binary go tool pprof names ("File: ..."), and -raw's mappings and samples."""
    top = t.go_pprof(["-top", path])
    m = re.search(r"^File: (.*)$", top, re.M)
    samples, locations, mappings = t.parse_pprof_raw(t.go_pprof(["-raw", path]))
    return m and m.group(1), samples, locations, mappings


def workload_stacks_resolve(samples, locations, mappings, comm):
    """The workload's sleeps keep their kernel and user functions, each
    user frame in the workload's mapping, the first."""
    mine = [s for s in samples if s["labels"].get("thread.name") == comm and
            s["labels"].get("wait.class") == "sleep"]
    assert mine, "no sleep of %s: %s" % (comm, samples[:3])
    for s in mine:
        functions = [fn for loc in s["locations"] for fn in locations[loc]["functions"]]
        assert "do_nanosleep" in functions or "hrtimer_nanosleep" in functions, functions
        assert "main" in functions and "clock_nanosleep" in functions, functions
        in_main = [locations[loc]["mapping"] for loc in s["locations"]
                   if "main" in locations[loc]["functions"]]
        assert in_main == [1], (in_main, mappings[:3])


def test_pprof_file_is_the_traced_program_or_offcpu():
    """go tool pprof takes the first mapping for the main binary and says
    "File: [kernel.kallsyms]" if the kernel's comes first: the traced
    program's is first (-- COMMAND, or one -p PID), else offcpu's own."""
    workload = os.path.realpath(t.WORKLOAD)
    out = os.path.join(TMP, "views-command.pb.gz")
    r = t.run_command_traced(["-o", out], [t.WORKLOAD, "sleep", "wl_file", "10", "20"])
    assert r.returncode == 0, r.stderr
    name, samples, locations, mappings = pprof_file(out)
    print("# -- COMMAND: File: %s; mapping 1: %s" % (name, mappings[0]))
    assert name == os.path.basename(workload), (name, mappings)
    assert workload in mappings[0] and t.elf_build_id(workload) in mappings[0], mappings
    workload_stacks_resolve(samples, locations, mappings, "wl_file")

    p = subprocess.Popen([t.WORKLOAD, "sleep", "wl_file_pid", "150", "20"])
    try:
        name, samples, locations, mappings = pprof_file(record(["-p", str(p.pid)], ".pb.gz", "1s"))
    finally:
        p.kill()
        p.wait()
    print("# -p PID: File: %s" % name)
    assert name == os.path.basename(workload), (name, mappings)
    workload_stacks_resolve(samples, locations, mappings, "wl_file_pid")

    name, samples, _, mappings = pprof_file(record([], ".pb.gz", "1s"))
    print("# system wide: File: %s; %d samples" % (name, len(samples)))
    assert name == os.path.basename(os.path.realpath(OFFCPU)), (name, mappings)
    assert samples and any("[kernel.kallsyms]" in m for m in mappings), mappings


def test_dot_says_what_it_left_out():
    text = open(record([], ".dot")).read()
    label = re.search(r'graph \[[^\]]*label="([^"]*)"\]', text)
    assert label and "hidden: " in label.group(1), text[:2000]
    assert "kernel threads idling" in label.group(1), label.group(1)
    text = open(record(["-k"], ".dot")).read()
    label = re.search(r'graph \[[^\]]*label="([^"]*)"\]', text)
    assert label and "hidden: " not in label.group(1), label.group(1)


def serve_views(args):
    """A 2 s pprof window's classes and the /metrics series' wait classes of offcpu serve."""
    serve = ts.Serve(args)
    try:
        status, _, body = serve.get("/debug/pprof/offcpu?seconds=2")
        _, metrics = serve.metrics()
    finally:
        assert serve.stop() == 0, serve.stderr()
    assert status == 200, status
    path = os.path.join(TMP, "window-%d.pb.gz" % time.monotonic_ns())
    with open(path, "wb") as f:
        f.write(body)
    _, samples = ts.parse_exposition(metrics)
    series = {l["wait"] for n, l, _ in samples if n == "offcpu_off_cpu_seconds_total"}
    hidden = ts.value(samples, "offcpu_hidden_idle_seconds_total")
    return pprof_classes(path), series, hidden


def test_serve_windows_and_metrics_leave_idle_kernel_threads_to_k():
    (by_class, comments), series, hidden = serve_views([])
    print("# serve: window classes %s; metrics classes %s; hidden %.3f s" %
          (sorted(by_class), sorted(series), hidden))
    assert "sleep" in by_class and not [c for c in by_class if is_idle(c)], by_class
    assert [c for c in comments if c.startswith("offcpu hidden: ")], comments
    assert series and not [c for c in series if is_idle(c)], series
    assert hidden > 0, hidden
    (by_class, comments), series, hidden = serve_views(["-k"])
    assert [c for c in by_class if is_idle(c)], by_class
    assert [c for c in series if is_idle(c)], series
    assert hidden == 0, hidden


def sleepers(n, comm="wl_views"):
    """n threads asleep past any recording of the test: waits still open at its stop."""
    return [subprocess.Popen([t.WORKLOAD, "sleep", "%s%d" % (comm, i), "1", "60000"],
                             stdout=subprocess.DEVNULL) for i in range(n)]


def asleep_as(pid, comm):
    """Whether process pid, named comm, is asleep."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return False
    name, rest = stat.split(" (", 1)[1].rsplit(")", 1)
    return name == comm and rest.split()[0] == "S"


def stop(procs):
    for p in procs:
        p.kill()
        p.wait()


def section_lines(text, heading):
    """The lines of the section under heading, up to the next blank line."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith(heading))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i]), len(lines))
    return lines[start + 1:end]


def test_text_summary_before_the_long_sections():
    procs = sleepers(3)
    try:
        r = run([OFFCPU, "-d", "2s"])
    finally:
        stop(procs)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()

    def at(heading):
        return next(i for i, l in enumerate(lines) if l.startswith(heading))

    still, by_class = at("Still waiting (longest first)"), at("By wait class")
    print("# %d lines: By wait class at %d, Still waiting at %d, Top stacks at %d" %
          (len(lines), by_class + 1, still + 1, at("Top stacks") + 1))
    assert at("By thread state") < by_class < still < at("Top stacks"), r.stdout[:3000]
    assert still_waiting_entries(r.stdout), r.stdout


def still_waiting_entries(text):
    return [l for l in section_lines(text, "Still waiting") if re.match(r"^  #\d+ tid ", l)]


def test_still_waiting_cut_by_top_says_how_many_more():
    procs = sleepers(6)
    recording = os.path.join(TMP, "views-still.json")
    try:
        r = run([OFFCPU, "-d", "1s", "-f", "json", "-o", recording])
    finally:
        stop(procs)
    assert r.returncode == 0, r.stderr
    every = run([OFFCPU, "report", "--top", "100000", recording])
    cut = run([OFFCPU, "report", "--top", "3", recording])
    assert every.returncode == 0 and cut.returncode == 0, every.stderr + cut.stderr
    nr = len(still_waiting_entries(every.stdout))
    assert nr >= 6, every.stdout[:3000]
    assert len(still_waiting_entries(cut.stdout)) == 3, cut.stdout[:3000]
    more = [l for l in section_lines(cut.stdout, "Still waiting")
            if l.startswith("  ... ")]
    print("# %d still waiting; --top 3 says %s" % (nr, more))
    assert more == ["  ... %d more still waiting; --top %d shows them" % (nr - 3, nr)], \
        cut.stdout[:3000]
    assert not [l for l in section_lines(every.stdout, "Still waiting") if l.startswith("  ...")]


def test_snapshot_prints_each_stack_once():
    procs = sleepers(1, comm="wl_snap")
    try:
        # Named and asleep: its wait open (for far more than -m's 1 ms by the
        # time the snapshot has loaded).
        t.wait_until(lambda: asleep_as(procs[0].pid, "wl_snap0"), 30, "wl_snap0 asleep")
        r = run([OFFCPU, "snapshot", "-c", "wl_snap0"])
    finally:
        stop(procs)
    assert r.returncode == 0, r.stderr
    print("# snapshot: do_nanosleep %d times" % r.stdout.count("\n      do_nanosleep\n"))
    assert r.stdout.count("\n      do_nanosleep\n") == 1, r.stdout
    assert "#1 tid %d (wl_snap0)" % procs[0].pid in r.stdout, r.stdout


# A PostgreSQL backend's title, as its own rewrites it, and one past any column.
FITTING_TITLE = "postgres: app shop 10.1.2.3(54321) idle"
LONG_TITLE = "postgres: app shop 10.1.2.3(54322) idle in transaction " + "x" * 150
# What follows the name column: " %14s %7s %9s %14s %14s" (no estimates here).
NUMBER_COLUMNS = 1 + 14 + 1 + 7 + 1 + 9 + 1 + 14 + 1 + 14
TITLED = """
import subprocess, sys
procs = [subprocess.Popen([title, "sleep", name, "15", "20"], executable=sys.argv[1])
         for title, name in ((%r, "wl_fit"), (%r, "wl_long"))]
for p in procs:
    assert p.wait() == 0
""" % (FITTING_TITLE, LONG_TITLE)


def test_long_titles_keep_the_table_columns():
    """--group-by title: the name column is as wide as its widest title,
    up to a bound past which a title is cut and ends in an ellipsis; every
    row's numbers start at the same column. json keeps the titles whole."""
    recording = os.path.join(TMP, "views-titles.json")
    r = run([OFFCPU, "-m", "1ms", "-o", recording, "--", sys.executable, "-c", TITLED,
             t.WORKLOAD])
    assert r.returncode == 0, r.stderr
    waits, _ = t.read_json_lines(recording)
    titles = {"wl_fit": FITTING_TITLE + " sleep wl_fit 15 20",
              "wl_long": LONG_TITLE + " sleep wl_long 15 20"}
    for comm, title in titles.items():
        seen = {w.get("title") for w in waits if w["comm"] == comm}
        assert title in seen, (comm, seen)
    r = run([OFFCPU, "report", "--group-by", "title", recording])
    assert r.returncode == 0, r.stderr
    table = [l for l in section_lines(r.stdout, "By process title") if not l.startswith("  ...")]
    widths = {len(l) - NUMBER_COLUMNS for l in table}
    print("# %d rows, name column widths %s" % (len(table) - 1, sorted(widths)))
    assert len(widths) == 1, "\n".join(table)
    width = widths.pop() - 2
    assert width > len(titles["wl_fit"]), (width, table)
    names = [l[2:2 + width].rstrip() for l in table[1:]]
    assert titles["wl_fit"] in names, names
    cut = LONG_TITLE[:width - 1] + "\u2026"
    assert cut in names, (cut, names)
    # The numbers are where the header says.
    for l in table[1:]:
        assert re.match(r" +\d+\.\d{3} (s|ms|us) +\d+\.\d% +\d+ ", l[2 + width:]), l


def health_counters(text):
    return section_lines(text, "Health counters")


def test_zero_health_counters_in_one_line():
    r = run([OFFCPU, "-d", "1s", "--stats"])
    assert r.returncode == 0, r.stderr
    stats = dict(l.split() for l in r.stderr.splitlines()[1:] if l.startswith("  "))
    lines = health_counters(r.stdout)
    shown = dict(l.split() for l in lines[:-1])
    nonzero = {k: v for k, v in stats.items() if v != "0"}
    print("# %d counters, %d non-zero; the section: %d lines" %
          (len(stats), len(nonzero), len(lines)))
    assert len(stats) > 30 and nonzero and len(nonzero) < len(stats), stats
    assert shown == nonzero, (shown, nonzero)
    assert lines[-1] == "  other counters: 0", lines
    r = run([OFFCPU, "snapshot", "-c", "no-such-comm"])
    assert r.returncode == 0, r.stderr
    assert health_counters(r.stdout) == ["  all counters: 0"], r.stdout


if __name__ == "__main__":
    sys.exit(t.run_suite(globals(), setup=start_ticker, cleanup=stop_ticker))
