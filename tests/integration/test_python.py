#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Integration tests of Python frames in the stacks.

Debian's own /usr/bin/python3 (3.11) under offcpu, blocking under
outer() -> middle() -> inner() (tests/integration/python/app.py) in
time.sleep, threading.Lock, socket.recv and subprocess.run: each wait must
show the three functions, with their file and line, in order, where the
native stack had _PyEval_EvalFrameDefault, with native frames on both
sides, and the wait's class. Then two threads at once, a Python child that
exits mid-recording, code objects freed and reused, every output format,
and, where pyenv's builds of 3.9 to 3.13 are installed, each version.

Run as root from the repository root after `make test-build`. Prints one
line per check and ends with "N passed, N failed".
"""
import glob
import gzip
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as t  # noqa: E402

ROOT = t.ROOT
OFFCPU = t.OFFCPU
TMP = t.TMP
PYTHON = "/usr/bin/python3"
APP = os.path.join(ROOT, "tests", "integration", "python", "app.py")
ROUNDS = 5
# app.py's PAUSE is 50 ms: its waits are at least this long.
LONG_NS = 40 * 1000 * 1000


# Not run here (what it needs is not installed): said, and counted failed.
Skip = t.Skip


def marker_lines(path):
    """"# at: NAME" comments -> their line numbers."""
    lines = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            m = re.search(r"# at: (\w+)", line)
            if m:
                lines[m.group(1)] = n
    return lines


AT = marker_lines(APP)


def record(mode, rounds=ROUNDS, python=PYTHON, extra=(), name=None):
    """offcpu -f json -- python app.py MODE ROUNDS TRUTH: (waits, stats, truth lines)."""
    name = name or mode
    out = os.path.join(TMP, "py-%s.json" % name)
    truth = os.path.join(TMP, "py-%s.truth" % name)
    r = t.run_command_traced(["-m", "1ms", "-f", "json", "-o", out] + list(extra),
                             [python, APP, mode, str(rounds), truth])
    assert r.returncode == 0, "offcpu failed: %d %s" % (r.returncode, r.stderr[-2000:])
    waits, stats = t.read_json_lines(out)
    lines = []
    if os.path.exists(truth):
        with open(truth) as f:
            lines = [line.split() for line in f if line.strip()]
    return waits, stats, lines, out


def python_frames(w):
    return [f for f in w["user_stack"] if f.get("kind") == "python"]


def chain_at(w, top="inner"):
    """Index of the Python frame named top in the user stack, or None."""
    for i, f in enumerate(w["user_stack"]):
        if f.get("kind") == "python" and f.get("sym") == top:
            return i
    return None


def check_chain(w, top="inner", one_c_call=True):
    """inner, middle, outer in order, each with app.py's file and line, with
    native frames on both sides and no evaluator frame left. one_c_call: the
    three are next to each other (3.11+ runs Python calls in one C call;
    3.9 and 3.10 call through C, whose frames come between)."""
    stack = w["user_stack"]
    i = chain_at(w, top)
    assert i is not None, [f.get("sym") for f in stack]
    py = [f for f in stack[i:] if f.get("kind") == "python"]
    want = [(top, AT[top]), ("middle", AT["middle"]), ("outer", AT["outer"])]
    got = [(f.get("sym"), f.get("line")) for f in py[:3]]
    assert got == want, "%s, not %s" % (got, want)
    if one_c_call:
        assert py[:3] == stack[i:i + 3], [f.get("sym") for f in stack[i:i + 3]]
    for f in py[:3]:
        assert f["file"] == APP, f
        assert "module" not in f, f
    end = stack.index(py[2])
    assert any("kind" not in f for f in stack[:i]), \
        "no native frame on the leaf side: %s" % [f.get("sym") for f in stack]
    assert any("kind" not in f for f in stack[end + 1:]), \
        "no native frame on the root side: %s" % [f.get("sym") for f in stack]
    names = [f.get("sym") for f in stack]
    assert "_PyEval_EvalFrameDefault" not in names, names


def long_waits(waits, tid=None):
    return [w for w in waits if w["duration_ns"] >= LONG_NS and (tid is None or w["tid"] == tid)]


def with_stacks(waits, stats):
    """The waits that have stacks. A wait whose switch-in this VM hid is
    recovered at its thread's next switch-out with its state and duration
    only (switch_in_recovered): gone by then. At most 2 of a run's, each
    counted."""
    hidden = [w for w in waits if t.recovered(w)]
    assert len(hidden) <= min(2, stats["switch_in_recovered"]), \
        "%d waits without stacks, %d recovered" % (len(hidden), stats["switch_in_recovered"])
    return [w for w in waits if not t.recovered(w)], len(hidden)


def check_mode(mode, wait_class, leaf=None):
    waits, stats, _, _ = record(mode)
    long, hidden = with_stacks(long_waits(waits), stats)
    chained = [w for w in long if chain_at(w) is not None]
    assert len(chained) >= ROUNDS - hidden, "%d waits under inner(), want %d: %s" % (
        len(chained), ROUNDS - hidden, [(w["wait"], [f.get("sym") for f in w["user_stack"]][:8])
                                        for w in long_waits(waits)])
    for w in chained:
        check_chain(w)
        assert w["wait"] == wait_class, "%s wait, not %s" % (w["wait"], wait_class)
        if leaf:
            assert any(f.get("sym") == leaf for f in w["user_stack"]), \
                [f.get("sym") for f in w["user_stack"]]
    return waits


def test_sleep_under_three_python_functions():
    check_mode("sleep", "sleep", leaf="clock_nanosleep")


def test_lock_acquire_held_by_another_thread():
    check_mode("lock", "lock:semaphore", leaf="PyThread_acquire_lock_timed")


def test_socket_recv_on_a_socketpair():
    check_mode("recv", "net:unix")


def test_subprocess_run_waits_for_its_child():
    """subprocess.run is Python code too: its frames come between inner()
    and the wait, leaf first, each with subprocess.py's file."""
    waits, stats, _, _ = record("subprocess")
    child = [w for w in long_waits(waits) if w["wait"] == "child"]
    assert len(child) >= ROUNDS, [(w["wait"], w["duration_ns"]) for w in waits]
    for w in child:
        py = python_frames(w)
        names = [f.get("sym") for f in py]
        i = names.index("inner")
        assert names[i:i + 3] == ["inner", "middle", "outer"], names
        assert [f["line"] for f in py[i:i + 3]] == [AT["inner"], AT["middle"], AT["outer"]]
        above = py[:i]
        assert above and all(f["file"].endswith("/subprocess.py") for f in above), \
            [(f.get("sym"), f.get("file")) for f in above]
        assert "run" in [f["sym"] for f in above], names
        assert all(f.get("line", 0) > 0 for f in py), py


def test_two_threads_blocked_at_once_each_have_their_frames():
    waits, stats, truth, _ = record("threads")
    tids = {name: int(tid) for name, tid in truth}
    for name, other in (("alpha", "beta"), ("beta", "alpha")):
        mine, hidden = with_stacks(long_waits(waits, tids[name]), stats)
        assert len(mine) >= ROUNDS - 1 - hidden, "%s: %d waits" % (name, len(mine))
        for w in mine:
            py = python_frames(w)
            names = [f.get("sym") for f in py]
            # Event.wait and Condition.wait are Python code too, above alpha_waits.
            assert name + "_waits" in names, names
            assert py[names.index(name + "_waits")]["line"] == AT[name], py
            assert other + "_waits" not in names, names
            assert "mode_threads.<locals>.%s" % name in names, names


def test_child_that_exits_mid_recording_is_named():
    """The child blocks, exits; the recording goes on, and names its frames
    (read when its records came, while it lived)."""
    waits, stats, truth, _ = record("child", rounds=3)
    child = int(dict(truth)["child"])
    mine = [w for w in long_waits(waits) if w["pid"] == child and chain_at(w) is not None]
    assert len(mine) >= 3, [(w["pid"], w["wait"]) for w in waits]
    for w in mine:
        check_chain(w)


def test_code_objects_freed_and_reused_are_named_for_what_they_are():
    """gen_0, gen_1...: each compiled, run under outer(), freed. CPython puts
    the next code object where the last one was (the truth says the address
    repeated, else this proves nothing); each wait names the function it
    ran, at its own line, never the one that lived there before.

    Code objects are read when their record comes, which wakes the reader
    at once for a code object (address and identity) it has not seen; one
    freed (and maybe replaced) before that read cannot be named: it is left
    unnamed and counted, never named as its successor nor at a line its
    freed line table gives. app.py keeps every other function alive a
    while after its wait: those are named (all but one at worst),
    the others race the read."""
    rounds = 12
    waits, stats, truth, _ = record("churn", rounds=rounds)
    addresses = [int(addr) for _, addr, _ in truth]
    assert len(set(addresses)) < len(addresses), "no code object address was reused"
    line_of = {name: int(line) for name, _, line in truth}
    seen, unnamed = {}, 0
    # A wait whose switch-in this VM hid is recovered without stacks: whose
    # function it ran cannot be told.
    hidden = len([w for w in long_waits(waits) if t.recovered(w)])
    assert hidden <= 2, hidden
    for w in long_waits(waits):
        py = python_frames(w)
        names = [f.get("sym") for f in py]
        if names[1:4] != ["inner", "middle", "outer"]:
            continue
        gen = py[0]
        if "sym" not in gen:
            unnamed += 1
            continue
        assert gen["file"] == "generated.py", gen
        assert gen["line"] == line_of[gen["sym"]], (gen, line_of[gen["sym"]])
        seen[gen["sym"]] = seen.get(gen["sym"], 0) + 1
    # Each wait is a different function: named once each, none twice.
    assert seen and max(seen.values()) == 1, seen
    assert rounds - hidden <= len(seen) + unnamed <= rounds, (seen, unnamed, hidden)
    kept = ["gen_%d" % n for n in range(1, rounds, 2)]
    assert len([g for g in kept if g in seen]) >= len(kept) - 1 - hidden, \
        "of the functions kept alive, only %s named" % sorted(set(kept) & set(seen))
    assert stats["python_frames_unnamed"] >= unnamed, (stats["python_frames_unnamed"], unnamed)
    print("    %d of %d freed functions named, %d unnamed (freed before read)" %
          (len(seen), rounds, unnamed))


def test_every_format_carries_the_python_frames():
    """One recording reported as text, folded, svg and pprof; go tool pprof
    shows inner() with app.py and its line."""
    _, _, _, out = record("sleep", name="formats")
    shown = "inner (app.py:%d)" % AT["inner"]
    for fmt in ("text", "folded", "svg"):
        dest = os.path.join(TMP, "py-formats." + fmt)
        r = t.run([OFFCPU, "report", "-f", fmt, "-o", dest, out])
        assert r.returncode == 0, r.stderr
        with open(dest, errors="replace") as f:
            text = f.read()
        if fmt == "folded":
            # No frame of a folded line holds a space: only the value's.
            chains = [line for line in text.splitlines() if shown.replace(" ", "_") in line]
            want = "outer_(app.py:%d);middle_(app.py:%d);%s" % (
                AT["outer"], AT["middle"], shown.replace(" ", "_"))
            assert any(want in line for line in chains), text[:2000]
            assert all(re.match(r"^[^ ]+ \d+$", line) for line in chains), chains[:3]
        else:
            assert shown in text, "%s: no %r" % (fmt, shown)
    dest = os.path.join(TMP, "py-formats.pb.gz")
    r = t.run([OFFCPU, "report", "-o", dest, out])
    assert r.returncode == 0, r.stderr
    traces = t.go_pprof(["-traces", dest])
    assert re.search(r"\binner\b", traces), traces[:2000]
    lines = t.go_pprof(["-lines", "-top", "-nodecount=200", dest])
    assert "inner %s:%d" % (APP, AT["inner"]) in lines, lines[:3000]
    # And the json recording reads back to itself, kind included.
    dest = os.path.join(TMP, "py-formats-again.json")
    r = t.run([OFFCPU, "report", "-f", "json", "-o", dest, out])
    assert r.returncode == 0, r.stderr
    again, _ = t.read_json_lines(dest)
    original, _ = t.read_json_lines(out)
    assert again == original


def test_json_frames_are_kind_python_with_sym_file_line():
    waits, _, _, _ = record("sleep", rounds=2, name="json")
    w = [w for w in long_waits(waits) if chain_at(w) is not None][0]
    f = w["user_stack"][chain_at(w)]
    assert f["kind"] == "python" and f["sym"] == "inner" and f["file"] == APP, f
    assert f["line"] == AT["inner"] and f["addr"].startswith("0x"), f


def test_depth_bounded_and_counted_when_cut():
    """A recursion 100 Python frames deep: 64 are sent, the wait counted."""
    script = os.path.join(TMP, "deep.py")
    with open(script, "w") as f:
        f.write("import time\n"
                "def down(n):\n"
                "    if n == 0:\n"
                "        time.sleep(0.05)\n"
                "        return\n"
                "    down(n - 1)\n"
                "for _ in range(3):\n"
                "    down(100)\n")
    out = os.path.join(TMP, "py-deep.json")
    r = t.run_command_traced(["-m", "1ms", "-f", "json", "-o", out], [PYTHON, script])
    assert r.returncode == 0, r.stderr
    waits, stats = t.read_json_lines(out)
    deep = [w for w in long_waits(waits) if python_frames(w)]
    assert len(deep) >= 3, len(deep)
    for w in deep:
        names = [f.get("sym") for f in python_frames(w)]
        assert names == ["down"] * 64, names
    assert stats["python_stack_cut_short"] >= 3, stats


def test_a_process_running_before_offcpu_gets_its_frames():
    """-p on a python3 already running: found when the start finds it
    waiting, named from then on, its wait still open at the stop too."""
    # 100 rounds, 5 s: loading offcpu took up to 3 s beside other builds,
    # and 40 rounds had ended before the recording had 20 waits.
    p = t.subprocess.Popen([PYTHON, APP, "sleep", "100"])
    try:
        waits, stats = t.trace_json(["-p", str(p.pid), "-m", "1ms"], seconds="1500ms")
    finally:
        p.kill()
        p.wait()
    # Open waits included: the first may end before the start has looked at the process.
    long = long_waits(waits)
    chained = [w for w in long if chain_at(w) is not None]
    assert len(chained) >= len(long) - 2 >= 20, (len(chained), len(long))
    for w in chained:
        check_chain(w)


HANG = os.path.join(ROOT, "tests", "integration", "python", "hang.py")
HANG_AT = marker_lines(HANG)


class Hang:
    """hang.py WAITERS, returned once its threads are all blocked: the main
    thread in time.sleep(120), each waiter in a lock's acquire."""

    def __init__(self, waiters=1):
        self.p = t.subprocess.Popen([PYTHON, HANG, str(waiters)], stdout=t.subprocess.PIPE,
                                    text=True)
        tids = [int(x) for x in self.p.stdout.readline().split()]
        self.main, self.waiters = tids[0], tids[1:]
        for tid in tids:
            self.wait_blocked(tid)

    def wait_blocked(self, tid):
        stat = "/proc/%d/task/%d/stat" % (self.p.pid, tid)

        def asleep():
            with open(stat) as f:
                return f.read().rsplit(")", 1)[1].split()[0] == "S"
        t.wait_until(asleep, 30, "thread %d blocked" % tid)

    def kill(self):
        self.p.kill()
        self.p.wait()


def check_open_python_frames(waits, hang):
    """The main thread's open sleep under <module> at hang.py's line, the
    waiter's acquire under waiter_blocks at its line, then threading.py's
    run: the frames an ended wait there would carry."""
    by_tid = {w["tid"]: w for w in waits if "open" in w}
    assert hang.main in by_tid and hang.waiters[0] in by_tid, \
        ([(w["tid"], w.get("open")) for w in waits], hang.main, hang.waiters)
    main = by_tid[hang.main]
    py = python_frames(main)
    assert [(f.get("sym"), f.get("line"), f.get("file")) for f in py] == \
        [("<module>", HANG_AT["sleep"], HANG)], [f.get("sym") for f in main["user_stack"]]
    names = [f.get("sym") for f in main["user_stack"]]
    assert "_PyEval_EvalFrameDefault" not in names and "clock_nanosleep" in names, names
    assert main["wait"] == "sleep", main["wait"]
    waiter = by_tid[hang.waiters[0]]
    py = python_frames(waiter)
    names = [f.get("sym") for f in py]
    assert py and (py[0].get("sym"), py[0].get("line"), py[0].get("file")) == \
        ("waiter_blocks", HANG_AT["acquire"], HANG), names
    assert "Thread.run" in names and "Thread._bootstrap" in names, names
    assert all(f["file"].endswith("/threading.py") for f in py[1:]), py
    assert waiter["wait"] == "lock:semaphore", waiter["wait"]


def test_open_waits_in_a_snapshot_carry_their_python_frames():
    """offcpu snapshot of a hung Python process: its open waits name the
    Python code they block in, in json and in the text report."""
    hang = Hang()
    try:
        r = t.run([OFFCPU, "snapshot", "-f", "json", "-p", str(hang.p.pid)])
        assert r.returncode == 0, r.stderr
        lines = [json.loads(line) for line in r.stdout.splitlines()]
        text = t.run([OFFCPU, "snapshot", "-p", str(hang.p.pid)])
        assert text.returncode == 0, text.stderr
    finally:
        hang.kill()
    check_open_python_frames(lines[:-1], hang)
    assert "<module> (hang.py:%d)" % HANG_AT["sleep"] in text.stdout, text.stdout
    assert "waiter_blocks (hang.py:%d)" % HANG_AT["acquire"] in text.stdout, text.stdout


def test_open_waits_at_the_stop_carry_their_python_frames():
    """offcpu -p PID -d 1s on a hung Python process: its waits are open at
    both ends, and name the Python code they block in, in json and in the
    text report's still-waiting section."""
    hang = Hang()
    try:
        waits, stats = t.trace_json(["-p", str(hang.p.pid)], seconds="1s")
        out = os.path.join(TMP, "py-hang.txt")
        r = t.run([OFFCPU, "-p", str(hang.p.pid), "-d", "1s", "-o", out])
        assert r.returncode == 0, r.stderr
        with open(out) as f:
            text = f.read()
    finally:
        hang.kill()
    check_open_python_frames(waits, hang)
    assert {w["open"] for w in waits if w["tid"] == hang.main} == {"both"}, waits
    still = text[text.index("Still waiting"):]
    assert "<module> (hang.py:%d)" % HANG_AT["sleep"] in still, text
    assert "waiter_blocks (hang.py:%d)" % HANG_AT["acquire"] in still, text


def test_every_version_3_9_to_3_13_where_installed():
    """pyenv's CPython builds (libpython shared) where this machine has them:
    3.9 and 3.10 walk PyFrameObjects (f_lasti, lnotab / linetable), 3.11
    and 3.12 interpreter frames (entry flags, entry shims), 3.13 from its
    _Py_DebugOffsets."""
    found = {}
    for minor in range(9, 14):
        builds = sorted(glob.glob(os.path.expanduser(
            "~/.pyenv/versions/3.%d.*/bin/python3.%d" % (minor, minor))))
        if builds:
            found[minor] = builds[-1]
    if not found:
        raise Skip("no pyenv builds of CPython 3.9 to 3.13 under ~/.pyenv/versions")
    for minor, python in sorted(found.items()):
        waits, stats, _, _ = record("sleep", rounds=3, python=python, name="3.%d" % minor)
        chained = [w for w in long_waits(waits) if chain_at(w) is not None]
        assert len(chained) >= 3, "3.%d: %d waits under inner()" % (minor, len(chained))
        for w in chained:
            check_chain(w, one_c_call=minor >= 11)
    missing = sorted(set(range(9, 14)) - set(found))
    if missing:
        print("    not installed: %s" % ", ".join("3.%d" % m for m in missing))


def main():
    return t.run_suite(globals())


if __name__ == "__main__":
    sys.exit(main())
