// Issue 20 item 3: rebuilt widgets per janky frame, through the official SDK
// client against telescope-sim, which serves the inspector's
// trackRebuildDirtyWidgets and posts Flutter.RebuiltWidgets per frame as the
// framework does (docs/flutter-apis.md "Rebuilt widgets"). With trackRebuilds
// the answer names the widgets rebuilt more in janky frames, with counts and
// their creation file:line, and the switch is off again after stop; a
// profile build has no such extension: the not-applied warning, nothing more.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSim, startMcp, assertNoTokenLeak, until } from './harness.mjs';
import { Client } from '../sim/lib.mjs';

const cleanup = [];
after(async () => { for (const c of cleanup.reverse()) await c(); assertNoTokenLeak(); });

async function setup(simArgs) {
  const s = await startSim(['--seed', '7', ...simArgs]);
  cleanup.push(() => s.kill());
  const m = await startMcp(['--vm-service-uri-file', s.uriFile]);
  cleanup.push(() => m.close());
  assert.equal((await m.call({ action: 'status' })).isError, false);
  return { s, m };
}

// The switch as the app has it, asked as a second VM-service client would
// (no `enabled`: Flutter's bool extensions read the state).
async function rebuildSwitch(s) {
  const other = await Client.connect(s.wsUri);
  try {
    const vm = await other.call('getVM');
    const r = await other.call('ext.flutter.inspector.trackRebuildDirtyWidgets',
      { isolateId: vm.isolates[0].id });
    return r.enabled;
  } finally { other.close(); }
}

test('janky with trackRebuilds: the widget rebuilt in janky frames, with counts and file:line; switched back off', async () => {
  const { s, m } = await setup(['--scenario', 'janky']);
  assert.equal(await rebuildSwitch(s), 'false');
  const st = await m.call({ action: 'start', trackRebuilds: true });
  assert.equal(st.isError, false, st.text);
  assert.deepEqual(st.sc.session.tracking, ['rebuilds']);
  assert.equal(await rebuildSwitch(s), 'true');
  await s.drawn(180);
  const r = await m.call({ action: 'stop' });
  assert.equal(r.isError, false, r.text);
  const sum = r.sc.summary;
  assert.ok(sum.jank.buildMissed > 0, r.text);
  const rb = sum.rebuilds;
  assert.ok(rb, `no rebuilds:\n${r.text}`);
  assert.ok(rb.jankyFrames > 0 && rb.calmFrames > 0 && rb.framesWithEvents >= rb.jankyFrames + rb.calmFrames,
    JSON.stringify(rb));
  // The sim rebuilds SlowWidget (created at feed_list.dart:38) once in each
  // janky frame and never otherwise; FeedList, the cards and their Text
  // rebuild in every frame: not listed.
  assert.equal(rb.widgets.length, 1, JSON.stringify(rb));
  const w = rb.widgets[0];
  assert.deepEqual([w.name, w.file, w.line, w.id], ['SlowWidget', 'lib/feed_list.dart', 38, 63]);
  assert.equal(w.perJankyFrame, 1);
  assert.equal(w.perCalmFrame, 0);
  assert.match(r.text, /\nrebuilt: SlowWidget ×1\.0 per janky frame vs ×0\.0 otherwise \(lib\/feed_list\.dart:38\)\n/);
  assert.ok(Buffer.byteLength(r.text) <= 1500, `${Buffer.byteLength(r.text)} bytes`);
  assert.equal(await rebuildSwitch(s), 'false', 'the switch is restored at stop');
});

// Flutter sends each location once per run: a server that connects after
// another one had the switch on gets bare ids, and asks widgetLocationIdMap.
// (--mode vm: no DDS, whose Extension-stream history would replay the
// first events to the second server, locations and all.)
test('a second server after the locations were sent: named from widgetLocationIdMap', async () => {
  const { s, m } = await setup(['--scenario', 'janky', '--mode', 'vm']);
  const mapCalls = async () => (await s.methods())
    .filter((x) => (typeof x === 'string' ? x : x.method) === 'ext.flutter.inspector.widgetLocationIdMap').length;
  const r1 = await m.call({ action: 'capture', durationMs: 2500, trackRebuilds: true });
  assert.equal(r1.sc.summary.rebuilds?.widgets?.[0]?.name, 'SlowWidget', r1.text);
  assert.equal(await mapCalls(), 0, 'the events named every location');
  await m.close();
  const m2 = await startMcp(['--vm-service-uri-file', s.uriFile]);
  cleanup.push(() => m2.close());
  const r2 = await m2.call({ action: 'capture', durationMs: 2500, trackRebuilds: true });
  assert.equal(r2.isError, false, r2.text);
  const w = r2.sc.summary.rebuilds?.widgets?.[0];
  assert.deepEqual([w?.name, w?.file, w?.line], ['SlowWidget', 'lib/feed_list.dart', 38], r2.text);
  assert.equal(await mapCalls(), 1);
});

// A hot restart starts the location ids again and turns the switch off in
// the new isolate: the server switches it on again and learns the ids anew.
test('a hot restart mid-session: switched on again, widgets still named', async () => {
  const { s, m } = await setup(['--scenario', 'janky']);
  assert.equal((await m.call({ action: 'start', trackRebuilds: true })).isError, false);
  await s.drawn(90);
  await s.cmd('restart');
  await until(async () => (await rebuildSwitch(s)) === 'true', { what: 'switched on again in the new isolate' });
  await s.drawn(90);
  const r = await m.call({ action: 'stop' });
  assert.equal(r.isError, false, r.text);
  const w = r.sc.summary.rebuilds?.widgets?.[0];
  assert.deepEqual([w?.name, w?.file, w?.line], ['SlowWidget', 'lib/feed_list.dart', 38], r.text);
  // The new isolate's forced frame (every widget rebuilt, SlowWidget too)
  // fell inside the session: left out, SlowWidget never rebuilds when calm.
  assert.equal(w.perCalmFrame, 0, r.text);
  assert.equal(await rebuildSwitch(s), 'false');
});

// Issue 20 item 4: rebuild events come from the framework, not the watcher;
// frames from Flutter.Frame events carry the same frame numbers.
test('without the watcher: the same widget, joined to Flutter.Frame frames', async () => {
  const { m } = await setup(['--scenario', 'janky', '--no-watcher']);
  const r = await m.call({ action: 'capture', durationMs: 2500, trackRebuilds: true });
  assert.equal(r.isError, false, r.text);
  const rb = r.sc.summary.rebuilds;
  assert.ok(rb?.jankyFrames > 0, r.text);
  assert.deepEqual(rb.widgets.map((w) => [w.name, w.file, w.line, w.perJankyFrame, w.perCalmFrame]),
    [['SlowWidget', 'lib/feed_list.dart', 38, 1, 0]]);
});

test('without trackRebuilds: no rebuilds, the switch never touched', async () => {
  const { s, m } = await setup(['--scenario', 'janky']);
  const r = await m.call({ action: 'capture', durationMs: 1500 });
  assert.equal(r.isError, false, r.text);
  assert.equal(r.sc.summary.rebuilds, undefined);
  assert.doesNotMatch(r.text, /rebuilt:/);
  const sent = (await s.methods()).map((x) => (typeof x === 'string' ? x : x.method));
  assert.ok(!sent.includes('ext.flutter.inspector.trackRebuildDirtyWidgets'), sent.join(' '));
});

test('a profile build: the switch could not be switched on (one warning), no rebuilds', async () => {
  const { m } = await setup(['--scenario', 'janky', '--build-mode', 'profile']);
  const r = await m.call({ action: 'capture', durationMs: 1500, trackRebuilds: true });
  assert.equal(r.isError, false, r.text);
  assert.equal(r.sc.summary.rebuilds, undefined);
  assert.doesNotMatch(r.text, /rebuilt:/);
  const notes = (r.sc.warnings ?? []).filter((x) => /trackRebuilds/.test(x));
  assert.equal(notes.length, 1, JSON.stringify(r.sc.warnings));
  assert.match(notes[0], /^trackRebuilds: could not be switched on/, notes[0]);
});

// Issue 31 item 2: iOS numbers frames 2 apart, and any engine skips a number
// when the raster thread is backed up (flutter#94896). The forced frame of
// the switch-on is told by coming first after it, not by a number that does
// not follow the last: the counts are those of consecutive numbering.
test('iOS numbering (2 apart) with skipped numbers: the same rebuild counts', async () => {
  const { m } = await setup(['--scenario', 'janky', '--frame-step', '2', '--frame-gaps', '4']);
  const r = await m.call({ action: 'capture', durationMs: 2500, trackRebuilds: true });
  assert.equal(r.isError, false, r.text);
  const nums = (await m.call({ action: 'read', detail: 'frames', limit: 10 })).sc.frames
    ?.map((f) => f.frameNumber) ?? [];
  assert.ok(nums.some((n, i) => i && n - nums[i - 1] > 1), `numbers step: ${nums}`);
  const rb = r.sc.summary.rebuilds;
  assert.ok(rb?.jankyFrames > 0 && rb.calmFrames > 0, r.text);
  assert.deepEqual(rb.widgets.map((w) => [w.name, w.file, w.line, w.perJankyFrame, w.perCalmFrame]),
    [['SlowWidget', 'lib/feed_list.dart', 38, 1, 0]]);
});

// Issue 31 item 3: before flutter#171592 the web engine's frameNumber is -1,
// so no Flutter.RebuiltWidgets event joins a frame; the answer says why.
test('web before flutter#171592: rebuild events numbered -1, said in a warning', async () => {
  const { m } = await setup(['--scenario', 'janky', '--mode', 'web', '--web-frame-number', '1',
    '--dwds-batch-ms', '0']);
  const r = await m.call({ action: 'capture', durationMs: 2500, trackRebuilds: true });
  assert.equal(r.isError, false, r.text);
  assert.equal(r.sc.summary.rebuilds, undefined, r.text);
  const notes = (r.sc.warnings ?? []).filter((x) => /Flutter\.RebuiltWidgets/.test(x));
  assert.equal(notes.length, 1, JSON.stringify(r.sc.warnings));
  assert.match(notes[0], /^trackRebuilds: \d+ Flutter\.RebuiltWidgets events could not be joined to frames, so no rebuilt widget is listed: their frameNumber is -1, as the web engine sends it before flutter#171592$/);
});
