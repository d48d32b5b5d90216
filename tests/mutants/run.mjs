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
// The map from file to tests and one mutant's trial: lib.mjs.
import { appendFileSync, readFileSync, readdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { COVER, ROOT, workspace, prepare, trial, shortCommit } from './lib.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const FILTER = process.argv[3] ?? '';

function parse(path) {
  const text = readFileSync(path, 'utf8');
  const m = /^description: (.*)\nfile: (.*)\n@@ original\n([\s\S]*?)\n@@ replacement\n([\s\S]*?)\n?$/.exec(text);
  if (!m) throw new Error(`${path}: not a mutant (description, file, @@ original, @@ replacement)`);
  return { name: path.split('/').pop().replace(/\.mutant$/, ''), description: m[1], file: m[2], original: m[3], replacement: m[4] };
}

const mutants = readdirSync(HERE).filter((f) => f.endsWith('.mutant') && f.includes(FILTER)).sort()
  .map((f) => parse(join(HERE, f)));
if (!mutants.length) { console.error('no mutants'); process.exit(2); }

const ws = workspace(process.argv[2]);
prepare(ws);

const results = [];
for (const mu of mutants) {
  const t0 = Date.now();
  let verdict, detail = '';
  const orig = readFileSync(join(ws.SRC, mu.file), 'utf8');
  const n = orig.split(mu.original).length - 1;
  if (!COVER[mu.file]) { verdict = 'not-applicable'; detail = `no covering tests listed for ${mu.file}`; }
  else if (n !== 1) { verdict = 'not-applicable'; detail = `snippet found ${n} times`; }
  else {
    ({ verdict, detail } = trial(ws, mu.file, orig.replace(mu.original, () => mu.replacement)));
    if (verdict === 'unbuilt') verdict = 'killed'; // a listed mutant that no longer builds is caught
    if (verdict === 'no-tests') verdict = 'not-applicable';
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
const commit = shortCommit();
appendFileSync(join(ROOT, 'tests/mutants/SCORES.md'),
  `| ${new Date().toISOString().slice(0, 16).replace('T', ' ')} | ${commit} | ${FILTER || "all"} | ${results.length} | ${killed} | ${survived.length} | ${na} | ${pct} % | ${survived.map((x) => x.name).join(', ') || '—'} |\n`);
process.exit(0);
