#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Go programs (Go 1.19, frame pointers), gdb as the truth.

A Go program whose goroutines sleep (time.Sleep), wait on a channel, on a
sync.Mutex and on a TCP read is built twice: without cgo (no rseq: its
threads' user stacks are walked by frame pointers at switch-out) and with
(glibc starts its threads: rseq, so dwarf mode copies their stacks). Go's
threads (Ms) go off CPU in the runtime's scheduler whatever their
goroutines wait for, so:

- each stack ends where gdb's does: at runtime.mcall (the M's own stack,
  not the goroutine it parked) or at runtime.mstart, its root; gdb's stack
  of each blocked thread is one offcpu recorded for it, address by address;
- no frame lies outside an executable mapping (Go heap words);
- waits are classed by the runtime's parking paths: time.Sleep -> sleep,
  channel -> lock:go-chan, sync.Mutex -> lock:go-mutex, the network read ->
  poll:go-netpoll, sysmon -> sleep:go-sysmon; none of the scheduler's waits
  is left at the kernel's lock:futex or poll:epoll.

Run as root from the repository root after `make`; prints one line per
check and ends with "N passed, N failed".
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as t  # noqa: E402

GO_FRAMES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "go_frames.py")

GO_PROGRAM = r"""package main

import (
	"net"
	"os"
	"sync"
	"time"
)

//go:noinline
func sleeper() {
	for {
		time.Sleep(20 * time.Millisecond)
	}
}

//go:noinline
func chanWaiter(c chan int) {
	for range c {
	}
}

//go:noinline
func chanFeeder(c chan int) {
	for {
		time.Sleep(30 * time.Millisecond)
		c <- 1
	}
}

//go:noinline
func mutexWaiter(m *sync.Mutex) {
	for {
		m.Lock()
		m.Unlock()
		time.Sleep(time.Millisecond)
	}
}

//go:noinline
func mutexHolder(m *sync.Mutex) {
	for {
		m.Lock()
		time.Sleep(25 * time.Millisecond)
		m.Unlock()
		time.Sleep(time.Millisecond)
	}
}

//go:noinline
func netReader(c net.Conn) {
	buf := make([]byte, 16)
	for {
		c.Read(buf)
	}
}

func main() {
	c := make(chan int)
	var m sync.Mutex
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go func() {
		s, _ := ln.Accept()
		netReader(s)
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		panic(err)
	}
	go func() {
		for {
			time.Sleep(40 * time.Millisecond)
			client.Write([]byte("x"))
		}
	}()
	go sleeper()
	go chanWaiter(c)
	go chanFeeder(c)
	go mutexWaiter(&m)
	go mutexHolder(&m)
	os.Stderr.WriteString("ready\n")
	select {}
}
"""

# Where gdb's stacks of Go threads end, as the symbol table names them.
STACK_ENDS = ("runtime.mcall", "runtime.mcall.abi0", "runtime.mstart", "runtime.mstart.abi0")
# The kernel's classes of what are the Go scheduler's waits.
KERNEL_ONLY = ("lock:futex", "poll:epoll")
BUILDS = {}


def build(cgo):
    """The Go program built with or without cgo, once."""
    if cgo in BUILDS:
        return BUILDS[cgo]
    d = tempfile.mkdtemp(prefix="offcpu-go-")
    with open(os.path.join(d, "main.go"), "w") as f:
        f.write(GO_PROGRAM)
    with open(os.path.join(d, "go.mod"), "w") as f:
        f.write("module gowait\ngo 1.19\n")
    env = dict(os.environ, CGO_ENABLED="1" if cgo else "0", GOCACHE=os.path.join(d, "cache"),
               GOFLAGS="")
    binary = os.path.join(d, "gowait-cgo" if cgo else "gowait")
    r = t.run(["go", "build", "-o", binary, "."], cwd=d, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-1000:]
    BUILDS[cgo] = binary
    return binary


def record(cgo):
    """offcpu's waits of the program (json), its stats, and gdb's stacks of it right after."""
    proc = subprocess.Popen([build(cgo)], stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr.readline().strip() == "ready"
        r = t.run([t.OFFCPU, "-p", str(proc.pid), "-m", "1ms", "-d", "2s", "-f", "json"])
        assert r.returncode == 0, r.stderr[-500:]
        g = t.run(["gdb", "-batch", "-p", str(proc.pid), "-x", GO_FRAMES], timeout=120)
    finally:
        proc.kill()
        proc.wait()
    waits, stats = [], None
    for line in r.stdout.splitlines():
        rec = json.loads(line)
        if rec["type"] == "stats":
            stats = rec
        elif rec["type"] == "offcpu":
            rec["names"] = [f.get("sym") for f in rec["user_stack"]]
            rec["addrs"] = [int(f["addr"], 16) for f in rec["user_stack"]]
            waits.append(rec)
    gdb_stacks = [json.loads(l.split(" ", 1)[1]) for l in g.stdout.splitlines()
                  if l.startswith("GOFRAMES ")]
    assert waits and stats and gdb_stacks, (len(waits), g.stderr[-500:])
    record.json = r.stdout
    return waits, stats, gdb_stacks


def check_stacks_end_as_gdb(waits, gdb_stacks, leaf_caller_skipped=False):
    """leaf_caller_skipped: the kernel's frame-pointer walk starts at the frame pointer
    of the first function that keeps one, so the caller of a leaf without a frame
    (runtime.futex, runtime.epollwait) is not in a stack walked at switch-out: gdb's
    stack less that frame is what offcpu must have recorded."""
    for w in waits:
        names = w["names"]
        for i, name in enumerate(names):
            assert name not in STACK_ENDS or i == len(names) - 1, (
                "frames past %s: %s" % (name, names))
        assert all(f.get("module") for f in w["user_stack"]), (
            "a frame in no executable mapping: %s" % w["user_stack"])
    by_tid, recorded = {}, set()
    for w in waits:
        by_tid.setdefault(w["tid"], set()).add(tuple(w["addrs"]))
        recorded.add(tuple(w["addrs"]))
    matched = 0
    for g in gdb_stacks:
        frames = g["frames"]
        if not frames or frames[-1][1] not in ("runtime.mcall", "runtime.mstart"):
            continue  # not one of the M's waits (gdb stopped it elsewhere)
        if frames[0][1] not in ("runtime.futex", "runtime.epollwait", "runtime.usleep"):
            continue  # stopped while running
        addrs = tuple(pc for pc, _ in frames)
        if leaf_caller_skipped and len(addrs) > 2 and addrs not in recorded:
            addrs = addrs[:1] + addrs[2:]
        if g["tid"] not in by_tid:
            continue  # asleep all along (the template thread): no wait of it ended
        # Ms are alike: the stack gdb stopped one in, offcpu recorded of some M.
        assert addrs in recorded, (
            "thread %d: gdb's %s is no stack offcpu recorded for it: %s" %
            (g["tid"], [n for _, n in frames],
             [[hex(a) for a in s] for s in by_tid.get(g["tid"], ())][:4]))
        matched += 1
    assert matched >= 2, gdb_stacks


def check_scheduler_waits_classed(waits, expected):
    time_by_class = {}
    for w in waits:
        time_by_class[w["wait"]] = time_by_class.get(w["wait"], 0) + w["duration_ns"]
        if "runtime.findRunnable" in w["names"] or "runtime.sysmon" in w["names"]:
            assert w["wait"] not in KERNEL_ONLY, (w["wait"], w["names"])
    for cls in expected:
        assert time_by_class.get(cls, 0) > 0, (cls, time_by_class)


def test_go_frame_pointers_stacks_and_parking_classes():
    """Without cgo (user stacks by frame pointers at switch-out): gdb's stacks, and each
    parked goroutine's reason as the class of the wait it left its M in."""
    waits, stats, gdb_stacks = record(cgo=False)
    # Every wait whose switch-out offcpu saw has the stack walked there; the
    # others began before the recording, were open at its stop, or were
    # recovered after a hidden switch-in.
    unseen_out = (stats["waits_open_at_start"] + stats["waits_open_at_stop"] +
                  stats["switch_in_recovered"])
    assert 0 <= stats["emitted"] - stats["user_stack_at_switch_out"] <= unseen_out, stats
    check_stacks_end_as_gdb(waits, gdb_stacks, leaf_caller_skipped=True)
    check_scheduler_waits_classed(waits, ("sleep", "lock:go-chan", "lock:go-mutex",
                                          "poll:go-netpoll", "sleep:go-sysmon"))
    check_report_keeps_parking_classes(record.json)


def classes_of(json_lines):
    counts = {}
    for line in json_lines.splitlines():
        rec = json.loads(line)
        if rec["type"] == "offcpu":
            counts[rec["wait"]] = counts.get(rec["wait"], 0) + 1
    return counts


def check_report_keeps_parking_classes(json_lines):
    """offcpu report --rules classifies again from the recorded stacks, which end at
    runtime.mcall: what the goroutine parked for is the recorded class, kept."""
    d = tempfile.mkdtemp(prefix="offcpu-go-report-")
    try:
        recording, rules = os.path.join(d, "rec.json"), os.path.join(d, "none.rules")
        with open(recording, "w") as f:
            f.write(json_lines)
        with open(rules, "w") as f:
            f.write("user main.no_such_function other:never\n")
        r = t.run([t.OFFCPU, "report", "-f", "json", "--rules", rules, recording])
        assert r.returncode == 0, r.stderr[-500:]
        assert classes_of(r.stdout) == classes_of(json_lines), (classes_of(r.stdout),
                                                                classes_of(json_lines))
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_go_cgo_dwarf_stacks_and_scheduler_classes():
    """With cgo (glibc registers rseq: dwarf copies): gdb's stacks; the copy holds only the
    M's own stack, so its waits are classed by the M's path (idle M, netpoll, sysmon)."""
    waits, stats, gdb_stacks = record(cgo=True)
    assert stats["user_stack_at_switch_out"] == 0 < stats["emitted"], stats
    check_stacks_end_as_gdb(waits, gdb_stacks)
    check_scheduler_waits_classed(waits, ("sleep:go-idle", "poll:go-netpoll", "sleep:go-sysmon"))


def remove_builds():
    for binary in BUILDS.values():
        shutil.rmtree(os.path.dirname(binary), ignore_errors=True)


def main():
    return t.run_suite(globals(), cleanup=remove_builds)


if __name__ == "__main__":
    sys.exit(main())
