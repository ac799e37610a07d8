#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Integration tests of what an unprivileged user's names can do to root's
offcpu output, and of recordings that are no recording.

Names: threads named with terminal commands, line ends, bytes that are not
UTF-8 and markup, under a title longer than any column, waiting while
offcpu snapshot looks and while a recording stops (so that they are in the
text report's "Still waiting" section as well as its tables). Every format
of the snapshot and of the recording's report must be strict UTF-8 with no
control byte but the format's own line ends (and tabs where it has them),
and parse as its format does (json.loads, XML, go tool pprof -raw, dot).

Recordings: /dev/zero, a symlink to it, a FIFO of junk without a line end
on stdin ('-') and one over-long line are each one error, exit 2, at an RSS
near a normal report's.

Run as root from the repository root after `make offcpu`. Prints one line
per check and ends with "N passed, N failed".
"""
import json
import os
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as t  # noqa: E402

TMP = t.TMP
OFFCPU = t.OFFCPU
# prctl(PR_SET_NAME) keeps 15 bytes: each name one kind of attack.
NAMES = [b"99\x1b[2J", b"a\nb\rc\td\x7fe", b"\xff\xfe\xc0\xaf<svg>&amp",
         b"\"'<svg>&amp\x1b]0;", b"\xe2\x82\x1b[31m\x01x"]
# The title (argv), as long as a column never is.
TITLE = [b"\x1b]0;TITLE\x07\x1b[2J\n\r\t" + b"\xff\xfe\xc0\xaf<svg>&amp\"'" * 40]
SOURCE = r"""
import ctypes, sys, threading, time
libc = ctypes.CDLL(None)
named = []
def worker(name, done):
    libc.prctl(15, ctypes.c_char_p(name), 0, 0, 0)  # PR_SET_NAME
    done.set()
    time.sleep(600)
for n in %r:
    named.append(threading.Event())
    threading.Thread(target=worker, args=(n, named[-1]), daemon=True).start()
for done in named:
    done.wait()
print("ready", flush=True)
time.sleep(600)
""" % (NAMES,)


def start_hostile():
    script = os.path.join(TMP, "hostile_names.py")
    with open(script, "w") as f:
        f.write(SOURCE)
    p = subprocess.Popen([sys.executable.encode(), script.encode()] + TITLE,
                         stdout=subprocess.PIPE)
    assert p.stdout.readline() == b"ready\n"
    return p


def clean(data, what, tabs=False):
    """Strict UTF-8, no C0 but newline (and tab if the format has them), no DEL."""
    try:
        text = data.decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        raise AssertionError("%s: not UTF-8: %s: %r" % (what, e, data[e.start - 40:e.end + 40]))
    allowed = "\n\t" if tabs else "\n"
    bad = [(i, ch) for i, ch in enumerate(text)
           if (ord(ch) < 0x20 and ch not in allowed) or ord(ch) == 0x7f]
    assert not bad, "%s: raw controls %r near %r" % (
        what, sorted({c for _, c in bad}), text[max(0, bad[0][0] - 60):bad[0][0] + 20])
    return text


def check_format(data, fmt, what):
    if fmt == "pprof":
        path = os.path.join(TMP, "hostile-%d.pb.gz" % time.monotonic_ns())
        with open(path, "wb") as f:
            f.write(data)
        env = dict(os.environ, HOME=TMP, GOCACHE=os.path.join(TMP, "gocache"))
        r = subprocess.run(["go", "tool", "pprof", "-raw", path], env=env,
                           capture_output=True, timeout=120)
        assert r.returncode == 0, r.stderr
        clean(r.stdout, what + " (go tool pprof -raw)")
        return
    whole = data
    if fmt == "svg":
        # The flame graph's own script is indented with tabs: names are outside it.
        start, end = data.index(b"<script><![CDATA["), data.index(b"]]></script>")
        clean(data[start:end], what + " (script)", tabs=True)
        data = data[:start] + data[end:]
    text = clean(data, what, tabs=fmt == "dot")
    if fmt == "json":
        for line in text.splitlines():
            json.loads(line)
    elif fmt == "svg":
        ET.fromstring(whole)
    elif fmt == "folded":
        for line in text.splitlines():
            assert line.rsplit(" ", 1)[1].isdigit(), (what, line)
    elif fmt == "text":
        # Each name once escaped, nowhere raw; the ESC shows as \x1b.
        assert "\\x1b" in text, (what, text[:2000])
    elif fmt == "dot":
        r = subprocess.run(["dot", "-Tsvg"], input=data, capture_output=True, timeout=60)
        assert r.returncode == 0, (what, r.stderr)


FORMATS = ("text", "folded", "json", "svg", "dot", "pprof")


def test_hostile_names_in_snapshot_every_format():
    p = start_hostile()
    try:
        for fmt in FORMATS:
            r = subprocess.run([OFFCPU, "snapshot", "-p", str(p.pid), "-f", fmt],
                               capture_output=True, timeout=120)
            assert r.returncode == 0, (fmt, r.stderr)
            check_format(r.stdout, fmt, "snapshot -f " + fmt)
            if fmt == "text":
                assert b"tid " in r.stdout, r.stdout[:2000]
    finally:
        p.kill()
        p.wait()


def test_hostile_names_in_report_every_format_and_still_waiting():
    """Traced while the threads sleep: their waits are open at the stop, in
    the text report's "Still waiting" section, live and from the recording."""
    p = start_hostile()
    recording = os.path.join(TMP, "hostile-names.json")
    try:
        r = subprocess.run([OFFCPU, "-p", str(p.pid), "-d", "1s", "-m", "0", "-o", recording],
                           capture_output=True, timeout=120)
        assert r.returncode == 0, r.stderr
        r = subprocess.run([OFFCPU, "-p", str(p.pid), "-d", "1s", "-m", "0"],
                           capture_output=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert b"Still waiting" in r.stdout, r.stdout[:2000]
        check_format(r.stdout, "text", "live text")
    finally:
        p.kill()
        p.wait()
    check_format(open(recording, "rb").read(), "json", "recording")
    for fmt in FORMATS:
        r = subprocess.run([OFFCPU, "report", "-f", fmt, recording], capture_output=True,
                           timeout=120)
        assert r.returncode == 0, (fmt, r.stderr)
        if fmt == "text":
            assert b"Still waiting" in r.stdout, r.stdout[:2000]
        check_format(r.stdout, fmt, "report -f " + fmt)


def run_measured(args, stdin=None, timeout=60):
    """(exit status, stderr, peak RSS KiB) of one run, killed at timeout."""
    def child():
        if stdin is not None:
            os.dup2(stdin, 0)
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         preexec_fn=child if stdin is not None else None)
    timer = threading.Timer(timeout, p.kill)
    timer.start()
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    timer.cancel()
    code = os.waitstatus_to_exitcode(status)
    return code, err.decode(errors="replace"), usage.ru_maxrss


def normal_recording():
    path = os.path.join(TMP, "normal.json")
    r = subprocess.run([OFFCPU, "-d", "1s", "-m", "0", "-o", path], capture_output=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return path


def test_report_of_what_is_no_recording_is_bounded():
    _, _, normal_rss = run_measured([OFFCPU, "report", "-f", "svg", normal_recording()])
    bound = normal_rss + 64 * 1024  # the line cap's 16 MiB, twice, and room
    link = os.path.join(TMP, "zero-link.json")
    os.symlink("/dev/zero", link)
    for fmt in ("text", "svg"):
        for path in ("/dev/zero", link):
            code, err, rss = run_measured([OFFCPU, "report", "-f", fmt, path], timeout=20)
            assert code == 2, (path, code, err)
            assert err.count("\n") == 1 and "not a regular file" in err, (path, err)
            assert rss < bound, (path, fmt, rss, normal_rss)
    # A FIFO fed junk without a line end, on stdin.
    fifo = os.path.join(TMP, "junk.fifo")
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "wb") as f:
            try:
                for _ in range(4096):
                    f.write(b"x" * 65536)  # 256 MiB, without a newline
            except BrokenPipeError:
                pass
    feeder = threading.Thread(target=feed)
    feeder.start()
    fd = os.open(fifo, os.O_RDONLY)
    code, err, rss = run_measured([OFFCPU, "report", "-"], stdin=fd, timeout=30)
    os.close(fd)
    feeder.join()
    assert code == 2 and err.count("\n") == 1 and "longer than 16 MiB" in err, (code, err)
    assert rss < bound, (rss, normal_rss)
    # One line over the cap in a regular file.
    long_line = os.path.join(TMP, "long-line.json")
    with open(long_line, "wb") as f:
        f.write(b'{"type":"offcpu","comm":"' + b"a" * (17 << 20) + b'"}\n')
    code, err, rss = run_measured([OFFCPU, "report", long_line])
    assert code == 2 and err.count("\n") == 1 and "%s:1: a line longer than 16 MiB" % long_line \
        in err, (code, err)
    assert rss < bound, (rss, normal_rss)


def main():
    return t.run_suite(globals())


if __name__ == "__main__":
    sys.exit(main())
