// Issue 32 through the official SDK client against telescope-sim --scenario
// scrolllist (a feed that draws only while driven): a capture with a
// workload plays it through the watcher's drive and answers per run and
// their spread; without a workload the same app is idle; a bad finder fails
// with what is on screen; without the watcher but with ext.flutter.driver the
// exact flutter_driver commands are sent (read back from the sim's log); with
// neither, the answer says what to add.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSim, startMcp, assertNoTokenLeak } from './harness.mjs';

const cleanup = [];
after(async () => { for (const c of cleanup.reverse()) await c(); assertNoTokenLeak(); });
async function setup(simArgs = []) {
  const s = await startSim(['--seed', '5', '--scenario', 'scrolllist', ...simArgs]);
  cleanup.push(() => s.kill());
  const m = await startMcp(['--vm-service-uri-file', s.uriFile]);
  cleanup.push(() => m.close());
  return { s, m };
}

const fling = { fling: { dy: -3000, in: 'key:feed' } };

test('a workload of 3 runs: each run measured, their spread, its own interactions; idle without', async () => {
  const { m } = await setup();
  const r = await m.call({ action: 'capture', workload: { steps: [fling], repeat: 3 } });
  assert.equal(r.isError, false, r.text);
  const w = r.sc.summary.workload;
  assert.equal(w.label, 'fling key:feed');
  assert.equal(w.repeat, 3);
  assert.equal(w.runs.length, 3);
  for (const run of w.runs) assert.ok(run.frames > 10, `run ${run.run}: ${run.frames} frames`);
  assert.ok(w.runs.some((run) => run.jankFrames > 0), 'the heavy tiles jank while scrolling');
  assert.equal(w.drive.state, 'done');
  assert.equal(w.drive.via, 'watcher');
  assert.ok(w.spread && w.spread.jankPoints >= 0, JSON.stringify(w));
  const ids = r.sc.summary.interactions.map((i) => i.interactionId).sort();
  assert.deepEqual(ids, [`${w.driveId}/r1/s1`, `${w.driveId}/r2/s1`, `${w.driveId}/r3/s1`]);
  const line = r.text.split('\n').find((l) => l.startsWith('workload: '));
  assert.match(line, /^workload: fling key:feed, 3 runs: jank \d+\.\d %, \d+\.\d %, \d+\.\d % \(spread \d+\.\d points\)$/);
  // Nothing drives it now: the same app is idle.
  const idle = await m.call({ action: 'capture', durationMs: 600 });
  assert.equal(idle.sc.diagnosis?.code, 'app_idle', idle.text);
  assert.equal(idle.sc.summary?.workload, undefined);
});

test('a finder that matches nothing: the error names it and lists what is on screen', async () => {
  const { m } = await setup();
  const r = await m.call({ action: 'capture', workload: { steps: [{ fling: { dy: -3000, in: 'key:fed' } }] } });
  assert.equal(r.isError, true, r.text);
  const d = (r.sc.summary ?? r.sc).workload.drive;
  assert.equal(d.state, 'failed');
  assert.match(d.error, /key:fed/);
  assert.ok(d.candidates.includes('key:feed'), JSON.stringify(d));
  assert.match(r.text, /^workload failed at run 1 step 1: .*key:fed/m);
  assert.match(r.text, /^on screen: .*key:feed/m);
});

test('without the watcher, with ext.flutter.driver: flutter_driver\'s own commands, as sent', async () => {
  const { s, m } = await setup(['--no-watcher', '--flutter-driver']);
  const r = await m.call({ action: 'capture', workload: { steps: [fling, { tap: 'key:feed' }], repeat: 2 } });
  assert.equal(r.isError, false, r.text);
  const w = r.sc.summary.workload;
  assert.equal(w.drive.via, 'flutterDriver');
  assert.equal(w.drive.state, 'done');
  assert.ok(w.runs.every((run) => run.frames > 0), JSON.stringify(w.runs));
  const sent = s.stderr.split('\n').filter((l) => l.startsWith('telescope-sim: ext.flutter.driver '))
    .map((l) => JSON.parse(l.slice('telescope-sim: ext.flutter.driver '.length)))
    .map(({ isolateId, ...p }) => p);
  // (3000 + 18 slop) px at 4000 px/s: 754 500 µs; the display's 60 Hz.
  const scroll = { command: 'scroll', finderType: 'ByValueKey', keyValueString: 'feed', keyValueType: 'String',
    dx: '0.0', dy: '-3000.0', duration: '754500', frequency: '60' };
  const settle = { command: 'waitUntilNoTransientCallbacks' };
  const tap = { command: 'tap', finderType: 'ByValueKey', keyValueString: 'feed', keyValueType: 'String' };
  assert.deepEqual(sent, [scroll, settle, tap, scroll, settle, tap]);
});

test('neither the watcher nor ext.flutter.driver: refused, saying what to add', async () => {
  const { s, m } = await setup(['--no-watcher']);
  const r = await m.call({ action: 'capture', workload: { steps: [fling] } });
  assert.equal(r.isError, true, r.text);
  assert.match(r.text, /watcher/);
  assert.match(r.text, /enableFlutterDriverExtension\(\)/);
  assert.equal((await s.stats()).framesDrawn, 0, 'nothing was played');
});
