// chart "svg" end to end (issue 8): the official SDK client drives the real
// telescope-mcp against telescope-sim; the chart comes back as a
// resource_link and as structuredContent.chart, and the file it names is a
// well-formed SVG whose red bars are exactly the injected janky frames.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync, statSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { spawn } from 'node:child_process';
import { startSim, startMcp, until, sleep, tempDir, assertNoTokenLeak, BUILD, serverOutput } from '../integration/harness.mjs';
import { captureWithChart } from './lib.mjs';
import { assertWellFormedSvg, redBars } from './svg.mjs';

const cleanup = [];
after(async () => { for (const c of cleanup.reverse()) await c(); assertNoTokenLeak(); });

test('capture with chart svg: resource_link to a valid SVG with one red bar per janky frame', async () => {
  const { res, chartDir } = await captureWithChart({ inject: 5, cleanup });
  assert.equal(res.isError, false, res.text);
  assert.equal(res.sc.summary.jank.frames, 5);
  const { path, uri } = res.sc.chart;
  assert.equal(dirname(path), chartDir, 'written into --chart-dir (created with its parents)');
  assert.match(path, /\/telescope-s1-\d{8}T\d{6}\.\d{3}Z\.svg$/);
  assert.equal(uri, pathToFileURL(path).href);
  const links = res.result.content.filter((c) => c.type === 'resource_link');
  assert.equal(links.length, 1);
  assert.deepEqual(links[0], {
    type: 'resource_link', uri, name: path.split('/').pop(), mimeType: 'image/svg+xml',
    description: `SVG frame chart: ${res.sc.summary.frames} frames, 5 janky, budget 16.7 ms`,
  });
  assert.equal(res.result.content[0].type, 'text', 'the text block comes first');
  assert.ok(existsSync(path));
  assert.equal(statSync(path).mode & 0o777, 0o644);
  const svg = readFileSync(path, 'utf8');
  assertWellFormedSvg(svg);
  assert.equal(redBars(svg), 5, 'exactly the five injected frames are red');
  assert.match(svg, new RegExp(`${res.sc.summary.frames} frames, 5 janky`));
  assert.match(svg, /16\.7 ms budget/);
  assert.ok((svg.match(/<text class="worst"[^>]*>[^<]*<tspan font-weight="bold">SlowWidget<\/tspan>/g) ?? []).length === 5,
    'the five worst frames are labelled with their top self-time block');
});

test('stop with chart svg charts the session; an interaction gets its band', async () => {
  const dir = tempDir();
  const s = await startSim(['--seed', '7', '--scenario', 'idle']);
  cleanup.push(() => s.kill());
  const m = await startMcp(['--vm-service-uri-file', s.uriFile, '--chart-dir', dir]);
  cleanup.push(() => m.close());
  assert.equal((await m.call({ action: 'start', interactionId: 'scroll-<feed>&' })).isError, false);
  await s.cmd('scenario steady');
  // The sim's first frame is the app's start-up (frameNumber 1), never jank.
  await sleep(150);
  await s.cmd('inject 3');
  await sleep(500);
  await s.cmd('scenario idle');
  await sleep(300);
  const stop = await m.call({ action: 'stop', chart: 'svg' });
  assert.equal(stop.isError, false, stop.text);
  const svg = readFileSync(stop.sc.chart.path, 'utf8');
  assertWellFormedSvg(svg);
  assert.equal(redBars(svg), stop.sc.summary.jank.frames);
  assert.equal(stop.sc.summary.jank.frames, 3);
  assert.match(svg, /<rect class="band"[^>]*><title>interaction scroll-&lt;feed&gt;&amp;<\/title>/);
  // Without chart, no file and no link.
  const st2 = await m.call({ action: 'capture', durationMs: 100 });
  assert.equal(st2.sc.chart, undefined);
  assert.equal(st2.result.content.length, 1);
});

test('a chart that cannot be written: the answer stands, without chart, saying why', async () => {
  const file = join(tempDir(), 'not-a-dir');
  writeFileSync(file, 'x');
  const s = await startSim(['--seed', '7', '--scenario', 'steady']);
  cleanup.push(() => s.kill());
  const m = await startMcp(['--vm-service-uri-file', s.uriFile, '--chart-dir', join(file, 'charts')]);
  cleanup.push(() => m.close());
  const r = await m.call({ action: 'capture', durationMs: 300, chart: 'svg' });
  assert.equal(r.isError, false, r.text);
  assert.ok(r.sc.summary.frames > 0);
  assert.equal(r.sc.chart, undefined);
  const note = r.result.content.find((c) => c.type === 'text' && c.text.startsWith('chart: not written'));
  assert.ok(note, JSON.stringify(r.result.content));
  assert.match(note.text, /not-a-dir\/charts/);
  assert.equal(r.result.content.some((c) => c.type === 'resource_link'), false);
  await until(() => m.stderr.includes('chart: not written'), { what: 'the warning on stderr' });
});

// Raw JSON-RPC lines, so the protocol version is ours to choose (the SDK
// always negotiates its newest).
async function rawCapture(version, chartDir, uriFile) {
  const child = spawn(join(BUILD, 'telescope-mcp'), ['--vm-service-uri-file', uriFile, '--chart-dir', chartDir],
    { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d) => { out += d; });
  const send = (m) => child.stdin.write(JSON.stringify(m) + '\n');
  const reply = (id) => until(() => out.split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((m) => m.id === id),
    { timeoutMs: 20000, what: `reply ${id}` });
  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
  await reply(1);
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'telescope_frames', arguments: { action: 'capture', durationMs: 300, chart: 'svg' } } });
  const r = await reply(2);
  child.stdin.end();
  await new Promise((res) => child.on('exit', res));
  serverOutput.push(out);
  return r.result;
}

test('resource_link only from 2025-06-18 on; older clients find the path in the text', async () => {
  const s = await startSim(['--seed', '7', '--scenario', 'steady']);
  cleanup.push(() => s.kill());
  const dir = tempDir();
  const old = await rawCapture('2025-03-26', dir, s.uriFile);
  assert.equal(old.isError, undefined);
  assert.equal(old.structuredContent, undefined);
  assert.deepEqual(old.content.map((c) => c.type), ['text']);
  const chart = JSON.parse(old.content[0].text).chart;
  assert.ok(existsSync(chart.path) && dirname(chart.path) === dir, JSON.stringify(chart));
  const cur = await rawCapture('2025-06-18', dir, s.uriFile);
  assert.deepEqual(cur.content.map((c) => c.type), ['text', 'resource_link']);
  assert.equal(cur.content[1].uri, cur.structuredContent.chart.uri);
  assert.notEqual(cur.structuredContent.chart.path, chart.path, 'a second chart is a second file');
});

test('chart on another action is refused, naming the field', async () => {
  const s = await startSim(['--seed', '7', '--scenario', 'steady']);
  cleanup.push(() => s.kill());
  const m = await startMcp(['--vm-service-uri-file', s.uriFile, '--chart-dir', tempDir()]);
  cleanup.push(() => m.close());
  for (const action of ['read', 'start', 'status', 'mark']) {
    const r = await m.call({ action, chart: 'svg' });
    assert.equal(r.isError, true, action);
    assert.match(r.text, /^chart: only with action stop or capture/);
  }
});

test('stop with interactionId charts only that interaction', async () => {
  const s = await startSim(['--seed', '7', '--scenario', 'idle']);
  cleanup.push(() => s.kill());
  const m = await startMcp(['--vm-service-uri-file', s.uriFile, '--chart-dir', tempDir()]);
  cleanup.push(() => m.close());
  assert.equal((await m.call({ action: 'start' })).isError, false);
  await s.cmd('scenario steady');
  await s.cmd('inject 2');
  await sleep(300);
  assert.equal((await m.call({ action: 'mark', interactionId: 'tap-buy' })).isError, false);
  await s.cmd('inject 3');
  await sleep(400);
  assert.equal((await m.call({ action: 'mark' })).isError, false);
  await sleep(200);
  await s.cmd('scenario idle');
  await sleep(300);
  const stop = await m.call({ action: 'stop', interactionId: 'tap-buy', chart: 'svg' });
  assert.equal(stop.isError, false, stop.text);
  const svg = readFileSync(stop.sc.chart.path, 'utf8');
  assertWellFormedSvg(svg);
  const columns = (svg.match(/<g class="frame/g) ?? []).length;
  assert.equal(columns, stop.sc.summary.frames, 'one column per frame of the interaction');
  assert.equal(redBars(svg), 3, 'only the jank injected inside the interaction');
  assert.match(svg, /telescope s1 stop of tap-buy/);
  assert.equal((svg.match(/<rect class="band"/g) ?? []).length, 1, 'one band: every frame is of tap-buy');
});
