// make mutants-auto: mutants nobody chose. Mechanical mutants of the C lines
// changed since a base commit, sampled with a printed seed, each planted
// alone and tried against the tests that cover its file (lib.mjs). Not part
// of make test.
//
// Operators, applied only to code (never inside strings, characters or
// comments, never on preprocessor lines):
//   rel     <  <=  >  >=  ==  !=   each into its neighbour (< ↔ <=, > ↔ >=, == ↔ !=)
//   logic   && ↔ ||, and a ! dropped
//   assign  |= and += into =
//   const   an integer constant ±1
//   delete  a whole-line assignment or call statement becomes ;
//   swap    two neighbouring arguments of a call, when they differ
//
// A mutant that does not build, or warns (warnings are errors here), is
// skipped and counted as skipped: it is not a bug a test could catch. One
// whose file no test covers is left out of the sample.
//
// Usage: node tests/mutants/auto.mjs [--base REV] [--count N] [--seed S] [--files REGEX]
//                                    [--at REV] [--only K,L,...] [--dry-run] [build-dir]
// Defaults: --base HEAD~200 (or the first commit), --count 40, a random seed
// (printed; pass it again to replay the same sample).
//
// The sample is drawn from the worktree's lines, so any change to them draws
// another one. --at REV draws it from REV's lines instead, to try the sample
// of an earlier run on today's tests: each mutant is planted where its line
// is today (the same number, or the one line with the same text), and is
// skipped if that line is gone or is there more than once.
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { COVER, ROOT, workspace, prepare, trial, shortCommit } from './lib.mjs';

const opts = { base: null, count: 40, seed: null, files: '^server/.*\\.c$', dry: false, out: null, only: null, at: null };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  const val = () => {
    if (i + 1 >= process.argv.length) usage(`${a} needs a value`);
    return process.argv[++i];
  };
  if (a === '--base') opts.base = val();
  else if (a === '--count') opts.count = Number(val());
  else if (a === '--seed') opts.seed = Number(val());
  else if (a === '--files') opts.files = val();
  else if (a === '--dry-run') opts.dry = true;
  else if (a === '--only') opts.only = val().split(',').map(Number);
  else if (a === '--at') opts.at = val();
  else if (a.startsWith('-')) usage(`unknown option ${a}`);
  else opts.out = a;
}
function usage(why) {
  console.error(`auto.mjs: ${why}\nusage: node tests/mutants/auto.mjs [--base REV] [--count N] [--seed S] [--files REGEX] [--at REV] [--only K,L,...] [--dry-run] [build-dir]`);
  process.exit(2);
}
if (!Number.isInteger(opts.count) || opts.count < 1) usage('--count must be a positive integer');
if (opts.seed === null) opts.seed = Math.floor(Math.random() * 2 ** 31);
if (!Number.isInteger(opts.seed) || opts.seed < 0) usage('--seed must be a non-negative integer');

const git = (...args) => execFileSync('git', ['-C', ROOT, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });

// The base: HEAD~200 by default, or the root commit of a shorter history.
function baseRev() {
  if (opts.base) return git('rev-parse', '--verify', `${opts.base}^{commit}`).trim();
  const n = Number(git('rev-list', '--count', 'HEAD').trim());
  if (n > 200) return git('rev-parse', 'HEAD~200').trim();
  return git('rev-list', '--max-parents=0', 'HEAD').trim().split('\n')[0];
}

// Lines (1-based, in today's file, or in at's) added or changed since base,
// per file.
export function changedLines(base, fileRe, at = null) {
  const diff = git('diff', '-U0', '--no-color', base, ...(at ? [at] : []), '--', 'server', 'watcher/sim');
  const out = new Map();
  let file = null;
  for (const line of diff.split('\n')) {
    if (line.startsWith('+++ ')) {
      file = line.startsWith('+++ b/') ? line.slice(6) : null;
      if (file && !new RegExp(fileRe).test(file)) file = null;
      continue;
    }
    const h = /^@@ -\S+ \+(\d+)(?:,(\d+))? @@/.exec(line);
    if (h && file) {
      const start = Number(h[1]), n = h[2] === undefined ? 1 : Number(h[2]);
      if (!out.has(file)) out.set(file, new Set());
      for (let k = 0; k < n; k++) out.get(file).add(start + k);
    }
  }
  return out;
}

// Which characters of a C text are code: not inside a comment, a string or
// a character literal. Returns one boolean per character.
export function codeMask(text) {
  const mask = new Array(text.length).fill(false);
  let i = 0;
  while (i < text.length) {
    const c = text[i], d = text[i + 1];
    if (c === '/' && d === '/') { while (i < text.length && text[i] !== '\n') i++; continue; }
    if (c === '/' && d === '*') { const e = text.indexOf('*/', i + 2); i = e < 0 ? text.length : e + 2; continue; }
    if (c === '"' || c === "'") {
      i++;
      while (i < text.length && text[i] !== c && text[i] !== '\n') i += text[i] === '\\' ? 2 : 1;
      i++;
      continue;
    }
    mask[i++] = true;
  }
  return mask;
}

// The mutants of one line: {col, len, to, op} edits of the line's code.
export function mutantsOfLine(line, code) {
  const out = [];
  const isCode = (k, n = 1) => { for (let j = k; j < k + n; j++) if (!code[j]) return false; return true; };
  const at = (k, s) => line.startsWith(s, k) && isCode(k, s.length);
  if (/^\s*#/.test(line)) return out;
  for (let k = 0; k < line.length; k++) {
    if (!code[k]) continue;
    const prev = line[k - 1] ?? '', next2 = line.slice(k, k + 2), next3 = line.slice(k, k + 3);
    // relational
    if (next2 === '<=' && prev !== '<' && at(k, '<=')) out.push({ col: k, len: 2, to: '<', op: 'rel' });
    else if (next2 === '>=' && prev !== '>' && at(k, '>=')) out.push({ col: k, len: 2, to: '>', op: 'rel' });
    else if (next2 === '==' && at(k, '==')) { out.push({ col: k, len: 2, to: '!=', op: 'rel' }); k++; continue; }
    else if (next2 === '!=' && at(k, '!=')) { out.push({ col: k, len: 2, to: '==', op: 'rel' }); k++; continue; }
    else if (line[k] === '<' && prev !== '<' && line[k + 1] !== '<' && line[k + 1] !== '=')
      out.push({ col: k, len: 1, to: '<=', op: 'rel' });
    else if (line[k] === '>' && prev !== '>' && prev !== '-' && line[k + 1] !== '>' && line[k + 1] !== '=')
      out.push({ col: k, len: 1, to: '>=', op: 'rel' });
    // logic
    if (next2 === '&&' && at(k, '&&')) { out.push({ col: k, len: 2, to: '||', op: 'logic' }); k++; continue; }
    if (next2 === '||' && at(k, '||')) { out.push({ col: k, len: 2, to: '&&', op: 'logic' }); k++; continue; }
    if (line[k] === '!' && line[k + 1] !== '=') out.push({ col: k, len: 1, to: '', op: 'logic' });
    // compound assignment
    if ((next2 === '|=' || next2 === '+=') && line[k + 2] !== '=' && at(k, next2))
      out.push({ col: k, len: 2, to: '=', op: 'assign' });
    // integer constants
    if (/[0-9]/.test(line[k]) && !/[A-Za-z0-9_.]/.test(prev)) {
      const m = /^(0[xX][0-9a-fA-F]+|[0-9]+)([uUlL]*)/.exec(line.slice(k));
      const after = line[k + m[0].length] ?? '';
      if (m && !/[.eExXpP]/.test(after) && isCode(k, m[0].length)) {
        const v = Number(m[1]);
        if (Number.isSafeInteger(v)) {
          out.push({ col: k, len: m[1].length, to: String(v + 1), op: 'const' });
          if (v > 0) out.push({ col: k, len: m[1].length, to: String(v - 1), op: 'const' });
        }
      }
      if (m) k += m[0].length - 1;
    }
    void next3;
  }
  // a whole-line statement: an assignment or a call, not a declaration,
  // a return, or a control statement
  const stmt = /^(\s*)(.*);\s*$/.exec(line);
  if (stmt && isCode(stmt[1].length, 1) && !/[{}]/.test(stmt[2]) &&
      !/^(return|break|continue|goto|case|default|if|for|while|do|else|switch)\b/.test(stmt[2]) &&
      !/^(static|const|struct|enum|union|unsigned|signed|int|char|long|short|double|float|size_t|ssize_t|int\d+_t|uint\d+_t|json_t|json_int_t|uv_\w+_t|\w+_t)\b[^=(]*[\s*]\w+\s*(=|;|\[)/.test(stmt[2]) &&
      (/^[\w.\->\[\]* ]+\s*(=|\|=|\+=|-=)[^=]/.test(stmt[2]) || /^[\w.\->]+\s*\(/.test(stmt[2])))
    out.push({ col: stmt[1].length, len: stmt[2].length + 1, to: ';', op: 'delete' });
  // neighbouring arguments of a call
  const call = /([A-Za-z_]\w*)\s*\(/g;
  let m;
  while ((m = call.exec(line))) {
    if (!code[m.index] || /^(if|for|while|switch|return|sizeof)$/.test(m[1])) continue;
    let depth = 0, k = m.index + m[0].length, start = k;
    const args = [];
    for (; k < line.length; k++) {
      if (!code[k]) continue;
      const ch = line[k];
      if (ch === '(' || ch === '[' || ch === '{') depth++;
      else if (ch === ')' || ch === ']' || ch === '}') {
        if (depth === 0) { args.push([start, k]); break; }
        depth--;
      } else if (ch === ',' && depth === 0) { args.push([start, k]); start = k + 1; }
    }
    if (k >= line.length) continue; // the call goes on past this line
    for (let a = 0; a + 1 < args.length; a++) {
      const x = line.slice(...args[a]).trim(), y = line.slice(...args[a + 1]).trim();
      if (!x || !y || x === y || /["']/.test(x + y)) continue;
      // a parameter list (a definition or a prototype), not a call
      const decl = /^(const\s+|struct\s+|unsigned\s+)*[A-Za-z_]\w*(\s+|\s*\*+\s*)(const\s+)?\**[A-Za-z_]\w*(\[\w*\])?$/;
      if (decl.test(x) || decl.test(y)) continue;
      const from = args[a][0], to = args[a + 1][1];
      const lead = line.slice(args[a][0], args[a][1]).match(/^\s*/)[0];
      const lead2 = line.slice(args[a + 1][0], args[a + 1][1]).match(/^\s*/)[0];
      out.push({ col: from, len: to - from, to: `${lead}${y},${lead2}${x}`, op: 'swap' });
    }
  }
  return out;
}

// mulberry32: a small seeded generator, so a seed replays its sample.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const base = baseRev();
const at = opts.at ? git('rev-parse', '--verify', `${opts.at}^{commit}`).trim() : null;
const changed = changedLines(base, opts.files, at);
const pool = [];
let uncovered = 0;
for (const [file, lines] of [...changed].sort()) {
  const text = at ? git('show', `${at}:${file}`) : readFileSync(join(ROOT, file), 'utf8');
  const mask = codeMask(text);
  const all = text.split('\n');
  let offset = 0;
  const starts = all.map((l) => { const s = offset; offset += l.length + 1; return s; });
  for (const n of [...lines].sort((x, y) => x - y)) {
    const line = all[n - 1];
    if (line === undefined) continue;
    const code = mask.slice(starts[n - 1], starts[n - 1] + line.length);
    for (const mu of mutantsOfLine(line, code)) {
      if (!COVER[file]) { uncovered++; continue; }
      pool.push({ file, line: n, ...mu, was: line, now: line.slice(0, mu.col) + mu.to + line.slice(mu.col + mu.len) });
    }
  }
}
const rand = rng(opts.seed);
for (let i = pool.length - 1; i > 0; i--) { // Fisher-Yates, seeded
  const j = Math.floor(rand() * (i + 1));
  [pool[i], pool[j]] = [pool[j], pool[i]];
}
// --only K,L,...: just those of the sample (0-based, in its order), to try
// a run's survivors again; the sample itself is the same.
const sample = pool.slice(0, opts.count).filter((m, k) => !opts.only || opts.only.includes(k));
const files = [...new Set(sample.map((m) => m.file))];
console.log(`mutants-auto: base ${base.slice(0, 7)}, seed ${opts.seed}, ${pool.length} mutants on ` +
  `${changed.size} changed files (${uncovered} more on files no test covers, left out); sample ${sample.length}`);
console.log(`replay: node tests/mutants/auto.mjs --base ${base.slice(0, 7)} --seed ${opts.seed} --count ${opts.count}` +
  `${at ? ` --at ${at.slice(0, 7)}` : ''}`);
if (opts.dry) {
  for (const m of sample) console.log(`${m.op.padEnd(6)} ${m.file}:${m.line}\n  - ${m.was.trim()}\n  + ${m.now.trim()}`);
  process.exit(0);
}

const ws = workspace(opts.out);
prepare(ws);
const results = [];
for (const m of sample) {
  const t0 = Date.now();
  const text = readFileSync(join(ws.SRC, m.file), 'utf8').split('\n');
  let r, k = m.line - 1;
  if (text[k] !== m.was && at) { // the line as it is today (--at)
    const same = text.flatMap((l, i) => (l === m.was ? [i] : []));
    k = same.length === 1 ? same[0] : -1;
  }
  if (k < 0) r = { verdict: 'unbuilt', detail: `the line is no longer once in ${m.file}` };
  else if (text[k] !== m.was) r = { verdict: 'unbuilt', detail: 'the copy differs from the worktree' };
  else {
    if (k !== m.line - 1) m.today = k + 1;
    text[k] = m.now;
    r = trial(ws, m.file, text.join('\n'));
  }
  const verdict = r.verdict === 'unbuilt' ? 'skipped' : r.verdict;
  results.push({ ...m, verdict, detail: r.detail });
  console.log(`${verdict.padEnd(9)} ${m.op.padEnd(6)} ${m.file}:${m.line}${m.today ? ` (line ${m.today} today)` : ''} ` +
    `(${((Date.now() - t0) / 1000).toFixed(0)} s)` +
    `\n  - ${m.was.trim()}\n  + ${m.now.trim()}${r.detail ? `\n  ${r.detail}` : ''}`);
}

const tried = results.filter((x) => x.verdict === 'killed' || x.verdict === 'survived');
const killed = tried.filter((x) => x.verdict === 'killed').length;
const survived = results.filter((x) => x.verdict === 'survived');
const skipped = results.filter((x) => x.verdict === 'skipped').length;
const pct = tried.length ? (100 * killed / tried.length).toFixed(0) : '0';
console.log(`\nmutants-auto: ${results.length} sampled, killed ${killed}, survived ${survived.length}, ` +
  `skipped ${skipped} (do not build); score ${killed}/${tried.length} = ${pct} % killed`);
for (const s of survived) console.log(`  survived: ${s.file}:${s.line} ${s.op}: ${s.was.trim()}  →  ${s.now.trim()}`);
appendFileSync(join(ROOT, 'tests/mutants/SCORES.md'),
  `| ${new Date().toISOString().slice(0, 16).replace('T', ' ')} | ${shortCommit()} | auto: base ${base.slice(0, 7)} seed ${opts.seed}${at ? ` at ${at.slice(0, 7)}` : ''}${opts.only ? ` only ${opts.only.join(',')}` : ''} | ` +
  `${results.length} | ${killed} | ${survived.length} | ${skipped} skipped | ${pct} % | ` +
  `${survived.map((x) => `${x.file.replace(/^server\//, '')}:${x.line} ${x.op}`).join(', ') || '—'} |\n`);
process.exit(0);
