// Issue 14 through the official SDK client against telescope-sim: compare two
// stopped sessions (improved / regressed / unchanged), budgets on stop and
// capture, and chart: "trace" written, parsed back and counted.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startSim, startMcp, assertNoTokenLeak, tempDir } from './harness.mjs';
import { Client } from '../sim/lib.mjs';

const cleanup = [];
after(async () => { for (const c of cleanup.reverse()) await c(); assertNoTokenLeak(); });
async function setup(simArgs = [], mcpArgs = []) {
  const s = await startSim(['--seed', '11', '--fps', '120', ...simArgs]);
  cleanup.push(() => s.kill());
  const m = await startMcp(['--vm-service-uri-file', s.uriFile, ...mcpArgs]);
  cleanup.push(() => m.close());
  return { s, m };
}
// A stopped session of ms of the scenario at 120 fps (its frames counted, so
// a loaded machine's slower sim draws as many), measured with start/stop.
async function measure(s, m, scenario, ms = 1500) {
  await s.cmd(`scenario ${scenario}`);
  const st = await m.call({ action: 'start' });
  assert.equal(st.isError, false, st.text);
  await s.drawn(Math.round(ms * 0.12));
  const stop = await m.call({ action: 'stop' });
  assert.equal(stop.isError, false, stop.text);
  assert.ok(stop.sc.summary.frames >= 60, `${scenario}: ${stop.sc.summary.frames} frames`);
  return stop.sc.session.id;
}

test('compare: fixed jank is improved, reversed regressed, the same workload unchanged', async () => {
  const { s, m } = await setup();
  // 3 s each: at 1.5 s a valgrind run drew 8 janky frames of 175, p = 0.0029
  // against the per-metric alpha of 0.0025: "unchanged" (a CI failure).
  const janky = await measure(s, m, 'janky', 3000);
  const steady = await measure(s, m, 'steady', 3000);
  // Default: the two most recently stopped, older as baseline.
  const c1 = await m.call({ action: 'compare' });
  assert.equal(c1.isError, false, c1.text);
  assert.equal(c1.sc.comparison.baseline.id, janky);
  assert.equal(c1.sc.comparison.candidate.id, steady);
  assert.equal(c1.sc.comparison.verdict, 'improved', c1.text);
  assert.equal(c1.sc.comparison.comparable, true);
  // The text carries the verdict and, for each metric that moved, before →
  // after with its p-value, as structuredContent has them (agents read the text).
  assertVerdictText(c1);
  const c2 = await m.call({ action: 'compare', baseline: steady, candidate: janky });
  assert.equal(c2.sc.comparison.verdict, 'regressed', c2.text);
  assertVerdictText(c2);
  const steady2 = await measure(s, m, 'steady');
  const c3 = await m.call({ action: 'compare', baseline: steady, candidate: steady2 });
  assert.equal(c3.sc.comparison.verdict, 'unchanged', c3.text);
  assertVerdictText(c3);
  // compare needs no app: it answers from the kept sessions.
  const bad = await m.call({ action: 'compare', baseline: 's99' });
  assert.equal(bad.isError, true);
  assert.match(bad.text, /s99/);
  const same = await m.call({ action: 'compare', baseline: steady, candidate: steady });
  assert.equal(same.isError, true);
});

// C's printf("%.1f", x), which the text is written with: the double's exact
// value rounded to one decimal, an exact tie to even (glibc), where JS's
// toFixed rounds a tie up (5.25 ms: C "5.2", JS "5.3"; a jank ratio of 26/315
// sent as 0.0825: 8.25 %, C "8.2"). CI failed on each. toFixed(60) is the
// double's exact decimal expansion at these magnitudes, so a tie is seen exactly.
const cFixed1 = (x) => {
  const m = /^(\d+)\.(\d)(\d+)$/.exec(Math.abs(x).toFixed(60));
  if (!m || !/^50*$/.test(m[3])) return x.toFixed(1);
  const tenths = BigInt(m[1] + m[2]);
  const even = tenths % 2n === 0n ? tenths : tenths + 1n;
  return `${x < 0 ? '-' : ''}${even / 10n}.${even % 10n}`;
};
const pct = (x) => `${cFixed1(x * 100)}%`;
const msOf = (us) => cFixed1(us / 1000);
function assertVerdictText(r) {
  const c = r.sc.comparison;
  assert.match(r.text, new RegExp(`^compare: ${c.verdict}, candidate ${c.candidate.id} vs baseline ${c.baseline.id}`), r.text);
  assert.doesNotMatch(r.text, /compare: ok/);
  const jr = c.metrics.jankRatio;
  // The jank ratio is always shown, moved or not, with its p-value.
  assert.ok(r.text.includes(`jank ratio ${pct(jr.baseline)} → ${pct(jr.candidate)} (${jr.baselineCount} → ${jr.candidateCount} frames)`), r.text);
  for (const [key, label] of [['buildUs', 'build'], ['rasterUs', 'raster']]) {
    const m = c.metrics[key];
    const values = `${label} p50 ${msOf(m.baseline.p50)} → ${msOf(m.candidate.p50)} ms, p90 ${msOf(m.baseline.p90)} → ${msOf(m.candidate.p90)} ms`;
    assert.ok(r.text.includes(values), `${values}\n${r.text}`);
    if (m.change !== 'same') assert.match(r.text, new RegExp(`${label} p50 [^\n]*: ${m.change} \\(shift [-+]\\d+\\.\\d ms\\), p=`), r.text);
  }
  const moved = Object.values(c.metrics).filter((m) => m.change !== 'same').length;
  assert.equal((r.text.match(/: (better|worse)[ ,]/g) ?? []).length >= moved, true, r.text);
  if (c.decidedBy) assert.match(r.text, /decided by /);
  else assert.match(r.text, /no significant change: jank ratio/);
  assert.ok(Buffer.byteLength(r.text) <= 1500, `${Buffer.byteLength(r.text)} bytes`);
}

test('compare: sessions that are not comparable say so in the text, with each reason', async () => {
  const { s, m } = await setup();
  const a = await measure(s, m, 'steady', 800);
  await s.cmd('scenario steady');
  await m.call({ action: 'start', trackWidgets: true, budgetMs: 8 });
  await s.drawn(96);
  const b = (await m.call({ action: 'stop' })).sc.session.id;
  const r = await m.call({ action: 'compare', baseline: a, candidate: b });
  assert.equal(r.isError, false, r.text);
  assert.equal(r.sc.comparison.comparable, false);
  assert.match(r.text, new RegExp(`^compare: NOT COMPARABLE \\(as measured: ${r.sc.comparison.verdict}; do not act on it\\)`), r.text);
  const breaking = r.sc.comparison.warnings.filter((w) => w.notComparable);
  assert.ok(breaking.some((w) => w.code === 'budget_differs') && breaking.some((w) => w.code === 'tracking_differs'), JSON.stringify(breaking));
  for (const w of breaking) assert.ok(r.text.includes(`warning (not comparable): ${w.message}`), r.text);
});

test('compare with fewer than two stopped sessions says what to do', async () => {
  const { m } = await setup(['--scenario', 'steady']);
  const r = await m.call({ action: 'compare' });
  assert.equal(r.isError, true);
  assert.match(r.text, /two stopped sessions/);
});

test('budgets on capture and stop: pass and fail, the failed limit named with its value', async () => {
  const { s, m } = await setup(['--scenario', 'janky']);
  const fail = await m.call({ action: 'capture', durationMs: 1200, budgets: { jankRatioMax: 0.01, frozenMax: 5 } });
  assert.equal(fail.isError, false, fail.text);
  assert.equal(fail.sc.budgets.verdict, 'fail');
  assert.deepEqual(fail.sc.budgets.failed.map((f) => f.name), ['jankRatioMax']);
  assert.equal(fail.sc.budgets.failed[0].actual, fail.sc.summary.jank.ratio);
  // The text says it in the words `check` prints: the verdict, each broken
  // limit with its value, how many held; and it stays short.
  assert.match(fail.text, /^budgets: FAIL jankRatioMax 0\.\d+ > 0\.01 \(1 of 2 passed\)$/m, fail.text);
  assert.ok(fail.text.includes(`jankRatioMax ${fail.sc.budgets.failed[0].actual.toPrecision(6).replace(/\.?0+$/, '')} > 0.01`), fail.text);
  assert.ok(Buffer.byteLength(fail.text) <= 1500, `${Buffer.byteLength(fail.text)} bytes`);
  await s.cmd('scenario steady');
  await m.call({ action: 'start' });
  await s.drawn(96);
  const pass = await m.call({ action: 'stop', budgets: { jankRatioMax: 0.5, buildP90MsMax: 100 } });
  assert.equal(pass.sc.budgets.verdict, 'pass', pass.text);
  assert.deepEqual(pass.sc.budgets.failed, []);
  assert.match(pass.text, /^budgets: PASS \(2 checked\)$/m, pass.text);
  const badBudget = await m.call({ action: 'stop', budgets: { jankRatioMax: 2 } });
  assert.equal(badBudget.isError, true);
  assert.match(badBudget.text, /jankRatioMax/);
  const unused = await m.call({ action: 'read', budgets: { frozenMax: 1 } });
  assert.ok(unused.sc.warnings.some((w) => /budgets: not used by read/.test(w)), unused.text);
});

test('chart: trace writes a Chrome trace file with one UI slice per frame', async () => {
  const dir = tempDir();
  const { m } = await setup(['--scenario', 'janky'], ['--chart-dir', dir]);
  const r = await m.call({ action: 'capture', durationMs: 800, chart: 'trace' });
  assert.equal(r.isError, false, r.text);
  assert.ok(r.sc.chart.path.startsWith(dir), r.sc.chart.path);
  const link = r.result.content.find((c) => c.type === 'resource_link');
  assert.equal(link.mimeType, 'application/json');
  const trace = JSON.parse(readFileSync(r.sc.chart.path, 'utf8'));
  const frames = trace.traceEvents.filter((e) => e.ph === 'X' && e.cat === 'frame');
  assert.equal(frames.length, r.sc.summary.frames, 'one UI slice per frame of the capture');
  assert.ok(frames.every((e) => e.dur >= 0 && Number.isFinite(e.ts)));
  assert.ok(trace.traceEvents.some((e) => e.ph === 'M' && e.name === 'thread_name'), 'tracks are named');
});

// The causes the findings name are in the trace: GC pauses on the UI GC
// track, shader compiles on the raster work track, and each janky frame's
// args say what it was bound by and what took its time.
for (const [scenario, cat, tid, field] of [['gc', 'gc', 4, 'gcUs'], ['shader', 'shader', 5, 'shaderUs']]) {
  test(`chart: trace holds the ${scenario} slices and each janky frame's cause`, async () => {
    const dir = tempDir();
    const { s, m } = await setup(['--scenario', scenario], ['--chart-dir', dir]);
    await m.call({ action: 'status' });
    const r = await m.call({ action: 'capture', durationMs: 2500, chart: 'trace' });
    assert.equal(r.isError, false, r.text);
    assert.equal(r.sc.session.timeline, 'on', r.text);
    const trace = JSON.parse(readFileSync(r.sc.chart.path, 'utf8'));
    const slices = trace.traceEvents.filter((e) => e.ph === 'X' && e.cat === cat);
    assert.ok(slices.length > 0, `no ${cat} slices: ${JSON.stringify(trace.traceEvents.filter((e) => e.ph === 'M'))}`);
    assert.ok(slices.every((e) => e.tid === tid && e.dur > 0 && e.ts >= -e.dur), JSON.stringify(slices.slice(0, 3)));
    const track = trace.traceEvents.find((e) => e.ph === 'M' && e.name === 'thread_name' && e.tid === tid);
    assert.equal(track?.args.name, tid === 4 ? 'UI GC' : 'Raster work');
    // Frames are named by the engine's frame number, and a janky frame's
    // args carry its cause; the frames the timeline touched carry its time.
    const frames = trace.traceEvents.filter((e) => e.ph === 'X' && e.cat === 'frame');
    assert.ok(frames.every((e) => e.name === `Frame ${e.args.frameNumber}`));
    const janky = frames.filter((e) => e.args.janky);
    assert.ok(janky.length > 0);
    assert.ok(janky.every((e) => ['build', 'raster'].includes(e.args.boundBy) && typeof e.args.cause === 'string'), JSON.stringify(janky[0].args));
    const hit = janky.filter((e) => e.args[field] > 0);
    assert.ok(hit.length > 0, `no janky frame with ${field}: ${JSON.stringify(janky.slice(0, 3).map((e) => e.args))}`);
    // The worst frames' time in structuredContent is the trace's time.
    for (const w of r.sc.summary.worstFrames.filter((x) => x[field] > 0)) {
      const f = frames.find((e) => e.args.seq === w.seq);
      assert.equal(f?.args[field], w[field], `frame seq ${w.seq}`);
    }
    // Each slice of the kind lies on the track, and a frame naming it as its
    // cause overlaps one of them.
    const named = janky.filter((e) => e.args.cause === (cat === 'gc' ? 'GC' : 'shader compilation'));
    assert.ok(named.length > 0, JSON.stringify(janky.slice(0, 3).map((e) => e.args)));
    // Each slice starts where the VM's timeline says the pause or compile
    // began: the trace's clock is the frames', and the VM's timeline is on
    // that clock already (offset 0). Asked of the VM directly.
    const vm = await Client.connect(s.wsUri);
    cleanup.push(() => vm.close());
    const tl = await vm.call('getVMTimeline', {});
    const origin = trace.otherData.originVsyncStartUs;
    const begins = new Set(tl.traceEvents.filter((e) => e.ph === 'B' || e.ph === 'X').map((e) => e.ts));
    const lo = Math.min(...begins), hi = Math.max(...begins);
    const held = slices.filter((e) => e.ts + origin >= lo && e.ts + origin <= hi);
    assert.ok(held.length > 0, `no ${cat} slice within the VM's timeline ${lo}..${hi}`);
    for (const e of held) assert.ok(begins.has(e.ts + origin), `${cat} slice at ${e.ts + origin} µs: no event of the VM's timeline begins there`);
  });
}
