// make mutants: plants each plausible bug of tests/mutants/*.mutant, one at a
// time, in a copy of the source tree (the worktree is never touched), builds
// the copy in build-mutants/, runs the tests that cover the mutated file,
// and reports each mutant killed (a test failed, or it no longer builds),
// survived (every covering test passed) or not applicable (its snippet is no
// longer in the file: rewrite the mutant). Not part of make test.
//
// A mutant file (no line numbers, so it survives unrelated edits):
//   description: one line saying what bug it plants
//   file: server/<file>.c
//   @@ original
//   <an exact snippet, found exactly once in the file>
//   @@ replacement
//   <what it becomes>
//
// Usage: node tests/mutants/run.mjs [build-dir] [name-filter]
import { appendFileSync, readFileSync, writeFileSync, readdirSync, mkdirSync, existsSync, symlinkSync, chmodSync, statSync, lstatSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '../..');
const OUT = resolve(ROOT, process.argv[2] ?? 'build-mutants');
const FILTER = process.argv[3] ?? '';
const SRC = join(OUT, 'src');
const BUILD = join(OUT, 'build');
const JOBS = process.env.JOBS ?? '2';

// Which tests cover each file: ctest regexes (the unit test of a pure module,
// and the integration or model tests where the module runs on the loop), and
// the build targets those tests need (only they are rebuilt per mutant).
const APP = ['telescope-mcp', 'telescope-sim'];
const unit = (...names) => ({ re: `^unit\\.test_(${names.join('|')})$`, targets: names.map((n) => `test_${n}`) });
const plus = (u, re, targets = APP) => ({ re: `${u.re}|${re}`, targets: [...u.targets, ...targets] });
const COVER = {
  'server/findings.c': plus(unit('findings', 'report', 'causes'), '^integration\\.recordings$'),
  'server/causes.c': unit('causes', 'findings', 'report'),
  'server/frame_cause.c': plus(unit('frame_cause', 'causes'), '^integration\\.recordings$'),
  'server/compare.c': plus(unit('compare'), '^integration\\.compare$'),
  'server/stats.c': unit('stats', 'compare'),
  'server/cpuprof.c': unit('cpuprof', 'answer_text'),
  'server/appsrc_cpu.c': plus(unit('cpuprof'), '^integration\\.where$'),
  'server/budgets.c': unit('budgets'),
  'server/frame_events.c': plus(unit('frame_events'), '^integration\\.frame_events$'),
  'server/frame_events_ring.c': plus(unit('frame_events'), '^integration\\.frame_events$'),
  'server/vmtl.c': unit('vmtl'),
  'server/vmtl_join.c': unit('vmtl', 'causes'),
  'server/vmtl_names.c': unit('vmtl'),
  'server/vm_call.c': plus(unit('vm_isolate_pure', 'vm_loop'), '^vm\\.sim$|^integration\\.(connect|dds_dwds|session)$',
    [...APP, 'test_vm_sim']),
  'server/sessions.c': plus(unit('sessions'), '^integration\\.(session|frame_events)$'),
  'server/sessions_list.c': plus(unit('sessions'), '^integration\\.(session|frame_events)$'),
  'server/drain.c': plus(unit('sessions'), '^integration\\.session$'),
  'server/appsrc_timeline.c': plus(unit('sessions'), '^integration\\.(session|frame_events)$'),
  'server/wproto.c': plus(unit('sessions', 'watcher_vectors'), '^integration\\.session$'),
  'server/switches.c': plus(unit('sessions'), '^integration\\.(session|rebuilds)$'),
  'server/trace.c': unit('trace'),
  'server/check_cmd.c': { re: '^integration\\.check$', targets: APP },
  'server/answer_text.c': plus(unit('answer_text'), '^integration\\.recordings$'),
  'server/rebuilds.c': plus(unit('rebuilds'), '^integration\\.(rebuilds|recordings)$'),
  'server/action_session.c': { re: '^integration\\.(where|session|apps|rebuilds)$', targets: APP },
  'server/action_read.c': { re: '^integration\\.(where|session)$', targets: APP },
  'server/answer_where.c': { re: '^integration\\.(where|session)$', targets: APP },
  'server/apps.c': { re: '^integration\\.(apps|dtd|connect|session|rebuilds)$', targets: APP },
  'server/vm_isolate.c': plus(unit('vm_isolate_pure', 'vm_loop'), '^integration\\.(connect|dtd)$'),
  'server/dtd_pick.c': { re: '^integration\\.(apps|dtd)$', targets: APP },
  'server/vm_client.c': plus(unit('vm_client_pure', 'vm_loop'), '^vm\\.sim$|^integration\\.(connect|dds_dwds)$',
    [...APP, 'test_vm_sim']),
  'server/vm_request.c': plus(unit('vm_client_pure', 'vm_loop'), '^vm\\.sim$|^integration\\.(connect|dds_dwds)$',
    [...APP, 'test_vm_sim']),
  'server/vm_handover.c': plus(unit('vm_client_pure', 'vm_loop'), '^vm\\.sim$|^integration\\.(connect|dds_dwds)$',
    [...APP, 'test_vm_sim']),
  'server/vm_wire.c': plus(unit('vm_client_pure', 'vm_loop'), '^vm\\.sim$|^integration\\.(connect|dds_dwds)$',
    [...APP, 'test_vm_sim']),
  'server/record.c': unit('record', 'record_text', 'watcher_vectors', 'store'),
  'server/record_reply.c': unit('record', 'record_text', 'watcher_vectors'),
  'server/json_len.c': unit('json_len', 'summary', 'store'),
  'server/cursor.c': unit('cursor'),
  'server/store.c': unit('store'),
  'server/summary.c': unit('summary', 'findings', 'answer_text'),
  'server/summary_json.c': unit('summary', 'findings', 'answer_text'),
  'server/metric.c': unit('summary', 'findings', 'answer_text'),
};

function parse(path) {
  const text = readFileSync(path, 'utf8');
  const m = /^description: (.*)\nfile: (.*)\n@@ original\n([\s\S]*?)\n@@ replacement\n([\s\S]*?)\n?$/.exec(text);
  if (!m) throw new Error(`${path}: not a mutant (description, file, @@ original, @@ replacement)`);
  return { name: path.split('/').pop().replace(/\.mutant$/, ''), description: m[1], file: m[2], original: m[3], replacement: m[4] };
}

const sh = (cmd, args, opts = {}) => spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 26, ...opts });

// A copy of the tracked tree (what the worktree holds now, edits included).
// Only files that differ are written, so a second run rebuilds little, and a
// file an interrupted run left mutated is put right.
function copyTree() {
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n').filter((f) => f && !/^build/.test(f) && existsSync(join(ROOT, f)) &&
      lstatSync(join(ROOT, f)).isFile()); // not a symlink (node_modules) nor a directory
  for (const f of files) {
    const data = readFileSync(join(ROOT, f));
    const to = join(SRC, f);
    if (existsSync(to) && readFileSync(to).equals(data)) continue;
    mkdirSync(dirname(to), { recursive: true });
    writeFileSync(to, data);
    chmodSync(to, statSync(join(ROOT, f)).mode);
  }
  const nm = join(SRC, 'tests/client/node_modules');
  if (!existsSync(nm) && existsSync(join(ROOT, 'tests/client/node_modules')))
    symlinkSync(join(ROOT, 'tests/client/node_modules'), nm);
}

function build(targets) {
  return sh('cmake', ['--build', BUILD, '-j', JOBS, ...(targets ? ['--target', ...targets] : [])]);
}

const mutants = readdirSync(HERE).filter((f) => f.endsWith('.mutant') && f.includes(FILTER)).sort()
  .map((f) => parse(join(HERE, f)));
if (!mutants.length) { console.error('no mutants'); process.exit(2); }

copyTree();
let r = sh('cmake', ['-S', SRC, '-B', BUILD, '-DCMAKE_BUILD_TYPE=RelWithDebInfo']);
if (r.status !== 0) { console.error(r.stdout, r.stderr); process.exit(1); }
r = build();
if (r.status !== 0) { console.error(r.stdout.slice(-4000), r.stderr.slice(-4000)); process.exit(1); }

const results = [];
for (const mu of mutants) {
  const target = join(SRC, mu.file);
  const cover = COVER[mu.file];
  const t0 = Date.now();
  let verdict, detail = '';
  const orig = readFileSync(target, 'utf8');
  const n = orig.split(mu.original).length - 1;
  if (!cover) { verdict = 'not-applicable'; detail = `no covering tests listed for ${mu.file}`; }
  else if (n !== 1) { verdict = 'not-applicable'; detail = `snippet found ${n} times`; }
  else {
    writeFileSync(target, orig.replace(mu.original, () => mu.replacement));
    try {
      const b = build(cover.targets);
      if (b.status !== 0) { verdict = 'killed'; detail = 'does not build'; }
      else {
        // Check's 4 s default per test is too short on a loaded machine: a
        // timeout would count as a kill.
        const t = sh('ctest', ['-R', cover.re, '--timeout', '600', '-LE', 'valgrind'],
          { cwd: BUILD, env: { ...process.env, CK_DEFAULT_TIMEOUT: '60' } });
        const failed = (t.stdout.match(/\*\*\*Failed|\*\*\*Timeout|Failed +[0-9.]+ sec|\(Failed\)|\(Timeout\)/g) ?? []).length;
        const ran = /tests passed, (\d+) tests failed out of (\d+)/.exec(t.stdout);
        if (!ran) { verdict = 'not-applicable'; detail = `no test matched ${cover.re}`; }
        else if (Number(ran[1]) > 0 || failed) {
          verdict = 'killed';
          detail = t.stdout.split('\n').filter((l) => /\(Failed\)|\(Timeout\)|\*\*\*/.test(l)).map((l) => l.trim().replace(/^\d+ - /, '')).join(', ');
        } else { verdict = 'survived'; detail = `${ran[2]} tests passed`; }
      }
    } finally {
      writeFileSync(target, orig); // restored whatever happened
    }
  }
  const secs = ((Date.now() - t0) / 1000).toFixed(0);
  results.push({ ...mu, verdict, detail });
  console.log(`${verdict.padEnd(14)} ${mu.name} (${mu.file}, ${secs} s): ${mu.description}${detail ? ` — ${detail}` : ''}`);
}

const applicable = results.filter((x) => x.verdict !== 'not-applicable');
const killed = applicable.filter((x) => x.verdict === 'killed').length;
const survived = applicable.filter((x) => x.verdict === 'survived');
const na = results.length - applicable.length;
const pct = applicable.length ? (100 * killed / applicable.length).toFixed(0) : '0';
console.log(`\nmutants: ${results.length}, killed ${killed}, survived ${survived.length}, not applicable ${na}; score ${killed}/${applicable.length} = ${pct} % killed`);
for (const s of survived) console.log(`  survived: ${s.name}: ${s.description}`);
// The run's line in SCORES.md, which make bench copies into BENCHMARKS.md §12.
const commit = (() => { try { return execFileSync('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim(); } catch { return 'unknown'; } })();
appendFileSync(join(ROOT, 'tests/mutants/SCORES.md'),
  `| ${new Date().toISOString().slice(0, 16).replace('T', ' ')} | ${commit} | ${FILTER || "all"} | ${results.length} | ${killed} | ${survived.length} | ${na} | ${pct} % | ${survived.map((x) => x.name).join(', ') || '—'} |\n`);
process.exit(0);
