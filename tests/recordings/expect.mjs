#!/usr/bin/env node
// The expected answer for each recording of the corpus, read from the trace
// directly. Independent of telescope: no import from it, no shared code; a
// second reading of the same public sources (docs/flutter-apis.md).
//
// Usage: node expect.mjs            regenerate every <name>/expected.json and
//                                   windows.json
//        node expect.mjs --check    exit 1 if regenerating would change a byte
// expected.json lists, besides the answer, the top causes with what each
// explains and every steady janky frame with its own cause.
//
// THE RULE
// 1. Frames: DevTools' `performance.flutterFrames` when the export has them
//    (each is one Flutter.Frame event: startTime = buildStart, vsyncOverhead =
//    buildStart - vsyncStart, elapsed = rasterFinish - vsyncStart, build,
//    raster), else the engine's frame events in the trace: Animator::BeginFrame
//    (build start) and Animator::Render (build finish) on the UI thread,
//    Rasterizer::DoDraw (raster start and finish), joined by args.frame_number.
// 2. Budget = 1e6 / performance.displayRefreshRate µs (60 Hz when absent).
//    A frame is janky when build or raster, in whole milliseconds (truncated,
//    as Duration.inMilliseconds), exceeds 1000 / refresh rate ms: DevTools'
//    FlutterFrame.isJanky (isUiJanky || isRasterJanky). A 16.9 ms build is not
//    janky at 60 Hz by this rule.
// 3. Start-up frames are not steady state: a frame whose UI work overlaps the
//    framework's "Framework initialization" slice (BindingBase's constructor)
//    or its "Warm-up frame" task (SchedulerBinding.scheduleWarmUpFrame), the
//    first frame after a "Framework initialization" that no frame overlaps
//    (a hot restart runs it again between frames), and a frame built before the trace's first Animator::BeginFrame
//    and has no Animator::BeginFrame of its own frame number (the warm-up
//    frame is drawn from a Timer, outside the engine's vsync callback; a
//    FrameTiming's buildStart may precede its BeginFrame slice by a few µs).
//    Sources in docs/flutter-apis.md "Start-up frames".
// 4. boundBy, over the steady janky frames: "build" when at least as many
//    missed the budget on build as on raster, else "raster".
// 5. A frame's UI window is its Animator::BeginFrame envelope (same
//    frame_number), else [buildStart, buildFinish]. Causes measured per frame:
//    - {phase, NAME}: the inclusive time of the framework's sync slices (cat
//      "Dart", UI thread) at the top of the window (BUILD, LAYOUT, PAINT, ...);
//    - {widget, NAME} / {render_object, NAME}: a slice nested inside BUILD /
//      inside LAYOUT or PAINT (names starting "Render" are render objects);
//    - {gc}: GC slices (cat "GC") on the UI thread within [buildStart,
//      buildFinish], overlaps counted once;
//    - {shader}: raster-thread slices within [rasterStart, rasterFinish] tagged
//      args.devtoolsTag "shaders" or named as a shader/pipeline compile
//      (SHADER_NAMES below), overlaps counted once;
//    - {raster}: the frame's raster time.
// 6. What a cause explains: for each steady janky frame, its time there minus
//    its mean over the steady non-janky frames (0 when none), at least 0, at
//    most the frame's overrun (max(build, raster) - budget); summed over the
//    steady janky frames. The largest wins. A more specific cause (widget,
//    render object, gc inside a UI phase; shader inside raster) wins instead
//    only when it explains at least 90 % of what the winning phase/raster
//    explains (a near tie). Each janky frame's own cause is the same rule over
//    that frame alone. Equal amounts (the overrun cap makes them common in a
//    frame far over budget) are ordered by the time beyond the mean without
//    the cap, then by name, so the answer is one.
// 7. Rebuild counts, only when the export has DevTools'
//    performance.rebuildCountModel ({locations: {file: {ids, lines, columns,
//    names}}, frames: [{frameNumber, events: [id, count, id, count, ...]}]}:
//    RebuildCountModel.toJson, flutter/devtools packages/devtools_app/lib/src/
//    screens/performance/panes/rebuild_stats/rebuild_stats_model.dart).
//    framesWithCounts: the frames (start-up ones too) that have an entry in
//    `frames` (a frame without one was not tracked; an entry with no events
//    rebuilt nothing). Over the steady janky frames and the calm frames
//    (steady and not janky, rules 2-3) that have an entry, each location's
//    mean count per janky frame and per calm frame, a location missing from
//    an entry counting 0. A location is the app's when its file is not a
//    `dart:` or `package:flutter/` URI nor in the Flutter SDK
//    (`/packages/flutter/lib/`): Flutter's tracker counts only the project's
//    widgets, this is for exports that hold others. Its `file` is the URI
//    from its last `/lib/` on (`lib/clock_demo.dart`), the path in the app's
//    package an agent opens. `top` lists the app widgets with the largest
//    mean per janky frame: every one equal to the largest (to 1e-9), by id.
// 8. Windows (WINDOWS below, answers in windows.json): a stretch of frames of
//    a recording, cut by cutWindow (its flutterFrames in the range, and the
//    trace events within [first vsync, last raster finish] of them, a slice
//    whole or not at all) and answered by rules 1-6 over those frames alone.
import { readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const NEAR_TIE = 0.9;

// Shader and pipeline compilation by name (docs/flutter-apis.md "Shader
// compilation"): Skia's program/pipeline builders trace their finalize() as
// TRACE_EVENT0("skia.shaders", TRACE_FUNC), i.e. under the compiler's pretty
// function name, e.g. "GrMtlPipelineState *GrMtlPipelineStateBuilder::finalize(
// const GrProgramDesc &, ...)". Matched on the qualified name before the "(",
// the return type dropped. Impeller's pipeline creation is not listed: no
// trace name for it was confirmed from the engine source (see the doc).
const SHADER_NAMES = [
  'GrGLProgramBuilder::finalize',        // src/gpu/ganesh/gl/builders/GrGLProgramBuilder.cpp
  'GrMtlPipelineStateBuilder::finalize', // src/gpu/ganesh/mtl/GrMtlPipelineStateBuilder.mm
  'GrVkPipelineStateBuilder::finalize',  // src/gpu/ganesh/vk/GrVkPipelineStateBuilder.cpp
  'GrD3DPipelineStateBuilder::finalize', // src/gpu/ganesh/d3d/GrD3DPipelineStateBuilder.cpp
];
function isShaderName(name) {
  const head = name.split('(')[0].trim().split(/[\s*&]+/).pop();
  return SHADER_NAMES.includes(head);
}

const PHASES = new Set(['BUILD', 'LAYOUT', 'UPDATING COMPOSITING BITS', 'PAINT', 'COMPOSITING',
  'FINALIZE TREE', 'SEMANTICS', 'POST_FRAME']);
function phaseName(name) { return name.replace(/ \(root\)$/, ''); }

// Windows: stretches of a real recording, each answered by the same rule
// over its own frames only (its calm frames are the baseline), so the
// ranking meets real mixes where BUILD is not the answer. A window is not a
// new recording; windows.json holds the answers (rule 8).
export const WINDOWS = [
  { recording: 'android-world-clock-3.4', from: 827, to: 829, why: 'one janky frame, raster-bound (828: 17.4 ms of raster)' },
  { recording: 'android-world-clock-3.4', from: 847, to: 862, why: 'the tail: two janky frames in PAINT, one in BUILD, one in LAYOUT' },
  { recording: 'ios-metal-3.7', from: 99, to: 109, why: 'the janky stretch with two calm frames after it' },
  { recording: 'ios-metal-3.7', from: 101, to: 123, why: 'after the slowest build: the pipeline compile, LAYOUT, BUILD' },
];

// Rule 8: the recording cut to frames [from, to]: its flutterFrames in the
// range (and their rebuild counts), and its trace events that lie within
// [first vsync, last raster finish] of those frames. A slice is kept whole or
// not at all (B with its E, X by its end); metadata always. No value changes.
export function cutWindow(root, from, to) {
  const ff = (root.performance?.flutterFrames ?? []).filter((f) => f.number >= from && f.number <= to);
  if (!ff.length) throw new Error(`no frame in ${from}-${to}`);
  const lo = Math.min(...ff.map((f) => f.startTime - f.vsyncOverhead));
  const hi = Math.max(...ff.map((f) => f.startTime - f.vsyncOverhead + f.elapsed));
  const inside = (t) => t >= lo && t <= hi;
  const keep = new Set();
  const stacks = new Map();
  root.traceEvents.forEach((e, i) => {
    if (e.ph === 'M') keep.add(i);
    else if (e.ph === 'X') { if (inside(e.ts) && inside(e.ts + (e.dur ?? 0))) keep.add(i); }
    else if (e.ph === 'B') { const st = stacks.get(e.tid) ?? []; st.push(i); stacks.set(e.tid, st); }
    else if (e.ph === 'E') {
      const b = (stacks.get(e.tid) ?? []).pop();
      if (b !== undefined && inside(root.traceEvents[b].ts) && inside(e.ts)) { keep.add(b); keep.add(i); }
    } else if (typeof e.ts === 'number' && inside(e.ts)) keep.add(i);
  });
  const perf = { ...root.performance, flutterFrames: ff };
  const model = root.performance?.rebuildCountModel;
  if (model) perf.rebuildCountModel = { ...model, frames: model.frames.filter((f) => f.frameNumber >= from && f.frameNumber <= to) };
  return { ...root, traceEvents: root.traceEvents.filter((_, i) => keep.has(i)), performance: perf };
}

function load(file) {
  return loaded(JSON.parse(readFileSync(file, 'utf8')));
}
function loaded(root) {
  const events = Array.isArray(root) ? root : root.traceEvents;
  const perf = root.performance ?? {};
  return { events, flutterFrames: perf.flutterFrames, refresh: perf.displayRefreshRate || 60,
    rebuildCountModel: perf.rebuildCountModel ?? null };
}

// Rule 7: mean rebuilds per location in the janky and the calm frames.
const round3 = (x) => Math.round(1000 * x) / 1000;
function isAppFile(uri) {
  return !uri.startsWith('dart:') && !uri.startsWith('package:flutter/') && !uri.includes('/packages/flutter/lib/');
}
function libPath(uri) {
  const at = uri.lastIndexOf('/lib/');
  return at >= 0 ? uri.slice(at + 1) : uri.replace(/^file:\/\//, '');
}
function rebuilds(model, frameNumbers, jankyNumbers, calmNumbers) {
  const where = new Map();
  for (const [uri, v] of Object.entries(model.locations ?? {}))
    v.ids.forEach((id, i) => where.set(id, { name: v.names[i], file: libPath(uri), line: v.lines[i], column: v.columns[i], uri }));
  const entries = new Map(model.frames.map((f) => [f.frameNumber, f.events]));
  const janky = jankyNumbers.filter((n) => entries.has(n)), calm = calmNumbers.filter((n) => entries.has(n));
  const sums = new Map(); // id -> [janky, calm]
  for (const [frames, k] of [[janky, 0], [calm, 1]])
    for (const n of frames) {
      const ev = entries.get(n);
      for (let i = 0; i < ev.length; i += 2) {
        const s = sums.get(ev[i]) ?? [0, 0];
        s[k] += ev[i + 1];
        sums.set(ev[i], s);
      }
    }
  const locations = [...sums].map(([id, [j, c]]) => {
    const w = where.get(id);
    return { id, name: w?.name ?? null, file: w?.file ?? null, line: w?.line ?? null, uri: w?.uri ?? null,
      app: w ? isAppFile(w.uri) : false, perJankyFrame: janky.length ? j / janky.length : 0, perCalmFrame: calm.length ? c / calm.length : 0 };
  }).sort((a, b) => b.perJankyFrame - a.perJankyFrame || a.perCalmFrame - b.perCalmFrame || a.id - b.id);
  const app = locations.filter((l) => l.app);
  const most = app.length ? app[0].perJankyFrame : 0;
  const top = app.filter((l) => most > 0 && l.perJankyFrame >= most - 1e-9).sort((a, b) => a.id - b.id);
  const show = (l) => ({ ...l, perJankyFrame: round3(l.perJankyFrame), perCalmFrame: round3(l.perCalmFrame) });
  return {
    framesWithCounts: frameNumbers.filter((n) => entries.has(n)).length,
    jankyFrames: janky.length,
    calmFrames: calm.length,
    top: top.map((l) => ({ name: l.name, file: l.file, line: l.line, perJankyFrame: round3(l.perJankyFrame), perCalmFrame: round3(l.perCalmFrame) })),
    locations: locations.map(show),
  };
}

// Sync slices: B matched with the E on top of its thread's stack, and X.
function slices(events) {
  const list = events.map((e, i) => ({ e, i })).filter(({ e }) => typeof e.ts === 'number' && ['B', 'E', 'X'].includes(e.ph));
  list.sort((a, b) => a.e.ts - b.e.ts || a.i - b.i);
  const stacks = new Map(), out = [];
  for (const { e } of list) {
    const st = stacks.get(e.tid) ?? []; stacks.set(e.tid, st);
    if (e.ph === 'X') out.push({ name: e.name, cat: e.cat, tid: e.tid, args: e.args ?? {}, start: e.ts, end: e.ts + (e.dur ?? 0) });
    else if (e.ph === 'B') st.push(e);
    else if (st.length) { const b = st.pop(); out.push({ name: b.name, cat: b.cat, tid: b.tid, args: b.args ?? {}, start: b.ts, end: e.ts }); }
  }
  return out;
}

function threadTid(events, suffix, fallbackName, all) {
  for (const e of events)
    if (e.ph === 'M' && e.name === 'thread_name' && new RegExp(`\\.${suffix} \\(`).test(e.args?.name ?? '')) return e.tid;
  return all.find((s) => s.name === fallbackName)?.tid;
}

function byFrameNumber(all, name, n) {
  return all.find((s) => s.name === name && s.args.frame_number !== undefined && Number(s.args.frame_number) === n);
}

function frames(rec, all) {
  if (rec.flutterFrames?.length)
    return rec.flutterFrames.map((f) => {
      const vsync = f.startTime - f.vsyncOverhead, rasterEnd = vsync + f.elapsed;
      return { number: f.number, vsync, buildStart: f.startTime, buildEnd: f.startTime + f.build,
        rasterStart: rasterEnd - f.raster, rasterEnd, build: f.build, raster: f.raster };
    });
  const out = [];
  for (const s of all) {
    if (s.name !== 'Animator::BeginFrame' || s.args.frame_number === undefined) continue;
    const n = Number(s.args.frame_number);
    const render = byFrameNumber(all, 'Animator::Render', n), draw = byFrameNumber(all, 'Rasterizer::DoDraw', n);
    if (!render || !draw) continue;
    out.push({ number: n, vsync: s.start, buildStart: s.start, buildEnd: render.start, rasterStart: draw.start,
      rasterEnd: draw.end, build: render.start - s.start, raster: draw.end - draw.start });
  }
  return out;
}

// Total length of the union of intervals, clipped to [lo, hi].
function unionWithin(intervals, lo, hi) {
  const iv = intervals.map(([a, b]) => [Math.max(a, lo), Math.min(b, hi)]).filter(([a, b]) => b > a).sort((x, y) => x[0] - y[0]);
  let total = 0, curA = -Infinity, curB = -Infinity;
  for (const [a, b] of iv) {
    if (a > curB) { if (curB > curA) total += curB - curA; curA = a; curB = b; } else curB = Math.max(curB, b);
  }
  if (curB > curA) total += curB - curA;
  return total;
}

const key = (c) => c.name === undefined ? c.kind : `${c.kind}:${c.name}`;
const isSpecific = (c) => ['widget', 'render_object', 'gc', 'shader'].includes(c.kind);
function contains(general, specific) {
  if (general.kind === 'raster') return specific.kind === 'shader';
  if (general.kind !== 'phase') return false;
  if (specific.kind === 'gc') return true;
  if (specific.kind === 'widget') return general.name === 'BUILD';
  if (specific.kind === 'render_object') return general.name === 'LAYOUT' || general.name === 'PAINT';
  return false;
}

// The winner among {cause, explains} entries by rule 6.
const order = (a, b) => b.explains - a.explains || b.uncapped - a.uncapped || key(a.cause).localeCompare(key(b.cause));
function pick(entries) {
  const sorted = [...entries].filter((x) => x.explains > 0).sort(order);
  if (!sorted.length) return null;
  const top = sorted[0];
  if (isSpecific(top.cause)) return top;
  const near = sorted.filter((x) => isSpecific(x.cause) && contains(top.cause, x.cause) && x.explains >= NEAR_TIE * top.explains);
  return near[0] ?? top;
}

export function expect(file) {
  return answer(load(file));
}

export function expectRoot(root) {
  return answer(loaded(root));
}

function answer(rec) {
  const all = slices(rec.events);
  const ui = threadTid(rec.events, 'ui', 'Animator::BeginFrame', all);
  const raster = threadTid(rec.events, '(raster|gpu)', 'Rasterizer::DoDraw', all);
  const budget = 1e6 / rec.refresh;
  const fr = frames(rec, all).sort((a, b) => a.buildStart - b.buildStart);

  // Start-up (rule 3).
  const firstBeginFrame = Math.min(...all.filter((s) => s.name === 'Animator::BeginFrame').map((s) => s.start));
  const inits = all.filter((s) => s.name === 'Framework initialization');
  const warmups = [];
  const open = new Map();
  for (const e of rec.events) { // an async task: its "e" may carry no name, its id does
    if (e.ph === 'b' && e.name === 'Warm-up frame') open.set(e.id, e.ts);
    if (e.ph === 'e' && open.has(e.id)) { warmups.push([open.get(e.id), e.ts]); open.delete(e.id); }
  }
  for (const f of fr) {
    const env = byFrameNumber(all, 'Animator::BeginFrame', f.number);
    f.lo = env && env.start <= f.buildStart + 1000 && env.end >= f.buildEnd ? env.start : f.buildStart;
    f.hi = env && env.start <= f.buildStart + 1000 && env.end >= f.buildEnd ? env.end : f.buildEnd;
  }
  const startup = new Set();
  for (const f of fr) {
    const overlaps = ([a, b]) => a < f.hi && b > f.lo;
    if (inits.some((s) => overlaps([s.start, s.end])) || warmups.some(overlaps)) startup.add(f.number);
    if (f.buildStart < firstBeginFrame && !byFrameNumber(all, 'Animator::BeginFrame', f.number)) startup.add(f.number);
  }
  // A hot restart runs the initialization between frames: the next frame is its first.
  for (const s of inits) {
    if (fr.some((f) => f.lo < s.end && f.hi > s.start)) continue;
    const next = fr.find((f) => f.buildStart >= s.end);
    if (next) startup.add(next.number);
  }

  const over = (us) => Math.trunc(us / 1000) > 1000 / rec.refresh;
  const janky = (f) => over(f.build) || over(f.raster);
  const steady = fr.filter((f) => !startup.has(f.number));
  const steadyJanky = steady.filter(janky), steadyOk = steady.filter((f) => !janky(f));
  const buildMissed = steadyJanky.filter((f) => over(f.build)).length;
  const rasterMissed = steadyJanky.filter((f) => over(f.raster)).length;

  // Causes per frame (rule 5).
  const uiSlices = all.filter((s) => s.tid === ui && s.cat === 'Dart');
  const gcSlices = all.filter((s) => s.tid === ui && s.cat === 'GC').map((s) => [s.start, s.end]);
  const shaderSlices = all.filter((s) => s.tid === raster && (s.args.devtoolsTag === 'shaders' || isShaderName(s.name))).map((s) => [s.start, s.end]);
  for (const f of fr) {
    const c = new Map();
    const add = (cause, us) => { const k = key(cause); const v = c.get(k) ?? { cause, us: 0 }; v.us += us; c.set(k, v); };
    const inWin = uiSlices.filter((s) => s.start >= f.lo && s.end <= f.hi);
    const top = inWin.filter((s) => !inWin.some((p) => p !== s && p.start <= s.start && p.end >= s.end && (p.end - p.start) > (s.end - s.start)));
    for (const s of top) add({ kind: 'phase', name: phaseName(s.name) }, s.end - s.start);
    for (const s of inWin) {
      if (top.includes(s)) continue;
      const parent = top.find((p) => p.start <= s.start && p.end >= s.end);
      const ph = parent && phaseName(parent.name);
      if (ph === 'BUILD' && !/^Render/.test(s.name)) add({ kind: 'widget', name: s.name }, s.end - s.start);
      else if ((ph === 'LAYOUT' || ph === 'PAINT') && /^Render/.test(s.name)) add({ kind: 'render_object', name: s.name }, s.end - s.start);
    }
    add({ kind: 'gc' }, unionWithin(gcSlices, f.buildStart, f.buildEnd));
    add({ kind: 'shader' }, unionWithin(shaderSlices, f.rasterStart, f.rasterEnd));
    add({ kind: 'raster' }, f.raster);
    f.causes = c;
  }

  // What each cause explains (rule 6).
  const keys = new Set(steady.flatMap((f) => [...f.causes.keys()]));
  const baseline = new Map([...keys].map((k) => [k, steadyOk.length ? steadyOk.reduce((s, f) => s + (f.causes.get(k)?.us ?? 0), 0) / steadyOk.length : 0]));
  const beyond = (f, k) => Math.max(0, (f.causes.get(k)?.us ?? 0) - baseline.get(k));
  const excess = (f, k) => Math.min(beyond(f, k), Math.max(f.build, f.raster) - budget);
  const causeOf = new Map();
  for (const f of steady) for (const [k, v] of f.causes) causeOf.set(k, v.cause);
  const table = [...keys].map((k) => ({ cause: causeOf.get(k), explains: steadyJanky.reduce((s, f) => s + excess(f, k), 0),
    uncapped: steadyJanky.reduce((s, f) => s + beyond(f, k), 0) }));
  const first = pick(table);
  const jankyTotal = steadyJanky.reduce((s, f) => s + Math.max(f.build, f.raster) - budget, 0);

  const perFrame = steadyJanky.map((f) => {
    const w = pick([...keys].map((k) => ({ cause: causeOf.get(k), explains: excess(f, k), uncapped: beyond(f, k) })));
    return { frameNumber: f.number, buildUs: f.build, rasterUs: f.raster, overrunUs: Math.round(Math.max(f.build, f.raster) - budget), cause: w?.cause ?? null };
  });

  // The recording's length, first event to last (what a replay lasts).
  const times = [...all.flatMap((x) => [x.start, x.end]), ...fr.flatMap((f) => [f.vsync, f.rasterEnd])];
  return {
    recordingUs: Math.max(...times) - Math.min(...times),
    budgetUs: Math.round(budget),
    frames: fr.length,
    frameNumbers: fr.map((f) => f.number),
    startup: { frames: startup.size, frameNumbers: fr.filter((f) => startup.has(f.number)).map((f) => f.number) },
    jank: { frames: steadyJanky.length, frameNumbers: steadyJanky.map((f) => f.number), buildMissed, rasterMissed,
      boundBy: steadyJanky.length ? (buildMissed >= rasterMissed ? 'build' : 'raster') : 'none' },
    firstCause: first ? first.cause : null,
    firstCauseExplains: first && jankyTotal ? Math.round(1000 * first.explains / jankyTotal) / 1000 : 0,
    causes: table.filter((x) => x.explains > 0).sort(order)
      .slice(0, 8).map((x) => ({ ...x.cause, explainsUs: Math.round(x.explains) })),
    jankyFrames: perFrame,
    ...(rec.rebuildCountModel ? { rebuilds: rebuilds(rec.rebuildCountModel, fr.map((f) => f.number), steadyJanky.map((f) => f.number), steadyOk.map((f) => f.number)) } : {}),
  };
}

function recordings() {
  return readdirSync(HERE, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(HERE, d.name, 'trace.json'))).map((d) => d.name).sort();
}

// The answers of the windows (rule 8), without the per-location rebuilds.
function windows() {
  return WINDOWS.map((w) => {
    const root = JSON.parse(readFileSync(join(HERE, w.recording, 'trace.json'), 'utf8'));
    const { rebuilds: _, ...a } = expectRoot(cutWindow(root, w.from, w.to));
    return { ...w, ...a };
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  let stale = 0;
  const outputs = recordings().map((name) => [join(HERE, name, 'expected.json'),
    { generatedBy: 'tests/recordings/expect.mjs', ...expect(join(HERE, name, 'trace.json')) }]);
  outputs.push([join(HERE, 'windows.json'), { generatedBy: 'tests/recordings/expect.mjs', windows: windows() }]);
  for (const [out, value] of outputs) {
    const text = JSON.stringify(value, null, 2) + '\n';
    if (check) {
      const old = existsSync(out) ? readFileSync(out, 'utf8') : '';
      if (old !== text) { console.error(`${out} is stale: run node tests/recordings/expect.mjs`); stale++; }
    } else writeFileSync(out, text);
  }
  process.exit(stale ? 1 : 0);
}
