// Every client configuration in examples/clients parses and launches the
// installed telescope-mcp. Usage: node examples_check.mjs EXAMPLES_DIR BINARY
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const [dir, binary] = process.argv.slice(2);
let failures = 0, checked = 0;
const fail = (f, msg) => { console.error(`FAIL ${f}: ${msg}`); failures++; };

// The one TOML shape we ship: [table] headers and `key = value` lines whose
// values are JSON-compatible (strings, numbers, arrays of strings).
function parseToml(text) {
  const out = {}; let table = out;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\s+#.*$/, '').trim();
    if (!line || line.startsWith('#')) continue;
    const h = line.match(/^\[([A-Za-z0-9_.]+)\]$/);
    if (h) { table = out; for (const k of h[1].split('.')) table = (table[k] ??= {}); continue; }
    const kv = line.match(/^([A-Za-z0-9_]+)\s*=\s*(.+)$/);
    if (!kv) throw new Error(`unparsable line: ${raw}`);
    table[kv[1]] = JSON.parse(kv[2]);
  }
  return out;
}

for (const f of readdirSync(dir).sort()) {
  const text = readFileSync(join(dir, f), 'utf8');
  let server;
  try {
    if (f.endsWith('.json')) {
      const cfg = JSON.parse(text);
      const key = f.startsWith('vscode') ? 'servers' : 'mcpServers';
      server = cfg[key]?.telescope;
      if (!server) { fail(f, `no ${key}.telescope`); continue; }
      if (f.startsWith('vscode') && server.type !== 'stdio') fail(f, 'VS Code needs type stdio');
    } else if (f.endsWith('.toml')) {
      server = parseToml(text).mcp_servers?.telescope;
      if (!server) { fail(f, 'no [mcp_servers.telescope]'); continue; }
    } else if (f.endsWith('.sh')) {
      const m = text.match(/claude mcp add .* telescope -- \\?\s*(\S+)/s);
      if (!m) { fail(f, 'no `claude mcp add … telescope -- BINARY` line'); continue; }
      server = { command: m[1] };
    } else continue;
  } catch (e) { fail(f, e.message); continue; }
  checked++;
  if (server.command !== binary) fail(f, `command is ${server.command}, expected ${binary}`);
  if (server.args && !Array.isArray(server.args)) fail(f, 'args is not an array');
}
if (checked < 7) fail(dir, `only ${checked} configurations found, expected 7`);
console.log(`${checked - failures} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
