// The contract: every reply and event telescope-sim and telescope-dtd send
// for what telescope-mcp calls and parses has the shape of the upstream
// example in tests/wire/ (README.md there: where each example comes from,
// and the comparison's rules). Where they disagree the stand-in is wrong,
// not the example.
import assert from 'node:assert/strict';
import { spawn, execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Sim, Client, run, waitFor } from '../sim/lib.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const DTD = process.env.TELESCOPE_DTD;
const example = (file) => JSON.parse(readFileSync(join(HERE, file), 'utf8'));

const kindOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

// The differences between an example (ex) and what a stand-in sent (got),
// as "path: what" lines. opt: {extra, optional, maps, values} (README.md).
export function shapeDiff(ex, got, opt = {}, path = '$') {
  const out = [];
  const { extra = false, optional = [], maps = [], values = [] } = opt;
  const walk = (e, g, p, key) => {
    if (values.includes(p.replace(/^\$\./, '')) && JSON.stringify(e) !== JSON.stringify(g)) {
      out.push(`${p}: ${JSON.stringify(g)} where upstream has ${JSON.stringify(e)}`);
      return;
    }
    if (e === null) return; // nullable upstream: any value
    if (kindOf(e) !== kindOf(g)) {
      out.push(`${p}: ${kindOf(g)} where upstream has ${kindOf(e)}`);
      return;
    }
    if (Array.isArray(e)) {
      if (!e.length) return;
      g.forEach((gv, i) => {
        const tries = e.map((ev) => shapeDiff(ev, gv, opt, `${p}[${i}]`));
        if (!tries.some((t) => !t.length)) out.push(...tries[0]);
      });
      return;
    }
    if (typeof e !== 'object') return;
    if (maps.includes(key)) { // keyed by data (file URIs): each value as the first
      const proto = Object.values(e)[0];
      for (const [k, gv] of Object.entries(g)) walk(proto, gv, `${p}[${JSON.stringify(k)}]`, null);
      return;
    }
    for (const [k, ev] of Object.entries(e)) {
      if (!(k in g)) {
        if (!optional.includes(k)) out.push(`${p}.${k}: missing`);
      } else {
        walk(ev, g[k], `${p}.${k}`, k);
      }
    }
    for (const k of Object.keys(g)) {
      if (!(k in e) && !extra && !k.startsWith('_')) out.push(`${p}.${k}: not in the upstream shape`);
    }
    if (typeof e.type === 'string' && g.type !== e.type) out.push(`${p}.type: "${g.type}" where upstream has "${e.type}"`);
  };
  walk(ex, got, path, null);
  return out;
}

function check(file, got, opt) {
  assert.ok(got !== undefined, `${file}: nothing received`);
  const diff = shapeDiff(example(file), got, opt);
  assert.deepEqual(diff, [], `${file}:\n  ${diff.join('\n  ')}\ngot ${JSON.stringify(got).slice(0, 600)}`);
}

// The comparator itself: the rules the README states.
function selfTest() {
  const d = (e, g, o) => shapeDiff(e, g, o);
  assert.deepEqual(d({ a: 1 }, { a: 2 }), []);
  assert.equal(d({ a: 1 }, { a: '1' }).length, 1, 'value types');
  assert.equal(d({ a: 1 }, {}).length, 1, 'a missing key');
  assert.deepEqual(d({ a: 1 }, {}, { optional: ['a'] }), []);
  assert.equal(d({ a: 1 }, { a: 1, b: 2 }).length, 1, 'an extra key');
  assert.deepEqual(d({ a: 1 }, { a: 1, b: 2 }, { extra: true }), []);
  assert.deepEqual(d({ a: 1 }, { a: 1, _b: 2 }), [], 'private keys');
  assert.equal(d({ result: { f: { ids: [1] } } }, { f: { ids: [1] } }, { maps: ['result'] }).length, 2, 'the wrapper');
  assert.deepEqual(d({ result: { f: { ids: [1] } } }, { result: { g: { ids: [2, 3] }, h: { ids: [] } } }, { maps: ['result'] }), []);
  assert.equal(d({ type: 'Success' }, { type: 'Response' }).length, 1, 'type names');
  assert.equal(d({ error: { code: -32000 } }, { error: { code: -32601 } }, { values: ['error.code'] }).length, 1);
  assert.deepEqual(d({ x: [{ a: 1 }, { b: 's' }] }, { x: [{ b: 't' }, { a: 2 }] }), [], 'any of the examples');
  assert.deepEqual(d({ a: null }, { a: { z: 1 } }), [], 'nullable');
}

const VM = { extra: true }; // a VM-service Response: later protocols add properties
const EVENT = { extra: true, optional: ['timestamp'] };

await run({
  'the comparator'() { selfTest(); },

  async 'vm: the VM service\'s replies and events'() {
    const sim = await Sim.start(['--mode', 'vm', '--seed', '11', '--compiled-functions', '4']);
    try {
      const c = await Client.connect(sim.wsUri);
      check('vm/getVersion.reply.json', await c.call('getVersion'), VM);
      const vm = await c.call('getVM');
      check('vm/getVM.reply.json', vm, VM);
      const iso = vm.isolates[0].id;
      check('vm/getIsolate.reply.json', await c.call('getIsolate', { isolateId: iso }),
        { ...VM, optional: ['rootLib', 'extensionRPCs', 'error', 'topFrame'] });
      for (const s of ['Extension', 'Isolate', 'Debug']) check('vm/streamListen.reply.json', await c.call('streamListen', { streamId: s }));
      check('vm/flutter.listViews.reply.json', await c.call('_flutter.listViews'), { optional: ['isolate'] });
      check('vm/getVMTimelineFlags.reply.json', await c.call('getVMTimelineFlags'), VM);
      check('vm/setVMTimelineFlags.reply.json', await c.call('setVMTimelineFlags', { recordedStreams: ['Dart', 'Embedder', 'GC'] }));
      check('vm/getVMTimelineMicros.reply.json', await c.call('getVMTimelineMicros'), VM);
      check('flutter/profileWidgetBuilds.reply.json', await c.call('ext.flutter.profileWidgetBuilds', { isolateId: iso, enabled: 'true' }));
      check('flutter/trackRebuildDirtyWidgets.reply.json',
        await c.call('ext.flutter.inspector.trackRebuildDirtyWidgets', { isolateId: iso, enabled: 'true' }));
      check('flutter/scheduleFrame.reply.json', await c.call('ext.ui.window.scheduleFrame', { isolateId: iso }));
      const ext = (kind) => c.events.filter((e) => e.event.extensionKind === kind);
      await waitFor('Flutter.Frame and Flutter.RebuiltWidgets', () => ext('Flutter.Frame').length && ext('Flutter.RebuiltWidgets').length, 8000, 20);
      for (const e of [...ext('Flutter.Frame'), ...ext('Flutter.RebuiltWidgets')].slice(0, 20)) {
        assert.equal(e.streamId, 'Extension');
        check('vm/event.Extension.json', e.event, { ...EVENT, optional: [...EVENT.optional, 'extensionData'] });
      }
      for (const e of ext('Flutter.Frame')) check('flutter/Flutter.Frame.data.json', e.event.extensionData);
      for (const e of ext('Flutter.RebuiltWidgets')) {
        check('flutter/Flutter.RebuiltWidgets.data.json', e.event.extensionData,
          { optional: ['newLocations', 'locations'], maps: ['newLocations', 'locations'] });
      }
      assert.ok(ext('Flutter.RebuiltWidgets')[0].event.extensionData.locations, 'the first event carries its locations');
      const changed = ext('Flutter.ServiceExtensionStateChanged')
        .find((e) => e.event.extensionData.extension === 'ext.flutter.inspector.trackRebuildDirtyWidgets');
      check('flutter/Flutter.ServiceExtensionStateChanged.data.json', changed?.event.extensionData);
      check('flutter/widgetLocationIdMap.reply.json',
        await c.call('ext.flutter.inspector.widgetLocationIdMap', { isolateId: iso }), { maps: ['result'] });
      const samples = () => c.call('getCpuSamples', { isolateId: iso, timeOriginMicros: 0, timeExtentMicros: 1e15 });
      const cpu = await waitFor('CPU samples', async () => { const r = await samples(); return r.samples.length && r; }, 5000, 20);
      check('vm/getCpuSamples.reply.json', cpu, { ...VM, optional: ['truncated', 'userTag', 'vmTag', 'location'] });
      const tl = await c.call('getVMTimeline', { timeOriginMicros: 0, timeExtentMicros: 1e15 });
      check('vm/getVMTimeline.reply.json', tl, VM);
      check('vm/error-32601.reply.json', await c.send('ext.nope', { isolateId: iso }),
        { values: ['error.code', 'error.message'], maps: ['params'] });
      // Debug and Isolate events: a pause, then a hot restart.
      assert.match(await sim.cmd('pause'), /^ok/);
      check('vm/event.Debug.json', (await c.waitEvent('PauseInterrupted')).event, EVENT);
      assert.match(await sim.cmd('restart'), /^ok/);
      for (const k of ['IsolateExit', 'IsolateStart', 'IsolateRunnable']) check('vm/event.Isolate.json', (await c.waitEvent(k)).event, EVENT);
      check('vm/event.ServiceExtensionAdded.json', (await c.waitEvent('ServiceExtensionAdded')).event, EVENT);
      check('vm/streamCancel.reply.json', await c.call('streamCancel', { streamId: 'Debug' }));
      c.close();
    } finally { await sim.stop(); }
  },

  async 'vm: the errors a switched-off profiler and an OS timeline recorder answer'() {
    const sim = await Sim.start(['--mode', 'vm', '--seed', '15', '--profiler', 'off', '--timeline-recorder', 'Systrace']);
    try {
      const c = await Client.connect(sim.wsUri);
      const iso = (await c.call('getVM')).isolates[0].id;
      // The code only: the message's words differ between service.md's table
      // and vm_service's RPCErrorKind (README.md).
      const err = { extra: true, values: ['error.code'] };
      check('vm/getCpuSamples.error100.json', await c.send('getCpuSamples', { isolateId: iso, timeOriginMicros: 0, timeExtentMicros: 1 }), err);
      check('vm/getVMTimeline.error114.json', await c.send('getVMTimeline', {}), err);
      c.close();
    } finally { await sim.stop(); }
  },

  async 'dds: the unknown-method error DDS sends'() {
    const sim = await Sim.start(['--seed', '12']);
    try {
      const c = await Client.connect(sim.wsUri);
      const iso = (await c.call('getVM')).isolates[0].id;
      check('dds/error-32601.reply.json', await c.send('ext.nope', { isolateId: iso }), { values: ['error.code'] });
      c.close();
    } finally { await sim.stop(); }
  },

  async 'dwds: an extension\'s reply through Response.toJson()'() {
    const sim = await Sim.start(['--mode', 'web', '--seed', '13', '--dwds-batch-ms', '0']);
    try {
      const c = await Client.connect(sim.wsUri);
      const iso = (await c.call('getVM')).isolates[0].id;
      check('dwds/extension.reply.json', await c.call('ext.flutter.profileWidgetBuilds', { isolateId: iso, enabled: 'true' }));
      c.close();
    } finally { await sim.stop(); }
  },

  async 'dtd: the Dart Tooling Daemon\'s replies and events'() {
    if (!DTD) { console.log('skip: TELESCOPE_DTD not set'); return; }
    const child = spawn(DTD, ['--machine'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise((r) => child.once('exit', r));
    const sim = await Sim.start(['--seed', '14']);
    try {
      const line = await new Promise((resolve, reject) => {
        let buf = '';
        child.stdout.on('data', (d) => { buf += d; const i = buf.indexOf('\n'); if (i >= 0) resolve(buf.slice(0, i)); });
        child.once('exit', (code) => reject(new Error(`telescope-dtd exited ${code}`)));
      });
      const { uri, trusted_client_secret: secret } = JSON.parse(line).tooling_daemon_details;
      const c = await Client.connect(uri);
      check('dtd/getVM.error.json', await c.send('getVM', undefined, '1'), { values: ['error.code'] });
      check('dtd/streamListen.reply.json', await c.call('streamListen', { streamId: 'ConnectedApp' }));
      await promisify(execFile)(DTD, ['register', '--dtd-uri', uri, '--secret', secret, '--vm-service-uri', sim.wsUri, '--name', 'demo']);
      const ev = await waitFor('VmServiceRegistered', () => c.raw.map((t) => JSON.parse(t)).find((m) => m.method === 'streamNotify'), 5000);
      check('dtd/streamNotify.VmServiceRegistered.json', ev);
      check('dtd/getRegisteredServices.reply.json', await c.call('getRegisteredServices'), { optional: ['capabilities'] });
      check('dtd/ConnectedApp.getVmServices.reply.json', await c.call('ConnectedApp.getVmServices'), { optional: ['exposedUri', 'name'] });
      c.close();
    } finally {
      await sim.stop();
      child.kill('SIGTERM');
      await exited;
    }
  },
});
