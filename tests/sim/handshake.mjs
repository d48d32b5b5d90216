// The endpoint as a client first meets it: printed URIs, the URI file,
// token and Origin checks with the real HTTP statuses and bodies.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Sim, Client, run, upgradeRequest, httpGet, waitFor } from './lib.mjs';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsim-'));

await run({
  async 'banner lines like flutter run, uri file without newline'() {
    const file = path.join(tmp, 'sub', 'dir', 'uri');
    const sim = await Sim.start(['--seed', '7', '--uri-file', file]);
    try {
      assert.match(sim.lines[0], /^A Dart VM Service on telescope-sim is available at: http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]{11}=\/$/);
      assert.equal(sim.lines[1],
        `The Flutter DevTools debugger and profiler on telescope-sim is available at: http://127.0.0.1:9100?uri=${sim.httpUri}`);
      assert.equal(fs.readFileSync(file, 'utf8'), sim.wsUri);
      assert.equal(sim.token.length, 12);
      // The same seed gives the same token.
      const again = await Sim.start(['--seed', '7']);
      try { assert.equal(again.token, sim.token); } finally { await again.stop(); }
      const other = await Sim.start(['--seed', '8']);
      try { assert.notEqual(other.token, sim.token); } finally { await other.stop(); }
    } finally {
      assert.deepEqual(await sim.stop(), { code: 0, signal: null });
    }
  },

  async 'dds: wrong or missing token is HTTP 403 with the VM body; right token upgrades'() {
    const sim = await Sim.start(['--token', 'EMYU73JbR-A=']);
    try {
      let r = await upgradeRequest(sim.port, '/WRONGTOKEN0=/ws');
      assert.equal(r.status, 403);
      assert.equal(r.body, 'missing or invalid authentication code');
      r = await upgradeRequest(sim.port, '/ws');
      assert.equal(r.status, 403);
      r = await upgradeRequest(sim.port, '/EMYU73JbR-A=/ws');
      assert.equal(r.status, 101);
      // DDS upgrades on any path after the token.
      r = await upgradeRequest(sim.port, '/EMYU73JbR-A=/');
      assert.equal(r.status, 101);
      // Plain HTTP: /<token> redirects to /<token>/.
      r = await httpGet(sim.port, '/EMYU73JbR-A=');
      assert.equal(r.status, 302);
      assert.equal(r.headers.location, '/EMYU73JbR-A=/');
      r = await httpGet(sim.port, '/nope/');
      assert.equal(r.status, 403);
      // A real client connects and is answered.
      const c = await Client.connect(`ws://127.0.0.1:${sim.port}/EMYU73JbR-A=/ws`);
      assert.equal((await c.call('getVersion')).type, 'Version');
      c.close();
    } finally { await sim.stop(); }
  },

  async 'vm mode: foreign Origin is 403 forbidden origin, loopback Origin passes, only /ws upgrades'() {
    const sim = await Sim.start(['--mode', 'vm', '--token', 'abcdefghijk=']);
    try {
      let r = await upgradeRequest(sim.port, '/abcdefghijk=/ws', { Origin: 'http://evil.example.com' });
      assert.equal(r.status, 403);
      assert.equal(r.body, 'forbidden origin');
      r = await upgradeRequest(sim.port, '/abcdefghijk=/ws', { Origin: 'http://localhost:9100' });
      assert.equal(r.status, 101);
      // The raw VM selects implicit-redirect when a subprotocol is offered.
      r = await upgradeRequest(sim.port, '/abcdefghijk=/ws', { 'Sec-WebSocket-Protocol': 'implicit-redirect' });
      assert.equal(r.status, 101);
      assert.equal(r.headers['sec-websocket-protocol'], 'implicit-redirect');
      r = await upgradeRequest(sim.port, '/abcdefghijk=/other');
      assert.equal(r.status, 404);
      r = await upgradeRequest(sim.port, '/zzz/ws');
      assert.equal(r.body, 'missing or invalid authentication code');
    } finally { await sim.stop(); }
  },

  async 'web mode: no trailing slash, ws on /<token>, 403 Incorrect auth token'() {
    const file = path.join(tmp, 'web-uri');
    const sim = await Sim.start(['--mode', 'web', '--uri-file', file]);
    try {
      assert.match(sim.lines[0], /available at: http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]{11}=$/);
      assert.equal(fs.readFileSync(file, 'utf8'), `ws://127.0.0.1:${sim.port}/${sim.token}`);
      const r = await upgradeRequest(sim.port, '/bad/ws');
      assert.equal(r.status, 403);
      assert.equal(r.body, 'Incorrect auth token');
      const c = await Client.connect(`ws://127.0.0.1:${sim.port}/${sim.token}`);
      assert.equal((await c.call('getVM')).name, 'ChromeDebugProxy');
      c.close();
    } finally { await sim.stop(); }
  },

  async 'bad command line exits 2 with a message; --help documents every command'() {
    const { spawnSync } = await import('node:child_process');
    const bad = spawnSync(process.env.TELESCOPE_SIM, ['--mode', 'nope']);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr.toString(), /--mode wants dds, vm or web/);
    const help = spawnSync(process.env.TELESCOPE_SIM, ['--help']);
    assert.equal(help.status, 0);
    for (const w of ['--host', '--port', '--token', '--mode', '--fps', '--scenario', '--seed',
      '--uri-file', '--ring', '--timings-batch-ms', '--method-log', '--no-watcher', '--start-paused',
      '--exit-on-eof', 'scenario ', 'web-timeout', 'web-unregistered', 'params',
      'fps N', 'inject N', 'pause', 'resume', 'restart', 'reload', 'watcher off|on', 'ext-delay',
      'ext-hang', 'vm-hang METHOD [after N]', 'ext-error', 'reply normal', 'timings-delay', 'drop', 'stats', 'methods', 'quit']) {
      assert.ok(help.stdout.toString().includes(w), `--help mentions ${w}`);
    }
  },

  async '--host takes a name: it binds and prints the address; an unknown name exits 2'() {
    const sim = await Sim.start(['--host', 'localhost']);
    try {
      assert.match(sim.httpUri, /^http:\/\/127\.0\.0\.1:\d+\//);
      const c = await Client.connect(sim.wsUri);
      assert.equal((await c.call('getVersion')).type, 'Version');
      c.close();
    } finally { await sim.stop(); }
    const { spawnSync } = await import('node:child_process');
    const bad = spawnSync(process.env.TELESCOPE_SIM, ['--host', 'no-such-host.invalid'], { input: '' });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr.toString(), /cannot resolve --host/);
  },

  async 'stdin EOF does not stop the sim; SIGTERM exits 0'() {
    const sim = await Sim.start([], { keepOnEof: true });
    sim.proc.stdin.end();
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(sim.exited, null);
    const c = await Client.connect(sim.wsUri);
    assert.equal((await c.call('getVersion')).major, 4);
    c.close();
    assert.deepEqual(await sim.stop(), { code: 0, signal: null });
    // --exit-on-eof ties the sim to whoever holds its stdin.
    const child = await Sim.start(['--exit-on-eof'], { keepOnEof: true });
    child.proc.stdin.end();
    await waitFor('exit on EOF', () => child.exited);
    assert.deepEqual(await child.stop(), { code: 0, signal: null });
  },
});
