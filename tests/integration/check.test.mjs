// telescope-mcp check against the real telescope-sim: exit codes 0/1/2/64,
// the report's keys (schema/check_report.json) and its values consistent
// with the summary and with the frames, Flutter's TimelineSummary rules
// recomputed here independently.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { BUILD, SOURCE, startSim, tempDir, serverOutput, assertNoTokenLeak, until, WRAPPER, TIMEOUT_SCALE } from './harness.mjs';

const require = createRequire(join(process.env.TELESCOPE_NODE_MODULES ?? '', 'x.js'));
const Ajv = require('ajv');
const validateReport = new Ajv({ strict: false, allErrors: true })
  .compile(JSON.parse(readFileSync(join(SOURCE, 'schema/check_report.json'), 'utf8')));

const sims = [];
after(async () => { for (const s of sims) await s.kill(); assertNoTokenLeak(); });

// Runs `telescope-mcp check ARGS`; resolves {code, stdout, stderr}.
// Under a wrapper (valgrind) every call timeout stretches by TIMEOUT_SCALE,
// as the harness does for the server.
function check(args) {
  if (WRAPPER.length && args.some((a) => a.startsWith('--vm-service-uri')) && !args.includes('--help')) {
    const i = args.indexOf('--call-timeout-ms');
    if (i >= 0) args = args.map((a, k) => (k === i + 1 ? String(Number(a) * TIMEOUT_SCALE) : a));
    else args = ['--call-timeout-ms', String(3000 * TIMEOUT_SCALE), ...args]; // first: the last flag may be the one missing its value
  }
  const cmd = WRAPPER.length ? WRAPPER[0] : join(BUILD, 'telescope-mcp');
  const argv = [...WRAPPER.slice(1), ...(WRAPPER.length ? [join(BUILD, 'telescope-mcp')] : []), 'check', ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '', stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`check hung: ${stderr}`)); }, 60000 * TIMEOUT_SCALE);
    child.on('exit', (code) => {
      clearTimeout(timer);
      serverOutput.push(stdout, stderr);
      resolve({ code, stdout, stderr });
    });
  });
}

function readReport(path) {
  const r = JSON.parse(readFileSync(path, 'utf8'));
  assert.ok(validateReport(r), `report invalid: ${JSON.stringify(validateReport.errors)}`);
  return r;
}

// Flutter's findPercentile: sorted[round((n-1)·p/100)], Dart round = half away from zero.
const pct = (sorted, p) => sorted[Math.round((sorted.length - 1) * p / 100)];

test('steady app within generous budgets: exit 0, report keys match the summary', async () => {
  const sim = await startSim(['--scenario', 'steady', '--seed', '3']); sims.push(sim);
  const dir = tempDir();
  writeFileSync(join(dir, 'budgets.json'), JSON.stringify({ jankRatioMax: 0.5, buildP90MsMax: 50, rasterP90MsMax: 50, frozenMax: 0 }));
  const report = join(dir, 'report.json');
  const r = await check(['--vm-service-uri-file', sim.uriFile, '--duration-ms', '1500',
    '--budgets', join(dir, 'budgets.json'), '--report', report]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /^telescope check: \d+ frames in 1\.5 s/);
  assert.match(r.stdout, /budgets: PASS \(4 checked\)/);
  assert.ok(r.stdout.split('\n').length <= 6, 'the human summary is short');
  const rep = readReport(report);
  const s = rep.summary;
  assert.ok(s.frames >= 30, `${s.frames} frames in 1.5 s at 60 fps`);
  assert.equal(rep.exitCode, 0);
  assert.equal(rep.budgets.verdict, 'pass');
  assert.equal(rep.frame_count, s.frames);
  assert.equal(rep.framesComplete, true, 'a 1.5 s capture lists every frame');
  assert.equal(rep['90th_percentile_frame_build_time_millis'], s.buildUs.p90 / 1000);
  assert.equal(rep['99th_percentile_frame_build_time_millis'], s.buildUs.p99 / 1000);
  assert.equal(rep.worst_frame_build_time_millis, s.buildUs.max / 1000);
  assert.equal(rep['90th_percentile_frame_rasterizer_time_millis'], s.rasterUs.p90 / 1000);
  assert.equal(rep.worst_frame_rasterizer_time_millis, s.rasterUs.max / 1000);
  assert.ok(Math.abs(rep.average_frame_build_time_millis - s.buildUs.avg / 1000) <= 0.0005);
  assert.equal(rep.missed_frame_build_budget_count, 0, 'steady frames stay under 16 ms');
  assert.equal(rep.session.framesSeen, s.frames);
});

test('janky app with a tight jankRatioMax: exit 1, the failed budget named; TimelineSummary keys from the frames', async () => {
  const sim = await startSim(['--scenario', 'janky', '--seed', '7']); sims.push(sim);
  const dir = tempDir();
  writeFileSync(join(dir, 'budgets.json'), JSON.stringify({ jankRatioMax: 0.01, rasterP90MsMax: 100 }));
  const report = join(dir, 'report.json');
  const r = await check(['--vm-service-uri', sim.wsUri, '--duration-ms', '2000',
    '--budgets', join(dir, 'budgets.json'), '--report', report, '--interaction', 'scroll-feed']);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.match(r.stdout, /budgets: FAIL jankRatioMax 0\.\d+ > 0\.01/);
  const rep = readReport(report);
  assert.equal(rep.exitCode, 1);
  assert.deepEqual(rep.budgets.failed.map((f) => f.name), ['jankRatioMax']);
  assert.equal(rep.budgets.failed[0].actual, rep.summary.jank.ratio);
  assert.ok(rep.summary.jank.ratio > 0.01);
  assert.equal(rep.interactionId, 'scroll-feed');
  assert.equal(rep.summary.interactions[0].interactionId, 'scroll-feed');
  assert.equal(rep.summary.interactions[0].linkedBy, 'check');
  // The sim's janky frames run 1.15–2.55 × 16.7 ms of build: each one
  // missed Flutter's fixed 16 ms, so the counts agree with jank.frames.
  assert.equal(rep.missed_frame_build_budget_count, rep.summary.jank.frames);
  assert.ok(rep.missed_frame_build_budget_count > 0);
  assert.equal(rep['90th_percentile_frame_build_time_millis'], rep.summary.buildUs.p90 / 1000);
});

test('a long capture lists fewer frames than it summarised: keys from the summary, missed counts flagged as estimates', async () => {
  // More frames than fit a 64 KB answer: 700. At 120 fps for 6 s a loaded
  // machine's sim drew 411 (soak), so once the capture has begun (the
  // watcher started) the sim draws them at 1200 fps, where it draws the
  // frames due by the clock rather than one a timer tick, and counts them.
  const sim = await startSim(['--scenario', 'steady', '--seed', '5', '--fps', '120']); sims.push(sim);
  const report = join(tempDir(), 'report.json');
  const running = check(['--vm-service-uri-file', sim.uriFile, '--duration-ms', '6000', '--report', report]);
  await until(async () => (await sim.stats()).starts >= 1, { what: 'the capture begun' });
  await sim.cmd('fps 1200');
  await sim.drawn(700);
  await sim.cmd('fps 120');
  const r = await running;
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const rep = readReport(report);
  assert.ok(rep.summary.frames > 500, `${rep.summary.frames} frames`);
  assert.equal(rep.framesComplete, false);
  assert.equal(rep.missedCountsEstimated, true);
  assert.equal(rep.frame_count, rep.summary.frames);
  assert.equal(rep['99th_percentile_frame_build_time_millis'], rep.summary.buildUs.p99 / 1000);
  assert.equal(rep.budgets, undefined, 'no --budgets, no budgets verdict');
});

test('nothing measurable: exit 2 with the diagnosis (no app, idle app, paused isolate)', async () => {
  const none = await check(['--vm-service-uri', 'ws://127.0.0.1:9/abcdefghijk=/ws', '--duration-ms', '200']);
  assert.equal(none.code, 2, none.stdout + none.stderr);
  assert.match(none.stdout, /nothing measured: not_connected/);
  assert.match(none.stdout, /^  detail: could not connect/m, 'the reason, not only the code');

  // A plain Dart program: not a Flutter app, said so, not "add the watcher".
  const dart = await startSim(['--plain-dart']); sims.push(dart);
  const d = await check(['--vm-service-uri-file', dart.uriFile, '--duration-ms', '300']);
  assert.equal(d.code, 2, d.stdout + d.stderr);
  assert.match(d.stdout, /nothing measured: not_flutter: Not a Flutter app/);
  assert.doesNotMatch(d.stdout, /TelescopePlugin/);

  const idle = await startSim(['--scenario', 'idle']); sims.push(idle);
  const report = join(tempDir(), 'report.json');
  const r = await check(['--vm-service-uri-file', idle.uriFile, '--duration-ms', '500', '--report', report]);
  assert.equal(r.code, 2, r.stdout + r.stderr);
  assert.match(r.stdout, /nothing measured: app_idle/);
  assert.match(r.stdout, /hint: /);
  const rep = readReport(report);
  assert.equal(rep.exitCode, 2);
  assert.equal(rep.diagnosis.code, 'app_idle');
  assert.equal(rep.frame_count, 0);
  assert.equal(rep.average_frame_build_time_millis, undefined, 'Flutter has no average of no frames');

  const paused = await startSim(['--start-paused']); sims.push(paused);
  const p = await check(['--vm-service-uri-file', paused.uriFile, '--duration-ms', '300', '--call-timeout-ms', '2000']);
  assert.equal(p.code, 2, p.stdout + p.stderr);
  assert.match(p.stdout, /nothing measured: isolate_paused/);
});

test('bad command lines: exit 64 and a message naming the problem; --help exits 0', async () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'bad.json'), '{"jankRatio": 0.1}');
  writeFileSync(join(dir, 'broken.json'), '{"jankRatioMax": ');
  const cases = [
    [['--duration-ms', '1000'], /give the app/],
    [['--vm-service-uri', 'ws://127.0.0.1:1/x=/ws'], /--duration-ms N is required/],
    [['--vm-service-uri', 'ws://127.0.0.1:1/x=/ws', '--duration-ms', '50'], /--duration-ms: must be an integer from 100 to 120000/],
    [['--vm-service-uri', 'ws://127.0.0.1:1/x=/ws', '--duration-ms', '1000', '--frobnicate'], /unknown option '--frobnicate'/],
    [['--vm-service-uri', 'ws://127.0.0.1:1/x=/ws', '--duration-ms', '1000', '--budgets', join(dir, 'bad.json')], /budgets\.jankRatio: unknown/],
    [['--vm-service-uri', 'ws://127.0.0.1:1/x=/ws', '--duration-ms', '1000', '--budgets', join(dir, 'broken.json')], /broken\.json: line 1/],
    [['--vm-service-uri', 'ws://127.0.0.1:1/x=/ws', '--duration-ms', '1000', '--budgets', join(dir, 'missing.json')], /missing\.json/],
    [['--vm-service-uri', 'ws://127.0.0.1:1/x=/ws', '--vm-service-uri-file', join(dir, 'u'), '--duration-ms', '1000'], /exclude each other/],
    [['--dtd-uri', 'ws://127.0.0.1:1/d=/ws', '--vm-service-uri', 'ws://127.0.0.1:1/x=/ws', '--duration-ms', '1000'], /exclude each other/],
    [['--vm-service-uri', 'ws://127.0.0.1:1/x=/ws', '--duration-ms', '1000', '--report', join(dir, 'no/such/dir/r.json')], /--report/],
    [['--vm-service-uri', 'ws://127.0.0.1:1/x=/ws', '--duration-ms'], /--duration-ms needs a value/],
  ];
  for (const [args, msg] of cases) {
    const r = await check(args);
    assert.equal(r.code, 64, `${args.join(' ')} → ${r.code}: ${r.stderr}`);
    assert.match(r.stderr, msg);
    assert.equal(r.stdout, '', 'a usage error prints nothing on stdout');
  }
  const h = await check(['--help']);
  assert.equal(h.code, 0);
  assert.match(h.stdout, /^Usage: telescope-mcp check/);
  assert.ok(!existsSync(join(dir, 'no')), 'nothing was created for the bad --report');
});
