// The servers around the app, as the real ones behave (issue 12 item 6):
// DDS taking a vm or web server over (302, DWDS's 403, the hand-over event),
// DWDS's WebSocket mode, web stream quirks, the /T= redirect, web
// --start-paused, worker isolates.
import assert from 'node:assert/strict';
import { Sim, Client, upgradeRequest, httpGet, run, waitFor } from './lib.mjs';

await run({
  async 'vm: /T= upgrade is redirected to /T=/, as the VM does'() {
    const sim = await Sim.start(['--mode', 'vm', '--token', 'abcdefghijk=']);
    try {
      const r = await upgradeRequest(sim.port, '/abcdefghijk=');
      assert.equal(r.status, 302);
      assert.equal(r.headers.location, '/abcdefghijk=/');
    } finally { await sim.stop(); }
  },

  async 'vm --dds-attached: the upgrade gets a 302 to DDS, which serves the same app'() {
    const sim = await Sim.start(['--mode', 'vm', '--dds-attached', '--token', 'abcdefghijk=']);
    try {
      const { ddsUri } = await sim.stats();
      assert.match(ddsUri, /^http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]{11}=\/$/);
      assert.ok(!ddsUri.includes('abcdefghijk='), 'DDS has its own token');
      let r = await upgradeRequest(sim.port, '/abcdefghijk=/ws');
      assert.equal(r.status, 302);
      assert.equal(r.headers.location, ddsUri);
      const dds = new URL(ddsUri);
      // DDS upgrades on any path after its token and speaks DDS's dialect.
      const c = await Client.connect(`ws://127.0.0.1:${dds.port}${dds.pathname}ws`);
      const vm = await c.call('getVM');
      assert.equal(vm.isolates[0].id, (await sim.stats()).isolateId);
      const protocols = await c.call('getSupportedProtocols');
      assert.ok(protocols.protocols.some((p) => p.protocolName === 'DDS'));
      r = await c.send('noSuchMethod');
      assert.equal(r.error.message, 'Unknown method "noSuchMethod".');
      c.close();
    } finally { await sim.stop(); }
  },

  async 'dds-attach: direct clients get DartDevelopmentServiceConnected, then the close'() {
    const sim = await Sim.start(['--mode', 'vm']);
    try {
      const c = await Client.connect(sim.wsUri); // subscribed to nothing: it comes anyway
      const ans = await sim.cmdOk('dds-attach');
      assert.match(ans, /^dds-attach http:\/\/\S+ closed 1$/);
      const ev = await waitFor('the event', () => c.events.find((e) => e.event.kind === 'DartDevelopmentServiceConnected'));
      assert.equal(ev.streamId, 'Service');
      const { ddsUri } = await sim.stats();
      assert.equal(ev.event.uri, ddsUri);
      assert.match(ev.event.message, /Please reconnect to the Dart Development Service at http:/);
      await waitFor('the close', () => c.closed);
      assert.ok((await sim.stats()).connections === 0, 'the direct client is gone');
      assert.match(await sim.cmd('dds-attach'), /^error/, 'once only');
    } finally { await sim.stop(); }
  },

  async 'web --dds-attached: every request gets the 403 naming DDS'() {
    const sim = await Sim.start(['--mode', 'web', '--dds-attached']);
    try {
      const { ddsUri } = await sim.stats();
      const want = `Cannot connect directly to the VM service as a Dart Development Service (DDS) instance has taken control and can be found at ${ddsUri}.`;
      let r = await upgradeRequest(sim.port, `/${sim.token}`);
      assert.equal(r.status, 403);
      assert.equal(r.body, want);
      r = await httpGet(sim.port, `/${sim.token}/ws`);
      assert.equal(r.status, 403);
      assert.equal(r.body, want);
      const dds = new URL(ddsUri);
      const c = await Client.connect(`ws://127.0.0.1:${dds.port}${dds.pathname}ws`);
      const vm = await c.call('getVM');
      assert.equal(vm.name, 'ChromeDebugProxy', 'DDS in front of DWDS: the app is still web');
      c.close();
    } finally { await sim.stop(); }
  },

  async 'web: streamListen repeats are Success, streamCancel is not supported'() {
    const sim = await Sim.start(['--mode', 'web']);
    try {
      const c = await Client.connect(sim.wsUri);
      assert.deepEqual(await c.call('streamListen', { streamId: 'Isolate' }), { type: 'Success' });
      assert.deepEqual(await c.call('streamListen', { streamId: 'Isolate' }), { type: 'Success' });
      const r = await c.send('streamCancel', { streamId: 'Isolate' });
      assert.equal(r.error.code, -32601);
      assert.equal(r.error.message, 'streamCancel: Not supported on web devices');
      c.close();
    } finally { await sim.stop(); }
  },

  async 'web --dwds websocket: -32000 for an unregistered extension, errors as results'() {
    const sim = await Sim.start(['--mode', 'web', '--dwds', 'websocket', '--no-watcher']);
    try {
      const c = await Client.connect(sim.wsUri);
      const vm = await c.call('getVM');
      const iso = await c.call('getIsolate', { isolateId: vm.isolates[0].id });
      assert.deepEqual(iso.extensionRPCs, [], 'WebSocket mode lists nothing until asked');
      let r = await c.send('ext.telescope.frames', { action: 'status' });
      assert.equal(r.error.code, -32000);
      assert.equal(r.error.message, 'Unexpected null value.');
      await sim.cmdOk('watcher on');
      await sim.cmdOk('ext-error on');
      r = await c.send('ext.telescope.frames', { action: 'status' });
      assert.equal(r.error, undefined);
      assert.equal(r.result.code, -32000);
      assert.equal(r.result.message, 'Server error');
      assert.match(r.result.data.details, /simulated watcher failure/);
      assert.equal(r.result.type, 'Response');
      c.close();
    } finally { await sim.stop(); }
  },

  async 'web --start-paused: nothing registered until main() runs'() {
    const sim = await Sim.start(['--mode', 'web', '--start-paused']);
    try {
      const c = await Client.connect(sim.wsUri);
      await c.call('streamListen', { streamId: 'Isolate' });
      const vm = await c.call('getVM');
      const iso = await c.call('getIsolate', { isolateId: vm.isolates[0].id });
      assert.equal(iso.pauseEvent.kind, 'PauseStart');
      assert.equal(iso.extensionRPCs, undefined);
      const t0 = Date.now();
      const r = await c.send('ext.telescope.frames', { action: 'status' });
      assert.equal(r.error.code, -32601, 'answered at once, not held');
      assert.ok(Date.now() - t0 < 1000);
      await sim.cmdOk('resume');
      await waitFor('the watcher registered', () => c.events.find((e) => e.event.kind === 'ServiceExtensionAdded' && e.event.extensionRPC === 'ext.telescope.frames'));
      const ok = await c.send('ext.telescope.frames', { action: 'status' });
      assert.equal(ok.error, undefined, JSON.stringify(ok));
      c.close();
    } finally { await sim.stop(); }
  },

  async '--workers: worker isolates first in getVM, without extensions'() {
    const sim = await Sim.start(['--workers', '2']);
    try {
      const c = await Client.connect(sim.wsUri);
      const vm = await c.call('getVM');
      assert.deepEqual(vm.isolates.map((i) => i.name), ['worker-1', 'worker-2', 'main']);
      const w = await c.call('getIsolate', { isolateId: vm.isolates[0].id });
      assert.equal(w.type, 'Isolate');
      assert.equal(w.extensionRPCs, undefined);
      assert.equal(w.pauseEvent.kind, 'Resume');
      const r = await c.send('ext.telescope.frames', { isolateId: vm.isolates[0].id, action: 'status' });
      assert.equal(r.error.code, -32601);
      const ok = await c.send('ext.telescope.frames', { isolateId: vm.isolates[2].id, action: 'status' });
      assert.equal(ok.error, undefined);
      c.close();
    } finally { await sim.stop(); }
  },
});
