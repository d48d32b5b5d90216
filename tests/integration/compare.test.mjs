// Issue 14 through the official SDK client against telescope-sim: compare two
// stopped sessions (improved / regressed / unchanged), budgets on stop and
// capture, and chart: "trace" written, parsed back and counted.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startSim, startMcp, assertNoTokenLeak, tempDir } from './harness.mjs';

const cleanup = [];
after(async () => { for (const c of cleanup.reverse()) await c(); assertNoTokenLeak(); });
async function setup(simArgs = [], mcpArgs = []) {
  const s = await startSim(['--seed', '11', '--fps', '120', ...simArgs]);
  cleanup.push(() => s.kill());
  const m = await startMcp(['--vm-service-uri-file', s.uriFile, ...mcpArgs]);
  cleanup.push(() => m.close());
  return { s, m };
}
// A stopped session of about ms of the scenario, measured with start/stop.
async function measure(s, m, scenario, ms = 1500) {
  await s.cmd(`scenario ${scenario}`);
  const st = await m.call({ action: 'start' });
  assert.equal(st.isError, false, st.text);
  await new Promise((r) => setTimeout(r, ms));
  const stop = await m.call({ action: 'stop' });
  assert.equal(stop.isError, false, stop.text);
  assert.ok(stop.sc.summary.frames >= 60, `${scenario}: ${stop.sc.summary.frames} frames`);
  return stop.sc.session.id;
}

test('compare: fixed jank is improved, reversed regressed, the same workload unchanged', async () => {
  const { s, m } = await setup();
  const janky = await measure(s, m, 'janky');
  const steady = await measure(s, m, 'steady');
  // Default: the two most recently stopped, older as baseline.
  const c1 = await m.call({ action: 'compare' });
  assert.equal(c1.isError, false, c1.text);
  assert.equal(c1.sc.comparison.baseline.id, janky);
  assert.equal(c1.sc.comparison.candidate.id, steady);
  assert.equal(c1.sc.comparison.verdict, 'improved', c1.text);
  assert.equal(c1.sc.comparison.comparable, true);
  const c2 = await m.call({ action: 'compare', baseline: steady, candidate: janky });
  assert.equal(c2.sc.comparison.verdict, 'regressed', c2.text);
  const steady2 = await measure(s, m, 'steady');
  const c3 = await m.call({ action: 'compare', baseline: steady, candidate: steady2 });
  assert.equal(c3.sc.comparison.verdict, 'unchanged', c3.text);
  // compare needs no app: it answers from the kept sessions.
  const bad = await m.call({ action: 'compare', baseline: 's99' });
  assert.equal(bad.isError, true);
  assert.match(bad.text, /s99/);
  const same = await m.call({ action: 'compare', baseline: steady, candidate: steady });
  assert.equal(same.isError, true);
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
  await s.cmd('scenario steady');
  await m.call({ action: 'start' });
  await new Promise((r) => setTimeout(r, 800));
  const pass = await m.call({ action: 'stop', budgets: { jankRatioMax: 0.5, buildP90MsMax: 100 } });
  assert.equal(pass.sc.budgets.verdict, 'pass', pass.text);
  assert.deepEqual(pass.sc.budgets.failed, []);
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
