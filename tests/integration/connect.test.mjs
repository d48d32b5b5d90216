// Issue 3 through the official SDK client: reaching the app over every URI
// form, and surviving what a debugging session does to the connection.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSim, startMcp, until, tempDir, assertNoTokenLeak, sleep, TIMEOUT_SCALE } from './harness.mjs';

const cleanup = [];
after(async () => { for (const c of cleanup.reverse()) await c(); assertNoTokenLeak(); });
async function sim(args) { const s = await startSim(args); cleanup.push(() => s.kill()); return s; }
async function mcp(args, opts) { const m = await startMcp(args, opts); cleanup.push(() => m.close()); return m; }

const status = (m, extra = {}) => m.call({ action: 'status', ...extra });

test('every URI form a user pastes reaches the app', async () => {
  const s = await sim(['--seed', '1']);
  const port = s.port, tok = s.token;
  const forms = [
    s.httpUri,                                               // http://127.0.0.1:P/TOKEN=/
    `http://127.0.0.1:${port}/${tok}`,                       // web form, no trailing slash
    s.wsUri,                                                 // ws://…/TOKEN=/ws (the uri file)
    `http://127.0.0.1:9100?uri=${s.httpUri}`,                // DevTools, as printed
    `http://127.0.0.1:9100/#/?uri=${encodeURIComponent(s.wsUri)}`, // DevTools, encoded
    `A Dart VM Service on Pixel is available at: ${s.httpUri}`,    // the whole printed line
  ];
  const m = await mcp([]);
  for (const uri of forms) {
    const { sc, isError } = await status(m, { vmServiceUri: uri });
    assert.equal(isError, false, uri);
    assert.equal(sc.connection.state, 'connected', `${uri}: ${JSON.stringify(sc)}`);
    assert.equal(sc.connection.watcher, 'present');
    assert.match(sc.connection.isolateId, /^isolates\//);
    assert.ok(!sc.connection.vmServiceUri.includes(tok), 'URI shown redacted');
    assert.equal(sc.connection.runtime, 'native');
  }
});

test('the URI file, the flag and the environment variable', async () => {
  const s = await sim([]);
  for (const [args, env] of [
    [['--vm-service-uri-file', s.uriFile], {}],
    [['--vm-service-uri', s.httpUri], {}],
    [[], { TELESCOPE_VM_SERVICE_URI: s.wsUri }],
    [[], { TELESCOPE_VM_SERVICE_URI_FILE: s.uriFile }],
  ]) {
    const m = await mcp(args, { env });
    const { sc } = await status(m);
    assert.equal(sc.connection.state, 'connected', JSON.stringify({ args, sc }));
  }
});

test('a wrong token is connection_rejected, a remote host is refused unasked', async () => {
  const s = await sim([]);
  const m = await mcp([]);
  let r = await status(m, { vmServiceUri: `ws://127.0.0.1:${s.port}/AAAAAAAAAAA=/ws` });
  assert.equal(r.isError, false, 'status reports, it does not fail');
  assert.equal(r.sc.diagnosis.code, 'connection_rejected');
  r = await m.call({ action: 'read', vmServiceUri: `ws://127.0.0.1:${s.port}/AAAAAAAAAAA=/ws` });
  assert.equal(r.isError, true);
  assert.equal(r.sc.diagnosis.code, 'connection_rejected');
  // 192.0.2.1 (TEST-NET-1) is never dialled: the refusal comes before any socket.
  const t0 = Date.now();
  r = await status(m, { vmServiceUri: 'ws://192.0.2.1:8181/abcdefghijk=/ws' });
  assert.equal(r.sc.diagnosis.code, 'connection_rejected');
  assert.match(r.sc.diagnosis.message + r.sc.diagnosis.hint, /remote|loopback/i);
  assert.ok(Date.now() - t0 < 1000);
  // The server keeps serving.
  r = await status(m, { vmServiceUri: s.wsUri });
  assert.equal(r.sc.connection.state, 'connected');
});

test('no URI known at all is not_connected', async () => {
  const m = await mcp([]);
  const r = await status(m);
  assert.equal(r.sc.connection.state, 'not_connected');
  assert.equal(r.sc.diagnosis.code, 'not_connected');
  const rd = await m.call({ action: 'read' });
  assert.equal(rd.isError, true);
  assert.equal(rd.sc.diagnosis.code, 'not_connected');
});

test('no watcher: frames from Flutter.Frame events; a watcher registered later takes over', async () => {
  const s = await sim(['--no-watcher']);
  const m = await mcp(['--vm-service-uri-file', s.uriFile]);
  let r = await until(async () => {
    const x = await m.call({ action: 'read' });
    return x.sc.summary?.frames > 0 && x;
  }, { what: 'frames from events' });
  assert.equal(r.isError, false, r.text);
  assert.equal(r.sc.connection.watcher, 'missing');
  assert.equal(r.sc.connection.frameSource, 'frameEvents');
  assert.equal(r.sc.connection.watcherVersion, undefined, 'the stand-in is not a watcher version');
  assert.ok(r.sc.warnings.some((w) => /no telescope watcher/.test(w) && /kReleaseMode/.test(w)), r.text);
  await s.cmd('watcher on');
  await until(async () => (await status(m)).sc.connection.watcher === 'present', { what: 'watcher picked up' });
  r = await m.call({ action: 'read' });
  assert.equal(r.isError, false, r.text);
  assert.equal(r.sc.connection.frameSource, undefined);
  assert.ok(!(r.sc.warnings ?? []).some((w) => /no telescope watcher/.test(w)), r.text);
});

test('a paused isolate answers isolate_paused at once; resume heals', async () => {
  const s = await sim([]);
  const m = await mcp(['--vm-service-uri-file', s.uriFile, '--call-timeout-ms', '1500']);
  await status(m);
  await s.cmd('pause');
  await until(async () => (await status(m)).sc.connection.paused === true, { what: 'pause seen' });
  const t0 = Date.now();
  const r = await m.call({ action: 'read' });
  assert.equal(r.isError, true);
  assert.equal(r.sc.diagnosis.code, 'isolate_paused');
  assert.ok(Date.now() - t0 < 1500, 'answered within the call timeout');
  await s.cmd('resume');
  await until(async () => !(await m.call({ action: 'read' })).isError, { what: 'read after resume' });
});

test('hot restart is followed to the new isolate; hot reload keeps it', async () => {
  const s = await sim([]);
  const m = await mcp(['--vm-service-uri-file', s.uriFile]);
  const before = (await status(m)).sc.connection.isolateId;
  await s.cmd('reload');
  await sleep(100);
  assert.equal((await status(m)).sc.connection.isolateId, before, 'reload keeps the isolate');
  await s.cmd('restart');
  const after = await until(async () => {
    const id = (await status(m)).sc.connection.isolateId;
    return id && id !== before ? id : null;
  }, { what: 'new isolate after restart' });
  assert.notEqual(after, before);
  const r = await m.call({ action: 'read' });
  assert.equal(r.isError, false, r.text);
});

test('the app dies: not_connected; it comes back elsewhere: reconnected via the URI file', async () => {
  const dir = tempDir();
  const uriFile = join(dir, 'uri');
  const s1 = await startSim([], { uriFile });
  const m = await mcp(['--vm-service-uri-file', uriFile]);
  assert.equal((await status(m)).sc.connection.state, 'connected');
  await s1.kill('SIGKILL');
  let r = await m.call({ action: 'read' });
  assert.equal(r.isError, true);
  assert.equal(r.sc.diagnosis.code, 'not_connected');
  const s2 = await startSim([], { uriFile });
  cleanup.push(() => s2.kill());
  assert.notEqual(s2.port, s1.port);
  r = await until(async () => { const x = await m.call({ action: 'read' }); return x.isError ? null : x; },
    { timeoutMs: 8000, what: 'reconnect' });
  assert.equal(r.sc.connection.state, 'connected');
});

test('100 concurrent status calls are all answered', async () => {
  const s = await sim([]);
  const m = await mcp(['--vm-service-uri-file', s.uriFile]);
  const rs = await Promise.all(Array.from({ length: 100 }, () => status(m)));
  assert.equal(rs.length, 100);
  for (const r of rs) assert.equal(r.sc.connection.state, 'connected');
});

test('a 20 MB reply is handled; a malformed one is diagnosed and the server keeps serving', async () => {
  const s = await sim([]);
  const m = await mcp(['--vm-service-uri-file', s.uriFile, '--call-timeout-ms', '1500']);
  await status(m);
  await s.cmd('reply huge 20');
  let r = await m.call({ action: 'read' });
  assert.ok(r.text.length < 65536);
  await s.cmd('reply malformed');
  r = await m.call({ action: 'read' });
  assert.equal(r.isError, true, 'a malformed reply is not served as data');
  assert.ok(r.sc.diagnosis, r.text);
  await s.cmd('reply wrongtypes');
  r = await m.call({ action: 'read' });
  assert.equal(r.isError, true, 'a reply with wrong field types is rejected');
  await s.cmd('reply normal');
  r = await until(async () => { const x = await m.call({ action: 'read' }); return x.isError ? null : x; }, { what: 'healthy read' });
  assert.equal(r.sc.connection.state, 'connected');
});

test('web (DWDS) flavour end to end', async () => {
  const s = await sim(['--mode', 'web']);
  const m = await mcp(['--vm-service-uri-file', s.uriFile]);
  const st = await status(m);
  assert.equal(st.sc.connection.runtime, 'web');
  assert.equal(st.sc.connection.isolateId, '1');
  const r = await m.call({ action: 'capture', durationMs: 300 });
  assert.equal(r.isError, false, r.text);
  assert.ok(r.sc.summary.frames > 0);
});

test('only allowlisted VM-service methods were ever sent', async () => {
  const s = await sim([]);
  const m = await mcp(['--vm-service-uri-file', s.uriFile]);
  await status(m);
  await m.call({ action: 'capture', durationMs: 300, trackWidgets: true });
  const allowed = new Set(['getVersion', 'getVM', 'getIsolate', 'streamListen', 'streamCancel',
    '_flutter.listViews', 'ext.telescope.frames', 'ext.flutter.profileWidgetBuilds',
    'ext.flutter.profileRenderObjectLayouts', 'ext.flutter.profileRenderObjectPaints',
    'ext.flutter.inspector.trackRebuildDirtyWidgets', 'ext.flutter.inspector.widgetLocationIdMap',
    'ext.ui.window.scheduleFrame', 'getVMTimelineFlags', 'setVMTimelineFlags', 'getVMTimeline',
    'getVMTimelineMicros', 'getCpuSamples']); // never clearVMTimeline: DevTools shares that buffer
  const methods = await s.methods();
  assert.ok(methods.length > 0);
  for (const meth of methods) assert.ok(allowed.has(typeof meth === 'string' ? meth : meth.method), `sent ${JSON.stringify(meth)}`);
});

// Issue 21 item 7: a dropped socket is not a VM gone. The server dials the
// same URI again at once; the same VM answering keeps the app as it was, so
// the timeline streams a session added are still taken away at its stop.
test('a dropped socket to a VM that lives on: reconnected at once, timeline streams set back at stop', async () => {
  const s = await sim(['--mode', 'vm', '--timeline-streams', 'Dart', '--seed', '8']);
  const m = await mcp(['--vm-service-uri', s.httpUri]);
  const r0 = await m.call({ action: 'start' });
  assert.equal(r0.isError, false, r0.text);
  await until(async () => (await s.stats()).recordedStreams.includes('GC'), { what: 'GC recorded' });
  assert.match(await s.cmd('drop'), /^ok/);
  await until(async () => (await s.stats()).connections === 1,
    { what: 'the server back on the same VM with no call made', timeoutMs: 3000 * TIMEOUT_SCALE });
  await s.drawn(10);
  const r1 = await m.call({ action: 'stop' });
  assert.equal(r1.isError, false, r1.text);
  assert.ok(r1.sc.session.framesSeen > 0, r1.text);
  assert.deepEqual((await s.stats()).recordedStreams, ['Dart'], 'ours taken away on the same VM');
});

// A VM that is really gone is still reported as gone.
test('a VM that went away: the one redial fails and the next call says not_connected', async () => {
  const s = await sim(['--mode', 'vm', '--seed', '9']);
  const m = await mcp(['--vm-service-uri', s.httpUri]);
  assert.equal((await status(m)).sc.connection.state, 'connected');
  await s.kill();
  const r = await m.call({ action: 'read' });
  assert.equal(r.isError, true, r.text);
  assert.equal(r.sc.diagnosis.code, 'not_connected', r.text);
});

// Issue 21 item 3: the VM drops Extension events nobody listens to, so on a
// direct connection the server connects and subscribes at launch when it is
// given a URI: the first read holds the frames the app drew before it.
test('a URI given at launch: the first read holds the frames drawn before the first call', async () => {
  const s = await sim(['--mode', 'vm', '--no-watcher', '--seed', '10']);
  const m = await mcp(['--vm-service-uri', s.httpUri]);
  await until(async () => (await s.stats()).connections === 1,
    { what: 'connected at launch, no call made', timeoutMs: 3000 * TIMEOUT_SCALE });
  await s.drawn(40);
  const r = await m.call({ action: 'read' });
  assert.equal(r.isError, false, r.text);
  assert.ok(r.sc.summary?.frames >= 30, `the first read got ${r.sc.summary.frames} frames drawn before it`);
});
