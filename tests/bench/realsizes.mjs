// Issue 31's real sizes: each answer's time and the event loop's longest
// stall, with what a real debug app sends: getCpuSamples replies listing
// 30 000 compiled functions (ProfileBuilder::BuildCodeTable lists every live
// code object's function), a VM timeline recorder of 100 000 events, a full
// 4 096-frame watcher ring, and 10 apps in one DTD. The stall is the server's
// own figure: the lateness of its repeating 10 ms timer (server/loopstall.c),
// read from its debug log on stderr ("loop: longest stall so far N ms").
//
// Subjects: telescope-mcp of BUILD_DIR ("after") and, with --before DIR, the
// telescope-mcp in DIR ("before": the server before the fixes, built from a
// named commit by bench.mjs in the same run), interleaved for ROUNDS rounds;
// medians. The same sims serve both.
//
// Usage: node realsizes.mjs BUILD_DIR [--before DIR] [--before-name NAME] [--rounds N]
import { spawn, execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { StdioPeer, startSim, sleep, median, callTool } from './lib.mjs';

const args = process.argv.slice(2);
const build = resolve(args[0] ?? 'build');
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const ROUNDS = Number(opt('--rounds', 3));
const before = opt('--before', null);
const beforeName = opt('--before-name', 'before');
const FUNCTIONS = 30000, TL_EVENTS = 100000, RING = 4096, APPS = 10;
const CAPTURE_MS = 2500;
const run = promisify(execFile);
const log = (m) => process.stderr.write(`[realsizes] ${m}\n`);

// The server with its debug log read for the loop's stall lines.
function server(mcp, serverArgs) {
  const peer = new StdioPeer(mcp, [...serverArgs, '--log-level', 'debug'], { stderr: 'pipe' });
  peer.stallMs = 0;
  let buf = '';
  peer.child.stderr.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const m = /loop: longest stall (?:so far|of the run) ([0-9.]+) ms/.exec(buf.slice(0, i));
      if (m) peer.stallMs = Math.max(peer.stallMs, Number(m[1]));
      buf = buf.slice(i + 1);
    }
  });
  return peer;
}
async function timed(peer, a) {
  const t0 = process.hrtime.bigint();
  const r = await callTool(peer, a);
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, r };
}
async function finish(peer) {
  await peer.close();
  return peer.stallMs;
}
async function until(what, f, ms = 60000) {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) if (await f()) return;
  throw new Error(`realsizes: ${what} did not happen within ${ms} ms`);
}

// A capture on the janky scenario (CPU samples pulled at its close, each
// reply with 30 000 functions), a status every 100 ms while it runs, a read of the
// closed session, then a session's stop (a second pull).
async function cpu(mcp) {
  const sim = await startSim(`${build}/telescope-sim`,
    ['--fps', '60', '--scenario', 'janky', '--compiled-functions', String(FUNCTIONS)]);
  const peer = server(mcp, ['--vm-service-uri', sim.wsUri]);
  await peer.initialize();
  const status = await timed(peer, { action: 'status' });
  // A status every 100 ms while the capture runs and pulls: the slowest.
  let done = false, during = 0;
  const capP = timed(peer, { action: 'capture', durationMs: CAPTURE_MS }).finally(() => { done = true; });
  while (!done) {
    await sleep(100);
    if (!done) during = Math.max(during, (await timed(peer, { action: 'status' })).ms);
  }
  const capture = await capP;
  const read = await timed(peer, { action: 'read' });
  await callTool(peer, { action: 'start' });
  await sleep(2000);
  const stop = await timed(peer, { action: 'stop' });
  const calls = (await sim.stats()).methods?.getCpuSamples ?? 0;
  const where = capture.r.msg.result.structuredContent?.summary?.where;
  const stall = await finish(peer);
  await sim.stop();
  return { status: status.ms, during, capture: capture.ms, read: read.ms, stop: stop.ms,
    calls, named: where?.functions?.[0]?.function ?? '-', stall };
}

// A session with the VM timeline, the sim's recorder a ring of 100 000
// events that fills in the session (6 000 frames/s, 4 events a frame).
async function timeline(mcp) {
  const sim = await startSim(`${build}/telescope-sim`,
    ['--fps', '6000', '--no-watcher', '--timeline-ring', String(TL_EVENTS)]);
  const peer = server(mcp, ['--vm-service-uri', sim.wsUri]);
  await peer.initialize();
  await callTool(peer, { action: 'status' });
  await callTool(peer, { action: 'start', timeline: true });
  await until('a full timeline', async () => (await sim.stats()).timelineEvents >= TL_EVENTS);
  const read = await timed(peer, { action: 'read' });
  const stop = await timed(peer, { action: 'stop' });
  const stall = await finish(peer);
  await sim.stop();
  return { read: read.ms, stop: stop.ms, stall };
}

// A full watcher ring (4 096 records written, none drained), then a status
// and a read outside any session.
async function ring(mcp) {
  const sim = await startSim(`${build}/telescope-sim`, ['--fps', '1000', '--ring', String(RING)]);
  await until('a full ring', async () => (await sim.stats()).recordsWritten >= RING + 100);
  const peer = server(mcp, ['--vm-service-uri', sim.wsUri]);
  await peer.initialize();
  const status = await timed(peer, { action: 'status' });
  const read = await timed(peer, { action: 'read' });
  const stall = await finish(peer);
  await sim.stop();
  return { status: status.ms, read: read.ms, stall };
}

// Ten apps registered in one DTD, found through it.
async function dtd(mcp) {
  const child = spawn(`${build}/telescope-dtd`, ['--machine'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const line = await new Promise((res, rej) => {
    let b = '';
    child.stdout.on('data', (d) => { b += d; const i = b.indexOf('\n'); if (i >= 0) res(b.slice(0, i)); });
    child.once('exit', (c) => rej(new Error(`telescope-dtd exited ${c}`)));
  });
  const { uri, trusted_client_secret: secret } = JSON.parse(line).tooling_daemon_details;
  const sims = [];
  for (let i = 0; i < APPS; i++) {
    const s = await startSim(`${build}/telescope-sim`, ['--fps', '30']);
    sims.push(s);
    await run(`${build}/telescope-dtd`, ['register', '--dtd-uri', uri, '--secret', secret,
      '--vm-service-uri', s.wsUri, '--name', `app ${i}`]);
  }
  const peer = server(mcp, ['--dtd-uri', uri]);
  await peer.initialize();
  const status = await timed(peer, { action: 'status' });
  const again = await timed(peer, { action: 'status' });
  const apps = status.r.msg.result.structuredContent?.dtd?.apps?.length ?? 0;
  const stall = await finish(peer);
  for (const s of sims) await s.stop();
  child.kill('SIGTERM');
  return { status: status.ms, again: again.ms, apps, stall };
}

const subjects = [['after', `${build}/telescope-mcp`]];
if (before) subjects.unshift([beforeName, join(resolve(before), 'telescope-mcp')]);
const res = Object.fromEntries(subjects.map(([n]) => [n, { cpu: [], timeline: [], ring: [], dtd: [] }]));
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, mcp] of subjects) {
    for (const [k, f] of [['cpu', cpu], ['timeline', timeline], ['ring', ring], ['dtd', dtd]]) {
      res[name][k].push(await f(mcp));
      log(`round ${r + 1} ${name} ${k}: ${JSON.stringify(res[name][k].at(-1))}`);
    }
  }
}
const m = (xs, k) => median(xs.map((x) => x[k]));
const ms = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
const cell = (name, k, f) => ms(m(res[name][k], f));
console.log(`\n## 14. Real sizes (issue 31)\n`);
console.log(`From \`tests/bench/realsizes.mjs\` (part of \`make bench\`): the sizes a real debug app sends —`);
console.log(`getCpuSamples replies listing ${FUNCTIONS.toLocaleString('en-US').replace(/,/g, ' ')} compiled functions each (\`--compiled-functions\`, the sim's default),`);
console.log(`a VM timeline ring of ${TL_EVENTS.toLocaleString('en-US').replace(/,/g, ' ')} events filled during a session (6 000 frames/s), a full ${RING}-record watcher`);
console.log(`ring read outside a session, and ${APPS} apps in one DTD. Each answer's latency as the client sees it,`);
console.log(`and the **longest stall** of the server's event loop over the whole run: the lateness of its 10 ms`);
console.log(`timer (\`server/loopstall.c\`, the \`loop: longest stall\` debug lines). ${ROUNDS} interleaved rounds, medians, ms.`);
if (before) console.log(`"${beforeName}" is the server before the fixes of issue 31 item 4, built in the same run.`);
console.log('');
console.log('| server | CPU: status | slowest status during it | capture 2.5 s | read | stop | getCpuSamples calls | **longest stall** |');
console.log('|---|---|---|---|---|---|---|---|');
for (const [n] of subjects)
  console.log(`| ${n} | ${cell(n, 'cpu', 'status')} | ${cell(n, 'cpu', 'during')} | ${cell(n, 'cpu', 'capture')} | ${cell(n, 'cpu', 'read')} | ${cell(n, 'cpu', 'stop')} | ${m(res[n].cpu, 'calls')} | **${cell(n, 'cpu', 'stall')}** |`);
console.log('');
console.log('| server | timeline 100k: read | stop | **stall** | ring 4 096: status | read | **stall** | DTD 10 apps: status | again | apps | **stall** |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
for (const [n] of subjects)
  console.log(`| ${n} | ${cell(n, 'timeline', 'read')} | ${cell(n, 'timeline', 'stop')} | **${cell(n, 'timeline', 'stall')}** | ${cell(n, 'ring', 'status')} | ${cell(n, 'ring', 'read')} | **${cell(n, 'ring', 'stall')}** | ${cell(n, 'dtd', 'status')} | ${cell(n, 'dtd', 'again')} | ${m(res[n].dtd, 'apps')} | **${cell(n, 'dtd', 'stall')}** |`);
const worst = (n) => Math.max(...['cpu', 'timeline', 'ring', 'dtd'].map((k) => m(res[n][k], 'stall')));
console.log(`\nLongest stall, after: **${ms(worst('after'))} ms** (goal ≤ 50 ms: ${worst('after') <= 50 ? '**met**' : '**missed**'})` +
  (before ? `; ${beforeName}: ${ms(worst(beforeName))} ms (${(worst(beforeName) / Math.max(worst('after'), 0.1)).toFixed(1)}× the after).` : '.'));
