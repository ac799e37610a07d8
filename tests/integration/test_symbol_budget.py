#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Integration tests of what reading traced processes' files may cost across
processes (a budget over all files, beside each file's), and of CPython's
detection sharing the symbolizer's read of a process's maps.

A cap on what every process's files hold at once (max_total_spend_bytes,
lowered through OFFCPU_TEST_LIMITS): processes each mapping a distinct
file of known functions, as a fork bomb of distinct copies would, as
nobody; the first ones are named, the others counted in symbol_misses,
with one warning, and the memory stays within the cap. In offcpu serve a
file freed when no process maps it gives its bytes back, and a file
skipped while the cap was full is read once there is room.

Run as root after `make -j2 test-build`. Prints one line per check and
ends with "N passed, N failed".
"""
import os
import re
import shutil
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as t  # noqa: E402
import test_serve as ts  # noqa: E402

TMP = t.TMP
SYMBOLS = 20000
COMM = "hst_budget"
# What the symbolizer holds once the first process is read (its binary,
# libc, ld.so and one file), and what each file more adds: measured by
# setup() through offcpu serve's OFFCPU_TEST_MEMSTATS.
COST = {}


def budget_file(d, k):
    """A file of SYMBOLS function symbols, names of one length but its own
    (budgetKK_function_NNNNN...): every file costs the same to read."""
    path = os.path.join(d, "budget%02d.so" % k)
    t.write_elf_with_symbols(path, ["budget%02d_function_%05d_with_a_longer_name" % (k, i)
                                    for i in range(SYMBOLS)])
    return path


def first_name(k):
    return "budget%02d_function_00000_with_a_longer_name" % k


def hostile(path):
    """A process of nobody's that waits, 20 ms at a time, under a frame in path."""
    return t.start_hostile(["frames", COMM, "0x1000", "100000", "20", path])


def start_serve(limits=None):
    """offcpu serve of COMM's processes, logging what it holds every second."""
    saved = dict(os.environ)
    os.environ["OFFCPU_TEST_MEMSTATS"] = "1"
    if limits:
        os.environ["OFFCPU_TEST_LIMITS"] = limits
    try:
        return ts.Serve(["-c", COMM, "--call-graph", "fp"])
    finally:
        os.environ.clear()
        os.environ.update(saved)


def file_bytes_when(serve, done, timeout=15):
    """The file bytes of the first memstats line, logged from now on, for which done holds."""
    seen = len(ts.memstats(serve.log))
    found = t.wait_until(lambda: [m for m in ts.memstats(serve.log)[seen:] if done(m)], timeout,
                         lambda: "memstats: %s" % ts.memstats(serve.log)[-3:])
    return found[0]["filebytes"]


def setup():
    """COST: what the first process's files hold, and what one file more adds."""
    d = t.nobody_dir()
    serve = start_serve()
    procs = []
    try:
        procs.append(hostile(budget_file(d, 90)))
        first = file_bytes_when(serve, lambda m: m["filebytes"] > 0)
        procs.append(hostile(budget_file(d, 91)))
        second = file_bytes_when(serve, lambda m: m["filebytes"] > first)
    finally:
        for p in procs:
            t.stop(p)
        assert serve.stop() == 0, serve.stderr()[-2000:]
        shutil.rmtree(d)
    COST.update(first=first, file=second - first)
    print("# the first process's files hold %d bytes, each file more %d" % (first, second - first))


def traced_processes(files, limits, spacing=0.5):
    """offcpu -c COMM on one process per file, started in that order
    spacing seconds apart (each named before the next starts), stopped by
    SIGINT 2 s after the last: its waits, stats, stderr, peak RSS (KiB) and
    the pids in order."""
    out = os.path.join(TMP, "budget-%d.json" % time.monotonic_ns())
    env = dict(os.environ, OFFCPU_TEST_LIMITS=limits) if limits else None
    tracer = t.start_tracer(["-c", COMM, "-f", "json", "-o", out, "--call-graph", "fp"],
                            env=env)
    procs, rss = [], 0
    try:
        for path in files + [None]:
            if path:
                procs.append(hostile(path))
            deadline = time.monotonic() + (spacing if path else 2)
            while time.monotonic() < deadline:
                rss = max(rss, t.peak_rss_kib(tracer.pid))
                # The peak RSS read every 50 ms through the spacing.
                time.sleep(0.05)
        tracer.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 60
        while tracer.poll() is None and time.monotonic() < deadline:
            rss = max(rss, t.peak_rss_kib(tracer.pid))
            # The peak RSS read every 50 ms until it exits.
            time.sleep(0.05)
        err = tracer.stderr.read()
    finally:
        for p in procs:
            t.stop(p)
        tracer.kill()
        tracer.wait()
    assert tracer.returncode == 0, (tracer.returncode, err[-2000:])
    waits, stats = t.read_json_lines(out)
    return waits, stats, err, rss, [p.pid for p in procs]


def named_by_pid(waits, files, pids):
    """For each process, in start order: whether its file's frame had its name
    (None: no wait of it with that frame)."""
    out = []
    for k, (path, pid) in enumerate(zip(files, pids)):
        frames = [f for w in waits if w["pid"] == pid and w["comm"] == COMM
                  for f in w["user_stack"] if f.get("module") == path]
        if not frames:
            out.append(None)
            continue
        syms = set(f.get("sym") for f in frames)
        assert syms <= {None, first_name(k)}, (path, syms)
        out.append(first_name(k) in syms)
    return out


def test_total_cap_names_the_first_processes_files():
    # Twelve processes, each mapping a file of its own (20,000 function
    # symbols, 2.6 MB to read and keep), under a cap with room for the
    # first process's files and three and a half more files: the first four
    # processes are named, the other eight are not (their frames counted in
    # symbol_misses), with one warning. Uncapped, all twelve are named, and
    # offcpu's peak RSS is above the capped one's by at least half of what
    # eight files hold (measured: 37 MiB capped, 56 uncapped; 44 and 57
    # beside a build).
    assert COST, "setup() did not measure what a file costs"
    d = t.nobody_dir()
    try:
        check_total_cap(d)
    finally:
        shutil.rmtree(d)


def check_total_cap(d):
    files = [budget_file(d, k) for k in range(12)]
    cap = COST["first"] + COST["file"] * 7 // 2
    waits, stats, err, capped_rss, pids = traced_processes(
        files, "max_total_spend_bytes=%d" % cap)
    named = named_by_pid(waits, files, pids)
    assert named == [True] * 4 + [False] * 8, named
    assert stats["symbol_misses"] >= 8, stats["symbol_misses"]
    warnings = [line for line in err.splitlines() if "bytes they may together" in line]
    assert len(warnings) == 1, err[-3000:]
    assert "budget04.so" in warnings[0], warnings
    # -v names each file skipped after it.
    skipped = [line for line in err.splitlines() if "bytes all files may cost" in line]
    assert len(skipped) >= 7, err[-3000:]

    waits, stats, err, uncapped_rss, pids = traced_processes(files, None)
    named = named_by_pid(waits, files, pids)
    assert named == [True] * 12, named
    assert "bytes they may together" not in err, err[-3000:]
    print("    peak RSS %d MiB capped, %d MiB uncapped" % (capped_rss // 1024,
                                                          uncapped_rss // 1024))
    assert uncapped_rss - capped_rss >= 8 * COST["file"] // 2 // 1024, (capped_rss, uncapped_rss)


def test_serve_reads_a_skipped_file_once_room_is_back():
    # offcpu serve with room for the first process's files and one and a
    # half files more: A's and B's files are read, C's is not (its frames
    # unnamed in a profile window). B exits: its file, mapped by no process,
    # is freed and gives its bytes back, and C's next wait reads C's file:
    # the next window names it. What the files hold never passes the cap.
    assert COST, "setup() did not measure what a file costs"
    d = t.nobody_dir()
    files = [budget_file(d, k) for k in range(3)]
    cap = COST["first"] + COST["file"] * 3 // 2
    serve = start_serve("max_total_spend_bytes=%d" % cap)
    procs = []
    try:
        for path in files:
            procs.append(hostile(path))
            # In order: each held (its first wait symbolized) before the next starts.
            file_bytes_when(serve, lambda m: m["processes"] >= len(procs))
        raw = window(serve)
        assert first_name(0) in raw and first_name(1) in raw, raw[-3000:]
        assert first_name(2) not in raw and "budget02.so" in raw, raw[-3000:]
        # B's file freed and C's read may fall between two memstats lines:
        # B let go of first.
        t.stop(procs[1])
        file_bytes_when(serve, lambda m: m["processes"] == 2)
        raw = window(serve)
        assert first_name(2) in raw and first_name(0) in raw, raw[-3000:]
        held = file_bytes_when(serve, lambda m: True)
    finally:
        for p in procs:
            t.stop(p)
        status = serve.stop()
        shutil.rmtree(d)
    log = serve.stderr()
    assert status == 0, log[-2000:]
    stats = ts.memstats(serve.log)
    print("    file bytes at most %d of the cap's %d; %d at the end" %
          (max(m["filebytes"] for m in stats), cap, held))
    assert max(m["filebytes"] for m in stats) <= cap, [m["filebytes"] for m in stats]
    assert held >= COST["first"] + COST["file"], held
    assert len([line for line in log.splitlines() if "bytes they may together" in line]) == 1, \
        log[-3000:]


def maps_reads(env, n=40):
    """offcpu -- sh running n sleeps of 20 ms (short-lived processes running
    no CPython), under strace (offcpu alone, not its command): how many
    times it opened a /proc/PID/maps."""
    trace = os.path.join(TMP, "maps-%d.strace" % time.monotonic_ns())
    out = os.path.join(TMP, "maps-%d.folded" % time.monotonic_ns())
    r = t.run(["strace", "-e", "trace=openat", "-o", trace, t.OFFCPU, "-f", "folded", "-o", out,
               "--", "sh", "-c", "for i in $(seq %d); do /bin/sleep 0.02; done" % n],
              env=dict(os.environ, **env))
    assert r.returncode == 0, r.stderr[-2000:]
    with open(out) as f:
        folded = f.read()
    # Their stacks still named: the symbolizer's reads are the ones shared.
    assert re.search(r"^sleep;\[interruptible\];\[sleep\];.*;clock_nanosleep;", folded, re.M), \
        folded[-2000:]
    with open(trace) as f:
        return len(re.findall(r'"/proc/\d+/maps"', f.read()))


def test_python_detection_shares_the_symbolizers_maps_reads():
    # CPython's detection takes the maps the symbolizer read (at the exec,
    # and again while ld.so maps the libraries) rather than reading them
    # itself: forty short-lived processes cost as many maps reads with it
    # as without it (OFFCPU_TEST_NO_PYTHON). Measured, two runs each: before,
    # 124-146 reads with it against 55-70 without (it read each process's
    # maps at its exec and its first wait); now 57-61 against 48-72.
    with_python = maps_reads({}) + maps_reads({})
    without = maps_reads({"OFFCPU_TEST_NO_PYTHON": "1"}) + maps_reads(
        {"OFFCPU_TEST_NO_PYTHON": "1"})
    print("    maps reads for 2 x 40 processes: %d with CPython's detection, %d without" %
          (with_python, without))
    assert without >= 80, without
    assert with_python <= without * 1.3 + 10, (with_python, without)


def window(serve, seconds=2):
    """`go tool pprof -raw` of the next window of serve."""
    status, _, body = serve.get("/debug/pprof/offcpu?seconds=%d" % seconds)
    assert status == 200, status
    path = os.path.join(TMP, "budget-window-%d.pb.gz" % time.monotonic_ns())
    with open(path, "wb") as f:
        f.write(body)
    return ts.pprof_raw(path)


def main():
    return t.run_suite(globals(), setup=setup)


if __name__ == "__main__":
    sys.exit(main())
