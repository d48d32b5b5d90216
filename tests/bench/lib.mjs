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
