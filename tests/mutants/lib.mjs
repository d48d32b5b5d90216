// What make mutants and make mutants-auto share: the map from a source file
// to the tests that cover it, the copy of the tree they plant mutants in
// (build-mutants/src, built in build-mutants/build; the worktree is never
// touched), and one mutant's trial: plant, build what its tests need, run
// them, put the file back.
import { readFileSync, writeFileSync, mkdirSync, existsSync, symlinkSync, chmodSync, statSync, lstatSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const JOBS = process.env.JOBS ?? '2';

// Which tests cover each file: ctest regexes (the unit test of a pure module,
// and the integration or model tests where the module runs on the loop), and
// the build targets those tests need (only they are rebuilt per mutant).
// test_alloc_fail counts live blocks, so a leak (a lost free, a reference
// count one too high) shows there without valgrind, which mutants skip.
const APP = ['telescope-mcp', 'telescope-sim'];
const unit = (...names) => ({ re: `^unit\\.test_(${names.join('|')})$`, targets: names.map((n) => `test_${n}`) });
const plus = (u, re, targets = APP) => ({ re: `${u.re}|${re}`, targets: [...u.targets, ...targets] });
export const COVER = {
  'server/findings.c': plus(unit('findings', 'report', 'causes'), '^integration\\.recordings$'),
  'server/causes.c': unit('causes', 'findings', 'report'),
  'server/frame_cause.c': plus(unit('frame_cause', 'causes'), '^integration\\.recordings$'),
  'server/compare.c': plus(unit('compare', 'alloc_fail', 'workload'), '^integration\\.compare$'),
  'server/stats.c': unit('stats', 'compare'),
  // cpuprof.c's tests include valgrind.test_cpuprof (2 s): a write past a
  // zero-sized block, which glibc's malloc leaves room for, shows only under
  // memcheck (`nf ? nf : 1` → `0`).
  'server/cpuprof.c': { ...plus(unit('cpuprof', 'answer_text', 'alloc_fail'), '^valgrind\\.test_cpuprof$', []), memcheck: true },
  'server/appsrc_cpu.c': plus(unit('cpuprof'), '^integration\\.(where|realsizes)$'),
  'server/budgets.c': unit('budgets'),
  'server/frame_events.c': plus(unit('frame_events'), '^integration\\.frame_events$'),
  'server/frame_events_ring.c': plus(unit('frame_events'), '^integration\\.frame_events$'),
  'server/vmtl.c': unit('vmtl'),
  'server/vmtl_join.c': unit('vmtl', 'causes'),
  'server/vmtl_names.c': unit('vmtl'),
  'server/vm_call.c': plus(unit('vm_isolate_pure', 'vm_loop'), '^vm\\.sim$|^integration\\.(connect|dds_dwds|session|realsizes)$',
    [...APP, 'test_vm_sim']),
  'server/sessions.c': plus(unit('sessions'), '^integration\\.(session|frame_events)$'),
  'server/drain.c': plus(unit('sessions'), '^integration\\.session$'),
  'server/appsrc_timeline.c': plus(unit('sessions', 'appsrc_timeline'), '^integration\\.(session|frame_events)$'),
  'server/wproto.c': plus(unit('sessions', 'watcher_vectors'), '^integration\\.session$'),
  'server/trace.c': unit('trace'),
  'server/check_cmd.c': { re: '^integration\\.check$', targets: APP },
  'server/answer_text.c': plus(unit('answer_text', 'workload'), '^integration\\.recordings$'),
  'server/rebuilds.c': plus(unit('rebuilds'), '^integration\\.(rebuilds|recordings)$'),
  'server/action_session.c': { re: '^integration\\.(where|session|apps|compare|rebuilds)$', targets: APP },
  'server/action_read.c': { re: '^integration\\.(where|session)$', targets: APP },
  'server/answer_where.c': { re: '^integration\\.(where|session)$', targets: APP },
  'server/apps.c': { re: '^integration\\.(apps|dtd|connect|session|rebuilds)$', targets: APP },
  'server/dtd_pick.c': { re: '^integration\\.(apps|dtd)$', targets: APP },
  'server/vm_client.c': plus(unit('vm_client_pure', 'vm_loop'), '^vm\\.sim$|^integration\\.(connect|dds_dwds|realsizes)$',
    [...APP, 'test_vm_sim']),
  'server/vm_request.c': plus(unit('vm_client_pure', 'vm_loop'), '^vm\\.sim$|^integration\\.(connect|dds_dwds)$',
    [...APP, 'test_vm_sim']),
  'server/vm_handover.c': plus(unit('vm_client_pure', 'vm_loop'), '^vm\\.sim$|^integration\\.(connect|dds_dwds)$',
    [...APP, 'test_vm_sim']),
  'server/vm_wire.c': plus(unit('vm_client_pure', 'vm_loop'), '^vm\\.sim$|^integration\\.(connect|dds_dwds)$',
    [...APP, 'test_vm_sim']),
  'server/record.c': unit('record', 'record_text', 'watcher_vectors', 'store', 'alloc_fail'),
  'server/record_reply.c': unit('record', 'record_text', 'watcher_vectors', 'workload'),
  'server/json_len.c': unit('json_len', 'summary', 'store'),
  'server/cursor.c': unit('cursor'),
  'server/store.c': unit('store'),
  'server/summary.c': unit('summary', 'findings', 'answer_text'),
  'server/summary_json.c': unit('summary', 'findings', 'answer_text'),
  'server/metric.c': unit('summary', 'findings', 'answer_text'),
  'server/summary_clock.c': unit('summary'),
  'server/chart.c': unit('chart'),
  'server/codes.c': unit('codes'),
  'server/diagnose.c': unit('diagnose'),
  'server/dtd_wire.c': unit('dtd_wire'),
  'server/dtd.c': plus(unit('dtd_wire'), '^integration\\.dtd$'),
  'server/framing.c': unit('framing', 'stdio'),
  'server/stdio_transport.c': unit('stdio'),
  'server/jsonrpc.c': unit('jsonrpc', 'mcp'),
  'server/mcp.c': plus(unit('mcp'), '^case\\.'),
  'server/mcp_call.c': plus(unit('mcp'), '^case\\.'),
  'server/mcp_out.c': plus(unit('mcp'), '^case\\.'),
  'server/mcp_version.c': plus(unit('mcp'), '^case\\.'),
  'server/report.c': unit('report'),
  'server/validate.c': unit('validate'),
  'server/vm_uri.c': unit('vm_uri'),
  'server/vm_isolate.c': plus(unit('vm_isolate_pure', 'vm_loop'), '^vm\\.sim$|^integration\\.(connect|session|dtd)$',
    [...APP, 'test_vm_sim']),
  'server/switches.c': plus(unit('sessions'), '^integration\\.(session|rebuilds)$'),
  'server/waits.c': plus(unit('sessions'), '^integration\\.session$'),
  'server/history.c': plus(unit('sessions'), '^integration\\.session$'),
  'server/session.c': plus(unit('sessions', 'alloc_fail'), '^integration\\.session$'),
  'server/action_capture.c': { re: '^integration\\.session$', targets: APP },
  'server/action_status.c': { re: '^integration\\.(session|connect)$', targets: APP },
  'server/action_compare.c': { re: '^integration\\.(compare|apps|workload)$', targets: APP },
  'server/frames_answer.c': { re: '^integration\\.(session|answers)$', targets: APP },
  'server/apps_text.c': { re: '^integration\\.(apps|dtd)$', targets: APP },
  'server/op.c': { re: '^integration\\.(session|connect)$', targets: APP },
  'server/workload.c': unit('workload', 'alloc_fail'),
  'server/action_drive.c': { re: '^integration\\.workload$|^model\\.regressions$', targets: APP },
  'watcher/sim/model.c': unit('watcher_vectors'),
  'watcher/sim/model_drive_plan.c': plus(unit('drive_plan'), '^sim\\.drive$', ['telescope-sim']),
  'watcher/sim/sim_drive.c': { re: '^sim\\.(drive|driver)$', targets: ['telescope-sim'] },
};

export const sh = (cmd, args, opts = {}) => spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 26, ...opts });

export function workspace(outDir) {
  const OUT = resolve(ROOT, outDir ?? 'build-mutants');
  return { OUT, SRC: join(OUT, 'src'), BUILD: join(OUT, 'build') };
}

// A copy of the tracked tree (what the worktree holds now, edits included).
// Only files that differ are written, so a second run rebuilds little, and a
// file an interrupted run left mutated is put right. Then configured and
// built whole; exits on failure.
export function prepare(ws) {
  const { SRC, BUILD } = ws;
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
  let r = sh('cmake', ['-S', SRC, '-B', BUILD, '-DCMAKE_BUILD_TYPE=RelWithDebInfo']);
  if (r.status !== 0) { console.error(r.stdout, r.stderr); process.exit(1); }
  r = build(ws);
  if (r.status !== 0) { console.error(r.stdout.slice(-4000), r.stderr.slice(-4000)); process.exit(1); }
}

export function build(ws, targets) {
  return sh('cmake', ['--build', ws.BUILD, '-j', JOBS, ...(targets ? ['--target', ...targets] : [])]);
}

// Plants `mutated` (the whole new text of file) in the copy, builds the
// targets its tests need and runs them; the file is put back whatever
// happens. {verdict: 'killed' | 'survived' | 'unbuilt' | 'no-tests', detail}.
// A mutant that does not build (warnings are errors) is 'unbuilt': the
// caller decides what that counts as.
export function trial(ws, file, mutated) {
  const cover = COVER[file];
  if (!cover) return { verdict: 'no-tests', detail: `no covering tests listed for ${file}` };
  const target = join(ws.SRC, file);
  const orig = readFileSync(target, 'utf8');
  writeFileSync(target, mutated);
  try {
    const b = build(ws, cover.targets);
    if (b.status !== 0) {
      const err = (b.stdout + b.stderr).split('\n').find((l) => /error|warning/.test(l)) ?? '';
      return { verdict: 'unbuilt', detail: `does not build: ${err.trim().slice(0, 160)}` };
    }
    // Check's 4 s default per test is too short on a loaded machine: a
    // timeout would count as a kill.
    // Valgrind's tests are left out, but for a file whose entry asks for
    // them (memcheck: its regex names each one).
    const t = sh('ctest', ['-R', cover.re, '--timeout', '600', ...(cover.memcheck ? [] : ['-LE', 'valgrind'])],
      { cwd: ws.BUILD, env: { ...process.env, CK_DEFAULT_TIMEOUT: '60' } });
    const failed = (t.stdout.match(/\*\*\*Failed|\*\*\*Timeout|Failed +[0-9.]+ sec|\(Failed\)|\(Timeout\)/g) ?? []).length;
    const ran = /tests passed, (\d+) tests failed out of (\d+)/.exec(t.stdout);
    if (!ran) return { verdict: 'no-tests', detail: `no test matched ${cover.re}` };
    if (Number(ran[1]) > 0 || failed)
      return { verdict: 'killed', detail: t.stdout.split('\n').filter((l) => /\(Failed\)|\(Timeout\)|\*\*\*/.test(l)).map((l) => l.trim().replace(/^\d+ - /, '')).join(', ') };
    return { verdict: 'survived', detail: `${ran[2]} tests passed` };
  } finally {
    writeFileSync(target, orig); // restored whatever happened
  }
}

export function shortCommit() {
  try { return execFileSync('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim(); } catch { return 'unknown'; }
}
