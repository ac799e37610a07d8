#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Integration tests of offcpu serve's strings: it frees the interned
strings nothing holds any more (lib/strpool.h's mark and sweep).

Under AddressSanitizer, with the strings swept at every tick
(OFFCPU_TEST_SWEEP_STRINGS=1), churn that reaches every holder: processes
with their own comm, title and cgroup, Python code, JIT code named by a
perf map, windows open all along and /metrics scraped. A holder the mark
missed is a use after free; a string freed and its address reused (the
release build) is a wrong name, so each profile's names are checked
against each other: comm, title, cgroup and frames of every sample name
the same process. Then a minute of processes with a new title each: the
strings held stay flat, where they grew with every title.

Run as root from the repository root after `make test-build`. Prints one
line per check and ends with "N passed, N failed".
"""
import os
import re
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as t  # noqa: E402
import test_python as py  # noqa: E402
import test_serve as ts  # noqa: E402

TMP = t.TMP
WORKLOAD = t.WORKLOAD
ASAN = t.OFFCPU_ASAN
CHURN_SECONDS = int(os.environ.get("SERVE_STRINGS_SECONDS", "40"))
# SERVE_STRINGS_SWEEP=0 runs the ASan churn without sweeping, to compare.
BOUNDED_SECONDS = int(os.environ.get("SERVE_STRINGS_BOUNDED_SECONDS", "60"))
# Another release build to measure (a build without the sweep fails, saying what it held).
RELEASE = os.environ.get("SERVE_STRINGS_BINARY", t.OFFCPU)
# The line an interned string's sweep logs under OFFCPU_TEST_MEMSTATS (serve.c, sweep_strings).
SWEEP = re.compile(r"^sweep: strings (\d+) \((\d+) bytes\) freed (\d+) \((\d+) bytes\) "
                   r"inlines freed (\d+) stacks (\d+) retired (\d+) took (\d+) us$", re.M)


def sweeps(log):
    return [tuple(int(x) for x in m.groups()) for m in SWEEP.finditer(open(log).read())]


def start_in(cgroup, argv, executable=None):
    return subprocess.Popen(argv, executable=executable, stdout=subprocess.DEVNULL,
                            preexec_fn=lambda: t.move_to_cgroup(cgroup, os.getpid()))


class Churn:
    """Processes one after another, two at a time, each in a cgroup of its
    own (made a second and more before it is used, so the cgroup walk of
    the wait that meets it names it) and removed once it exits: native
    sleepers with comm wls_N and a title naming N, Python's app.py writing
    truth file N, the JIT workload as wljit-N."""

    AHEAD = 8

    def __init__(self, top):
        self.top = top
        self.n = 0
        self.made = 0
        self.running = []
        self.kinds = {"native": 0, "python": 0, "jit": 0}
        self.stop = threading.Event()
        for _ in range(self.AHEAD):
            self.make()
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def make(self):
        os.mkdir(os.path.join(self.top, "c_%d" % self.made))
        self.made += 1

    def start_one(self):
        i = self.n
        self.n += 1
        self.make()
        cgroup = os.path.join(self.top, "c_%d" % i)
        kind = ("native", "native", "python", "jit")[i % 4]
        self.kinds[kind] += 1
        if kind == "native":
            p = start_in(cgroup, [WORKLOAD, "sleep", "wls_%d" % i, "20", "10"])
        elif kind == "python":
            p = start_in(cgroup, [py.PYTHON, py.APP, "sleep", "6",
                                  os.path.join(TMP, "strings-truth-%d" % i)])
        else:
            p = start_in(cgroup, ["wljit-%d" % i, "jit", "25", "-1"], executable=WORKLOAD)
        self.running.append((p, cgroup))

    def reap(self, wait=False):
        still = []
        for p, cgroup in self.running:
            if wait or p.poll() is not None:
                p.wait()
                t.remove_cgroup(cgroup)
            else:
                still.append((p, cgroup))
        self.running = still

    def run(self):
        while not self.stop.is_set():
            self.reap()
            while len(self.running) < 2:
                self.start_one()
            # Looked at every 100 ms: the churn's pace.
            time.sleep(0.1)
        self.reap(wait=True)

    def finish(self):
        self.stop.set()
        self.thread.join()
        for i in range(self.n, self.made):
            os.rmdir(os.path.join(self.top, "c_%d" % i))


def cgroup_index(cgroup, top_name):
    m = re.match(r"^/%s/c_(\d+)$" % re.escape(top_name), cgroup)
    return int(m.group(1)) if m else None


def check_window(raw, top_name, seen):
    """Every sample of the churn names one process: its comm, title and
    cgroup agree on N, its frames are that kind's. Counts what it saw."""
    samples, locations, mappings = t.parse_pprof_raw(raw)
    python_before = seen["python"]
    for s in samples:
        labels = s["labels"]
        comm, title = labels.get("thread.name"), labels.get("process.title", "")
        n = cgroup_index(labels.get("cgroup", ""), top_name)
        if n is None:
            continue
        names = [fn for loc in s["locations"] for fn in locations[loc]["functions"]]
        where = (labels, names)
        # A process gone before its title was first read shows its comm.
        if title == comm:
            title = ""
        # Before its exec, the driver's child; before its prctl, the workload's comm.
        if "test_serve_strings.py" in title:
            assert comm == "python3", where
            continue
        m = re.search(r" sleep wls_(\d+) 20 10$|^wljit-(\d+) jit 25 -1$|/strings-truth-(\d+)$",
                      title)
        assert title == "" or (m and int(m.group(m.lastindex)) == n), where
        if comm.startswith("wls_"):
            assert comm == "wls_%d" % n and (not m or m.lastindex == 1), where
            seen["native"] += 1
            if s["count"] and "clock_nanosleep" in names and "main" in names:
                assert "sleep_ms" in names, where
        elif comm == "python3":
            # A wait of the driver's child before its exec, read after it (the title is
            # read when the record is, the comm taken at the wait), names the new image.
            if "inner" in names:
                assert names.index("inner") < names.index("middle") < names.index("outer"), \
                    where
                seen["python"] += 1
        elif comm == "wl_jit":
            assert not m or m.lastindex == 2, where
            # Named by its process's perf map, under main (a preempted trampoline is the leaf).
            if "jit_trampoline" in names:
                assert "main" in names[names.index("jit_trampoline"):], where
                seen["jit"] += 1
        else:
            assert comm == "workload" and (not m or m.lastindex in (1, 2)), where
    # Python frames with their source: app.py, at the marked lines.
    if seen["python"] > python_before:
        assert re.search(r"\binner \S*app\.py:%d s=" % py.AT["inner"], raw), raw[-3000:]
    return len(samples)


def check_metrics(text, top_name):
    """Each series of the churn: its comm and cgroup, where both are shown, are one process's."""
    _, samples = ts.parse_exposition(text)
    checked = 0
    for name, labels, _ in samples:
        if name != "offcpu_waits_total" or "comm" not in labels:
            continue
        comm, n = labels["comm"], cgroup_index(labels["cgroup"], top_name)
        assert comm in ("other", "python3", "wl_jit", "workload") or comm.startswith("wls_") or \
            comm.startswith("wljit-"), labels
        # A cgroup removed before its wait's record was read has no name left.
        assert labels["cgroup"] in ("other", "/" + top_name) or n is not None or \
            labels["cgroup"].startswith("[cgroup "), labels
        if n is not None and comm.startswith("wls_"):
            assert comm == "wls_%d" % n, labels
            checked += 1
    return checked


def test_serve_strings_swept_every_tick_under_asan():
    """CHURN_SECONDS (40) of churn under the ASan build with the strings
    swept at every tick and a stack generation every 64 stacks: no ASan or
    LeakSanitizer report, sweeps that free strings, and windows and
    /metrics whose names agree with each other (check_window)."""
    if not os.path.exists(ASAN):
        raise t.Skip("no %s: make test-build" % ASAN)
    top_name = "offcpu-strings-%d" % os.getpid()
    top = os.path.join(t.cgroup2_root(), top_name)
    os.mkdir(top)
    churn = serve = None
    windows, texts = [], []
    try:
        serve = ts.Serve(["--cgroup", top, "-m", "0"], binary=ASAN, env={
            "OFFCPU_TEST_SWEEP_STRINGS": os.environ.get("SERVE_STRINGS_SWEEP", "1"),
            "OFFCPU_TEST_ROTATE_STACKS": "64",
            "OFFCPU_TEST_MEMSTATS": "5",
            "ASAN_OPTIONS": "detect_leaks=1:halt_on_error=1",
        })
        churn = Churn(top)
        stop = threading.Event()

        def fetch():
            while not stop.is_set():
                windows.append(serve.get("/debug/pprof/offcpu?seconds=2", timeout=60))

        fetchers = [threading.Thread(target=fetch) for _ in range(2)]
        for f in fetchers:
            f.start()
            # The two fetchers' windows a second apart, overlapping.
            time.sleep(1)
        started = time.monotonic()
        while time.monotonic() - started < CHURN_SECONDS:
            texts.append(serve.metrics()[1])
            # A scrape every half second through the churn.
            time.sleep(0.5)
        stop.set()
        for f in fetchers:
            f.join()
        churn.finish()
        texts.append(serve.metrics()[1])
        status = serve.stop()
        serve_log = serve.stderr()
        assert "Sanitizer" not in serve_log, serve_log[-6000:]
        assert status == 0, serve_log[-3000:]
        done = sweeps(serve.log)
        freed = sum(d[2] for d in done)
        print("# swept at every tick: %d s, %d processes (%r), %d sweeps freed %d strings "
              "(%d bytes) and %d inline frames, the last kept %d (%d bytes) in %d us; "
              "%d windows" % (CHURN_SECONDS, churn.n, churn.kinds, len(done), freed,
                              sum(d[3] for d in done), sum(d[4] for d in done),
                              done[-1][0] if done else 0, done[-1][1] if done else 0,
                              done[-1][7] if done else 0, len(windows)))
        assert len(done) > CHURN_SECONDS, len(done)
        assert freed > churn.n, (freed, churn.n)
        assert churn.kinds["python"] > 5 and churn.kinds["jit"] > 5, churn.kinds
        assert len(windows) >= CHURN_SECONDS // 3, len(windows)
        assert all(w[0] == 200 for w in windows), [w[0] for w in windows]
        seen = {"native": 0, "python": 0, "jit": 0}
        nr = []
        for i, w in enumerate(windows):
            path = os.path.join(TMP, "strings-window-%d.pb.gz" % i)
            with open(path, "wb") as f:
                f.write(w[2])
            nr.append(check_window(ts.pprof_raw(path), top_name, seen))
        print("# %d samples named right in %d windows, %d empty: %r" %
              (sum(nr), len(nr), nr.count(0), seen))
        # A window is empty when the reading lags its whole length behind (ASan, a loaded
        # machine: waits that ended in it come after it closed).
        assert nr.count(0) <= len(nr) // 2, nr
        assert seen["native"] > 10 and seen["python"] > 3 and seen["jit"] > 3, seen
        assert sum(check_metrics(text, top_name) for text in texts) > 0
    finally:
        if churn:
            if not churn.stop.is_set():
                churn.finish()
        if serve and serve.p.poll() is None:
            serve.stop()
        for name in os.listdir(top):
            if name.startswith("c_"):
                t.remove_cgroup(os.path.join(top, name))
        t.remove_cgroup(top)


# serve.c's SWEEP_FLOOR_BYTES and SWEEP_INTERVAL_NS.
SWEEP_FLOOR_BYTES = 256 << 10
SWEEP_INTERVAL_S = 10


def stretch_rates(held):
    """Bytes a second of each stretch of at least three seconds in which
    the strings held only grew (one sweep to the next)."""
    rates, start = [], 0
    for i in range(1, len(held) + 1):
        if i == len(held) or held[i] < held[i - 1]:
            if i - 1 - start >= 3:
                rates.append((held[i - 1] - held[start]) / (i - 1 - start))
            start = i
    return rates


def test_serve_strings_bounded_by_what_is_held():
    """BOUNDED_SECONDS (60) of processes each with a new title (three
    shells running a shell whose command line is 200 bytes and a number),
    served with -m 0 (the release build, the default sweep: twice what the
    last sweep kept plus its floor, at most every 10 s), scraped every
    second, a 2 s window every 5 s. Sweeps free titles; after the first
    third the strings held (OFFCPU_TEST_MEMSTATS) stay within that bound
    (plus two seconds' growth), at the end they are fewer than half the
    titles seen (before, every title stayed: the strings grew with them),
    and the RSS grows by at most 4 MiB (a sanity bound: a minute of titles
    kept was 0.9 MiB here)."""
    root = t.cgroup2_root()
    path = os.path.join(root, "offcpu-strings-bounded-%d" % os.getpid())
    os.mkdir(path)
    churn = serve = None
    pad = "x" * 200
    loop = "while :; do i=$((i+1)); sh -c \"sleep 0.001; : %s $$-$i\"; done" % pad
    try:
        serve = ts.Serve(["--cgroup", path, "-m", "0"], binary=RELEASE,
                         env={"OFFCPU_TEST_MEMSTATS": "1"})
        churn = subprocess.Popen(
            ["sh", "-c", "echo $$ > %s/cgroup.procs; i=0; (%s) & (%s) & %s" %
             (path, loop, loop, loop)])
        rss, windows, fetchers = [], [], []
        started = time.monotonic()
        next_window = started
        while time.monotonic() - started < BOUNDED_SECONDS:
            serve.metrics()
            if time.monotonic() >= next_window:
                next_window += 5
                w = threading.Thread(target=lambda: windows.append(
                    serve.get("/debug/pprof/offcpu?seconds=2")))
                w.start()
                fetchers.append(w)
            rss.append((time.monotonic() - started, ts.rss_kib(serve.p.pid)))
            # A scrape and an RSS reading a second: the soak's pace.
            time.sleep(1)
        churn.kill()
        churn = None
        t.remove_cgroup(path)
        # The last windows answered.
        for w in fetchers:
            w.join(timeout=60)
        titles = set()
        for i, w in enumerate(windows):
            wpath = os.path.join(TMP, "strings-bounded-%d.pb.gz" % i)
            with open(wpath, "wb") as f:
                f.write(w[2])
            raw = ts.pprof_raw(wpath)
            seen = re.findall(r"process.title:\[sh -c sleep 0.001; : x{200} (\d+-\d+)\]", raw)
            titles.update(seen)
            # Each title's shell waits for its sleep in wait4.
            assert seen and "wait4" in raw, raw[-2000:]
        # The titles run: each loop's last number, summed.
        ran = 0
        for loop_pid in set(n.split("-")[0] for n in titles):
            ran += max(int(n.split("-")[1]) for n in titles if n.split("-")[0] == loop_pid)
        # The churn's processes freed, a sweep then due frees their titles: at
        # most SWEEP_INTERVAL_NS (10 s) after the last one. Awaited in the
        # memstats, 12 s at most; the check of the end is below.
        t.poll_until(lambda: ts.memstats(serve.log)[-1]["strings"] < ran / 2, 12)
        assert serve.stop() == 0, serve.stderr()[-3000:]
        stats = ts.memstats(serve.log)
        done = sweeps(serve.log)
        later = stats[BOUNDED_SECONDS // 3:]
        # Bytes interned a second, freed or not, on average; and the fastest
        # stretch between two sweeps, which is what fills the strings by
        # the next one (37,600 a second against 30,400 on average in a CI
        # run whose churn sped up near its end).
        rate = (stats[-1]["bytes"] + sum(d[3] for d in done)) / len(stats)
        rate = max([rate] + stretch_rates([m["bytes"] for m in stats]))
        # A sweep that kept K bytes is followed by the next once they reach
        # 2K + the floor, SWEEP_INTERVAL_S after it at the soonest.
        kept = max(d[1] for d in done) if done else 0
        bound = max(2 * kept + SWEEP_FLOOR_BYTES, kept + rate * SWEEP_INTERVAL_S)
        third_rss = [k for s, k in rss if s >= BOUNDED_SECONDS / 3]
        growth = (max(third_rss) - third_rss[0]) / 1024
        print("# new titles: %d s, %d titles, strings %d (%d bytes) at %d s, at most %d "
              "(%d bytes) after (bound %d), %d (%d bytes) at the end; %d sweeps freed %d "
              "strings (%d bytes), the longest took %d us; RSS %.1f MiB at %d s, %.1f MiB at "
              "the end (max growth %.1f MiB)" %
              (BOUNDED_SECONDS, ran, stats[BOUNDED_SECONDS // 3]["strings"],
               stats[BOUNDED_SECONDS // 3]["bytes"], BOUNDED_SECONDS // 3,
               max(m["strings"] for m in later), max(m["bytes"] for m in later), bound,
               stats[-1]["strings"], stats[-1]["bytes"], len(done), sum(d[2] for d in done),
               sum(d[3] for d in done), max(d[7] for d in done) if done else 0,
               third_rss[0] / 1024, BOUNDED_SECONDS // 3, rss[-1][1] / 1024, growth))
        assert ran > 1500, ran
        assert len(done) >= 2 and all(d[2] for d in done), done
        assert max(m["bytes"] for m in later) <= bound + 2 * rate, \
            ([m["bytes"] for m in stats], bound, rate)
        assert stats[-1]["strings"] < ran / 2, (stats[-1], ran)
        assert growth <= 4, rss
    finally:
        if churn:
            churn.kill()
            churn.wait()
        if serve and serve.p.poll() is None:
            serve.stop()
        if os.path.isdir(path):
            t.remove_cgroup(path)


def main():
    return t.run_suite(globals())


if __name__ == "__main__":
    sys.exit(main())
