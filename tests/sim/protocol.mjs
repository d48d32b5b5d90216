// The core VM-service protocol: shapes of getVersion/getVM/getIsolate,
// ids echoed with their JSON type, notifications, bad JSON per mode,
// streams (103/104), _flutter.listViews, the method record.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Sim, Client, run, waitFor } from './lib.mjs';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsim-'));

await run({
  async 'getVersion, getVM, getIsolate shapes (dds)'() {
    const sim = await Sim.start(['--seed', '3']);
    try {
      const c = await Client.connect(sim.wsUri);
      assert.deepEqual(await c.call('getVersion'), { type: 'Version', major: 4, minor: 16 });
      const vm = await c.call('getVM');
      assert.equal(vm.type, 'VM');
      assert.equal(vm.isolates.length, 1);
      const ref = vm.isolates[0];
      assert.match(ref.id, /^isolates\/\d+$/);
      assert.equal(typeof ref.number, 'string');
      assert.equal(ref.id, `isolates/${ref.number}`);
      assert.equal(ref.name, 'main');
      assert.equal(ref.type, '@Isolate');
      const iso = await c.call('getIsolate', { isolateId: ref.id });
      assert.equal(iso.type, 'Isolate');
      assert.equal(iso.id, ref.id);
      assert.equal(iso.runnable, true);
      assert.equal(iso.pauseEvent.kind, 'Resume');
      for (const e of ['ext.telescope.frames', 'ext.flutter.profileWidgetBuilds',
        'ext.flutter.profileRenderObjectLayouts', 'ext.flutter.profileRenderObjectPaints']) {
        assert.ok(iso.extensionRPCs.includes(e), e);
      }
      // A dead or unknown isolate is the Collected Sentinel, a result.
      const gone = await c.send('getIsolate', { isolateId: 'isolates/1' });
      assert.deepEqual(gone.result, { type: 'Sentinel', kind: 'Collected', valueAsString: '<collected>' });
      const missing = await c.send('getIsolate', {});
      assert.equal(missing.error.code, -32602);
      // Stats see the isolate the protocol reports.
      assert.equal((await sim.stats()).isolateId, ref.id);
      c.close();
    } finally { await sim.stop(); }
  },

  async 'ids echoed with their JSON type; missing jsonrpc accepted; notifications unanswered'() {
    const sim = await Sim.start([]);
    try {
      const c = await Client.connect(sim.wsUri);
      let r = await c.send('getVersion', undefined, 42);
      assert.strictEqual(r.id, 42);
      r = await c.send('getVersion', undefined, 'abc');
      assert.strictEqual(r.id, 'abc');
      r = await c.send('getVersion', undefined, 1.5);
      assert.strictEqual(r.id, 1.5);
      r = await c.sendRaw({ method: 'getVersion', id: 'nojsonrpc' }, 'nojsonrpc');
      assert.equal(r.result.type, 'Version');
      // A notification: carried out (the stream is subscribed) but unanswered.
      c.ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'streamListen', params: { streamId: 'Isolate' } }));
      r = await c.send('streamListen', { streamId: 'Isolate' });
      assert.equal(r.error.code, 103);
      assert.equal(c.unmatched, undefined, 'nothing arrived for the notification');
      r = await c.send('noSuchMethod', {});
      assert.equal(r.error.code, -32601);
      assert.equal(r.error.message, 'Unknown method "noSuchMethod".');
      c.close();
    } finally { await sim.stop(); }
  },

  async 'bad JSON: dds answers -32700 and stays open; vm closes with 4000'() {
    const dds = await Sim.start([]);
    try {
      const c = await Client.connect(dds.wsUri);
      const p = new Promise((resolve) => c.pending.set('null', resolve));
      c.ws.send('{"jsonrpc":"2.0",');
      const r = await p;
      assert.equal(r.error.code, -32700);
      assert.equal(r.id, null);
      assert.equal((await c.call('getVersion')).type, 'Version');
      c.close();
    } finally { await dds.stop(); }
    const vm = await Sim.start(['--mode', 'vm']);
    try {
      const c = await Client.connect(vm.wsUri);
      c.ws.send('not json');
      await waitFor('close 4000', () => c.closed);
      assert.equal(c.closed.code, 4000);
      const c2 = await Client.connect(vm.wsUri);
      c2.ws.send('[1,2]');
      await waitFor('close 4002', () => c2.closed);
      assert.equal(c2.closed.code, 4002);
    } finally { await vm.stop(); }
  },

  async 'streams: 103/104 per mode, custom streams on DDS only, events delivered'() {
    const dds = await Sim.start([]);
    try {
      const c = await Client.connect(dds.wsUri);
      assert.deepEqual(await c.call('streamListen', { streamId: 'Isolate' }), { type: 'Success' });
      let r = await c.send('streamListen', { streamId: 'Isolate' });
      assert.equal(r.error.code, 103);
      assert.equal(r.error.data.request.method, 'streamListen');
      assert.deepEqual(await c.call('streamListen', { streamId: 'MyCustom' }), { type: 'Success' });
      assert.deepEqual(await c.call('streamCancel', { streamId: 'Isolate' }), { type: 'Success' });
      r = await c.send('streamCancel', { streamId: 'Isolate' });
      assert.equal(r.error.code, 104);
      c.close();
    } finally { await dds.stop(); }
    const vm = await Sim.start(['--mode', 'vm']);
    try {
      const c = await Client.connect(vm.wsUri);
      await c.call('streamListen', { streamId: 'Isolate' });
      let r = await c.send('streamListen', { streamId: 'Isolate' });
      assert.deepEqual(r.error, { code: 103, message: 'Stream already subscribed' });
      r = await c.send('streamListen', { streamId: 'MyCustom' });
      assert.equal(r.error.code, -32602);
      r = await c.send('streamCancel', { streamId: 'Debug' });
      assert.deepEqual(r.error, { code: 104, message: 'Stream not subscribed' });
      // Unknown methods on the raw VM: "Method not found" with data.request.
      r = await c.send('bogus', { a: 1 });
      assert.equal(r.error.message, 'Method not found');
      assert.deepEqual(r.error.data.request, { method: 'bogus', params: { a: '1' } });
      await vm.cmdOk('reload');
      const ev = await c.waitEvent('IsolateReload');
      assert.equal(ev.streamId, 'Isolate');
      assert.equal(ev.event.status, 'success');
      assert.equal(ev.event.isolate.id, (await vm.stats()).isolateId);
      c.close();
    } finally { await vm.stop(); }
  },

  async 'dds replays the Extension stream history to a new listener'() {
    const sim = await Sim.start([]);
    try {
      const a = await Client.connect(sim.wsUri);
      const iso = (await a.call('getVM')).isolates[0].id;
      await a.call('streamListen', { streamId: 'Extension' });
      await a.call('ext.flutter.profileWidgetBuilds', { isolateId: iso, enabled: 'true' });
      const changed = (e) => e.event.extensionKind === 'Flutter.ServiceExtensionStateChanged';
      const ev = await a.waitEventWhere('state changed', changed);
      assert.deepEqual(ev.event.extensionData, { extension: 'ext.flutter.profileWidgetBuilds', value: 'true' });
      // The binding posts Flutter.Frame for every FrameTiming.
      const frame = await a.waitEventWhere('Flutter.Frame', (e) => e.event.extensionKind === 'Flutter.Frame');
      for (const k of ['number', 'startTime', 'elapsed', 'build', 'raster', 'vsyncOverhead']) {
        assert.equal(typeof frame.event.extensionData[k], 'number', k);
      }
      const b = await Client.connect(sim.wsUri);
      await b.call('streamListen', { streamId: 'Extension' });
      const replayed = await b.waitEventWhere('replayed state change', changed);
      assert.deepEqual(replayed.event.extensionData, ev.event.extensionData);
      a.close();
      b.close();
    } finally { await sim.stop(); }
  },

  async '_flutter.listViews: number as int, engine name'() {
    const sim = await Sim.start([]);
    try {
      const c = await Client.connect(sim.wsUri);
      const views = await c.call('_flutter.listViews');
      assert.equal(views.type, 'FlutterViewList');
      const iso = views.views[0].isolate;
      const vm = await c.call('getVM');
      assert.equal(iso.id, vm.isolates[0].id);
      assert.equal(typeof iso.number, 'number');
      assert.equal(iso.name, `main.dart$main-${vm.isolates[0].number}`);
      c.close();
    } finally { await sim.stop(); }
  },

  async 'every method is recorded: stats, methods command, --method-log'() {
    const log = path.join(tmp, 'methods.log');
    const sim = await Sim.start(['--method-log', log]);
    try {
      const c = await Client.connect(sim.wsUri);
      await c.call('getVersion');
      const vm = await c.call('getVM');
      await c.call('getIsolate', { isolateId: vm.isolates[0].id });
      await c.call('getVersion');
      await c.send('evaluate', { isolateId: vm.isolates[0].id, expression: '1' });
      const want = ['getVersion', 'getVM', 'getIsolate', 'getVersion', 'evaluate'];
      assert.deepEqual(JSON.parse(await sim.cmdOk('methods')), want);
      assert.deepEqual((await sim.stats()).methods, { getVersion: 2, getVM: 1, getIsolate: 1, evaluate: 1 });
      assert.equal(fs.readFileSync(log, 'utf8'), want.join('\n') + '\n');
      c.close();
    } finally { await sim.stop(); }
  },

  async 'drop closes every connection without a close frame'() {
    const sim = await Sim.start([]);
    try {
      const a = await Client.connect(sim.wsUri);
      const b = await Client.connect(sim.wsUri);
      await waitFor('2 connections', async () => (await sim.stats()).connections === 2);
      assert.match(await sim.cmdOk('drop'), /dropped 2/);
      await waitFor('both closed', () => a.closed && b.closed);
      assert.equal(a.closed.code, 1006); // abnormal: no close frame
      await waitFor('0 connections', async () => (await sim.stats()).connections === 0);
      const c = await Client.connect(sim.wsUri);
      assert.equal((await c.call('getVersion')).type, 'Version');
      c.close();
    } finally { await sim.stop(); }
  },
});
