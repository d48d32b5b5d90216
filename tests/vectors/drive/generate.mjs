// Writes tests/vectors/drive/NN_name.json from the rules of DRIVE.md §2,
// computed here on their own (not by running the C or Dart plan):
//   node tests/vectors/drive/generate.mjs
// Each case lists its inputs; the expectation is derived below, step by
// step, from the contract's formulas. README.md checks two cases by hand.
import { writeFileSync, readdirSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const SLOP = 18.0; // kTouchSlop, packages/flutter/lib/src/gestures/constants.dart

// Dart's double.round(): half away from zero.
const round = (v) => Math.sign(v) * Math.floor(Math.abs(v) + 0.5);

function expect(step, start, hz) {
  const T = 1e6 / hz;
  if (step.tap !== undefined) {
    return { events: [ev(0, 'down', start.x, start.y), ev(0, 'up', start.x, start.y)], durationUs: 0 };
  }
  const fling = step.fling !== undefined;
  const s = fling ? step.fling : step.scroll;
  const dx = s.dx ?? 0, dy = s.dy ?? 0;
  const L = Math.sqrt(dx * dx + dy * dy);
  if (L === 0) return { error: 'empty drag' };
  const Px = dx + SLOP * (dx / L), Py = dy + SLOP * (dy / L);
  let n, at;
  if (!fling) {
    const ms = s.ms ?? 800;
    n = Math.max(1, round((ms * 1000) / T));
    at = (i) => round(i * T);
  } else {
    var D = (Math.sqrt(Px * Px + Py * Py) / (s.velocity ?? 4000)) * 1e6;
    n = Math.max(2, round(D / T));
    at = (i) => round((i * D) / n);
  }
  const events = [ev(0, 'down', start.x, start.y)];
  for (let i = 1; i <= n; i++) events.push(ev(at(i), 'move', start.x + (Px * i) / n, start.y + (Py * i) / n));
  const last = events[events.length - 1];
  events.push(ev(last.t, 'up', last.x, last.y));
  const out = { events, durationUs: last.t };
  if (fling) out.velocity = { x: Px / (D / 1e6), y: Py / (D / 1e6) };
  return out;
}

function ev(t, kind, x, y) { return { t, kind, x, y }; }

const cases = [
  ['scroll_60hz', 'the issue\'s scroll: 2000 px up over 800 ms at 60 Hz: 48 moves, 16 667 us apart', 60,
    { scroll: { dx: 0, dy: -2000, ms: 800 } }],
  ['scroll_90hz', 'a 500 ms scroll at 90 Hz: T = 11 111.1 us, 45 moves', 90,
    { scroll: { dx: 0, dy: -1200, ms: 500 } }],
  ['scroll_120hz', 'a 300 ms scroll at 120 Hz: T = 8 333.3 us, 36 moves', 120,
    { scroll: { dx: 0, dy: 900, ms: 300 } }],
  ['scroll_diagonal', 'dx 300, dy -400 (length 500): the slop goes along the drag, (10.8, -14.4)', 60,
    { scroll: { dx: 300, dy: -400, ms: 100, in: 'key:feed' } }],
  ['scroll_default_ms', 'ms absent: 800 ms; dx absent: 0; a horizontal drag', 60,
    { scroll: { dx: -500 } }],
  ['scroll_min_ms', 'ms 50 at 60 Hz: round(3.0) = 3 moves', 60,
    { scroll: { dy: -100, ms: 50 } }],
  ['fling_default_velocity', 'velocity absent: 4000 px/s; D = 3018 / 4000 s = 754 500 us, 45 moves', 60,
    { fling: { dx: 0, dy: -3000, in: 'key:feed' } }],
  ['fling_velocity', 'velocity 10000: D = 101 800 us, round(6.108) = 6 moves', 60,
    { fling: { dy: -1000, velocity: 10000 } }],
  ['fling_short', 'a very short fast fling: D = 1900 us < T, n floored at 2 moves', 60,
    { fling: { dy: -20, velocity: 20000 } }],
  ['fling_120hz_diagonal', 'a diagonal fling at 120 Hz: the velocity is a vector along the drag', 120,
    { fling: { dx: -600, dy: 800, velocity: 5000 } }],
  ['tap', 'a tap: down and up at once, at the target\'s centre', 60, { tap: 'text:Item 3' }],
  ['empty_drag', 'dx = dy = 0: no events, an error', 60, { scroll: { dx: 0, dy: 0, ms: 800 } }],
  ['empty_fling', 'a fling without dx or dy: no events, an error', 60, { fling: { velocity: 3000 } }],
];

for (const f of readdirSync(HERE)) if (/^\d\d_.*\.json$/.test(f)) unlinkSync(join(HERE, f));
cases.forEach(([name, description, hz, step], i) => {
  const start = { x: 200, y: 400 };
  const v = { description, hz, start, step, expect: expect(step, start, hz) };
  const file = join(HERE, `${String(i + 1).padStart(2, '0')}_${name}.json`);
  writeFileSync(file, JSON.stringify(v, null, 1).replace(/\n {2,}/g, ' ').replace(/\n\s*([}\]])/g, '$1') + '\n');
});
