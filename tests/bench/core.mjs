// In-process sections (bench_core, cmake/parts/bench.cmake): ingest
// throughput against jansson's parse alone, memory growth of one session
// store, and the callgrind instruction counts of the hot paths.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { measure, HOT_PATHS } from './callgrind_check.mjs';

const run = (bin, args) => JSON.parse(execFileSync(bin, args, { encoding: 'utf8' }));

// Section 3a: records/s, parse-only and the whole ingest, interleaved.
export function throughput({ benchCore, rounds, passes = 2 }) {
  const res = { parse: [], ingest: [] };
  let info;
  for (let r = 0; r < rounds; r++)
    for (const mode of r % 2 ? ['ingest', 'parse'] : ['parse', 'ingest']) {
      const o = run(benchCore, ['throughput', mode, String(passes)]);
      res[mode].push(o.recordsPerSec);
      info = o;
    }
  return { res, bytesPerRecord: info.bytesPerRecord, recordsPerRun: info.records };
}

// Section 4: peak RSS of a process holding one session store fed N frames.
export function memory({ benchCore, rounds, sizes = [0, 1000, 10000, 100000, 1000000] }) {
  const res = Object.fromEntries(sizes.map((n) => [n, { rss: [], summaryBytes: 0 }]));
  for (let r = 0; r < rounds; r++)
    for (const n of r % 2 ? [...sizes].reverse() : sizes) {
      const o = run(benchCore, ['memory', String(n)]);
      res[n].rss.push(o.peakRssKiB);
      res[n].summaryBytes = o.summaryBytes;
    }
  return { res, sizes };
}

// Section 10: the watcher's own work inside a frame, 0.1.0's placement
// (attribution in the frame, the baseline) against today's (the frame
// parks the blocks; the timings callback attributes them), one bench_core
// process per run measuring both on the same frames.
export function inframe({ benchCore, rounds, sizes = [20, 300] }) {
  const res = Object.fromEntries(sizes.map((n) => [n, []]));
  for (let r = 0; r < rounds; r++)
    for (const n of r % 2 ? [...sizes].reverse() : sizes) {
      const o = run(benchCore, ['inframe', String(n), '2000']);
      if (!o.sameRecords) throw new Error(`bench_core inframe ${n}: the two placements wrote different records`);
      res[n].push(o);
    }
  return { res, sizes };
}

// Section 6: Ir of each hot path now, and the committed figures.
export function callgrind({ benchCore, config }) {
  const base = JSON.parse(readFileSync(new URL('./callgrind_baseline.json', import.meta.url), 'utf8'));
  const now = Object.fromEntries(HOT_PATHS.map((h) => [h, measure(benchCore, h)]));
  return { now, committed: base.configs?.[config] ?? null, config };
}
