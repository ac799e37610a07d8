# SPDX-License-Identifier: GPL-2.0
"""A hung Python service, for the open waits of tests/integration/test_python.py.

    hang.py [WAITERS]

WAITERS threads (1 by default) block in a lock's acquire that never comes,
and the main thread in a two-minute sleep at module level. Once all are
blocked it prints one line: the main thread's ID, then each waiter's.
The test finds the lines of the waits by their "# at:" comments.
"""
import sys
import threading
import time

lock = threading.Lock()
lock.acquire()


def waiter_blocks(started):
    started.release()
    lock.acquire()  # at: acquire


waiters = []
for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 1):
    started = threading.Semaphore(0)
    w = threading.Thread(target=waiter_blocks, args=(started,), daemon=True)
    w.start()
    started.acquire()
    waiters.append(w)
print(threading.get_native_id(), *[w.native_id for w in waiters], flush=True)
time.sleep(120)  # at: sleep
