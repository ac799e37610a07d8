# SPDX-License-Identifier: GPL-2.0
# Sourced by gdb (-x) attached to a process: every thread's frames, leaf
# first, as one line "GDB_FRAMES {tid: [{"pc", "type", "name"}...]}". The
# frame types say which frames gdb made up from DWARF rather than found on
# the stack: inlined calls (INLINE) and tail calls (TAILCALL, from DWARF
# call-site information).
import json

import gdb

TYPES = {getattr(gdb, n): n[:-len("_FRAME")] for n in dir(gdb) if n.endswith("_FRAME")
         and isinstance(getattr(gdb, n), int)}

gdb.execute("set backtrace past-main on")
gdb.execute("set backtrace past-entry on")
stacks = {}
for inferior in gdb.inferiors():
    for thread in inferior.threads():
        thread.switch()
        frames = []
        frame = gdb.newest_frame()
        while frame is not None and len(frames) < 1000:
            frames.append({"pc": frame.pc(), "type": TYPES.get(frame.type(), "?"),
                           "name": frame.name()})
            try:
                frame = frame.older()
            except gdb.error:
                break
        stacks[thread.ptid[1]] = frames
print("GDB_FRAMES " + json.dumps(stacks))
