// Issue 15's cost: what reading the VM timeline during a session costs the
// server. For each frame rate, a 5 s session on telescope-sim (no watcher:
// frames from Flutter.Frame events) with timeline: true and with timeline:
// false, interleaved for ROUNDS rounds; reported: the server's CPU time per
// second of session (utime + stime), the stop's latency, and the ratio of
// the two against the timeline-off baseline measured in the same run. The
// sim records 4 timeline events a frame (the engine's BeginFrame and DoDraw
// begin/end); a real engine records more.
//
// Usage: node timeline.mjs BUILD_DIR [--rounds N]
import { resolve } from 'node:path';
import { StdioPeer, startSim, sleep, median, callTool, cpuMs } from './lib.mjs';

const args = process.argv.slice(2);
const build = resolve(args[0] ?? 'build');
const roundsAt = args.indexOf('--rounds');
const ROUNDS = roundsAt >= 0 ? Number(args[roundsAt + 1]) : 5;
const SESSION_MS = 5000;

async function once(fps, timeline) {
  const sim = await startSim(`${build}/telescope-sim`, ['--fps', String(fps), '--no-watcher']);
  const peer = new StdioPeer(`${build}/telescope-mcp`, ['--vm-service-uri', sim.wsUri]);
  await peer.initialize();
  await callTool(peer, { action: 'status' });
  await callTool(peer, { action: 'start', timeline });
  const c0 = cpuMs(peer.child.pid);
  await sleep(SESSION_MS);
  const c1 = cpuMs(peer.child.pid);
  const t0 = process.hrtime.bigint();
  const stop = await callTool(peer, { action: 'stop' });
  const stopMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const sc = stop.msg.result.structuredContent;
  await peer.close();
  await sim.stop();
  return { cpu: (c1 - c0) / (SESSION_MS / 1000), stopMs, frames: sc?.session?.framesSeen ?? 0,
    dropped: !!sc?.session?.timelineDropped };
}

const rows = [];
for (const fps of [120, 1000, 6000]) {
  const on = [], off = [];
  for (let r = 0; r < ROUNDS; r++) {
    off.push(await once(fps, false));
    on.push(await once(fps, true));
  }
  const m = (xs, k) => median(xs.map((x) => x[k]));
  rows.push({ fps, offCpu: m(off, 'cpu'), onCpu: m(on, 'cpu'), offStop: m(off, 'stopMs'),
    onStop: m(on, 'stopMs'), dropped: on.filter((x) => x.dropped).length });
  process.stderr.write(`[timeline] ${fps} fps done\n`);
}
console.log(`\n## 9. VM timeline cost (issue 15)\n`);
console.log(`From \`tests/bench/timeline.mjs\` (part of \`make bench\`): a ${SESSION_MS / 1000} s session without the`);
console.log(`watcher, timeline on against timeline off (the baseline) in the same run, ${ROUNDS} interleaved`);
console.log('rounds, medians. CPU is the server\'s (utime + stime) per second of session.\n');
console.log('| frames/s (timeline events/s) | server CPU off → on | ratio | stop off → on | rounds with timelineDropped |');
console.log('|---|---|---|---|---|');
for (const r of rows)
  console.log(`| ${r.fps} (${r.fps * 4}) | ${r.offCpu.toFixed(0)} → ${r.onCpu.toFixed(0)} ms/s | ${(r.onCpu / Math.max(r.offCpu, 1)).toFixed(1)}× | ${r.offStop.toFixed(0)} → ${r.onStop.toFixed(0)} ms | ${r.dropped}/${ROUNDS} |`);
