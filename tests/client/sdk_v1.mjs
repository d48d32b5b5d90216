// Conformance against the official TypeScript SDK v1 client
// (@modelcontextprotocol/sdk 1.32.2) driving the real telescope-mcp binary.
import assert from 'node:assert/strict';
import { bin, requirePackages, schema, test, note, report } from './common.mjs';

requirePackages('@modelcontextprotocol/sdk', 'ajv');
const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
const { McpError } = await import('@modelcontextprotocol/sdk/types.js');
const Ajv = (await import('ajv')).default;

const inputSchema = schema('telescope_frames.input.json');
const outputSchema = schema('telescope_frames.output.json');
// Our own check of structuredContent, so a test cannot pass because the SDK
// skipped validation (it only validates after listTools).
const validateOutput = new Ajv({ strict: false, allErrors: true }).compile(outputSchema);

const transport = new StdioClientTransport({ command: bin, args: [], stderr: 'pipe' });
let stderr = '';
transport.stderr?.on('data', (d) => { stderr += d; });
const client = new Client({ name: 'telescope-conformance', version: '0.0.0' });
const clientErrors = [];
client.onerror = (e) => clientErrors.push(e);
const seen = [];

await test('connect (initialize 2025-11-25 + notifications/initialized)', async () => {
  await client.connect(transport, { timeout: 10_000 });
  // Record every message from here on; the SDK hooked onmessage in connect.
  const inner = transport.onmessage;
  transport.onmessage = (m, extra) => { seen.push(m); inner?.(m, extra); };
  assert.equal(client.getServerVersion()?.name, 'telescope-mcp');
  assert.ok(client.getServerCapabilities()?.tools, 'tools capability declared');
  assert.match(client.getInstructions() ?? '', /start.*stop/s, 'instructions tell the workflow');
  assert.match(client.getInstructions() ?? '', /diagnosis/);
});

await test('ping', async () => {
  assert.deepEqual(await client.ping(), {});
});

let tool;
await test('listTools: one tool, schemas from schema/, annotations, the SDK accepts its schemas', async () => {
  const { tools, nextCursor } = await client.listTools();
  assert.equal(nextCursor, undefined);
  assert.equal(tools.length, 1);
  tool = tools[0];
  assert.equal(tool.name, 'telescope_frames');
  assert.equal(typeof tool.title, 'string');
  assert.match(tool.description, /start/);
  assert.deepEqual(tool.inputSchema, inputSchema);
  assert.deepEqual(tool.outputSchema, outputSchema);
  assert.deepEqual(tool.annotations, { title: tool.annotations.title, readOnlyHint: false,
    destructiveHint: false, idempotentHint: false, openWorldHint: false });
});

for (const action of ['status', 'start', 'mark', 'read', 'stop', 'capture']) {
  await test(`callTool action=${action}: structuredContent conforms, the text block answers in short`, async () => {
    const res = await client.callTool({ name: 'telescope_frames', arguments: { action } });
    assert.ok(res.structuredContent, 'structuredContent present');
    assert.ok(validateOutput(res.structuredContent), JSON.stringify(validateOutput.errors));
    assert.equal(res.structuredContent.action, action);
    assert.equal(res.structuredContent.connection.state, 'not_connected');
    assert.equal(res.structuredContent.diagnosis.code, 'not_connected');
    assert.equal(res.content.length, 1);
    assert.equal(res.content[0].type, 'text');
    // The text block is the short answer for the agent, not a JSON copy.
    assert.match(res.content[0].text, new RegExp(`^(error: )?${action}[: ]`));
    assert.ok(res.content[0].text.includes('diagnosis not_connected'), res.content[0].text);
    if (action === 'status') assert.equal(res.isError, undefined, 'status is not an error');
    else assert.equal(res.isError, true, `${action} without an app is an error`);
  });
}

await test('callTool with onprogress (adds _meta.progressToken) is accepted', async () => {
  const res = await client.callTool({ name: 'telescope_frames', arguments: { action: 'status' } }, undefined,
    { onprogress: () => {}, timeout: 10_000 });
  assert.equal(res.structuredContent.action, 'status');
});

await test('unknown tool → JSON-RPC error -32602', async () => {
  await assert.rejects(client.callTool({ name: 'nope', arguments: {} }),
    (e) => e instanceof McpError && e.code === -32602 && /nope/.test(e.message));
});

await test('bad argument → isError naming the field and the allowed range, no structuredContent', async () => {
  const res = await client.callTool({ name: 'telescope_frames', arguments: { limit: 5000 } });
  assert.equal(res.isError, true);
  assert.equal(res.structuredContent, undefined);
  assert.equal(res.content[0].text, 'limit: must be an integer from 0 to 1000, got 5000');
  const res2 = await client.callTool({ name: 'telescope_frames', arguments: { action: 'status', nope: 1 } });
  assert.equal(res2.isError, true);
  assert.match(res2.content[0].text, /^nope: unknown field/);
});

await test('every message from the server was JSON-RPC; no client-side errors', async () => {
  assert.ok(seen.length >= 12, `saw ${seen.length} messages`);
  for (const m of seen) assert.equal(m.jsonrpc, '2.0');
  assert.deepEqual(clientErrors.map(String), []);
});

await test('close → the server exits by itself with code 0, before the SDK escalates', async () => {
  const child = transport._process;
  assert.ok(child, 'the transport has a child process');
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const t0 = performance.now();
  await client.close();
  const ex = await exited;
  const ms = performance.now() - t0;
  assert.equal(ex.signal, null, `killed by ${ex.signal}`);
  assert.equal(ex.code, 0);
  // The SDK waits 2 s before SIGTERM; exiting by itself means well before that.
  assert.ok(ms < 1000, `exit took ${ms.toFixed(1)} ms`);
  note(`server exited ${ms.toFixed(1)} ms after close()`);
  assert.equal(stderr, '', 'quiet by default');
});

report();
