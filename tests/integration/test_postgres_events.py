#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""PostgreSQL's own wait events and backend types on every wait.

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
import harness as t  # noqa: E402

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


def connected(conn, clients):
    """Until pgbench's clients are connected to the cluster of conn."""
    data = os.path.join(conn[1], "data")
    t.wait_until(lambda: t.pg_client_backends(data) >= clients, 60,
                 "pgbench's %d clients connected" % clients)


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
            connected(conn, 16)
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
    # The names come from the data file beside the pack.
    assert any(line.rstrip().endswith(": " + os.path.join(t.ROOT, "rules",
                                                          "postgres-wait-events.tsv"))
               for line in said if "PostgreSQL's wait event names" in line), said
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


def client_event_shares(waits, sampler_pid):
    """Each wait event's share of the client backends' waiting time, the
    waits weighed as every total weighs them (weight_ns), the sampler's own
    backend left out."""
    weights = {}
    for w in waits:
        labels = w.get("labels", {})
        event = labels.get("pg.wait_event")
        if labels.get("pg.backend_type") == "client backend" and event and \
                w["pid"] != sampler_pid:
            weights[event] = weights.get(event, 0) + w.get("weight_ns", w["duration_ns"])
    return shares(weights)


def test_database_example_at_its_defaults_agrees_with_pg_stat_activity():
    """The documented PostgreSQL command (--rules postgres --short sample,
    -m at its default 1 ms) under pgbench -N while pg_stat_activity is
    sampled every 10 ms: each wait event's share of the client backends'
    waiting agrees with its share of the samples within 5 points. Recorded
    beside it in the same window, --short drop (the waits below -m left
    out) is printed for comparison: WALSync and the short LWLock waits are
    what it loses."""
    outs = {mode: os.path.join(t.TMP, "pg-default-%s.json" % mode) for mode in ("sample", "drop")}
    with cluster() as conn:
        bench = subprocess.Popen(["runuser", "-u", "postgres", "--", PG_BIN + "/pgbench", "-N",
                                  "-c", "16", "-j", "2", "-T", "60"] + conn + ["postgres"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        tracers = []
        try:
            connected(conn, 16)
            for mode, out in outs.items():
                tracers.append(start_offcpu(["-c", "postgres", "--rules", "postgres", "--short",
                                             mode, "-f", "json", "-o", out]))
            sampler_pid, sampled, nr_samples = sample_pg_stat_activity(conn, 5.0)
            for tracer, said in tracers:
                tracer.send_signal(signal.SIGINT)
            for tracer, said in tracers:
                _, err = tracer.communicate(timeout=120)
                assert tracer.returncode == 0, "".join(said) + err
        finally:
            bench.kill()
            bench.wait()
    theirs = shares(sampled)
    ours = {mode: client_event_shares(t.read_json_lines(out)[0], sampler_pid)
            for mode, out in outs.items()}
    events = sorted(set(theirs).union(*ours.values()),
                    key=lambda e: -max([theirs.get(e, 0)] + [o.get(e, 0) for o in ours.values()]))
    table = "\n".join("      %-28s sample %5.1f%%  drop %5.1f%%  pg_stat_activity %5.1f%%" %
                      (e, ours["sample"].get(e, 0), ours["drop"].get(e, 0), theirs.get(e, 0))
                      for e in events if max(theirs.get(e, 0), ours["sample"].get(e, 0)) >= 0.5)
    print("    %d samples\n%s" % (nr_samples, table))
    assert theirs and ours["sample"], table
    for e in events:
        assert abs(ours["sample"].get(e, 0) - theirs.get(e, 0)) <= 5.0, "%s:\n%s" % (e, table)


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
            connected(conn, 8)
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


# Every value offcpu names and what PostgreSQL calls it, per major version,
# from one minor release's binary (the first line of each says which).
FIXTURES = {15: FIXTURE}
# What 15's backend types are, by BackendType.
BACKEND_TYPES = {15: ["not initialized", "autovacuum launcher", "autovacuum worker",
                      "client backend", "background worker", "background writer",
                      "checkpointer", "startup", "walreceiver", "walsender", "walwriter",
                      "archiver", "logger"]}
UNKNOWN = "unknown wait event"


PG_NAMES = os.path.join(t.ROOT, "build", "tests", "pg_names.so")


def binary_names(postgres, values, backend_types):
    """What postgres's own pgstat_get_wait_event() returns for each value
    and GetBackendTypeDesc() for 0..backend_types-1, called in the binary
    itself by pg_names.c, preloaded: ({value: name}, [backend type])."""
    values_file = os.path.join(t.TMP, "pg-values.txt")
    result = os.path.join(t.TMP, "pg-names.tsv")
    with open(values_file, "w") as f:
        f.write("".join("%d\n" % v for v in values))
    with contextlib.suppress(FileNotFoundError):
        os.unlink(result)
    env = dict(os.environ, LD_PRELOAD=PG_NAMES, PG_NAMES_IN=values_file, PG_NAMES_OUT=result,
               PG_NAMES_TYPES=str(backend_types))
    r = t.run([postgres, "--version"], env=env, timeout=60)
    assert r.returncode == 0 and os.path.exists(result), (r.returncode, r.stdout, r.stderr)
    names, types = {}, []
    with open(result) as f:
        for line in f:
            key, name = line.rstrip("\n").split("\t")
            if key.startswith("b"):
                types.append(name)
            else:
                names[int(key)] = name
    assert len(names) == len(set(values)) and len(types) == backend_types, (len(names), len(types))
    return names, types


def added_by_a_later_minor(rows, got):
    """The values offcpu names that this binary does not know, where that is
    what a later minor release of the same major adds: PostgreSQL appends
    wait events to a class's end in minor releases (renumbering would break
    extensions), so each is past every value this binary names in its class,
    and the binary knows none after it. [(value, name)]."""
    later = []
    for value, name in rows:
        if got.get(value) != UNKNOWN or name == UNKNOWN or value >> 24 in (0x01, 0x03):
            continue
        same_class = [v for v, _ in rows if v >> 24 == value >> 24]
        if all(got.get(v) == UNKNOWN for v in same_class if v > value):
            later.append((value, name))
    return later


def test_pg_tables_are_what_each_installed_binary_says():
    """Each installed PostgreSQL's own pgstat_get_wait_event() and
    GetBackendTypeDesc() against what offcpu names every value (the unit
    tests' fixture of that major version, past each class's end too): the
    same names, but for events a later minor release appended, at most
    three in a class, which this binary does not know yet; a value this
    binary names that the tables call unknown (a minor release newer than
    the tables) fails, as does an installed major without tables."""
    installed = sorted(int(v) for v in os.listdir("/usr/lib/postgresql") if v.isdigit() and
                       os.path.exists("/usr/lib/postgresql/%s/bin/postgres" % v))
    assert installed, "no PostgreSQL is installed"
    for major in installed:
        assert major in FIXTURES, "PostgreSQL %d is installed, and offcpu has no tables of it" % \
            major
        rows = []
        with open(FIXTURES[major]) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                value, pg_name, _ = line.rstrip("\n").split("\t")
                rows.append((int(value, 16), pg_name))
        postgres = "/usr/lib/postgresql/%d/bin/postgres" % major
        got, types = binary_names(postgres, [v for v, _ in rows], len(BACKEND_TYPES[major]))
        later = added_by_a_later_minor(rows, got)
        for value, name in later:
            print("    %s: %s at 0x%08x is a later minor's" % (postgres, name, value))
        by_class = {}
        for value, _ in later:
            by_class[value >> 24] = by_class.get(value >> 24, 0) + 1
        assert all(n <= 3 for n in by_class.values()), later
        wrong = [(hex(v), name, got.get(v)) for v, name in rows
                 if got.get(v) != name and (v, name) not in later]
        assert not wrong, (postgres, wrong[:10])
        assert types == BACKEND_TYPES[major], (postgres, types)


def test_a_later_minors_events_are_told_from_missing_ones():
    """The rule above on made-up answers: an event appended at a class's
    end that this binary lacks is a later minor's; one in the middle, or
    one this binary names that the tables call unknown, is not."""
    rows = [(0x08000000, "A"), (0x08000001, "B"), (0x08000002, "C"), (0x08000003, UNKNOWN)]
    got = {0x08000000: "A", 0x08000001: "B", 0x08000002: UNKNOWN, 0x08000003: UNKNOWN}
    assert added_by_a_later_minor(rows, got) == [(0x08000002, "C")]
    got = {0x08000000: "A", 0x08000001: UNKNOWN, 0x08000002: "C", 0x08000003: UNKNOWN}
    assert added_by_a_later_minor(rows, got) == []
    got = {0x08000000: "A", 0x08000001: "B", 0x08000002: "C", 0x08000003: "D"}
    assert added_by_a_later_minor(rows, got) == []


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
            # A line every 10 ms through the recording.
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
