// Runs one hand-written JSON-RPC session of examples/jsonrpc against the
// binary and compares stdout with its .expected.jsonl through the transcript
// cases' comparator (tests/cases/compare.mjs: "$ANY", "$STRING", "$REST").
//
//   node tests/examples_jsonrpc.mjs BINARY examples/jsonrpc/NAME.jsonl
//
// NAME.args, when present, holds the command-line flags (one line), e.g.
// `--sim --scenario janky --seed 7`. A person pipes the file in; a session
// with calls that take time (a capture) needs stdin held open until they
// answer, since stdin EOF cancels what is still running:
//   (cat NAME.jsonl; sleep 3) | telescope-mcp $(cat NAME.args)
// This runner does the same, but closes stdin as soon as the expected
// number of lines has arrived (or after 20 s), so it does not sleep.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [bin, input] = process.argv.slice(2);
const base = input.replace(/\.jsonl$/, '');
const expectedPath = `${base}.expected.jsonl`;
const args = existsSync(`${base}.args`) ? readFileSync(`${base}.args`, 'utf8').trim().split(/\s+/).filter(Boolean) : [];
const want = readFileSync(expectedPath, 'utf8').split('\n').filter((l) => l.trim() !== '').length;

const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'] });
let out = '', err = '';
const lines = () => out.split('\n').length - 1;
const timer = setTimeout(() => child.stdin.end(), 20000);
child.stdout.on('data', (d) => {
  out += d;
  if (lines() >= want) { clearTimeout(timer); child.stdin.end(); }
});
child.stderr.on('data', (d) => { err += d; });
child.stdin.write(readFileSync(input));
const { code, signal } = await new Promise((r) => child.on('exit', (c, s) => r({ code: c, signal: s })));
clearTimeout(timer);
if (code !== 0) {
  console.error(`FAIL: telescope-mcp ${args.join(' ')} exited with ${code ?? signal}\n${err}`);
  process.exit(1);
}

const tmp = mkdtempSync(join(tmpdir(), 'telescope-example-'));
writeFileSync(join(tmp, 'out'), out);
const compare = join(dirname(fileURLToPath(import.meta.url)), 'cases', 'compare.mjs');
const cmp = spawn(process.execPath, [compare, join(tmp, 'out'), expectedPath], { stdio: 'inherit' });
const status = await new Promise((r) => cmp.on('exit', r));
rmSync(tmp, { recursive: true, force: true });
process.exit(status);
