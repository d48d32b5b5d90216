// The watcher's drive action on telescope-sim --scenario scrolllist (issue 32,
// DRIVE.md §3, §5): runs and steps, interaction ids on the frames, jank from
// the tiles built as they scroll into view, bad finders with candidates, bad
// steps, a second drive refused, stop, the 10 s cut, an idle feed.
import assert from 'node:assert/strict';
import { Sim, Client, run, waitFor } from './lib.mjs';

async function open(args = []) {
  const sim = await Sim.start(['--seed', '7', '--scenario', 'scrolllist', ...args]);
  // The app's start draws 4 frames, then the feed rests until driven.
  await waitFor('the launch frames', async () => (await sim.stats()).feed.feedFrames === 4);
  const c = await Client.connect(sim.wsUri);
  const iso = (await c.call('getVM')).isolates[0].id;
  const frames = (p) => c.send('ext.telescope.frames', { isolateId: iso, ...p });
  const call = async (p) => {
    const r = await frames(p);
    assert.ok(r.result, `${p.action}: ${JSON.stringify(r.error)}`);
    return r.result;
  };
  const drive = (steps, repeat) =>
    frames({ action: 'drive', steps: JSON.stringify(steps), ...(repeat ? { repeat: String(repeat) } : {}) });
  return { sim, c, frames, call, drive, close: async () => { c.close(); await sim.stop(); } };
}

// Polls status until the drive has ended; returns that reply's drive object
// (the one time it is carried after the end).
async function ended(t, timeoutMs = 30000) {
  let last;
  await waitFor('the drive to end', async () => {
    const r = await t.call({ action: 'status' });
    if (r.drive) last = r.drive;
    return r.drive && r.drive.state !== 'running';
  }, timeoutMs, 50);
  return last;
}

// Frames per interaction id: count, janky (build over a 60 Hz budget), with a HeavyTile block.
function byInteraction(records) {
  const by = {};
  for (const r of records) {
    const k = r.interactionId ?? '-';
    by[k] ??= { frames: 0, jank: 0, heavy: 0, linkedBy: new Set() };
    by[k].frames++;
    if (r.buildUs > 16667) by[k].jank++;
    if (r.blocks.HeavyTile) by[k].heavy++;
    if (r.linkedBy) by[k].linkedBy.add(r.linkedBy);
  }
  return by;
}

async function readAll(t) {
  const out = [];
  let since = 0;
  for (;;) {
    const r = await t.call({ action: 'read', since: String(since), limit: '500' });
    out.push(...r.records);
    if (!r.more) return out;
    since = r.records.at(-1).seq;
  }
}

await run({
  async 'a fling played twice: each run its own interaction, heavy tiles jank, the same each run'() {
    const t = await open();
    try {
      await t.call({ action: 'start', interactionId: 'before', linkedBy: 'agent' });
      const r = await t.drive([{ fling: { dy: -3000, in: 'key:feed' } }, { wait: 100 }], 2);
      assert.ok(r.result, JSON.stringify(r.error));
      assert.deepEqual(r.result.drive, { id: 'd1', state: 'running', run: 1, runs: 2, step: 1, of: 2 });
      assert.deepEqual(r.result.interaction, { interactionId: 'd1/r1/s1', linkedBy: 'drive' });
      const end = await ended(t);
      assert.deepEqual(end, { id: 'd1', state: 'done', run: 2, runs: 2, step: 2, of: 2 });
      // Carried once after the end, then gone; the interaction from before is back.
      const after = await t.call({ action: 'status' });
      assert.equal(after.drive, undefined);
      assert.deepEqual(after.interaction, { interactionId: 'before', linkedBy: 'agent' });
      await waitFor('the last frames\' records', async () => (await t.sim.stats()).timingsPending === 0, 5000);
      const by = byInteraction(await readAll(t));
      const r1 = by['d1/r1/s1'], r2 = by['d1/r2/s1'];
      assert.ok(r1 && r2, `interactions: ${Object.keys(by)}`);
      assert.deepEqual([...r1.linkedBy], ['drive']);
      // A 3000 px drag and its ballistic scroll: dozens of frames, a HeavyTile
      // every 7 tiles of 80 px, each HeavyTile frame over budget.
      assert.ok(r1.frames >= 40, `run 1: ${r1.frames} frames`);
      assert.ok(r1.heavy >= 5 && r1.jank >= r1.heavy, `run 1: ${JSON.stringify(r1)}`);
      // Only the frames that bring a HeavyTile on screen build one.
      assert.ok(r1.heavy * 4 < r1.frames, `run 1: ${r1.heavy} of ${r1.frames} frames build a HeavyTile`);
      assert.ok(r1.jank - r1.heavy <= 2, `run 1: ${r1.jank - r1.heavy} janky frames without a HeavyTile`);
      assert.ok(Math.abs(r1.heavy - r2.heavy) <= 1, `runs differ: ${r1.heavy} vs ${r2.heavy} heavy frames`);
      // The wait steps drew nothing: the feed is idle when not scrolling.
      assert.equal(by['d1/r1/s2'], undefined);
      const feed = (await t.sim.stats()).feed;
      assert.equal(feed.animating, false, 'settled');
      assert.ok(feed.offset > 2 * 3000, `offset ${feed.offset}: the drag plus the fling's coast`);
    } finally {
      await t.close();
    }
  },

  async 'idle when not driven: a wait step draws no frame, a probe draws one'() {
    const t = await open();
    try {
      await t.call({ action: 'start' });
      const before = (await t.sim.stats()).framesDrawn;
      assert.ok((await t.drive([{ wait: 300 }])).result);
      assert.equal((await ended(t)).state, 'done');
      assert.equal((await t.sim.stats()).framesDrawn, before, 'no frame while waiting');
      await t.call({ action: 'probe' });
      await waitFor('the probe\'s frame', async () => (await t.sim.stats()).framesDrawn === before + 1);
    } finally {
      await t.close();
    }
  },

  async 'a finder that matches nothing or several widgets fails with candidates'() {
    const t = await open();
    try {
      let r = (await t.drive([{ tap: 'key:nope' }])).result;
      assert.equal(r.drive.state, 'failed');
      assert.equal(r.drive.error, 'run 1 step 1 (tap): no widget matches "key:nope"');
      // Keys first, then texts, at most 5.
      assert.deepEqual(r.drive.candidates, ['key:feed', 'text:Item 0', 'text:Item 1', 'text:Item 2', 'text:Item 3']);
      assert.equal((await t.call({ action: 'status' })).drive, undefined, 'reported once: in its own reply');
      r = (await t.drive([{ scroll: { dy: -100, in: 'type:Text' } }])).result;
      assert.equal(r.drive.id, 'd2');
      assert.equal(r.drive.error, 'run 1 step 1 (scroll): 10 widgets match "type:Text"');
      // Tiles 0-9 are on screen: one HeavyTile (6), "Item 6" among them.
      r = (await t.drive([{ tap: 'type:HeavyTile' }, { tap: 'text:Item 6' }, { back: true }])).result;
      assert.equal(r.drive.state, 'running');
      assert.equal((await ended(t)).state, 'done');
      // A later step's finder is looked up when that step starts.
      r = (await t.drive([{ scroll: { dy: -2000, ms: 200 } }, { tap: 'text:Item 2' }])).result;
      const end = await ended(t);
      assert.equal(end.state, 'failed');
      assert.equal(end.step, 2);
      assert.match(end.error, /^run 1 step 2 \(tap\): no widget matches "text:Item 2"$/);
      assert.ok(end.candidates.includes('key:feed') && !end.candidates.includes('text:Item 2'));
    } finally {
      await t.close();
    }
  },

  async 'bad steps or repeat: -32602 naming the step and field, nothing starts'() {
    const t = await open();
    try {
      const cases = [
        [[{ scroll: { dy: -100, speed: 2 } }], 'steps[0].scroll: unknown key "speed"'],
        [[{ wait: 10 }, { fling: { dy: -100, velocity: 5 } }], 'steps[1].fling.velocity must be a number 100-20000'],
        [[{ tap: 'feed' }], 'steps[0].tap must be a finder'],
        [[{ fling: { velocity: 3000 } }], 'steps[0].fling: empty drag'],
        [[{ swipe: {} }], 'steps[0]: unknown key "swipe"'],
      ];
      for (const [steps, detail] of cases) {
        const r = await t.drive(steps);
        assert.equal(r.error?.code, -32602, JSON.stringify(steps));
        assert.ok(r.error.data.details.startsWith(detail), r.error.data.details);
      }
      for (const repeat of ['0', '11', 'x', '2.5']) {
        const r = await t.drive([{ wait: 1 }], repeat);
        assert.equal(r.error?.code, -32602, repeat);
        assert.match(r.error.data.details, /^repeat must be a decimal 1-10/);
      }
      let r = await t.frames({ action: 'drive', steps: '[{"wait":1}' });
      assert.equal(r.error?.code, -32602);
      r = await t.frames({ action: 'drive' });
      assert.match(r.error.data.details, /^steps must be/);
      // Nothing started: the next drive is d1.
      r = await t.drive([{ wait: 1 }]);
      assert.equal(r.result.drive.id, 'd1');
    } finally {
      await t.close();
    }
  },

  async 'a second drive is refused while one runs; stop cancels it'() {
    const t = await open();
    try {
      await t.call({ action: 'start' });
      let r = await t.drive([{ scroll: { dy: -600, ms: 8000 } }]);
      assert.equal(r.result.drive.state, 'running');
      r = await t.drive([{ wait: 1 }]);
      assert.equal(r.error?.code, -32000);
      assert.equal(r.error.data.details, 'a drive is running (d1)');
      // Any reply carries it while it runs.
      assert.equal((await t.call({ action: 'read', since: '0', limit: '1' })).drive.state, 'running');
      r = (await t.call({ action: 'stop' }));
      assert.deepEqual(r.drive, { id: 'd1', state: 'failed', run: 1, runs: 1, step: 1, of: 1, error: 'cancelled by stop' });
      assert.equal(r.interaction, null);
      assert.equal((await t.call({ action: 'status' })).drive, undefined);
      const framesAfter = (await t.sim.stats()).feed.feedFrames;
      r = await t.drive([{ wait: 200 }]);
      assert.equal(r.result.drive.id, 'd2');
      await ended(t);
      assert.equal((await t.sim.stats()).feed.feedFrames, framesAfter, 'the cancelled scroll drew no more');
    } finally {
      await t.close();
    }
  },

  async 'a step not finished in 10 s is cut and the drive goes on'() {
    const t = await open();
    try {
      await t.call({ action: 'start' });
      // Paused, the isolate draws no frame: the scroll cannot end.
      assert.equal((await t.drive([{ scroll: { dy: -500, ms: 500 } }, { wait: 0 }])).result.drive.state, 'running');
      await t.sim.cmdOk('pause');
      await waitFor('the cut', async () => (await t.sim.stats()).feed.cuts === 1, 20000, 100);
      await t.sim.cmdOk('resume');
      const end = await ended(t);
      assert.deepEqual(end, { id: 'd1', state: 'done', run: 1, runs: 1, step: 2, of: 2, cut: ['1/1'] });
    } finally {
      await t.close();
    }
  },

  async 'another scenario has no feed: every finder fails, no candidates'() {
    const t = await open();
    try {
      await t.sim.cmdOk('scenario steady');
      const r = (await t.drive([{ fling: { dy: -1000 } }])).result;
      assert.equal(r.drive.error, 'run 1 step 1 (fling): no Scrollable on screen');
      assert.deepEqual(r.drive.candidates, []);
      // A wait ends there too, and a back (a maybePop of the root route) after one frame.
      assert.equal((await t.drive([{ wait: 50 }, { back: true }], 2)).result.drive.state, 'running');
      assert.deepEqual(await ended(t), { id: 'd2', state: 'done', run: 2, runs: 2, step: 2, of: 2 });
      await t.sim.cmdOk('scenario idle');
      const before = (await t.sim.stats()).framesDrawn;
      assert.equal((await t.drive([{ back: true }])).result.drive.state, 'running');
      assert.deepEqual(await ended(t, 5000), { id: 'd3', state: 'done', run: 1, runs: 1, step: 1, of: 1 });
      assert.equal((await t.sim.stats()).framesDrawn, before + 1, 'idle: the back drew its one frame');
    } finally {
      await t.close();
    }
  },
});
