// Workloads in the model (issue 32): the step lists a `capture` or a `start`
// carries, and the checks of one answer that says how its drive went
// (summary.workload, or a start's `drive`). The contract: docs/tool.md
// "Workload: the app plays the steps"; the wire: the watcher's `drive`
// (DRIVE.md §3). The judged app is telescope-sim, whose feed is on screen in
// the `scrolllist` scenario only: there `key:feed`, `type:ListView`,
// `type:Scrollable` (and no finder at all, for a drag) find the feed; in
// every other scenario nothing is on screen and every finder fails.
import { Violation } from './model.mjs';

const fail = (inv, msg) => { throw new Violation(inv, msg); };

const GOOD = ['key:feed', 'type:ListView', 'type:Scrollable', null];
// No widget, and 10 or 11 `Text`s on screen (several widgets): both fail.
const BAD = ['key:nope', 'type:Text'];
export const DRIVE_ID = /^(d\d+)\/r(\d+)\/s(\d+)$/;

// Short steps, so a sequence stays quick: a drag of 150 px at 400-800 px/s
// releases slowly enough that the feed settles within ~0.3 s.
function stepOf(r, bad) {
  const fin = bad ? r.pick(BAD) : r.pick(GOOD);
  const kind = bad ? r.pick(['tap', 'fling', 'scroll']) : r.weighted([[2, 'fling'], [2, 'scroll'], [3, 'tap'], [2, 'wait']]);
  const within = fin ? { in: fin } : {};
  switch (kind) {
  case 'fling': return { fling: { dy: r.pick([-150, 150]), velocity: r.pick([400, 800]), ...within } };
  case 'scroll': return { scroll: { dy: r.pick([-60, 60]), ms: r.pick([100, 200]), ...within } };
  case 'tap': return { tap: fin ?? 'key:feed' };
  default: return { wait: r.pick([0, 30, 80]) };
  }
}

// A workload: 1-2 steps, repeat 1-3, now and then one bad finder.
export function workloadArgs(r) {
  const n = r.int(1, 2);
  const badAt = r.chance(0.15) ? r.int(0, n - 1) : -1;
  const steps = Array.from({ length: n }, (_, i) => stepOf(r, i === badAt));
  return { steps, repeat: r.int(1, 3) };
}

// The finder a step looks up (a drag without `in` looks for the largest
// Scrollable), or null for a wait.
function finderOf(st) {
  if (st.tap) return { finder: st.tap };
  const drag = st.fling ?? st.scroll;
  if (!drag) return null;
  return drag.in ? { finder: drag.in } : { finder: 'type:Scrollable', implicit: true };
}

// What a drive of w ends as on an app that stays as it is: the first step
// whose finder matches no single widget fails it (feed on screen or not).
export function expected(w, feedOnScreen) {
  // Every run plays the same steps: the first run meets a bad finder first.
  for (let i = 0; i < w.steps.length; i++) {
    const f = finderOf(w.steps[i]);
    if (f && (!feedOnScreen || !GOOD.includes(f.finder))) return { state: 'failed', step: i + 1, ...f, feedOnScreen };
  }
  return { state: 'done' };
}

// The drive of an answer: a start's `drive`, or summary.workload.drive (an
// answer with no frames has `workload` at its top).
export function workloadOf(sc) {
  return sc?.summary?.workload ?? sc?.workload ?? null;
}

// Invariant 13: an answer's workload says one consistent thing about its
// drive. Returns the drive.
export function checkWorkload(a, w0, what) {
  const w = { repeat: 1, ...w0 }; // repeat 1 when not given
  const wl = workloadOf(a.sc);
  if (!wl) fail(13, `${what}: an answer about a workload without summary.workload`);
  const d = wl.drive;
  if (!d) return null; // no drive was started (refused before it)
  if (JSON.stringify(wl.steps) !== JSON.stringify(w.steps) || wl.repeat !== w.repeat)
    fail(13, `${what}: summary.workload names steps ${JSON.stringify(wl.steps)} x${wl.repeat}, sent ${JSON.stringify(w.steps)} x${w.repeat}`);
  // driveId: the drive whose frames the runs count (none when nothing drew).
  if (wl.driveId !== undefined && wl.driveId !== d.id) fail(13, `${what}: summary.workload counts the frames of ${wl.driveId}, but its drive is ${d.id}`);
  if (wl.runs.length !== w.repeat || wl.runs.some((x, i) => x.run !== i + 1))
    fail(13, `${what}: ${wl.runs.length} runs reported (${wl.runs.map((x) => x.run)}) for repeat ${w.repeat}`);
  if (d.runs !== w.repeat || d.of !== w.steps.length)
    fail(13, `${what}: drive ${JSON.stringify(d)} for ${w.steps.length} steps x${w.repeat}`);
  if (!(d.run >= 1 && d.run <= d.runs && d.step >= 1 && d.step <= d.of))
    fail(13, `${what}: drive at run ${d.run} step ${d.step} of ${d.runs} x ${d.of}`);
  if (d.state === 'done') {
    if (d.run !== d.runs || d.step !== d.of || d.error) fail(13, `${what}: a done drive ${JSON.stringify(d)}`);
  } else if (d.state === 'failed') {
    if (!d.error) fail(13, `${what}: a failed drive without its error`);
    if (!a.isError) fail(13, `${what}: drive failed (${d.error}) but the answer is no error`);
  } else if (d.state !== 'running') {
    fail(13, `${what}: drive state ${d.state}`);
  }
  if (d.state !== 'failed' && a.isError && a.args.action !== 'start')
    fail(13, `${what}: an error answer whose drive is ${d.state}: ${a.text.slice(0, 200)}`);
  // The drive's own interactions: <id>/r<run>/s<step>, within its runs and steps.
  for (const i of a.sc.summary?.interactions ?? []) {
    const m = DRIVE_ID.exec(i.interactionId);
    if (!m || m[1] !== d.id) continue;
    if (Number(m[2]) > w.repeat || Number(m[3]) > w.steps.length || i.linkedBy !== 'drive')
      fail(13, `${what}: interaction ${i.interactionId} (${i.linkedBy}) is no run/step of ${d.id} (${w.steps.length} steps x${w.repeat})`);
  }
  return d;
}

// Invariant 14: the drive ended as the app's screen says it must.
export function checkExpected(d, want, what) {
  if (want.state === 'done') {
    if (d.state !== 'done') fail(14, `${what}: a drive with every finder on screen ended ${JSON.stringify(d)}`);
    return;
  }
  if (d.state !== 'failed' || d.run !== 1 || d.step !== want.step)
    fail(14, `${what}: want failed at run 1 step ${want.step} (${want.finder}), got ${JSON.stringify(d)}`);
  const named = want.implicit ? /no Scrollable on screen/.test(d.error)
    : d.error.includes(`"${want.finder}"`) && /no widget|\d+ widgets/.test(d.error);
  if (!named) fail(14, `${what}: the error does not name ${want.finder} and what it matched: ${d.error}`);
  // What is on screen, for the agent to pick from: the feed first.
  if (want.feedOnScreen && d.candidates?.[0] !== 'key:feed')
    fail(14, `${what}: a failed finder on the feed lists candidates ${JSON.stringify(d.candidates)}`);
}
