// telescope-mcp --sim: the server starts telescope-sim as its child, uses it
// like any app, keeps the sim's banner (and token) off its stdout, and takes
// the child with it when it exits, however it exits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { BUILD, startMcp, until, serverOutput, tokensSeen, assertNoTokenLeak } from './harness.mjs';

// The direct children of pid, from /proc (every thread's children list).
function childrenOf(pid) {
  const out = [];
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      out.push(...readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
    } catch { /* the thread ended */ }
  }
  return out;
}
const alive = (pid) => existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
const cmdline = (pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);

// The sim child of the server with this pid, and the token it chose (read
// from the URI file named on its command line), for the leak scan.
function simChildOf(pid) {
  const kids = childrenOf(pid);
  assert.equal(kids.length, 1, `one child, got ${kids}`);
  const argv = cmdline(kids[0]);
  assert.match(argv[0], /telescope-sim$/);
  const uriFile = argv[argv.indexOf('--uri-file') + 1];
  const ws = readFileSync(uriFile, 'utf8');
  tokensSeen.add(ws.match(/^ws:\/\/[^/]+\/([^/]+)/)[1]);
  return { pid: kids[0], argv, uriFile };
}

test('--sim --scenario janky --seed 7: capture returns frames; the child ends with the client', async () => {
  const m = await startMcp(['--sim', '--scenario', 'janky', '--seed', '7']);
  const mcpPid = m.transport.pid;
  assert.ok(mcpPid > 0);
  const sim = simChildOf(mcpPid);
  assert.deepEqual(sim.argv.slice(-4), ['--scenario', 'janky', '--seed', '7'], 'options after --sim are passed through');

  const st = await m.call({ action: 'status' });
  assert.equal(st.sc.connection.state, 'connected', st.text);
  assert.equal(st.sc.connection.watcher, 'present');
  const cap = await m.call({ action: 'capture', durationMs: 500, detail: 'frames', limit: 1000 });
  assert.equal(cap.isError, false, cap.text);
  assert.ok(cap.sc.summary.frames >= 10, `${cap.sc.summary.frames} frames in 500 ms at 60 fps`);
  assert.equal(cap.sc.frames.length, cap.sc.summary.frames);
  assert.ok(cap.sc.summary.topBlocks.length > 0, 'attribution was on');

  await m.close(); // asserts stdout held only JSON-RPC: the sim's banner did not leak
  await until(() => !alive(sim.pid), { what: `sim child ${sim.pid} to exit`, timeoutMs: 3000 });
  await until(() => !existsSync(sim.uriFile), { what: 'the temporary URI file to be removed', timeoutMs: 3000 });
  assert.ok(!m.stderr.includes('A Dart VM Service'), 'the banner is not on stderr either');
});

// Starts the server under plain node, so signals and exit codes can be seen.
function spawnMcp(args) {
  const child = spawn(join(BUILD, 'telescope-mcp'), args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const p = { child, stdout: '', stderr: '' };
  child.stdout.on('data', (d) => { p.stdout += d; });
  child.stderr.on('data', (d) => { p.stderr += d; serverOutput.push(String(d)); });
  p.exited = new Promise((r) => child.on('exit', (code, sig) => r({ code, sig })));
  return p;
}

for (const signal of ['SIGTERM', 'SIGINT']) {
  test(`${signal} to the server: it exits 0 and the sim child is gone`, async () => {
    const p = spawnMcp(['--sim', '--scenario', 'idle']);
    const sim = await until(() => { try { return childrenOf(p.child.pid).length ? simChildOf(p.child.pid) : null; } catch { return null; } },
      { what: 'the sim child' });
    // Ready once the URI file exists; the server serves from then on.
    p.child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    await until(() => p.stdout.includes('"id":1'), { what: 'ping answer' });
    p.child.kill(signal);
    assert.deepEqual(await p.exited, { code: 0, sig: null });
    await until(() => !alive(sim.pid), { what: 'sim child exit', timeoutMs: 3000 });
    assert.equal(p.stdout, '{"jsonrpc":"2.0","id":1,"result":{}}\n', 'nothing but MCP on stdout');
  });
}

test('stdin EOF: exit 0, sim child gone', async () => {
  const p = spawnMcp(['--sim']);
  const sim = await until(() => { try { return childrenOf(p.child.pid).length ? simChildOf(p.child.pid) : null; } catch { return null; } },
    { what: 'the sim child' });
  p.child.stdin.end();
  assert.deepEqual(await p.exited, { code: 0, sig: null });
  await until(() => !alive(sim.pid), { what: 'sim child exit', timeoutMs: 3000 });
  assert.equal(p.stdout, '');
});

test('a bad sim option: exit 2 with the sim\'s complaint on stderr', async () => {
  const p = spawnMcp(['--sim', '--scenario', 'nonsense']);
  assert.deepEqual(await p.exited, { code: 2, sig: null });
  assert.match(p.stderr, /\[sim\].*scenario/);
  assert.equal(p.stdout, '');
});

test('--sim with --vm-service-uri, or --uri-file/--help for the sim: exit 2', async () => {
  for (const args of [['--vm-service-uri', 'ws://127.0.0.1:1/x=/ws', '--sim'], ['--sim', '--uri-file', '/tmp/x'], ['--sim', '--help']]) {
    const p = spawnMcp(args);
    assert.deepEqual(await p.exited, { code: 2, sig: null }, args.join(' '));
    assert.match(p.stderr, /--sim/);
  }
});

test('no token in anything the server wrote', () => assertNoTokenLeak());
