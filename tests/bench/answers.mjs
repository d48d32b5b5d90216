// "Measure it" of issue 13: what each action's answer costs an agent, and
// whether the cause of jank comes first. For every sim scenario (seed 7,
// 60 fps) one telescope-mcp runs status, start, mark, read (after 1.5 s),
// stop (after 1.5 s more), then a 2 s capture. Reported per action: bytes of
// the first text block and of the whole tools/call result (content +
// structuredContent, compact JSON), and approximate tokens as bytes / 4.
// Then the correctness table: stop's first finding against the scenario's
// known cause, without tracking and with trackWidgets + trackLayouts.
//
// Usage: node answers.mjs BUILD_DIR [--before OLD_TELESCOPE_MCP] [--out FILE]
// --before runs the same calls against another telescope-mcp binary (e.g.
// one built from main before this change) with this build's sim, so both
// columns see identical frames.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { StdioPeer, startSim, sleep, median } from './lib.mjs';

const args = process.argv.slice(2);
const build = resolve(args[0] ?? 'build');
const opt = (name) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : null; };
const before = opt('--before');
const out = opt('--out');
const sim = `${build}/telescope-sim`;
const log = (m) => process.stderr.write(`[answers] ${m}\n`);

// The known cause of each scenario's jank: what stop's first finding must
// name (null: nothing janky). layout-bound without trackLayouts has no name
// below LAYOUT, so its first finding says to switch trackLayouts on.
const SCENARIOS = [
  { name: 'steady', cause: null },
  { name: 'janky', cause: 'SlowWidget' },
  { name: 'rare-slow', cause: 'SlowWidget', tracked: 'SlowWidget' },
  { name: 'layout-bound', cause: 'trackLayouts', tracked: 'RenderFlex' },
  { name: 'raster-bound', cause: 'raster' },
  { name: 'idle', cause: null },
  { name: 'stalled', cause: null },
];
const ACTIONS = ['status', 'start', 'mark', 'read', 'stop', 'capture'];

async function run(mcp, scenario, { track = false } = {}) {
  const s = await startSim(sim, ['--scenario', scenario, '--fps', '60']);
  const peer = new StdioPeer(mcp, ['--vm-service-uri', s.wsUri, '--call-timeout-ms', '10000']);
  const sizes = {};
  let stop;
  try {
    await peer.initialize();
    const call = async (action, extra = {}) => {
      const { msg } = await peer.request('tools/call',
        { name: 'telescope_frames', arguments: { action, ...extra } });
      const text = msg.result?.content?.[0]?.text ?? '';
      sizes[action] = {
        text: Buffer.byteLength(text),
        whole: Buffer.byteLength(JSON.stringify(msg.result ?? msg.error)),
      };
      return msg.result;
    };
    await call('status');
    await call('start', track ? { trackWidgets: true, trackLayouts: true } : {});
    await call('mark', { interactionId: 'scroll' });
    await sleep(1500);
    await call('read');
    await sleep(1500);
    stop = await call('stop');
    await call('capture', { durationMs: 2000 });
  } finally {
    await peer.close();
    await s.stop();
  }
  const sum = stop?.structuredContent?.summary;
  return {
    sizes,
    first: sum?.findings?.[0]?.name ?? null,
    firstKind: sum?.findings?.[0]?.kind ?? null,
    topBlock: sum?.topBlocks?.[0]?.name ?? null,
    jank: sum?.jank?.frames ?? 0,
    frames: sum?.frames ?? 0,
    diagnosis: stop?.structuredContent?.diagnosis?.code ?? null,
  };
}

const subjects = [['after', `${build}/telescope-mcp`]];
if (before) subjects.unshift(['before', resolve(before)]);
const results = {};
for (const sc of SCENARIOS) {
  for (const [label, mcp] of subjects) {
    log(`${sc.name}: ${label}`);
    results[`${sc.name}/${label}`] = await run(mcp, sc.name);
  }
  if (sc.tracked)
    for (const [label, mcp] of subjects) {
      log(`${sc.name}: ${label}, tracked`);
      results[`${sc.name}/${label}-tracked`] = await run(mcp, sc.name, { track: true });
    }
}

const tok = (b) => Math.round(b / 4);
const cell = (r, a, k) => (r?.sizes[a] ? `${r.sizes[a][k]} (~${tok(r.sizes[a][k])})` : 'n/a');
let md = `## Answers: bytes per action and the cause first (issue 13)

Each scenario of telescope-sim (seed 7, 60 fps) against one telescope-mcp: status, start, mark
"scroll", read after 1.5 s, stop after 1.5 s more, then a 2 s capture. *text* is the first text
block, *whole* the tools/call result as compact JSON (content + structuredContent); tokens are
approximated as **bytes / 4**. ${before ? `*before* is \`${before}\`, *after* this build; both read the same simulated frames.` : ''}

| scenario | action | ${subjects.map(([l]) => `${l}: text B (~tok)`).join(' | ')} | ${subjects.map(([l]) => `${l}: whole B (~tok)`).join(' | ')} |
|---|---|${subjects.map(() => '---|').join('')}${subjects.map(() => '---|').join('')}
`;
for (const sc of SCENARIOS)
  for (const a of ACTIONS)
    md += `| ${sc.name} | ${a} | ${subjects.map(([l]) => cell(results[`${sc.name}/${l}`], a, 'text')).join(' | ')} | ${subjects.map(([l]) => cell(results[`${sc.name}/${l}`], a, 'whole')).join(' | ')} |\n`;

const janky = SCENARIOS.filter((s) => s.cause).map((s) => results[`${s.name}/after`]);
const stopText = janky.map((r) => r.sizes.stop.text);
md += `
Largest text of a janky stop/capture: ${Math.max(...janky.flatMap((r) => [r.sizes.stop.text, r.sizes.capture.text]))} B (budget 1 500);
largest start/mark/status text: ${Math.max(...SCENARIOS.flatMap((s) => ['start', 'mark', 'status'].map((a) => results[`${s.name}/after`].sizes[a].text)))} B (budget 600);
largest whole stop/capture: ${Math.max(...SCENARIOS.flatMap((s) => ['stop', 'capture'].map((a) => results[`${s.name}/after`].sizes[a].whole)))} B (budget 6 144). Median janky stop text: ${median(stopText)} B.

### Is the cause the first finding?

| scenario | known cause | jank (frames) | first finding (after) | correct | tracked (trackWidgets + trackLayouts): first finding | topBlocks[0]${before ? ' (before)' : ''}, untracked / tracked |
|---|---|---|---|---|---|---|
`;
for (const sc of SCENARIOS) {
  const r = results[`${sc.name}/after`], t = results[`${sc.name}/after-tracked`];
  const b = results[`${sc.name}/${before ? 'before' : 'after'}`];
  const bt = results[`${sc.name}/${before ? 'before' : 'after'}-tracked`];
  const ok = sc.cause ? r.first === sc.cause : r.first === null;
  const tr = t ? `${t.first} (${t.first === sc.tracked ? 'correct' : '**wrong**'})` : '—';
  md += `| ${sc.name} | ${sc.cause ?? 'none'} | ${r.jank}/${r.frames} | ${r.first ? `${r.first} (${r.firstKind})` : r.diagnosis ? `none (${r.diagnosis})` : 'none'} | ${ok ? 'yes' : '**no**'} | ${tr} | ${b.topBlock ?? '—'} / ${bt?.topBlock ?? '—'} |\n`;
}
process.stdout.write(md);
if (out) writeFileSync(out, md);
