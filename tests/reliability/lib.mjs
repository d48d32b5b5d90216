// Helpers for the reliability tests, on top of tests/integration/harness.mjs:
// process measurements from /proc, per-file set-up with clean-up, a lean
// line-protocol client for load the SDK is too slow to generate, and
// latency statistics.
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { after } from 'node:test';
import { BUILD, startSim, startMcp, serverOutput, assertNoTokenLeak, WRAPPER, wrappedFailures } from '../integration/harness.mjs';

export * from '../integration/harness.mjs';

// Under a wrapper (valgrind) RSS is valgrind's own, and latency is ~20x:
// memory bounds are asserted only on the bare binary.
// Memory is measured only on a plain build: valgrind and ASan hold freed
// memory back on purpose.
export const MEASURE = WRAPPER.length === 0 && !process.env.TELESCOPE_SANITIZED;

// Long variants (RELIABILITY.md) run only when asked.
export const LONG = process.env.TELESCOPE_LONG === '1';

// Resident set size of a live process, in bytes.
export function rssOf(pid) {
  const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+)\s+kB/m);
  assert.ok(m, `no VmRSS for ${pid}`);
  return Number(m[1]) * 1024;
}

// Open file descriptors of a live process.
export function fdsOf(pid) { return readdirSync(`/proc/${pid}/fd`).length; }

export const MiB = 1024 * 1024;
export const fmtMiB = (b) => `${(b / MiB).toFixed(1)} MiB`;

// Samples fn() every everyMs until stop() is called; returns {samples, stop}.
export function sampler(fn, everyMs = 20) {
  const samples = [];
  const t = setInterval(() => { try { samples.push(fn()); } catch { /* process gone */ } }, everyMs);
  return { samples, stop() { clearInterval(t); return samples; } };
}

// Nearest-rank percentile of numbers.
export function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.round((s.length - 1) * p)];
}

// Measured numbers, printed as one line each so a run's log can be pasted
// into RELIABILITY.md.
export function report(name, obj) { console.log(`# measured ${name} ${JSON.stringify(obj)}`); }

// Every reliability file ends with this: everything torn down, and no token
// in anything the server wrote.
const cleanup = [];
export function registerCleanup() {
  after(async () => {
    // Every clean-up runs even when one fails (a wrapped server's exit
    // status), so no sim or server outlives the file; the first error wins.
    const errors = [];
    for (const c of cleanup.reverse()) { try { await c(); } catch (e) { errors.push(e); } }
    if (errors.length) throw errors[0];
    assertNoTokenLeak();
  });
}
export function onCleanup(fn) { cleanup.push(fn); }
export async function sim(args = [], opts) { const s = await startSim(args, opts); cleanup.push(() => s.kill()); return s; }
export async function mcp(args = [], opts) { const m = await startMcp(args, opts); cleanup.push(() => m.close()); return m; }
export async function pair(simArgs = [], mcpArgs = []) {
  const s = await sim(simArgs);
  const m = await mcp(['--vm-service-uri-file', s.uriFile, ...mcpArgs]);
  return { s, m };
}

// The lean client: telescope-mcp spoken to directly, one JSON-RPC line per
// request, replies matched by id. It is the real binary; only the SDK's
// per-message schema validation is left out, so 100 000 calls fit in a minute.
export async function startLean(args = []) {
  const bin = join(BUILD, 'telescope-mcp');
  const child = WRAPPER.length
    ? spawn(WRAPPER[0], [...WRAPPER.slice(1), bin, ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
    : spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const pending = new Map();
  const notes = [];
  let nextId = 1, buf = '', stderr = '';
  const exited = new Promise((r) => child.on('exit', (code, sig) => r({ code, sig })));
  process.on('exit', () => child.kill('SIGKILL'));
  child.stderr.on('data', (d) => { stderr += d; serverOutput.push(String(d)); });
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i); buf = buf.slice(i + 1);
      serverOutput.push(line);
      const msg = JSON.parse(line); // stdout holds nothing but JSON-RPC
      const p = msg.id !== undefined && msg.id !== null ? pending.get(msg.id) : undefined;
      if (p) { pending.delete(msg.id); p(msg); } else notes.push(msg);
    }
  });
  const lean = {
    child, pid: child.pid, notes, exited,
    get stderr() { return stderr; },
    get inFlight() { return pending.size; },
    // Writes one request; resolves with its reply (the whole message).
    request(method, params) {
      const id = nextId++;
      const p = new Promise((r) => pending.set(id, r));
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) }) + '\n');
      return p;
    },
    // Writes a raw line (it may be anything); resolves with the next reply
    // that has the given id, or the next id-less one when id is null.
    raw(line, id = null) {
      const p = id === null
        ? new Promise((r) => { const t = setInterval(() => { const n = notes.shift(); if (n) { clearInterval(t); r(n); } }, 5); })
        : new Promise((r) => pending.set(id, r));
      child.stdin.write(line);
      return p;
    },
    call(args) { return lean.request('tools/call', { name: 'telescope_frames', arguments: args }); },
    async close() {
      child.stdin.end();
      const e = await Promise.race([exited, new Promise((r) => setTimeout(r, 60000, null).unref())]);
      if (!e) child.kill('SIGKILL');
      if (!e || e.code !== 0 || e.sig !== null)
        wrappedFailures.push(`lean server exit ${JSON.stringify(e)}\n${stderr.slice(-4000)}`);
    },
  };
  const init = await lean.request('initialize', {
    protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'telescope-reliability', version: '0' },
  });
  assert.ok(init.result, JSON.stringify(init));
  child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  cleanup.push(() => lean.close());
  return lean;
}

// The structuredContent of a lean tools/call reply.
export function scOf(reply) {
  assert.ok(reply.result, `no result: ${JSON.stringify(reply).slice(0, 500)}`);
  return { sc: reply.result.structuredContent, isError: reply.result.isError === true,
    text: reply.result.content?.[0]?.text ?? '' };
}

