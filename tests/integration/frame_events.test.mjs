// Issue 15 through the official SDK client against telescope-sim: an app
// without the watcher is measured from its Flutter.Frame events (exact
// counts, percentiles, jank, idle vs stalled), and the VM timeline's GC
// pauses and shader compilation come out as the first finding; the VM's
// recorded streams are put back at stop and clearVMTimeline is never sent.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSim, startMcp, assertNoTokenLeak, sleep, until, TIMEOUT_SCALE } from './harness.mjs';
import { Client } from '../sim/lib.mjs';

const cleanup = [];
after(async () => { for (const c of cleanup.reverse()) await c(); assertNoTokenLeak(); });

async function setup(simArgs) {
  const s = await startSim(['--seed', '11', ...simArgs]);
  cleanup.push(() => s.kill());
  const m = await startMcp(['--vm-service-uri-file', s.uriFile]);
  cleanup.push(() => m.close());
  return { s, m };
}

const names = (methods) => methods.map((x) => (typeof x === 'string' ? x : x.method));

test('no watcher: a capture counts every frame once, with percentiles and jank', async () => {
  const { s, m } = await setup(['--no-watcher', '--scenario', 'janky']);
  const st = await m.call({ action: 'status' });
  assert.equal(st.isError, false, st.text);
  assert.equal(st.sc.connection.frameSource, 'frameEvents');
  assert.equal(st.sc.watcher.source, 'frameEvents');
  const before = await s.stats();
  const r = await m.call({ action: 'capture', durationMs: 1500, detail: 'frames', limit: 1000 });
  const after = await s.stats();
  assert.equal(r.isError, false, r.text);
  const { session, summary, frames } = r.sc;
  assert.ok(session.framesSeen >= 60, `a 1.5 s capture at 60 fps saw ${session.framesSeen} frames`);
  assert.equal(frames.length, session.framesSeen, 'every frame of the window is listed');
  assert.equal(summary.frames, session.framesSeen);
  assert.equal(session.framesLost, 0);
  // Each frame once, in order, none the sim did not draw.
  for (let i = 1; i < frames.length; i++) {
    assert.equal(frames[i].seq, frames[i - 1].seq + 1);
    assert.equal(frames[i].frameNumber, frames[i - 1].frameNumber + 1, 'the sim numbers every frame it reports');
  }
  assert.ok(frames[0].frameNumber > before.lastFrameNumber - 30, 'no frame from long before the capture');
  assert.ok(frames.at(-1).frameNumber <= after.lastFrameNumber);
  for (const f of frames) assert.equal(f.blocks, undefined, 'frame events carry no blocks');
  // The summary is the frames' own: jank and percentiles recomputed here.
  const budget = summary.budgetUs;
  const janky = frames.filter((f) => f.buildUs > budget || f.rasterUs > budget).length;
  assert.equal(summary.jank.frames, janky);
  assert.ok(janky > 0, 'the janky scenario janks');
  const builds = frames.map((f) => f.buildUs).sort((a, b) => a - b);
  assert.equal(summary.buildUs.max, builds.at(-1));
  // No blocks: the UI thread's build time is the cause; adding the watcher
  // is advice, in next, never a finding.
  assert.equal(summary.findings[0].kind, 'build', JSON.stringify(summary.findings));
  assert.deepEqual(summary.next.map((n) => n.kind), ['watcher']);
  assert.ok(!summary.findings.some((f) => f.kind === 'watcher' || f.kind === 'tracking'));
  assert.ok(r.sc.warnings.some((w) => /no telescope watcher/.test(w)), r.text);
  assert.ok(r.text.length < 2000, `${r.text.length} bytes of text`);
});

test('no watcher: idle and stalled are told apart with Flutter\'s own frame request', async () => {
  for (const [scenario, code] of [['idle', 'app_idle'], ['stalled', 'engine_stalled']]) {
    const { s, m } = await setup(['--no-watcher', '--scenario', scenario]);
    await m.call({ action: 'status' });
    await sleep(300);
    const r = await m.call({ action: 'read' });
    assert.equal(r.sc.diagnosis?.code, code, `${scenario}: ${r.text}`);
    assert.ok(names(await s.methods()).includes('ext.ui.window.scheduleFrame'), 'the probe asked Flutter for a frame');
  }
});

test('no watcher in a profile build: frames still measured; no probe, so no idle/stalled verdict', async () => {
  // Profile builds register no ext.ui.window.scheduleFrame (debug only,
  // docs/flutter-apis.md), but they are Flutter apps all the same.
  const { s: s1, m: m1 } = await setup(['--no-watcher', '--build-mode', 'profile']);
  const r1 = await m1.call({ action: 'capture', durationMs: 500 });
  assert.equal(r1.isError, false, r1.text);
  assert.ok(r1.sc.session.framesSeen > 10, r1.text);
  assert.equal(r1.sc.connection.frameSource, 'frameEvents');
  const { s, m } = await setup(['--no-watcher', '--build-mode', 'profile', '--scenario', 'idle']);
  await m.call({ action: 'status' });
  await sleep(300);
  const r = await m.call({ action: 'read' });
  assert.equal(r.isError, false, r.text);
  assert.equal(r.sc.diagnosis?.code, 'no_frames', r.text);
  assert.equal(r.sc.diagnosis.evidence.probe, 'unavailable');
  assert.ok(names(await s.methods()).includes('ext.ui.window.scheduleFrame'), 'the probe was tried and refused');
  assert.ok(names(await s1.methods()).length > 0);
});

// The causes: GC pauses in build, shader compilation in raster, both with
// and without the watcher.
for (const watcher of [false, true]) {
  for (const [scenario, kind, field] of [['gc', 'gc', 'gcUs'], ['shader', 'shader', 'shaderUs']]) {
    test(`${scenario} jank comes out as the first finding (${watcher ? 'watcher' : 'no watcher'})`, async () => {
      // With the watcher, the app records only Dart: the session adds GC and
      // Embedder and puts Dart alone back. Without it, Flutter's default
      // set already holds both: nothing is set or restored.
      const { s, m } = await setup([...(watcher ? ['--timeline-streams', 'Dart'] : ['--no-watcher']),
        '--scenario', scenario]);
      const st0 = await s.stats();
      await m.call({ action: 'status' });
      const r = await m.call({ action: 'capture', durationMs: 2500, trackWidgets: true });
      assert.equal(r.isError, false, r.text);
      assert.equal(r.sc.session.timeline, 'on', r.text);
      assert.equal(r.sc.session.timelineDropped, undefined, 'every pull found the last one\'s events');
      // The cause first; or, when a janky frame of a loaded run had none of
      // it (a valgrind run: GC in 11 of 12), the phase that holds it first
      // and the cause right after it, explaining at least 80 % of the jank
      // (docs/tool.md: a specific cause leads only within 90 % of it).
      const fs = r.sc.summary.findings;
      const f = fs[0]?.kind === kind ? fs[0] : fs[1];
      assert.equal(f?.kind, kind, `first finding: ${JSON.stringify(fs)}`);
      if (f !== fs[0]) {
        assert.ok(['phase', 'build', 'raster'].includes(fs[0].kind) && f.explains >= 0.8,
          `the ${kind} cause is behind ${fs[0].kind} ${fs[0].name}: ${JSON.stringify(fs)}`);
      }
      assert.ok(f.jankFrames > 0 && f.perJankFrameUs > f.perOtherFrameUs, JSON.stringify(f));
      assert.ok(r.sc.summary.worstFrames.some((w) => w[field] > 0), JSON.stringify(r.sc.summary.worstFrames));
      assert.match(r.text, new RegExp(`cause ${f === fs[0] ? 1 : 2}: [^\\n]*\\(${kind}`), r.text);
      // The VM's timeline flags are as they were, and the shared buffer was
      // never cleared.
      const st1 = await s.stats();
      assert.deepEqual(st1.recordedStreams, st0.recordedStreams);
      const sent = names(await s.methods());
      assert.deepEqual(st1.recordedStreams, watcher ? ['Dart'] : ['Dart', 'Embedder', 'GC']);
      assert.equal(sent.filter((x) => x === 'setVMTimelineFlags').length, watcher ? 2 : 0,
        watcher ? 'set once, restored once' : 'nothing to set');
      assert.ok(sent.includes('getVMTimeline'));
      assert.ok(!sent.includes('clearVMTimeline'));
    });
  }
}

// A slow app (or a slow link, or a loaded machine: a valgrind run once ranked
// raster 0.72 before shader 0.29 here) takes a while to switch tracking on
// while it keeps drawing. The frames a capture counts must all have been
// drawn while the timeline recorded them: a shader burst drawn before the
// streams were set would read as raster work nothing explains.
test('a capture whose switch is slow in coming still has the timeline of every frame it counts', async () => {
  const { s, m } = await setup(['--timeline-streams', 'Dart', '--scenario', 'shader']);
  await m.call({ action: 'status' });
  // The switch is held until the app has drawn 100 frames more: a whole
  // burst of three shader frames (one every 91) comes while it is pending.
  await s.cmd('flutter-ext-hang on');
  const from = (await s.stats()).lastFrameNumber;
  const sent = (await s.methods()).length;
  const capture = m.call({ action: 'capture', durationMs: 500, trackWidgets: true, detail: 'frames', limit: 1000 });
  await until(async () => names((await s.methods()).slice(sent)).some((x) => x.startsWith('ext.flutter.')),
    { timeoutMs: 10000, what: 'the tracking switch sent' });
  await until(async () => (await s.stats()).lastFrameNumber >= from + 100, { timeoutMs: 20000, what: '100 frames drawn' });
  await s.cmd('flutter-ext-hang off');
  const r = await capture;
  assert.equal(r.isError, false, r.text);
  assert.equal(r.sc.session.timeline, 'on', r.text);
  const budget = r.sc.summary.budgetUs;
  const janky = r.sc.frames.filter((f) => f.rasterUs > budget);
  assert.ok(janky.length >= 3, `a whole burst of shader frames: ${JSON.stringify(janky)}`);
  const fs = r.sc.summary.findings;
  assert.equal(fs[0]?.kind, 'shader', `first finding: ${JSON.stringify(fs)}`);
  // At most the frames in flight when the streams were set (their records
  // come after the begin) miss their events: the tie bar of the test above.
  assert.ok(fs[0].explains >= 0.8, `shader compilation explains the raster jank: ${JSON.stringify(fs)}`);
});

// Another client (DevTools) changes the recorded streams during a session:
// stop takes away only the streams the session added, and keeps the rest of
// what the other client did.
for (const [what, theirs, want, sets] of [
  ['switches API on', (cur) => [...cur, 'API'], ['API', 'Dart'], 3],
  ['switches GC and Embedder off', () => ['Dart'], ['Dart'], 2],
]) {
  test(`stop sets back only its own timeline streams when another client ${what}`, async () => {
    const { s, m } = await setup(['--timeline-streams', 'Dart', '--scenario', 'gc']);
    const r0 = await m.call({ action: 'start' });
    assert.equal(r0.isError, false, r0.text);
    await until(async () => (await s.stats()).recordedStreams.includes('GC'), { what: 'GC recorded' });
    const other = await Client.connect(s.wsUri);
    cleanup.push(() => other.close());
    const cur = (await other.call('getVMTimelineFlags')).recordedStreams;
    assert.deepEqual([...cur].sort(), ['Dart', 'Embedder', 'GC']);
    await other.call('setVMTimelineFlags', { recordedStreams: theirs(cur) });
    const r1 = await m.call({ action: 'stop' });
    assert.equal(r1.isError, false, r1.text);
    assert.deepEqual([...(await s.stats()).recordedStreams].sort(), want);
    const sent = names(await s.methods());
    assert.equal(sent.filter((x) => x === 'setVMTimelineFlags').length, sets,
      'ours on, theirs, and ours off only if one of ours was still on');
  });
}

// A VM too busy to answer the stop's getVMTimelineFlags within the call
// timeout: no set is sent (it would wait as long again), so the streams the
// session added stay recorded, and the stop that waited says so.
test('a timeline that could not be set back at stop is said in that stop', async () => {
  const s = await startSim(['--seed', '11', '--timeline-streams', 'Dart', '--scenario', 'gc']);
  cleanup.push(() => s.kill());
  const m = await startMcp(['--vm-service-uri-file', s.uriFile, '--call-timeout-ms', '700']);
  cleanup.push(() => m.close());
  assert.equal((await m.call({ action: 'start' })).isError, false);
  await until(async () => (await s.stats()).recordedStreams.includes('GC'), { what: 'GC recorded' });
  assert.equal(await s.cmd('vm-hang getVMTimelineFlags'), 'ok vm-hang getVMTimelineFlags');
  const r = await m.call({ action: 'stop' });
  await s.cmd('vm-hang off');
  assert.equal(r.isError, false, r.text);
  assert.ok((r.sc.warnings ?? []).some((w) => /^timeline: .*could not be set back and stay recorded/.test(w)),
    JSON.stringify(r.sc.warnings));
  assert.match(r.text, /\nwarning: timeline: the app's VM timeline streams \(GC, Embedder\) could not be set back/);
  assert.ok((await s.stats()).recordedStreams.includes('GC'), 'left on, as said');
  // The next session's stop sets them back and says nothing of it.
  assert.equal((await m.call({ action: 'start' })).isError, false);
  const r2 = await m.call({ action: 'stop' });
  assert.ok(!(r2.sc.warnings ?? []).some((w) => /could not be set back/.test(w)), JSON.stringify(r2.sc.warnings));
  assert.deepEqual([...(await s.stats()).recordedStreams].sort(), ['Dart']);
});

test('a VM ring that overwrites events between pulls is reported, not hidden', async () => {
  // 40 events hold ~60 ms at 120 fps; the server pulls every 200 ms.
  const { m } = await setup(['--fps', '120', '--timeline-ring', '40']);
  const r = await m.call({ action: 'capture', durationMs: 1200 });
  assert.equal(r.isError, false, r.text);
  assert.equal(r.sc.session.timeline, 'on');
  assert.equal(r.sc.session.timelineDropped, true, JSON.stringify(r.sc.session));
});

test('web (DWDS): no VM timeline, said once, frames still measured', async () => {
  const { m } = await setup(['--mode', 'web']);
  const r = await m.call({ action: 'capture', durationMs: 600 });
  assert.equal(r.isError, false, r.text);
  assert.equal(r.sc.session.timeline, 'off');
  assert.ok(r.sc.warnings.some((w) => /^timeline: .*Not supported on web devices/.test(w)), r.text);
  assert.ok(r.sc.session.framesSeen > 0);
});

test('timeline: false leaves the VM timeline alone', async () => {
  const { s, m } = await setup(['--scenario', 'gc']);
  const r = await m.call({ action: 'capture', durationMs: 600, timeline: false });
  assert.equal(r.isError, false, r.text);
  assert.equal(r.sc.session.timeline, undefined);
  const sent = names(await s.methods());
  assert.ok(!sent.some((x) => /Timeline/.test(x)), sent.join(' '));
});

// Issue 21 item 1: web_ui's FrameTiming defaults frameNumber to 1 and its
// recorder before flutter#171592 never set it, so every Flutter.Frame of such
// a web app carries one number. Each is a frame all the same.
test('web app whose Flutter.Frame events all carry one number: every frame counted', async () => {
  const { s, m } = await setup(['--mode', 'web', '--no-watcher', '--web-frame-number', '1']);
  const other = await Client.connect(s.wsUri);
  cleanup.push(() => other.close());
  await other.call('streamListen', { streamId: 'Extension' });
  const before = await s.stats();
  // DWDS sends the page's events about once a second: 3 s hold at least two
  // whole batches (2 s held one, 61 frames, in 2 runs of 4).
  const r = await m.call({ action: 'capture', durationMs: 3000, detail: 'frames', limit: 1000 });
  const after = await s.stats();
  assert.equal(r.isError, false, r.text);
  const posted = other.events.filter((e) => e.event.extensionKind === 'Flutter.Frame');
  assert.ok(posted.length > 50 && posted.every((e) => e.event.extensionData.number === 1),
    'the sim posted one constant number');
  const drawn = after.framesDrawn - before.framesDrawn;
  const { session, frames } = r.sc;
  assert.ok(session.framesSeen >= 90, `a 3 s capture at 60 fps saw ${session.framesSeen} frames (${drawn} drawn)`);
  // Frames drawn before `before` that the web engine or DWDS still held then
  // reach the capture too (a loaded machine: 15 and 22 more than drawn).
  const held = (before.webTimingsHeld ?? 0) + (before.dwds?.held ?? 0);
  assert.ok(session.framesSeen <= drawn + held + 12,
    `no frame twice: ${session.framesSeen} seen, ${drawn} drawn, ${held} held before`);
  for (let i = 1; i < frames.length; i++) {
    assert.ok(frames[i].vsyncStartUs > frames[i - 1].vsyncStartUs, 'each frame once, in order');
    assert.equal(frames[i].frameNumber, frames[i - 1].frameNumber + 1, 'numbered in arrival order');
  }
});

// Issue 21 item 2: a VM whose timeline recorder sends the events elsewhere
// (flutter run --trace-systrace, --trace-to-file) answers getVMTimeline with
// 114: the session says so once, with the reason and the remedy.
for (const recorder of ['Systrace', 'File']) {
  test(`a ${recorder} timeline recorder: one warning with the reason and the remedy, no pulls`, async () => {
    const { s, m } = await setup(['--no-watcher', '--scenario', 'gc', '--timeline-recorder', recorder]);
    const r = await m.call({ action: 'capture', durationMs: 1200 });
    assert.equal(r.isError, false, r.text);
    assert.equal(r.sc.session.timeline, 'off', r.text);
    const w = r.sc.warnings.filter((x) => /^timeline: /.test(x));
    assert.equal(w.length, 1, JSON.stringify(r.sc.warnings));
    assert.match(w[0], new RegExp(`"${recorder}"`));
    assert.match(w[0], /--trace-systrace|--trace-to-file/, 'the remedy names the flags to leave out');
    assert.ok(r.sc.session.framesSeen > 30, 'frames are still measured');
    const sent = names(await s.methods());
    assert.ok(!sent.includes('setVMTimelineFlags'), 'nothing set for a recorder that keeps nothing');
    // A session that opens while another holds the verdict says it too, once.
    assert.equal((await m.call({ action: 'start' })).isError, false);
    await until(async () => (await m.call({ action: 'read' })).sc.warnings?.some((x) => /^timeline: /.test(x)),
      { what: 'the open session knows the timeline is missing', timeoutMs: 5000 * TIMEOUT_SCALE });
    const c = await m.call({ action: 'capture', durationMs: 400 });
    assert.equal(c.sc.warnings.filter((x) => /^timeline: .*"/.test(x)).length, 1, JSON.stringify(c.sc.warnings));
    assert.equal((await m.call({ action: 'stop' })).isError, false);
  });
}

// Issue 21 item 5: the engine hands FrameTimings over in batches (at most
// 100 ms late natively), so the frames drawn just before a stop are still in
// the app. The stop waits for the next batch (bounded): the session ends
// with the last frame the app drew.
// Issue 21 item 5, the web: web_ui holds the timings of the last frames
// before the app went quiet until a later frame comes > 100 ms after its
// last hand-over, and DWDS sends the page's events on about once a second.
// A web stop draws one frame (scheduleFrame) after 110 ms and waits for
// DWDS's batch (or, with the watcher, whose read DWDS does not batch, for the
// frame): it ends with the app's last frame, and the one it drew.
for (const watcher of [false, true]) test(`web${watcher ? ', watcher' : ''}: a stop right after the app stops drawing holds its last frames`, async () => {
  const { s, m } = await setup(['--mode', 'web', ...(watcher ? [] : ['--no-watcher']), '--fps', '60']);
  assert.equal((await m.call({ action: 'start' })).isError, false);
  // Go idle while web_ui still holds timings (a hand-over can fall just
  // before): that is the tail the stop must recover.
  let st;
  for (let i = 0; i < 10; i++) {
    await s.cmd('scenario steady');
    await sleep(700 + 17 * i);
    await s.cmd('scenario idle');
    st = await s.stats();
    if (st.webTimingsHeld > 0) break;
  }
  assert.ok(st.webTimingsHeld > 0, `the web engine held timings when the app went idle: ${JSON.stringify(st)}`);
  const drawn = st.lastFrameNumber;
  const t0 = Date.now();
  const r = await m.call({ action: 'stop', detail: 'frames', limit: 1000 });
  assert.equal(r.isError, false, r.text);
  const numbers = r.sc.frames.map((f) => f.frameNumber);
  assert.ok(numbers.includes(drawn), `the stop holds the app's last frame ${drawn}: its last are ${numbers.slice(-5)}`);
  assert.ok(numbers.at(-1) <= drawn + 1, `at most the one frame the stop drew after it: ${numbers.slice(-5)}`);
  assert.ok(Date.now() - t0 < 5000 * TIMEOUT_SCALE, 'the web stop is bounded');
  assert.equal((await s.stats()).webTimingsHeld, 0, 'nothing left held in the app');
});

// With the watcher the stop waits for the same batch before its last read
// (the sim's watcher gets its records in the same hand-over as the events):
// without that wait it ended up to ~100 ms of frames short.
for (const watcher of [false, true]) test(`${watcher ? 'watcher' : 'no watcher'}: a stop right after the app stops drawing holds its last frames`, async () => {
  const { s, m } = await setup([...(watcher ? [] : ['--no-watcher']), '--fps', '60']);
  assert.equal((await m.call({ action: 'start' })).isError, false);
  // Stop drawing while some timings are still in the app (not yet handed
  // over): that is the case the stop must wait for.
  let st;
  for (let i = 0; i < 10; i++) {
    await s.cmd('scenario steady');
    await sleep(250 + 13 * i);
    await s.cmd('scenario idle');
    st = await s.stats();
    if (st.timingsPending > 0) break;
  }
  assert.ok(st.timingsPending > 0, 'timings were pending when the app went idle');
  const drawn = st.lastFrameNumber;
  const r = await m.call({ action: 'stop', detail: 'frames', limit: 1000 });
  assert.equal(r.isError, false, r.text);
  const last = r.sc.frames.at(-1)?.frameNumber;
  assert.equal(last, drawn, `the stop's last frame ${last}, the app's last ${drawn}`);
});

// The events of one batch are separate messages (the binding posts one
// Flutter.Frame per timing), and a loaded VM service or DDS passes them on
// one at a time: the first may come well before the last. A stop that
// answered on the first left the rest out (CI, stop 26: "the stop's last
// frame 23, the app's last 24"). Here the app holds its timings until the
// call's round trip has reached it, then hands a batch of a dozen over, each
// message 15 ms after the one before. A stop also waits for the app's last
// batch before its last read (sessions.c, wait_batch), so the read of an open
// session is what shows an answer given on the first message alone.
for (const action of ['stop', 'read']) {
  test(`a ${action} whose last batch comes message by message holds all of it`, async () => {
    const { s, m } = await setup(['--no-watcher', '--fps', '30']);
    assert.equal((await m.call({ action: 'start' })).isError, false);
    await sleep(500);
    assert.match(await s.cmd('timings-delay 60000'), /^ok/);
    await sleep(450);
    await s.cmd('scenario idle');
    // The last frame drawn is rasterized (its timing is due) within a frame
    // or two: only then is it in the batch the app holds.
    await sleep(150);
    const st = await s.stats();
    assert.ok(st.timingsPending >= 8, `a batch was held: ${JSON.stringify(st)}`);
    const drawn = st.lastFrameNumber;
    const syncs = async () => (await s.methods()).filter((x) => x === 'getVersion').length;
    const before = await syncs();
    const call = m.call({ action, detail: 'frames', limit: 1000 });
    await until(async () => (await syncs()) > before, { what: `the ${action}'s round trip reached the app`, timeoutMs: 5000 * TIMEOUT_SCALE, everyMs: 1 });
    assert.match(await s.cmd('write-gap 15'), /^ok/);
    assert.match(await s.cmd('timings-delay 0'), /^ok/);
    const r = await call;
    assert.equal(r.isError, false, r.text);
    const last = r.sc.frames.at(-1)?.frameNumber;
    assert.equal(last, drawn, `the ${action}'s last frame ${last}, the app's last ${drawn}`);
  });
}

// Issue 31 item 5: the first connect after a hot restart, through DDS. DDS
// replays the Extension stream's history to the new listener: the old
// isolate's frames first, then the new one's, before the VM says which
// isolate is current. The frames read are the current isolate's, those
// drawn before the connect included; none of the old one's.
test('first connect after a hot restart through DDS: the new isolate\'s frames, history included', async () => {
  const s = await startSim(['--seed', '11', '--no-watcher', '--scenario', 'janky']);
  cleanup.push(() => s.kill());
  await until(async () => (await s.stats()).lastFrameNumber >= 120, { what: 'frames before the restart' });
  await s.cmd('restart');
  // The old isolate drew up to about here; the engine hands the timings of
  // its last few frames over in a batch the new isolate reports.
  const boundary = (await s.stats()).lastFrameNumber;
  await until(async () => (await s.stats()).lastFrameNumber >= boundary + 90,
    { what: 'frames of the new isolate' });
  const m = await startMcp(['--vm-service-uri-file', s.uriFile]);
  cleanup.push(() => m.close());
  const st = await m.call({ action: 'status' });
  assert.equal(st.isError, false, st.text);
  assert.equal(st.sc.connection.isolateId, (await s.stats()).isolateId);
  const r = await m.call({ action: 'read', detail: 'frames', limit: 1000 });
  assert.equal(r.isError, false, r.text);
  const nums = r.sc.frames.map((f) => f.frameNumber);
  assert.ok(nums.length >= 80, `the new isolate's frames drawn before the connect: ${nums.length} read`);
  assert.ok(nums.every((n) => n > boundary - 30),
    `no frame of the old isolate (drawn up to ${boundary}): ${nums.slice(0, 5)}`);
});
