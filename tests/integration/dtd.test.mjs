// Issue 22, first part: finding the app through the Dart Tooling Daemon.
// The real telescope-mcp (SDK client) against telescope-dtd, the stand-in
// for dart-lang/sdk's pkg/dtd_impl, with telescope-sim apps registered the
// way an IDE registers the apps it launches (`telescope-dtd register`, the
// trusted client secret).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startSim, startMcp, startDtd, until, assertNoTokenLeak, transcript, BUILD } from './harness.mjs';

const run = promisify(execFile);
const cleanup = [];
after(async () => { for (const c of cleanup.reverse()) await c(); assertNoTokenLeak(); });
async function sim(args = []) { const s = await startSim(args); cleanup.push(() => s.kill()); return s; }
async function mcp(args, opts) { const m = await startMcp(args, opts); cleanup.push(() => m.close()); return m; }

// Starts telescope-dtd --machine; resolves with {uri, secret, child}.
async function dtd(args = []) { const d = await startDtd(args); cleanup.push(d.kill); return d; }

// What an IDE does for an app it launched (ConnectedApp.registerVmService).
async function register(d, s, name) {
  const { stdout } = await run(join(BUILD, 'telescope-dtd'),
    ['register', '--dtd-uri', d.uri, '--secret', d.secret, '--vm-service-uri', s.wsUri, '--name', name]);
  assert.deepEqual(JSON.parse(stdout), { type: 'Success' });
}
async function unregister(d, s) {
  const { stdout } = await run(join(BUILD, 'telescope-dtd'),
    ['unregister', '--dtd-uri', d.uri, '--secret', d.secret, '--vm-service-uri', s.wsUri]);
  assert.deepEqual(JSON.parse(stdout), { type: 'Success' });
}

const status = (m, extra = {}) => m.call({ action: 'status', ...extra });

test('the stand-in answers as dtd_impl does: the secret, the list, the events', async () => {
  const d = await dtd();
  const s = await sim();
  await assert.rejects(run(join(BUILD, 'telescope-dtd'),
    ['register', '--dtd-uri', d.uri, '--secret', 'wrong', '--vm-service-uri', s.wsUri]),
  (e) => JSON.parse(e.stdout).code === 142, 'a wrong secret is 142 Permission denied');
  const list = async () => JSON.parse((await run(join(BUILD, 'telescope-dtd'), ['list', '--dtd-uri', d.uri])).stdout);
  assert.deepEqual(await list(), { type: 'VmServicesResponse', vmServices: [] });
  await register(d, s, 'demo');
  assert.deepEqual(await list(), { type: 'VmServicesResponse', vmServices: [{ uri: s.wsUri, name: 'demo' }] });
  await unregister(d, s);
  assert.deepEqual((await list()).vmServices, []);
});

test('one registered app: status connects to it, a capture measures it', async () => {
  const d = await dtd();
  const s = await sim(['--seed', '3']);
  await register(d, s, 'demo app');
  const m = await mcp(['--dtd-uri', d.uri]);
  const { sc, isError, text } = await status(m);
  assert.equal(isError, false);
  assert.equal(sc.connection.state, 'connected', JSON.stringify(sc));
  assert.equal(sc.connection.watcher, 'present');
  assert.equal(sc.dtd.state, 'connected');
  assert.equal(sc.dtd.apps.length, 1);
  assert.equal(sc.dtd.apps[0].name, 'demo app');
  assert.equal(sc.dtd.apps[0].inUse, true);
  assert.match(text, /^dtd: .* lists 1 app: demo app ws:\/\/127\.0\.0\.1:\d+\/…redacted…\/ws \(in use\)$/m);
  const cap = await m.call({ action: 'capture', durationMs: 600 });
  assert.equal(cap.isError, false, cap.text);
  assert.ok(cap.sc.summary.frames > 10, `frames measured: ${cap.sc.summary.frames}`);
  assert.ok((await s.methods()).includes('ext.telescope.frames'), 'the capture went to the registered app');
});

test('two apps: status lists both and asks which; vmServiceUri picks one', async () => {
  const d = await dtd();
  const a = await sim(), b = await sim();
  await register(d, a, 'first');
  await register(d, b, 'second');
  const m = await mcp([]);
  const r = await status(m, { dtdUri: d.uri }); // the argument, as vmServiceUri
  assert.equal(r.isError, false, 'status reports, it does not fail');
  assert.equal(r.sc.diagnosis.code, 'app_choice');
  assert.equal(r.sc.connection.state, 'not_connected');
  assert.deepEqual(r.sc.dtd.apps.map((x) => x.name), ['first', 'second']);
  for (const x of r.sc.dtd.apps) assert.match(x.vmServiceUri, /\/…redacted…\/ws$/);
  assert.match(r.text, /^diagnosis app_choice: .*vmServiceUri/m);
  assert.match(r.text, /^dtd: .* lists 2 apps: first ws:\/\/\S+, second ws:\/\/\S+$/m);
  // Another action cannot guess either.
  const read = await m.call({ action: 'read' });
  assert.equal(read.isError, true);
  assert.equal(read.sc.diagnosis.code, 'app_choice');
  // The agent picks one as status listed it (token redacted): status
  // connects to it and marks it in use; a capture measures that one.
  const picked = await status(m, { vmServiceUri: r.sc.dtd.apps[1].vmServiceUri });
  assert.equal(picked.sc.connection.state, 'connected', JSON.stringify(picked.sc));
  assert.deepEqual(picked.sc.dtd.apps.map((x) => !!x.inUse), [false, true]);
  const cap = await m.call({ action: 'capture', durationMs: 300, vmServiceUri: r.sc.dtd.apps[1].vmServiceUri });
  assert.equal(cap.isError, false, cap.text);
  assert.ok((await b.methods()).includes('ext.telescope.frames'), 'measured the second app');
  assert.ok(!(await a.methods()).includes('ext.telescope.frames'), 'not the first');
  // Once one is in use, calls without vmServiceUri keep it (and say why).
  const kept = await status(m);
  assert.equal(kept.sc.connection.state, 'connected');
  assert.deepEqual(kept.sc.dtd.apps.map((x) => !!x.inUse), [false, true]);
  assert.match(kept.sc.warnings.join('\n'), /lists 2 apps; the one in use was kept/);
  assert.equal((await m.call({ action: 'read' })).isError, false);
  // The full URI works as well; a redacted one naming no listed app does not.
  assert.equal((await status(m, { vmServiceUri: a.wsUri })).sc.connection.state, 'connected');
  const none = await status(m, { vmServiceUri: 'ws://127.0.0.1:1/\u2026redacted\u2026/ws' });
  assert.equal(none.sc.diagnosis.code, 'app_choice');
  assert.match(none.sc.diagnosis.evidence.detail, /names none of the apps/);
});

test('two apps listed under one name: app names neither, it asks which', async () => {
  const d = await dtd();
  const a = await sim(), b = await sim();
  await register(d, a, 'demo');
  await register(d, b, 'demo');
  const m = await mcp(['--dtd-uri', d.uri]);
  for (const action of ['status', 'read']) {
    const r = await m.call({ action, app: 'demo' });
    assert.equal(r.sc.diagnosis?.code, 'app_choice', `${action}: ${r.text}`);
    assert.equal(r.isError, action !== 'status');
  }
  assert.ok(!(await a.methods()).includes('ext.telescope.frames'), 'the first was not picked silently');
  assert.ok(!(await b.methods()).includes('ext.telescope.frames'), 'nor the second');
});

test('an app that unregisters, or dies, is said', async () => {
  const d = await dtd();
  const s = await sim();
  await register(d, s, 'leaving');
  const m = await mcp(['--dtd-uri', d.uri]);
  assert.equal((await status(m)).sc.connection.state, 'connected');
  await unregister(d, s); // the IDE detached
  const r = await until(async () => { const x = await status(m); return x.sc.diagnosis?.code === 'no_app' && x; },
    { what: 'no_app after the unregistration' });
  assert.match(r.sc.diagnosis.evidence.detail, /the app 'leaving' unregistered/);
  assert.deepEqual(r.sc.dtd.changes.at(-1), { event: 'unregistered', name: 'leaving', vmServiceUri: r.sc.dtd.changes.at(-1).vmServiceUri });
  assert.match(r.text, /^dtd: leaving unregistered$/m);

  // The daemon notices an app that dies (its own VM-service connection ends).
  const t = await sim();
  await register(d, t, 'doomed');
  assert.equal((await status(m)).sc.connection.state, 'connected');
  await t.kill();
  const r2 = await until(async () => { const x = await status(m); return x.sc.diagnosis?.code === 'no_app' && x; },
    { what: 'no_app after the app died' });
  assert.match(r2.sc.diagnosis.evidence.detail, /the app 'doomed' unregistered/);
  const none = await m.call({ action: 'capture', durationMs: 200 });
  assert.equal(none.isError, true);
  assert.equal(none.sc.diagnosis.code, 'no_app');
});

test('no app yet: status says to start one', async () => {
  const d = await dtd();
  const m = await mcp(['--dtd-uri', d.uri]);
  const r = await status(m);
  assert.equal(r.sc.diagnosis.code, 'no_app');
  assert.match(r.sc.diagnosis.hint, /Start the app/);
  assert.deepEqual(r.sc.dtd.apps, []);
});

test('a VM-service URI as the DTD URI, and the reverse, are named', async () => {
  const s = await sim();
  const d = await dtd();
  const m = await mcp(['--dtd-uri', s.wsUri]);
  let r = await status(m);
  assert.equal(r.isError, false);
  assert.equal(r.sc.diagnosis.code, 'dtd_unusable');
  assert.equal(r.sc.dtd.state, 'not_dtd');
  assert.match(r.sc.diagnosis.evidence.detail, /is a Dart VM service, not the Dart Tooling Daemon: pass it as vmServiceUri/);
  r = await m.call({ action: 'read' });
  assert.equal(r.isError, true);
  assert.equal(r.sc.diagnosis.code, 'dtd_unusable');
  // The other way round: the DTD's URI where the app's belongs. This DTD
  // answers getVM -32000 (a newer dtd_impl's _fallback throws a RangeError
  // on a name without a dot), an older one -32601: both are named.
  const m2 = await mcp([]);
  r = await status(m2, { vmServiceUri: d.uri });
  assert.equal(r.sc.diagnosis.code, 'connection_rejected');
  assert.match(r.sc.diagnosis.evidence.detail, /the Dart Tooling Daemon's, not a VM service's: pass it as dtdUri/);
});

test('a DTD without ConnectedApp, a wrong secret path, a remote host', async () => {
  const old = await dtd(['--no-connected-app']);
  const m = await mcp([]);
  let r = await status(m, { dtdUri: old.uri });
  assert.equal(r.sc.diagnosis.code, 'dtd_unusable');
  assert.equal(r.sc.dtd.state, 'no_connected_app');
  assert.match(r.sc.diagnosis.evidence.detail, /does not offer the ConnectedApp service/);
  r = await status(await mcp([]), { vmServiceUri: old.uri }); // getVM: -32601 there
  assert.equal(r.sc.diagnosis.code, 'connection_rejected');
  assert.match(r.sc.diagnosis.evidence.detail, /the Dart Tooling Daemon's, not a VM service's/);
  const d = await dtd();
  const u = new URL(d.uri);
  r = await status(m, { dtdUri: `ws://${u.host}/AAAAAAAAAAA=` });
  assert.equal(r.sc.diagnosis.code, 'dtd_unusable');
  assert.equal(r.sc.dtd.state, 'refused');
  assert.match(r.sc.diagnosis.evidence.detail, /Dart Tooling Daemon refused the WebSocket upgrade \(HTTP 403/);
  r = await status(m, { dtdUri: 'ws://192.0.2.7:4000/AAAAAAAAAAA=' });
  assert.equal(r.sc.diagnosis.code, 'dtd_unusable');
  assert.match(r.sc.diagnosis.evidence.detail, /loopback/);
});

test('the printed line works as the URI, and at trace level no secret is logged', async () => {
  const d = await dtd();
  const s = await sim();
  await register(d, s, 'traced');
  const m = await mcp(['--log-level', 'trace',
    '--dtd-uri', `The Dart Tooling Daemon is available at: ${d.uri}`]);
  const r = await status(m);
  assert.equal(r.sc.connection.state, 'connected', JSON.stringify(r.sc));
  assert.ok(m.stderr.length > 0, 'trace logging wrote something to scan');
  // assertNoTokenLeak (after) scans it, with the daemon's auth code and
  // secret among the tokens.
});

test('the command line: --dtd-uri and a VM-service URI exclude each other', () => {
  const bin = join(BUILD, 'telescope-mcp');
  const dtdUri = 'ws://127.0.0.1:1/AAAAAAAAAAA=';
  let r = spawnSync(bin, ['--dtd-uri', dtdUri, '--vm-service-uri', 'ws://127.0.0.1:2/x=/ws'], { input: '', encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--dtd-uri and --vm-service-uri exclude each other/);
  r = spawnSync(bin, ['--sim', '--dtd-uri', dtdUri], { input: '', encoding: 'utf8' });
  assert.equal(r.status, 2, 'after --sim it is the sim\'s option: the sim refuses it');
  r = spawnSync(bin, ['--dtd-uri', dtdUri, '--sim'], { input: '', encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--sim and --dtd-uri exclude each other/);
  r = spawnSync(bin, [], { input: '', encoding: 'utf8',
    env: { ...process.env, TELESCOPE_DTD_URI: dtdUri, TELESCOPE_VM_SERVICE_URI: 'ws://127.0.0.1:2/x=/ws' } });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /TELESCOPE_DTD_URI and TELESCOPE_VM_SERVICE_URI exclude each other/);
  // A flag overrides the other kind's variable.
  r = spawnSync(bin, ['--dtd-uri', dtdUri], { input: '', encoding: 'utf8',
    env: { ...process.env, TELESCOPE_VM_SERVICE_URI: 'ws://127.0.0.1:2/x=/ws' } });
  assert.equal(r.status, 0, r.stderr);
  assert.match(spawnSync(bin, ['--help'], { encoding: 'utf8' }).stdout, /--dtd-uri URI/);
});

// Issue 22 item 4: `check --dtd-uri` measures the DTD's one app; with two it
// measures nothing (exit 2) and its diagnosis lists them; the URI kinds
// exclude each other on its command line too.
test('check --dtd-uri: the one app measured; two listed, none guessed; --app picks one by name', async () => {
  const bin = join(BUILD, 'telescope-mcp');
  const d = await dtd();
  const a = await sim(['--seed', '3']);
  await register(d, a, 'phone');
  const one = spawnSync(bin, ['check', '--dtd-uri', d.uri, '--duration-ms', '600'], { encoding: 'utf8', timeout: 30000 });
  assert.equal(one.status, 0, one.stderr + one.stdout);
  assert.match(one.stdout, /\d+ frames/, one.stdout);
  assert.ok((await a.methods()).includes('ext.telescope.frames'), 'check measured the registered app');
  const b = await sim(['--seed', '4']);
  await register(d, b, 'tablet');
  const two = spawnSync(bin, ['check', '--dtd-uri', d.uri, '--duration-ms', '300'], { encoding: 'utf8', timeout: 30000 });
  assert.equal(two.status, 2, two.stderr + two.stdout);
  assert.match(two.stdout + two.stderr, /app_choice|several apps/, two.stdout + two.stderr);
  assert.match(two.stdout + two.stderr, /phone/);
  assert.match(two.stdout + two.stderr, /tablet/);
  assert.match(two.stdout, /--app NAME/);
  // --app picks one of them by the name it registered with.
  assert.ok(!(await b.methods()).includes('ext.telescope.frames'), 'nothing asked the tablet yet');
  const named = spawnSync(bin, ['check', '--dtd-uri', d.uri, '--app', 'tablet', '--duration-ms', '600'], { encoding: 'utf8', timeout: 30000 });
  assert.equal(named.status, 0, named.stderr + named.stdout);
  assert.match(named.stdout, /\d+ frames/, named.stdout);
  assert.ok((await b.methods()).includes('ext.telescope.frames'), 'check --app measured the tablet');
  const none = spawnSync(bin, ['check', '--dtd-uri', d.uri, '--app', 'watch', '--duration-ms', '300'], { encoding: 'utf8', timeout: 30000 });
  assert.equal(none.status, 2, none.stderr + none.stdout);
  assert.match(none.stdout, /--app: the Dart Tooling Daemon lists no app of that name/);
  assert.match(none.stdout, /app: phone ws:\/\/\S+\n {2}app: tablet ws:\/\/\S+/);
  const noDtd = spawnSync(bin, ['check', '--vm-service-uri', a.wsUri, '--app', 'phone', '--duration-ms', '300'], { encoding: 'utf8' });
  assert.equal(noDtd.status, 64);
  assert.match(noDtd.stderr, /--app names an app the Dart Tooling Daemon lists: give --dtd-uri too/);
  const both = spawnSync(bin, ['check', '--dtd-uri', d.uri, '--vm-service-uri', a.wsUri, '--duration-ms', '300'], { encoding: 'utf8' });
  assert.equal(both.status, 64);
  assert.match(both.stderr, /exclude each other/);
  transcript.push(one.stdout, one.stderr, two.stdout, two.stderr, named.stdout, named.stderr, none.stdout); // no token in what check printed
});
