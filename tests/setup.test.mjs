// `telescope-mcp --setup CLIENT [-- ARGS...]` for all six clients: the
// configuration on stdout parses back (JSON; TOML for codex; a shell command
// for claude-code, run against a stand-in `claude`), names the binary by its
// absolute path even when it was started by a relative one from a directory
// whose name has a space and quotes, and carries ARGS unchanged however they
// must be escaped. stderr names the file on Linux, macOS and Windows, and the
// wsl.exe form, which parses too.
//
//   node --test tests/setup.test.mjs   (TELESCOPE_BINARY_DIR: the build tree)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const built = join(process.env.TELESCOPE_BINARY_DIR ?? 'build', 'telescope-mcp');
const root = mkdtempSync(join(tmpdir(), 'telescope-setup-'));
const dir = join(root, `my "dev" tools's dir`);
spawnSync('mkdir', ['-p', dir]);
copyFileSync(built, join(dir, 'telescope-mcp'));
chmodSync(join(dir, 'telescope-mcp'), 0o755);
const exe = realpathSync(join(dir, 'telescope-mcp'));
process.on('exit', () => rmSync(root, { recursive: true, force: true }));

// Everything a shell, JSON or TOML would mangle if it were not escaped.
const ARGS = ['--vm-service-uri-file', `/tmp/a b'c"d\\e$HOME\`x\` é\ttab\x7f\x01`, '--log-level', 'info'];

function setup(client, args = ARGS, { sep = true } = {}) {
  const r = spawnSync('./telescope-mcp', ['--setup', client, ...(sep ? ['--'] : []), ...args],
                      { cwd: dir, encoding: 'utf8' });
  return { rc: r.status, out: r.stdout, err: r.stderr };
}

// The TOML --setup writes: one [table] header, then `key = value` lines whose
// values are basic strings (the escapes TOML shares with JSON), integers or
// arrays of those. Anything else is an error, so a change of shape shows.
const STR = String.raw`"(?:[^"\\\x00-\x1f\x7f]|\\["\\ntr]|\\u[0-9A-F]{4})*"`;
const VALUE = new RegExp(String.raw`^(?:\d+|${STR}|\[(?:${STR}(?:, ${STR})*)?\])$`);
function parseToml(text) {
  const out = {};
  let table = null;
  for (const line of text.split('\n')) {
    if (!line) continue;
    const h = /^\[([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)\]$/.exec(line);
    if (h) {
      table = out;
      for (const k of h[1].split('.')) table = table[k] ??= {};
      continue;
    }
    const kv = /^([A-Za-z0-9_]+) = (.+)$/.exec(line);
    assert.ok(kv && table, `not TOML of the expected shape: ${JSON.stringify(line)}`);
    const v = kv[2];
    assert.match(v, VALUE, `not a TOML value of the expected shape: ${v}`);
    table[kv[1]] = JSON.parse(v);
  }
  return out;
}

// A real TOML parser as a second opinion where one is at hand (Python 3.11+):
// null without one, an exception when it refuses the text.
function tomllibParse(text) {
  const have = spawnSync('python3', ['-c', 'import tomllib'], { encoding: 'utf8' });
  if (have.status !== 0) return null;
  const r = spawnSync('python3', ['-c', 'import json,sys,tomllib; print(json.dumps(tomllib.loads(sys.stdin.read())))'],
                      { input: text, encoding: 'utf8' });
  assert.equal(r.status, 0, `tomllib refuses the TOML: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

function checkWhere(err) {
  for (const os of ['Linux:', 'macOS:', 'Windows:']) assert.match(err, new RegExp(`^  ${os} +\\S`, "m"));
}

for (const [client, key] of [['claude-desktop', 'mcpServers'], ['cursor', 'mcpServers'],
                             ['vscode', 'servers'], ['gemini', 'mcpServers']]) {
  test(`${client}: JSON with the absolute path and the arguments`, () => {
    const { rc, out, err } = setup(client);
    assert.equal(rc, 0, err);
    const entry = JSON.parse(out)[key]?.telescope;
    assert.ok(entry, `no ${key}.telescope in ${out}`);
    assert.equal(entry.command, exe);
    assert.ok(entry.command.startsWith('/'));
    assert.deepEqual(entry.args, ARGS);
    if (client === 'vscode') assert.equal(entry.type, 'stdio');
    if (client === 'gemini') assert.equal(entry.timeout, 180000);
    checkWhere(err);
    const wsl = JSON.parse(/^  (\{"command":"wsl\.exe".*)$/m.exec(err)?.[1] ?? 'null');
    assert.deepEqual(wsl, { command: 'wsl.exe', args: ['-e', exe, ...ARGS] });
  });
}

test('codex: TOML with the absolute path and the arguments', () => {
  const { rc, out, err } = setup('codex');
  assert.equal(rc, 0, err);
  const cfg = parseToml(out);
  const entry = cfg.mcp_servers?.telescope;
  assert.equal(entry.command, exe);
  assert.deepEqual(entry.args, ARGS);
  assert.equal(entry.tool_timeout_sec, 180);
  const real = tomllibParse(out);
  if (real) assert.deepEqual(real, cfg);
  else console.log('# python3 with tomllib not found: the TOML was checked by the test\'s own parser only');
  checkWhere(err);
  const wsl = /^  command = "wsl\.exe"\n  args = (.*)$/m.exec(err);
  assert.ok(wsl, err);
  assert.deepEqual(parseToml(`[t]\nargs = ${wsl[1]}\n`).t.args, ['-e', exe, ...ARGS]);
});

test('claude-code: a claude mcp add command a shell runs with the arguments intact', () => {
  const { rc, out, err } = setup('claude-code');
  assert.equal(rc, 0, err);
  assert.equal(out.split('\n').length, 2, 'one line');
  // A stand-in claude that prints the argv the shell gave it.
  const bin = join(root, 'bin');
  spawnSync('mkdir', ['-p', bin]);
  writeFileSync(join(bin, 'claude'), `#!${process.execPath}\nconsole.log(JSON.stringify(process.argv.slice(2)));\n`);
  chmodSync(join(bin, 'claude'), 0o755);
  const r = spawnSync('sh', ['-c', out], { encoding: 'utf8', env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, HOME: '/nonexistent' } });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout),
                   ['mcp', 'add', '--transport', 'stdio', '--scope', 'user', 'telescope', '--', exe, ...ARGS]);
  assert.match(err, /~\/\.claude\.json/);
});

test('without --, the arguments after the client are the server\'s too', () => {
  const a = setup('cursor'), b = setup('cursor', ARGS, { sep: false });
  assert.equal(b.rc, 0, b.err);
  assert.equal(b.out, a.out);
});

test('no arguments: an empty list', () => {
  const { rc, out } = setup('claude-desktop', []);
  assert.equal(rc, 0);
  assert.deepEqual(JSON.parse(out).mcpServers.telescope.args, []);
});

test('refused, with nothing on stdout: an unknown client, a bad server option, --setup not first', () => {
  for (const [argv, re] of [[['--setup', 'zed'], /unknown client 'zed' \(claude-code\|/],
                            [['--setup', 'cursor', '--', '--no-such-flag'], /unknown option '--no-such-flag'/],
                            [['--setup', 'cursor', '--', '--call-timeout-ms', '0'], /--call-timeout-ms/],
                            [['--log-level', 'info', '--setup', 'cursor'], /--setup comes first/],
                            [['--setup'], /--setup needs a client/]]) {
    const r = spawnSync(exe, argv, { encoding: 'utf8' });
    assert.equal(r.status, 2, `${argv.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '', argv.join(' '));
    assert.match(r.stderr, re);
  }
});
