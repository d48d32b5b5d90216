// Issue 19 item 6 through the official SDK client against telescope-sim: a
// diagnosis says in the text what an agent needs to act on. A malformed
// vmServiceUri says what is malformed (evidence.detail, not only "no app is
// connected"); a plain Dart program (no Flutter extensions, no Flutter.Frame
// events: the sim's --plain-dart) is "not a Flutter app", not "add the
// watcher", while a Flutter app without the watcher is still measured.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSim, startMcp, assertNoTokenLeak, sleep } from './harness.mjs';

const cleanup = [];
after(async () => { for (const c of cleanup.reverse()) await c(); assertNoTokenLeak(); });
async function sim(args) { const s = await startSim(args); cleanup.push(() => s.kill()); return s; }
async function mcp(args) { const m = await startMcp(args); cleanup.push(() => m.close()); return m; }

test('a malformed vmServiceUri: the text says what is malformed', async () => {
  const m = await mcp([]);
  for (const [uri, why] of [
    ['ftp://127.0.0.1:8181/abc=/', /scheme must be http, https, ws or wss/],
    ['http://127.0.0.1:99999/abc=/', /bad port \(expected 1-65535\)/],
    ['http://user@127.0.0.1:8181/abc=/', /must not carry user info/],
  ]) {
    const r = await m.call({ action: 'status', vmServiceUri: uri });
    assert.equal(r.sc.diagnosis.code, 'not_connected', r.text);
    assert.match(r.sc.diagnosis.evidence.detail, why);
    assert.ok(r.text.includes(`Detail: ${r.sc.diagnosis.evidence.detail}.`), r.text);
    assert.match(r.text, why);
    assert.ok(r.text.includes(r.sc.diagnosis.hint), r.text);
  }
  // With no URI at all there is no detail to give, and none is invented.
  const r = await m.call({ action: 'status' });
  assert.equal(r.sc.diagnosis.code, 'not_connected');
  assert.equal(r.sc.diagnosis.evidence?.detail, undefined);
  assert.doesNotMatch(r.text, /Detail:/);
});

test('a plain Dart program is not a Flutter app: the right advice, not "add the watcher"', async () => {
  const s = await sim(['--seed', '3', '--plain-dart']);
  const m = await mcp(['--vm-service-uri-file', s.uriFile]);
  await sleep(300); // the sim "draws" frames; a plain Dart program posts none of them
  const st = await m.call({ action: 'status' });
  assert.equal(st.sc.connection.state, 'connected', st.text);
  assert.equal(st.sc.diagnosis?.code, 'not_flutter', st.text);
  assert.match(st.text, /^status: /);
  assert.match(st.text, /diagnosis not_flutter: Not a Flutter app/);
  assert.match(st.text, /plain Dart program/);
  assert.match(st.text, /Point vmServiceUri at the VM service of the Flutter app/);
  assert.doesNotMatch(st.text, /TelescopePlugin|registerWatcher|add the watcher/i, st.text);
  // Every action that needs the app says the same, as an error.
  for (const action of ['read', 'start']) {
    const r = await m.call({ action });
    assert.equal(r.isError, true, `${action}: ${r.text}`);
    assert.equal(r.sc.diagnosis?.code, 'not_flutter', `${action}: ${r.text}`);
    assert.match(r.text, /diagnosis not_flutter: /);
  }
});

test('a Flutter app without the watcher is still measured (not not_flutter)', async () => {
  const s = await sim(['--seed', '3', '--no-watcher', '--scenario', 'steady']);
  const m = await mcp(['--vm-service-uri-file', s.uriFile]);
  const st = await m.call({ action: 'status' });
  assert.notEqual(st.sc.diagnosis?.code, 'not_flutter', st.text);
  const r = await m.call({ action: 'capture', durationMs: 800 });
  assert.equal(r.isError, false, r.text);
  assert.ok(r.sc.summary.frames > 0, r.text);
});
