// telescope-sim --replay through the real wire, against the recording itself
// (tests/recordings/ios-metal-3.7/trace.json, read here independently of the
// sim): nothing plays before a measurement starts; then every recorded frame
// arrives as a watcher record with its own number and timings, its blocks
// measured from the UI thread's slices; the VM timeline serves the
// recording's events on its threads, on the records' clock; without a
// watcher, touching the timeline flags starts it and Flutter.Frame carries
// the frames. A file that is not a recording stops the sim with exit 2.
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
      assert.deepEqual({ ...s.replay, spanUs: undefined }, { frames: frames.length, played: frames.length, started: true, spanUs: undefined });
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

  async 'a file that is not a recording: exit 2 and why'() {
    const r = spawnSync(SIM, ['--replay', join(dirname(FILE), 'expected.json')], { encoding: 'utf8', timeout: 5000 });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--replay .*expected\.json: no traceEvents array/);
    const m = spawnSync(SIM, ['--replay', '/nonexistent/trace.json'], { encoding: 'utf8', timeout: 5000 });
    assert.equal(m.status, 2);
    assert.match(m.stderr, /--replay \/nonexistent\/trace\.json: unable to open/);
  },
});
