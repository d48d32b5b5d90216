// getCpuSamples, getFlagList and setFlag through the real wire: the
// CpuSamples shape, samples of the UI thread only while it works on a frame,
// on the FrameTiming clock, stacks indexing functions[], the slow function
// only in janky frames, the profiler flag, DWDS, the bounded ring.
import assert from 'node:assert/strict';
import { Sim, Client, run, waitFor } from './lib.mjs';

const BUDGET_US = 16667; // 60 Hz
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function isolateOf(c) { return (await c.call('getVM')).isolates[0].id; }

// Frames as Flutter.Frame reports them, with the UI thread's window: from
// buildStart to the end of the build phase plus FINALIZE TREE and the
// post-frame callbacks, well under one sample period.
function framesOf(c) {
  return c.events.filter((e) => e.event.extensionKind === 'Flutter.Frame').map((e) => {
    const d = e.event.extensionData;
    return { number: d.number, start: d.startTime, end: d.startTime + d.build + 1000, janky: d.build > BUDGET_US };
  });
}

// Runs the app for ms, then asks for the samples of the time every frame of
// which has its Flutter.Frame event already (events come in batches).
async function capture(c, ms, extra = {}) {
  const iso = await isolateOf(c);
  await c.call('streamListen', { streamId: 'Extension' });
  const t0 = (await c.call('getVMTimelineMicros')).timestamp;
  await sleep(ms);
  const frames = await waitFor('frame events', () => {
    const f = framesOf(c).filter((x) => x.start >= t0);
    return f.length >= 10 ? f : null;
  }, 5000);
  const t1 = frames.at(-1).start - 1;
  const r = await c.call('getCpuSamples', { isolateId: iso, timeOriginMicros: t0, timeExtentMicros: t1 - t0, ...extra });
  const now = (await c.call('getVMTimelineMicros')).timestamp;
  return { iso, t0, t1, now, frames: framesOf(c).filter((f) => f.start <= t1), r };
}

const fnIndex = (r, cls, member) => r.functions.findIndex((f) => f.kind === 'Dart' && f.function.name === member && f.function.owner?.name === cls);
const frameOf = (frames, ts) => frames.find((f) => ts >= f.start && ts < f.end);

await run({
  async 'CpuSamples as the VM prints it: the UI thread, in the window, only during frames; janky work is SlowWidget.build at slow_widget.dart:42'() {
    const sim = await Sim.start(['--seed', '7', '--scenario', 'janky', '--compiled-functions', '50']);
    try {
      const c = await Client.connect(sim.wsUri);
      const { t0, t1, now, frames, r } = await capture(c, 2500);
      assert.equal(r.type, 'CpuSamples');
      assert.equal(r.samplePeriod, 1000);
      assert.equal(r.maxStackDepth, 128);
      assert.equal(typeof r.pid, 'number');
      assert.equal(r.sampleCount, r.samples.length);
      assert.ok(r.sampleCount > 100, `only ${r.sampleCount} samples`);
      // The header describes the returned samples, not the request.
      assert.equal(r.timeOriginMicros, r.samples[0].timestamp);
      assert.equal(r.timeExtentMicros, r.samples.at(-1).timestamp - r.samples[0].timestamp);
      // functions[0] is the VM's unknown function; then code; tags last.
      assert.equal(r.functions[0].kind, 'Collected');
      assert.equal(r.functions[0].function.name, '<unknown Dart function>');
      assert.ok(r.functions.some((f) => f.kind === 'Tag' && f.function.name === '[Truncated]'));
      assert.ok(r.functions.length >= 50, 'the zero-tick compiled functions are listed');
      for (const f of r.functions) {
        assert.equal(f.type, 'ProfileFunction');
        assert.ok(['Dart', 'Native', 'Tag', 'Collected', 'Stub'].includes(f.kind), f.kind);
        assert.equal(typeof f.resolvedUrl, 'string');
        if (f.kind === 'Dart') {
          assert.equal(f.function.type, '@Function');
          assert.equal(typeof f.function.location.line, 'number');
          assert.equal(f.function.location.type, 'SourceLocation');
          assert.equal(f.function.location.script.type, '@Script');
          assert.ok(['@Class', '@Library'].includes(f.function.owner.type));
        } else {
          assert.equal(f.function.type, 'NativeFunction');
        }
      }
      // The UI thread: the timeline's io.flutter.1.ui thread.
      const tl = await c.call('getVMTimeline', {});
      const ui = tl.traceEvents.find((e) => e.ph === 'M' && e.args?.name?.startsWith('io.flutter.1.ui'));
      let last = -Infinity;
      let excl = 0;
      for (const s of r.samples) {
        assert.equal(s.tid, ui.tid);
        assert.ok(s.timestamp >= t0 && s.timestamp <= t1, `sample ${s.timestamp} outside [${t0}, ${t1}]`);
        assert.ok(s.timestamp <= now, 'no sample from the future');
        assert.ok(s.timestamp > last);
        if (last > -Infinity) assert.equal((s.timestamp - last) % r.samplePeriod, 0);
        last = s.timestamp;
        assert.equal(s.userTag, 'Default');
        assert.ok(['Dart', 'VM'].includes(s.vmTag));
        assert.equal(s.truncated, undefined);
        assert.ok(s.stack.length > 0 && s.stack.length <= r.maxStackDepth);
        for (const i of s.stack) assert.ok(Number.isInteger(i) && i >= 0 && i < r.functions.length);
        // Only while the UI thread works on a frame: none while idle.
        assert.ok(frameOf(frames, s.timestamp), `sample at ${s.timestamp} outside every frame`);
      }
      for (const f of r.functions) excl += f.exclusiveTicks;
      assert.equal(excl, r.sampleCount, 'every sample ticks its top frame once');
      // The slow work, with its place in the source.
      const slow = fnIndex(r, 'SlowWidget', 'build');
      assert.ok(slow > 0);
      const sf = r.functions[slow];
      assert.match(sf.resolvedUrl, /\/slow_widget\.dart$/);
      assert.equal(sf.function.location.line, 42);
      assert.equal(sf.function.location.script.uri, 'package:sim_app/slow_widget.dart');
      const scope = fnIndex(r, 'BuildOwner', 'buildScope');
      const drawFrame = r.functions.findIndex((f) => f.function.name === '_drawFrame' && f.function.owner?.type === '@Library');
      assert.equal(r.functions[drawFrame].function.owner.uri, 'dart:ui');
      const slowSamples = r.samples.filter((s) => s.stack[0] === slow);
      assert.ok(slowSamples.length > 0, 'SlowWidget.build was sampled');
      for (const s of slowSamples) {
        assert.ok(frameOf(frames, s.timestamp).janky, `SlowWidget.build at ${s.timestamp} in a frame within budget`);
        // Top frame first: the app's build under the framework under dart:ui.
        assert.ok(s.stack.indexOf(scope) > 0 && s.stack.indexOf(drawFrame) > s.stack.indexOf(scope));
        assert.equal(r.functions[s.stack.at(-1)].kind, 'Native');
      }
      assert.equal(sf.exclusiveTicks, slowSamples.length);
      // Every janky frame of this scenario spent most of its samples there.
      for (const f of frames.filter((x) => x.janky && x.start > t0)) {
        const inFrame = r.samples.filter((s) => frameOf([f], s.timestamp));
        assert.ok(inFrame.filter((s) => s.stack[0] === slow).length * 2 > inFrame.length, `frame ${f.number}`);
      }
      c.close();
      const st = await sim.stats();
      assert.equal(st.methods.getCpuSamples, 1);
      assert.equal(st.cpu.profiler, true);
      assert.ok(st.cpu.samples > 0);
    } finally { await sim.stop(); }
  },

  // The engine hands a frame's timing over once its raster is done
  // (shell.cc), so by the time its Flutter.Frame event (or the watcher's
  // record) arrives every sample of its work is taken: asking again later
  // finds no more. The sim used to hand a timing over when it drew the frame,
  // ahead of its clock, and a pull right after saw part of a long build.
  async 'a frame is reported once it has ended: its samples are all there when its timing comes'() {
    const sim = await Sim.start(['--seed', '7', '--scenario', 'janky', '--compiled-functions', '0']);
    try {
      const c = await Client.connect(sim.wsUri);
      const iso = await isolateOf(c);
      await c.call('streamListen', { streamId: 'Extension' });
      const seen = new Set();
      let checked = 0;
      const deadline = Date.now() + 15000;
      while (checked < 4 && Date.now() < deadline) {
        const f = framesOf(c).find((x) => x.janky && !seen.has(x.number));
        if (!f) { await sleep(2); continue; }
        seen.add(f.number);
        const ask = async () => (await c.call('getCpuSamples', { isolateId: iso, timeOriginMicros: f.start, timeExtentMicros: f.end - f.start })).sampleCount;
        const first = await ask();
        await sleep(150);
        const later = await ask();
        assert.equal(first, later, `frame ${f.number}: ${first} samples when its timing came, ${later} 150 ms later`);
        assert.ok(first * 1000 >= f.end - f.start - 3000, `frame ${f.number}: ${first} samples over ${f.end - f.start} µs`);
        checked++;
      }
      assert.equal(checked, 4, `janky frames checked: ${checked}`);
      c.close();
    } finally { await sim.stop(); }
  },

  async 'cpu-rare-slow: the rare function only in janky frames ranks first per janky frame; the steady one first globally'() {
    const sim = await Sim.start(['--seed', '3', '--scenario', 'cpu-rare-slow', '--compiled-functions', '0']);
    try {
      const c = await Client.connect(sim.wsUri);
      const { frames, r } = await capture(c, 3000);
      const rare = fnIndex(r, 'CatalogIndex', 'rebuild');
      const steady = fnIndex(r, 'PriceFormatter', 'formatAll');
      assert.equal(r.functions[rare].function.location.line, 57);
      assert.match(r.functions[rare].resolvedUrl, /\/catalog_index\.dart$/);
      assert.match(r.functions[steady].resolvedUrl, /\/price_formatter\.dart$/);
      const janky = frames.filter((f) => f.janky);
      const calm = frames.filter((f) => !f.janky);
      assert.ok(janky.length >= 2 && calm.length >= 20, `${janky.length} janky, ${calm.length} not`);
      const ticks = (fs, idx) => r.samples.filter((s) => s.stack[0] === idx && frameOf(fs, s.timestamp)).length;
      // The rare function runs only in janky frames, the steady one in all.
      assert.equal(ticks(calm, rare), 0);
      assert.ok(ticks(janky, rare) > 0);
      assert.ok(ticks(calm, steady) > 0 && ticks(janky, steady) > 0);
      for (const s of r.samples.filter((x) => x.stack[0] === rare)) assert.ok(frameOf(frames, s.timestamp).janky);
      // Its caller is the app's FeedList.build.
      const feed = fnIndex(r, 'FeedList', 'build');
      assert.equal(r.samples.find((x) => x.stack[0] === rare).stack[1], feed);
      // Globally (total self time) the steady function is the hotspot ...
      assert.ok(r.functions[steady].exclusiveTicks > r.functions[rare].exclusiveTicks,
        `steady ${r.functions[steady].exclusiveTicks} vs rare ${r.functions[rare].exclusiveTicks}`);
      // ... but per janky frame against the other frames, the rare one is.
      const diff = (idx) => ticks(janky, idx) / janky.length - ticks(calm, idx) / calm.length;
      assert.ok(diff(rare) > diff(steady) + 5, `rare ${diff(rare)} vs steady ${diff(steady)}`);
      c.close();
    } finally { await sim.stop(); }
  },

  // `vm-hang METHOD after N`: a VM that answers a pull's first ranges and
  // then stops answering (how integration.where loses a range midway).
  async 'vm-hang getCpuSamples after 2: two calls answered, the ones after never (off does not release them); bad forms refused'() {
    const sim = await Sim.start(['--mode', 'vm']);
    try {
      const c = await Client.connect(sim.wsUri);
      const iso = await isolateOf(c);
      for (const bad of ['vm-hang getCpuSamples after', 'vm-hang getCpuSamples later 1',
        'vm-hang getCpuSamples after -1', 'vm-hang getCpuSamples after x'])
        assert.equal(await sim.cmd(bad), 'error vm-hang wants a method name [after N], or off', bad);
      assert.equal(await sim.cmd('vm-hang getCpuSamples after 2'), 'ok vm-hang getCpuSamples after 2');
      const args = { isolateId: iso, timeOriginMicros: 0, timeExtentMicros: 1e12 };
      for (let k = 0; k < 2; k++) assert.equal((await c.call('getCpuSamples', args)).type, 'CpuSamples');
      void c.send('getCpuSamples', args, 'lost');
      // One connection's calls are answered in order: once a later one is,
      // the lost one never was.
      assert.equal((await c.call('getVM')).type, 'VM');
      assert.ok(c.pending.has('"lost"'), 'the third getCpuSamples was answered');
      assert.equal(await sim.cmd('vm-hang off'), 'ok vm-hang off');
      assert.equal((await c.call('getCpuSamples', args)).type, 'CpuSamples');
      assert.ok(c.pending.has('"lost"'), '`off` answered a dropped call');
      assert.equal((await sim.stats()).methods.getCpuSamples, 4);
      c.close();
    } finally { await sim.stop(); }
  },

  async 'profiler off: 100 Feature is disabled; setFlag profiler true turns it on with VMFlagUpdate; the allowlist'() {
    const sim = await Sim.start(['--mode', 'vm', '--profiler', 'off']);
    try {
      const c = await Client.connect(sim.wsUri);
      const iso = await isolateOf(c);
      const flags = (await c.call('getFlagList')).flags;
      const prof = flags.find((f) => f.name === 'profiler');
      assert.equal(prof.valueAsString, 'false');
      assert.equal(prof.modified, true);
      assert.equal(flags.find((f) => f.name === 'profile_period').valueAsString, '1000');
      let e = await c.send('getCpuSamples', { isolateId: iso, timeOriginMicros: 0, timeExtentMicros: 1e12 });
      assert.equal(e.error.code, 100);
      assert.equal(e.error.message, 'Feature is disabled');
      assert.equal(e.error.data.details, 'Profiler is disabled.');
      assert.equal(e.error.data.request.method, 'getCpuSamples');
      await c.call('streamListen', { streamId: 'VM' });
      assert.equal((await c.call('setFlag', { name: 'profiler', value: 'true' })).type, 'Success');
      const ev = await c.waitEvent('VMFlagUpdate');
      assert.equal(ev.event.flag, 'profiler');
      assert.equal(ev.event.newValue, 'true');
      await sleep(400);
      const r = await c.call('getCpuSamples', { isolateId: iso, timeOriginMicros: 0, timeExtentMicros: 1e15 });
      assert.ok(r.sampleCount > 0);
      // Only the VM's runtime-settable flags change; the answer is a result.
      assert.deepEqual(await c.call('setFlag', { name: 'max_profile_depth', value: '4' }),
        { type: 'Error', message: 'Cannot set flag: cannot change at runtime' });
      assert.deepEqual(await c.call('setFlag', { name: 'no_such_flag', value: '1' }),
        { type: 'Error', message: 'Cannot set flag: flag not found' });
      assert.equal((await c.call('setFlag', { name: 'profile_period', value: '10' })).type, 'Success');
      assert.equal((await c.call('getFlagList')).flags.find((f) => f.name === 'profile_period').valueAsString, '50');
      // Another client switches it off (the stdin command).
      assert.equal(await sim.cmd('profiler off'), 'ok profiler off');
      e = await c.send('getCpuSamples', { isolateId: iso, timeOriginMicros: 0, timeExtentMicros: 1 });
      assert.equal(e.error.code, 100);
      e = await c.send('getCpuSamples', { isolateId: iso });
      assert.equal(e.error.code, -32602);
      c.close();
      const st = await sim.stats();
      assert.equal(st.cpu.profiler, false);
      assert.equal(st.methods.getCpuSamples, 4);
      assert.equal(st.methods.setFlag, 4);
    } finally { await sim.stop(); }
  },

  async 'web (DWDS): getCpuSamples -32601 "Not supported on web devices"; no profiler flag'() {
    for (const dwds of ['chrome', 'websocket']) {
      const sim = await Sim.start(['--mode', 'web', '--dwds', dwds]);
      try {
        const c = await Client.connect(sim.wsUri);
        const iso = await isolateOf(c);
        const e = await c.send('getCpuSamples', { isolateId: iso, timeOriginMicros: 0, timeExtentMicros: 1 });
        assert.equal(e.error.code, -32601);
        assert.equal(e.error.message, 'getCpuSamples: Not supported on web devices');
        const flags = (await c.call('getFlagList')).flags;
        assert.deepEqual(flags.map((f) => f.name), ['pause_isolates_on_start']);
        const s = await c.send('setFlag', { name: 'profiler', value: 'true' });
        assert.equal(s.error.code, dwds === 'chrome' ? -32600 : -32601, dwds);
        c.close();
      } finally { await sim.stop(); }
    }
  },

  async 'bounded: a ring of --cpu-ring samples, the oldest overwritten; a long extent returns all kept'() {
    const sim = await Sim.start(['--cpu-ring', '300', '--compiled-functions', '0']);
    try {
      const c = await Client.connect(sim.wsUri);
      const iso = await isolateOf(c);
      await waitFor('an overwritten ring', async () => (await sim.stats()).cpu.overwritten > 0, 8000, 100);
      const now = (await c.call('getVMTimelineMicros')).timestamp;
      const r = await c.call('getCpuSamples', { isolateId: iso, timeOriginMicros: 0, timeExtentMicros: now + 1e9 });
      const st = await sim.stats();
      assert.equal(st.cpu.samples, 300);
      assert.ok(r.sampleCount <= 300 && r.sampleCount >= 250, `${r.sampleCount}`);
      assert.ok(st.cpu.taken > 300);
      // The kept ones are the newest: the oldest dates from after the start.
      assert.ok(r.timeOriginMicros > 0 && r.timeExtentMicros < 2e6);
      c.close();
    } finally { await sim.stop(); }
  },

  async 'max_profile_depth cuts stacks and marks them truncated; profile builds give lines without token positions; profile_period'() {
    const sim = await Sim.start(['--max-profile-depth', '8', '--build-mode', 'profile', '--profile-period', '250', '--compiled-functions', '3']);
    try {
      const c = await Client.connect(sim.wsUri);
      const { r } = await capture(c, 1200);
      assert.equal(r.maxStackDepth, 8);
      assert.equal(r.samplePeriod, 250);
      const trunc = r.samples.filter((s) => s.truncated);
      assert.ok(trunc.length > r.samples.length / 2, 'most frame stacks are deeper than 8');
      for (const s of r.samples) {
        assert.ok(s.stack.length <= 8);
        if (s.truncated) assert.equal(s.stack.length, 8);
      }
      // Cut from the bottom: the top frame (where the time went) is kept.
      const build = fnIndex(r, 'ProductCard', 'build');
      assert.ok(trunc.some((s) => s.stack[0] === build));
      const tagFn = r.functions.find((f) => f.kind === 'Tag' && f.function.name === '[Truncated]');
      assert.equal(tagFn.inclusiveTicks, trunc.length);
      const deltas = r.samples.slice(1).map((s, i) => s.timestamp - r.samples[i].timestamp);
      assert.equal(Math.min(...deltas), 250);
      const card = r.functions[fnIndex(r, 'ProductCard', 'build')];
      assert.equal(card.function.location.line, 31);
      assert.equal(card.function.location.tokenPos, undefined, 'AOT: no token positions');
      c.close();
    } finally { await sim.stop(); }
  },
});
