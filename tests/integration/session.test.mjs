// Issue 4 through the official SDK client against telescope-sim: sessions,
// interactions, summaries and liveness-aware diagnosis.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSim, startMcp, until, assertNoTokenLeak, sleep } from './harness.mjs';

const cleanup = [];
after(async () => { for (const c of cleanup.reverse()) await c(); assertNoTokenLeak(); });
async function setup(simArgs = [], mcpArgs = []) {
  const s = await startSim(['--seed', '7', ...simArgs]);
  cleanup.push(() => s.kill());
  const m = await startMcp(['--vm-service-uri-file', s.uriFile, ...mcpArgs]);
  cleanup.push(() => m.close());
  return { s, m };
}
// Waits until the sim has delivered every timing it owes (records stop growing).
async function settled(s) {
  let last = -1;
  return until(async () => {
    const st = await s.stats();
    const done = st.recordsWritten === last && st.recordsWritten === st.framesDrawn;
    last = st.recordsWritten;
    return done ? st : null;
  }, { everyMs: 150, what: 'sim settled' });
}

test('steady capture: every frame the sim drew in the window, none lost or duplicated', async () => {
  const { s, m } = await setup(['--scenario', 'idle', '--fps', '60']);
  const st = await m.call({ action: 'start' });
  assert.equal(st.isError, false, st.text);
  assert.equal(st.sc.session.state, 'active');
  const r0 = (await settled(s)).recordsWritten;
  await s.cmd('scenario steady');
  await s.drawn(30);
  await s.cmd('scenario idle');
  const r1 = (await settled(s)).recordsWritten;
  const stop = await m.call({ action: 'stop', detail: 'frames', limit: 1000 });
  assert.equal(stop.isError, false, stop.text);
  assert.ok(r1 - r0 >= 20, `the sim drew ${r1 - r0} frames`);
  assert.equal(stop.sc.summary.frames, r1 - r0);
  assert.equal(stop.sc.session.framesSeen, r1 - r0);
  assert.equal(stop.sc.session.framesLost, 0);
  const seqs = stop.sc.frames.map((f) => f.seq);
  assert.equal(new Set(seqs).size, seqs.length, 'no duplicates');
  assert.equal(seqs.length, r1 - r0);
  for (let i = 1; i < seqs.length; i++) assert.equal(Math.abs(seqs[i] - seqs[i - 1]), 1, 'contiguous');
  assert.equal(stop.sc.summary.jank.frames, 0, 'steady frames are within budget');
  assert.ok(stop.sc.summary.topBlocks.some((b) => b.name === 'BUILD'), 'attribution was on');
  // After stop, attribution is off again: once the reader has caught up with
  // what the watcher holds, new frames carry no blocks, and the read says why.
  await m.call({ action: 'read' });
  await s.cmd('scenario steady');
  const rd = await until(async () => { const x = await m.call({ action: 'read', waitMs: 1000, detail: 'blocks' }); return x.sc.frames?.length ? x : null; }, { what: 'frames after stop' });
  for (const f of rd.sc.frames) assert.deepEqual(f.blocks ?? {}, {});
  assert.equal(rd.sc.diagnosis?.code, 'attribution_off');
});

test('janky: jank.frames equals the injected count and worstFrames names the block', async () => {
  const { s, m } = await setup(['--scenario', 'idle']);
  await m.call({ action: 'start' });
  await settled(s);
  await s.cmd('scenario steady');
  // The app's first frame is its start-up (frameNumber 1: docs/tool.md
  // "Start-up"), never jank: inject once steady frames follow it.
  await s.drawn(3);
  await s.cmd('inject 5');
  await until(async () => (await s.stats()).jankInjected >= 5, { what: 'the 5 janky frames drawn' });
  await s.drawn(3);
  await s.cmd('scenario idle');
  await settled(s);
  const stop = await m.call({ action: 'stop' });
  assert.equal(stop.sc.summary.jank.frames, 5);
  assert.equal(stop.sc.summary.worstFrames[0].topBlocks[0].name, 'SlowWidget');
  assert.equal(stop.sc.summary.topBlocks[0].name, 'SlowWidget');
  assert.ok(stop.sc.summary.sparkline.includes('█'));
  assert.ok(Buffer.byteLength(stop.text) <= 4096, `summary is ${Buffer.byteLength(stop.text)} bytes`);
});

test('idle app: app_idle (the probe frame was drawn)', async () => {
  const { m } = await setup(['--scenario', 'idle']);
  const r = await m.call({ action: 'read' });
  assert.equal(r.isError, false);
  assert.equal(r.sc.summary.frames, 0);
  assert.equal(r.sc.diagnosis.code, 'app_idle');
  assert.ok(r.sc.diagnosis.evidence);
  // The probe cost the app exactly one frame, which the next read shows.
  const r2 = await m.call({ action: 'read' });
  assert.equal(r2.sc.summary.frames, 1);
});

test('stalled engine: engine_stalled with lifecycle as evidence', async () => {
  const { m } = await setup(['--scenario', 'stalled']);
  await m.call({ action: 'read' });
  const r = await m.call({ action: 'read' });
  assert.equal(r.isError, false);
  assert.equal(r.sc.diagnosis.code, 'engine_stalled');
  assert.ok('lifecycle' in r.sc.diagnosis.evidence || 'framesEnabled' in r.sc.diagnosis.evidence);
});

test('paused isolate: isolate_paused, nothing hangs', async () => {
  const { s, m } = await setup([], ['--call-timeout-ms', '1000']);
  await m.call({ action: 'start' });
  await s.cmd('pause');
  // A read hands out what the session drained before the pause (not an
  // error, the diagnosis says why nothing newer came); once nothing is left,
  // the paused isolate is the answer, as an error.
  const r = await until(async () => {
    const x = await m.call({ action: 'read' });
    if (x.sc?.diagnosis?.code !== 'isolate_paused') return null;
    assert.equal(x.isError, !x.sc.summary, 'isError exactly when no frames came with it');
    return x.isError ? x : null;
  }, { what: 'isolate_paused' });
  assert.equal(r.isError, true);
  // A stop while paused ends the session with what it measured and says so.
  const stop = await m.call({ action: 'stop' });
  assert.equal(stop.isError, false, stop.text);
  assert.equal(stop.sc.session.state, 'stopped');
  assert.equal(stop.sc.diagnosis.code, 'isolate_paused');
  await s.cmd('resume');
  // Attribution is switched off once the app answers again.
  await until(async () => { await m.call({ action: 'status' }); return (await s.stats()).collecting === false; }, { what: 'collecting off after resume' });
});

test('hot restart mid-session: the session continues, restarts 1, app_restarted once', async () => {
  const { s, m } = await setup();
  await m.call({ action: 'start' });
  await s.drawn(10);
  await s.cmd('restart');
  await s.drawn(20); // the new run's
  const rd = await m.call({ action: 'read' });
  const rd2 = await m.call({ action: 'read', waitMs: 500 });
  const codes = [rd.sc.diagnosis?.code, rd2.sc.diagnosis?.code];
  assert.equal(codes.filter((c) => c === 'app_restarted').length, 1, `codes ${codes}`);
  const stop = await m.call({ action: 'stop' });
  assert.equal(stop.sc.session.restarts, 1);
  assert.ok(stop.sc.summary.frames > 0);
  const st = await s.stats();
  assert.equal(st.collecting ?? true, false, 'attribution switched off on the new run at stop');
});

test('timings delayed: frames_pending', async () => {
  const { s, m } = await setup();
  await m.call({ action: 'read' });
  await s.cmd('timings-delay 3000');
  await sleep(300);
  await m.call({ action: 'read' }); // flushes what had arrived
  await sleep(200);
  const r = await m.call({ action: 'read' });
  assert.equal(r.sc.diagnosis?.code, 'frames_pending', r.text);
});

test('ring overflow: frames_lost counted exactly', async () => {
  const { s, m } = await setup(['--ring', '8', '--fps', '240', '--scenario', 'idle']);
  await m.call({ action: 'start' });
  const r0 = (await settled(s)).recordsWritten;
  await s.cmd('scenario steady');
  await s.drawn(190);
  await s.cmd('scenario idle');
  const r1 = (await settled(s)).recordsWritten;
  const stop = await m.call({ action: 'stop' });
  assert.ok(stop.sc.session.framesLost > 0, 'the drain was outrun');
  assert.equal(stop.sc.session.framesSeen + stop.sc.session.framesLost, r1 - r0);
});

test('interactions via mark: per-interaction counts', async () => {
  const { s, m } = await setup(['--scenario', 'idle']);
  await m.call({ action: 'start' });
  await settled(s);
  const counts = {};
  for (const id of ['open-menu', 'scroll-feed', 'close-menu']) {
    const mk = await m.call({ action: 'mark', interactionId: id });
    assert.equal(mk.sc.interaction.interactionId, id);
    const a = (await settled(s)).recordsWritten;
    await s.cmd('scenario steady');
    await s.drawn(15);
    await s.cmd('scenario idle');
    counts[id] = (await settled(s)).recordsWritten - a;
  }
  await m.call({ action: 'mark' });
  const stop = await m.call({ action: 'stop' });
  const per = Object.fromEntries(stop.sc.summary.interactions.map((i) => [i.interactionId, i]));
  for (const id of Object.keys(counts)) {
    assert.equal(per[id].frames, counts[id], id);
    assert.equal(per[id].linkedBy, 'agent');
  }
  const only = await m.call({ action: 'read', interactionId: 'scroll-feed', cursor: undefined });
  assert.ok(only);
});

test('trackWidgets: widget names in topBlocks, the flag restored at stop', async () => {
  const { s, m } = await setup();
  const st = await m.call({ action: 'start', trackWidgets: true });
  assert.deepEqual(st.sc.session.tracking, ['widgets']);
  await s.drawn(20);
  const stop = await m.call({ action: 'stop' });
  const names = stop.sc.summary.topBlocks.map((b) => b.name);
  assert.ok(names.some((n) => /^[A-Z][A-Za-z]+$/.test(n) && !['BUILD', 'LAYOUT', 'PAINT'].includes(n)), names.join());
  const methods = await s.methods();
  const sets = methods.filter((x) => (x.method ?? x) === 'ext.flutter.profileWidgetBuilds');
  assert.ok(sets.length >= 2, 'switched on, then restored');
});

test('cancelling a capture leaves attribution off', async () => {
  const { s, m } = await setup();
  const ac = new AbortController();
  const p = m.client.callTool({ name: 'telescope_frames', arguments: { action: 'capture', durationMs: 5000 } },
    undefined, { signal: ac.signal, timeout: 20000 });
  await until(async () => (await s.stats()).collecting === true, { what: 'capture started' });
  ac.abort();
  await assert.rejects(p);
  await until(async () => (await s.stats()).collecting === false, { what: 'attribution off again' });
  const r = await m.call({ action: 'status' });
  assert.equal(r.sc.session, undefined, 'no session left behind');
});

// A capture cancelled while its window is still opening (the watcher's start
// in flight) left that window open for ever, and attribution on in the app
// (seen under valgrind, where the gap is wide; here the sim holds start back).
test('cancelling a capture while it opens leaves attribution off', async () => {
  const { s, m } = await setup();
  await s.cmd('ext-delay 400');
  const ac = new AbortController();
  const p = m.client.callTool({ name: 'telescope_frames', arguments: { action: 'capture', durationMs: 5000 } },
    undefined, { signal: ac.signal, timeout: 20000 });
  await until(async () => (await s.stats()).heldCalls > 0, { what: 'the watcher\'s start held' });
  ac.abort();
  await assert.rejects(p);
  // The start lands; attribution comes on.
  await until(async () => (await s.stats()).starts >= 1, { what: 'the watcher started' });
  await s.cmd('ext-delay 0');
  await until(async () => (await s.stats()).collecting === false, { what: 'attribution off again' });
  const r = await m.call({ action: 'status' });
  assert.equal(r.sc.session, undefined, 'no session left behind');
});

// Each start and stop reached the app twice: the reply of the first was
// taken in (appfacts, sessions_note_reply) before the sessions knew it had
// come, and that pump sent the call again. The second start could then be
// held by a pause and run after the stop (model.sessions, seed 274497902).
test('a session switches attribution on and off with one call each', async () => {
  const { s, m } = await setup();
  for (let i = 1; i <= 2; i++) {
    assert.ok(!(await m.call({ action: 'start' })).isError);
    assert.ok(!(await m.call({ action: 'stop' })).isError);
    const st = await s.stats();
    assert.deepEqual([st.starts, st.stops, st.collecting], [i, i, false], `after session ${i}`);
  }
  assert.ok(!(await m.call({ action: 'capture', durationMs: 300 })).isError);
  const st = await s.stats();
  assert.deepEqual([st.starts, st.stops, st.collecting], [3, 3, false], 'after a capture');
});

test('capture sends progress at least every second', async () => {
  const { m } = await setup();
  const progress = [];
  const r = await m.client.callTool({ name: 'telescope_frames', arguments: { action: 'capture', durationMs: 2500 } },
    undefined, { timeout: 20000, onprogress: (p) => progress.push(p) });
  assert.ok(!r.isError);
  assert.ok(progress.length >= 2, `${progress.length} progress notifications`);
  for (let i = 1; i < progress.length; i++) assert.ok(progress[i].progress > progress[i - 1].progress);
});

test('cursors carry the run: a cursor from before a restart is answered sensibly', async () => {
  const { s, m } = await setup();
  const r1 = await m.call({ action: 'read', waitMs: 500 });
  assert.ok(r1.sc.nextCursor);
  await s.cmd('restart');
  await s.drawn(20); // the new run's
  const r2 = await m.call({ action: 'read', cursor: r1.sc.nextCursor, detail: 'frames', limit: 1000 });
  assert.equal(r2.isError, false, r2.text);
  assert.equal(r2.sc.diagnosis?.code, 'app_restarted');
  assert.ok(r2.sc.frames.every((f) => f.seq < 200), 'frames of the new run, from its start');
  const bad = await m.call({ action: 'read', cursor: 'garbage!' });
  assert.equal(bad.isError, true);
  assert.match(bad.text, /cursor/);
});

test('a read from an earlier cursor makes one call to the app and starts at that cursor', async () => {
  const { s, m } = await setup();
  const r1 = await m.call({ action: 'read', waitMs: 500 });
  assert.ok(r1.sc.nextCursor);
  const r2 = await m.call({ action: 'read', waitMs: 500 }); // moves the app's read position on
  assert.equal(r2.isError, false, r2.text);
  const seq = Number(Buffer.from(r1.sc.nextCursor, 'base64url').toString().split(':')[2]);
  const before = (await s.stats()).methods['ext.telescope.frames'];
  const r3 = await m.call({ action: 'read', cursor: r1.sc.nextCursor, detail: 'frames', limit: 100 });
  const calls = (await s.stats()).methods['ext.telescope.frames'] - before;
  assert.equal(r3.isError, false, r3.text);
  assert.equal(r3.sc.frames[0]?.seq, seq + 1, 'from the frame after the cursor');
  assert.equal(calls, 1, 'one ext.telescope.frames call');
});

test('token economy: the largest listing stays under 64 KB, a summary under 4 KB', async () => {
  const { s, m } = await setup(['--fps', '500']);
  await m.call({ action: 'start', trackWidgets: true, trackLayouts: true, trackPaints: true });
  // At 500 fps a loaded machine's sim skips the vsyncs its late timer missed
  // (a soak run saw fewer than 1200 in 10 s): it holds the next 1300 frames
  // and draws them together after their 2.6 s instead, whatever the load.
  const from = (await s.stats()).recordsWritten;
  await s.cmd('draw 1300');
  await until(async () => (await s.stats()).recordsWritten >= from + 1300, { timeoutMs: 30000, what: '1300 frames' });
  // Then it stops drawing: a read that a slow server (valgrind) took long
  // over must not see 500 fps push the frames after its cut out of the
  // session's window of 4096 before the cursor continues.
  await s.cmd('scenario idle');
  const r = await m.call({ action: 'read', detail: 'blocks', limit: 1000 });
  const bytes = Buffer.byteLength(r.text);
  assert.ok(bytes <= 65536, `read is ${bytes} bytes`);
  assert.ok(r.sc.frames.length > 0 && r.sc.frames.length < 1000, 'the listing was trimmed to fit, not dropped');
  // Delivery: the read took exactly what it listed; truncated says how many more
  // were waiting, and nextCursor continues after the last one listed.
  assert.equal(r.sc.summary.frames, r.sc.frames.length, 'the summary covers exactly the listed frames');
  assert.equal(r.sc.truncated.listed, r.sc.frames.length);
  assert.ok(r.sc.truncated.available > r.sc.truncated.listed, 'the cut is marked');
  const next = await m.call({ action: 'read', cursor: r.sc.nextCursor, detail: 'frames', limit: 1 });
  assert.equal(next.sc.frames[0].seq, r.sc.frames.at(-1).seq + 1, 'the cursor continues after the last listed');
  assert.ok(r.sc.frames.every((f, i) => i === 0 || f.seq === r.sc.frames[i - 1].seq + 1), 'oldest first, contiguous');
  const stop = await m.call({ action: 'stop' });
  assert.ok(Buffer.byteLength(stop.text) <= 4096 + 1024, `stop is ${Buffer.byteLength(stop.text)} bytes`);
  const sizes = Object.entries(stop.sc.summary).map(([k, v]) => `${k} ${JSON.stringify(v).length}`);
  assert.ok(Buffer.byteLength(JSON.stringify(stop.sc.summary)) <= 4096,
    `summary is ${Buffer.byteLength(JSON.stringify(stop.sc.summary))} bytes: ${sizes.join(', ')}\n${JSON.stringify(stop.sc.summary)}`);
});

// Issue 21 item 10: a session that starts while another tool (DevTools) is
// collecting the Flutter timeline takes the buffer over; the watcher says so
// (collectionTakenOver) and the answer warns, in the text an agent reads.
test('another tool collecting at start: the session says it took the buffer over', async () => {
  const { s, m } = await setup(['--scenario', 'steady']);
  let st = await m.call({ action: 'start' });
  let stop = await m.call({ action: 'stop' });
  assert.ok(!stop.sc.warnings?.some((w) => /took the buffer over/.test(w)), stop.text);
  assert.match(await s.cmd('foreign-collect on'), /^ok/);
  st = await m.call({ action: 'start' });
  assert.equal(st.isError, false, st.text);
  await s.drawn(10);
  stop = await m.call({ action: 'stop' });
  assert.equal(stop.isError, false, stop.text);
  assert.ok(stop.sc.warnings?.some((w) => /took the buffer over/.test(w)), JSON.stringify(stop.sc.warnings));
  assert.match(stop.text, /warning: another tool .* took the buffer over/);
});

// Issue 31 item 7: another tool switching FlutterTimeline collection off
// mid-session (one flag for the isolate) leaves the frames since without
// blocks; the watcher says collectionLost, and the stop says so.
test('another tool switches collection off mid-session: the stop says the blocks were lost', async () => {
  const { s, m } = await setup(['--scenario', 'steady']);
  let st = await m.call({ action: 'start' });
  assert.equal(st.isError, false, st.text);
  let stop = await m.call({ action: 'stop' });
  assert.ok(!stop.sc.warnings?.some((w) => /collection off/.test(w)), stop.text);
  st = await m.call({ action: 'start' });
  await until(async () => (await m.call({ action: 'read', waitMs: 1000 })).sc.summary?.frames > 0 || null,
    { what: 'frames of the session' });
  assert.match(await s.cmd('foreign-off'), /^ok/);
  stop = await m.call({ action: 'stop' });
  assert.equal(stop.isError, false, stop.text);
  assert.ok(stop.sc.warnings?.some((w) => /switched the Flutter timeline's collection off/.test(w)),
    JSON.stringify(stop.sc.warnings));
  assert.match(stop.text, /warning: another tool switched the Flutter timeline's collection off/);
  // The next start switches collection on again: no loss to report.
  st = await m.call({ action: 'start' });
  stop = await m.call({ action: 'stop' });
  assert.ok(!stop.sc.warnings?.some((w) => /collection off/.test(w)), stop.text);
});

