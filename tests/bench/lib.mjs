// Small helpers shared by the benchmark sections: spawning an MCP stdio
// server, line-based request/response, statistics.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}
// Nearest-rank percentile, as the summaries use.
export function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.round((s.length - 1) * p)];
}
export function spread(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0], max: s[s.length - 1], p25: pct(s, 0.25), p75: pct(s, 0.75) };
}
export function peakRssKiB(pid) {
  const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmHWM:\s+(\d+) kB/);
  return m ? Number(m[1]) : NaN;
}

// An MCP peer over a child's stdio. `request` resolves with the parsed
// response whose id matches.
export class StdioPeer {
  constructor(cmd, args, opts = {}) {
    this.t0 = process.hrtime.bigint();
    this.child = spawn(cmd, args, { stdio: ['pipe', 'pipe', opts.stderr ?? 'ignore'], ...opts });
    this.pending = new Map();
    this.nextId = 0;
    this.buf = '';
    this.notifications = [];
    this.exited = new Promise((r) => this.child.on('exit', (code, sig) => r({ code, sig })));
    this.child.stdout.on('data', (d) => {
      this.buf += d;
      let i;
      while ((i = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, i);
        this.buf = this.buf.slice(i + 1);
        if (!line) continue;
        const msg = JSON.parse(line);
        if (msg.id !== undefined && this.pending.has(msg.id)) {
          const { resolve } = this.pending.get(msg.id);
          this.pending.delete(msg.id);
          resolve({ msg, at: process.hrtime.bigint(), bytes: line.length });
        } else this.notifications.push(msg);
      }
    });
  }
  request(method, params) {
    const id = this.nextId++;
    const p = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    return p;
  }
  notify(method, params) {
    this.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method, params }) + '\n');
  }
  async initialize() {
    const r = await this.request('initialize', {
      protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '0' },
    });
    this.notify('notifications/initialized');
    return r;
  }
  async close() {
    this.child.stdin.end();
    return this.exited;
  }
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Percentiles of a latency sample, nearest rank.
export const p50 = (xs) => pct(xs, 0.5);
export const p99 = (xs) => pct(xs, 0.99);

// telescope-sim on an ephemeral port: resolves once the URI file exists.
// cmd() sends one stdin command and resolves with its one-line answer.
export async function startSim(simPath, args = []) {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'telescope-bench-'));
  const uriFile = join(dir, 'uri');
  const child = spawn(simPath, ['--port', '0', '--seed', '7', '--uri-file', uriFile, ...args],
    { stdio: ['pipe', 'pipe', 'ignore'] });
  const exited = new Promise((r) => child.on('exit', (code, sig) => r({ code, sig })));
  // The sim does not stop at stdin EOF: never leave one behind, even when a
  // section throws.
  const reap = () => child.kill('SIGTERM');
  process.on('exit', reap);
  exited.then(() => process.off('exit', reap));
  let buf = '';
  const lines = [];
  const waiters = [];
  child.stdout.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (!line.startsWith('ok') && !line.startsWith('error')) continue; // the banner
      const w = waiters.shift();
      if (w) w(line); else lines.push(line);
    }
  });
  let wsUri;
  for (let t = 0; !wsUri; t++) {
    try { wsUri = readFileSync(uriFile, 'utf8'); } catch { /* not yet */ }
    if (!wsUri) {
      if (t > 400) throw new Error('telescope-sim did not start');
      await sleep(10);
    }
  }
  const cmd = (line) => new Promise((resolve) => {
    waiters.push(resolve);
    child.stdin.write(line + '\n');
  });
  return {
    child, wsUri, cmd,
    stats: async () => JSON.parse((await cmd('stats')).slice(3)),
    async stop() {
      child.stdin.write('quit\n');
      const r = await exited;
      rmSync(dir, { recursive: true, force: true });
      return r;
    },
  };
}

// A raw VM-service client over Node's WebSocket (node --experimental-websocket):
// what a user without telescope-mcp would do.
export class RawVm {
  static async connect(wsUri) {
    const vm = new RawVm();
    vm.ws = new WebSocket(wsUri);
    vm.pending = new Map();
    vm.nextId = 1;
    vm.ws.onmessage = (ev) => {
      const text = typeof ev.data === 'string' ? ev.data : Buffer.from(ev.data).toString();
      const msg = JSON.parse(text);
      const p = vm.pending.get(msg.id);
      if (p) { vm.pending.delete(msg.id); p({ msg, bytes: Buffer.byteLength(text), at: process.hrtime.bigint() }); }
    };
    await new Promise((resolve, reject) => { vm.ws.onopen = resolve; vm.ws.onerror = reject; });
    const r = await vm.call('getVM', {});
    vm.isolateId = r.msg.result.isolates[0].id;
    return vm;
  }
  call(method, params) {
    const id = String(this.nextId++);
    const p = new Promise((resolve) => this.pending.set(id, resolve));
    this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    return p;
  }
  // ext.telescope.frames as the VM hands params to the extension: strings.
  frames(params) {
    const strs = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)]));
    return this.call('ext.telescope.frames', { isolateId: this.isolateId, ...strs });
  }
  close() { this.ws.close(); }
}

export const callTool = (peer, args) =>
  peer.request('tools/call', { name: 'telescope_frames', arguments: args });

// CPU time (ms) a process has used so far: utime + stime of /proc/PID/stat.
export function cpuMs(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10; // USER_HZ is 100 on Linux
}
