// SPDX-License-Identifier: GPL-2.0
// node trace_engine_check.mjs TRACE.json: the trace parsed by DevTools' trace
// engine (@paulirish/trace_engine, the Performance panel's), printed as one
// JSON line: its processes and threads, and each flow it bound, as the
// [name, pid, tid, ts] of the slices at its ends.
import {analyzeTrace} from '@paulirish/trace_engine/analyze-trace.mjs';

const {parsedTrace} = await analyzeTrace(process.argv[2]);
const data = parsedTrace.data;
const threads = [];
for (const [pid, process] of data.Renderer.processes) {
  for (const [tid] of process.threads) threads.push([pid, tid]);
}
const flows = data.Flows.flows.map(flow => flow.map(e => [e.name, e.pid, e.tid, e.ts]));
console.log(JSON.stringify({processes: data.Renderer.processes.size, threads, flows}));
