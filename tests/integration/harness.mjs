// Shared harness for the integration tests: the real telescope-sim on an
// ephemeral port, the real telescope-mcp driven by the official MCP SDK
// client (schemas validated: listTools runs first), and scans of everything
// both wrote.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(join(process.env.TELESCOPE_NODE_MODULES ?? '', 'x.js'));
const { Client } = await import(require.resolve('@modelcontextprotocol/sdk/client/index.js'));
const { StdioClientTransport } = await import(require.resolve('@modelcontextprotocol/sdk/client/stdio.js'));
const Ajv = require('ajv');

export const BUILD = process.env.TELESCOPE_BINARY_DIR;
export const SOURCE = process.env.TELESCOPE_SOURCE_DIR;
if (!BUILD || !SOURCE) throw new Error('TELESCOPE_BINARY_DIR and TELESCOPE_SOURCE_DIR must be set');

const outputSchema = JSON.parse(readFileSync(join(SOURCE, 'schema/telescope_frames.output.json'), 'utf8'));
const validateOutput = new Ajv({ strict: false, allErrors: true }).compile(outputSchema);

// What the sims wrote (may hold tokens) and what the server wrote (must not).
export const transcript = [];
export const serverOutput = [];
export const tokensSeen = new Set();

// TELESCOPE_MCP_WRAPPER (e.g. "valgrind -q --error-exitcode=99 --leak-check=full")
// runs the binary under that command; every --call-timeout-ms is then
// multiplied by TELESCOPE_TIMEOUT_SCALE (default 20), one is added when
// absent, and close() waits for the exit; assertNoTokenLeak() asserts every
// such exit status was 0.
export const WRAPPER = (process.env.TELESCOPE_MCP_WRAPPER ?? '').split(/\s+/).filter(Boolean);
export const TIMEOUT_SCALE = WRAPPER.length ? Number(process.env.TELESCOPE_TIMEOUT_SCALE ?? 20) : 1;

// Every child still running when node exits is killed, so a failed
// clean-up (an after hook that threw half-way) leaves no process behind.
const children = new Set();
process.on('exit', () => { for (const c of children) c.kill('SIGKILL'); });
function track(child) { children.add(child); child.once('exit', () => children.delete(child)); }

export function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }

// Polls fn until it returns a truthy value or the deadline passes.
// Under a wrapper (valgrind) every deadline stretches by TIMEOUT_SCALE.
export async function until(fn, { timeoutMs = 5000, everyMs = 25, what = 'condition' } = {}) {
  const end = Date.now() + timeoutMs * TIMEOUT_SCALE;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

export function tempDir() { return mkdtempSync(join(tmpdir(), 'telescope-it-')); }

// telescope-dtd --machine (the stand-in for pkg/dtd_impl): resolves with
// {uri, secret, child, kill}. Its URI's auth code and its client secret are
// tokens that must never be printed.
export async function startDtd(args = []) {
  const child = spawn(join(BUILD, 'telescope-dtd'), ['--machine', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((r) => child.once('exit', r));
  const line = await new Promise((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (d) => {
      buf += d;
      transcript.push(String(d));
      const i = buf.indexOf('\n');
      if (i >= 0) resolve(buf.slice(0, i));
    });
    child.once('exit', (code) => reject(new Error(`telescope-dtd exited ${code}`)));
  });
  const { uri, trusted_client_secret: secret } = JSON.parse(line).tooling_daemon_details;
  tokensSeen.add(new URL(uri).pathname.slice(1)); // the URI's auth code
  if (secret) tokensSeen.add(secret);
  return { uri, secret, child, kill: async () => { child.kill('SIGTERM'); await exited; } };
}

// Starts telescope-sim; resolves once it printed its URI.
// The sim lists a debug app's 30 000 compiled functions in every CpuSamples
// reply by default (about 30 MB): the tests that are not about sizes ask for
// 1 000 (1 MB), which halves their time and keeps the valgrind runs in bounds;
// realsizes.test.mjs runs the real size.
export async function startSim(args = [], { uriFile } = {}) {
  if (!args.includes('--compiled-functions')) args = ['--compiled-functions', '1000', ...args];
  const dir = tempDir();
  uriFile ??= join(dir, 'vmservice.uri');
  const child = spawn(join(BUILD, 'telescope-sim'),
    ['--port', '0', '--uri-file', uriFile, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  track(child);
  const sim = { child, uriFile, lines: [], waiters: [], stderr: '' };
  let buf = '';
  child.stdout.on('data', (d) => {
    buf += d;
    transcript.push(String(d));
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i); buf = buf.slice(i + 1);
      if (line.startsWith('The Flutter DevTools')) continue; // the banner's second line
      const w = sim.waiters.shift();
      if (w) w(line); else sim.lines.push(line);
    }
  });
  child.stderr.on('data', (d) => { sim.stderr += d; transcript.push(String(d)); });
  sim.exited = new Promise((r) => child.on('exit', (code, sig) => r({ code, sig })));
  const nextLine = () => new Promise((r) => { const l = sim.lines.shift(); if (l !== undefined) r(l); else sim.waiters.push(r); });
  for (;;) {
    const line = await Promise.race([nextLine(), sim.exited.then((e) => { throw new Error(`telescope-sim exited ${JSON.stringify(e)}: ${sim.stderr}`); })]);
    const m = line.match(/A Dart VM Service on .* is available at: (\S+)/);
    if (m) { sim.httpUri = m[1]; break; }
  }
  sim.token = sim.httpUri.match(/^https?:\/\/[^/]+\/([^/]+)/)[1];
  tokensSeen.add(sim.token);
  sim.port = Number(new URL(sim.httpUri).port);
  sim.wsUri = await until(() => { try { return readFileSync(uriFile, 'utf8'); } catch { return null; } }, { what: 'uri file' });
  // One command on stdin, one line back ("ok …", "error …" or JSON).
  sim.cmd = async (line) => {
    child.stdin.write(line + '\n');
    const reply = await nextLine();
    if (reply.startsWith('error')) throw new Error(`sim: ${line} → ${reply}`);
    return reply;
  };
  sim.stats = async () => JSON.parse((await sim.cmd('stats')).replace(/^ok\s+/, ''));
  // Waits until the app has drawn n frames more: the frames a test lets it
  // draw are counted, not timed, so a loaded machine's slower sim draws them
  // all the same (the deadline allows ten times 30 fps).
  sim.drawn = async (n) => {
    const from = (await sim.stats()).framesDrawn;
    return until(async () => (await sim.stats()).framesDrawn >= from + n,
      { timeoutMs: Math.max(5000, n * 333), what: `${n} frames drawn` });
  };
  sim.methods = async () => JSON.parse((await sim.cmd('methods')).replace(/^ok\s+/, ''));
  sim.kill = async (signal = 'SIGTERM') => { child.kill(signal); return sim.exited; };
  return sim;
}

function wrapArgs(args) {
  if (!WRAPPER.length) return { command: join(BUILD, 'telescope-mcp'), args };
  args = [...args];
  const i = args.indexOf('--call-timeout-ms');
  if (i >= 0) args[i + 1] = String(Math.round(Number(args[i + 1]) * TIMEOUT_SCALE));
  else {
    // Everything after --sim belongs to the simulator: ours goes before it.
    const at = args.includes('--sim') ? args.indexOf('--sim') : args.length;
    args.splice(at, 0, '--call-timeout-ms', String(3000 * TIMEOUT_SCALE));
  }
  return { command: WRAPPER[0], args: [...WRAPPER.slice(1), join(BUILD, 'telescope-mcp'), ...args] };
}

// Starts telescope-mcp under the SDK client, lists tools (which arms the
// SDK's outputSchema validation), and returns helpers.
export async function startMcp(args = [], { env = {} } = {}) {
  // A loaded CI machine (or the sanitizer build) can take seconds for the
  // first connection; tests that are about timeouts pass their own value.
  if (!args.some((a) => a.startsWith('--call-timeout-ms')))
    args = ['--call-timeout-ms', process.env.TELESCOPE_TEST_CALL_TIMEOUT_MS ?? '10000', ...args];
  const transport = new StdioClientTransport({
    ...wrapArgs(args), env: { ...process.env, ...env }, stderr: 'pipe',
  });
  const client = new Client({ name: 'telescope-integration', version: '0' });
  const errors = [];
  client.onerror = (e) => errors.push(e);
  let stderr = '';
  transport.stderr?.on('data', (d) => { stderr += d; serverOutput.push(String(d)); });
  // All the server wrote to stderr is in `stderr` once this settles (after
  // its exit, the last lines can still be on their way).
  const stderrDone = new Promise((r) => {
    if (!transport.stderr) return r();
    transport.stderr.once('end', r);
    transport.stderr.once('close', r);
  });
  await client.connect(transport, { timeout: 10000 * TIMEOUT_SCALE });
  // The SDK keeps the child private; a wrapped run needs its exit status.
  const child = transport._process;
  track(child);
  const exited = new Promise((r) => child.once('exit', (code, sig) => r({ code, sig })));
  const { tools } = await client.listTools();
  assert.equal(tools.length, 1);
  assert.equal(tools[0].name, 'telescope_frames');
  const mcp = {
    client, transport, errors,
    get stderr() { return stderr; },
    stderrDone,
    // One tool call; returns {sc, isError, text, result}. The SDK has
    // validated sc against outputSchema already; we validate again so a
    // missing structuredContent cannot pass silently.
    async call(args, opts = {}) {
      const result = await client.callTool({ name: 'telescope_frames', arguments: args }, undefined,
        { timeout: 150000, ...opts });
      const text = result.content?.find((c) => c.type === 'text')?.text ?? '';
      serverOutput.push(text);
      const sc = result.structuredContent;
      if (sc !== undefined) {
        assert.ok(validateOutput(sc), `structuredContent invalid: ${JSON.stringify(validateOutput.errors)}\n${text}`);
        // The text block is the short answer written for the agent
        // (server/answer_text.c): its verdict line names the action.
        assert.match(text, new RegExp(`^(error: )?${sc.action}[: ]`), 'the text block is the rendered answer');
      }
      assert.ok(Buffer.byteLength(text) <= 65536, 'no call returns more than 64 KB of text');
      return { sc, isError: result.isError === true, text, result };
    },
    pid: child.pid,
    exited,
    async close() {
      if (WRAPPER.length && child.exitCode === null && child.signalCode === null) {
        // The SDK would SIGKILL after 4 s; a wrapped exit (leak check) takes longer.
        child.stdin.end();
        const e = await Promise.race([exited, new Promise((r) => setTimeout(r, 60000, null).unref())]);
        if (!e) child.kill('SIGKILL');
        // Recorded, not thrown: a throw here would stop the after hook's
        // clean-up half-way and leave sims running. assertNoTokenLeak(),
        // which every file calls last, reports it.
        if (!e || e.code !== 0 || e.sig !== null)
          wrappedFailures.push(`wrapped server exit ${JSON.stringify(e)}\n${stderr.slice(-4000)}`);
      }
      await client.close();
      assert.deepEqual(errors.map(String), [], 'stdout held only valid JSON-RPC lines');
    },
  };
  return mcp;
}

// Every test file ends with this: every wrapped server exited 0, and no
// token the sims printed appears in anything the server wrote (stderr or
// tool output).
// Exit statuses of wrapped (valgrind) servers that were not 0.
export const wrappedFailures = [];

export function assertNoTokenLeak() {
  assert.deepEqual(wrappedFailures, [], 'every wrapped server exited 0');
  assert.ok(tokensSeen.size > 0 && serverOutput.length > 0, 'the scan had something to scan');
  for (const tok of tokensSeen)
    for (const out of serverOutput)
      assert.ok(!out.includes(tok), `VM-service token ${tok.slice(0, 3)}… leaked`);
}
