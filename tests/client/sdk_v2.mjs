// Conformance against the v2 client (@modelcontextprotocol/client 2.4.0):
// `auto` mode must discover the 2026-07-28 era through server/discover at once
// (a server that stayed silent would cost the whole probe timeout, set to 30 s
// here so the bound below catches it), and a client pinned to 2026-07-28 must
// list and call the tool statelessly.
import assert from 'node:assert/strict';
import { bin, requirePackages, schema, test, note, report } from './common.mjs';

requirePackages('@modelcontextprotocol/client', 'ajv');
const { Client } = await import('@modelcontextprotocol/client');
const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
const Ajv = (await import('ajv')).default;
const validateOutput = new Ajv({ strict: false, allErrors: true }).compile(schema('telescope_frames.output.json'));

async function session(mode, fn) {
  const transport = new StdioClientTransport({ command: bin, args: [], stderr: 'pipe' });
  const client = new Client({ name: 'telescope-conformance-v2', version: '0.0.0' },
    { versionNegotiation: { mode, probe: { timeoutMs: 30_000 } } });
  const errors = [];
  client.onerror = (e) => errors.push(e);
  const t0 = performance.now();
  await client.connect(transport, { timeout: 30_000 });
  const connectMs = performance.now() - t0;
  // Record the raw messages from here on (the client hooked onmessage in connect).
  const seen = [];
  const inner = transport.onmessage;
  transport.onmessage = (m, extra) => { seen.push(m); inner?.(m, extra); };
  try {
    await fn(client, connectMs, seen);
    assert.deepEqual(errors.map(String), [], 'no client-side errors');
    for (const m of seen) assert.equal(m.jsonrpc, '2.0');
  } finally {
    await client.close();
  }
}

async function checkTool(client, seen) {
  const { tools } = await client.listTools();
  assert.equal(tools.length, 1);
  assert.equal(tools[0].name, 'telescope_frames');
  const res = await client.callTool({ name: 'telescope_frames', arguments: { action: 'status' } });
  assert.equal(res.isError ?? false, false);
  assert.ok(validateOutput(res.structuredContent), JSON.stringify(validateOutput.errors));
  assert.equal(res.structuredContent.connection.state, 'not_connected');
  const bad = await client.callTool({ name: 'telescope_frames', arguments: { detail: 'everything' } });
  assert.equal(bad.isError, true);
  assert.match(bad.content[0].text, /^detail: must be one of/);
}

await test('auto mode discovers the modern era via server/discover without waiting for the probe timeout', async () => {
  await session('auto', async (client, connectMs, seen) => {
    note(`auto connect took ${connectMs.toFixed(0)} ms (probe timeout 30000 ms)`);
    assert.ok(connectMs < 2000, `connect took ${connectMs.toFixed(0)} ms: the probe was not answered`);
    assert.equal(client.getProtocolEra(), 'modern');
    assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
    assert.equal(client.getServerVersion()?.name, 'telescope-mcp');
    await checkTool(client, seen);
  });
});

await test('pinned to 2026-07-28: listTools and callTool status, results complete with caching hints', async () => {
  await session({ pin: '2026-07-28' }, async (client, connectMs, seen) => {
    assert.equal(client.getProtocolEra(), 'modern');
    await checkTool(client, seen);
    const results = seen.filter((m) => 'result' in m);
    assert.ok(results.length >= 3, `saw ${results.length} results`);
    for (const m of results) assert.equal(m.result.resultType, 'complete', JSON.stringify(m).slice(0, 200));
    const list = results.find((m) => Array.isArray(m.result.tools));
    assert.ok(Number.isInteger(list.result.ttlMs) && list.result.ttlMs >= 0);
    assert.ok(['public', 'private'].includes(list.result.cacheScope));
  });
});

await test('legacy mode (the default) still works', async () => {
  await session('legacy', async (client, connectMs, seen) => {
    assert.equal(client.getProtocolEra(), 'legacy');
    assert.equal(client.getNegotiatedProtocolVersion(), '2025-11-25');
    await checkTool(client, seen);
    for (const m of seen.filter((x) => 'result' in x)) assert.equal(m.result.resultType, undefined);
  });
});

report();
