// Helpers for the model-based test of the session core (issue 11): a seeded
// random source, a sim+server pair that survives kills, and one call wrapper
// that turns "no answer", "two answers" and "invalid structuredContent" into
// recorded failures instead of hangs.
//
// The contract being judged is docs/tool.md, "Sessions: states, overlapping
// calls, delivery". Everything the sim is told here is one of its stdin
// commands (watcher/sim/README.md).
import { startSim, startMcp, sleep, until, TIMEOUT_SCALE } from '../integration/harness.mjs';
import { tempDir } from '../integration/harness.mjs';
import { join } from 'node:path';

export { sleep, until, TIMEOUT_SCALE };

// How much slower than a plain build the binaries run: the settle windows
// and the capture-length bound stretch by it. A sanitizer build (make
// check-hard builds into build-asan) runs a few times slower on a shared
// 2-core machine; MODEL_SLACK overrides.
export const SLACK = Number(process.env.MODEL_SLACK ??
  (/asan/.test(process.env.TELESCOPE_BINARY_DIR ?? '') ? 3 : 1)) * TIMEOUT_SCALE;

// mulberry32: small, fast and good enough to pick steps; the same seed gives
// the same step lists on every machine.
export function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (xs) => xs[Math.floor(next() * xs.length)],
    chance: (p) => next() < p,
    // xs: [[weight, value], …]
    weighted: (xs) => {
      const total = xs.reduce((s, [w]) => s + w, 0);
      let r = next() * total;
      for (const [w, v] of xs) { if ((r -= w) < 0) return v; }
      return xs[xs.length - 1][1];
    },
  };
}

// One sequence's seed from the run's seed and its index, so a single
// sequence can be replayed alone (MODEL_FIRST=i MODEL_SEQUENCES=1).
export function sequenceSeed(seed, i) {
  let h = (seed ^ Math.imul(i + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  return (h ^ (h >>> 13)) >>> 0;
}

// MODEL_APPS: the apps the server knows (default 2). The model judges the
// first ("app 1", on the pair's URI file) exactly as with one; the second is
// a steady app of its own (app2.mjs) that runs sessions at the same time,
// dies and comes back, and must never disturb the first (issue 22).
export function envInt(name, dflt) {
  const v = process.env[name];
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got ${v}`);
  return n;
}

// The call timeout the server is started with. The final drain of a stop on
// a paused app gives up at this timeout (contract, "When the app goes away"),
// so it bounds what a pause costs a sequence.
// A sanitized build answers a page of records at 6 000 fps about three
// times slower (BENCHMARKS): its calls get twice the time.
export const CALL_TIMEOUT_MS = 1500 * (/asan/.test(process.env.TELESCOPE_BINARY_DIR ?? '') ? 2 : 1) *
  TIMEOUT_SCALE;
// How long the test waits for any one answer before it calls it lost: far
// beyond anything the contract lets a call take (a capture of ≤ 400 ms plus
// a few call timeouts). A stop waits for the drain generation under way and
// one of its own, up to DRAIN_MAX_PAGES pages each: a sanitized build under
// a full suite's load took 9.8 s for one at 3 000 fps (a check-hard run), so
// its answers get twice the time, as its calls do.
export const ANSWER_LIMIT_MS = 20000 * (/asan/.test(process.env.TELESCOPE_BINARY_DIR ?? '') ? 2 : 1) *
  TIMEOUT_SCALE;

export const APPS = Math.min(2, Math.max(1, envInt('MODEL_APPS', 2)));

// A sim that says whether it still runs (sim.cmd on a dead one waits forever).
function tracked(s) {
  s.alive = true;
  s.exited.then(() => { s.alive = false; });
  return s;
}

// A sim and a server on one URI file. The sim can be killed and a new one
// started on the same file; the server re-reads the file when it reconnects
// (telescope-mcp --help: "re-read when the app restarts").
export class Pair {
  constructor({ simArgs = [], mcpArgs = [] } = {}) {
    this.simArgs = simArgs;
    this.mcpArgs = mcpArgs;
    this.uriFile = join(tempDir(), 'vmservice.uri');
    this.sim = null;
    this.mcp = null;
    this.simB = null; // the second app (APPS 2)
  }

  // The second app: its own sim on its own URI; the server learns it from a
  // status that names it (app: its URI).
  async startSimB(seed) {
    const s = tracked(await startSim(['--seed', String(seed), '--scenario', 'steady', '--fps', '60']));
    this.simB = s;
    if (this.mcp) await this.mcp.call({ action: 'status', app: s.wsUri }, { timeout: ANSWER_LIMIT_MS });
    return s;
  }

  async killSimB() {
    const s = this.simB;
    if (!s || !s.alive) return;
    s.alive = false;
    await s.kill('SIGKILL');
  }

  async startSim(extra = []) {
    const s = tracked(await startSim([...this.simArgs, ...extra], { uriFile: this.uriFile }));
    this.sim = s;
    return s;
  }

  async startMcp() {
    const m = await startMcp(['--call-timeout-ms', String(CALL_TIMEOUT_MS),
      '--vm-service-uri-file', this.uriFile, ...this.mcpArgs]);
    m.child = m.transport._process;
    m.dead = null;
    m.exited.then((e) => { m.dead = e; });
    this.mcp = m;
    return m;
  }

  async start() {
    await this.startSim();
    await this.startMcp();
    if (APPS > 1) await this.startSimB(9000);
    return this;
  }

  async killSim(signal = 'SIGKILL') {
    const s = this.sim;
    if (!s || !s.alive) return;
    s.alive = false;
    await s.kill(signal);
  }

  // Closes the server by stdin EOF and returns its exit ({code, sig}); the
  // contract says 0 on stdin EOF, and a sanitizer report makes it non-zero.
  async closeMcp() {
    const m = this.mcp;
    if (!m) return null;
    this.mcp = null;
    let exit = m.dead;
    if (!exit) {
      m.child.stdin.end();
      exit = await Promise.race([m.exited,
        new Promise((r) => setTimeout(r, 15000 * TIMEOUT_SCALE, null).unref())]);
      if (!exit) m.child.kill('SIGKILL');
    }
    // For a report about how it exited: everything it wrote, the lines it
    // wrote on its way out included.
    await Promise.race([m.stderrDone, new Promise((r) => setTimeout(r, 2000).unref())]);
    this.closedStderr = m.stderr;
    try { await m.client.close(); } catch { /* already gone */ }
    return exit ?? { code: null, sig: 'timeout' };
  }

  async close() {
    const exit = await this.closeMcp();
    await this.killSim('SIGTERM');
    await this.killSimB();
    return exit;
  }

  // A sim command, or null when the sim is gone (sim.cmd would wait forever).
  async cmd(line) {
    if (!this.sim?.alive) return null;
    try { return await this.sim.cmd(line); } catch (e) { return `error ${e.message}`; }
  }

  async stats() {
    if (!this.sim?.alive) return null;
    return this.sim.stats();
  }
}

// One tool call with everything that can go wrong recorded, not thrown:
// {ok, sc, isError, text, lost, invalid, ms}. `lost` is an answer that did not
// come within ANSWER_LIMIT_MS (invariant 1); `invalid` is a structuredContent
// the output schema refused (invariant 7: the harness's call validates it).
export async function call(mcp, args) {
  const t0 = Date.now();
  if (APPS > 1 && !args.app) args = { ...args, app: 'app 1' }; // the judged app, by its label
  try {
    const r = await mcp.call(args, { timeout: ANSWER_LIMIT_MS });
    return { ...r, ok: true, ms: Date.now() - t0, at: Date.now(), args };
  } catch (e) {
    const msg = String(e?.message ?? e);
    const lost = /timed out|timeout/i.test(msg) && !/structuredContent/.test(msg);
    return { ok: false, lost, invalid: !lost, error: msg, ms: Date.now() - t0, args };
  }
}

// Short text of an answer for failure reports.
export function brief(a) {
  if (!a) return 'none';
  if (!a.ok) return `${a.lost ? 'LOST' : 'FAILED'}: ${a.error.slice(0, 300)}`;
  const sc = a.sc ?? {};
  const o = {
    app: a.args?.app && a.args.app !== 'app 1' ? 'app 2' : undefined, // which app it was sent to
    answeredFor: sc.app,
    isError: a.isError || undefined,
    session: sc.session ? `${sc.session.id}/${sc.session.state}${sc.session.alreadyActive ? '/already' : ''}` +
      (sc.session.framesSeen !== undefined ? ` seen=${sc.session.framesSeen}` : '') : undefined,
    frames: sc.summary?.frames,
    listed: sc.frames ? `${sc.frames.length}${sc.frames.length ? ` [${sc.frames[0].seq}..${sc.frames[sc.frames.length - 1].seq}]` : ''}` : undefined,
    truncated: sc.truncated,
    undelivered: sc.undelivered,
    diagnosis: sc.diagnosis?.code,
    warnings: sc.warnings,
    ms: a.ms,
  };
  if (a.isError) o.text = a.text.slice(0, 160);
  return JSON.stringify(o);
}
