// telescope-sim --replay through the real wire, against the recording itself
// (tests/recordings/ios-metal-3.7/trace.json, read here independently of the
// sim): nothing plays before a measurement starts; then every recorded frame
// arrives as a watcher record with its own number and timings, its blocks
// measured from the UI thread's slices; the VM timeline serves the
// recording's events on its threads, on the records' clock; without a
// watcher, touching the timeline flags starts it and Flutter.Frame carries
// the frames. A recording with DevTools' rebuildCountModel
// (android-world-clock-3.4) posts its counts as Flutter.RebuiltWidgets
// after their frame while rebuild tracking is on. A file that is not a
// recording stops the sim with exit 2.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Sim, Client, run, waitFor, SIM } from './lib.mjs';

const FILE = join(dirname(fileURLToPath(import.meta.url)), '../recordings/ios-metal-3.7/trace.json');
const rec = JSON.parse(readFileSync(FILE, 'utf8'));
const frames = rec.performance.flutterFrames;
const UI = 22531, RASTER = 23811; // io.flutter.1.ui / .raster in this recording

// BUILD's inclusive time in frame f: every BUILD slice on the UI thread
// inside the frame's Animator::BeginFrame envelope (a LayoutBuilder builds
// inside LAYOUT, so a frame can hold more than one).
function buildMicros(f) {
  const ui = rec.traceEvents.filter((e) => e.tid === UI && (e.ph === 'B' || e.ph === 'E')).sort((a, b) => a.ts - b.ts);
  const env = ui.find((e) => e.ph === 'B' && e.name === 'Animator::BeginFrame' && Number(e.args?.frame_number) === f.number);
  const end = ui.find((e) => e.ph === 'E' && e.name === 'Animator::BeginFrame' && e.ts > env.ts).ts;
  let total = 0;
  for (const b of ui.filter((e) => e.ph === 'B' && e.name === 'BUILD' && e.ts >= env.ts && e.ts <= end))
    total += ui.find((e) => e.ph === 'E' && e.name === 'BUILD' && e.ts > b.ts).ts - b.ts;
  return total;
}

async function isolateOf(c) { return (await c.call('getVM')).isolates[0].id; }
const spanMs = () => {
  const ts = rec.traceEvents.filter((e) => typeof e.ts === 'number').map((e) => e.ts);
  return (Math.max(...ts) - Math.min(...ts)) / 1000;
};

await run({
  async 'frames, blocks and the timeline of the recording, from the start of a measurement'() {
    const sim = await Sim.start(['--replay', FILE]);
    try {
      const c = await Client.connect(sim.wsUri);
      const iso = await isolateOf(c);
      await new Promise((r) => setTimeout(r, 300));
      const before = await sim.stats();
      assert.equal(before.framesDrawn, 0, 'nothing plays before a measurement');
      assert.equal(before.replay.started, false);
      await c.call('ext.telescope.frames', { isolateId: iso, action: 'start' });
      const got = await waitFor('every recorded frame', async () => {
        const r = await c.call('ext.telescope.frames', { isolateId: iso, action: 'read', since: '0', limit: '500' });
        return r.records.length >= frames.length && r.records;
      }, spanMs() + 5000, 50);
      assert.deepEqual(got.map((x) => x.frameNumber), frames.map((f) => f.number), 'frame numbers as recorded');
      for (const [i, f] of frames.entries()) {
        const r = got[i];
        assert.equal(r.buildUs, f.build, `frame ${f.number} build`);
        assert.equal(r.rasterUs, f.raster, `frame ${f.number} raster`);
        assert.equal(r.totalSpanUs, f.elapsed, `frame ${f.number} total span`);
        assert.equal(r.vsyncOverheadUs, f.vsyncOverhead, `frame ${f.number} vsync overhead`);
        assert.equal(r.blocks.BUILD.micros, buildMicros(f), `frame ${f.number}: BUILD measured from its slice`);
        assert.ok(r.blocks.LAYOUT && r.blocks.PAINT && r.blocks['FINALIZE TREE'], `frame ${f.number} phases`);
        assert.ok(!r.blocks['Animator::BeginFrame'] && !r.blocks.GPURasterizer, 'engine slices are not blocks');
      }
      // The timeline: the recording's threads, and frame 101's Metal pipeline
      // compile at the same distance from its vsync as recorded.
      const tl = await c.call('getVMTimeline');
      const names = tl.traceEvents.filter((e) => e.ph === 'M').map((e) => e.args.name);
      assert.ok(names.includes(`io.flutter.1.raster (${RASTER})`) && names.includes(`io.flutter.1.ui (${UI})`), names.join(', '));
      const compile = (evs) => evs.find((e) => e.ph === 'B' && e.tid === RASTER && e.name.startsWith('GrMtlPipelineState *GrMtlPipelineStateBuilder::finalize('));
      const f101 = frames.find((f) => f.number === 101), r101 = got.find((x) => x.frameNumber === 101);
      const recorded = compile(rec.traceEvents), served = compile(tl.traceEvents);
      assert.ok(served, 'the compile slice is served with its full name');
      assert.equal(served.ts - r101.vsyncStartUs, recorded.ts - (f101.startTime - f101.vsyncOverhead), 'same clock as the frames');
      assert.equal(served.cat, recorded.cat);
      const tagged = tl.traceEvents.filter((e) => e.args?.devtoolsTag === 'shaders').length;
      assert.equal(tagged, rec.traceEvents.filter((e) => e.args?.devtoolsTag === 'shaders').length, 'args kept');
      const s = await sim.stats();
      assert.equal(s.framesDrawn, frames.length, 'played once');
      assert.deepEqual({ ...s.replay, spanUs: undefined },
        { frames: frames.length, played: frames.length, started: true, spanUs: undefined, rebuildFrames: 0, rebuildsPosted: 0 });
    } finally { await sim.stop(); }
  },

  async 'without a watcher: the timeline flags start it, Flutter.Frame carries the frames'() {
    const sim = await Sim.start(['--replay', FILE, '--no-watcher']);
    try {
      const c = await Client.connect(sim.wsUri);
      await c.call('streamListen', { streamId: 'Extension' });
      await new Promise((r) => setTimeout(r, 300));
      assert.equal((await sim.stats()).framesDrawn, 0);
      await c.call('getVMTimelineFlags');
      await waitFor('every Flutter.Frame', () => c.events.filter((e) => e.event?.extensionKind === 'Flutter.Frame').length >= frames.length, spanMs() + 5000, 50);
      const data = c.events.filter((e) => e.event?.extensionKind === 'Flutter.Frame').map((e) => e.event.extensionData);
      assert.deepEqual(data.map((d) => d.number), frames.map((f) => f.number));
      assert.deepEqual(data.map((d) => [d.build, d.raster, d.elapsed, d.vsyncOverhead]),
        frames.map((f) => [f.build, f.raster, f.elapsed, f.vsyncOverhead]));
    } finally { await sim.stop(); }
  },

  async 'rebuild counts: each recorded frame\'s own, while tracking is on, locations announced once'() {
    const file = join(dirname(FILE), '../android-world-clock-3.4/trace.json');
    const wc = JSON.parse(readFileSync(file, 'utf8'));
    const model = wc.performance.rebuildCountModel;
    const byNumber = new Map(model.frames.map((f) => [f.frameNumber, f.events]));
    const where = new Map(); // id -> [file, line, column, name]
    for (const [f, v] of Object.entries(model.locations)) v.ids.forEach((id, i) => where.set(id, [f, v.lines[i], v.columns[i], v.names[i]]));
    const TRACK = 'ext.flutter.inspector.trackRebuildDirtyWidgets';
    const sim = await Sim.start(['--replay', file, '--no-watcher']);
    try {
      const c = await Client.connect(sim.wsUri);
      const iso = await isolateOf(c);
      await c.call('streamListen', { streamId: 'Extension' });
      // The location table is the recording's from the start.
      // _registerSignalServiceExtension: the map is under "result".
      const map = await c.call('ext.flutter.inspector.widgetLocationIdMap', { isolateId: iso });
      assert.deepEqual(Object.keys(map).sort(), ['method', 'result', 'type']);
      assert.deepEqual(map.result, model.locations);
      const ext = (kind) => c.events.filter((e) => e.event?.extensionKind === kind).map((e) => e.event.extensionData);
      await c.call('getVMTimelineMicros');
      // Tracking off for the first frames: they post nothing.
      await waitFor('a few frames', () => ext('Flutter.Frame').length >= 8, spanMs() + 5000, 20);
      const before = Math.max(...ext('Flutter.Frame').map((f) => f.number));
      await c.call(TRACK, { isolateId: iso, enabled: 'true' });
      const last = wc.performance.flutterFrames.at(-1).number;
      await waitFor('the last frame', () => ext('Flutter.Frame').some((f) => f.number === last), spanMs() + 5000, 50);
      await new Promise((r) => setTimeout(r, 200));
      const evs = ext('Flutter.RebuiltWidgets');
      assert.ok(evs.length >= 10 && evs[0].frameNumber > before, `${evs.length} events from frame ${evs[0]?.frameNumber}; tracking went on after ${before}`);
      // One per recorded frame from the first, in order, with its counts.
      const numbers = model.frames.map((f) => f.frameNumber).filter((n) => n >= evs[0].frameNumber);
      assert.deepEqual(evs.map((e) => e.frameNumber), numbers);
      const fr = new Map(ext('Flutter.Frame').map((f) => [f.number, f]));
      const vsync = (n) => fr.get(n).startTime - fr.get(n).vsyncOverhead;
      const seen = new Set();
      for (const e of evs) {
        assert.deepEqual(e.events, byNumber.get(e.frameNumber), `frame ${e.frameNumber}`);
        // The scheduler's epoch: the first frame played, not the first tracked.
        assert.equal(e.startTime, vsync(e.frameNumber) - vsync(827), `frame ${e.frameNumber} startTime`);
        const fresh = [];
        for (let i = 0; i < e.events.length; i += 2) if (!seen.has(e.events[i])) { seen.add(e.events[i]); fresh.push(e.events[i]); }
        if (!fresh.length) { assert.equal(e.locations, undefined); assert.equal(e.newLocations, undefined); continue; }
        // Both encodings, each new location once, as recorded.
        const got = [];
        for (const [f, v] of Object.entries(e.locations)) v.ids.forEach((id, i) => got.push([id, f, v.lines[i], v.columns[i], v.names[i]]));
        assert.deepEqual(got.map((g) => g[0]).sort(), [...fresh].sort());
        for (const g of got) assert.deepEqual(g.slice(1), where.get(g[0]));
        const flat = [];
        for (const [f, v] of Object.entries(e.newLocations)) for (let i = 0; i < v.length; i += 3) flat.push([v[i], f, v[i + 1], v[i + 2]]);
        assert.deepEqual(flat, got.map((g) => g.slice(0, 4)));
      }
      assert.equal((await sim.stats()).replay.rebuildsPosted, evs.length);
      assert.equal((await sim.stats()).replay.rebuildFrames, model.frames.length);
      c.close();
    } finally { await sim.stop(); }
  },

  async 'a file that is not a recording: exit 2 and why'() {
    const r = spawnSync(SIM, ['--replay', join(dirname(FILE), 'expected.json')], { encoding: 'utf8', timeout: 5000 });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--replay .*expected\.json: no traceEvents array/);
    const m = spawnSync(SIM, ['--replay', '/nonexistent/trace.json'], { encoding: 'utf8', timeout: 5000 });
    assert.equal(m.status, 2);
    assert.match(m.stderr, /--replay \/nonexistent\/trace\.json: unable to open/);
  },
});
