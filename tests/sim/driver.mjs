// ext.flutter.driver on telescope-sim --flutter-driver (issue 32, DRIVE.md §4):
// registered only when the app called enableFlutterDriverExtension(); the
// commands flutter_driver's handlers serve (scroll, tap,
// waitUntilNoTransientCallbacks, get_health) over the scrolllist feed, each
// reply {isError, response}, and one stderr line per call with its params.
import assert from 'node:assert/strict';
import { Sim, Client, run, waitFor } from './lib.mjs';

async function open(args) {
  const sim = await Sim.start(['--seed', '3', '--scenario', 'scrolllist', ...args]);
  const c = await Client.connect(sim.wsUri);
  const iso = (await c.call('getVM')).isolates[0].id;
  const driver = (p) => c.send('ext.flutter.driver', { isolateId: iso, ...p });
  return { sim, c, iso, driver, close: async () => { c.close(); await sim.stop(); } };
}

// The calls the sim logged, in order: each line's params as JSON.
function logged(sim) {
  return sim.stderr.split('\n').filter((l) => l.startsWith('telescope-sim: ext.flutter.driver '))
    .map((l) => JSON.parse(l.slice('telescope-sim: ext.flutter.driver '.length)));
}

const feedKey = { finderType: 'ByValueKey', keyValueString: 'feed', keyValueType: 'String' };

await run({
  async 'registered with --flutter-driver beside no watcher; absent without the flag'() {
    let t = await open(['--flutter-driver', '--no-watcher']);
    try {
      const rpcs = (await t.c.call('getIsolate', { isolateId: t.iso })).extensionRPCs;
      assert.ok(rpcs.includes('ext.flutter.driver'));
      assert.ok(!rpcs.includes('ext.telescope.frames'));
    } finally {
      await t.close();
    }
    t = await open([]);
    try {
      const rpcs = (await t.c.call('getIsolate', { isolateId: t.iso })).extensionRPCs;
      assert.ok(!rpcs.includes('ext.flutter.driver'));
      assert.equal((await t.driver({ command: 'get_health' })).error?.code, -32601);
    } finally {
      await t.close();
    }
  },

  async 'scroll answers when its gesture is over; waitUntilNoTransientCallbacks when the scroll settled'() {
    const t = await open(['--flutter-driver', '--no-watcher']);
    try {
      assert.deepEqual((await t.driver({ command: 'get_health' })).result, { isError: false, response: { status: 'ok' } });
      // The app's start draws 4 frames, then the feed rests until driven.
      await waitFor('the launch frames', async () => (await t.sim.stats()).feed.feedFrames === 4);
      // 400 ms at 60 Hz: 24 moves of -50 px, no slop added (handler_factory.dart _scroll).
      const scroll = { command: 'scroll', ...feedKey, dx: '0.0', dy: '-1200.0', duration: '400000', frequency: '60' };
      const r = await t.driver(scroll);
      assert.deepEqual(r.result, { isError: false, response: {} });
      let feed = (await t.sim.stats()).feed;
      assert.equal(feed.state, 'done', 'answered after the pointer went up');
      assert.ok(feed.offset >= 1200 - 18 - 1, `offset ${feed.offset}`);
      const w = await t.driver({ command: 'waitUntilNoTransientCallbacks' });
      assert.deepEqual(w.result, { isError: false, response: {} });
      feed = (await t.sim.stats()).feed;
      assert.equal(feed.animating, false);
      assert.ok(feed.offset > 1200, `the release flung on: ${feed.offset}`);
      assert.ok(feed.heavyBuilt >= 2, `heavy tiles built: ${feed.heavyBuilt}`);
      // The first tile on screen now, tapped by its text.
      const tap = { command: 'tap', finderType: 'ByText', text: `Item ${feed.firstVisible + 1}` };
      assert.deepEqual((await t.driver(tap)).result, { isError: false, response: {} });
      assert.deepEqual((await t.driver({ command: 'tap', finderType: 'ByType', type: 'ListView' })).result,
        { isError: false, response: {} });
      await waitFor('the log lines', () => logged(t.sim).length === 5);
      assert.deepEqual(logged(t.sim), [
        { command: 'get_health' }, scroll, { command: 'waitUntilNoTransientCallbacks' }, tap,
        { command: 'tap', finderType: 'ByType', type: 'ListView' },
      ]);
    } finally {
      await t.close();
    }
  },

  async 'errors: a finder that matches nothing or several, PageBack with no back button, unknown commands'() {
    const t = await open(['--flutter-driver']);
    try {
      const bad = [
        [{ command: 'tap', finderType: 'ByValueKey', keyValueString: 'nope', keyValueType: 'String' }, 'tap', 'no widget matches "key:nope"'],
        [{ command: 'tap', finderType: 'ByType', type: 'Text' }, 'tap', '10 widgets match "type:Text"'],
        [{ command: 'tap', finderType: 'PageBack' }, 'tap', 'no back button'],
        [{ command: 'scroll', ...feedKey, dx: '0', dy: 'x', duration: '1000', frequency: '60' }, 'scroll', 'FormatException'],
        [{ command: 'tap', finderType: 'BySemanticsLabel', label: 'x' }, 'tap', 'Unsupported search specification type'],
        [{ command: 'screenshot' }, 'screenshot', 'Unsupported command kind screenshot'],
      ];
      for (const [params, command, text] of bad) {
        const r = (await t.driver(params)).result;
        assert.equal(r.isError, true, JSON.stringify(params));
        assert.ok(r.response.startsWith(`Uncaught extension error while executing ${command}: `), r.response);
        assert.ok(r.response.includes(text), r.response);
      }
      // The watcher's drive and the driver share the one pointer.
      const steps = JSON.stringify([{ scroll: { dy: -400, ms: 3000 } }]);
      const d = await t.c.call('ext.telescope.frames', { isolateId: t.iso, action: 'drive', steps });
      assert.equal(d.drive.state, 'running');
      const r = (await t.driver({ command: 'tap', ...feedKey })).result;
      assert.equal(r.isError, true);
      assert.match(r.response, /a drive is running \(d1\)/);
    } finally {
      await t.close();
    }
  },
});
