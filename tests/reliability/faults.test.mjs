// Issue 6 item 5: the fault matrix. Each case breaks the real telescope-sim
// in one way under the real telescope-mcp (driven by the official SDK
// client), asserts what the agent is told, and then asserts that the next
// normal call succeeds. Refused, 403, paused, malformed, wrong types and a
// 20 MB reply are in tests/integration/connect.test.mjs and not repeated.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import {
  registerCleanup, onCleanup, pair, sim, mcp, startSim, until, sleep, tempDir, rssOf, sampler,
  pct, report, MiB, fmtMiB, TIMEOUT_SCALE, LONG, MEASURE,
} from './lib.mjs';

registerCleanup();

const status = (m) => m.call({ action: 'status' });
// Reads until one succeeds (a reconnect may take a backoff step).
const healthyRead = (m, what) => until(async () => {
  const r = await m.call({ action: 'read' });
  return r.isError ? null : r;
}, { timeoutMs: 10000 * TIMEOUT_SCALE, what });

test('connection closed mid-reply: not_connected at once, then a reconnect serves', async () => {
  const { s, m } = await pair();
  assert.equal((await status(m)).sc.connection.state, 'connected');
  await s.cmd('ext-delay 2000');
  const t0 = Date.now();
  const inflight = m.call({ action: 'read' });
  await until(async () => (await s.stats()).heldCalls > 0, { what: 'the read is in flight' });
  const tDrop = Date.now();
  await s.cmd('drop');
  const r = await inflight;
  const failedAfter = Date.now() - tDrop;
  assert.equal(r.isError, true, r.text);
  assert.equal(r.sc.diagnosis.code, 'not_connected', r.text);
  assert.ok(failedAfter < 1000 * TIMEOUT_SCALE, `failed ${failedAfter} ms after the drop, not at the call timeout`);
  await s.cmd('ext-delay 0');
  const ok = await healthyRead(m, 'read after the drop');
  assert.equal(ok.sc.connection.state, 'connected');
  report('close-mid-reply', { failedAfterDropMs: failedAfter, totalMs: Date.now() - t0 });
});

test('a hung extension is unresponsive within --call-timeout-ms; release heals', async () => {
  const { s, m } = await pair([], ['--call-timeout-ms', '800']);
  await status(m);
  await s.cmd('ext-hang on');
  const t0 = Date.now();
  const r = await m.call({ action: 'read' });
  const ms = Date.now() - t0;
  assert.equal(r.isError, true, r.text);
  assert.equal(r.sc.diagnosis.code, 'unresponsive', r.text);
  assert.ok(ms >= 700 * TIMEOUT_SCALE, `gave up after ${ms} ms, before the timeout`);
  assert.ok(ms < 3000 * TIMEOUT_SCALE, `gave up after ${ms} ms`);
  // status still answers (it reports, it does not fail) while the app hangs.
  const st = await status(m);
  assert.equal(st.isError, false);
  await s.cmd('ext-hang off');
  await healthyRead(m, 'read after release');
  report('hang', { unresponsiveAfterMs: ms });
});

test('a 100 MB reply is rejected as invalid_reply with bounded memory', async () => {
  const { s, m } = await pair([], ['--call-timeout-ms', '20000']);
  await status(m);
  const before = rssOf(m.pid);
  await s.cmd('reply huge 100');
  const smp = sampler(() => rssOf(m.pid), 10);
  const t0 = Date.now();
  const r = await m.call({ action: 'read' });
  const ms = Date.now() - t0;
  const peak = Math.max(before, ...smp.stop());
  const afterRss = rssOf(m.pid);
  assert.equal(r.isError, true, 'a reply over 64 MiB is never served');
  assert.equal(r.sc.diagnosis.code, 'invalid_reply', r.text);
  assert.match(r.sc.diagnosis.message, /too large|malformed/);
  // The limit is 64 MiB; the reply is dropped past it, so the server never
  // holds the 100 MiB.
  if (MEASURE) assert.ok(peak - before < 72 * MiB, `peak RSS grew by ${fmtMiB(peak - before)}`);
  if (MEASURE) assert.ok(afterRss - before < 8 * MiB, `RSS after is ${fmtMiB(afterRss - before)} over the start: the buffer was not freed`);
  await s.cmd('reply normal');
  const ok = await healthyRead(m, 'read after the huge reply');
  assert.equal(ok.sc.connection.state, 'connected');
  report('huge-100MB', { rssBefore: fmtMiB(before), rssPeak: fmtMiB(peak), rssAfter: fmtMiB(afterRss), ms });
});

test('hot restart mid-capture: the capture succeeds and counts one restart', async () => {
  const { s, m } = await pair(['--fps', '60']);
  await status(m);
  const cap = m.call({ action: 'capture', durationMs: 1500 });
  await sleep(500);
  await s.cmd('restart');
  const r = await cap;
  assert.equal(r.isError, false, r.text);
  assert.equal(r.sc.session.restarts, 1, r.text);
  assert.ok(r.sc.summary.frames >= 30, `frames ${r.sc.summary.frames}`);
  const st = await s.stats();
  assert.equal(st.collecting, false, 'attribution switched off on the new run at the end');
  const ok = await healthyRead(m, 'read after the restart');
  assert.equal(ok.sc.connection.isolateId, st.isolateId);
});

test('app killed mid-capture: what was measured is kept and the diagnosis says the app went away; a new app on the URI file is picked up', async () => {
  const uriFile = join(tempDir(), 'uri');
  const s1 = await startSim([], { uriFile });
  const m = await mcp(['--vm-service-uri-file', uriFile]);
  await status(m);
  const t0 = Date.now();
  const cap = m.call({ action: 'capture', durationMs: 3000 });
  await sleep(500);
  await s1.kill('SIGKILL');
  const r = await cap;
  const ms = Date.now() - t0;
  // The capture runs out its window (the app might come back), then its
  // stop finds the app gone: answered within the window plus a call timeout.
  assert.ok(ms < (3000 + 3000) * TIMEOUT_SCALE + 1000, `capture answered after ${ms} ms`);
  // A session outlives its app (issue 11): the frames of the first 500 ms
  // are the answer, not an error, and the diagnosis says why it ends early.
  assert.equal(r.isError, false, r.text);
  assert.ok(r.sc.summary.frames > 0, 'the frames measured before the kill are kept');
  assert.equal(r.sc.session.state, 'stopped');
  assert.equal(r.sc.diagnosis.code, 'not_connected', r.text);
  assert.match(r.sc.diagnosis.message + ' ' + r.sc.diagnosis.hint, /app|connect/i);
  // The server is still serving: status answers at once.
  const st = await status(m);
  assert.equal(st.sc.connection.state, 'not_connected');
  const s2 = await sim([], { uriFile });
  const ok = await healthyRead(m, 'reconnect to the new app');
  assert.equal(ok.sc.connection.isolateId, (await s2.stats()).isolateId);
  report('killed-mid-capture', { captureAnsweredAfterMs: ms });
});

test('extension error -32000: a clear isError, then normal service', async () => {
  const { s, m } = await pair();
  await status(m);
  await s.cmd('ext-error on');
  const r = await m.call({ action: 'read' });
  assert.equal(r.isError, true, r.text);
  assert.equal(r.sc.diagnosis.code, 'watcher_error');
  // The detail names the method's error code and the app's own exception.
  assert.match(r.sc.diagnosis.evidence.detail, /-32000/);
  assert.match(r.sc.diagnosis.evidence.detail, /simulated watcher failure/);
  assert.ok(Buffer.byteLength(r.text) < 4096, `${Buffer.byteLength(r.text)} bytes of error text`);
  // status reports the state rather than failing (DESIGN 4).
  const st = await status(m);
  assert.equal(st.isError, false, st.text);
  assert.equal(st.sc.diagnosis.code, 'watcher_error');
  assert.equal(st.sc.connection.state, 'connected');
  await s.cmd('ext-error off');
  await healthyRead(m, 'read after ext-error off');
});

test('2 s replies under a 3 s call timeout: slow but correct', async () => {
  const { s, m } = await pair(['--scenario', 'steady'], ['--call-timeout-ms', '3000']);
  await status(m);
  await s.cmd('ext-delay 2000');
  const t0 = Date.now();
  const r = await m.call({ action: 'read' });
  const ms = Date.now() - t0;
  assert.equal(r.isError, false, r.text);
  assert.ok(r.sc.summary.frames > 0, r.text);
  assert.ok(ms >= 2000, `answered in ${ms} ms: the delay was not in the path`);
  await s.cmd('ext-delay 0');
  await healthyRead(m, 'read after the delay is lifted');
  report('slow-2s', { readMs: ms });
});

for (const stream of ['isolate', 'extension']) {
  test(`10 000 events a second on the ${stream} stream: prompt answers, bounded memory`, async () => {
    const { s, m } = await pair();
    await status(m);
    // A warm-up, so the baseline includes the allocator's steady state.
    for (let i = 0; i < 20; i++) await status(m);
    const before = rssOf(m.pid);
    const s0 = (await s.stats()).floodSent;
    // Under valgrind the server parses ~20x slower than 10 000 events/s
    // arrive; there the case checks correctness at 500/s.
    const rate = MEASURE ? 10000 : 500;
    await s.cmd(`flood ${rate} ${stream}`);
    const lat = [];
    const end = Date.now() + (LONG ? 60000 : 3000);
    while (Date.now() < end) {
      const t0 = Date.now();
      const r = await status(m);
      lat.push(Date.now() - t0);
      assert.equal(r.sc.connection.state, 'connected');
      await sleep(50);
    }
    const rd = await m.call({ action: 'read' });
    assert.equal(rd.isError, false, rd.text);
    await s.cmd('flood 0');
    const sent = (await s.stats()).floodSent - s0;
    const afterRss = rssOf(m.pid);
    assert.ok(sent >= rate * (LONG ? 40 : 2), `the sim posted only ${sent} events`);
    // Prompt: the typical status is unaffected; none waits a second behind
    // the events (2 s allows for a busy shared machine: one run saw 961 ms).
    assert.ok(pct(lat, 0.5) < 100 * TIMEOUT_SCALE, `status p50 ${pct(lat, 0.5)} ms during the flood`);
    assert.ok(Math.max(...lat) < 2000 * TIMEOUT_SCALE, `a status took ${Math.max(...lat)} ms during the flood`);
    if (MEASURE) assert.ok(afterRss - before < 16 * MiB, `RSS grew by ${fmtMiB(afterRss - before)}`);
    report(`flood-${stream}`, { eventsPosted: sent, statusCalls: lat.length, p50Ms: pct(lat, 0.5),
      maxMs: Math.max(...lat), rssBefore: fmtMiB(before), rssAfter: fmtMiB(afterRss) });
  });
}
