// The chart as a reviewer sees it (issue 8): a real chart (telescope-sim,
// `inject 5`, capture with chart "svg") rendered by Debian's headless
// Chromium; the screenshot must not be blank and must show the red jank bars
// and the blue/teal bars of the other frames. Exit 77 (skipped) when
// /usr/bin/chromium is absent: `apt-get install chromium`.
// TELESCOPE_CHART_KEEP=DIR keeps chart.svg and chart.png there.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import assert from 'node:assert/strict';

const CHROMIUM = process.env.TELESCOPE_CHROMIUM ?? '/usr/bin/chromium';
if (!existsSync(CHROMIUM)) {
  console.log(`skipped: ${CHROMIUM} is not installed (Debian package: chromium)`);
  process.exit(77);
}

const { captureWithChart } = await import('./lib.mjs');
const { assertWellFormedSvg, redBars } = await import('./svg.mjs');
const { decodePng } = await import('./png.mjs');

function run(cmd, args, timeoutMs) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${cmd} timed out:\n${out}`)); }, timeoutMs);
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, out }); });
  });
}

const cleanup = [];
const work = mkdtempSync(join(tmpdir(), 'telescope-render-'));
try {
  const { res } = await captureWithChart({ inject: 5, chartDir: join(work, 'charts'), cleanup });
  assert.equal(res.isError, false, res.text);
  const svgPath = res.sc.chart.path;
  const svg = readFileSync(svgPath, 'utf8');
  assertWellFormedSvg(svg);
  assert.equal(redBars(svg), 5);

  const png = join(work, 'out.png');
  const t0 = Date.now();
  const { code, out } = await run(CHROMIUM, [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--hide-scrollbars', `--user-data-dir=${join(work, 'profile')}`, `--screenshot=${png}`,
    '--window-size=1300,500', pathToFileURL(svgPath).href,
  ], 60000);
  assert.ok(existsSync(png), `chromium wrote no screenshot (exit ${code}):\n${out}`);
  // TELESCOPE_CHART_KEEP=DIR keeps the chart and its screenshot for a look.
  if (process.env.TELESCOPE_CHART_KEEP) {
    copyFileSync(svgPath, join(process.env.TELESCOPE_CHART_KEEP, 'chart.svg'));
    copyFileSync(png, join(process.env.TELESCOPE_CHART_KEEP, 'chart.png'));
  }
  const img = decodePng(readFileSync(png));
  assert.equal(img.width, 1300);
  assert.equal(img.height, 500);

  // Classify every pixel. The chart's red (#d62728) and blue/teal
  // (#1f77b4, #17becf) are far from the pale band fills, greys and white.
  let red = 0, redInPlot = 0, blue = 0, nonWhite = 0;
  const colours = new Set();
  const { pixels, channels, width } = img;
  for (let i = 0, p = 0; i < pixels.length; i += channels, p++) {
    const r = pixels[i], g = pixels[i + 1], b = pixels[i + 2];
    if (r < 245 || g < 245 || b < 245) nonWhite++;
    if (colours.size < 1000) colours.add((r << 16) | (g << 8) | b);
    if (r > 170 && g < 90 && b < 90) {
      red++;
      if (Math.floor(p / width) > 64) redInPlot++; // below the legend
    }
    if (b > 150 && r < 90 && b - r > 90) blue++;
  }
  const total = img.width * img.height;
  console.log(`chromium ${Date.now() - t0} ms; ${nonWhite} non-white pixels, ${colours.size} colours, ` +
    `${red} red (${redInPlot} in the plot), ${blue} blue/teal`);
  assert.ok(nonWhite > total * 0.02, 'the screenshot is not blank');
  assert.ok(colours.size > 10, 'the screenshot has more than a few colours');
  assert.ok(redInPlot > 300, `the jank bars are red on screen (${redInPlot} red pixels in the plot)`);
  assert.ok(blue > 2000, `the other frames' bars are blue/teal on screen (${blue} pixels)`);
  console.log('ok: chart rendered by headless chromium shows the jank bars');
} finally {
  for (const c of cleanup.reverse()) await c();
  rmSync(work, { recursive: true, force: true });
}
