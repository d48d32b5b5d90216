// Sections that need a running app: telescope-mcp and a raw VM-service client
// against the same telescope-sim, in the same run.
//   overhead  — section 2: latency of status and read, through telescope-mcp
//               and as the bare ext.telescope.frames call over a WebSocket.
//   sustain   — section 3b: the highest frame rate a session takes with no
//               frame lost, for telescope-mcp and for a raw draining client.
//   economy   — section 5: bytes of text of `stop` (detail summary) after
//               sessions of 1 k and 100 k frames, against the records' bytes.
import { StdioPeer, startSim, RawVm, sleep, pct, callTool, cpuMs } from './lib.mjs';

const SIM_ARGS = ['--blocks', '20'];
const us = (a, b) => Number(b - a) / 1e3;

async function mcpPeer(mcp, wsUri) {
  const peer = new StdioPeer(mcp, ['--vm-service-uri', wsUri]);
  await peer.initialize();
  return peer;
}

async function tool(peer, args) {
  const r = await callTool(peer, args);
  const res = r.msg.result;
  if (!res || res.isError) throw new Error(`telescope_frames ${JSON.stringify(args)} failed: ${JSON.stringify(r.msg).slice(0, 400)}`);
  return { res, r };
}

// ---- section 2 -------------------------------------------------------------

export async function overhead({ mcp, sim, rounds, calls = 50 }) {
  // The app draws 100 frames after the first read, then goes idle: every
  // read below (telescope-mcp from the cursor of that first read, raw from
  // its seq) returns the same 100 records of 20 blocks, and none of them
  // is an empty read (which telescope-mcp would diagnose by probing the app).
  const s = await startSim(sim, ['--fps', '200', '--timings-batch-ms', '10', '--scenario', 'idle', ...SIM_ARGS]);
  const peer = await mcpPeer(mcp, s.wsUri);
  const vm = await RawVm.connect(s.wsUri);
  await tool(peer, { action: 'status' });
  const first = await tool(peer, { action: 'read' });
  const cursor = first.res.structuredContent.nextCursor;
  // The raw reads start where the cursor points (v1:<runId>:<seq>:<check>,
  // base64url): the empty first read probed the idle app, which drew a frame.
  const since = Number(Buffer.from(cursor, 'base64url').toString().split(':')[2]);
  // Attribution on (a session would do it), so the records carry their blocks.
  await vm.frames({ action: 'start' });
  await s.cmd('scenario steady');
  while ((await s.stats()).recordsWritten < since + 100) await sleep(5);
  await s.cmd('scenario idle');
  // Until the last drawn frame's timing is in (the count stops moving).
  for (let prev = -1, now; (now = (await s.stats()).recordsWritten) !== prev; prev = now) await sleep(100);
  // The raw reads ask for the wire form telescope-mcp asks for (protocol 3),
  // so both move and parse the same bytes.
  const raw1 = await vm.frames({ action: 'read', since, limit: 500, protocol: '3' });
  const n = raw1.msg.result.records.length;
  const viaMcp = await tool(peer, { action: 'read', cursor });
  if (viaMcp.res.structuredContent.summary?.frames !== n)
    throw new Error(`read via telescope-mcp saw ${viaMcp.res.structuredContent.summary?.frames} frames, raw ${n}`);
  const kinds = {
    'status via telescope-mcp': async () => { const t = process.hrtime.bigint(); const { r } = await tool(peer, { action: 'status' }); return us(t, r.at); },
    'status, raw WebSocket': async () => { const t = process.hrtime.bigint(); const r = await vm.frames({ action: 'status' }); if (!r.msg.result) throw new Error('raw status failed'); return us(t, r.at); },
    'read via telescope-mcp': async () => { const t = process.hrtime.bigint(); const { r } = await tool(peer, { action: 'read', cursor }); return us(t, r.at); },
    'read, raw WebSocket': async () => {
      const t = process.hrtime.bigint();
      const r = await vm.frames({ action: 'read', since, limit: 500, protocol: '3' });
      if (r.msg.result?.records?.length !== n) throw new Error('raw read failed');
      return us(t, r.at);
    },
  };
  for (const f of Object.values(kinds)) for (let i = 0; i < 5; i++) await f(); // warm both paths
  // The VM-service calls one telescope-mcp call makes (the sim counts methods).
  const vmCalls = {};
  for (const [name, args] of [['status', { action: 'status' }], ['read', { action: 'read', cursor }]]) {
    const before = (await s.stats()).methods;
    for (let i = 0; i < 10; i++) await tool(peer, args);
    const after = (await s.stats()).methods;
    const per = {};
    for (const k of Object.keys(after)) if (after[k] !== (before[k] ?? 0)) per[k] = (after[k] - (before[k] ?? 0)) / 10;
    vmCalls[name] = per;
  }
  const res = Object.fromEntries(Object.keys(kinds).map((k) => [k, { p50: [], p99: [], cpu: { mcp: 0, sim: 0, node: 0 } }]));
  const names = Object.keys(kinds);
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? [...names].reverse() : names; // interleaved, alternating order
    for (const name of order) {
      const xs = [];
      const m0 = cpuMs(peer.child.pid), s0 = cpuMs(s.child.pid), n0 = process.cpuUsage();
      for (let i = 0; i < calls; i++) xs.push(await kinds[name]());
      const n1 = process.cpuUsage(n0), c = res[name].cpu;
      c.mcp += cpuMs(peer.child.pid) - m0;
      c.sim += cpuMs(s.child.pid) - s0;
      c.node += (n1.user + n1.system) / 1000;
      res[name].p50.push(pct(xs, 0.5));
      res[name].p99.push(pct(xs, 0.99));
    }
  }
  for (const k of names) for (const p of ['mcp', 'sim', 'node']) res[k].cpu[p] /= rounds * calls;
  vm.close();
  await peer.close();
  await s.stop();
  return { res, vmCalls, calls, records: n, rawBytes: raw1.bytes };
}

// ---- section 3b ------------------------------------------------------------

// One session of `seconds` at fps: frames the app wrote, seen, lost.
async function sustainMcp(mcp, sim, fps, seconds) {
  const s = await startSim(sim, ['--fps', String(fps), ...SIM_ARGS]);
  const peer = await mcpPeer(mcp, s.wsUri);
  await tool(peer, { action: 'start' });
  const w0 = (await s.stats()).recordsWritten, t0 = Date.now();
  await sleep(seconds * 1000);
  await s.cmd('scenario idle');
  const w1 = (await s.stats()).recordsWritten, t1 = Date.now();
  await sleep(250); // the last timings batch
  const { res } = await tool(peer, { action: 'stop' });
  const written = (await s.stats()).recordsWritten;
  await peer.close();
  await s.stop();
  const sess = res.structuredContent.session;
  return { seen: sess.framesSeen, lost: sess.framesLost, written, rate: (w1 - w0) / ((t1 - t0) / 1000) };
}

// The baseline: a client reading the watcher itself, as a session does
// (every 200 ms, 500 records a call while `more`), counting the gaps.
async function sustainRaw(sim, fps, seconds) {
  const s = await startSim(sim, ['--fps', String(fps), ...SIM_ARGS]);
  const vm = await RawVm.connect(s.wsUri);
  const st = (await vm.frames({ action: 'start' })).msg.result;
  let last = st.lastSeq, seen = 0, lost = 0;
  let deadline = Infinity; // a reader that cannot keep up stops at the end anyway
  const drain = async () => {
    while (Date.now() < deadline) {
      const r = (await vm.frames({ action: 'read', since: last, limit: 500 })).msg.result;
      if (r.firstSeq > last + 1) lost += r.firstSeq - last - 1;
      seen += r.records.length;
      if (r.records.length) last = r.records.at(-1).seq;
      if (!r.more) return;
    }
  };
  const w0 = (await s.stats()).recordsWritten, t0 = Date.now();
  deadline = t0 + seconds * 1000;
  while (Date.now() < deadline) { await drain(); await sleep(200); }
  await s.cmd('scenario idle');
  const w1 = (await s.stats()).recordsWritten, t1 = Date.now();
  await sleep(250);
  deadline = Date.now() + 2000;
  await drain();
  const written = (await s.stats()).recordsWritten;
  vm.close();
  await s.stop();
  return { seen, lost, written, rate: (w1 - w0) / ((t1 - t0) / 1000) };
}

export async function sustain({ mcp, sim, rounds, levels = [2000, 4000], seconds = 3 }) {
  const subjects = {
    'telescope-mcp session': (fps) => sustainMcp(mcp, sim, fps, seconds),
    'raw WebSocket reader': (fps) => sustainRaw(sim, fps, seconds),
  };
  const res = {};
  for (const name of Object.keys(subjects)) res[name] = Object.fromEntries(levels.map((l) => [l, []]));
  for (let r = 0; r < rounds; r++)
    for (const fps of r % 2 ? [...levels].reverse() : levels)
      for (const [name, f] of Object.entries(subjects)) res[name][fps].push(await f(fps));
  return { res, levels, seconds };
}

// ---- section 5 -------------------------------------------------------------

async function economyOnce(mcp, sim, frames, fps) {
  // A ring that holds the whole session: the app draws faster than a drain
  // through the sim can take 20-block records here, and the frames are kept
  // until the session's drains (and stop's last one) have them all.
  const ring = frames > 4096 ? ['--ring', String(Math.min(1 << 17, frames))] : [];
  const s = await startSim(sim, ['--fps', String(fps), ...ring, ...SIM_ARGS]);
  const peer = await mcpPeer(mcp, s.wsUri);
  await tool(peer, { action: 'start' });
  const w0 = (await s.stats()).recordsWritten;
  while ((await s.stats()).recordsWritten - w0 < frames) await sleep(frames > 5000 ? 100 : 10);
  await s.cmd('scenario idle');
  await sleep(250);
  const { res } = await tool(peer, { action: 'stop', detail: 'summary' });
  const text = res.content.find((c) => c.type === 'text')?.text ?? '';
  // What the same frames are as records: the watcher's own reply bytes.
  const vm = await RawVm.connect(s.wsUri);
  const last = (await vm.frames({ action: 'status' })).msg.result.lastSeq;
  const raw = await vm.frames({ action: 'read', since: Math.max(0, last - 500), limit: 500 });
  const perRecord = raw.bytes / raw.msg.result.records.length;
  vm.close();
  await peer.close();
  await s.stop();
  const sess = res.structuredContent.session;
  return { textBytes: Buffer.byteLength(text), seen: sess.framesSeen, lost: sess.framesLost, rawBytes: perRecord * sess.framesSeen };
}

export async function economy({ mcp, sim, rounds, sizes = [1000, 100000], fps = { 1000: 2000, 100000: 8000 } }) {
  const res = Object.fromEntries(sizes.map((n) => [n, []]));
  for (let r = 0; r < rounds; r++)
    for (const n of r % 2 ? [...sizes].reverse() : sizes) res[n].push(await economyOnce(mcp, sim, n, fps[n]));
  return { res, sizes, fps };
}
