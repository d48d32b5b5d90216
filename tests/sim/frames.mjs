// ext.telescope.frames and Flutter's profile* extensions through the real
// wire: routing by isolateId, stringified params, errors per mode, the
// watcher model's records, block trees with tracked widgets, counters.
import assert from 'node:assert/strict';
import { Sim, Client, run, waitFor } from './lib.mjs';

async function isolateOf(c) { return (await c.call('getVM')).isolates[0].id; }

await run({
  async 'read returns records; params arrive stringified like the VM hands them'() {
    const sim = await Sim.start(['--seed', '1']);
    try {
      const c = await Client.connect(sim.wsUri);
      const iso = await isolateOf(c);
      const start = await c.call('ext.telescope.frames', { isolateId: iso, action: 'start' });
      assert.equal(start.protocol, 1);
      assert.equal(start.collecting, true);
      assert.equal(start.type, undefined, 'no type on the native/DDS path');
      await waitFor('records', async () => {
        const r = await c.call('ext.telescope.frames', { isolateId: iso, action: 'read', since: '0', limit: '50' });
        return r.records.length >= 5 && r.records.some((x) => x.blocks.BUILD);
      });
      // Non-string values are converted by the VM: 5 -> "5", true -> "true", {a:1} -> "{a: 1}".
      const r = await c.call('ext.telescope.frames', { isolateId: iso, action: 'read', since: 0, limit: 5, x: { a: 1, b: [1, 2] }, f: 10.0, g: 1.5 });
      assert.ok(r.records.length <= 5);
      const p = JSON.parse(await sim.cmdOk('params'));
      assert.deepEqual(p.raw, { isolateId: iso, action: 'read', since: 0, limit: 5, x: { a: 1, b: [1, 2] }, f: 10, g: 1.5 });
      assert.deepEqual(p.handed, { isolateId: iso, action: 'read', since: '0', limit: '5', x: '{a: 1, b: [1, 2]}', f: '10', g: '1.5' });
      // More of Dart's toString(): doubles keep ".0", exponents lose C's padding,
      // strings inside collections are bare. Sent as raw text to keep 10.0 a double.
      const id = 'raw-types';
      const reply = await c.sendRaw(`{"jsonrpc":"2.0","id":"${id}","method":"ext.telescope.frames","params":{"isolateId":"${iso}","action":"status","d":10.0,"e":1e21,"t":1e-7,"u":0.000001,"v":-2.5e-8,"w":123456.789,"x":1.5e300,"b":true,"n":null,"m":{"k":"v","l":[true,"x"]}}}`, id);
      assert.equal(reply.result.protocol, 1);
      const p2 = JSON.parse(await sim.cmdOk('params'));
      assert.deepEqual(p2.handed, { isolateId: iso, action: 'status', d: '10.0', e: '1e+21', t: '1e-7', u: '0.000001', v: '-2.5e-8', w: '123456.789', x: '1.5e+300', b: 'true', n: 'null', m: '{k: v, l: [true, x]}' });
      const rec = r.records.find((x) => x.blocks.BUILD) || (await c.call('ext.telescope.frames', { isolateId: iso })).records.at(-1);
      for (const k of ['seq', 'frameNumber', 'buildUs', 'rasterUs', 'totalSpanUs', 'vsyncStartUs']) {
        assert.equal(typeof rec[k], 'number', k);
      }
      // The model rejects a bad param with -32602 from the extension.
      const bad = await c.send('ext.telescope.frames', { isolateId: iso, action: 'read', limit: 'lots' });
      assert.equal(bad.error.code, -32602);
      assert.ok(bad.error.data.details.includes('limit'));
      c.close();
    } finally { await sim.stop(); }
  },

  async 'routing: missing isolateId -32601, malformed -32602, dead id Sentinel, unregistered -32601 per mode'() {
    for (const [mode, message] of [['dds', 'Unknown method "ext.telescope.frames".'], ['vm', 'Method not found']]) {
      const sim = await Sim.start(['--mode', mode]);
      try {
        const c = await Client.connect(sim.wsUri);
        const iso = await isolateOf(c);
        let r = await c.send('ext.telescope.frames', { action: 'status' });
        assert.equal(r.error.code, -32601, `${mode}: missing isolateId`);
        r = await c.send('ext.telescope.frames', { isolateId: 'main', action: 'status' });
        assert.equal(r.error.code, -32602);
        assert.match(r.error.data.details, /invalid 'isolateId' parameter: main/);
        r = await c.send('ext.telescope.frames', { isolateId: 'isolates/12345', action: 'status' });
        assert.equal(r.result.type, 'Sentinel');
        assert.equal(r.result.kind, 'Collected');
        await sim.cmdOk('watcher off');
        const isoObj = await c.call('getIsolate', { isolateId: iso });
        assert.ok(!isoObj.extensionRPCs.includes('ext.telescope.frames'));
        r = await c.send('ext.telescope.frames', { isolateId: iso, action: 'status' });
        assert.equal(r.error.code, -32601);
        assert.equal(r.error.message, message);
        if (mode === 'vm') assert.deepEqual(r.error.data.request.params, { isolateId: iso, action: 'status' });
        else assert.equal(r.error.data.request.id, r.id);
        await c.call('streamListen', { streamId: 'Isolate' });
        await sim.cmdOk('watcher on');
        const ev = await c.waitEvent('ServiceExtensionAdded');
        assert.equal(ev.event.extensionRPC, 'ext.telescope.frames');
        assert.equal((await c.call('ext.telescope.frames', { isolateId: iso, action: 'status' })).protocol, 1);
        c.close();
      } finally { await sim.stop(); }
    }
  },

  async 'app error -32000 Server error with details; malformed, wrongtypes and huge replies'() {
    const sim = await Sim.start([]);
    try {
      const c = await Client.connect(sim.wsUri);
      const iso = await isolateOf(c);
      await sim.cmdOk('ext-error on');
      let r = await c.send('ext.telescope.frames', { isolateId: iso, action: 'status' });
      assert.equal(r.error.code, -32000);
      assert.equal(r.error.message, 'Server error');
      assert.equal(typeof r.error.data.details, 'string');
      await sim.cmdOk('ext-error off');
      await sim.cmdOk('reply wrongtypes');
      r = await c.call('ext.telescope.frames', { isolateId: iso, action: 'status' });
      assert.equal(typeof r.livenessCounter, 'string');
      await sim.cmdOk('reply huge 2');
      r = await c.call('ext.telescope.frames', { isolateId: iso, action: 'status' });
      assert.ok(r.padding.length >= 2 << 20);
      await sim.cmdOk('reply malformed');
      c.ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'ext.telescope.frames', id: 'm1', params: { isolateId: iso } }));
      await waitFor('a malformed frame', () => c.malformed === 1);
      await sim.cmdOk('reply normal');
      assert.equal((await c.call('ext.telescope.frames', { isolateId: iso, action: 'status' })).protocol, 1);
      c.close();
    } finally { await sim.stop(); }
  },

  async 'profile* extensions: getter/setter like Flutter, widget and render-object blocks appear'() {
    const sim = await Sim.start(['--seed', '2']);
    try {
      const c = await Client.connect(sim.wsUri);
      const iso = await isolateOf(c);
      for (const m of ['ext.flutter.profileWidgetBuilds', 'ext.flutter.profileRenderObjectLayouts', 'ext.flutter.profileRenderObjectPaints']) {
        assert.deepEqual(await c.call(m, { isolateId: iso }), { enabled: 'false', type: '_extensionType', method: m });
        assert.deepEqual(await c.call(m, { isolateId: iso, enabled: 'true' }), { enabled: 'true', type: '_extensionType', method: m });
        assert.deepEqual(await c.call(m, { isolateId: iso }), { enabled: 'true', type: '_extensionType', method: m });
      }
      assert.deepEqual((await sim.stats()).tracking, { widgets: true, layouts: true, paints: true });
      const started = await c.call('ext.telescope.frames', { isolateId: iso, action: 'start' });
      assert.equal((await sim.stats()).collecting, true);
      const since = String(started.lastSeq);
      const rec = await waitFor('a record with widget blocks', async () => {
        const r = await c.call('ext.telescope.frames', { isolateId: iso, action: 'read', since });
        return r.records.find((x) => x.blocks.ProductCard);
      });
      for (const b of ['BUILD', 'FeedList', 'ProductCard', 'LAYOUT (root)', 'LAYOUT', 'PAINT', 'RenderFlex', 'RenderParagraph', 'COMPOSITING', 'FINALIZE TREE']) {
        assert.ok(rec.blocks[b], `block ${b}`);
      }
      // Nesting is real: BUILD's inclusive time covers the widgets it contains.
      assert.ok(rec.blocks.BUILD.micros > rec.blocks.FeedList.micros);
      assert.ok(rec.blocks.BUILD.selfMicros < rec.blocks.BUILD.micros);
      await c.call('ext.flutter.profileWidgetBuilds', { isolateId: iso, enabled: 'false' });
      c.close();
    } finally { await sim.stop(); }
  },

  async 'janky scenario and inject: SlowWidget frames over budget; steady stays within budget'() {
    const sim = await Sim.start(['--seed', '5', '--scenario', 'steady']);
    try {
      const c = await Client.connect(sim.wsUri);
      const iso = await isolateOf(c);
      const st = await c.call('ext.telescope.frames', { isolateId: iso, action: 'start' });
      const recs = await waitFor('20 records', async () => {
        const r = await c.call('ext.telescope.frames', { isolateId: iso, action: 'read', since: String(st.lastSeq) });
        return r.records.length >= 20 && r.records;
      });
      assert.ok(recs.every((x) => x.buildUs < 16667 && !x.blocks.SlowWidget), 'steady: no jank');
      await sim.cmdOk('inject 3');
      const last = recs.at(-1).seq;
      const slow = await waitFor('3 injected janky frames', async () => {
        const r = await c.call('ext.telescope.frames', { isolateId: iso, action: 'read', since: String(last) });
        const s = r.records.filter((x) => x.blocks.SlowWidget);
        return s.length >= 3 && s;
      });
      assert.ok(slow.every((x) => x.buildUs > 2 * 16667), 'build > 2x budget');
      assert.equal((await sim.stats()).jankInjected, 3);
      c.close();
    } finally { await sim.stop(); }
  },

  async 'draw N: nothing for N periods, then N frames at once, one period apart'() {
    // What the model test's sequence 0 relies on: more than a page of frames
    // waiting together, whatever the machine's load did to the ticks.
    const sim = await Sim.start(['--seed', '3', '--scenario', 'steady', '--fps', '60']);
    try {
      const c = await Client.connect(sim.wsUri);
      const iso = await isolateOf(c);
      const st = await c.call('ext.telescope.frames', { isolateId: iso, action: 'start' });
      await waitFor('drawing', async () => (await sim.stats()).framesDrawn >= 3);
      assert.match(await sim.cmd('draw 0'), /^error draw wants a count/);
      await sim.cmdOk('draw 30');
      assert.match(await sim.cmd('draw 5'), /^error draw: 30 frames are still held/);
      const d0 = (await sim.stats()).framesDrawn;
      const steps = [];
      let prev = d0;
      await waitFor('the held frames', async () => {
        const d = (await sim.stats()).framesDrawn;
        if (d !== prev) steps.push(d - prev);
        prev = d;
        return d >= d0 + 30;
      }, 3000);
      assert.ok(steps[0] >= 30, `all 30 came in one step, not one a vsync: steps ${steps}`);
      const recs = await waitFor('their records', async () => {
        const r = await c.call('ext.telescope.frames', { isolateId: iso, action: 'read', since: String(st.lastSeq), limit: '500' });
        return r.records.length >= 32 && r.records;
      });
      const v = recs.map((x) => x.vsyncStartUs);
      for (let i = 1; i < v.length; i++) assert.ok(v[i] > v[i - 1], `vsyncs in order at ${i}: ${v[i - 1]}, ${v[i]}`);
      // 30 in a row one 60 Hz period apart (±2 µs of rounding).
      const gaps = v.slice(1).map((x, i) => x - v[i]);
      const run = gaps.reduce((a, g) => (Math.abs(g - 16667) <= 2 ? { n: a.n + 1, best: Math.max(a.best, a.n + 1) } : { n: 0, best: a.best }), { n: 0, best: 0 });
      assert.ok(run.best >= 29, `29 gaps of one period in a row: ${gaps}`);
      c.close();
    } finally { await sim.stop(); }
  },

  async 'same seed, same frames: durations and jank pattern reproduce'() {
    const series = [];
    for (let i = 0; i < 2; i++) {
      const sim = await Sim.start(['--seed', '11', '--scenario', 'janky', '--fps', '120']);
      try {
        const c = await Client.connect(sim.wsUri);
        const iso = await isolateOf(c);
        const recs = await waitFor('40 records', async () => {
          const r = await c.call('ext.telescope.frames', { isolateId: iso, action: 'read', since: '0', limit: '40' });
          return r.records.length >= 40 && r.records;
        });
        series.push(recs.map((x) => [x.frameNumber, x.buildUs, x.rasterUs]));
        c.close();
      } finally { await sim.stop(); }
    }
    // The first frames only: the UI thread skips vsyncs after a long frame,
    // and where that lands depends on real time.
    assert.deepEqual(series[0].slice(0, 5), series[1].slice(0, 5));
    const jank = (s) => s.filter((x) => x[1] > 8333).map((x) => x[1]);
    assert.deepEqual(jank(series[0]).slice(0, 2), jank(series[1]).slice(0, 2));
  },

  async 'stats: records written equal frames drawn once timings are flushed; liveness counts frames'() {
    const sim = await Sim.start(['--scenario', 'steady', '--timings-batch-ms', '50']);
    try {
      await waitFor('frames', async () => (await sim.stats()).framesDrawn >= 10);
      await sim.cmdOk('scenario idle');
      const s = await waitFor('timings flushed', async () => {
        const x = await sim.stats();
        return x.timingsPending === 0 && x;
      });
      assert.equal(s.recordsWritten, s.framesDrawn);
      assert.equal(s.liveness, s.framesDrawn);
      assert.equal(s.lastSeq, s.recordsWritten);
      // Idle: nothing more is drawn...
      await new Promise((r) => setTimeout(r, 100));
      assert.equal((await sim.stats()).framesDrawn, s.framesDrawn);
      // ...until a probe asks for exactly one frame.
      const c = await Client.connect(sim.wsUri);
      const iso = await isolateOf(c);
      await c.call('ext.telescope.frames', { isolateId: iso, action: 'probe' });
      await waitFor('the probe frame', async () => (await sim.stats()).framesDrawn === s.framesDrawn + 1);
      await new Promise((r) => setTimeout(r, 100));
      assert.equal((await sim.stats()).framesDrawn, s.framesDrawn + 1);
      // Stalled: a probe draws nothing, and the reply says why.
      await sim.cmdOk('scenario stalled');
      const before = (await sim.stats()).framesDrawn;
      const r = await c.call('ext.telescope.frames', { isolateId: iso, action: 'probe' });
      await new Promise((res) => setTimeout(res, 100));
      assert.equal((await sim.stats()).framesDrawn, before);
      const st = await c.call('ext.telescope.frames', { isolateId: iso, action: 'status' });
      assert.equal(st.lifecycle, 'hidden');
      assert.equal(st.framesEnabled, false);
      assert.equal(r.livenessCounter, before);
      c.close();
    } finally { await sim.stop(); }
  },

  async '--ring bounds the records the watcher keeps'() {
    const sim = await Sim.start(['--ring', '10', '--fps', '200', '--timings-batch-ms', '20']);
    try {
      const c = await Client.connect(sim.wsUri);
      const iso = await isolateOf(c);
      const r = await waitFor('the ring to wrap', async () => {
        const x = await c.call('ext.telescope.frames', { isolateId: iso, action: 'read', since: '0' });
        return x.lastSeq > 20 && x;
      });
      assert.equal(r.records.length, 10);
      assert.equal(r.firstSeq, r.lastSeq - 9);
      assert.equal(r.records[0].seq, r.firstSeq);
      c.close();
    } finally { await sim.stop(); }
  },

  async 'timings-delay holds records back while liveness advances (frames_pending)'() {
    const sim = await Sim.start(['--timings-batch-ms', '20']);
    try {
      await waitFor('first records', async () => (await sim.stats()).recordsWritten > 0);
      await sim.cmdOk('timings-delay 60000');
      const a = await sim.stats();
      const b = await waitFor('more frames', async () => {
        const x = await sim.stats();
        return x.liveness > a.liveness + 5 && x;
      });
      assert.equal(b.recordsWritten, a.recordsWritten, 'records held back');
      assert.ok(b.timingsPending >= 5);
      await sim.cmdOk('timings-delay 0');
      const c = await sim.stats();
      assert.ok(c.recordsWritten >= b.framesDrawn, 'lowering the delay releases them');
    } finally { await sim.stop(); }
  },

  async 'frame numbering with steps and gaps: FrameTiming, Flutter.Frame, Flutter.RebuiltWidgets and the records agree'() {
    // iOS numbers frames 2 apart (the project's recordings: 87, 89, 91…) and
    // any engine skips a number when a vsync began no frame (flutter#94896).
    const sim = await Sim.start(['--seed', '5', '--frame-step', '2', '--frame-gaps', '4', '--timings-batch-ms', '20']);
    try {
      const c = await Client.connect(sim.wsUri);
      const iso = await isolateOf(c);
      await c.call('streamListen', { streamId: 'Extension' });
      const kind = (k) => c.events.filter((e) => e.event.extensionKind === k).map((e) => e.event.extensionData);
      const start = await c.call('ext.telescope.frames', { isolateId: iso, action: 'start' });
      await c.call('ext.flutter.inspector.trackRebuildDirtyWidgets', { isolateId: iso, enabled: 'true' });
      await waitFor('12 numbered frames', () => kind('Flutter.Frame').length >= 12, 8000, 20);
      const nums = kind('Flutter.Frame').map((f) => f.number);
      const steps = nums.slice(1).map((n, i) => n - nums[i]);
      assert.ok(steps.every((d) => d === 2 || d === 4), `steps ${steps}`);
      assert.ok(steps.filter((d) => d === 4).length >= 2, `gaps in ${nums}`);
      // Every fourth frame skips one: never two gaps in a row.
      assert.ok(!steps.some((d, i) => d === 4 && steps[i + 1] === 4), `steps ${steps}`);
      const frames = new Set(nums);
      const rb = kind('Flutter.RebuiltWidgets').map((e) => e.frameNumber).filter((n) => n <= nums.at(-1));
      assert.ok(rb.length >= 3 && rb.every((n) => frames.has(n)), `rebuilds ${rb} vs frames ${nums}`);
      const r = await c.call('ext.telescope.frames', { isolateId: iso, action: 'read', since: String(start.lastSeq) });
      const recs = r.records.map((x) => x.frameNumber).filter((n) => n <= nums.at(-1));
      assert.ok(recs.length >= 5 && recs.every((n) => frames.has(n)), `records ${recs} vs frames ${nums}`);
      // The stdin command changes it at run time: contiguous from here on.
      assert.match(await sim.cmd('frame-step 1'), /^ok frame-step 1 gaps 0/);
      const n0 = kind('Flutter.Frame').length;
      await waitFor('frames after the change', () => kind('Flutter.Frame').length >= n0 + 6, 8000, 20);
      const later = kind('Flutter.Frame').slice(n0 + 1).map((f) => f.number);
      assert.ok(later.slice(1).every((n, i) => n === later[i] + 1), `contiguous ${later}`);
      assert.match(await sim.cmd('frame-step 2 1'), /^error/);
      c.close();
    } finally { await sim.stop(); }
  },
});
