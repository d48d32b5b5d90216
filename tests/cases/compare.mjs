// Compares telescope-mcp's stdout with a case's expected.jsonl.
//
// Every stdout line must be one valid JSON-RPC 2.0 message (or a batch array
// of them) with no null anywhere (the server never sends null: SDKs reject it
// for optional fields), and stdout must end with "\n". Then line i must equal
// expected line i as JSON, key order free. In expected, the string "$ANY"
// matches any value and "$STRING" any string; an object key "$REST": "$ANY"
// allows keys not listed; "$SCHEMA:name.json" stands for schema/name.json.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// "$SCHEMA:name.json" in expected stands for the parsed schema/name.json.
const schemaDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'schema');

const [actualPath, expectedPath] = process.argv.slice(2);
const raw = readFileSync(actualPath, 'utf8');
const failures = [];

function checkMessage(m, where) {
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return failures.push(`${where}: not a JSON-RPC object`);
  if (m.jsonrpc !== '2.0') failures.push(`${where}: jsonrpc is not "2.0"`);
  const isResponse = 'result' in m || 'error' in m;
  if (isResponse === ('method' in m)) failures.push(`${where}: neither a response nor a notification`);
  if ('result' in m && 'error' in m) failures.push(`${where}: both result and error`);
  if ('method' in m && 'id' in m) failures.push(`${where}: the server sent a request`);
  if ('id' in m && typeof m.id !== 'string' && !Number.isInteger(m.id)) failures.push(`${where}: bad id type`);
  if ('error' in m && (!Number.isInteger(m.error.code) || typeof m.error.message !== 'string'))
    failures.push(`${where}: malformed error object`);
  const walk = (v, path) => {
    if (v === null) failures.push(`${where}: null at ${path}`);
    else if (typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, `${path}.${k}`);
  };
  walk(m, '$');
}

if (raw.length > 0 && !raw.endsWith('\n')) failures.push('stdout does not end with a newline');
const lines = raw.split('\n');
if (lines[lines.length - 1] === '') lines.pop();
const actual = lines.map((l, i) => {
  try {
    const v = JSON.parse(l);
    if (Array.isArray(v)) {
      if (v.length === 0) failures.push(`stdout line ${i + 1}: empty batch response`);
      v.forEach((m, j) => checkMessage(m, `stdout line ${i + 1}[${j}]`));
    } else checkMessage(v, `stdout line ${i + 1}`);
    return v;
  } catch (e) {
    failures.push(`stdout line ${i + 1} is not JSON: ${JSON.stringify(l.slice(0, 200))}`);
    return undefined;
  }
});

const expected = readFileSync(expectedPath, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l, i) => {
  try { return JSON.parse(l); } catch (e) { throw new Error(`${expectedPath}:${i + 1}: ${e.message}`); }
});

function match(exp, act, path) {
  if (exp === '$ANY') return act === undefined ? [`${path}: missing`] : [];
  if (typeof exp === 'string' && exp.startsWith('$SCHEMA:'))
    return match(JSON.parse(readFileSync(join(schemaDir, exp.slice(8)), 'utf8')), act, path);
  if (exp === '$STRING') return typeof act === 'string' ? [] : [`${path}: expected a string, got ${JSON.stringify(act)}`];
  if (Array.isArray(exp)) {
    if (!Array.isArray(act) || act.length !== exp.length)
      return [`${path}: expected array of ${exp.length}, got ${JSON.stringify(act)?.slice(0, 300)}`];
    return exp.flatMap((e, i) => match(e, act[i], `${path}[${i}]`));
  }
  if (exp !== null && typeof exp === 'object') {
    if (act === null || typeof act !== 'object' || Array.isArray(act))
      return [`${path}: expected object, got ${JSON.stringify(act)?.slice(0, 300)}`];
    const out = [];
    for (const k of Object.keys(exp)) if (k !== '$REST') out.push(...match(exp[k], act[k], `${path}.${k}`));
    if (!('$REST' in exp)) for (const k of Object.keys(act)) if (!(k in exp)) out.push(`${path}.${k}: unexpected key`);
    return out;
  }
  // Numbers compare by value: 1 and 1.0 are the same JSON number.
  return exp === act ? [] : [`${path}: expected ${JSON.stringify(exp)}, got ${JSON.stringify(act)?.slice(0, 300)}`];
}

if (actual.length !== expected.length)
  failures.push(`expected ${expected.length} lines, got ${actual.length}`);
for (let i = 0; i < Math.max(actual.length, expected.length); i++) {
  if (i >= expected.length) { failures.push(`extra line ${i + 1}: ${lines[i].slice(0, 300)}`); continue; }
  if (i >= actual.length) { failures.push(`missing line ${i + 1}: ${JSON.stringify(expected[i]).slice(0, 300)}`); continue; }
  failures.push(...match(expected[i], actual[i], `line ${i + 1}`));
}
if (failures.length) {
  console.error('FAIL\n' + failures.join('\n'));
  console.error('--- actual stdout ---\n' + raw.slice(0, 4000));
  process.exit(1);
}
console.log(`ok: ${actual.length} lines match`);
