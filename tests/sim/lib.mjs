// Test helpers: run the real telescope-sim binary, talk to it over a real
// WebSocket (Node's built-in client, node --experimental-websocket) and over
// its stdin commands. Every wait polls against a deadline.
import { spawn } from 'node:child_process';
import http from 'node:http';
import crypto from 'node:crypto';
import assert from 'node:assert/strict';

export const SIM = process.env.TELESCOPE_SIM;
if (!SIM) throw new Error('TELESCOPE_SIM must name the telescope-sim binary');
if (typeof WebSocket === 'undefined') {
  // Node < 20.10 has no built-in client: skipped (ctest SKIP_RETURN_CODE 77).
  console.log(`skip: node ${process.version} has no WebSocket client (needs 20.10+ with --experimental-websocket)`);
  process.exit(77);
}

export async function waitFor(what, fn, timeoutMs = 3000, stepMs = 10) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

export class Sim {
  // keepOnEof: leave out --exit-on-eof (a test that closes stdin on purpose).
  // Otherwise the sim dies with this process even if it is killed.
  static async start(args = [], { keepOnEof = false } = {}) {
    const sim = new Sim();
    sim.proc = spawn(SIM, keepOnEof ? args : ['--exit-on-eof', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    sim.lines = [];
    sim.stderr = '';
    sim.exited = null;
    let buf = '';
    sim.proc.stdout.on('data', (d) => {
      buf += d.toString();
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        sim.lines.push(buf.slice(0, i));
        buf = buf.slice(i + 1);
      }
    });
    sim.proc.stderr.on('data', (d) => { sim.stderr += d.toString(); });
    sim.proc.on('exit', (code, signal) => { sim.exited = { code, signal }; });
    try {
      await waitFor('the VM Service banner', () => sim.lines.length >= 2 || sim.exited, 5000);
    } catch (e) {
      sim.proc.kill('SIGKILL');
      throw e;
    }
    if (sim.exited) throw new Error(`sim exited early: ${sim.stderr}`);
    const m = /^A Dart VM Service on telescope-sim is available at: (\S+)$/.exec(sim.lines[0]);
    assert.ok(m, `first line: ${sim.lines[0]}`);
    sim.httpUri = m[1];
    const u = new URL(sim.httpUri);
    sim.port = Number(u.port);
    sim.token = u.pathname.split('/')[1];
    sim.wsUri = `ws://127.0.0.1:${sim.port}/${sim.token}/ws`;
    sim.answered = 2;
    return sim;
  }

  // Sends one stdin command; resolves with its one-line answer.
  async cmd(line) {
    const want = this.answered + 1;
    this.proc.stdin.write(line + '\n');
    await waitFor(`answer to "${line}"`, () => this.lines.length >= want || this.exited);
    this.answered = want;
    return this.lines[want - 1];
  }

  async cmdOk(line) {
    const a = await this.cmd(line);
    assert.match(a, /^ok/, `command "${line}" answered: ${a}`);
    return a.slice(3);
  }

  async stats() { return JSON.parse(await this.cmdOk('stats')); }

  async stop() {
    if (!this.exited) {
      this.proc.kill('SIGTERM');
      await waitFor('the sim to exit', () => this.exited, 5000);
    }
    // A clean exit closes every libuv handle (lws's included) first.
    assert.ok(!this.stderr.includes('loop closed with handles open'), this.stderr);
    // Exit 0 also means no sanitizer or leak report (those exit non-zero).
    assert.deepEqual(this.exited, { code: 0, signal: null }, this.stderr);
    return this.exited;
  }
}

export class Client {
  static async connect(uri) {
    const c = new Client();
    c.ws = new WebSocket(uri);
    c.pending = new Map();
    c.events = [];
    c.raw = [];
    c.closed = null;
    c.nextId = 1;
    c.ws.onmessage = (ev) => {
      c.raw.push(ev.data);
      let msg;
      try { msg = JSON.parse(ev.data); } catch { c.malformed = (c.malformed || 0) + 1; return; }
      if (msg.method === 'streamNotify') { c.events.push(msg.params); return; }
      const key = JSON.stringify(msg.id);
      const p = c.pending.get(key);
      if (p) { c.pending.delete(key); p(msg); } else { (c.unmatched ||= []).push(msg); }
    };
    c.ws.onclose = (ev) => { c.closed = { code: ev.code }; };
    await new Promise((resolve, reject) => {
      c.ws.onopen = resolve;
      c.ws.onerror = () => reject(new Error(`cannot connect to ${uri}`));
    });
    return c;
  }

  // Sends a request; resolves with the whole response message.
  send(method, params, id) {
    if (id === undefined) id = String(this.nextId++);
    const msg = { jsonrpc: '2.0', method, id };
    if (params !== undefined) msg.params = params;
    return this.sendRaw(msg, id);
  }

  sendRaw(msg, id) {
    const p = new Promise((resolve) => this.pending.set(JSON.stringify(id), resolve));
    this.ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg));
    return p;
  }

  async call(method, params) {
    const r = await this.send(method, params);
    if (r.error) throw Object.assign(new Error(`${method}: ${r.error.message}`), { rpc: r.error });
    return r.result;
  }

  async waitEvent(kind, timeoutMs = 2000) {
    return waitFor(`event ${kind}`, () => this.events.find((e) => e.event.kind === kind), timeoutMs);
  }

  async waitEventWhere(what, pred, timeoutMs = 2000) {
    return waitFor(what, () => this.events.find(pred), timeoutMs);
  }

  close() { this.ws.close(); }
}

// A raw HTTP request shaped like a WebSocket upgrade; resolves with the
// status and body the server answered with (a 101 resolves with status 101).
export function upgradeRequest(port, path, extraHeaders = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1', port, path, method: 'GET',
      headers: {
        Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': crypto.randomBytes(16).toString('base64'), ...extraHeaders,
      },
    });
    req.on('upgrade', (res, socket) => { socket.destroy(); resolve({ status: res.statusCode, body: '', headers: res.headers }); });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

export function httpGet(port, path) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path }, (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode, body, headers: res.headers }));
    }).on('error', reject);
  });
}

// Runs named async cases in order; any failure fails the process.
export async function run(cases) {
  let failed = 0;
  for (const [name, fn] of Object.entries(cases)) {
    const t0 = Date.now();
    try {
      await fn();
      console.log(`ok   ${name} (${Date.now() - t0} ms)`);
    } catch (e) {
      failed++;
      console.log(`FAIL ${name}: ${e.stack || e}`);
    }
  }
  process.exit(failed ? 1 : 0);
}
