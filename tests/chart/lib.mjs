// The real pipeline up to a chart file: telescope-sim (idle, seeded) and
// telescope-mcp under the SDK client with --chart-dir, a session opened by a
// capture, `inject N` janky frames among steady ones, the capture's answer.
import { join } from 'node:path';
import { startSim, startMcp, until, sleep, tempDir } from '../integration/harness.mjs';

export async function captureWithChart({ inject = 5, chartDir = join(tempDir(), 'charts', 'nested'), cleanup }) {
  const s = await startSim(['--seed', '7', '--scenario', 'idle', '--fps', '60']);
  cleanup.push(() => s.kill());
  const m = await startMcp(['--vm-service-uri-file', s.uriFile, '--chart-dir', chartDir]);
  cleanup.push(() => m.close());
  const call = m.call({ action: 'capture', durationMs: 1800, chart: 'svg' });
  // Drive the app once the capture's session is collecting.
  await until(async () => (await s.stats()).collecting, { what: 'capture session open' });
  await s.cmd('scenario steady');
  // The sim's first frame is the app's start-up (frameNumber 1), never jank.
  await sleep(150);
  await s.cmd(`inject ${inject}`);
  await sleep(700);
  await s.cmd('scenario idle');
  const res = await call;
  return { s, m, res, chartDir };
}
