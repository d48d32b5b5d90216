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
  assert.equal((await s.stats()).feed.offset, 0, 'nothing was played: the feed never moved');
});

test('start with a workload answers once the watcher took it; its stop gives the runs; compare says same workload', async () => {
  const { m } = await setup();
  const workload = { steps: [{ fling: { dy: -2000, in: 'key:feed' } }, { wait: 200 }], repeat: 2 };
  const ids = [];
  for (let k = 0; k < 2; k++) {
    const st = await m.call({ action: 'start', workload });
    assert.equal(st.isError, false, st.text);
    assert.equal(st.sc.drive.via, 'watcher');
    assert.equal(st.sc.drive.of, 2);
    // The session runs while the app plays; wait until its drive said it ended.
    const until = Date.now() + 60000;
    let status;
    do {
      await new Promise((r) => setTimeout(r, 250));
      status = await m.call({ action: 'read' });
    } while (Date.now() < until && !(status.sc.summary?.interactions ?? []).some((i) => i.interactionId.endsWith('/r2/s2')));
    await new Promise((r) => setTimeout(r, 600));
    const stop = await m.call({ action: 'stop' });
    assert.equal(stop.isError, false, stop.text);
    const w = stop.sc.summary.workload;
    assert.equal(w.runs.length, 2);
    assert.ok(w.runs.every((run) => run.frames > 0), JSON.stringify(w.runs));
    assert.equal(w.drive.state, 'done', JSON.stringify(w.drive));
    ids.push(stop.sc.session.id);
  }
  const c = await m.call({ action: 'compare', baseline: ids[0], candidate: ids[1] });
  assert.equal(c.sc.comparison.workload.same, true, c.text);
  assert.equal(c.sc.comparison.workload.byRuns, true);
  assert.ok(c.sc.comparison.metrics.jankRatio.runs.baseline.length === 2);
  assert.match(c.text, /both ran the same workload \(fling key:feed, wait 200 ms\)/);
});

test('a capture with a workload reports each step as progress', async () => {
  const { m } = await setup();
  const seen = [];
  const r = await m.call({ action: 'capture', workload: { steps: [{ scroll: { dy: -1500, ms: 1200, in: 'key:feed' } }, { wait: 1500 }], repeat: 2 } },
    { onprogress: (p) => seen.push(p.message) });
  assert.equal(r.isError, false, r.text);
  assert.ok(seen.some((s) => /^workload: run \d of 2, step \d of 2$/.test(s)), JSON.stringify(seen));
  assert.deepEqual(r.sc.summary.workload.runs.map((run) => run.frames > 0), [true, true]);
});

test('without the watcher, flutter_driver\'s path: a progress per step, and a failed command names its step alone', async () => {
  const { m } = await setup(['--no-watcher', '--flutter-driver']);
  const seen = [];
  const ok = await m.call({ action: 'capture', workload: { steps: [fling, { tap: 'key:feed' }], repeat: 2 } },
    { onprogress: (p) => seen.push(p.message) });
  assert.equal(ok.isError, false, ok.text);
  assert.deepEqual(seen.filter((s) => /^workload: /.test(s)), ['workload: run 1 of 2, step 1 of 2',
    'workload: run 1 of 2, step 2 of 2', 'workload: run 2 of 2, step 1 of 2', 'workload: run 2 of 2, step 2 of 2']);
  // The second step's tap finds nothing: the error is that step's, labelled alone.
  const r = await m.call({ action: 'capture', workload: { steps: [fling, { tap: 'key:nope' }, { wait: 100 }] } });
  assert.equal(r.isError, true, r.text);
  const d = (r.sc.summary ?? r.sc).workload.drive;
  assert.equal(d.via, 'flutterDriver');
  assert.equal(d.state, 'failed');
  assert.equal(d.step, 2);
  assert.match(d.error, /^step 2 \(tap key:nope\), flutter_driver `tap`: .*key:nope/, d.error);
  assert.match(r.text, /^workload failed at run 1 step 2: step 2 \(tap key:nope\)/m);
});

test('a watcher slow to answer during a workload: the capture asks for its state, keeps looking, and ends with the drive', async () => {
  const { s, m } = await setup();
  // Each reply 900 ms late: more than the 600 ms after which the capture
  // asks the watcher itself; it must go on looking after that ask.
  await s.cmd('ext-delay 900');
  const r = await m.call({ action: 'capture', workload: { steps: [fling] } }, { timeout: 60000 }); // ~6 s here
  assert.equal(r.isError, false, r.text);
  assert.equal(r.sc.summary.workload.drive.state, 'done', JSON.stringify(r.sc.summary.workload.drive));
});
