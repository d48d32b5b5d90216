// Section 1: start-up and footprint. Time from spawn to the initialize
// response, and peak RSS (VmHWM) over initialize + tools/list + 100 status
// calls, for telescope-mcp and for the baseline SDK server, interleaved.
import { StdioPeer, median, spread, peakRssKiB } from './lib.mjs';

async function once(cmd, args) {
  const peer = new StdioPeer(cmd, args);
  const init = await peer.initialize();
  const startMs = Number(init.at - peer.t0) / 1e6;
  await peer.request('tools/list', {});
  const calls = [];
  for (let i = 0; i < 100; i++)
    calls.push(peer.request('tools/call', { name: 'telescope_frames', arguments: { action: 'status' } }));
  const replies = await Promise.all(calls);
  if (replies.some((r) => !r.msg.result)) throw new Error(`${cmd}: a status call failed`);
  const rssKiB = peakRssKiB(peer.child.pid);
  const { code } = await peer.close();
  if (code !== 0) throw new Error(`${cmd} exited ${code}`);
  return { startMs, rssKiB };
}

export async function run({ mcp, rounds }) {
  const subjects = {
    'telescope-mcp': [mcp, []],
    'baseline (TS SDK 1.32.2, node)': ['node', [new URL('./baseline_server.mjs', import.meta.url).pathname]],
  };
  const res = Object.fromEntries(Object.keys(subjects).map((k) => [k, { startMs: [], rssKiB: [] }]));
  for (let i = 0; i < rounds; i++)
    for (const [name, [cmd, args]] of Object.entries(subjects)) {
      const r = await once(cmd, args);
      res[name].startMs.push(r.startMs);
      res[name].rssKiB.push(r.rssKiB);
    }
  return res;
}
