// Pause/resume, hot restart, slow and hung extensions, web (DWDS) flavour.
import assert from 'node:assert/strict';
import { Sim, Client, run, waitFor } from './lib.mjs';

async function isolateOf(c) { return (await c.call('getVM')).isolates[0].id; }
const settle = (ms) => new Promise((r) => setTimeout(r, ms));

await run({
  async 'paused isolate: Debug events, pauseEvent, extension reply held until resume'() {
    const sim = await Sim.start([]);
    try {
      const c = await Client.connect(sim.wsUri);
      const iso = await isolateOf(c);
      await c.call('streamListen', { streamId: 'Debug' });
      await sim.cmdOk('pause');
      const ev = await c.waitEvent('PauseInterrupted');
      assert.equal(ev.streamId, 'Debug');
      assert.equal(ev.event.isolate.id, iso);
      assert.equal((await c.call('getIsolate', { isolateId: iso })).pauseEvent.kind, 'PauseInterrupted');
      let answered = false;
      const held = c.send('ext.telescope.frames', { isolateId: iso, action: 'status' }).then((r) => { answered = true; return r; });
      // Core RPCs still answer while the extension call waits.
      assert.equal((await c.call('getVersion')).type, 'Version');
      await settle(150);
      assert.equal(answered, false, 'held while paused');
      assert.equal((await sim.stats()).heldCalls, 1);
      const frozen = (await sim.stats()).framesDrawn;
      await settle(60);
      assert.equal((await sim.stats()).framesDrawn, frozen, 'a paused isolate draws no frames');
      await sim.cmdOk('resume');
      const r = await held;
      assert.equal(r.result.protocol, 1);
      await c.waitEvent('Resume');
      assert.equal((await c.call('getIsolate', { isolateId: iso })).pauseEvent.kind, 'Resume');
      // The resume RPC works too, for any Pause* kind.
      await sim.cmdOk('pause PauseBreakpoint');
      assert.equal((await c.call('getIsolate', { isolateId: iso })).pauseEvent.kind, 'PauseBreakpoint');
      await c.call('resume', { isolateId: iso });
      assert.equal((await c.call('getIsolate', { isolateId: iso })).pauseEvent.kind, 'Resume');
      const notPaused = await c.send('resume', { isolateId: iso });
      assert.equal(notPaused.error.code, 106);
      assert.match(await sim.cmd('pause Sleeping'), /^error/);
      c.close();
    } finally { await sim.stop(); }
  },

  async '--start-paused: PauseStart until resume, no frames before'() {
    const sim = await Sim.start(['--start-paused']);
    try {
      const c = await Client.connect(sim.wsUri);
      const iso = await isolateOf(c);
      assert.equal((await c.call('getIsolate', { isolateId: iso })).pauseEvent.kind, 'PauseStart');
      await settle(80);
      assert.equal((await sim.stats()).framesDrawn, 0);
      await c.call('resume', { isolateId: iso });
      await waitFor('frames after resume', async () => (await sim.stats()).framesDrawn > 0);
      c.close();
    } finally { await sim.stop(); }
  },

  async 'hot restart: IsolateExit, IsolateStart/Runnable with a new id, ServiceExtensionAdded, old id Collected, new runId'() {
    const sim = await Sim.start(['--seed', '9']);
    try {
      const c = await Client.connect(sim.wsUri);
      const old = await isolateOf(c);
      await c.call('streamListen', { streamId: 'Isolate' });
      const before = await c.call('ext.telescope.frames', { isolateId: old, action: 'start' });
      // A call still running in the old isolate when it exits...
      await sim.cmdOk('ext-hang on');
      const held = c.send('ext.telescope.frames', { isolateId: old, action: 'status' });
      await sim.cmdOk('restart');
      await sim.cmdOk('ext-hang off');
      const kinds = () => c.events.map((e) => e.event.kind);
      await waitFor('the restart events', () => kinds().includes('ServiceExtensionAdded') &&
        c.events.some((e) => e.event.extensionRPC === 'ext.telescope.frames'));
      const exit = c.events.find((e) => e.event.kind === 'IsolateExit');
      const startEv = c.events.find((e) => e.event.kind === 'IsolateStart');
      const runnable = c.events.find((e) => e.event.kind === 'IsolateRunnable');
      assert.equal(exit.event.isolate.id, old);
      assert.notEqual(startEv.event.isolate.id, old);
      assert.equal(runnable.event.isolate.id, startEv.event.isolate.id);
      const order = kinds();
      assert.ok(order.indexOf('IsolateExit') < order.indexOf('IsolateStart'));
      assert.ok(order.indexOf('IsolateStart') < order.indexOf('IsolateRunnable'));
      assert.ok(order.indexOf('IsolateRunnable') < order.indexOf('ServiceExtensionAdded'));
      const fresh = await isolateOf(c);
      assert.equal(fresh, startEv.event.isolate.id);
      // ...and any new call to it: Collected.
      assert.equal((await held).result.kind, 'Collected');
      let r = await c.send('ext.telescope.frames', { isolateId: old, action: 'status' });
      assert.equal(r.result.type, 'Sentinel');
      r = await c.send('getIsolate', { isolateId: old });
      assert.equal(r.result.kind, 'Collected');
      const after = await c.call('ext.telescope.frames', { isolateId: fresh, action: 'status' });
      assert.notEqual(after.runId, before.runId);
      assert.equal(after.collecting, false, 'statics reset');
      assert.equal((await sim.stats()).runId, after.runId);
      c.close();
    } finally { await sim.stop(); }
  },

  async 'a slow watcher call holds the watcher calls behind it (the isolate runs them in order), no other call; a hung one answers when released'() {
    const sim = await Sim.start([]);
    try {
      const c = await Client.connect(sim.wsUri);
      const iso = await isolateOf(c);
      await sim.cmdOk('ext-delay 800');
      const order = [];
      const slow = c.send('ext.telescope.frames', { isolateId: iso, action: 'status' }).then((r) => { order.push('slow'); return r; });
      await sim.cmdOk('ext-delay 0');
      const fast = c.send('ext.telescope.frames', { isolateId: iso, action: 'status' }).then((r) => { order.push('fast'); return r; });
      const flutter = c.send('ext.flutter.profileWidgetBuilds', { isolateId: iso }).then((r) => { order.push('flutter'); return r; });
      await Promise.all([slow, fast, flutter]);
      assert.deepEqual(order, ['flutter', 'slow', 'fast']);
      await sim.cmdOk('ext-hang on');
      let done = false;
      const hung = c.send('ext.telescope.frames', { isolateId: iso, action: 'status' }).then((r) => { done = true; return r; });
      assert.equal((await c.call('getVersion')).type, 'Version');
      await settle(100);
      assert.equal(done, false);
      await sim.cmdOk('ext-hang off');
      assert.equal((await hung).result.protocol, 1);
      c.close();
    } finally { await sim.stop(); }
  },

  async 'web mode: isolate "main()", optional isolateId, type Response, web error messages'() {
    const sim = await Sim.start(['--mode', 'web']);
    try {
      const c = await Client.connect(sim.wsUri);
      const vm = await c.call('getVM');
      assert.equal(vm.targetCPU, 'Web');
      const ref = vm.isolates[0];
      assert.equal(ref.id, '1', 'the first DWDS isolate');
      assert.equal(ref.name, 'main()');
      let r = await c.call('ext.telescope.frames', { action: 'status' });
      assert.equal(r.type, 'Response');
      assert.equal(r.protocol, 1);
      r = await c.call('ext.telescope.frames', { isolateId: ref.id, action: 'read', limit: 3 });
      assert.equal(r.type, 'Response');
      const p = JSON.parse(await sim.cmdOk('params'));
      assert.deepEqual(p.handed, { action: 'read', limit: '3' }, 'DWDS drops isolateId');
      await c.call('ext.telescope.frames', { action: 'status', m: { a: 1 }, b: true });
      assert.deepEqual(JSON.parse(await sim.cmdOk('params')).handed,
        { action: 'status', m: '{"a":1}', b: 'true' }, 'DWDS jsonEncodes non-strings');
      r = await c.call('ext.flutter.profileWidgetBuilds', {});
      assert.equal(r.type, 'Response');
      assert.equal(r.enabled, 'false');
      let e = await c.send('ext.telescope.frames', { isolateId: '999', action: 'status' });
      assert.equal(e.result.kind, 'Collected');
      await sim.cmdOk('watcher off');
      e = await c.send('ext.telescope.frames', { action: 'status' });
      assert.equal(e.error.code, -32601);
      assert.equal(e.error.message, 'Unknown service method: ext.telescope.frames');
      await sim.cmdOk('web-unregistered 32603');
      e = await c.send('ext.telescope.frames', { action: 'status' });
      assert.deepEqual(e.error, { code: -32603, message: 'Unexpected null value' });
      await sim.cmdOk('watcher on');
      // DWDS WebSocket mode: a call the page does not answer times out as -32603.
      await sim.cmdOk('web-timeout 150');
      await sim.cmdOk('ext-hang on');
      e = await c.send('ext.telescope.frames', { action: 'status' });
      assert.equal(e.error.code, -32603);
      assert.match(e.error.message, /TimeoutException after 0:00:00\.150000/);
      await sim.cmdOk('ext-hang off');
      assert.equal((await sim.stats()).heldCalls, 0);
      e = await c.send('streamListen', { streamId: 'Profiler' });
      assert.equal(e.error.code, -32602);
      await c.call('streamListen', { streamId: 'Isolate' });
      await sim.cmdOk('restart');
      const st = await c.waitEvent('IsolateStart');
      assert.match(st.event.isolate.id, /^\d+$/);
      assert.ok(Number(st.event.isolate.id) > Number(ref.id));
      c.close();
    } finally { await sim.stop(); }
  },
});
