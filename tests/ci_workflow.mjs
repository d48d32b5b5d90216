// .github/workflows/ci.yml is a GitHub Actions workflow that runs the
// README's two commands on ubuntu-22.04, ubuntu-24.04 and macos-latest. It
// cannot run here, so its shape is checked: it parses as YAML (PyYAML, where
// python3 has it; skipped, exit 77, where not) and has the keys a workflow
// needs (on, jobs; each job runs-on and steps; each step uses or run).
//
//   node tests/ci_workflow.mjs WORKFLOW README
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const [path, readmePath] = process.argv.slice(2);
const py = spawnSync('python3', ['-c', 'import json,sys,yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))', path],
                     { encoding: 'utf8' });
if (py.error || (py.status !== 0 && /No module named/.test(py.stderr))) {
  console.log('skipped: python3 with PyYAML (python3-yaml) is not installed, the workflow cannot be parsed here');
  process.exit(77);
}
const failures = [];
const fail = (m) => failures.push(m);
if (py.status !== 0) {
  console.error(`FAIL: ${path} is not valid YAML:\n${py.stderr}`);
  process.exit(1);
}
const wf = JSON.parse(py.stdout);
// YAML 1.1 (PyYAML) reads the key `on` as the boolean true.
const on = wf.on ?? wf.true;
if (!on || typeof on !== 'object') fail('no `on:` triggers');
else if (!('push' in on) && !('pull_request' in on)) fail('`on:` has neither push nor pull_request');
if (!wf.jobs || typeof wf.jobs !== 'object' || !Object.keys(wf.jobs).length) fail('no jobs');
const systems = new Set();
const commands = new Set();
for (const [name, job] of Object.entries(wf.jobs ?? {})) {
  if (!job['runs-on']) fail(`job ${name}: no runs-on`);
  const os = job.strategy?.matrix?.os ?? [job['runs-on']];
  for (const o of os) systems.add(o);
  if (job['runs-on'] === '${{ matrix.os }}' && !job.strategy?.matrix?.os) fail(`job ${name}: runs-on a matrix.os it does not define`);
  if (!Array.isArray(job.steps) || !job.steps.length) { fail(`job ${name}: no steps`); continue; }
  job.steps.forEach((s, i) => {
    if (!s.uses === !s.run) fail(`job ${name} step ${i + 1}: needs exactly one of uses and run`);
    if (s.uses && !/^[\w.-]+\/[\w.-]+@\S+$/.test(s.uses)) fail(`job ${name} step ${i + 1}: uses ${s.uses} is not owner/repo@ref`);
    if (s.run) commands.add(s.run.trim());
  });
}
for (const os of ['ubuntu-22.04', 'ubuntu-24.04', 'macos-latest'])
  if (!systems.has(os)) fail(`no job on ${os}`);
// The README's commands, from its first code block: the workflow runs each.
const readme = readFileSync(readmePath, 'utf8');
const block = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
const readmeCommands = block.split('\n').map((l) => l.replace(/#.*/, '').trim()).filter(Boolean);
if (!readmeCommands.includes('make demo') || !readmeCommands.includes('make test'))
  fail(`the README's first sh block does not hold make demo and make test: ${JSON.stringify(readmeCommands)}`);
for (const c of ['make demo', 'make test']) if (!commands.has(c)) fail(`no step runs \`${c}\``);
if (failures.length) {
  console.error('FAIL\n' + failures.join('\n'));
  process.exit(1);
}
console.log(`ok: ${Object.keys(wf.jobs).length} job(s) on ${[...systems].join(', ')}; steps run ${[...commands].join(', ')}`);
