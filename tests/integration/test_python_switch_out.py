#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Integration tests of the Python frames of threads without rseq, walked at
their switch-out.

Debian's /usr/bin/python3 (3.11) with glibc's rseq off
(GLIBC_TUNABLES=glibc.pthread.rseq=0): its threads never pass rseq_update,
so their frames are walked at each switch-out and sent at the switch-in,
before the wait, when the wait passes. The same app.py as test_python.py,
run through a wrapper that first writes glibc's __rseq_size (0: rseq not
registered) to a file, so each recording proves its threads had none. Each
wait shows inner(), middle(), outer() with file and line, in order, in the
native stack, with its class; two threads get their own frames; with rseq
on the walk never runs; a wait below -m sends no Python record; a process
without CPython is never walked.

Run as root from the repository root after `make test-build`. Prints one
line per check and ends with "N passed, N failed".
"""
import glob
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as t  # noqa: E402
import test_python as py  # noqa: E402

TMP = t.TMP
PYTHON = py.PYTHON
APP = py.APP
ROUNDS = py.ROUNDS
NO_RSEQ = "glibc.pthread.rseq=0"
Skip = t.Skip

# Writes glibc's __rseq_size (the registered area's size; 0 when rseq is
# off, glibc 2.35 and later) to argv[1], then runs app.py with the rest.
WRAPPER = """import ctypes, runpy, sys
with open(sys.argv[1], "w") as f:
    f.write("%d\\n" % ctypes.c_uint.in_dll(ctypes.CDLL(None), "__rseq_size").value)
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def wrapper():
    path = os.path.join(TMP, "rseq_wrapper.py")
    with open(path, "w") as f:
        f.write(WRAPPER)
    return path


def traced(args, command, rseq):
    """offcpu --stats ARGS -- COMMAND, with glibc's rseq on or off."""
    saved = os.environ.get("GLIBC_TUNABLES")
    if rseq:
        os.environ.pop("GLIBC_TUNABLES", None)
    else:
        os.environ["GLIBC_TUNABLES"] = NO_RSEQ
    try:
        r = t.run_command_traced(args, command)
    finally:
        if saved is None:
            os.environ.pop("GLIBC_TUNABLES", None)
        else:
            os.environ["GLIBC_TUNABLES"] = saved
    assert r.returncode == 0, "offcpu failed: %d %s" % (r.returncode, r.stderr[-2000:])
    return r


def record(mode, rounds=ROUNDS, rseq=False, minimum="1ms", script=APP, python=PYTHON,
           name=None):
    """app.py MODE ROUNDS TRUTH under offcpu -m MIN -f json: (waits, stats,
    truth lines, __rseq_size of the process)."""
    name = "%s-%s" % (name or mode, "rseq" if rseq else "norseq")
    out = os.path.join(TMP, "pyso-%s.json" % name)
    truth = os.path.join(TMP, "pyso-%s.truth" % name)
    size = os.path.join(TMP, "pyso-%s.rseq" % name)
    traced(["-m", minimum, "-f", "json", "-o", out],
           [python, wrapper(), size, script, mode, str(rounds), truth], rseq)
    waits, stats = t.read_json_lines(out)
    lines = []
    if os.path.exists(truth):
        with open(truth) as f:
            lines = [line.split() for line in f if line.strip()]
    with open(size) as f:
        rseq_size = int(f.read())
    return waits, stats, lines, rseq_size


def unseen_out(stats):
    """Waits whose switch-out offcpu did not see: begun before the
    recording, open at its stop, or recovered after a hidden switch-in."""
    return (stats["waits_open_at_start"] + stats["waits_open_at_stop"] +
            stats["switch_in_recovered"])


def check_no_rseq(stats, rseq_size):
    """The process had no rseq, and none of its threads did: every wait
    whose switch-out was seen had its user stack walked there."""
    assert rseq_size == 0, "__rseq_size %d: rseq is registered" % rseq_size
    assert stats["emitted"] > 0, stats
    assert 0 <= stats["emitted"] - stats["user_stack_at_switch_out"] <= unseen_out(stats), stats
    # Every switch-out of the python3 threads walked (at least each wait sent).
    assert stats["python_walks_at_switch_out"] >= stats["python_stack_at_switch_out"] > 0, stats
    assert stats["python_stack_failures"] == 0, stats


def check_chain(w, top="inner"):
    """inner, middle, outer next to each other, in order, each with app.py's
    file and line, after the native leaf, and the chain whole to the
    wrapper's <module>, no evaluator frame left. At switch-out the native
    stack is walked by frame pointers, which Debian's python3 and libc do
    not keep: the leaf's frames, then the Python ones (test_python.py's
    check of native frames on the root side holds with rseq's CFI only)."""
    stack = w["user_stack"]
    i = py.chain_at(w, top)
    assert i is not None, [f.get("sym") for f in stack]
    want = [(top, py.AT[top]), ("middle", py.AT["middle"]), ("outer", py.AT["outer"])]
    got = [(f.get("sym"), f.get("line")) for f in stack[i:i + 3]]
    assert got == want, "%s, not %s" % (got, want)
    for f in stack[i:i + 3]:
        assert f.get("kind") == "python" and f["file"] == APP and "module" not in f, f
    assert stack[:i] and all("kind" not in f for f in stack[:i]), \
        "not the native leaf first: %s" % [f.get("sym") for f in stack]
    names = [f.get("sym") for f in stack]
    assert "_PyEval_EvalFrameDefault" not in names, names
    assert names[-1] == "<module>" and "run_path" in names, names


def check_mode(mode, wait_class, leaf=None):
    waits, stats, _, rseq_size = record(mode)
    check_no_rseq(stats, rseq_size)
    long, hidden = py.with_stacks(py.long_waits(waits), stats)
    chained = [w for w in long if py.chain_at(w) is not None]
    assert len(chained) >= ROUNDS - hidden, "%d waits under inner(), want %d: %s" % (
        len(chained), ROUNDS - hidden,
        [(w["wait"], [f.get("sym") for f in w["user_stack"]][:8]) for w in py.long_waits(waits)])
    for w in chained:
        check_chain(w)
        assert w["wait"] == wait_class, "%s wait, not %s" % (w["wait"], wait_class)
        if leaf:
            assert any(f.get("sym") == leaf for f in w["user_stack"]), \
                [f.get("sym") for f in w["user_stack"]]
    # Every wait that carries Python frames had them sent from its switch-out.
    with_frames = [w for w in waits if py.python_frames(w)]
    assert len(with_frames) == stats["python_stack_at_switch_out"], \
        (len(with_frames), stats["python_stack_at_switch_out"])
    return waits, stats


def test_sleep_without_rseq():
    check_mode("sleep", "sleep", leaf="clock_nanosleep")


def test_lock_acquire_held_by_another_thread_without_rseq():
    """A futex lock: with rseq, CFI reaches sem_clockwait above the futex
    (lock:semaphore); the frame-pointer walk at switch-out stops at libc's
    futex wait, which is what the class is made from."""
    check_mode("lock", "lock:futex", leaf="__futex_abstimed_wait_common")


def test_socket_recv_on_a_socketpair_without_rseq():
    check_mode("recv", "net:unix")


def test_subprocess_run_without_rseq():
    """subprocess.run's own Python frames come between the native leaf
    (waitpid) and inner(), each with subprocess.py's file."""
    waits, stats, _, rseq_size = record("subprocess")
    check_no_rseq(stats, rseq_size)
    child = [w for w in py.long_waits(waits) if w["wait"] == "child" and w["pid"] != 0]
    child = [w for w in child if py.python_frames(w)]
    assert len(child) >= ROUNDS, [(w["wait"], w["duration_ns"]) for w in waits]
    for w in child:
        frames = py.python_frames(w)
        names = [f.get("sym") for f in frames]
        i = names.index("inner")
        assert names[i:i + 3] == ["inner", "middle", "outer"], names
        assert [f["line"] for f in frames[i:i + 3]] == [py.AT["inner"], py.AT["middle"],
                                                         py.AT["outer"]], frames
        above = frames[:i]
        assert above and all(f["file"].endswith("/subprocess.py") for f in above), \
            [(f.get("sym"), f.get("file")) for f in above]
        assert "run" in names[:i], names
        assert "kind" not in w["user_stack"][0], w["user_stack"][0]


def test_two_threads_without_rseq_each_have_their_frames():
    waits, stats, truth, rseq_size = record("threads")
    check_no_rseq(stats, rseq_size)
    tids = {name: int(tid) for name, tid in truth}
    for name, other in (("alpha", "beta"), ("beta", "alpha")):
        mine, hidden = py.with_stacks(py.long_waits(waits, tids[name]), stats)
        assert len(mine) >= ROUNDS - 1 - hidden, "%s: %d waits" % (name, len(mine))
        for w in mine:
            frames = py.python_frames(w)
            names = [f.get("sym") for f in frames]
            assert name + "_waits" in names, names
            assert frames[names.index(name + "_waits")]["line"] == py.AT[name], frames
            assert frames[names.index(name + "_waits")]["file"] == APP, frames
            assert other + "_waits" not in names, names
            assert "mode_threads.<locals>.%s" % name in names, names


def test_a_process_running_before_offcpu_without_rseq():
    """-p on a python3 without rseq already running: found at its first
    wait, its switch-outs walked from then on."""
    env = dict(os.environ, GLIBC_TUNABLES=NO_RSEQ)
    # 100 rounds, 5 s: loading offcpu took up to 3 s beside other builds,
    # and 40 rounds had ended before the recording had 20 waits.
    p = subprocess.Popen([PYTHON, APP, "sleep", "100"], env=env)
    try:
        out = os.path.join(TMP, "pyso-running.json")
        r = t.run([t.OFFCPU, "--stats", "-p", str(p.pid), "-m", "1ms", "-d", "1500ms",
                   "-f", "json", "-o", out])
        assert r.returncode == 0, r.stderr
        waits, stats = t.read_json_lines(out)
    finally:
        p.kill()
        p.wait()
    # Recovered waits (a switch-in this VM hid) and the one open at the
    # start have no stacks to look at.
    long = [w for w in py.long_waits(waits) if not t.recovered(w) and "open" not in w]
    chained = [w for w in long if py.chain_at(w) is not None]
    # Without frames: the first one sent (its record makes offcpu look at
    # the process), and the next, whose switch-out (where the walk is) came
    # right after that one's switch-in, before the look (seen: those two
    # on a quiet machine, five beside a build, the reader slower to look);
    # then every one has them.
    assert len(chained) >= 20 and len(chained) >= len(long) - 10, (len(chained), len(long))
    ordered = sorted(long, key=lambda w: w["ts_ns"])
    first = min(i for i, w in enumerate(ordered) if py.chain_at(w) is not None)
    assert all(py.chain_at(w) is not None for w in ordered[first:]), \
        [[f.get("sym") for f in w["user_stack"]][:3] for w in ordered]
    print("    %d of %d waits with their frames, the first %d before offcpu looked" %
          (len(chained), len(long), first))
    for w in chained:
        stack = w["user_stack"]
        i = py.chain_at(w)
        assert [(f.get("sym"), f.get("line")) for f in stack[i:i + 3]] == [
            ("inner", py.AT["inner"]), ("middle", py.AT["middle"]), ("outer", py.AT["outer"])]
    assert stats["python_stack_at_switch_out"] >= len(chained), stats
    assert 0 <= stats["emitted"] - stats["user_stack_at_switch_out"] <= unseen_out(stats), stats


TWO_SLEEPERS = """import sys, threading, time
def sleeps(pause):
    while True:
        time.sleep(pause)
threads = [threading.Thread(target=sleeps, args=(p,), daemon=True) for p in (0.02, 0.005)]
for th in threads:
    th.start()
with open(sys.argv[1], "w") as f:
    f.write(" ".join(str(th.native_id) for th in threads))
# Alive while the threads sleep, until the test kills it.
time.sleep(60)
"""


def test_the_walk_runs_after_the_filters():
    """-p PID -t TID on a python3 without rseq whose other thread switches
    four times as often: only the selected thread's switch-outs are walked
    (walks at most waits_started, which counts the selected ones), and its
    waits have their frames."""
    script = os.path.join(TMP, "two_sleepers.py")
    tids = os.path.join(TMP, "two_sleepers.tids")
    with open(script, "w") as f:
        f.write(TWO_SLEEPERS)
    if os.path.exists(tids):
        os.unlink(tids)
    p = subprocess.Popen([PYTHON, script, tids], env=dict(os.environ, GLIBC_TUNABLES=NO_RSEQ))
    try:
        # Written once both threads run.
        t.wait_until(lambda: os.path.exists(tids) and os.path.getsize(tids), 30,
                     "the sleepers' thread ids written")
        with open(tids) as f:
            slow, fast = [int(x) for x in f.read().split()]
        out = os.path.join(TMP, "pyso-filtered.json")
        r = t.run([t.OFFCPU, "--stats", "-p", str(p.pid), "-t", str(slow), "-m", "1ms",
                   "-d", "1500ms", "-f", "json", "-o", out])
        assert r.returncode == 0, r.stderr
        waits, stats = t.read_json_lines(out)
    finally:
        p.kill()
        p.wait()
    assert {w["tid"] for w in waits} == {slow}, {w["tid"] for w in waits}
    assert 0 < stats["python_walks_at_switch_out"] <= stats["waits_started"], stats
    # About 75 waits of 20 ms in 1.5 s; the fast thread's 300 would be walked too.
    assert stats["waits_started"] < 150, stats
    framed = [w for w in waits if w["duration_ns"] >= 15 * 1000 * 1000 and
              "sleeps" in [f.get("sym") for f in py.python_frames(w)]]
    assert len(framed) >= 30, len(framed)
    print("    %d switch-outs walked of %d selected" % (stats["python_walks_at_switch_out"],
                                                   stats["waits_started"]))


def test_with_rseq_the_switch_out_walk_does_not_run():
    """The same app.py with rseq on: frames from rseq_update, as before; no
    switch-out walks (a thread blocked before ld.so registered its rseq,
    while offcpu may not know it runs CPython yet, at most)."""
    waits, stats, _, rseq_size = record("sleep", rseq=True)
    assert rseq_size > 0, "__rseq_size 0: rseq is off"
    chained = [w for w in py.long_waits(waits) if py.chain_at(w) is not None]
    assert len(chained) >= ROUNDS, len(chained)
    for w in chained:
        py.check_chain(w)
    assert stats["python_stack_at_switch_out"] == 0, stats
    assert stats["python_walks_at_switch_out"] * 10 < stats["waits_started"], stats
    assert stats["user_stack_at_switch_out"] * 10 < stats["emitted"], stats


SHORT_AND_LONG = """import sys, time
def inner(pause):
    time.sleep(pause)
def middle(pause):
    inner(pause)
def outer(pause):
    middle(pause)
# As app.py: offcpu finds CPython when it reads the exec's record; the waits
# looked at come after.
time.sleep(0.2)
for n in range(int(sys.argv[2])):
    outer(0.001)
    if n % 50 == 49:
        outer(0.05)
open(sys.argv[3], "w").close()
"""


def test_a_wait_below_min_sends_no_python_record():
    """300 sleeps of 1 ms and 6 of 50 ms under -m 20ms: every switch-out
    is walked, but only the waits sent carry their frames out; each Python
    record sent is one wait's, none left over."""
    script = os.path.join(TMP, "short_and_long.py")
    with open(script, "w") as f:
        f.write(SHORT_AND_LONG)
    waits, stats, _, rseq_size = record("short", rounds=300, minimum="20ms", script=script)
    check_no_rseq(stats, rseq_size)
    walks, sent = stats["python_walks_at_switch_out"], stats["python_stack_at_switch_out"]
    assert stats["below_min_duration"] >= 300, stats
    assert walks >= 300 + 6, stats
    long = [w for w in waits if w["duration_ns"] >= py.LONG_NS and
            [f.get("sym") for f in py.python_frames(w)][:3] == ["inner", "middle", "outer"]]
    assert len(long) >= 6, [(w["duration_ns"], w["wait"]) for w in waits]
    with_frames = [w for w in waits if py.python_frames(w)]
    assert all(w["duration_ns"] >= 20 * 1000 * 1000 for w in with_frames), with_frames
    assert len(with_frames) == sent <= stats["emitted"], (len(with_frames), stats)
    assert sent * 10 < walks, stats
    print("    %d switch-outs walked, %d Python records sent, %d waits emitted" %
          (walks, sent, stats["emitted"]))


def test_a_process_without_cpython_is_never_walked():
    """The C workload with rseq off: its user stacks are taken at switch-out,
    but it is in no python_procs entry: no walk."""
    r = traced(["-m", "1ms", "-f", "json", "-o", os.path.join(TMP, "pyso-c.json")],
               [t.WORKLOAD, "sleep", "cwork", "20", "5"], rseq=False)
    waits, stats = t.read_json_lines(os.path.join(TMP, "pyso-c.json"))
    # Its 20 sleeps, each sent with the stack walked at its switch-out, but
    # for a wait recovered after a hidden switch-in: sent without stacks
    # (so no sleep by its stack), and not counted (seen once in CI: 19 and
    # switch_in_recovered 1).
    sleeps = [w for w in waits if w["comm"] == "cwork" and w["wait"] == "sleep"]
    assert len(sleeps) + stats["switch_in_recovered"] >= 20, (len(sleeps), stats)
    assert stats["user_stack_at_switch_out"] >= len(sleeps), (stats, r.stderr[-500:])
    assert stats["python_walks_at_switch_out"] == 0, stats
    assert stats["python_stack_at_switch_out"] == 0, stats


def test_every_version_3_9_to_3_13_where_installed_without_rseq():
    """pyenv's builds (see test_python.py) with rseq off: 3.9 and 3.10 find
    their thread state by pthread_self (the fs base, read at switch-out),
    3.11+ by the native thread ID; 3.9 and 3.10 run each Python call in a C
    call of its own, whose frames the frame-pointer walk does not reach."""
    found = {}
    for minor in range(9, 14):
        builds = sorted(glob.glob(os.path.expanduser(
            "~/.pyenv/versions/3.%d.*/bin/python3.%d" % (minor, minor))))
        if builds:
            found[minor] = builds[-1]
    if not found:
        raise Skip("no pyenv builds of CPython 3.9 to 3.13 under ~/.pyenv/versions")
    for minor, python in sorted(found.items()):
        waits, stats, _, rseq_size = record("sleep", rounds=5, python=python,
                                            name="3.%d" % minor)
        try:
            check_no_rseq(stats, rseq_size)
        except AssertionError as e:
            raise AssertionError("3.%d: %s" % (minor, e))
        # libpython is shared here: found at the exec's first waits, or at
        # the end of app.py's first sleep when ld.so's were read first
        # (collector.c, look_for_python), too late for the next switch-out.
        rounds = sorted([w for w in py.long_waits(waits)
                         if w["duration_ns"] < 100 * 1000 * 1000 and not t.recovered(w)],
                        key=lambda w: w["ts_ns"])
        chained = [w for w in rounds if py.chain_at(w) is not None]
        assert len(chained) >= 4, "3.%d: %d waits under inner()" % (minor, len(chained))
        first = rounds.index(chained[0])
        assert chained == rounds[first:], "3.%d: %s" % (
            minor, [[f.get("sym") for f in w["user_stack"]][:3] for w in rounds])
        for w in chained:
            check_chain(w)
    missing = sorted(set(range(9, 14)) - set(found))
    if missing:
        print("    not installed: %s" % ", ".join("3.%d" % m for m in missing))


def main():
    return t.run_suite(globals())


if __name__ == "__main__":
    sys.exit(main())
