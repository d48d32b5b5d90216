// Issue 19's correctness table, for BENCHMARKS §11: each real recording of
// tests/recordings/ replayed by telescope-sim --replay and measured with a
// default capture through telescope-mcp, with the watcher and without,
// against the baseline of the recording's expected.json (written from the
// trace alone by tests/recordings/expect.mjs, which shares no code with
// telescope). The integration test recordings.test.mjs asserts the same;
// this prints what the answers were.
//
// Usage: node recordings.mjs BUILD_DIR   (markdown on stdout)
import { readFileSync, readdirSync, existsSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { StdioPeer, startSim, callTool } from './lib.mjs';
import { cutWindow } from '../recordings/expect.mjs';

const build = resolve(process.argv[2] ?? 'build');
const DIR = new URL('../recordings/', import.meta.url).pathname;
const BLOCK_KINDS = new Set(['phase', 'widget', 'render_object']);
const names = readdirSync(DIR, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(DIR, d.name, 'expected.json')))
  .map((d) => d.name).sort();

async function capture(name, simArgs, exp = JSON.parse(readFileSync(join(DIR, name, 'expected.json'), 'utf8')),
  trace = join(DIR, name, 'trace.json')) {
  const sim = await startSim(`${build}/telescope-sim`, ['--replay', trace, ...simArgs]);
  const peer = new StdioPeer(`${build}/telescope-mcp`, ['--vm-service-uri', sim.wsUri]);
  try {
    await peer.initialize();
    const durationMs = Math.ceil(exp.recordingUs / 1000) + 1000;
    const r = (await callTool(peer, { action: 'capture', durationMs })).msg.result;
    return { exp, s: r.structuredContent?.summary ?? {}, bytes: Buffer.byteLength(r.content?.[0]?.text ?? '') };
  } finally {
    await peer.close();
    await sim.stop();
  }
}

const describe = (f) => (f ? `${f.kind}${f.name && f.name !== f.kind ? ` ${f.name}` : ''}` : 'none');
const share = (f) => (f?.explains !== undefined ? ` (${Math.round(f.explains * 100)} %)` : '');
const rows = [];
let matched = 0, total = 0;
// The recordings, then the stretches of them that windows.json answers.
const tmp = mkdtempSync(join(tmpdir(), 'telescope-bench-windows-'));
const cases = names.map((name) => ({ name, label: name }));
for (const win of JSON.parse(readFileSync(join(DIR, 'windows.json'), 'utf8')).windows) {
  const trace = join(tmp, `${win.recording}-${win.from}-${win.to}.json`);
  writeFileSync(trace, JSON.stringify(cutWindow(JSON.parse(readFileSync(join(DIR, win.recording, 'trace.json'), 'utf8')), win.from, win.to)));
  cases.push({ name: win.recording, label: `${win.recording}, frames ${win.from}–${win.to}`, exp: win, trace });
}
for (const { name, label, exp: given, trace } of cases) {
  const w = await capture(name, [], given, trace);
  const n = await capture(name, ['--no-watcher'], given, trace);
  const exp = w.exp;
  const want = exp.firstCause;
  const same = (s, mode) => {
    const got = s.findings?.[0];
    const cause = mode === 'no-watcher' && want && BLOCK_KINDS.has(want.kind)
      ? got?.kind === 'build' // no blocks: the UI thread's build stands for a phase
      : want ? got?.kind === want.kind && (want.name === undefined || got?.name === want.name) : !got;
    return cause && s.jank?.boundBy === exp.jank.boundBy &&
      exp.startup.frameNumbers.every((f) => (s.startup?.frameNumbers ?? []).includes(f));
  };
  const okW = same(w.s, 'watcher'), okN = same(n.s, 'no-watcher');
  matched += okW + okN;
  total += 2;
  rows.push(`| ${label} | ${exp.frames} frames, ${exp.jank.frames} janky, start-up ${JSON.stringify(exp.startup.frameNumbers)} | ${describe(want)}, bound by ${exp.jank.boundBy} | ${describe(w.s.findings?.[0])}${share(w.s.findings?.[0])}, bound by ${w.s.jank?.boundBy} — ${okW ? 'match' : '**differs**'} | ${describe(n.s.findings?.[0])}${share(n.s.findings?.[0])}, bound by ${n.s.jank?.boundBy} — ${okN ? 'match' : '**differs**'} | ${w.bytes} / ${n.bytes} |`);
  process.stderr.write(`[recordings] ${label} done\n`);
}
rmSync(tmp, { recursive: true, force: true });
console.log(`## 11. Correctness on real recordings (issue 19)

From \`tests/bench/recordings.mjs\` (part of \`make bench\`): each recording of \`tests/recordings/\`
(real DevTools exports of Flutter apps) replayed by \`telescope-sim --replay\` and measured with a
default \`capture\` through telescope-mcp, with the watcher and without. The baseline is the
recording's \`expected.json\`, derived from the trace by \`tests/recordings/expect.mjs\`, which shares
no code with telescope. The last rows are stretches of the recordings played alone, answered by the
same script over their own frames (\`windows.json\`; not new recordings). A match is the same first cause (without the watcher a phase shows as the
UI thread's \`build\`), the same bound-by and every start-up frame labelled as such.

| recording | the recording | expected first cause | telescope, watcher | telescope, no watcher | text bytes (watcher / none) |
|---|---|---|---|---|---|
${rows.join('\n')}

**${matched} of ${total}** answers match the independent expected answer.
RESULT ${JSON.stringify({ matched, total, recordings: names.length, windows: cases.length - names.length })}`);
