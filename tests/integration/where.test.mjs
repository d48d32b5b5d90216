// Issue 20: where to edit, through the official SDK client against
// telescope-sim serving getCpuSamples as the VM does (docs/flutter-apis.md
// "CPU samples"). Without any track* option the answer names the app
// function behind the jank with its file:line; a rare but slow function
// ranks ahead of a heavier steady one; a profile build still gets
// locations; a profiler that is off, or a web app, is a warning and the
// rest of the answer stands.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSim, startMcp, assertNoTokenLeak, until, TIMEOUT_SCALE } from './harness.mjs';

const cleanup = [];
after(async () => { for (const c of cleanup.reverse()) await c(); assertNoTokenLeak(); });

async function capture(simArgs, ms = 3000) {
  const s = await startSim(['--seed', '7', ...simArgs]);
  cleanup.push(() => s.kill());
  const m = await startMcp(['--vm-service-uri-file', s.uriFile]);
  cleanup.push(() => m.close());
  assert.equal((await m.call({ action: 'status' })).isError, false);
  const r = await m.call({ action: 'capture', durationMs: ms });
  assert.equal(r.isError, false, r.text);
  return { r, s };
}

test('janky without tracking: the slow app function with its file:line, in the text', async () => {
  const { r } = await capture(['--scenario', 'janky']);
  const sum = r.sc.summary;
  assert.ok(sum.jank.buildMissed > 0, r.text);
  const w = sum.where;
  assert.ok(w, `no where:\n${r.text}`);
  assert.equal(w.samplePeriodUs, 1000);
  assert.equal(w.jankyFramesLost, 0);
  assert.equal(w.jankyFrames, sum.jank.buildMissed, JSON.stringify(w));
  assert.equal(w.fewSamples, false);
  const f = w.functions[0];
  assert.deepEqual([f.function, f.code, f.file, f.line], ['SlowWidget.build', 'app', 'lib/slow_widget.dart', 42]);
  assert.ok(f.explains >= 0.8, JSON.stringify(f));
  assert.ok(f.jankyUs > 15000 && f.calmUs < 1000, JSON.stringify(f));
  // The widget finding points at the function that builds it.
  assert.equal(sum.findings[0].name, 'SlowWidget');
  assert.equal(sum.findings[0].at, 'SlowWidget.build (lib/slow_widget.dart:42)');
  assert.match(r.text, /\nwhere 1: SlowWidget\.build \(lib\/slow_widget\.dart:42\) explains \d+% of the jank/);
  assert.ok(Buffer.byteLength(r.text) <= 1500, `${Buffer.byteLength(r.text)} bytes`);
});

test('a rare but slow function ranks ahead of a heavier one that runs in every frame', async () => {
  const { r, s } = await capture(['--scenario', 'cpu-rare-slow']);
  const w = r.sc.summary.where;
  assert.ok(w, r.text);
  assert.equal(w.functions[0].function, 'CatalogIndex.rebuild', JSON.stringify(w));
  assert.equal(w.functions[0].file, 'lib/catalog_index.dart');
  assert.equal(w.functions[0].line, 57);
  // The steady one costs about as much in calm frames as in janky ones: it
  // explains no jank, so it is not listed — though over all frames it is
  // the heavier (what a global hotspot list would put first).
  assert.ok(!w.functions.some((f) => f.function === 'PriceFormatter.formatAll'), JSON.stringify(w));
  assert.match(r.text, /where 1: CatalogIndex\.rebuild \(lib\/catalog_index\.dart:57\)/);
  // The worst frames name the place too (their cause, BUILD, does not).
  const worst = r.sc.summary.worstFrames.filter((f) => f.buildUs > r.sc.summary.budgetUs);
  assert.ok(worst.length > 0 && worst.every((f) => f.at === 'CatalogIndex.rebuild (lib/catalog_index.dart:57)'),
    JSON.stringify(r.sc.summary.worstFrames));
  assert.match(r.text, /\nframes? [0-9, ]+: BUILD [^\n]* in CatalogIndex\.rebuild \(lib\/catalog_index\.dart:57\)\n/);
  const st = await s.stats();
  assert.ok(st.methods.getCpuSamples >= 1 && st.methods.getCpuSamples <= 8, JSON.stringify(st.methods));
});

test('a profile build (no debug extensions) still gets locations', async () => {
  const { r } = await capture(['--scenario', 'janky', '--build-mode', 'profile']);
  const f = r.sc.summary.where?.functions?.[0];
  assert.ok(f, r.text);
  assert.deepEqual([f.function, f.file, f.line], ['SlowWidget.build', 'lib/slow_widget.dart', 42]);
});

test('profiler off: one warning with the remedy, and the causes still answered', async () => {
  const { r } = await capture(['--scenario', 'janky', '--profiler', 'off']);
  assert.equal(r.sc.summary.where, undefined);
  assert.equal(r.sc.summary.findings[0].name, 'SlowWidget', r.text);
  const notes = (r.sc.warnings ?? []).filter((w) => /CPU samples/.test(w));
  assert.equal(notes.length, 1, JSON.stringify(r.sc.warnings));
  assert.match(notes[0], /profiler off/);
  assert.match(notes[0], /--no-enable-dart-profiling|enable-dart-profiling/);
  assert.match(r.text, /warning: CPU samples: /);
});

test('a web app: no getCpuSamples is sent, and the answer says why', async () => {
  const { r, s } = await capture(['--scenario', 'janky', '--mode', 'web']);
  assert.equal(r.sc.summary.where, undefined);
  assert.ok((r.sc.warnings ?? []).some((w) => /CPU samples: none on the web/.test(w)), JSON.stringify(r.sc.warnings));
  const st = await s.stats();
  assert.equal(st.methods.getCpuSamples ?? 0, 0);
});

// The summary counts every frame a session saw, the window keeps the newest
// 4 096: janky frames that fell out of it have no window to ask samples
// for. Said in one CPU-samples warning, not silent (a model run found it).
test('janky frames the session no longer holds: said, not silent', async () => {
  const s = await startSim(['--seed', '7', '--scenario', 'janky', '--no-watcher']);
  cleanup.push(() => s.kill());
  const m = await startMcp(['--vm-service-uri-file', s.uriFile]);
  cleanup.push(() => m.close());
  assert.equal((await m.call({ action: 'start' })).isError, false);
  await until(async () => (await m.call({ action: 'read', detail: 'summary' })).sc.summary?.jank?.buildMissed > 0,
    { timeoutMs: 10000 * TIMEOUT_SCALE, what: 'a janky frame' });
  await s.cmd('scenario steady');
  const from = (await s.stats()).lastFrameNumber;
  await s.cmd('fps 4000');
  await until(async () => (await s.stats()).lastFrameNumber > from + 5000,
    { timeoutMs: 20000 * TIMEOUT_SCALE, what: '5000 calm frames' });
  await s.cmd('fps 60');
  const r = await m.call({ action: 'stop' });
  assert.equal(r.isError, false, r.text);
  assert.ok(r.sc.summary.jank.buildMissed > 0, JSON.stringify(r.sc.summary.jank));
  assert.equal(r.sc.summary.where, undefined);
  assert.ok((r.sc.warnings ?? []).some((w) => /^CPU samples: no janky frame is still held/.test(w)),
    JSON.stringify(r.sc.warnings));
});

// `read` over a range (issue 20 item 1): a read of a closed session gets the
// place of the janky frames it hands out, as a stop does. A read while the
// session runs pulls nothing: the VM builds the reply on the UI isolate, so
// the pull would add its own work to the frames being measured.
test('read: a closed session\'s range gets its place; a read while frames are measured pulls nothing', async () => {
  const s = await startSim(['--seed', '7', '--scenario', 'cpu-rare-slow']);
  cleanup.push(() => s.kill());
  const m = await startMcp(['--vm-service-uri-file', s.uriFile]);
  cleanup.push(() => m.close());
  const pulls = async () => (await s.stats()).methods.getCpuSamples ?? 0;
  assert.equal((await m.call({ action: 'start' })).isError, false);
  await s.drawn(150);
  const live = await m.call({ action: 'read' });
  assert.equal(live.isError, false, live.text);
  assert.ok(live.sc.summary.jank.buildMissed > 0, live.text);
  assert.equal(live.sc.summary.where, undefined);
  assert.equal(await pulls(), 0, 'a read of a running session pulled samples');
  await s.drawn(150);
  const stop = await m.call({ action: 'stop' });
  assert.equal(stop.sc.summary.where?.functions?.[0]?.function, 'CatalogIndex.rebuild', stop.text);
  const atStop = await pulls();
  assert.ok(atStop >= 1);
  // The frames after the first read, from the closed session.
  const r = await m.call({ action: 'read', cursor: live.sc.nextCursor });
  assert.equal(r.isError, false, r.text);
  assert.equal(r.sc.session.state, 'stopped', JSON.stringify(r.sc.session));
  assert.ok(r.sc.summary.jank.buildMissed > 0, r.text);
  assert.ok(r.sc.summary.frames < stop.sc.summary.frames, 'the read covers a range, not the session');
  assert.equal(r.sc.summary.where?.functions?.[0]?.function, 'CatalogIndex.rebuild', r.text);
  assert.match(r.text, /\nwhere 1: CatalogIndex\.rebuild \(lib\/catalog_index\.dart:57\)/);
  const worst = r.sc.summary.worstFrames.filter((f) => f.buildUs > r.sc.summary.budgetUs);
  assert.ok(worst.length > 0 && worst.every((f) => f.at === 'CatalogIndex.rebuild (lib/catalog_index.dart:57)'),
    JSON.stringify(r.sc.summary.worstFrames));
  assert.ok(await pulls() > atStop, 'the read pulled its own samples');
});

// A pull of several time ranges that loses one after the first was answered
// (the VM stops answering getCpuSamples): `where` still stands on the ranges
// pulled, and the warning says how many of how many. The janky frames of an
// 8 s capture (about 7 a second) span more than APPSRC_CPU_MAX_EXTENT_US
// (5 s), so the pull has at least 2 ranges.
test('getCpuSamples lost after a range was answered: `where` from the ranges pulled, the loss told', async () => {
  const s = await startSim(['--seed', '7', '--scenario', 'janky']);
  cleanup.push(() => s.kill());
  const m = await startMcp(['--vm-service-uri-file', s.uriFile, '--call-timeout-ms', '300']);
  cleanup.push(() => m.close());
  assert.equal((await m.call({ action: 'status' })).isError, false);
  assert.equal(await s.cmd('vm-hang getCpuSamples after 1'), 'ok vm-hang getCpuSamples after 1');
  const r = await m.call({ action: 'capture', durationMs: 8000 });
  assert.equal(r.isError, false, r.text);
  const notes = (r.sc.warnings ?? []).filter((w) => /CPU samples/.test(w));
  assert.equal(notes.length, 1, JSON.stringify(r.sc.warnings));
  const got = /^CPU samples: getCpuSamples not answered \(.*\): 1 of (\d+) time ranges pulled, `where` covers only those$/.exec(notes[0]);
  assert.ok(got && Number(got[1]) >= 2, notes[0]);
  assert.equal(r.sc.summary.where?.functions?.[0]?.function, 'SlowWidget.build', r.text);
  assert.equal((await s.stats()).methods.getCpuSamples, 2, 'one range answered, the next one asked and lost');
});
