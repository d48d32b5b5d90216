// Issue 22 item 2-3: several apps at once, through the official SDK client.
// Each app (a telescope-sim: a janky "phone", a steady "tablet") has its own
// connection, sessions and cursors; sessions on both run at the same time
// and never mix frames; a call that names no app while several are
// connected is answered with the list (app_choice), never a guess; an app
// that dies leaves the other's session alone, and its finished sessions stay
// readable and comparable; compare takes a session of each.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startSim, startMcp, startDtd, sleep, until, assertNoTokenLeak, BUILD } from './harness.mjs';

const run = promisify(execFile);
const cleanup = [];
after(async () => { for (const c of cleanup.reverse()) await c(); assertNoTokenLeak(); });
async function sim(args = []) { const s = await startSim(['--seed', '5', ...args]); cleanup.push(() => s.kill()); return s; }
async function mcp(args = []) { const m = await startMcp(args); cleanup.push(() => m.close()); return m; }

test('two apps: named by URI, sessions at once on each, never mixed; no name, no guess', async () => {
  // Different frame rates, so a session holding the other app's frames shows.
  const phone = await sim(['--scenario', 'janky', '--fps', '60']);
  const tablet = await sim(['--scenario', 'steady', '--fps', '120']);
  const m = await mcp();
  const a = await m.call({ action: 'status', app: phone.wsUri });
  assert.equal(a.isError, false, a.text);
  assert.equal(a.sc.connection.state, 'connected');
  assert.equal(a.sc.apps, undefined, 'one app known: no list');
  const b = await m.call({ action: 'status', vmServiceUri: tablet.wsUri }); // the same as app
  assert.equal(b.sc.connection.state, 'connected', b.text);
  assert.equal(b.sc.app, 'app 2');
  assert.deepEqual(b.sc.apps.map((x) => [x.app, x.state]), [['app 1', 'connected'], ['app 2', 'connected']]);
  for (const x of b.sc.apps) assert.match(x.vmServiceUri, /…redacted…/);
  // No app named: the list, and which to name.
  const none = await m.call({ action: 'start' });
  assert.equal(none.isError, true);
  assert.equal(none.sc.diagnosis.code, 'app_choice', none.text);
  assert.equal(none.sc.apps.length, 2);
  assert.match(none.text, /app_choice/);
  assert.match(none.text, /^apps: app 1 \(connected\), app 2 \(connected, latest\)$/m, none.text);
  // Sessions on both at once, named by label.
  const [b1, b2] = await Promise.all([phone.stats(), tablet.stats()]);
  const [s1, s2] = await Promise.all([m.call({ action: 'start', app: 'app 1' }), m.call({ action: 'start', app: 'app 2' })]);
  assert.equal(s1.isError, false, s1.text);
  assert.equal(s2.isError, false, s2.text);
  assert.notEqual(s1.sc.session.id, s2.sc.session.id, 'session ids are never shared between apps');
  await Promise.all([phone.drawn(120), tablet.drawn(240)]); // 2 s of each
  const [e1, e2] = await Promise.all([
    m.call({ action: 'stop', app: 'app 1', detail: 'frames', limit: 1000 }),
    m.call({ action: 'stop', app: 'app 2', detail: 'frames', limit: 1000 })]);
  const [q1, q2] = await Promise.all([phone.stats(), tablet.stats()]);
  for (const [e, name, before, after, fps] of [[e1, 'app 1', b1, q1, 60], [e2, 'app 2', b2, q2, 120]]) {
    assert.equal(e.isError, false, e.text);
    assert.equal(e.sc.app, name);
    // Its own app's frames only: contiguous seqs within what that app drew
    // while the session was open, at least fps x 2 s of them.
    const seqs = e.sc.frames.map((f) => f.seq);
    assert.ok(seqs.every((q, i) => i === 0 || q === seqs[i - 1] + 1), `${name}: seqs not contiguous`);
    assert.ok(seqs[0] > before.lastSeq && seqs.at(-1) <= after.lastSeq,
      `${name}: seqs ${seqs[0]}..${seqs.at(-1)}, the app drew ${before.lastSeq}..${after.lastSeq}`);
    assert.ok(seqs.length >= fps * 2, `${name}: ${seqs.length} frames at ${fps} fps in 2 s`);
  }
  assert.ok(e1.sc.summary.jank.frames > 0, e1.text);
  assert.match(e1.text, /^app: app 1$/m, 'the text says which app');
  assert.equal(e2.sc.summary.jank.frames, 0, e2.text);
  // A read naming a session needs no app: the one that holds it answers.
  const again = await m.call({ action: 'read', session: e2.sc.session.id });
  assert.equal(again.isError, false, again.text);
  assert.equal(again.sc.app, 'app 2', again.text);
  assert.equal(again.sc.session.id, e2.sc.session.id);
  // compare across apps: the janky phone against the steady tablet.
  const cmp = await m.call({ action: 'compare', baseline: e1.sc.session.id, candidate: e2.sc.session.id });
  assert.equal(cmp.isError, false, cmp.text);
  assert.equal(cmp.sc.comparison.verdict, 'improved', cmp.text);
  assert.match(cmp.text, /improved/);
  // Each side's own refresh rate, and the difference named: not comparable.
  assert.equal(cmp.sc.comparison.baseline.refreshRate, 60, cmp.text);
  assert.equal(cmp.sc.comparison.candidate.refreshRate, 120, cmp.text);
  assert.ok(cmp.sc.comparison.warnings.some((w) => w.code === 'refresh_rate_differs' && w.notComparable), cmp.text);
});

test('an app that dies leaves the other\'s session alone; its sessions stay readable', async () => {
  const phone = await sim(['--scenario', 'janky']);
  const tablet = await sim(['--scenario', 'steady']);
  const m = await mcp();
  for (const s of [phone, tablet]) assert.equal((await m.call({ action: 'status', app: s.wsUri })).isError, false);
  const live = await m.call({ action: 'start', app: 'app 2' });
  assert.equal(live.isError, false, live.text);
  const cap = await m.call({ action: 'capture', app: 'app 1', durationMs: 800 });
  assert.equal(cap.isError, false, cap.text);
  await phone.kill();
  // One app is connected (and measuring): calls without app go to it, once
  // the server has seen the other's socket close (a fixed 500 ms was not
  // always enough under valgrind on a loaded machine).
  const st = await until(async () => {
    const r = await m.call({ action: 'status' });
    return r.sc.app === 'app 2' ? r : null;
  }, { what: 'the server to see app 1 gone', everyMs: 100 });
  assert.equal(st.sc.app, 'app 2', st.text);
  assert.deepEqual(st.sc.apps.map((x) => x.state), ['not_connected', 'connected']);
  const stop = await m.call({ action: 'stop' });
  assert.equal(stop.isError, false, stop.text);
  assert.equal(stop.sc.session.id, live.sc.session.id);
  assert.equal(stop.sc.diagnosis, undefined, stop.text);
  assert.ok(stop.sc.summary.frames > 20, stop.text);
  // The dead app's capture is still there to compare.
  const cmp = await m.call({ action: 'compare', baseline: cap.sc.session.id, candidate: stop.sc.session.id });
  assert.equal(cmp.isError, false, cmp.text);
  assert.ok(cmp.sc.comparison, cmp.text);
});

// Apps found through the Dart Tooling Daemon are known by the names they
// registered with: `app: "tablet"`.
test('DTD: apps by their registered names', async () => {
  const dtd = await startDtd();
  cleanup.push(dtd.kill);
  const { uri, secret } = dtd;
  const phone = await sim(['--scenario', 'janky']);
  const tablet = await sim(['--scenario', 'steady']);
  for (const [s, name] of [[phone, 'phone'], [tablet, 'tablet']])
    await run(join(BUILD, 'telescope-dtd'), ['register', '--dtd-uri', uri, '--secret', secret, '--vm-service-uri', s.wsUri, '--name', name]);
  const m = await mcp(['--dtd-uri', uri]);
  const t = await m.call({ action: 'capture', app: 'tablet', durationMs: 600 });
  assert.equal(t.isError, false, t.text);
  assert.equal(t.sc.summary.jank.frames, 0, t.text);
  const p = await m.call({ action: 'capture', app: 'phone', durationMs: 1500 });
  assert.equal(p.isError, false, p.text);
  assert.ok(p.sc.summary.jank.frames > 0, p.text);
  assert.equal(p.sc.app, 'phone');
  const st = await m.call({ action: 'status', app: 'phone' });
  assert.deepEqual(st.sc.apps.map((x) => x.app), ['tablet', 'phone']);
  // Its vmServiceUri as the daemon lists it, token redacted, names it too.
  const shown = st.sc.dtd.apps.find((x) => x.name === 'tablet').vmServiceUri;
  assert.match(shown, /…redacted…/);
  const byUri = await m.call({ action: 'capture', app: shown, durationMs: 300 });
  assert.equal(byUri.isError, false, byUri.text);
  assert.equal(byUri.sc.app, 'tablet', byUri.text);
  assert.equal(byUri.sc.apps, undefined);
  const bad = await m.call({ action: 'status', app: 'watch' });
  assert.equal(bad.sc.diagnosis.code, 'app_choice', bad.text);
  assert.match(bad.sc.diagnosis.evidence?.detail ?? '', /no app is called "watch"/);
  // Registrations come and go while a session runs on the phone: a watch
  // registers and is measured, the tablet unregisters and dies; the phone's
  // session ends with everything it saw.
  const live = await m.call({ action: 'start', app: 'phone' });
  assert.equal(live.isError, false, live.text);
  const watch = await sim(['--scenario', 'steady']);
  await run(join(BUILD, 'telescope-dtd'), ['register', '--dtd-uri', uri, '--secret', secret, '--vm-service-uri', watch.wsUri, '--name', 'watch']);
  await run(join(BUILD, 'telescope-dtd'), ['unregister', '--dtd-uri', uri, '--secret', secret, '--vm-service-uri', tablet.wsUri]);
  await tablet.kill();
  const w = await m.call({ action: 'capture', app: 'watch', durationMs: 500 });
  assert.equal(w.isError, false, w.text);
  assert.equal(w.sc.app, 'watch');
  assert.ok(w.sc.summary.frames > 5, w.text);
  const stop = await m.call({ action: 'stop', app: 'phone' });
  assert.equal(stop.isError, false, stop.text);
  assert.equal(stop.sc.session.id, live.sc.session.id);
  assert.equal(stop.sc.diagnosis, undefined, stop.text);
  assert.ok(stop.sc.summary.frames > 20 && stop.sc.summary.jank.frames > 0, stop.text);
});

// Found by the model's second app: a stop with no session open joined a stop
// of another app that was still writing its answer (an idle app's stop waits
// on the empty-read decision), and handed out that app's session.
test('a stop with no session open never answers with another app\'s session', async () => {
  const quiet = await sim(['--scenario', 'idle']);
  const other = await sim(['--scenario', 'steady']);
  const m = await mcp();
  for (const s of [quiet, other]) assert.equal((await m.call({ action: 'status', app: s.wsUri })).isError, false);
  const st = await m.call({ action: 'start', app: 'app 1' });
  assert.equal(st.isError, false, st.text);
  const slow = m.call({ action: 'stop', app: 'app 1' }); // no frames: the decision takes a while
  await sleep(50);
  const none = await m.call({ action: 'stop', app: 'app 2' });
  assert.equal(none.isError, true, `app 2 has no session, yet: ${none.text}`);
  assert.match(none.text, /no session is active/);
  const done = await slow;
  assert.equal(done.sc.session.id, st.sc.session.id);
});

// The app the server was launched on (its URI file) named again by its URI
// is the same app, not a second one: calls that name none still go to it.
test('the launch app named by its own URI stays one app', async () => {
  const s = await sim(['--scenario', 'steady']);
  const m = await mcp(['--vm-service-uri-file', s.uriFile]);
  assert.equal((await m.call({ action: 'status' })).isError, false);
  const again = await m.call({ action: 'status', vmServiceUri: s.wsUri });
  assert.equal(again.isError, false, again.text);
  assert.equal(again.sc.apps, undefined, `one app, not two: ${again.text}`);
  const r = await m.call({ action: 'capture', durationMs: 300 });
  assert.equal(r.isError, false, r.text);
});
