// Issue 6 item 6: load against the real telescope-sim. 1 000 tools/call in
// flight at once through the official SDK client, and 100 000 calls through
// the lean line client (the SDK's per-message validation would make that
// run minutes long; the server and the app are the same real binaries).
// RSS and open file descriptors are sampled and asserted flat.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  registerCleanup, pair, sim, startLean, scOf, rssOf, fdsOf, pct, report, MiB, fmtMiB, LONG,
  WRAPPER, MEASURE, sleep,
} from './lib.mjs';

registerCleanup();

test('1 000 tools/call in flight at once (status and read mixed), four rounds: every one answered', async () => {
  const { s, m } = await pair(['--fps', '60']);
  await m.call({ action: 'status' });
  const rss0 = rssOf(m.pid), fds0 = fdsOf(m.pid);
  const N = 1000, rounds = [];
  for (let round = 0; round < 4; round++) {
    const t0 = Date.now();
    const lat = [];
    const rs = await Promise.all(Array.from({ length: N }, (_, i) => {
      const t = Date.now();
      return m.call({ action: i % 2 ? 'read' : 'status' }).then((r) => { lat.push(Date.now() - t); return r; });
    }));
    const ms = Date.now() - t0;
    assert.equal(rs.length, N);
    rs.forEach((r, i) => {
      assert.equal(r.isError, false, `call ${i}: ${r.text.slice(0, 300)}`);
      assert.equal(r.sc.action, i % 2 ? 'read' : 'status');
      assert.equal(r.sc.connection.state, 'connected');
    });
    rounds.push({ ms, callsPerSec: Math.round(N / (ms / 1000)), p50Ms: pct(lat, 0.5), p99Ms: pct(lat, 0.99),
      rss: rssOf(m.pid), fds: fdsOf(m.pid) });
  }
  // Every read was answered from the watcher: its ext calls reached the sim.
  const st = await s.stats();
  assert.ok(st.methods['ext.telescope.frames'] >= 4 * N / 2, JSON.stringify(st.methods));
  for (const r of rounds) assert.equal(r.fds, fds0, 'no descriptor left open');
  // 1 000 replies in flight take memory the allocator keeps as a high-water
  // mark, how much depending on how many were in flight at the peak (seen:
  // 12 MiB, and once 46 MiB, then flat for 8 more rounds). Bounded, not
  // flat: leaks are what the 100 000-call run and valgrind look for.
  if (MEASURE) {
    const trail = rounds.map((r) => fmtMiB(r.rss)).join(' → ');
    for (const r of rounds) assert.ok(r.rss < rss0 + 64 * MiB, `RSS ${fmtMiB(rss0)} → ${trail}`);
  }
  report('concurrent-1000', { rssStart: fmtMiB(rss0), rounds: rounds.map((r) => ({ ...r, rss: fmtMiB(r.rss) })) });
});

// Drives `total` status calls with `window` requests in flight, sampling the
// server's RSS and fds every `every` calls.
async function sequential(lean, total, window, every) {
  const lat = new Float64Array(total);
  const samples = [];
  let sent = 0, done = 0, bad = null;
  const t0 = performance.now();
  await new Promise((resolve) => {
    const one = () => {
      const i = sent++;
      const t = performance.now();
      lean.call({ action: 'status' }).then((reply) => {
        lat[i] = performance.now() - t;
        const { sc, isError } = scOf(reply);
        if (!bad && (isError || sc.connection.state !== 'connected')) bad = { i, reply };
        done++;
        if (done % every === 0) samples.push({ calls: done, rss: rssOf(lean.pid), fds: fdsOf(lean.pid) });
        if (sent < total) one();
        else if (done === total) resolve();
      });
    };
    for (let k = 0; k < window && sent < total; k++) one();
  });
  return { lat: Array.from(lat), samples, ms: performance.now() - t0, bad };
}

test(`${LONG ? '1 000 000' : '100 000'} status calls, 32 in flight: all answered, RSS and fds flat`, async () => {
  const s = await sim(['--fps', '60']);
  const lean = await startLean(['--vm-service-uri-file', s.uriFile]);
  const total = WRAPPER.length ? 2000 : LONG ? 1000000 : 100000;
  const every = total / 20;
  const { lat, samples, ms, bad } = await sequential(lean, total, 32, every);
  assert.equal(bad, null, `a call failed: ${JSON.stringify(bad)?.slice(0, 500)}`);
  assert.equal(lean.inFlight, 0);
  // Flat: from the sample after warm-up (10 %) to the last, RSS within
  // 10 % + 2 MiB and the same number of descriptors at every sample.
  const warm = samples[1], last = samples[samples.length - 1];
  if (MEASURE) assert.ok(last.rss <= warm.rss * 1.1 + 2 * MiB,
    `RSS grew ${fmtMiB(warm.rss)} → ${fmtMiB(last.rss)}: ${samples.map((x) => fmtMiB(x.rss)).join(' ')}`);
  // A sample may catch a descriptor in use for a moment (the URI file is
  // read on each re-sync), the warm-up sample too (CI saw 14 there, 13 once
  // idle): the steady count is the fewest any sample after warm-up saw. At
  // most 2 over it; once idle, exactly it (a leak raises every later sample
  // and the idle count above the early ones).
  const fds = samples.slice(1).map((x) => x.fds);
  const steady = Math.min(...fds);
  for (const x of samples.slice(1)) assert.ok(x.fds <= steady + 2, `fds at ${x.calls}: ${x.fds}, steady ${steady}: ${fds.join(' ')}`);
  await sleep(200);
  assert.equal(fdsOf(lean.pid), steady, `descriptors once idle (samples: ${fds.join(' ')})`);
  const st = await s.stats();
  assert.equal(st.connections, 1, 'one WebSocket to the app throughout');
  report('sequential', { calls: total, seconds: +(ms / 1000).toFixed(1),
    callsPerSec: Math.round(total / (ms / 1000)), p50Ms: +pct(lat, 0.5).toFixed(2),
    p99Ms: +pct(lat, 0.99).toFixed(2), maxMs: +lat.reduce((a, b) => (b > a ? b : a), 0).toFixed(1),
    rssWarm: fmtMiB(warm.rss), rssLast: fmtMiB(last.rss), fds: last.fds,
    simMethods: st.methods });
});
