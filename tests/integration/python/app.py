# SPDX-License-Identifier: GPL-2.0
"""The Python workload of tests/integration/test_python.py.

    app.py MODE ROUNDS [TRUTH]

Each mode blocks ROUNDS times under outer() -> middle() -> inner(), whose
lines the test finds by the "# at:" comments. The callables they are given
are C functions (functools.partial of a builtin), so no Python frame comes
between inner() and the wait. TRUTH, where given, receives what the test
cannot see otherwise (threads' IDs, code object addresses).
"""
import functools
import gc
import os
import socket
import subprocess
import sys
import threading
import time

PAUSE = 0.05
# How long mode_churn keeps half its functions alive after their wait.
KEEP = 0.25


def inner(block):
    return block()  # at: inner


def middle(block):
    return inner(block)  # at: middle


def outer(block):
    return middle(block)  # at: outer


def mode_sleep(rounds):
    for _ in range(rounds):
        outer(functools.partial(time.sleep, PAUSE))


def spin(seconds):
    """Python code on CPU for that long: the sampler's truth."""
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        n += sum(i * i for i in range(1000))
    return n


def mode_compute(rounds):
    """ROUNDS tenths of a second on CPU under outer() -> middle() -> inner()."""
    outer(functools.partial(spin, rounds / 10))


def mode_lock(rounds):
    lock = threading.Lock()
    held = threading.Event()
    done = threading.Event()

    def holder():
        for _ in range(rounds):
            lock.acquire()
            held.set()
            time.sleep(PAUSE)
            lock.release()
            done.wait()
            done.clear()

    t = threading.Thread(target=holder)
    t.start()
    for _ in range(rounds):
        held.wait()
        held.clear()
        outer(lock.acquire)
        lock.release()
        done.set()
    t.join()


def mode_recv(rounds):
    a, b = socket.socketpair()

    def sender():
        for _ in range(rounds):
            time.sleep(PAUSE)
            b.send(b"x")

    t = threading.Thread(target=sender)
    t.start()
    for _ in range(rounds):
        outer(functools.partial(a.recv, 1))
    t.join()


def mode_subprocess(rounds):
    for _ in range(rounds):
        outer(functools.partial(subprocess.run, ["sleep", str(PAUSE)], check=True))


def alpha_waits(event):
    event.wait()  # at: alpha


def beta_waits(sock):
    sock.recv(1)  # at: beta


def mode_threads(rounds, truth):
    """Two threads blocked at once, each in its own function."""
    a, b = socket.socketpair()
    events = [threading.Event() for _ in range(rounds)]
    tids = {}

    def alpha():
        tids["alpha"] = threading.get_native_id()
        for e in events:
            alpha_waits(e)

    def beta():
        tids["beta"] = threading.get_native_id()
        for _ in range(rounds):
            beta_waits(a)

    threads = [threading.Thread(target=alpha), threading.Thread(target=beta)]
    for t in threads:
        t.start()
    for e in events:
        time.sleep(PAUSE)
        e.set()
        b.send(b"x")
    for t in threads:
        t.join()
    truth.write("alpha %d\nbeta %d\n" % (tids["alpha"], tids["beta"]))


def mode_churn(rounds, truth):
    """Functions compiled one at a time and freed: the next one's code object
    is allocated where the last one was. gen_N is on line N + 2 of its
    source, so a frame named from a stale code object has the wrong line.
    Even rounds free their function right after its wait, racing offcpu's
    read of its code object; odd ones keep it KEEP seconds first, time
    enough for that read however loaded the machine."""
    for n in range(rounds):
        source = "\n" * (n + 1) + "def gen_%d(block):\n    return block()\n" % n
        space = {}
        exec(compile(source, "generated.py", "exec"), space)
        fn = space["gen_%d" % n]
        truth.write("gen_%d %d %d\n" % (n, id(fn.__code__), n + 3))
        outer(functools.partial(fn, functools.partial(time.sleep, PAUSE)))
        if n % 2:
            time.sleep(KEEP)
        del fn, space
        gc.collect()


def mode_child(rounds, truth):
    """A Python child that blocks, then exits while the parent goes on."""
    child = subprocess.Popen([sys.executable, __file__, "sleep", str(rounds)])
    truth.write("child %d\n" % child.pid)
    child.wait()
    time.sleep(0.5)


def main():
    mode, rounds = sys.argv[1], int(sys.argv[2])
    # offcpu finds CPython when it reads the exec's record: on a loaded
    # machine some milliseconds after the exec. The waits looked at come after.
    time.sleep(0.2)
    truth = open(sys.argv[3], "w") if len(sys.argv) > 3 else None
    if mode in ("threads", "churn", "child"):
        globals()["mode_" + mode](rounds, truth)
    else:
        globals()["mode_" + mode](rounds)
    if truth:
        truth.close()


main()
