// Issue 32's repeatability: two captures of the same workload on an
// unchanged app (telescope-sim --scenario scrolllist, a fresh seed per
// trial) must not be called a regression by compare in at least 19 of 20
// trials, and compare must say both ran the same workload. Then the spread
// of jank and p90 over 5 runs of one capture. Markdown on stdout.
//
// Usage: node repeatability.mjs BUILD_DIR [--trials N] [--spreads N]
import { resolve } from 'node:path';
import { StdioPeer, startSim, median, callTool } from './lib.mjs';

const args = process.argv.slice(2);
const build = resolve(args[0] ?? 'build');
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? Number(args[i + 1]) : dflt; };
const TRIALS = opt('--trials', 20);
const SPREADS = opt('--spreads', 5);
const FLING = { fling: { dy: -3000, in: 'key:feed' } };
const log = (m) => process.stderr.write(`[repeatability] ${m}\n`);

async function withApp(seed, fn) {
  const sim = await startSim(`${build}/telescope-sim`, ['--scenario', 'scrolllist', '--seed', String(seed)]);
  const peer = new StdioPeer(`${build}/telescope-mcp`, ['--vm-service-uri', sim.wsUri]);
  try {
    await peer.initialize();
    return await fn(peer, sim);
  } finally {
    await peer.close();
    await sim.stop();
  }
}

async function capture(peer, repeat) {
  const t0 = Date.now();
  const r = (await callTool(peer, { action: 'capture', workload: { steps: [FLING], repeat } })).msg.result;
  if (r.isError) throw new Error(`capture failed: ${r.content?.[0]?.text}`);
  return { sc: r.structuredContent, ms: Date.now() - t0 };
}

const verdicts = { improved: 0, regressed: 0, unchanged: 0 };
let sameSaid = 0, byRuns = 0;
const captureMs = [];
for (let t = 0; t < TRIALS; t++) {
  await withApp(1000 + t, async (peer) => {
    const a = await capture(peer, 3), b = await capture(peer, 3);
    captureMs.push(a.ms, b.ms);
    const c = (await callTool(peer, { action: 'compare' })).msg.result.structuredContent.comparison;
    verdicts[c.verdict]++;
    if (c.workload?.same) sameSaid++;
    if (c.workload?.byRuns) byRuns++;
    log(`trial ${t + 1}/${TRIALS}: ${c.verdict}${c.decidedBy ? ` (${c.decidedBy})` : ''}, same workload ${c.workload?.same}`);
  });
}

// The spreads' captures also measure what driving costs a frame: the sim's
// drive work (its C tick and frame, not the tiles it builds: telescope-sim
// stats feed.driveWorkNs over feed.drivenFrames) against the frame it drives
// (the capture's build p50), both from the same capture.
const spreads = [], costs = [];
for (let k = 0; k < SPREADS; k++) {
  await withApp(2000 + k, async (peer, sim) => {
    const { sc } = await capture(peer, 5);
    const w = sc.summary.workload;
    spreads.push({ runs: w.runs, spread: w.spread });
    const feed = (await sim.stats()).feed;
    if (feed?.drivenFrames > 0)
      costs.push({ ns: feed.driveWorkNs / feed.drivenFrames, buildUs: sc.summary.buildUs.p50 });
    log(`spread ${k + 1}/${SPREADS}: ${JSON.stringify(w.spread)}`);
  });
}

const pct = (x) => (x * 100).toFixed(1);
const ms = (us) => (us / 1000).toFixed(1);
const rows = spreads.map((s, i) => `| ${2000 + i} | ${s.runs.map((r) => r.frames).join(', ')} | ${s.runs.map((r) => pct(r.jankRatio)).join(', ')} | ${s.spread.jankPoints.toFixed(1)} | ${s.runs.map((r) => ms(r.buildP90Us)).join(', ')} | ${ms(s.spread.buildP90Us)} | ${ms(s.spread.rasterP90Us)} |`);
const noRegression = TRIALS - verdicts.regressed;
console.log(`## 15. Repeatability of a workload (issue 32)

From \`tests/bench/repeatability.mjs\` (part of \`make bench\`): telescope-sim \`--scenario
scrolllist\` (a feed that draws only while driven, a ~25 ms HeavyTile every 7th tile), a fresh sim
and server per trial (seed 1000 + trial), two captures of
\`{"workload":{"steps":[{"fling":{"dy":-3000,"in":"key:feed"}}],"repeat":3}}\` on the unchanged
app, then \`compare\` (the two last).

| trials | no regression | improved / regressed / unchanged | said "same workload" | judged run by run | one capture (median) |
|---|---|---|---|---|---|
| ${TRIALS} | ${noRegression} of ${TRIALS} (target ≥ ${Math.ceil(TRIALS * 0.95)}: ${noRegression >= Math.ceil(TRIALS * 0.95) ? 'met' : '**missed**'}) | ${verdicts.improved} / ${verdicts.regressed} / ${verdicts.unchanged} | ${sameSaid} of ${TRIALS} | ${byRuns} of ${TRIALS} | ${(median(captureMs) / 1000).toFixed(1)} s |

The spread over 5 runs: one capture of the same fling with \`repeat: 5\` per seed (2000 + k);
\`spread\` is max − min over the runs (jank in points of 100, p90s in ms).

| seed | frames per run | jank per run (%) | jank spread (points) | build p90 per run (ms) | build p90 spread (ms) | raster p90 spread (ms) |
|---|---|---|---|---|---|---|
${rows.join('\n')}
| median | | | ${median(spreads.map((s) => s.spread.jankPoints)).toFixed(1)} | | ${ms(median(spreads.map((s) => s.spread.buildP90Us)))} | ${ms(median(spreads.map((s) => s.spread.rasterP90Us)))} |

What a drive costs a frame on the sim's watcher model, from the same captures: the drive's own work
(the sim's C tick and frame: plan, pointer, ballistic; not the tiles it has the app build) per
driven frame, against the frame it drives (the capture's build p50).

| captures | drive work per frame (median) | build p50 (median) | share of the frame |
|---|---|---|---|
| ${costs.length} | ${median(costs.map((c) => c.ns)).toFixed(0)} ns | ${ms(median(costs.map((c) => c.buildUs)))} ms | ${(100 * median(costs.map((c) => c.ns / 1000 / c.buildUs))).toFixed(4)} % |
`);
