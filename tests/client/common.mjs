// Shared helpers of the client conformance tests: locate the binary and the
// schemas, fail clearly when the pinned packages are missing, and a tiny test
// runner that prints one line per check.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const here = dirname(fileURLToPath(import.meta.url));
export const bin = process.argv[2];
if (!bin || !existsSync(bin)) {
  console.error(`usage: node ${process.argv[1]} PATH/TO/telescope-mcp`);
  process.exit(1);
}
export function requirePackages(...names) {
  for (const n of names)
    if (!existsSync(join(here, 'node_modules', ...n.split('/'), 'package.json'))) {
      console.error(`FAIL: tests/client/node_modules/${n} is missing. Run \`make node-deps\` ` +
        '(npm ci in tests/client) first.');
      process.exit(1);
    }
}
export const schema = (name) => JSON.parse(readFileSync(join(here, '..', '..', 'schema', name), 'utf8'));

const results = [];
export async function test(name, fn) {
  try { await fn(); results.push(`ok   ${name}`); }
  catch (e) { results.push(`FAIL ${name}: ${e.stack ?? e}`); process.exitCode = 1; }
}
export function note(text) { results.push(`     ${text}`); }
export function report() { console.log(results.join('\n')); }
