// The files of each program call each other in layers: no file calls (or
// reads a global of) a file that, directly or through others, calls it
// back. Read from the object files' symbol tables (nm), so a call is a call
// whatever header declared it. Callbacks handed down as function pointers
// are how a lower file answers a higher one; they are not links here.
//
// The headers of each program's folder include each other without a loop
// too.
//
// Usage: node tests/layers.mjs LIB.a HEADER_DIR [LIB.a HEADER_DIR ...]
// (the server's core and server/, the simulator's and watcher/sim/, ...;
// exit 1 on a loop)
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';

const args = process.argv.slice(2);
if (!args.length || args.length % 2) {
  console.error('usage: node tests/layers.mjs LIB.a HEADER_DIR [LIB.a HEADER_DIR ...]');
  process.exit(2);
}
let failed = 0;
for (let a = 0; a < args.length; a += 2) failed |= check(args[a], args[a + 1]);
process.exit(failed ? 1 : 0);

function check(lib, headerDir) {
  const defs = new Map(); // symbol -> file
  const uses = new Map(); // file -> Set(symbol)
  let file = null;
  for (const line of execFileSync('nm', [lib], { encoding: 'utf8' }).split('\n')) {
    const member = /^(\S+)\.o:$/.exec(line);
    if (member) {
      file = member[1];
      uses.set(file, new Set());
      continue;
    }
    const m = /^\s*[0-9a-f]*\s+([A-Za-z])\s+(\S+)$/.exec(line);
    if (!m || !file) continue;
    if (m[1] === 'U') uses.get(file).add(m[2]);
    else if ('TDBR'.includes(m[1])) defs.set(m[2], file);
  }
  const edges = new Map();
  for (const [file, u] of uses) {
    const to = new Set();
    for (const sym of u) {
      const d = defs.get(sym);
      if (d && d !== file) to.add(d);
    }
    edges.set(file, to);
  }
  const loops = loopsOf(edges);
  report('call', edges, loops);

  const includes = new Map();
  for (const h of readdirSync(headerDir).filter((f) => f.endsWith('.h'))) {
    const text = readFileSync(join(headerDir, h), 'utf8');
    includes.set(h, new Set([...text.matchAll(/^#include "([^"]+)"/gm)].map((m) => m[1])));
  }
  const hloops = loopsOf(includes);
  report('include', includes, hloops);
  if (!edges.size) {
    console.error(`layers: ${lib} holds no object file`);
    return 1;
  }
  if (loops.length || hloops.length) return 1;
  console.log(`layers: ${basename(lib)}: ${edges.size} files and ${includes.size} headers of ${headerDir}, no loop`);
  return 0;
}

// Tarjan's strongly connected components: any with more than one node is a loop.
function loopsOf(edges) {
  let index = 0;
  const idx = new Map(), low = new Map(), stack = [], on = new Set(), loops = [];
  function visit(v) {
    idx.set(v, index); low.set(v, index); index++;
    stack.push(v); on.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!edges.has(w)) continue;
      if (!idx.has(w)) { visit(w); low.set(v, Math.min(low.get(v), low.get(w))); }
      else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const scc = [];
      let w;
      do { w = stack.pop(); on.delete(w); scc.push(w); } while (w !== v);
      if (scc.length > 1) loops.push(scc);
    }
  }
  for (const v of edges.keys()) if (!idx.has(v)) visit(v);
  return loops;
}

function report(what, edges, loops) {
  for (const scc of loops) {
    const inside = new Set(scc);
    console.error(`${what} loop among: ${scc.sort().join(' ')}`);
    for (const f of scc)
      for (const t of edges.get(f))
        if (inside.has(t)) console.error(`  ${f} -> ${t}`);
  }
}

