#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Issue #19: PostgreSQL's own wait events and backend types on every wait.

A real PostgreSQL 15 cluster under pgbench contention, recorded at -m 0
while one psql session samples pg_stat_activity every 10 ms: the two must
agree on where the client backends wait. Run as root after `make
test-build`; prints one line per check and ends with "N passed, N failed".
"""
import contextlib
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_offcpu as t  # noqa: E402

PG_BIN = t.PG_BIN
FIXTURE = os.path.join(t.ROOT, "tests", "unit", "fixtures", "pg15_wait_events.tsv")


def start_offcpu(args):
    """offcpu in the background, once attached: -v says "tracing" on stderr
    (after a line per PostgreSQL process it matched)."""
    p = subprocess.Popen([t.OFFCPU, "-v"] + args, stderr=subprocess.PIPE, text=True)
    said = []
    while True:
        line = p.stderr.readline()
        said.append(line)
        assert line, "offcpu ended before tracing: " + "".join(said)
        if line.startswith("offcpu: tracing;"):
            return p, said


@contextlib.contextmanager
def cluster():
    """A PostgreSQL 15 cluster on a Unix socket in its own directory (nothing
    on the network), initialized for pgbench at scale 1; yields the psql and
    pgbench connection arguments."""
    assert os.path.exists(os.path.join(PG_BIN, "postgres")), "PostgreSQL 15 is not installed"
    home = tempfile.mkdtemp(prefix="offcpu-pgev-")
    os.chmod(home, 0o755)
    shutil.chown(home, "postgres")
    data, port = os.path.join(home, "data"), "54331"
    conn = ["-h", home, "-p", port]
    try:
        r = t.as_postgres([PG_BIN + "/initdb", "-D", data, "-A", "trust", "-U", "postgres"])
        assert r.returncode == 0, r.stderr
        r = t.as_postgres([PG_BIN + "/pg_ctl", "-D", data, "-w", "-l", home + "/log", "-o",
                           "-p %s -k %s -c listen_addresses=''" % (port, home), "start"])
        assert r.returncode == 0, r.stdout + r.stderr
        r = t.as_postgres([PG_BIN + "/pgbench", "-i", "-s", "1"] + conn + ["postgres"])
        assert r.returncode == 0, r.stderr
        yield conn
    finally:
        t.as_postgres([PG_BIN + "/pg_ctl", "-D", data, "-m", "immediate", "stop"])
        shutil.rmtree(home, ignore_errors=True)


SAMPLE = ("SELECT 's', coalesce(wait_event_type, '') || ':' || coalesce(wait_event, ''), pid "
          "FROM pg_stat_activity WHERE backend_type = 'client backend' "
          "AND pid <> pg_backend_pid() AND wait_event IS NOT NULL;\n"
          "SELECT 'n';\n"
          "SELECT pg_sleep(0.01);\n")


def sample_pg_stat_activity(conn, seconds):
    """One psql session (not a connection per sample) sampling the waiting
    client backends every 10 ms for about seconds, a CHECKPOINT half-way
    (so the checkpointer's wait ends inside the recording). Returns its
    backend's pid, {event: samples} and the number of samples."""
    n = int(seconds / 0.01)
    script = "SELECT 'pid', pg_backend_pid();\n" + SAMPLE * (n // 2) + "CHECKPOINT;\n" + \
        SAMPLE * (n - n // 2)
    r = t.run(["runuser", "-u", "postgres", "--", PG_BIN + "/psql", "-At", "-F", "|", "-X",
               "-v", "ON_ERROR_STOP=1"] + conn + ["postgres"], input=script, timeout=300)
    assert r.returncode == 0, r.stderr
    pid, events, samples = None, {}, 0
    for line in r.stdout.splitlines():
        cols = line.split("|")
        if cols[0] == "pid":
            pid = int(cols[1])
        elif cols[0] == "s":
            events[cols[1]] = events.get(cols[1], 0) + 1
        elif cols[0] == "n":
            samples += 1
    assert pid and samples == n, (pid, samples, n)
    return pid, events, samples


def shares(weights):
    total = sum(weights.values())
    return {k: 100.0 * v / total for k, v in weights.items()} if total else {}


def test_pg_wait_events_agree_with_pg_stat_activity():
    """pgbench with contention (16 clients on one branch row) recorded at
    -m 0 while pg_stat_activity is sampled every 10 ms: over the waiting
    client backends, each wait event's share of offcpu's time agrees with
    its share of the samples within 10 points, for every event above 5%;
    a heavyweight lock, ClientRead and a WAL event are among them; the
    backend types tell client backends from the checkpointer, walwriter and
    background writer; text, pprof and offcpu report group by them."""
    out = os.path.join(t.TMP, "pg-events.json")
    with cluster() as conn:
        bench = subprocess.Popen(["runuser", "-u", "postgres", "--", PG_BIN + "/pgbench", "-c",
                                  "16", "-j", "2", "-T", "60"] + conn + ["postgres"],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            time.sleep(1.0)
            tracer, said = start_offcpu(["-c", "postgres", "--rules", "postgres", "-m", "0",
                                         "-f", "json", "-o", out])
            started = time.monotonic()
            sampler_pid, sampled, nr_samples = sample_pg_stat_activity(conn, 5.0)
            sampled_for = time.monotonic() - started
            tracer.send_signal(signal.SIGINT)
            _, err = tracer.communicate(timeout=120)
            assert tracer.returncode == 0, "".join(said) + err
        finally:
            bench.kill()
            bench.wait()
    assert any("labels read at block time (version 15)" in line for line in said), said
    waits, stats = t.read_json_lines(out)

    traced = {}
    types = {}
    for w in waits:
        labels = w.get("labels", {})
        kind = labels.get("pg.backend_type")
        if kind:
            types.setdefault(kind, set()).add(w["pid"])
        event = labels.get("pg.wait_event")
        if kind == "client backend" and event and w["pid"] != sampler_pid:
            traced[event] = traced.get(event, 0) + w["duration_ns"]
    ours, theirs = shares(traced), shares(sampled)
    table = "\n".join("      %-28s offcpu %5.1f%%  pg_stat_activity %5.1f%%" %
                      (e, ours.get(e, 0), theirs.get(e, 0))
                      for e in sorted(set(ours) | set(theirs),
                                      key=lambda e: -max(ours.get(e, 0), theirs.get(e, 0)))
                      if max(ours.get(e, 0), theirs.get(e, 0)) >= 0.5)
    print("    %d samples in %.1f s; %d waits, %.1f s of waiting client backends\n%s" %
          (nr_samples, sampled_for, len(waits), sum(traced.values()) / 1e9, table))
    for e in set(ours) | set(theirs):
        if max(ours.get(e, 0), theirs.get(e, 0)) > 5.0:
            assert abs(ours.get(e, 0) - theirs.get(e, 0)) <= 10.0, "%s:\n%s" % (e, table)
    assert ours.get("Lock:transactionid", 0) + ours.get("Lock:tuple", 0) > 5.0, table
    assert ours.get("Client:ClientRead", 0) > 1.0, table
    assert [e for e in ours if e.startswith("IO:WAL") or e.startswith("LWLock:WAL")], table

    assert {"client backend", "checkpointer", "walwriter", "background writer"} <= set(types), \
        types
    assert len(types["client backend"]) >= 16, types
    for kind in ("checkpointer", "walwriter", "background writer"):
        assert len(types[kind]) == 1 and not types[kind] & types["client backend"], types
    # The class comes from the wait event; a preempted backend stays cpu.
    for w in waits:
        event = w.get("labels", {}).get("pg.wait_event", "")
        if w["state"] in ("preempted", "running"):
            assert w["wait"] == "cpu", w["wait"]
        elif event.startswith("Lock:"):
            assert w["wait"] == "lock:pg-heavyweight", (event, w["wait"])
        elif event == "Client:ClientRead":
            assert w["wait"] == "net:pg-client", (event, w["wait"])
        elif event.startswith("LWLock:"):
            assert w["wait"] == "lock:pg-lwlock", (event, w["wait"])
    checkpointer = [w for w in waits if w.get("labels", {}).get("pg.backend_type") ==
                    "checkpointer" and w["state"] in t.BLOCKED_STATES]
    assert checkpointer, "no checkpointer wait"

    # The text report by wait event, live format from the recording, and pprof's tags.
    r = t.run([t.OFFCPU, "report", "--group-by", "pg.wait_event", "--top", "30", out])
    assert r.returncode == 0, r.stderr
    section = r.stdout.split("By pg.wait_event")[1].split("\n\n")[0]
    assert "Lock:transactionid" in section and "Client:ClientRead" in section, r.stdout
    r = t.run([t.OFFCPU, "report", "--group-by", "pg.backend_type", out])
    section = r.stdout.split("By pg.backend_type")[1].split("\n\n")[0]
    for kind in ("client backend", "checkpointer", "walwriter"):
        assert kind in section, section
    again = os.path.join(t.TMP, "pg-events-again.json")
    r = t.run([t.OFFCPU, "report", "-o", again, out])
    assert r.returncode == 0, r.stderr
    back, _ = t.read_json_lines(again)
    assert [w.get("labels") for w in back] == [w.get("labels") for w in waits]
    pb = os.path.join(t.TMP, "pg-events.pb.gz")
    r = t.run([t.OFFCPU, "report", "-o", pb, out])
    assert r.returncode == 0, r.stderr
    r = t.run(["go", "tool", "pprof", "-tags", pb])
    assert r.returncode == 0, r.stderr
    assert "pg.wait_event:" in r.stdout and "Lock:transactionid" in r.stdout, r.stdout[:2000]
    assert "pg.backend_type:" in r.stdout and "client backend" in r.stdout


def test_statement_text_only_with_read_data():
    """pg.query, the first bytes of the statement a backend runs, is read only
    with --read-data (statements hold data): without it no wait has it, and
    BPF is not even given its address; with it, pgbench's statements group
    the waits."""
    with cluster() as conn:
        bench = subprocess.Popen(["runuser", "-u", "postgres", "--", PG_BIN + "/pgbench", "-c",
                                  "8", "-j", "2", "-T", "30"] + conn + ["postgres"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(1.0)
            runs = {}
            for name, extra in (("off", []), ("on", ["--read-data"])):
                out = os.path.join(t.TMP, "pg-query-%s.json" % name)
                r = t.run([t.OFFCPU, "-c", "postgres", "--rules", "postgres", "-m", "0", "-d",
                           "2s", "-f", "json", "-o", out] + extra)
                assert r.returncode == 0, r.stderr
                runs[name] = t.read_json_lines(out)[0]
        finally:
            bench.kill()
            bench.wait()
    assert not [w for w in runs["off"] if "pg.query" in w.get("labels", {})]
    assert [w for w in runs["off"] if "pg.wait_event" in w.get("labels", {})]
    queries = [w["labels"]["pg.query"] for w in runs["on"] if "pg.query" in w.get("labels", {})]
    assert queries, "no statement read"
    assert all(len(q.encode()) <= 63 for q in queries), max(queries, key=len)
    assert any(q.startswith("UPDATE pgbench_branches SET bbalance") for q in queries), \
        sorted(set(queries))[:20]
    # Only ever in client backends: the others run no statement.
    for w in runs["on"]:
        if "pg.query" in w.get("labels", {}):
            assert w["labels"].get("pg.backend_type") == "client backend", w["labels"]
    r = t.run([t.OFFCPU, "report", "-c", "postgres", "-m", "0", "--read-data",
               os.path.join(t.TMP, "pg-query-on.json")])
    assert r.returncode == 2 and "--read-data" in r.stderr, r.stderr


def test_pg15_tables_are_what_the_binary_says():
    """The unit tests' fixture (every value offcpu names, and what PostgreSQL
    calls it) against the installed PostgreSQL 15 itself: its own
    pgstat_get_wait_event() and GetBackendTypeDesc(), called under gdb."""
    rows = []
    with open(FIXTURE) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            value, pg_name, _ = line.rstrip("\n").split("\t")
            rows.append((int(value, 16), pg_name))
    result = os.path.join(t.TMP, "pg15-names.tsv")
    script = os.path.join(t.TMP, "pg15-names.gdb")
    with open(script, "w") as f:
        f.write("set pagination off\nset confirm off\nbreak exit\nrun --version\npython\n"
                "import gdb\nout = open(%r, 'w')\n" % result +
                "for v in %r:\n" % [v for v, _ in rows] +
                "    out.write('%d\\t%s\\n' % (v, gdb.parse_and_eval("
                "'(char *)pgstat_get_wait_event(%d)' % v).string()))\n"
                "for b in range(13):\n"
                "    out.write('b%d\\t%s\\n' % (b, gdb.parse_and_eval("
                "'(char *)GetBackendTypeDesc(%d)' % b).string()))\n"
                "out.close()\nend\nkill\nquit\n")
    r = t.run(["gdb", "-batch", "-x", script, PG_BIN + "/postgres"], timeout=600)
    assert os.path.exists(result), r.stdout[-2000:] + r.stderr[-2000:]
    got = {}
    with open(result) as f:
        for line in f:
            key, name = line.rstrip("\n").split("\t")
            got[key] = name
    wrong = [(hex(v), name, got.get(str(v))) for v, name in rows if got.get(str(v)) != name]
    assert not wrong, wrong[:10]
    # The backend types the unit tests expect of 15.
    expected = ["not initialized", "autovacuum launcher", "autovacuum worker", "client backend",
                "background worker", "background writer", "checkpointer", "startup",
                "walreceiver", "walsender", "walwriter", "archiver", "logger"]
    assert [got["b%d" % i] for i in range(13)] == expected, got


def test_a_postgres_that_is_not_postgresql_gets_no_labels():
    """A process named postgres without PostgreSQL's symbols (cat, renamed,
    reading a pipe fed every 10 ms): its waits are traced, without labels,
    and nothing is said about it."""
    fake = os.path.join(t.TMP, "postgres")
    shutil.copy("/bin/cat", fake)
    proc = subprocess.Popen([fake], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    out = os.path.join(t.TMP, "fake-pg.json")
    try:
        tracer, said = start_offcpu(["-c", "postgres", "--rules", "postgres", "-m", "0", "-d",
                                     "1s", "-f", "json", "-o", out])
        for _ in range(60):
            proc.stdin.write(b"x\n")
            proc.stdin.flush()
            time.sleep(0.01)
        _, err = tracer.communicate(timeout=60)
        assert tracer.returncode == 0, err
        said = "".join(said) + err
        assert "labels read" not in said and "error" not in said.lower(), said
    finally:
        proc.kill()
        proc.wait()
    waits, _ = t.read_json_lines(out)
    mine = [w for w in waits if w["pid"] == proc.pid]
    assert mine, "the fake postgres was not traced"
    assert all("labels" not in w for w in mine), mine[0]


def test_bad_read_declaration_is_one_error_naming_file_and_line():
    rules = os.path.join(t.TMP, "bad-reads.rules")
    with open(rules, "w") as f:
        f.write("process postgres\nread my_wait_event_info deref u24 as pg.wait_event\n")
    r = t.run([t.OFFCPU, "-d", "1s", "--rules", rules])
    assert r.returncode == 2, r.returncode
    first = r.stderr.splitlines()[0]
    assert rules in first and "line 2" in first and "u32" in first, r.stderr
    r = t.run([t.OFFCPU, "-d", "1s", "--group-by", "nodot"])
    assert r.returncode == 2 and "'nodot'" in r.stderr, r.stderr


def main():
    return t.run_suite(globals())


if __name__ == "__main__":
    sys.exit(main())
