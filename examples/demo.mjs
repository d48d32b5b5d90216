// The demo: a real telescope session, printed for a human.
//
//   node examples/demo.mjs BUILD_DIR      (what `make demo` runs, via demo.sh)
//
// It starts telescope-sim (a simulated Flutter app: janky scenario, fixed
// seed) on an ephemeral port, then drives the real telescope-mcp through the
// official MCP SDK client, as an agent's MCP client would: initialize, status,
// start an interaction with widget tracking, mark a second one, capture 2 s
// with progress, stop, a workload the app plays itself (scenario scrolllist:
// two captures of a fling, 3 runs each, and compare) — then an idle app and
// a stalled engine, to show what the diagnosis says when there are no frames. Every step checks its answer;
// any failure ends the demo with exit status 1, and every child is stopped.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const build = resolve(process.argv[2] ?? join(root, 'build'));
const MCP = join(build, 'telescope-mcp');
const SIM = join(build, 'telescope-sim');
const SEED = 7;

// The pinned SDK of the client tests (make node-deps installs it).
const require = createRequire(join(root, 'tests/client/node_modules/x.js'));
let Client, StdioClientTransport;
try {
  ({ Client } = await import(require.resolve('@modelcontextprotocol/sdk/client/index.js')));
  ({ StdioClientTransport } = await import(require.resolve('@modelcontextprotocol/sdk/client/stdio.js')));
} catch {
  console.error('demo: the MCP SDK is not installed in tests/client/node_modules; run `make node-deps`');
  process.exit(1);
}

// ---- printing -------------------------------------------------------------
const tty = process.stdout.isTTY;
const paint = (code) => (s) => (tty ? `\x1b[${code}m${s}\x1b[0m` : String(s));
const bold = paint('1'), dim = paint('2'), red = paint('31'), green = paint('32'), cyan = paint('36');
const ms = (us) => (us === undefined ? '-' : `${(us / 1000).toFixed(1)} ms`);
const out = (s = '') => console.log(s);
const item = (label, text) => out(`    ${dim(label.padEnd(12))} ${text}`);
let stepNo = 0;
const step = (what) => out(`\n${bold(cyan(`[${++stepNo}]`))} ${bold(what)}`);
const wrap = (text, width = 84, indent = '                 ') =>
  text.replace(new RegExp(`(.{1,${width}})(\\s|$)`, 'g'), `${indent}$1\n`).trimEnd().trimStart();

function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
}

function printDiagnosis(d) {
  if (!d) return;
  item('diagnosis', `${bold(d.code)}: ${d.message}`);
  item('hint', wrap(d.hint));
  if (d.evidence) item('evidence', JSON.stringify(d.evidence));
}

function printSummary(s) {
  const jank = s.jank;
  item('frames', `${bold(s.frames)} (budget ${ms(s.budgetUs)}), ` +
    `${jank.frames ? red(`${jank.frames} janky`) : green('0 janky')} ` +
    `(${(jank.ratio * 100).toFixed(1)} %), ${jank.frozen} frozen`);
  if (!s.frames) return;
  item('', dim('            p50       p90       p99       max'));
  for (const [k, label] of [['buildUs', 'build'], ['rasterUs', 'raster']]) {
    const p = s[k];
    item(label, [p.p50, p.p90, p.p99, p.max].map((v) => ms(v).padStart(9)).join(' '));
  }
  item('sparkline', `${s.sparkline}  ${dim('(max of build and raster per frame; █ = over budget)')}`);
  if (s.topBlocks?.length) {
    item('top blocks', dim('self time, summed over the frames (count)'));
    for (const b of s.topBlocks.slice(0, 6))
      item('', `${b.name.padEnd(26)} ${ms(b.selfMicros).padStart(10)} self  ${dim(`(${b.count}×, in ${b.frames} frames)`)}`);
  }
  if (s.worstFrames?.length) {
    item('worst frames', '');
    for (const f of s.worstFrames.slice(0, 3)) {
      const blocks = (f.topBlocks ?? []).map((b) => `${b.name} ${ms(b.selfMicros)}`).join(', ');
      item('', `#${f.frameNumber}: build ${ms(f.buildUs)}, raster ${ms(f.rasterUs)}` +
        `${f.interactionId ? dim(` [${f.interactionId}]`) : ''} ← ${blocks || dim('no blocks')}`);
    }
  }
  if (s.interactions?.length) {
    item('interactions', '');
    for (const i of s.interactions)
      item('', `${i.interactionId.padEnd(14)} ${String(i.frames).padStart(4)} frames, ${i.jankFrames} janky, ` +
        `build p90 ${ms(i.buildUs?.p90)}`);
  }
}

// ---- the simulated app ------------------------------------------------------
const tmp = mkdtempSync(join(tmpdir(), 'telescope-demo-'));
const uriFile = join(tmp, 'vmservice.uri');
let sim, client;

function startSim() {
  const child = spawn(SIM, ['--port', '0', '--uri-file', uriFile, '--scenario', 'janky', '--seed', String(SEED)],
    { stdio: ['pipe', 'pipe', 'pipe'] });
  const s = { child, lines: [], waiters: [], stderr: '' };
  let buf = '';
  child.stdout.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i); buf = buf.slice(i + 1);
      const w = s.waiters.shift();
      if (w) w(line); else s.lines.push(line);
    }
  });
  child.stderr.on('data', (d) => { s.stderr += d; });
  s.exited = new Promise((r) => child.on('exit', (code, signal) => r({ code, signal })));
  s.nextLine = () => new Promise((r, j) => {
    const l = s.lines.shift();
    if (l !== undefined) return r(l);
    s.waiters.push(r);
    s.exited.then((e) => j(new Error(`telescope-sim exited (${JSON.stringify(e)}): ${s.stderr}`)));
  });
  // One command on the sim's stdin, one line back.
  s.cmd = async (line) => {
    child.stdin.write(line + '\n');
    const reply = await s.nextLine();
    check(reply.startsWith('ok'), `sim: ${line} → ${reply}`);
    return reply;
  };
  return s;
}

async function stopSim() {
  if (!sim || sim.child.exitCode !== null || sim.child.signalCode !== null) return;
  sim.child.kill('SIGTERM');
  await sim.exited;
}

// ---- one tool call ----------------------------------------------------------
async function call(args, opts = {}) {
  out(`    ${dim('→ telescope_frames ' + JSON.stringify(args))}`);
  const res = await client.callTool({ name: 'telescope_frames', arguments: args }, undefined,
    { timeout: 90000, ...opts });
  const sc = res.structuredContent;
  check(sc && typeof sc === 'object', 'the result carries structuredContent');
  check(res.isError !== true, `not an error: ${res.content?.[0]?.text}`);
  return sc;
}

// Reads until the diagnosis says `code` (the first read after a scenario
// change may still drain the last frames drawn before it).
async function readUntil(code) {
  for (let i = 0; i < 4; i++) {
    const sc = await call({ action: 'read' });
    if (sc.diagnosis?.code === code) return sc;
    item('read', `${sc.summary.frames} frame(s) from before the change ` +
      `(diagnosis ${sc.diagnosis?.code ?? 'none'}); reading again`);
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no ${code} diagnosis after 4 reads`);
}

async function main() {
  out(bold('telescope demo: an agent measures a (simulated) janky Flutter app'));
  out(dim(`telescope-mcp: ${MCP}`));

  step('start telescope-sim, the simulated app');
  sim = startSim();
  const banner = await sim.nextLine();
  const m = banner.match(/is available at: (http:\/\/[^/]+)\/([^/]+)\//);
  check(m, `the sim printed its banner: ${banner}`);
  sim.token = m[2];
  await sim.nextLine(); // the DevTools line
  item('app', `janky scenario (about 12 % of frames carry a slow widget), seed ${SEED}, 60 fps`);
  item('listening', `${m[1]}/…token…/ (written to a URI file, as flutter run --vmservice-out-file does)`);

  step('initialize (the agent\'s MCP client connects)');
  const transport = new StdioClientTransport({ command: MCP, args: ['--vm-service-uri-file', uriFile], stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => { stderr += d; });
  client = new Client({ name: 'telescope-demo', version: '1' });
  const protocolErrors = [];
  client.onerror = (e) => protocolErrors.push(e);
  try {
    await client.connect(transport, { timeout: 10000 });
  } catch (e) {
    throw new Error(`${e.message}\n${stderr}`);
  }
  const info = client.getServerVersion();
  check(info?.name === 'telescope-mcp', 'the server is telescope-mcp');
  item('server', `${info.name} ${info.version}`);
  item('instructions', wrap(client.getInstructions() ?? ''));
  const { tools } = await client.listTools();
  check(tools.length === 1 && tools[0].name === 'telescope_frames', 'one tool, telescope_frames');
  item('tool', `${tools[0].name}: actions ${tools[0].inputSchema.properties.action.enum.join(' | ')}`);

  step('status: is the app there?');
  const st = await call({ action: 'status' });
  check(st.connection.state === 'connected', `connected (got ${st.connection.state})`);
  check(st.connection.watcher === 'present', 'the watcher is registered');
  item('connection', `${st.connection.state} to ${st.connection.vmServiceUri} (token redacted)`);
  item('isolate', `${st.connection.isolateName} (${st.connection.isolateId}), ${st.connection.runtime}, ` +
    `watcher ${st.connection.watcherVersion}`);
  printDiagnosis(st.diagnosis);

  step('start a session for interaction "scroll-feed", naming widgets');
  const start = await call({ action: 'start', interactionId: 'scroll-feed', trackWidgets: true });
  check(start.session?.state === 'active', 'the session is active');
  item('session', `${start.session.id} ${start.session.state}, tracking ${(start.session.tracking ?? []).join(', ') || 'nothing'}`);
  item('', dim('(the agent now drives the app; here the sim keeps scrolling on its own)'));
  await new Promise((r) => setTimeout(r, 700));

  step('mark: the agent opens the details page, interaction "open-details"');
  const mk = await call({ action: 'mark', interactionId: 'open-details' });
  check(mk.interaction?.interactionId === 'open-details', 'the interaction is now open-details');
  item('interaction', `${mk.interaction.interactionId} (linkedBy ${mk.interaction.linkedBy})`);

  step('capture 2 s inside the session, with progress');
  let progressLines = 0;
  const cap = await call({ action: 'capture', durationMs: 2000 }, {
    onprogress: (p) => {
      progressLines++;
      out(`    ${dim('progress'.padEnd(12))} ${p.progress}${p.total ? `/${p.total}` : ''} ${p.message ?? ''}`);
    },
  });
  check(progressLines > 0, 'progress notifications arrived');
  check(cap.summary.frames > 0, 'the capture saw frames');
  printSummary(cap.summary);

  step('stop: the whole session\'s summary');
  const stop = await call({ action: 'stop' });
  check(stop.session.state === 'stopped', 'the session is stopped');
  check(stop.summary.frames > cap.summary.frames, 'the session saw more than the capture window');
  check(stop.summary.jank.frames > 0, 'the janky app shows jank');
  check(stop.summary.worstFrames[0].topBlocks.some((b) => b.name === 'SlowWidget'),
    'the worst frame names the slow widget');
  item('session', `${stop.session.id}: ${stop.session.durationMs} ms, ${stop.session.framesSeen} frames seen, ` +
    `${stop.session.framesLost} lost, ${stop.session.restarts} restarts`);
  printSummary(stop.summary);
  printDiagnosis(stop.diagnosis);

  step('a workload: the app plays the feed\'s fling 3 times, twice, and compare judges the runs');
  await sim.cmd('scenario scrolllist');
  item('app', 'scrolllist scenario: a feed that draws only while driven, a ~25 ms tile every 7th');
  const workload = { steps: [{ fling: { dy: -3000, in: 'key:feed' } }], repeat: 3 };
  const runs = [];
  for (const k of [1, 2]) {
    const w = (await call({ action: 'capture', workload })).summary.workload;
    check(w.runs.length === 3 && w.runs.every((r) => r.frames > 0), 'each run drew frames');
    check(w.drive.state === 'done', 'the drive ended');
    item(`capture ${k}`, `${w.label}: jank ${w.runs.map((r) => `${(r.jankRatio * 100).toFixed(1)} %`).join(', ')}` +
      ` (spread ${w.spread.jankPoints.toFixed(1)} points), build p90 ${w.runs.map((r) => ms(r.buildP90Us)).join(', ')}`);
    runs.push(w);
  }
  const cmp = (await call({ action: 'compare' })).comparison;
  check(cmp.workload?.same === true, 'compare says both ran the same workload');
  check(cmp.verdict !== 'regressed', 'the unchanged app is not a regression');
  item('compare', `${cmp.verdict}; same workload, judged ${cmp.workload.byRuns ? 'run by run' : 'on the frames'}`);

  step('an idle app: nothing changes on screen');
  await sim.cmd('scenario idle');
  await new Promise((r) => setTimeout(r, 300));
  const idle = await readUntil('app_idle');
  item('frames', `${idle.summary.frames} new`);
  printDiagnosis(idle.diagnosis);

  step('a stalled engine: a backgrounded tab or a minimised window');
  await sim.cmd('scenario stalled');
  const stalled = await readUntil('engine_stalled');
  item('frames', `${stalled.summary.frames} new`);
  printDiagnosis(stalled.diagnosis);

  step('the client disconnects');
  const pid = transport.pid;
  await client.close();
  client = undefined;
  check(protocolErrors.length === 0, `stdout held only MCP messages (${protocolErrors.join('; ')})`);
  check(!stderr.includes(sim.token ?? '\0'), 'no token in the server\'s logs');
  const gone = async () => { for (let i = 0; i < 100; i++) { try { process.kill(pid, 0); } catch { return true; } await new Promise((r) => setTimeout(r, 20)); } return false; };
  check(await gone(), `telescope-mcp (pid ${pid}) ended with the client`);
  item('server', `pid ${pid} ended with the client`);
  await stopSim();
  out(`\n${green(bold('demo ok'))}: ${stepNo} steps; telescope-mcp exited with 0`);
}

let status = 0;
const watchdog = setTimeout(() => { console.error('demo: took longer than 50 s'); cleanup().then(() => process.exit(1)); }, 50000);
async function cleanup() {
  try { await client?.close(); } catch { /* already closed */ }
  await stopSim();
  rmSync(tmp, { recursive: true, force: true });
}
// Ctrl-C (make demo in a terminal): the sim does not stop on stdin EOF, so
// stop it here rather than leave it behind.
for (const sig of ['SIGINT', 'SIGTERM'])
  process.on(sig, () => { cleanup().then(() => process.exit(130)); });
try {
  await main();
} catch (e) {
  console.error(`\n${red(bold('demo failed'))}: ${e.message}`);
  status = 1;
}
await cleanup();
clearTimeout(watchdog);
process.exit(status);
