// The baseline: a minimal MCP stdio server with one tool, written the way the
// official TypeScript SDK's README shows. It answers `status` with a small
// fixed object, so it measures the cost of the runtime + SDK, nothing else.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'baseline', version: '1.0.0' });
server.registerTool('telescope_frames', {
  title: 'Baseline frames',
  description: 'Baseline tool with the same name and a similar input shape.',
  inputSchema: { action: z.enum(['status', 'start', 'mark', 'read', 'stop', 'capture']).optional() },
}, async ({ action }) => {
  const out = { action: action ?? 'read', connection: { state: 'not_connected' } };
  return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
});
await server.connect(new StdioServerTransport());
