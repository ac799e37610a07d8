#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What each wait waited on: the real BPF program against lock_workload,
whose threads wait on locks of every kind glibc makes, each held by a
thread of known name, with gdb reading the same locks as the reference."""
import collections
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as t  # noqa: E402

WORKLOAD = os.path.join(t.ROOT, "build", "tests", "lock_workload")

# Each thread's lock (kind, name), and the threads that may hold it while it waits.
LOCKS = {
    "w_orders": ("mutex", "orders_lock", {"h_orders"}),
    "h_orders": ("mutex", "orders_lock", {"w_orders"}),
    "w_heap": ("mutex", "[heap]", {"h_heap"}),
    "h_heap": ("mutex", "[heap]", {"w_heap"}),
    "w_robust": ("mutex", "robust_lock", {"h_robust"}),
    "h_robust": ("mutex", "robust_lock", {"w_robust"}),
    "w_pi": ("mutex", "pi_lock", {"h_pi"}),
    "h_pi": ("mutex", "pi_lock", {"w_pi"}),
    "w_cxx": ("mutex", "cxx_lock", {"h_cxx"}),
    "h_cxx": ("mutex", "cxx_lock", {"w_cxx"}),
    "w_timed": ("mutex", "timed_lock", {"h_timed"}),
    "w_table_r": ("rwlock", "table_lock", {"h_table", "w_table_w"}),
    "w_table_w": ("rwlock", "table_lock", {"h_table"}),
    "h_table": ("rwlock", "table_lock", {"w_table_w"}),
    "w_slots": ("semaphore", "slots", set()),
}


def run_workload(fmt="json", args=(), seconds="2"):
    """offcpu -f FMT -- lock_workload SECONDS: the file, and {name: tid} of its threads."""
    out = os.path.join(t.TMP, "objects-%d.%s" % (time.monotonic_ns(), fmt))
    r = t.run([t.OFFCPU, "-f", fmt, "-o", out] + list(args) + ["--", WORKLOAD, seconds])
    assert r.returncode == 0, "offcpu failed: %d %s" % (r.returncode, r.stderr)
    return out, threads_of(r.stdout)


def threads_of(stdout):
    tids = {}
    for line in stdout.splitlines():
        m = re.match(r"(\d+) (\w+)$", line)
        if m:
            tids[m.group(2)] = int(m.group(1))
    assert "w_orders" in tids and "main" in tids, stdout[:300]
    return tids


def until_ready(wl):
    """What a workload started in the background said until its "ready" line."""
    lines = []
    for line in wl.stdout:
        lines.append(line)
        if line.strip() == "ready":
            break
    return "".join(lines)


def test_every_lock_names_itself_and_its_holder():
    out, tids = run_workload()
    waits, stats = t.read_json_lines(out)
    names = {tid: name for name, tid in tids.items()}
    problems = []
    for thread, (kind, name, holders) in LOCKS.items():
        mine = [w for w in waits if w["tid"] == tids[thread] and w.get("object")]
        on_it = [w for w in mine if w["object"]["name"] == name]
        if len(on_it) < 10:
            problems.append("%s: %d waits on %s of %s" % (thread, len(on_it), name,
                                                           sorted({json.dumps(w["object"])
                                                                   for w in mine})[:4]))
            continue
        # Without its user stack (the wait the process's exit ended), only "futex" is known.
        wrong_kind = [w["object"] for w in on_it if w["object"]["kind"] != kind and
                      (w["user_stack"] or w["object"]["kind"] != "futex")]
        if wrong_kind:
            problems.append("%s: %s not %s" % (thread, wrong_kind[:2], kind))
        held = [w["object"].get("holder") for w in on_it]
        by_other = [h for h in held if h and names.get(h["tid"]) not in holders]
        if by_other:
            problems.append("%s: held by %s, not %s" % (thread, by_other[:3], holders))
        if any(h and (h["pid"] != tids["main"] or h["comm"] != names[h["tid"]])
               for h in held):
            problems.append("%s: a holder's pid or comm is not its own: %s" % (thread, held[:3]))
        # A holder lets go between the waiter's check and its sleep rarely: most are named.
        # A writer waiting while readers hold it has no holder to name.
        if holders and not thread.endswith("table_w") and thread != "h_table" and sum(1 for h in held if h) < 0.9 * len(held):
            problems.append("%s: %d of %d waits with a holder" %
                            (thread, sum(1 for h in held if h), len(held)))
    assert not problems, problems
    # A condvar's waiters sleep on one of its two __g_signals words.
    queue = [w["object"] for w in waits if w["tid"] == tids["w_queue"] and w.get("object")]
    assert {(o["kind"], o["name"]) for o in queue if o["kind"] == "condvar"} <= {
        ("condvar", "queue_cv+0x28"), ("condvar", "queue_cv+0x2c")}, queue[:5]
    assert sum(1 for o in queue if o["kind"] == "condvar") >= 10, queue[:5]
    # Its addresses are the lock's own: orders_lock's is the same in every wait.
    assert len({w["object"]["addr"] for w in waits
                if w.get("object", {}).get("name") == "orders_lock"}) == 1
    # The signaller sleeps 20 ms at a time; main waits for each child it forks.
    sleeps = collections.Counter(w["object"]["name"] for w in waits
                                 if w["tid"] == tids["signaller"] and w.get("object"))
    assert sleeps.most_common(1)[0][0] == "timer 20 ms", sleeps
    children = {int(w["object"]["name"].split()[1]) for w in waits
                if w["tid"] == tids["main"] and w.get("object", {}).get("kind") == "child"}
    forked = {w["pid"] for w in waits if w["pid"] != tids["main"]}
    assert len(children) >= 5 and children <= forked, (children, forked)
    assert stats["object_failures"] == 0, stats


def test_restarted_timed_wait_keeps_its_lock():
    """SIGUSR1 cuts w_timed's timed lock wait; it comes back as
    restart_syscall, a wait of its own that still names the lock."""
    out, tids = run_workload()
    waits, _ = t.read_json_lines(out)
    mine = [w for w in waits if w["tid"] == tids["w_timed"] and w["wait"].startswith("lock")]
    # h_timed holds it 80 ms at a time; a signal every fork (about 60 ms) cuts the waits.
    short = [w for w in mine if w["duration_ns"] < 50e6]
    assert len(short) >= 5, [w["duration_ns"] for w in mine]
    # Its start's print_lock is the one other lock it takes.
    unnamed = [w for w in mine
               if w.get("object", {}).get("name") not in ("timed_lock", "print_lock")]
    assert not unnamed, unnamed[:2]


def gdb(pid, commands):
    r = t.run(["gdb", "-p", str(pid), "-batch", "-nx"] + sum((["-ex", c] for c in commands), []),
              timeout=60)
    return r.stdout + r.stderr


def test_glibc_fields_are_where_gdb_reads_them():
    """The owner offcpu reads at +8 of a mutex and +24 of a rwlock are the
    fields gdb names __owner and __cur_writer in the program's own types,
    and the owner gdb reads while a waiter waits is the holder offcpu gave
    that wait."""
    wl = subprocess.Popen([WORKLOAD, "30"], stdout=subprocess.PIPE, text=True)
    try:
        tids = threads_of(until_ready(wl))
        offsets = gdb(wl.pid, [
            "p (char *)&orders_lock.__data.__owner - (char *)&orders_lock",
            "p (char *)&table_lock.__data.__cur_writer - (char *)&table_lock",
            "p (char *)&table_lock.__data.__wrphase_futex - (char *)&table_lock",
            "p (char *)&table_lock.__data.__writers_futex - (char *)&table_lock",
        ])
        assert re.findall(r"^\$\d+ = (\d+)$", offsets, re.M) == ["8", "24", "8", "12"], offsets
        out = os.path.join(t.TMP, "objects-gdb.json")
        tracer = t.start_tracer(["-d", "3s", "-p", str(wl.pid), "-f", "json", "-o", out])
        owners = []
        for _ in range(5):
            # gdb's own clock (CLOCK_MONOTONIC, as ts_ns) while the process is stopped.
            said = gdb(wl.pid, ["p orders_lock.__data.__owner",
                                "python import time; print('at', time.monotonic_ns())"])
            m = re.search(r"^\$1 = (\d+)$.*^at (\d+)$", said, re.M | re.S)
            assert m, said
            owners.append((int(m.group(2)), int(m.group(1))))
        _, err = t.finish_tracer(tracer, 60)
        assert tracer.returncode == 0, err
    finally:
        wl.kill()
        wl.wait()
    waits, _ = t.read_json_lines(out)
    pair = {tids["w_orders"], tids["h_orders"]}
    checked = 0
    for stopped, owner in owners:
        # The wait on orders_lock that gdb's stop cut (the thread's next is
        # the stop itself, and it did not get the lock): its owner did not
        # change while it lasted. One that ended as the lock came to it, and
        # the stop caught it after, is not that.
        for tid in pair:
            mine = sorted((w for w in waits if w["tid"] == tid),
                          key=lambda w: w["ts_ns"] - w["duration_ns"])
            for w, after in zip(mine, mine[1:]):
                # A lock let go just before the stop (owner 0) says nothing.
                if (w.get("object", {}).get("name") == "orders_lock" and
                        owner not in (0, tid) and after["state"] in ("traced", "stopped") and
                        after["ts_ns"] - after["duration_ns"] < stopped < after["ts_ns"]):
                    assert w["object"].get("holder", {}).get("tid") == owner, \
                        (owner, w["object"])
                    checked += 1
    assert checked >= 1, owners


def test_snapshot_and_the_stop_say_what_is_stuck_on_what():
    """offcpu snapshot reads what each blocked thread waits on from its
    saved registers; a recording's waits still open at its stop have it
    from their switch-out. Both name the lock and its holder."""
    wl = subprocess.Popen([WORKLOAD, "30"], stdout=subprocess.PIPE, text=True)
    try:
        tids = threads_of(until_ready(wl))
        names = {tid: name for name, tid in tids.items()}
        snap = os.path.join(t.TMP, "objects-snapshot.json")
        r = t.run([t.OFFCPU, "snapshot", "-p", str(wl.pid), "-f", "json", "-o", snap])
        assert r.returncode == 0, r.stderr
        text = t.run([t.OFFCPU, "snapshot", "-p", str(wl.pid)])
        assert text.returncode == 0, text.stderr
        stop = os.path.join(t.TMP, "objects-stop.json")
        r = t.run([t.OFFCPU, "-d", "1s", "-p", str(wl.pid), "-f", "json", "-o", stop])
        assert r.returncode == 0, r.stderr
    finally:
        wl.kill()
        wl.wait()
    for path in (snap, stop):
        waits, _ = t.read_json_lines(path)
        still = [w for w in waits if w.get("open") in ("after", "both")]
        # Half the pairs' threads wait on their lock at any moment, the others hold it.
        locks = [w for w in still if w["comm"] in LOCKS and
                 w.get("object", {}).get("kind", "").startswith(("mutex", "rwlock"))]
        assert len(locks) >= 2, (path, [(w["comm"], w.get("object")) for w in still])
        for w in locks:
            kind, name, holders = LOCKS[w["comm"]]
            assert w["object"]["name"] == name, (path, w["comm"], w["object"])
            holder = w["object"].get("holder")
            assert not holder or names.get(holder["tid"]) in holders, (path, w["comm"], holder)
        assert any(w["object"].get("holder") for w in locks), (path, locks)
    # The text's still-waiting list says it under each thread.
    said = re.findall(r"^    on (?:mutex|rwlock) (\S+), held by (\w+) (\d+)$", text.stdout,
                      re.M)
    assert said, text.stdout[:3000]
    for name, comm, tid in said:
        assert names[int(tid)] == comm, (name, comm, tid)


def test_text_report_by_object_and_what_the_holder_did():
    out, tids = run_workload("text")
    text = open(out).read()
    table = text[text.index("\nBy object (top 20)"):]
    row = re.search(r"^  mutex orders_lock +\S+ \S+ +\S+ +\d+\s+(h|w)_orders (\d+) \((\d+)%\)\n"
                    r"      held by (\w+) (\d+), meanwhile itself (\d+)% asleep in sleep at "
                    r"sleep_ms\(long\) <- take_turns\(void\*\)", table, re.M)
    assert row, table[:2000]
    assert int(row.group(2)) == tids[row.group(1) + "_orders"], (row.group(0), tids)
    # The holder sleeps 20 ms holding it, and runs microseconds: nearly all of the wait.
    assert int(row.group(6)) >= 90, row.group(0)
    assert re.search(r"^  semaphore slots ", table, re.M), table[:2000]
    assert re.search(r"^  timer 20 ms ", table, re.M), table[:2000]
    assert re.search(r"^  child pid \d+ ", table, re.M), table[:2000]


def test_report_pprof_and_folded_name_the_object():
    recording, tids = run_workload()
    # offcpu report reads them back: the same table.
    text = open(t.report_of(recording, ".txt", ["--group-by", "object"])).read()
    assert re.search(r"^  rwlock table_lock .*  (h_table|w_table_w) \d+ ", text, re.M), text
    folded = open(t.report_of(recording, ".folded", ["--group-by", "object"])).read()
    assert re.search(r"^w_orders;\[interruptible\];\[lock:mutex\];\[mutex_orders_lock\];",
                     folded, re.M), folded[:1000]
    plain = open(t.report_of(recording, ".folded")).read()
    assert "[mutex_orders_lock]" not in plain
    pb = t.report_of(recording, ".pb.gz")
    raw = t.go_pprof(["-raw", pb])
    assert re.search(r'wait\.object:\[mutex orders_lock\]', raw), raw[:3000]
    assert re.search(r'wait\.holder\.name:\[(h|w)_orders\]', raw), raw[:3000]
    trace = json.load(open(t.report_of(recording, ".trace.json")))
    slices = [e for e in trace["traceEvents"] if e.get("ph") == "X" and
              e.get("args", {}).get("object") == "mutex orders_lock"]
    held = [s["args"]["holder_tid"] for s in slices if "holder_tid" in s["args"]]
    assert len(held) >= 10 and set(held) <= {tids["h_orders"], tids["w_orders"]}, slices[:2]


FD_WORKLOAD = os.path.join(t.ROOT, "build", "tests", "fd_workload")
# The threads of fd_workload that wait on one file each, by what its name is made of.
FD_THREADS = ("w_pipe", "w_fifo", "w_tcp", "w_unix", "w_eventfd", "w_epoll", "w_poll",
              "w_flock", "h_flock")


def fd_truth(stdout):
    """{what: value} of fd_workload's truth lines (paths decoded from hex), and its threads."""
    truth = {}
    for line in stdout.splitlines():
        what, _, value = line.partition(" ")
        if what in ("fifo", "flock", "unix_path"):
            truth[what] = bytes.fromhex(value).decode("latin-1")
        elif what in ("pipe", "poll_pipe", "unix_inode"):
            truth[what] = int(value)
        elif what == "tcp":
            truth[what] = value.split()
    return truth, threads_of_fd(stdout)


def threads_of_fd(stdout):
    tids = {m.group(2): int(m.group(1))
            for m in re.finditer(r"^(\d+) (\w+)$", stdout, re.M)}
    assert set(FD_THREADS) <= set(tids), stdout[:500]
    return tids


def expected_fd_objects(truth):
    """Each thread's (kind, name), as the workload made them."""
    local, peer = truth["tcp"]
    return {
        "w_pipe": ("pipe", "pipe:[%d]" % truth["pipe"]),
        "w_poll": ("pipe", "pipe:[%d]" % truth["poll_pipe"]),
        "w_fifo": ("fifo", truth["fifo"]),
        "w_tcp": ("socket", "tcp %s -> %s" % (local, peer)),
        "w_unix": ("socket", "unix " + truth["unix_path"]),
        "w_eventfd": ("eventfd", "eventfd"),
        "w_epoll": ("epoll", "epoll (2 fds)"),
        "w_flock": ("flock", truth["flock"]),
        "h_flock": ("flock", truth["flock"]),
    }


def test_fds_name_their_files():
    """Each wait in a call on one fd names the file the workload made:
    the pipe's inode, the FIFO's path (a space and an ESC in it), both
    ends of the TCP connection, the unix socket's path, the eventfd, the
    epoll and how many fds it watches, poll's one pipe, the flocked file."""
    out = os.path.join(t.TMP, "objects-fd-%d.json" % time.monotonic_ns())
    r = t.run([t.OFFCPU, "-f", "json", "-o", out, "--", FD_WORKLOAD, "2"])
    assert r.returncode == 0, r.stderr
    truth, tids = fd_truth(r.stdout)
    waits, stats = t.read_json_lines(out)
    problems = []
    for thread, (kind, name) in expected_fd_objects(truth).items():
        mine = [w["object"] for w in waits if w["tid"] == tids[thread] and
                w.get("object", {}).get("kind") == kind]
        right = [o for o in mine if o["name"] == name]
        # Its last wait, which the exit ended, is named after the files are gone.
        if len(right) < 10 or len(mine) - len(right) > 1:
            problems.append("%s: %d of %d on %r: %s" % (thread, len(right), len(mine), name,
                                                        sorted({o["name"] for o in mine})[:4]))
    assert not problems, problems
    # Named once a wait is over, from what BPF read while it lasted: only
    # the waits the exit ended fail (their files unlinked, /proc gone).
    assert stats["object_failures"] <= len(FD_THREADS), stats


def test_fd_names_escaped_and_in_snapshot():
    """A FIFO's and a unix socket's paths are the user's bytes: the text
    report shows their ESC as \\x1b, never raw; offcpu snapshot names
    each blocked thread's file from its registers and fd table."""
    wl = subprocess.Popen([FD_WORKLOAD, "30"], stdout=subprocess.PIPE, text=True,
                          errors="surrogateescape")
    try:
        lines = []
        for line in wl.stdout:
            lines.append(line)
            if line.strip() == "ready":
                break
        truth, tids = fd_truth("".join(lines))
        snap = os.path.join(t.TMP, "objects-fd-snapshot.json")
        r = t.run([t.OFFCPU, "snapshot", "-p", str(wl.pid), "-f", "json", "-o", snap])
        assert r.returncode == 0, r.stderr
        text = os.path.join(t.TMP, "objects-fd.txt")
        r = t.run([t.OFFCPU, "-d", "1s", "-p", str(wl.pid), "-o", text])
        assert r.returncode == 0, r.stderr
    finally:
        wl.kill()
        wl.wait()
    expected = expected_fd_objects(truth)
    waits, _ = t.read_json_lines(snap)
    named = {w["tid"]: (w["object"]["kind"], w["object"]["name"])
             for w in waits if w.get("object")}
    # The flock pair takes turns: the one holding it sleeps on a timer.
    for thread in FD_THREADS[:-2]:
        assert named.get(tids[thread]) == expected[thread], (thread, named.get(tids[thread]))
    raw = open(text, "rb").read()
    assert b"\x1b" not in raw, raw[:2000]
    said = raw.decode()
    assert "fifo " + truth["fifo"].replace("\x1b", "\\x1b") in said, said[:3000]
    assert "unix " + truth["unix_path"].replace("\x1b", "\\x1b") in said, said[:3000]


KERNEL_WORKLOAD = os.path.join(t.ROOT, "build", "tests", "kernel_lock_workload")


def kernel_lock_run(seconds="2"):
    """perf record -e lock:contention_begin -- offcpu -- kernel_lock_workload
    (perf outside, so offcpu names the workload's objects alone): offcpu's
    waits, {name: tid}, and perf's contention_begin events as (tid, lock
    address, flags), the kernel's own account of the same run."""
    out = os.path.join(t.TMP, "klock-%d.json" % time.monotonic_ns())
    data = out + ".perf"
    r = t.run(["perf", "record", "-q", "-e", "lock:contention_begin", "-o", data, "--",
               t.OFFCPU, "-f", "json", "-o", out, "--", KERNEL_WORKLOAD, seconds])
    assert r.returncode == 0, "offcpu failed: %d %s" % (r.returncode, r.stderr)
    tids = {}
    for line in r.stdout.splitlines():
        m = re.match(r"(\d+) (\w+)$", line)
        if m:
            tids[m.group(2)] = int(m.group(1))
    assert "w_inode1" in tids and "h_inode" in tids, r.stdout[:300]
    script = t.run(["perf", "script", "-i", data, "-F", "tid,trace"])
    assert script.returncode == 0, script.stderr
    begins = [(int(m.group(1)), int(m.group(2), 16), m.group(3)) for m in
              re.finditer(r"^\s*(\d+)\s+(0x[0-9a-f]+) \(flags=([A-Z_|]*)\)", script.stdout, re.M)]
    assert begins, script.stdout[:1000]
    waits, stats = t.read_json_lines(out)
    return waits, stats, tids, begins


def test_kernel_locks_name_the_inode_and_its_writer():
    """Writers to one tmpfs file sleep on its inode's i_rwsem, held by
    h_inode asleep in a userfaultfd fault: kernel rwsem:W in
    &shmem_inode_cache, held by h_inode; mmap and munmap wait on mmap_lock.
    perf's lock:contention_begin says the same lock and the same kind."""
    waits, stats, tids, begins = kernel_lock_run()
    names = {tid: name for name, tid in tids.items()}
    problems = []
    for thread in ("w_inode1", "w_inode2"):
        locks = [w["object"] for w in waits if w["tid"] == tids[thread] and
                 w.get("object", {}).get("kind", "").startswith("kernel")]
        # Its page faults and its stack's mapping wait on mmap_lock now and then.
        wrong = [o for o in locks if o["name"] not in ("&shmem_inode_cache", "mmap_lock")]
        mine = [o for o in locks if o["name"] == "&shmem_inode_cache"]
        if wrong or len(mine) < 10 or any(o["kind"] != "kernel rwsem:W" for o in mine):
            problems.append("%s: %d on the inode of %s" % (thread, len(mine), (wrong or locks)[:3]))
            continue
        holders = collections.Counter(names.get(o.get("holder", {}).get("tid")) for o in mine)
        # Another writer may hold it for the moment of its write; h_inode, asleep, mostly.
        if holders.most_common(1)[0][0] != "h_inode" or set(holders) - {
                "h_inode", "w_inode1", "w_inode2"}:
            problems.append("%s: held by %s" % (thread, holders))
        if any(o.get("holder") and (o["holder"]["pid"] != tids["main"] or
                                    o["holder"]["comm"] != names[o["holder"]["tid"]])
               for o in mine):
            problems.append("%s: a holder's pid or comm is not its own" % thread)
        # The kernel's own: the lock each waited on is the one it said it contended for.
        said = {(a, f) for tid, a, f in begins if tid == tids[thread] and "SPIN" not in f}
        seen = {(int(o["addr"], 16), {"R": "READ", "W": "WRITE"}[o["kind"][-1]]) for o in locks}
        if seen - said:
            problems.append("%s: %s not in perf's %s" % (thread, seen, said))
    mmap = [w["object"] for w in waits if w["tid"] == tids["w_mmap"] and
            w.get("object", {}).get("kind", "").startswith("kernel")]
    if len(mmap) < 10 or any(o["name"] != "mmap_lock" or not o["kind"].startswith("kernel rwsem")
                             for o in mmap):
        problems.append("w_mmap: %s" % mmap[:3])
    said = {a for tid, a, f in begins if tid == tids["w_mmap"] and "SPIN" not in f}
    if {int(o["addr"], 16) for o in mmap} - said:
        problems.append("w_mmap: %s not in perf's %s" % ({o["addr"] for o in mmap}, said))
    # A wait inside a lock's slow path names the lock; no other wait does.
    for w in waits:
        syms = [f.get("sym", "") for f in w.get("kernel_stack", [])]
        slow = any(s.startswith(("rwsem_down_", "__mutex_lock", "rt_mutex", "percpu_rwsem",
                                 "__down")) for s in syms)
        named = w.get("object", {}).get("kind", "").startswith("kernel")
        if slow != named and w["comm"] in tids:
            problems.append("%s: slow path %s, kernel object %s: %s" %
                            (w["comm"], slow, w.get("object"), syms[:6]))
    assert not problems, problems[:10]
    # The holder's own write sleeps in a fault on the memfd: named as the kernel names it
    # (a file removed while open has no path to check it by, but its fd's link leads to it).
    memfd = [w["object"]["name"] for w in waits if w["tid"] == tids["h_inode"] and
             w.get("object", {}).get("kind") == "file"]
    assert memfd and sum(1 for n in memfd if n.startswith("/memfd:")) >= len(memfd) - 1, memfd
    # main's pthread_join()s wait on a thread's stack, unmapped before it is named: no other.
    joins = sum(1 for w in waits if w["tid"] == tids["main"] and
                w.get("object", {}).get("kind") == "futex")
    assert stats["object_failures"] <= joins, (joins, stats)


def test_kernel_locks_in_the_text_report():
    out = os.path.join(t.TMP, "klock-%d.txt" % time.monotonic_ns())
    r = t.run([t.OFFCPU, "-f", "text", "-o", out, "--", KERNEL_WORKLOAD, "2"])
    assert r.returncode == 0, r.stderr
    text = open(out).read()
    table = text[text.index("\nBy object (top 20)"):]
    assert re.search(r"^  kernel rwsem:W &shmem_inode_cache .* h_inode \d+ ", table, re.M), \
        table[:2000]
    assert re.search(r"^  kernel rwsem:[RW] mmap_lock ", table, re.M), table[:2000]


if __name__ == "__main__":
    sys.exit(t.run_suite(globals()))
