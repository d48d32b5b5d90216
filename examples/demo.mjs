// The demo's readable half: drives telescope-mcp over stdio the way an agent's
// MCP client does and prints one summary line per step (plain Node, no packages).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const bin = process.argv[2];
const child = spawn(bin, [], { stdio: ['pipe', 'pipe', 'inherit'] });
const pending = new Map();
createInterface({ input: child.stdout }).on('line', (line) => {
  const m = JSON.parse(line);
  pending.get(m.id)?.(m);
  pending.delete(m.id);
});
let nextId = 0;
function request(method, params) {
  const id = nextId++;
  child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
  return new Promise((resolve) => pending.set(id, resolve));
}
const bold = (s) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
const say = (arrow, text) => console.log(`${arrow} ${text}`);
const wrap = (text, indent = '     ') => text.replace(/(.{1,86})(\s|$)/g, `${indent}$1\n`).trimEnd();

console.log(bold(`telescope-mcp demo — ${bin}\n`));

say('→', 'initialize (protocol 2025-11-25)');
const init = (await request('initialize', { protocolVersion: '2025-11-25', capabilities: {},
  clientInfo: { name: 'demo', version: '0' } })).result;
child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
say('←', `${init.serverInfo.name} ${init.serverInfo.version}, protocol ${init.protocolVersion}, ` +
  `capabilities: ${Object.keys(init.capabilities).join(', ')}`);
say(' ', 'instructions for the agent:');
console.log(wrap(init.instructions));

say('\n→', 'tools/list');
const { tools } = (await request('tools/list', {})).result;
for (const t of tools) {
  say('←', `${bold(t.name)} — ${t.title}`);
  const actions = t.inputSchema.properties.action.enum.join(' | ');
  say(' ', `actions: ${actions}`);
  say(' ', `arguments: ${Object.keys(t.inputSchema.properties).join(', ')}`);
  say(' ', `annotations: ${Object.entries(t.annotations).filter(([k]) => k.endsWith('Hint'))
    .map(([k, v]) => `${k}=${v}`).join(' ')}`);
  say(' ', `output fields: ${Object.keys(t.outputSchema.properties).join(', ')}`);
}

async function call(args) {
  say('\n→', `tools/call telescope_frames ${JSON.stringify(args)}`);
  const res = (await request('tools/call', { name: 'telescope_frames', arguments: args })).result;
  const sc = res.structuredContent;
  if (sc) {
    say('←', `${res.isError ? 'isError' : 'ok'}: action=${sc.action}, connection=${sc.connection?.state}`);
    if (sc.diagnosis) {
      say(' ', `diagnosis ${bold(sc.diagnosis.code)}: ${sc.diagnosis.message}`);
      say(' ', `hint: ${sc.diagnosis.hint}`);
    }
  } else {
    say('←', `${res.isError ? 'isError' : 'ok'}: ${res.content[0].text}`);
  }
}
await call({ action: 'status' });
await call({ action: 'start', interactionId: 'scroll-feed' });
await call({ action: 'read', limit: 5000 });

say('\n→', 'server/discover (the stateless 2026-07-28 era)');
const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const disc = (await request('server/discover', { _meta: meta })).result;
say('←', `supportedVersions: ${disc.supportedVersions.join(', ')}; resultType=${disc.resultType}`);

child.stdin.end();
const code = await new Promise((resolve) => child.on('exit', resolve));
say('\n■', `stdin closed → telescope-mcp exited with ${code}`);
console.log('\nNo Flutter app is connected in this demo, so every action reports not_connected;');
console.log('with an app, pass vmServiceUri (or --vm-service-uri) and the same calls return frames.');
