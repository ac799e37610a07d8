#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Hostile unwind tables (src/unwind/cfi_check.c, unwind.c's section_data).

Each attack is a library whose lib_loop sleeps 1 ms at a time under CFI
built to cost the unwinder (tests/integration/hostile/cfi_lib.S), run as
nobody and recorded by offcpu -p for 3 s in dwarf mode; the same run
records a benign build of the library first, and every bound is relative
to what that recording took. Run as root from the repository root after
`make offcpu`; OFFCPU_BIN names another build to check (the old code
fails each test). Prints one line per check and "N passed, N failed".
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as t  # noqa: E402

t.OFFCPU = os.environ.get("OFFCPU_BIN", t.OFFCPU)
HOSTILE_SRC = os.path.join(t.ROOT, "tests", "integration", "hostile")
DIR = t.nobody_dir()
# One stop may take this much longer than the benign recording's end.
STOP_SLACK_S = 1.5
MIB = 1024


def build(variant, debug_frame=False, bomb=False, debuglink=False, name=None):
    """DIR/main_NAME linked to DIR/libNAME.so built with -DVARIANT."""
    name = name or variant.lower()
    lib = os.path.join(DIR, "lib%s.so" % name)
    flags = ["-D" + variant] + (["-DDEBUG_FRAME"] if debug_frame else [])
    subprocess.run(["gcc", "-shared", "-fPIC"] + flags +
                   [os.path.join(HOSTILE_SRC, "cfi_lib.S"), "-o", lib], check=True)
    if bomb:
        # .debug_frame of 1 GiB of zeros, zlib-compressed to 1 MB.
        zeros, full = lib + ".zeros", lib + ".full"
        with open(zeros, "wb") as f:
            f.truncate(1 << 30)
        subprocess.run(["objcopy", "--add-section", ".debug_frame=" + zeros, lib, full],
                       check=True)
        subprocess.run(["objcopy", "--compress-debug-sections=zlib", full, lib], check=True)
        os.unlink(zeros)
        os.unlink(full)
    if debuglink:
        base = os.path.basename(lib)
        subprocess.run(["objcopy", "--only-keep-debug", lib, lib + ".debug"], check=True)
        subprocess.run(["strip", "--strip-debug", lib], check=True)
        subprocess.run(["objcopy", "--add-gnu-debuglink=%s.debug" % base, base], cwd=DIR,
                       check=True)
    prog = os.path.join(DIR, "main_" + name)
    subprocess.run(["gcc", "-O2", os.path.join(HOSTILE_SRC, "cfi_main.c"), "-L" + DIR,
                    "-l" + name, "-Wl,-rpath," + DIR, "-o", prog], check=True)
    for f in os.listdir(DIR):
        os.chown(os.path.join(DIR, f), 65534, 65534)
    return prog


def running(pid, prog):
    """Whether pid has exec'd prog (setpriv's exec done)."""
    try:
        return os.readlink("/proc/%d/exe" % pid) == os.path.realpath(prog)
    except OSError:
        return False


def record(progs):
    """offcpu -p on PROGS run as nobody for 3 s: (wall s, CPU s, peak RSS KiB, waits, stats)."""
    procs = [subprocess.Popen(t.NOBODY + [p]) for p in progs]
    out = os.path.join(t.TMP, "cfi-%d.json" % time.monotonic_ns())
    try:
        for p, prog in zip(procs, progs):
            t.wait_until(lambda: running(p.pid, prog), 30, "%s running as nobody" % prog)
        args = ["-d", "3s", "-m", "0", "-f", "json", "-o", out]
        for p in procs:
            args += ["-p", str(p.pid)]
        start = time.monotonic()
        status, err, cpu, rss = t.offcpu_measured(args, timeout=120)
        wall = time.monotonic() - start
    finally:
        for p in procs:
            t.stop(p)
    assert status == 0, "offcpu exited %d: %s" % (status, err)
    lines = [json.loads(line) for line in open(out)]
    os.unlink(out)
    waits = [w for w in lines if w.get("type") == "offcpu"]
    stats = [s for s in lines if s.get("type") == "stats"][-1]
    return wall, cpu, rss, waits, stats


BENIGN = {}


def benign():
    if not BENIGN:
        wall, cpu, rss, waits, stats = record([build("BENIGN")])
        BENIGN.update(wall=wall, cpu=cpu, rss=rss)
        syms = [f.get("sym") for f in waits[0]["user_stack"]]
        assert "main" in syms, "the benign library's stack is not whole: %s" % syms
    return BENIGN


def lib_waits(waits):
    return [w for w in waits if any(f.get("sym") == "lib_loop" for f in w.get("user_stack", []))]


def check_bounded(what, measured, rss_slack_kib=64 * MIB):
    wall, cpu, rss, _, _ = measured
    b = benign()
    print("# %s: %.2f s, %.2f s CPU, %d KiB (benign: %.2f s, %.2f s CPU, %d KiB)" %
          (what, wall, cpu, rss, b["wall"], b["cpu"], b["rss"]))
    assert wall <= b["wall"] + STOP_SLACK_S, "%s: %.2f s against %.2f" % (what, wall, b["wall"])
    assert rss <= b["rss"] + rss_slack_kib, "%s: %d KiB against %d" % (what, rss, b["rss"])


def check_cut_and_counted(what, measured):
    _, _, _, waits, stats = measured
    mine = lib_waits(waits)
    assert mine, "%s: no wait in lib_loop" % what
    whole = [w for w in mine if any(f.get("sym") == "main" for f in w["user_stack"])]
    assert not whole, "%s: %d stacks unwound past rejected CFI" % (what, len(whole))
    assert stats.get("cfi_rejected", 0) >= len(mine) * 0.9, \
        "%s: cfi_rejected %s for %d waits" % (what, stats.get("cfi_rejected"), len(mine))
    assert stats["user_stack_cut_short"] >= stats["cfi_rejected"]


def test_huge_register_bounded_cut_and_counted():
    m = record([build("HUGE_REG")])
    check_bounded("register 25,000,000", m)
    check_cut_and_counted("register 25,000,000", m)


def sigint_stop_s(prog):
    """Seconds from SIGINT to offcpu's exit, 2 s into recording PROG as nobody."""
    target = subprocess.Popen(t.NOBODY + [prog])
    out = os.path.join(t.TMP, "cfi-stop-%d.json" % time.monotonic_ns())
    try:
        t.wait_until(lambda: running(target.pid, prog), 30, "%s running as nobody" % prog)
        # Recording once start_tracer returns, so the 2 s below are all
        # recording, none of them the load; its -v lines read to their end,
        # so that a full pipe never holds it.
        p = t.start_tracer(["-p", str(target.pid), "-m", "0", "-f", "json", "-o", out])
        threading.Thread(target=p.stderr.read, daemon=True).start()
        # 2 s of recording before the stop (the subject).
        time.sleep(2)
        start = time.monotonic()
        p.send_signal(signal.SIGINT)
        try:
            p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        return time.monotonic() - start
    finally:
        t.stop(target)
        if os.path.exists(out):
            os.unlink(out)


def test_huge_register_sigint_stop_bounded():
    base = sigint_stop_s(build("BENIGN"))
    hostile = sigint_stop_s(build("HUGE_REG", name="stop_huge"))
    print("# SIGINT to exit: %.2f s (benign: %.2f s)" % (hostile, base))
    assert hostile <= base + STOP_SLACK_S, "stop %.2f s against %.2f" % (hostile, base)


def test_remember_restore_flood_bounded_cut_and_counted():
    m = record([build("FLOOD")])
    check_bounded("400 remember/restore pairs", m)
    check_cut_and_counted("400 remember/restore pairs", m)


def test_long_cfa_expression_cut_and_counted():
    m = record([build("LONG_EXPR")])
    check_bounded("16 KB def_cfa_expression", m)
    check_cut_and_counted("16 KB def_cfa_expression", m)


def test_huge_register_in_separate_debug_file():
    m = record([build("HUGE_REG", debug_frame=True, debuglink=True, name="dbg_huge")])
    check_bounded("register 25,000,000 in a .gnu_debuglink file", m)
    check_cut_and_counted("register 25,000,000 in a .gnu_debuglink file", m)


def test_compressed_debug_frame_bomb_within_the_cap():
    # The library's own .eh_frame still unwinds it: whole stacks.
    m = record([build("BENIGN", bomb=True, name="bomb")])
    check_bounded("a .debug_frame inflating to 1 GiB", m)
    assert any(f.get("sym") == "main" for w in lib_waits(m[3]) for f in w["user_stack"])


def test_compressed_debug_frame_bombs_in_three_libraries():
    progs = [build("BENIGN", bomb=True, name="bomb%d" % i) for i in range(3)]
    check_bounded("three .debug_frames inflating to 1 GiB each", record(progs))


if __name__ == "__main__":
    try:
        sys.exit(t.run_suite(globals()))
    finally:
        shutil.rmtree(DIR, ignore_errors=True)
