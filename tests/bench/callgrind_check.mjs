// The callgrind regression check (ctest bench.callgrind, label callgrind, in
// `make test`). Runs each hot path of bench_core once under
// valgrind --tool=callgrind with collection on only inside hot_<name>, and
// compares its instruction count (Ir) with the committed figure for this
// build configuration in callgrind_baseline.json. Fails when one grew by more
// than 10 %. Instruction counts are the same from run to run of one build, so
// the check does not care how busy the machine is.
//
//   node callgrind_check.mjs --bench-core PATH --config ID [--valgrind PATH] [--update]
//
// After an intended change (or for a new compiler), record the new figures:
//   TELESCOPE_CALLGRIND_UPDATE=1 ctest --test-dir build -R bench.callgrind
// (or pass --update), check the diff of tests/bench/callgrind_baseline.json,
// and commit it with the change that explains it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const HOT_PATHS = ['framing', 'dispatch', 'ingest', 'summary'];
export const MARGIN = 0.10;
const baselineFile = new URL('./callgrind_baseline.json', import.meta.url).pathname;

// Ir of one hot path (collection toggled on inside hot_<name> only).
export function measure(benchCore, name, valgrind = 'valgrind') {
  const dir = mkdtempSync(join(tmpdir(), 'telescope-cg-'));
  const out = join(dir, 'callgrind.out');
  try {
    execFileSync(valgrind, ['--tool=callgrind', `--callgrind-out-file=${out}`,
      `--toggle-collect=hot_${name}`, benchCore, 'hot', name], { stdio: ['ignore', 'pipe', 'pipe'] });
    const m = readFileSync(out, 'utf8').match(/^(?:summary|totals):\s+(\d+)/m);
    if (!m) throw new Error(`no Ir total in the callgrind output of ${name}`);
    return Number(m[1]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function main() {
  const args = process.argv.slice(2);
  const opt = (n, d) => { const i = args.indexOf(n); return i >= 0 ? args[i + 1] : d; };
  const benchCore = opt('--bench-core');
  const config = opt('--config');
  const valgrind = opt('--valgrind', 'valgrind');
  const update = args.includes('--update') || process.env.TELESCOPE_CALLGRIND_UPDATE === '1';
  if (!benchCore || !config) {
    console.error('usage: callgrind_check.mjs --bench-core PATH --config ID [--valgrind PATH] [--update]');
    process.exit(2);
  }
  const base = JSON.parse(readFileSync(baselineFile, 'utf8'));
  const committed = base.configs?.[config];
  const now = {};
  let failed = 0;
  for (const name of HOT_PATHS) {
    now[name] = measure(benchCore, name, valgrind);
    const was = committed?.[name];
    if (was === undefined) {
      console.log(`${name}: ${now[name]} Ir (no committed figure)`);
      continue;
    }
    const change = (now[name] - was) / was;
    const verdict = change > MARGIN ? 'FAIL: grew more than 10 %' :
      change < -MARGIN ? 'ok (shrank more than 10 %: consider recording the new figure)' : 'ok';
    if (change > MARGIN) failed++;
    console.log(`${name}: ${now[name]} Ir, committed ${was} (${(change * 100).toFixed(1)} %) ${verdict}`);
  }
  if (update) {
    base.configs = { ...base.configs, [config]: now };
    writeFileSync(baselineFile, JSON.stringify(base, null, 2) + '\n');
    console.log(`recorded the figures of ${config} in ${baselineFile}`);
    return;
  }
  if (!committed) {
    console.log(`No committed figures for ${config}: skipped. Record them with ` +
      'TELESCOPE_CALLGRIND_UPDATE=1 ctest -R bench.callgrind and commit tests/bench/callgrind_baseline.json.');
    process.exit(77);
  }
  if (failed) {
    console.error(`${failed} hot path(s) grew by more than 10 % over tests/bench/callgrind_baseline.json ` +
      `(${config}). If the growth is intended, record the new figures (see the top of this script).`);
    process.exit(1);
  }
}

if (process.argv[1] && import.meta.url === `file://${process.argv[1]}`) main();
