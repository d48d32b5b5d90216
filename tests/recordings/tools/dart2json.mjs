// Converts the Dart file that holds a recording (a map or list literal, or a
// JSON text inside json.decode('''…''')) into plain JSON on stdout, values
// untouched. Usage: node dart2json.mjs FILE.dart [VARIABLE]
// Only what these test-data files use is understood: '…' and "…" strings
// with backslash escapes and no interpolation, numbers, true/false/null,
// maps, lists, type arguments (<String, dynamic>{), trailing commas and //
// comments. Anything else stops the conversion with an error.
import { readFileSync } from 'node:fs';

const [file, variable] = process.argv.slice(2);
if (!file) { console.error('usage: node dart2json.mjs FILE.dart [VARIABLE]'); process.exit(2); }
const src = readFileSync(file, 'utf8');

let start = 0;
if (variable) {
  const m = new RegExp(`\\b${variable}\\s*=`).exec(src);
  if (!m) { console.error(`dart2json: ${variable} not found in ${file}`); process.exit(1); }
  start = m.index + m[0].length;
} else {
  start = src.indexOf('=', src.search(/^(final|const|var)\b|^[A-Z][\w<>, ?]*\s+\w+\s*=/m)) + 1;
}

// json.decode('''…''') holds JSON already.
const tq = src.slice(start).match(/^\s*(?:json\.decode|jsonDecode)\(\s*(r?)'''([\s\S]*?)'''/);
if (tq) {
  process.stdout.write(JSON.stringify(JSON.parse(tq[2])) + '\n');
  process.exit(0);
}

let i = start;
function fail(what) { throw new Error(`dart2json: ${what} at offset ${i}: ${JSON.stringify(src.slice(i, i + 40))}`); }
function ws() {
  for (;;) {
    while (i < src.length && /\s/.test(src[i])) i++;
    if (src.startsWith('//', i)) { i = src.indexOf('\n', i); if (i < 0) i = src.length; continue; }
    return;
  }
}
function str() {
  const q = src[i++];
  let out = '';
  while (src[i] !== q) {
    if (i >= src.length || src[i] === '\n') fail('unterminated string');
    if (src[i] === '$') fail('string interpolation');
    if (src[i] === '\\') {
      const c = src[i + 1];
      const esc = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', v: '\v', '\\': '\\', "'": "'", '"': '"', $: '$' };
      if (c in esc) { out += esc[c]; i += 2; continue; }
      if (c === 'u') {
        const m = /^u(?:\{([0-9a-fA-F]+)\}|([0-9a-fA-F]{4}))/.exec(src.slice(i + 1));
        if (!m) fail('bad \\u escape');
        out += String.fromCodePoint(parseInt(m[1] ?? m[2], 16)); i += 1 + m[0].length; continue;
      }
      fail('unknown escape');
    }
    out += src[i++];
  }
  i++;
  ws();
  if (src[i] === "'" || src[i] === '"') return out + str(); // adjacent strings concatenate
  return out;
}
function value() {
  ws();
  if (src[i] === '<') { // type arguments of a literal
    let depth = 0;
    do { if (src[i] === '<') depth++; else if (src[i] === '>') depth--; i++; } while (depth > 0);
    ws();
  }
  if (src.startsWith('const ', i)) { i += 6; return value(); }
  const c = src[i];
  if (c === '{') {
    i++; const o = {};
    for (;;) {
      ws(); if (src[i] === '}') { i++; return o; }
      const k = value(); if (typeof k !== 'string') fail('non-string key');
      ws(); if (src[i] !== ':') fail('expected :'); i++;
      o[k] = value(); ws();
      if (src[i] === ',') i++; else if (src[i] !== '}') fail('expected , or }');
    }
  }
  if (c === '[') {
    i++; const a = [];
    for (;;) {
      ws(); if (src[i] === ']') { i++; return a; }
      a.push(value()); ws();
      if (src[i] === ',') i++; else if (src[i] !== ']') fail('expected , or ]');
    }
  }
  if (c === "'" || c === '"') return str();
  const m = /^(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null)\b/.exec(src.slice(i, i + 40));
  if (!m) fail('unexpected token');
  i += m[0].length;
  return JSON.parse(m[0]);
}
const v = value();
process.stdout.write(JSON.stringify(v) + '\n');
