// Web mode's two delays between a frame and its Flutter.Frame event:
// web_ui's frame-timing recorder, which hands the timings over only from a
// frame drawn more than 100 ms after the last hand-over (no timer), and
// DWDS's injected client, which sends the page's events in batches about a
// second apart (docs/flutter-apis.md).
import assert from 'node:assert/strict';
import { Sim, Client, run, waitFor } from './lib.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function frameNumbers(c) {
  return c.events.filter((e) => e.event.extensionKind === 'Flutter.Frame')
    .map((e) => e.event.extensionData.number);
}

async function listen(sim) {
  const c = await Client.connect(sim.wsUri);
  await c.call('streamListen', { streamId: 'Extension' });
  const iso = (await c.call('getVM')).isolates[0].id;
  return { c, iso };
}

// Frames stop being drawn: the newest stats once two reads 150 ms apart agree.
async function settled(sim) {
  let a = await sim.stats();
  for (;;) {
    await sleep(150);
    const b = await sim.stats();
    if (b.framesDrawn === a.framesDrawn) return b;
    a = b;
  }
}

await run({
  async 'web: the first frame starts the recorder clock; a frame over 100 ms later hands both over'() {
    const sim = await Sim.start(['--mode', 'web', '--scenario', 'idle', '--seed', '2']);
    try {
      const { c, iso } = await listen(sim);
      await c.call('ext.ui.window.scheduleFrame', { isolateId: iso });
      await waitFor('the first frame', async () => (await sim.stats()).framesDrawn === 1);
      await sleep(300);
      let st = await sim.stats();
      assert.equal(st.webTimingsHeld, 1, 'the first timing waits in web_ui\'s list');
      assert.equal(st.webHandOvers, 0);
      assert.equal(st.recordsWritten, 0, 'the watcher has no timing either');
      assert.deepEqual(frameNumbers(c), [], 'no Flutter.Frame without a hand-over');
      await c.call('ext.ui.window.scheduleFrame', { isolateId: iso });
      await waitFor('both frames\' events', () => frameNumbers(c).length === 2);
      assert.deepEqual(frameNumbers(c), [1, 2], 'handed over together, in order');
      st = await sim.stats();
      assert.equal(st.webTimingsHeld, 0);
      assert.equal(st.webHandOvers, 1);
      assert.equal(st.recordsWritten, 2);
      c.close();
    } finally { await sim.stop(); }
  },

  async 'web: the last frames before the app goes idle wait for a scheduleFrame\'d frame'() {
    const sim = await Sim.start(['--mode', 'web', '--seed', '3']);
    try {
      const { c, iso } = await listen(sim);
      await waitFor('hand-overs while drawing', () => frameNumbers(c).length >= 20);
      // At 60 fps a hand-over comes every 7th frame, so up to 6 are held when
      // the app stops; stop again when it stopped right on a hand-over.
      let st;
      for (let i = 0; ; i++) {
        await sim.cmdOk('scenario idle');
        st = await settled(sim);
        if (st.webTimingsHeld > 0) break;
        assert.ok(i < 8, 'the app never stopped with timings held');
        await sim.cmdOk('scenario steady');
        await sleep(60 + 13 * i);
      }
      const last = st.lastFrameNumber;
      const held = st.webTimingsHeld;
      assert.ok(held <= 7, `at most the frames of ~100 ms are held (${held})`);
      await sleep(400);
      st = await sim.stats();
      assert.equal(st.webTimingsHeld, held, 'no timer hands them over');
      assert.equal(st.recordsWritten, last - held, 'the watcher lacks the same tail');
      const seen = frameNumbers(c);
      assert.equal(Math.max(...seen), last - held, 'the tail\'s Flutter.Frame events are missing');
      assert.deepEqual(seen, Array.from({ length: seen.length }, (_, k) => seen[0] + k),
        'every frame before the tail posted once, in order');
      // One more frame, more than 100 ms after the last hand-over: it hands
      // the whole list over, itself included.
      await c.call('ext.ui.window.scheduleFrame', { isolateId: iso });
      await waitFor('the tail\'s events', () => frameNumbers(c).includes(last + 1));
      assert.deepEqual(frameNumbers(c).slice(-(held + 1)),
        Array.from({ length: held + 1 }, (_, k) => last - held + 1 + k));
      st = await sim.stats();
      assert.equal(st.webTimingsHeld, 0);
      assert.equal(st.recordsWritten, last + 1);
      assert.equal(st.framesDrawn, last + 1, 'scheduleFrame drew exactly one frame');
      c.close();
    } finally { await sim.stop(); }
  },
});
