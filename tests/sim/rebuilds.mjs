// ext.flutter.inspector.trackRebuildDirtyWidgets and widgetLocationIdMap
// through the real wire: debug builds only, one Flutter.RebuiltWidgets event
// per frame with the framework's two location encodings, joined to
// Flutter.Frame by frameNumber, SlowWidget only in janky frames, restart.
import assert from 'node:assert/strict';
import { Sim, Client, run, waitFor } from './lib.mjs';

const TRACK = 'ext.flutter.inspector.trackRebuildDirtyWidgets';
const MAP = 'ext.flutter.inspector.widgetLocationIdMap';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function isolateOf(c) { return (await c.call('getVM')).isolates[0].id; }
const rebuilt = (c) => c.events.filter((e) => e.event.extensionKind === 'Flutter.RebuiltWidgets').map((e) => e.event.extensionData);
const frames = (c) => c.events.filter((e) => e.event.extensionKind === 'Flutter.Frame').map((e) => e.event.extensionData);

// {id: {file, line, column, name}} from the newer encoding.
function locationsOf(map) {
  const out = {};
  for (const [file, v] of Object.entries(map)) {
    assert.equal(v.ids.length, v.lines.length);
    assert.equal(v.ids.length, v.columns.length);
    assert.equal(v.ids.length, v.names.length);
    v.ids.forEach((id, i) => { out[id] = { file, line: v.lines[i], column: v.columns[i], name: v.names[i] }; });
  }
  return out;
}

await run({
  async 'debug only: the inspector extensions are listed in debug, not in profile'() {
    for (const [args, present] of [[[], true], [['--build-mode', 'profile'], false]]) {
      const sim = await Sim.start(args);
      try {
        const c = await Client.connect(sim.wsUri);
        const iso = await c.call('getIsolate', { isolateId: await isolateOf(c) });
        assert.equal(iso.extensionRPCs.includes(TRACK), present, args.join(' '));
        assert.equal(iso.extensionRPCs.includes(MAP), present, args.join(' '));
        if (!present) {
          const r = await c.send(TRACK, { isolateId: iso.id, enabled: 'true' });
          assert.equal(r.error.code, -32601);
        }
        c.close();
      } finally { await sim.stop(); }
    }
  },

  async 'Flutter.RebuiltWidgets per frame: counts by location id, locations once, SlowWidget only in janky frames (and the forced one), joined by frameNumber'() {
    const sim = await Sim.start(['--seed', '7', '--scenario', 'janky']);
    try {
      const c = await Client.connect(sim.wsUri);
      const iso = await isolateOf(c);
      await c.call('streamListen', { streamId: 'Extension' });
      assert.equal(rebuilt(c).length, 0, 'nothing while tracking is off');
      const on = await c.call(TRACK, { isolateId: iso, enabled: 'true' });
      assert.equal(on.enabled, 'true');
      await waitFor('a janky frame with its rebuild event', () => {
        const janky = frames(c).filter((f) => f.build > 16667).map((f) => f.number);
        return rebuilt(c).some((e) => janky.includes(e.frameNumber));
      }, 8000, 50);
      const evs = rebuilt(c);
      // The first event announces the locations it uses, in both encodings.
      assert.ok(evs[0].newLocations && evs[0].locations);
      const first = locationsOf(evs[0].locations);
      const byName = Object.fromEntries(Object.entries(first).map(([id, l]) => [l.name, Number(id)]));
      assert.ok(byName.FeedList !== undefined && byName.ProductCard !== undefined && byName.Text !== undefined);
      assert.match(first[byName.ProductCard].file, /^file:\/\/\/.*\/feed_list\.dart$/);
      const flat = evs[0].newLocations[first[byName.ProductCard].file];
      const at = flat.indexOf(byName.ProductCard);
      assert.deepEqual(flat.slice(at, at + 3), [byName.ProductCard, first[byName.ProductCard].line, first[byName.ProductCard].column]);
      // Later events carry counts only, until a location is new.
      const slowEv = evs.find((e) => e.locations && Object.values(locationsOf(e.locations)).some((l) => l.name === 'SlowWidget'));
      assert.ok(slowEv, 'SlowWidget announced when it first rebuilt');
      const slowId = Number(Object.entries(locationsOf(slowEv.locations)).find(([, l]) => l.name === 'SlowWidget')[0]);
      for (const e of evs.slice(1)) if (e !== slowEv) assert.equal(e.locations, undefined);
      const fr = new Map(frames(c).map((f) => [f.number, f]));
      let checked = 0;
      let lastStart = -1;
      for (const e of evs) {
        // events: [id, count, id, count, ...]
        assert.equal(e.events.length % 2, 0);
        const counts = new Map();
        for (let i = 0; i < e.events.length; i += 2) counts.set(e.events[i], e.events[i + 1]);
        assert.equal(counts.get(byName.FeedList), 1);
        assert.ok(counts.get(byName.ProductCard) >= 3 && counts.get(byName.ProductCard) === counts.get(byName.Text));
        // startTime is the scheduler's epoch time: increasing, 0 at the first frame.
        assert.ok(e.startTime > lastStart);
        lastStart = e.startTime;
        const f = fr.get(e.frameNumber);
        if (!f) continue; // its Flutter.Frame is still batched
        checked++;
        // forceRebuild's frame, the first after the switch-on, rebuilds
        // every widget; after it, SlowWidget only runs in janky frames.
        if (e === evs[0]) assert.ok(counts.has(slowId), 'every widget in the forced frame');
        else assert.equal(counts.has(slowId), f.build > 16667, `frame ${e.frameNumber}: SlowWidget rebuilt iff janky`);
      }
      assert.equal(evs[0].startTime, 0);
      assert.ok(checked >= 10, `${checked} events joined to frames`);
      // The location table: every location given an id, one encoding, under
      // "result" (_registerSignalServiceExtension).
      const map = await c.call(MAP, { isolateId: iso });
      assert.equal(map.type, '_extensionType');
      assert.equal(map.method, MAP);
      assert.deepEqual(Object.keys(map).sort(), ['method', 'result', 'type']);
      const all = locationsOf(map.result);
      assert.deepEqual(Object.keys(all).map(Number).sort((a, b) => a - b), [byName.FeedList, byName.ProductCard, byName.Text, slowId].sort((a, b) => a - b));
      // Off: no more events.
      await c.call(TRACK, { isolateId: iso, enabled: 'false' });
      const n = rebuilt(c).length;
      await sleep(300);
      assert.equal(rebuilt(c).length, n);
      // A hot restart resets the tracker, the switch and the ids.
      assert.match(await sim.cmd('restart'), /^ok restarted/);
      const iso2 = await isolateOf(c);
      assert.equal((await c.call(TRACK, { isolateId: iso2 })).enabled, 'false');
      const map2 = await c.call(MAP, { isolateId: iso2 });
      assert.deepEqual(map2.result, {});
      c.close();
    } finally { await sim.stop(); }
  },

  async 'locations once per isolate: switching tracking off and on, or a second client, gets bare ids; a hot restart announces again'() {
    // _ElementLocationStatsTracker.add puts a location in newLocations only
    // when its _stats slot is empty; resetCounts (called by the switch's
    // setter and by performReassemble) clears the counts, never _stats.
    const sim = await Sim.start(['--seed', '3', '--mode', 'vm']);
    try {
      const c = await Client.connect(sim.wsUri);
      const iso = await isolateOf(c);
      await c.call('streamListen', { streamId: 'Extension' });
      await c.call(TRACK, { isolateId: iso, enabled: 'true' });
      await waitFor('events with locations', () => rebuilt(c).length >= 3, 8000, 20);
      assert.ok(rebuilt(c)[0].locations, 'the first event of the run announces');
      await c.call(TRACK, { isolateId: iso, enabled: 'false' });
      assert.match(await sim.cmd('reload'), /^ok/);
      const c2 = await Client.connect(sim.wsUri);
      await c2.call('streamListen', { streamId: 'Extension' });
      // (DDS would replay the stream's history: --mode vm has none.)
      const replayed = rebuilt(c2).length;
      await c2.call(TRACK, { isolateId: iso, enabled: 'true' });
      await waitFor('events after the second switch-on', () => rebuilt(c2).length >= replayed + 3, 8000, 20);
      for (const e of rebuilt(c2).slice(replayed)) {
        assert.equal(e.locations, undefined, 'no location announced twice in one isolate');
        assert.equal(e.newLocations, undefined);
      }
      // The table still names them all.
      assert.ok(Object.keys((await c2.call(MAP, { isolateId: iso })).result).length > 0);
      assert.match(await sim.cmd('restart'), /^ok restarted/);
      const iso2 = await isolateOf(c2);
      const before = rebuilt(c2).length;
      await c2.call(TRACK, { isolateId: iso2, enabled: 'true' });
      await waitFor('the new isolate\'s first event', () => rebuilt(c2).length > before, 8000, 20);
      assert.ok(rebuilt(c2)[before].locations, 'a new isolate announces again');
      c.close();
      c2.close();
    } finally { await sim.stop(); }
  },

  async 'switching tracking on forces a rebuild: an idle app draws one frame and posts its event'() {
    const sim = await Sim.start(['--scenario', 'idle']);
    try {
      const c = await Client.connect(sim.wsUri);
      const iso = await isolateOf(c);
      await c.call('streamListen', { streamId: 'Extension' });
      await sleep(200);
      const drawn = (await sim.stats()).framesDrawn;
      await c.call(TRACK, { isolateId: iso, enabled: 'true' });
      await waitFor('the forced frame', () => rebuilt(c).length === 1, 3000);
      assert.equal((await sim.stats()).framesDrawn, drawn + 1);
      await sleep(200);
      assert.equal(rebuilt(c).length, 1, 'idle again: no more frames');
      c.close();
    } finally { await sim.stop(); }
  },
});
