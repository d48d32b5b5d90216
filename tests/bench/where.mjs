// Issue 20's cost: what reading the VM's CPU samples at the close costs.
// For each frame rate, a 5 s session on telescope-sim's janky scenario with
// the profiler on (stop pulls getCpuSamples) and off (the baseline: one
// getIsolate and one refused getCpuSamples), interleaved for ROUNDS rounds;
// reported: the stop's latency, the server's CPU time spent in the stop
// (utime + stime), the getCpuSamples calls and the bytes of one reply (the
// VM's whole function table comes with each: the sim lists
// --compiled-functions 1000, as a mid-size app has). Medians.
//
// Usage: node where.mjs BUILD_DIR [--rounds N]
import { resolve } from 'node:path';
import { StdioPeer, startSim, sleep, median, callTool, cpuMs, RawVm } from './lib.mjs';

const args = process.argv.slice(2);
const build = resolve(args[0] ?? 'build');
const roundsAt = args.indexOf('--rounds');
const ROUNDS = roundsAt >= 0 ? Number(args[roundsAt + 1]) : 3;
const SESSION_MS = 5000;

async function once(fps, profiler) {
  const sim = await startSim(`${build}/telescope-sim`,
    ['--fps', String(fps), '--scenario', 'janky', '--seed', '7', '--profiler', profiler ? 'on' : 'off',
      '--compiled-functions', '1000']); // §13's size since issue 20; §14 (realsizes.mjs) the debug app's
  const peer = new StdioPeer(`${build}/telescope-mcp`, ['--vm-service-uri', sim.wsUri]);
  await peer.initialize();
  await callTool(peer, { action: 'status' });
  await callTool(peer, { action: 'start' });
  await sleep(SESSION_MS);
  const c0 = cpuMs(peer.child.pid);
  const t0 = process.hrtime.bigint();
  const stop = await callTool(peer, { action: 'stop' });
  const stopMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const c1 = cpuMs(peer.child.pid);
  const sc = stop.msg.result.structuredContent;
  const st = await sim.stats();
  // One reply's size, as a second client sees it: the last second of samples.
  let replyBytes = 0;
  if (profiler) {
    const vm = await RawVm.connect(sim.wsUri);
    const now = (await vm.call('getVMTimelineMicros', {})).msg.result.timestamp;
    const r = await vm.call('getCpuSamples', { isolateId: vm.isolateId,
      timeOriginMicros: now - 1000000, timeExtentMicros: 1000000 });
    replyBytes = r.bytes;
    vm.close();
  }
  await peer.close();
  await sim.stop();
  return { stopMs, cpu: c1 - c0, calls: st.methods?.getCpuSamples ?? 0, replyBytes,
    janky: sc?.summary?.jank?.buildMissed ?? 0, named: sc?.summary?.where?.functions?.[0]?.function ?? '-' };
}

const rows = [];
for (const fps of [60, 120]) {
  const on = [], off = [];
  for (let r = 0; r < ROUNDS; r++) {
    off.push(await once(fps, false));
    on.push(await once(fps, true));
  }
  const m = (xs, k) => median(xs.map((x) => x[k]));
  rows.push({ fps, offStop: m(off, 'stopMs'), onStop: m(on, 'stopMs'), offCpu: m(off, 'cpu'),
    onCpu: m(on, 'cpu'), calls: m(on, 'calls'), bytes: m(on, 'replyBytes'), janky: m(on, 'janky'),
    named: on.map((x) => x.named).join(', ') });
  process.stderr.write(`[where] ${fps} fps done\n`);
}
console.log(`\n## 13. Where to edit: the cost of CPU samples (issue 20)\n`);
console.log(`From \`tests/bench/where.mjs\` (part of \`make bench\`): a ${SESSION_MS / 1000} s session on the janky`);
console.log(`scenario, profiler on against profiler off (the baseline: the same stop with the pull`);
console.log(`refused) in the same run, ${ROUNDS} interleaved rounds, medians. CPU is the server's during the stop.\n`);
console.log('| frames/s | janky frames | stop off → on | ratio | server CPU in stop off → on | getCpuSamples calls | one reply (1 s) | named |');
console.log('|---|---|---|---|---|---|---|---|');
for (const r of rows)
  console.log(`| ${r.fps} | ${r.janky} | ${r.offStop.toFixed(0)} → ${r.onStop.toFixed(0)} ms | ${(r.onStop / Math.max(r.offStop, 1)).toFixed(1)}× | ${r.offCpu.toFixed(0)} → ${r.onCpu.toFixed(0)} ms | ${r.calls} | ${(r.bytes / 1024).toFixed(0)} KiB | ${r.named} |`);
