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
  const push = c.ws.onmessage;
  // Each event's arrival time, to see DWDS's batches.
  c.ws.onmessage = (ev) => {
    const n = c.events.length;
    push(ev);
    if (c.events.length > n) c.events.at(-1).at = Date.now();
  };
  await c.call('streamListen', { streamId: 'Extension' });
  const iso = (await c.call('getVM')).isolates[0].id;
  return { c, iso };
}

// Arrivals closer than gapMs together: one batch (each event is a WebSocket
// message of its own).
function bursts(events, gapMs = 100) {
  const out = [];
  for (const e of events) {
    if (!out.length || e.at - out.at(-1).at(-1).at > gapMs) out.push([]);
    out.at(-1).push(e);
  }
  return out;
}

const frames = (c) => c.events.filter((e) => e.event.extensionKind === 'Flutter.Frame');

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
    // --dwds-batch-ms 0: events leave at once, so only the engine's rule delays them.
    const sim = await Sim.start(['--mode', 'web', '--dwds-batch-ms', '0', '--scenario', 'idle', '--seed', '2']);
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

  async 'web: a hot restart drops what web_ui held, and the next frame starts the clock again'() {
    const sim = await Sim.start(['--mode', 'web', '--dwds-batch-ms', '0', '--scenario', 'idle', '--seed', '6']);
    try {
      let { c, iso } = await listen(sim);
      await c.call('ext.ui.window.scheduleFrame', { isolateId: iso });
      await waitFor('the first frame', async () => (await sim.stats()).webTimingsHeld === 1);
      await sim.cmdOk('restart');
      let st = await sim.stats();
      assert.equal(st.webTimingsHeld, 0, 'web_ui\'s statics start again');
      assert.equal(st.timingsPending, 0);
      iso = (await c.call('getVM')).isolates[0].id;
      await sleep(200);
      await c.call('ext.ui.window.scheduleFrame', { isolateId: iso });
      await waitFor('a frame after the restart', async () => (await sim.stats()).framesDrawn === 2);
      await sleep(300);
      assert.equal((await sim.stats()).webTimingsHeld, 1, 'the first frame after it starts the clock');
      await c.call('ext.ui.window.scheduleFrame', { isolateId: iso });
      await waitFor('events', () => frameNumbers(c).length === 2);
      assert.deepEqual(frameNumbers(c), [2, 3], 'frame 1 is gone');
      c.close();
    } finally { await sim.stop(); }
  },

  async 'web: the last frames before the app goes idle wait for a scheduleFrame\'d frame'() {
    const sim = await Sim.start(['--mode', 'web', '--dwds-batch-ms', '0', '--seed', '3']);
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

  async 'web: DWDS sends the page\'s events in batches about a second apart, stamped when sent'() {
    const sim = await Sim.start(['--mode', 'web', '--seed', '4']);
    try {
      const { c, iso } = await listen(sim);
      await waitFor('a first batch', () => frames(c).length > 0, 3000);
      // Another Extension event the page posts goes the same way.
      await c.call('ext.flutter.profileWidgetBuilds', { isolateId: iso, enabled: 'true' });
      // The fifth batch's start tells the fourth is complete.
      await waitFor('four more batches', () => bursts(frames(c)).length >= 5, 8000);
      const b = bursts(frames(c)).slice(0, 4);
      for (let i = 1; i < b.length; i++) {
        const gap = b[i][0].at - b[i - 1][0].at;
        assert.ok(gap >= 900 && gap <= 1600, `batch ${i} came ${gap} ms after the one before`);
        // A loaded machine draws fewer than the 60 of a second.
        assert.ok(b[i].length >= 30, `about a second of frames in batch ${i}: ${b[i].length}`);
        // Stamped as DWDS parses the batch, not when each frame was drawn:
        // the frames span most of a second, their stamps a moment.
        const stamps = b[i].map((e) => e.event.timestamp);
        const starts = b[i].map((e) => e.event.extensionData.startTime);
        assert.ok(Math.max(...starts) - Math.min(...starts) >= 500000, 'a batch spans most of a second');
        assert.ok(Math.max(...stamps) - Math.min(...stamps) <= 200, 'DWDS stamps a batch when it parses it');
      }
      const changed = c.events.find((e) => e.event.extensionKind === 'Flutter.ServiceExtensionStateChanged');
      assert.ok(changed, 'the state change arrived');
      assert.ok(b.some((x) => Math.abs(x[0].at - changed.at) <= 100),
        'it arrived with a batch of frames, not on its own');
      const st = await sim.stats();
      assert.equal(st.dwds.batchMs, 1000);
      assert.ok(st.dwds.batches >= 4 && st.dwds.sent >= frames(c).length, JSON.stringify(st.dwds));
      c.close();
    } finally { await sim.stop(); }
  },

  async 'web, --dwds-batch-ms 0: events leave at each hand-over (about every 100 ms)'() {
    const sim = await Sim.start(['--mode', 'web', '--dwds-batch-ms', '0', '--seed', '4']);
    try {
      const { c } = await listen(sim);
      await waitFor('a second of frames', () => frames(c).length >= 60, 4000);
      const b = bursts(frames(c), 40);
      assert.ok(b.length >= 6, `${b.length} bursts for ${frames(c).length} frames`);
      assert.ok(b.every((x) => x.length <= 8), 'no burst bigger than ~100 ms of frames');
      assert.equal((await sim.stats()).dwds.batchMs, 0);
      c.close();
    } finally { await sim.stop(); }
  },

  async 'web before flutter#171592 (--web-frame-number 1): Flutter.Frame says 1, Flutter.RebuiltWidgets -1'() {
    // web_ui's FrameTiming defaults frameNumber to 1; its FrameData.webOnly()
    // answers frameNumber -1, which the inspector's _onFrameStart reads.
    for (const [args, old] of [[['--web-frame-number', '1'], true], [[], false]]) {
      const sim = await Sim.start(['--mode', 'web', '--dwds-batch-ms', '0', '--seed', '6', ...args]);
      try {
        const { c, iso } = await listen(sim);
        await c.call('ext.flutter.inspector.trackRebuildDirtyWidgets', { isolateId: iso, enabled: 'true' });
        const rb = () => c.events.filter((e) => e.event.extensionKind === 'Flutter.RebuiltWidgets').map((e) => e.event.extensionData);
        await waitFor('rebuild events and frames', () => rb().length >= 5 && frames(c).length >= 5, 8000, 20);
        const numbers = frameNumbers(c);
        if (old) {
          assert.ok(numbers.every((n) => n === 1), `frames ${numbers}`);
          assert.ok(rb().every((e) => e.frameNumber === -1), `rebuilds ${rb().map((e) => e.frameNumber)}`);
        } else {
          assert.ok(rb().every((e) => e.frameNumber > 0), `rebuilds ${rb().map((e) => e.frameNumber)}`);
          assert.ok(numbers.some((n) => n > 1));
        }
        c.close();
      } finally { await sim.stop(); }
    }
  },

  async 'web: an idle app\'s tail reaches a client through both delays after one scheduleFrame'() {
    const sim = await Sim.start(['--mode', 'web', '--seed', '5']);
    try {
      const { c, iso } = await listen(sim);
      await waitFor('events', () => frames(c).length > 0, 3000);
      let st;
      for (let i = 0; ; i++) {
        await sim.cmdOk('scenario idle');
        st = await settled(sim);
        if (st.webTimingsHeld > 0) break;
        assert.ok(i < 8, 'the app never stopped with timings held');
        await sim.cmdOk('scenario steady');
        await sleep(60 + 13 * i);
      }
      const last = st.lastFrameNumber, held = st.webTimingsHeld;
      await waitFor('DWDS to send what it had', async () => (await sim.stats()).dwds.held === 0, 3000);
      await sleep(200);
      assert.equal(Math.max(...frameNumbers(c)), last - held);
      const t0 = Date.now();
      await c.call('ext.ui.window.scheduleFrame', { isolateId: iso });
      await waitFor('the tail', () => frameNumbers(c).includes(last + 1), 3000);
      assert.ok(Date.now() - t0 <= 1600, `the tail came ${Date.now() - t0} ms after scheduleFrame`);
      const tail = frames(c).filter((e) => e.event.extensionData.number > last - held);
      assert.equal(tail.length, held + 1);
      assert.equal(bursts(tail).length, 1, 'in one batch');
      c.close();
    } finally { await sim.stop(); }
  },
});
