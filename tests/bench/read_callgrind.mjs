// Instructions one `read` costs telescope-mcp, whole (the MCP line in, the
// watcher call out, its reply received, cut, read, summarised, answered):
// telescope-mcp runs under valgrind --tool=callgrind twice, once making N
// reads and once making none, and the difference is divided by N. Each read
// takes the same 100 records of 20 blocks from a cursor (the sim idle
// meanwhile), as BENCHMARKS §2 does. Not part of `make test` or `make bench`
// (a minute under callgrind); DESIGN §5 "The read path" quotes it.
//   node --experimental-websocket tests/bench/read_callgrind.mjs BUILD_DIR [N]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { StdioPeer, startSim, RawVm, sleep, callTool } from './lib.mjs';

const build = resolve(process.argv[2] ?? 'build');
const N = Number(process.argv[3] ?? 100);

async function instructions(reads) {
  const dir = mkdtempSync(join(tmpdir(), 'telescope-readcg-'));
  const out = join(dir, 'callgrind.out');
  const s = await startSim(`${build}/telescope-sim`,
    ['--fps', '200', '--timings-batch-ms', '10', '--scenario', 'idle', '--blocks', '20']);
  const peer = new StdioPeer('valgrind', ['--tool=callgrind', `--callgrind-out-file=${out}`,
    `${build}/telescope-mcp`, '--call-timeout-ms', '20000', '--vm-service-uri', s.wsUri]);
  try {
    await peer.initialize();
    const tool = async (a) => (await callTool(peer, a)).msg.result;
    const first = await tool({ action: 'read' });
    const cursor = first.structuredContent.nextCursor;
    const since = Number(Buffer.from(cursor, 'base64url').toString().split(':')[2]);
    const vm = await RawVm.connect(s.wsUri); /* attribution on: records carry their blocks */
    await vm.frames({ action: 'start' });
    vm.close();
    await s.cmd('scenario steady');
    while ((await s.stats()).recordsWritten < since + 100) await sleep(5);
    await s.cmd('scenario idle');
    for (let prev = -1, now; (now = (await s.stats()).recordsWritten) !== prev; prev = now) await sleep(100);
    let frames = 0;
    for (let i = 0; i < reads; i++)
      frames = (await tool({ action: 'read', cursor })).structuredContent.summary.frames;
    if (reads && frames < 100) throw new Error(`a read took ${frames} frames, not 100`);
  } finally {
    await peer.close();
    await s.stop();
  }
  const m = readFileSync(out, 'utf8').match(/^(?:summary|totals):\s+(\d+)/m);
  rmSync(dir, { recursive: true, force: true });
  if (!m) throw new Error('no instruction total in the callgrind output');
  return Number(m[1]);
}

const base = await instructions(0);
const withReads = await instructions(N);
console.log(`${((withReads - base) / N / 1e6).toFixed(2)} M instructions a read ` +
  `(${N} reads of 100 records x 20 blocks; telescope-mcp ${withReads} with them, ${base} without)`);
