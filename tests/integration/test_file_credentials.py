#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Files offcpu reads on a traced process's behalf are read only where that
process may read them itself.

offcpu runs as root; what it reads of a process's perf map, of a debug file
beside its library, or of a file the process mapped reaches its output,
and offcpu serve hands that output to any local user. An unprivileged user
(nobody) points offcpu at a root-only file (root's, mode 0600, in a
directory anyone may enter) three ways: a bind mount inside a user and
mount namespace of its own (path and owner checks alone let that through:
the file is root's, at the path offcpu asked for), a symlink, and a hard
link (with fs.protected_hardlinks off, as some hosts run). Its contents
must never appear in any output; the same setup with a file the process
may read is named, so each check can fail.

Run as root after `make -j2 test-build`. Prints one line per check and
ends with "N passed, N failed".
"""
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as t  # noqa: E402

TMP = t.TMP
SECRET = "SECRET_TOKEN_hunter2"
# Where the hostile JIT maps its code, and a perf map line naming it.
JIT_ADDR = "7f0000001000"
JIT_LINE = "%s 1000 %%s\n" % JIT_ADDR
WAYS = ("bind mount", "symlink", "hard link")


@contextlib.contextmanager
def protected_hardlinks(value):
    """fs.protected_hardlinks set to value for the block, as it was after."""
    path = "/proc/sys/fs/protected_hardlinks"
    with open(path) as f:
        before = f.read().strip()
    with open(path, "w") as f:
        f.write(value)
    try:
        yield
    finally:
        with open(path, "w") as f:
            f.write(before)


def root_only(content, mode=0o600):
    """A file of root's with content, in a directory of root's anyone may enter."""
    d = tempfile.mkdtemp(prefix="offcpu-secretdir-")
    os.chmod(d, 0o755)
    path = os.path.join(d, "token")
    with open(path, "wb") as f:
        f.write(content)
    os.chmod(path, mode)
    return path


def plant(way, source, target):
    """A shell line, run as nobody, that makes target show source's file."""
    if way == "bind mount":
        return "touch %s && mount --bind %s %s" % (target, source, target)
    if way == "symlink":
        return "ln -s %s %s" % (source, target)
    return "ln %s %s" % (source, target)


def start_as_nobody(way, setup, command):
    """command exec'd by a shell of nobody's after setup, in a user and mount
    namespace of its own for a bind mount; returned once it says ready."""
    script = "%s && exec %s" % (setup, " ".join(command))
    shell = ["sh", "-c", script]
    if way == "bind mount":
        shell = ["unshare", "-Urm"] + shell
    p = subprocess.Popen(t.NOBODY + shell, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    line = p.stdout.readline()
    if line != "ready\n":
        p.kill()
        p.wait()
        raise AssertionError("%s: %r %s" % (way, line, p.stderr.read()[-1000:]))
    return p


def record(pid, formats=("folded", "json")):
    """offcpu -p pid for 2 s in each format: {format: output bytes}."""
    got = {}
    for fmt in formats:
        out = os.path.join(TMP, "cred-%d.%s" % (pid, fmt))
        r = t.run([t.OFFCPU, "-p", str(pid), "-d", "2s", "-f", fmt, "-o", out,
                   "--call-graph", "fp"])
        assert r.returncode == 0, r.stderr[-2000:]
        with open(out, "rb") as f:
            got[fmt] = f.read()
        os.unlink(out)
    return got


def perf_map_case(way, content, hardlinks="0"):
    """The hostile JIT whose /tmp/perf-PID.map is planted the given way to
    show a file holding content: what offcpu records of it."""
    source = root_only(content)
    target = "/tmp/perf-$$.map"
    p = None
    try:
        with protected_hardlinks(hardlinks):
            p = start_as_nobody(way, plant(way, source, target),
                                [t.HOSTILE, "jitat", "leakproc", JIT_ADDR, "100000", "20"])
        return record(p.pid)
    finally:
        if p:
            t.stop(p)
            with contextlib.suppress(FileNotFoundError):
                os.unlink("/tmp/perf-%d.map" % p.pid)
        shutil.rmtree(os.path.dirname(source), ignore_errors=True)


def test_root_only_file_as_perf_map_never_read():
    for way in WAYS:
        got = perf_map_case(way, (JIT_LINE % SECRET).encode())
        for fmt, data in got.items():
            assert b"leakproc" in data, (way, fmt, "the process was not recorded")
            assert SECRET.encode() not in data, (way, fmt, "a root-only file was read")


def test_perf_map_the_process_may_read_is_named():
    # The same JIT and address with a map of its own: named, so the check
    # above sees the path that would leak.
    d = t.nobody_dir()
    name = "hostile_jit_named_function"
    try:
        p = start_as_nobody("symlink", "printf '%s' > /tmp/perf-$$.map" % (JIT_LINE % name),
                            [t.HOSTILE, "jitat", "leakproc", JIT_ADDR, "100000", "20"])
        try:
            got = record(p.pid)
        finally:
            t.stop(p)
            os.unlink("/tmp/perf-%d.map" % p.pid)
        for fmt, data in got.items():
            assert name.encode() in data, (fmt, data[:2000])
    finally:
        shutil.rmtree(d)


def debug_link_case(way, mode):
    """libhostile.so, stripped, dlopened by nobody from a directory of its
    own; its .gnu_debuglink names libhostile.so.debug beside it, which is
    planted the given way to show its real debug file, root's, of mode:
    the symbols of its waits (hostile_lib_hidden is only in that file)."""
    built = os.path.join(t.HOSTILE_DIR, "libhostile.so")
    with open(built + ".debug", "rb") as f:
        source = root_only(f.read(), mode)
    d = t.nobody_dir()
    lib = t.nobody_copy(built, d)
    p = None
    try:
        with protected_hardlinks("0"):
            p = start_as_nobody(way, plant(way, source, lib + ".debug"),
                                [t.HOSTILE, "dlopen", "hst_credlink", lib, "hostile_lib_wait",
                                 "100000", "20"])
        out = os.path.join(TMP, "credlink.json")
        r = t.run([t.OFFCPU, "-p", str(p.pid), "-d", "2s", "-f", "json", "-o", out])
        assert r.returncode == 0, r.stderr[-2000:]
        # Not t.read_json_lines: its check of names against nm finds no
        # debug file where the bind mount put one only in nobody's namespace.
        with open(out) as f:
            waits = [json.loads(line) for line in f if line.strip()]
        mine = [w for w in waits if w.get("comm") == "hst_credlink" and w["wait"] == "sleep"]
        assert mine, (way, [(w["comm"], w["wait"]) for w in waits][:20])
        return [t.user_syms(w) for w in mine]
    finally:
        if p:
            t.stop(p)
        shutil.rmtree(d, ignore_errors=True)
        shutil.rmtree(os.path.dirname(source), ignore_errors=True)


def test_root_only_debug_file_never_read():
    for way in ("bind mount", "hard link"):
        for syms in debug_link_case(way, 0o600):
            assert "hostile_lib_wait" in syms, (way, syms)  # its .dynsym names it
            assert "hostile_lib_hidden" not in syms, (way, "a root-only file was read", syms)
        # Readable by anyone: the same file is the library's debug file.
        for syms in debug_link_case(way, 0o644):
            assert "hostile_lib_hidden" in syms, (way, syms)


def exec_only_case(mode, rules=None):
    """symprog-pie and its library copied into a directory of root's, the
    program of mode, run by nobody: the symbols of its waits, or with a
    rules file, their labels."""
    d = tempfile.mkdtemp(prefix="offcpu-execonly-")
    os.chmod(d, 0o755)
    prog = os.path.join(d, "symprog-pie")
    shutil.copy(os.path.join(t.SYMBOLS, "symprog-pie"), prog)
    shutil.copy(os.path.join(t.SYMBOLS, "libsymlib.so"), d)
    os.chmod(prog, mode)
    p = subprocess.Popen(t.NOBODY + [prog, "sym_execonly", "100000", "20"])
    try:
        out = os.path.join(TMP, "execonly.json")
        r = t.run([t.OFFCPU, "-p", str(p.pid), "-d", "2s", "-f", "json", "-o", out] +
                  (["--rules", rules] if rules else []))
        assert r.returncode == 0, r.stderr[-2000:]
        waits, _ = t.read_json_lines(out)
        mine = [w for w in waits if w["comm"] == "sym_execonly" and w["wait"] == "sleep"]
        assert mine, [(w["comm"], w["wait"]) for w in waits][:20]
        if rules:
            return [w.get("labels", {}) for w in mine]
        return [t.user_syms(w) for w in mine]
    finally:
        t.stop(p)
        shutil.rmtree(d, ignore_errors=True)


def test_program_the_process_may_only_run_is_not_read():
    # The kernel maps an executable of mode 0711 for whoever may run it;
    # its symbols are not theirs to read.
    for syms in exec_only_case(0o711):
        assert "symlib_wait" in syms, syms  # the library is readable
        assert "prog_wait" not in syms and "main" not in syms, syms
    for syms in exec_only_case(0o755):
        assert "prog_wait" in syms, syms


def test_rule_pack_reads_only_a_program_the_process_may_read():
    """A rule pack's reads take their addresses from the process's own
    program's symbols: of a program it may only run (0711), none are read,
    so its waits carry no label; of the same program readable (0755), every
    wait carries the round it was in."""
    rules = os.path.join(TMP, "cred-reads.rules")
    with open(rules, "w") as f:
        f.write("process sym_execonly\nread prog_round u32 as cred.round\n")
    for labels in exec_only_case(0o711, rules):
        assert "cred.round" not in labels, labels
    # A wait that ends without passing rseq_update goes unlabelled (the
    # rules' documented limit): most do not.
    readable = exec_only_case(0o755, rules)
    rounds = [int(labels["cred.round"]) for labels in readable if "cred.round" in labels]
    assert len(rounds) >= 10 and len(rounds) >= 0.9 * len(readable), (len(readable), rounds)
    assert min(rounds) >= 1, rounds


PY_SLEEPER = """
import sys, time
print("ready", flush=True)
def cred_py_sleep():
    time.sleep(0.05)
for _ in range(100):
    cred_py_sleep()
"""


def python_case(mode):
    """Debian's python3.11 (libpython linked in) copied into a directory of
    root's with mode, run by nobody: the Python functions of its waits."""
    d = tempfile.mkdtemp(prefix="offcpu-execonly-py-")
    os.chmod(d, 0o755)
    python = os.path.join(d, "python3")
    shutil.copy(os.path.realpath("/usr/bin/python3"), python)
    os.chmod(python, mode)
    p = subprocess.Popen(t.NOBODY + [python, "-c", PY_SLEEPER], stdout=subprocess.PIPE,
                         text=True)
    try:
        assert p.stdout.readline() == "ready\n"
        out = os.path.join(TMP, "execonly-py.json")
        r = t.run([t.OFFCPU, "-p", str(p.pid), "-d", "1500ms", "-f", "json", "-o", out])
        assert r.returncode == 0, r.stderr[-2000:]
        waits, _ = t.read_json_lines(out)
        sleeps = [w for w in waits if w["wait"] == "sleep"]
        assert sleeps, [(w["comm"], w["wait"]) for w in waits][:20]
        return [[f.get("sym") for f in w["user_stack"] if f.get("kind") == "python"]
                for w in sleeps]
    finally:
        t.stop(p)
        shutil.rmtree(d, ignore_errors=True)


def test_python_the_process_may_only_run_is_not_read():
    """CPython's frames are found from its own executable's symbols (read
    through /proc/PID/map_files): of a python3 it may only run (0711), none
    are read, so no Python frame is named; the same binary readable names
    the function every sleep is in."""
    for frames in python_case(0o711):
        assert not frames, frames
    named = python_case(0o755)
    assert sum("cred_py_sleep" in f for f in named) >= 0.9 * len(named), named


def main():
    return t.run_suite(globals())


if __name__ == "__main__":
    sys.exit(main())
