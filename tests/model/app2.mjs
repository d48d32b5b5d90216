// The model's second app (MODEL_APPS=2, issue 22): a steady telescope-sim
// beside the judged one, on the same server, driven at the same time as the
// judged app's steps by its own seeded steps — captures, and start → read →
// stop with frames listed (the read and the stop overlapping, or not) — and
// now and then killed and started again on a
// new URI. Its invariants:
//   1  every call about it is answered;
//   10 an answer about it never names the judged app, and its session ids
//      are never the judged app's;
//   11 its sessions hold its own frames only: what a read and the stop of
//      one session list is contiguous, after its app's last frame before
//      start and at most its last after stop;
// and the judged app's own invariants (model.mjs) keep holding while it
// runs, dies and comes back: an app dying never disturbs the other's
// sessions.
import { call, brief, rng, sleep } from './lib.mjs';
import { Violation } from './model.mjs';

const fail = (inv, msg) => { throw new Violation(inv, `app 2: ${msg}`); };

export class SecondApp {
  constructor(pair, counters, known) {
    this.pair = pair;
    this.counters = counters;
    this.known = known; // the judged app's session ids
    this.kills = 0;
    this.loop = null;
    this.log = [];
  }

  count(name, n = 1) { this.counters[name] = (this.counters[name] ?? 0) + n; }

  // Runs beside one sequence of the judged app; end() stops it and throws
  // the first violation it met.
  begin(seed) {
    this.r = rng(seed ^ 0x2a2a2a2a);
    this.stopping = false;
    this.error = null;
    this.log = [];
    this.loop = (async () => {
      try { while (!this.stopping) await this.step(); } catch (e) { this.error = e; }
    })();
  }

  async end() {
    this.stopping = true;
    await this.loop;
    this.loop = null;
    if (this.error) throw this.error;
  }

  answered(a, what) {
    this.log.push(`${what} → ${brief(a)}`);
    if (!a.ok) fail(a.lost ? 1 : 7, `${what}: ${a.error}`);
    if (a.sc?.app === 'app 1') fail(10, `${what} answered about the judged app: ${a.text.slice(0, 200)}`);
    const id = a.sc?.session?.id;
    if (id && this.known.has(id)) fail(10, `${what} named session ${id}, one of the judged app's`);
    return a;
  }

  async step() {
    const p = this.pair, s = p.simB;
    const kind = this.r.weighted([[4, 'capture'], [4, 'session'], [1, 'kill'], [2, 'idle']]);
    if (kind === 'idle') return sleep(this.r.int(50, 250));
    if (kind === 'kill') {
      await p.killSimB();
      this.count('app2 kills');
      await sleep(this.r.int(50, 300));
      await p.startSimB(9000 + ++this.kills); // a new URI: the server learns it as another app
      return undefined;
    }
    const app = s.wsUri;
    if (kind === 'capture') {
      const a = this.answered(await call(p.mcp, { action: 'capture', app, durationMs: this.r.pick([150, 300]) }), 'capture');
      if (!a.isError && s.alive && !a.sc.diagnosis && !(a.sc.summary?.frames > 0))
        fail(11, `a capture of a drawing app measured no frame: ${a.text.slice(0, 200)}`);
      this.count('app2 captures');
      return undefined;
    }
    const before = await s.stats();
    const st = this.answered(await call(p.mcp, { action: 'start', app }), 'start');
    if (st.isError) return undefined;
    await sleep(this.r.int(100, 400));
    // The read and the stop one after the other, or overlapping (read‖stop):
    // either way together they list the session's frames once each.
    const read = () => call(p.mcp, { action: 'read', app, detail: 'frames', limit: 1000 });
    const stop = () => call(p.mcp, { action: 'stop', app, detail: 'frames', limit: 1000 });
    let rd, sp;
    if (this.r.chance(0.4)) {
      [rd, sp] = await Promise.all([read(), stop()]);
      this.count('app2 read+stop');
    } else {
      rd = await read();
      await sleep(this.r.int(50, 200));
      sp = await stop();
    }
    this.answered(rd, 'read');
    this.answered(sp, 'stop');
    const after = await s.stats();
    // A session a failed stop left open was joined: it began before `before`.
    if (st.sc.session.alreadyActive || rd.isError || sp.isError || rd.sc.diagnosis ||
        sp.sc.diagnosis || sp.sc.truncated || rd.sc.truncated) return undefined;
    if (sp.sc.session.id !== st.sc.session.id)
      fail(11, `stop closed ${sp.sc.session.id}, start opened ${st.sc.session.id}`);
    const seqs = [...(rd.sc.frames ?? []), ...(sp.sc.frames ?? [])].map((f) => f.seq).sort((x, y) => x - y);
    for (let i = 1; i < seqs.length; i++)
      if (seqs[i] !== seqs[i - 1] + 1) fail(11, `session ${st.sc.session.id} listed seq ${seqs[i]} after ${seqs[i - 1]}`);
    if (seqs.length && (seqs[0] <= before.lastSeq || seqs.at(-1) > after.lastSeq))
      fail(11, `session ${st.sc.session.id} listed seqs ${seqs[0]}..${seqs.at(-1)}; its app drew ${before.lastSeq}..${after.lastSeq}`);
    this.count('app2 sessions');
    this.count('app2 frames', seqs.length);
    return undefined;
  }
}
