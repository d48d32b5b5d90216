// Issue 6 item 7: security checks against the real telescope-sim and
// telescope-mcp. Tokens never appear in anything the server writes (here at
// trace level, and in every file's after hook); non-loopback hosts are
// refused without dialling; only the DESIGN §10 allowlist of VM-service
// methods is ever sent; oversized and deeply nested input gets errors and
// the server keeps serving.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  registerCleanup, pair, sim, mcp, startLean, scOf, until, sleep, rssOf, report, MiB, fmtMiB,
  serverOutput, TIMEOUT_SCALE, MEASURE,
} from './lib.mjs';

registerCleanup();

// The first status may still say `connecting` (slowly, under valgrind).
const connected = (lean) => until(async () => scOf(await lean.call({ action: 'status' })).sc.connection.state === 'connected',
  { what: 'connected' });

// DESIGN §10: the only methods the server may call.
const ALLOWED = new Set(['getVersion', 'getVM', 'getIsolate', 'streamListen', 'streamCancel',
  '_flutter.listViews', 'ext.telescope.frames', 'ext.flutter.profileWidgetBuilds',
  'ext.flutter.profileRenderObjectLayouts', 'ext.flutter.profileRenderObjectPaints',
  'ext.flutter.inspector.trackRebuildDirtyWidgets', 'ext.flutter.inspector.widgetLocationIdMap',
    'ext.ui.window.scheduleFrame', 'getVMTimelineFlags', 'setVMTimelineFlags', 'getVMTimeline',
    'getVMTimelineMicros', 'getCpuSamples']); // never clearVMTimeline: DevTools shares that buffer

test('a full session sends only allowlisted VM-service methods', async () => {
  const { s, m } = await pair(['--fps', '60']);
  const ok = (r) => { assert.equal(r.isError, false, r.text); return r; };
  ok(await m.call({ action: 'status' }));
  ok(await m.call({ action: 'start', trackWidgets: true, trackLayouts: true, trackPaints: true,
    trackRebuilds: true, interactionId: 'scroll', linkedBy: 'agent' }));
  ok(await m.call({ action: 'mark', interactionId: 'tap' }));
  await sleep(200);
  ok(await m.call({ action: 'read', waitMs: 500, detail: 'blocks', limit: 5 }));
  ok(await m.call({ action: 'mark' }));
  // A restart and a dropped connection make the server re-sync and
  // re-enable attribution: those paths must stay inside the list too.
  await s.cmd('restart');
  await sleep(300);
  await s.cmd('drop');
  await until(async () => !(await m.call({ action: 'read' })).isError, { what: 'read after drop' });
  ok(await m.call({ action: 'capture', durationMs: 300 }));
  const stop = ok(await m.call({ action: 'stop' }));
  assert.ok(stop.sc.summary.frames > 0);
  ok(await m.call({ action: 'capture', durationMs: 300, trackWidgets: true }));
  ok(await m.call({ action: 'status' }));
  const methods = await s.methods();
  const names = methods.map((x) => (typeof x === 'string' ? x : x.method));
  const sent = new Set(names);
  for (const name of sent) assert.ok(ALLOWED.has(name), `the server sent ${name}`);
  // The session did exercise the calls it needs (a test that sent nothing
  // would pass the check above).
  for (const need of ['getVM', 'getIsolate', 'streamListen', 'ext.telescope.frames',
    'ext.flutter.profileWidgetBuilds', 'ext.flutter.profileRenderObjectLayouts',
    'ext.flutter.profileRenderObjectPaints', 'ext.flutter.inspector.trackRebuildDirtyWidgets'])
    assert.ok(sent.has(need), `${need} never sent`);
  report('allowlist', { methodsReceived: names.length, distinct: [...sent].sort() });
});

test('non-loopback hosts are refused at once, without dialling', async () => {
  const s = await sim([]);
  const m = await mcp([]);
  const tok = s.token;
  // TEST-NET-1/2/3, the IPv6 documentation prefix, private and link-local
  // addresses, and names that are not "localhost": a dial to any of them
  // would hang or fail slowly; the refusal comes before any socket.
  const hosts = ['192.0.2.1', '198.51.100.7', '203.0.113.9', '[2001:db8::1]', '10.0.0.1',
    '169.254.1.1', 'example.com', 'localhost.example.com', '127.0.0.1.nip.io'];
  const times = [];
  for (const host of hosts) {
    for (const action of ['status', 'read', 'start', 'capture']) {
      const uri = `ws://${host}:${s.port}/${tok}/ws`;
      const t0 = Date.now();
      const r = await m.call({ action, vmServiceUri: uri, ...(action === 'capture' ? { durationMs: 100 } : {}) });
      const ms = Date.now() - t0;
      times.push(ms);
      assert.equal(r.sc.diagnosis?.code, 'connection_rejected', `${action} ${host}: ${r.text}`);
      assert.equal(r.isError, action !== 'status', `${action} ${host}`);
      assert.match(r.sc.diagnosis.message + ' ' + r.sc.diagnosis.hint, /loopback|remote/i);
      assert.ok(!r.text.includes(tok), 'the refused URI is shown redacted');
      assert.ok(ms < 500 * TIMEOUT_SCALE, `${action} ${host} took ${ms} ms`);
    }
  }
  // Nothing reached the sim, and the server still serves a loopback app.
  assert.equal((await s.stats()).connections, 0);
  assert.deepEqual(await s.methods(), []);
  const r = await m.call({ action: 'status', vmServiceUri: s.wsUri });
  assert.equal(r.sc.connection.state, 'connected');
  report('non-loopback', { refusals: times.length, maxMs: Math.max(...times) });
});

test('tokens never appear in anything the server writes, even at trace level', async () => {
  const s = await sim([]);
  const before = serverOutput.length;
  // The token arrives through the environment and every URI form.
  const m = await mcp(['--log-level', 'trace'], { env: { TELESCOPE_VM_SERVICE_URI: s.httpUri } });
  for (const uri of [undefined, s.wsUri, s.httpUri, `http://127.0.0.1:9100?uri=${s.httpUri}`,
    `http://127.0.0.1:${s.port}/${s.token}`]) {
    const r = await m.call({ action: 'read', ...(uri ? { vmServiceUri: uri } : {}) });
    assert.equal(r.isError, false, r.text);
  }
  // Failures log the URI they failed on: a wrong token, a dropped socket.
  await m.call({ action: 'read', vmServiceUri: `ws://127.0.0.1:${s.port}/${s.token.slice(0, -2)}x=/ws` });
  await s.cmd('drop');
  await m.call({ action: 'read', vmServiceUri: s.wsUri });
  await m.call({ action: 'capture', durationMs: 200 });
  await sleep(100);
  const written = serverOutput.slice(before).join('\n');
  assert.ok(m.stderr.includes('debug:'), `trace logging was on: ${m.stderr.slice(0, 200)}`);
  assert.ok(!written.includes(s.token), 'the token leaked');
  assert.ok(!m.stderr.includes(s.token), 'the token leaked on stderr');
  // The redacted form is what shows instead.
  assert.match(written, /redacted|…|\.\.\./);
});

test('a line over 4 MiB is answered with -32600; memory stays bounded; service goes on', async () => {
  const s = await sim([]);
  const lean = await startLean(['--vm-service-uri-file', s.uriFile]);
  await connected(lean);
  const rss0 = rssOf(lean.pid);
  const big = `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"telescope_frames","arguments":{"action":"status","interactionId":"${'x'.repeat(5 * MiB)}"}}}\n`;
  for (let i = 0; i < 3; i++) {
    const reply = await lean.raw(big, null);
    assert.equal(reply.error?.code, -32600, JSON.stringify(reply).slice(0, 300));
    assert.match(reply.error.message, /too long|limit|large|bytes/i);
  }
  const rss1 = rssOf(lean.pid);
  if (MEASURE) assert.ok(rss1 - rss0 < 8 * MiB, `RSS grew ${fmtMiB(rss1 - rss0)} over three 5 MiB lines`);
  const { sc, isError } = scOf(await lean.call({ action: 'status' }));
  assert.equal(isError, false);
  assert.equal(sc.connection.state, 'connected');
  // Under the line limit but over what a field allows: a clear isError.
  const r = scOf(await lean.call({ action: 'start', interactionId: 'y'.repeat(2 * MiB) }));
  assert.equal(r.isError, true);
  assert.match(r.text, /interactionId/);
  report('oversized', { rssBefore: fmtMiB(rss0), rssAfter: fmtMiB(rss1) });
});

test('deeply nested input (100 000 levels) is an error, never a crash', async () => {
  const s = await sim([]);
  const lean = await startLean(['--vm-service-uri-file', s.uriFile]);
  await connected(lean);
  const depth = 100000;
  const nested = '['.repeat(depth) + ']'.repeat(depth);
  // As params, as an argument, and as the whole message.
  let reply = await lean.raw(`{"jsonrpc":"2.0","id":1001,"method":"tools/call","params":{"name":"telescope_frames","arguments":{"action":"status","x":${nested}}}}\n`, null);
  assert.equal(reply.error?.code, -32700, JSON.stringify(reply).slice(0, 300));
  reply = await lean.raw(`{"jsonrpc":"2.0","id":1002,"method":"ping","params":${nested}}\n`, null);
  assert.equal(reply.error?.code, -32700, JSON.stringify(reply).slice(0, 300));
  reply = await lean.raw(`${nested}\n`, null);
  assert.equal(reply.error?.code, -32700);
  const objs = '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  reply = await lean.raw(`{"jsonrpc":"2.0","id":1003,"method":"tools/call","params":${objs}}\n`, null);
  assert.equal(reply.error?.code, -32700);
  // Nesting within the parser's depth but where no field allows it.
  const shallow = '['.repeat(500) + ']'.repeat(500);
  const r = scOf(await lean.call({ action: 'status', x: JSON.parse(shallow) }));
  assert.equal(r.isError, true);
  assert.match(r.text, /\bx\b/);
  const { sc, isError } = scOf(await lean.call({ action: 'status' }));
  assert.equal(isError, false);
  assert.equal(sc.connection.state, 'connected');
});
