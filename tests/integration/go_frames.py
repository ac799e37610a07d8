# SPDX-License-Identifier: GPL-2.0
# gdb -batch -p PID -x go_frames.py: each thread's frames as gdb unwinds them,
# one JSON line per thread: {"tid": N, "frames": [[pc, name], ...]}, leaf first,
# inlined frames left out (no stack holds them), up to and including
# runtime.mcall or runtime.mstart, where gdb's own stacks of Go threads end
# (past them it finds only words of the thread's start, or nothing).
import json

import gdb

ENDS = ("runtime.mcall", "runtime.mstart")

for thread in gdb.selected_inferior().threads():
    thread.switch()
    frames = []
    f = gdb.newest_frame()
    while f is not None and len(frames) < 64:
        name = f.name()
        if f.type() != gdb.INLINE_FRAME:
            frames.append([f.pc(), name])
        if name in ENDS:
            break
        try:
            f = f.older()
        except gdb.error:
            break
    print("GOFRAMES " + json.dumps({"tid": thread.ptid[1], "frames": frames}))
