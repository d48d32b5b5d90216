// ctest vectors.schema: every record and every whole reply the shared
// watcher vectors expect must satisfy schema/frame_perf_record.json and
// schema/extension_reply.json, so the vectors cannot drift from the contract
// that telescope-mcp validates against. (Both implementations must produce
// exactly what the vectors say, so they conform too.)
//
//   node tests/vectors/watcher/schema_check.mjs <source dir>
import { createRequire } from 'node:module';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = process.argv[2];
if (!root) {
  console.error('usage: node schema_check.mjs <source dir>');
  process.exit(2);
}
// ajv is pinned with the client tests' packages.
const require = createRequire(join(root, 'tests/client/package.json'));
const Ajv = require('ajv').default;

const load = (p) => JSON.parse(readFileSync(join(root, p), 'utf8'));
const ajv = new Ajv({ allErrors: false, strict: false });
ajv.addSchema(load('schema/frame_perf_record.json'));
const recordOk = ajv.getSchema('frame_perf_record');
const replyOk = ajv.compile(load('schema/extension_reply.json'));

const replySchema = load('schema/extension_reply.json');
const recordV2Ok = ajv.compile({ type: 'array', items: replySchema.definitions.recordV2 });
const recordV3Ok = ajv.compile({ type: 'array', items: replySchema.definitions.recordV3 });

// Self-check: the validators must be able to say no.
if (recordOk({ seq: 0 }) || replyOk({ protocol: 2 }) || recordV2Ok([{ seq: 1, blocks: {} }]) ||
    recordV3Ok([[1, 1, 0, 0, 0, 0, 0, 0, 0, 0]]) || recordV3Ok([[1, 1, 0, 0, 0, 0, 0, 0, 0, 0, [], 0, 0]]) ||
    replyOk({ ...JSON.parse(JSON.stringify(minimalReply())), protocol: 3, records: [{ seq: 1 }] })) {
  console.error('self-check failed: an invalid record or reply passed');
  process.exit(1);
}

// The smallest valid reply (used by the self-check above).
function minimalReply() {
  return { protocol: 1, watcherVersion: '0.1.0', runId: 'r', livenessCounter: 0, nowUs: 0,
    collecting: false, lifecycle: null, framesEnabled: true, refreshRate: 60, interaction: null,
    firstSeq: 0, lastSeq: 0, pending: 0, droppedAttributions: 0 };
}

const dir = join(root, 'tests/vectors/watcher');
const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
let checked = 0;
let failed = 0;
const check = (ok, value, where) => {
  checked++;
  if (!ok(value)) {
    console.error(`${where}: ${ajv.errorsText(ok.errors)}`);
    failed++;
  }
};
for (const file of files) {
  const v = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  v.expectedRecords.forEach((r, i) => check(recordOk, r, `${file}: expectedRecords[${i}]`));
  v.steps.forEach((s, i) => {
    if (s.op !== 'ext') return;
    if (s.expectReply) check(replyOk, s.expectReply, `${file}: step ${i} expectReply`);
    // Protocol 2 and 3 records are checked by the reply schema's recordV2
    // and recordV3 (with the reply they came in, when only some fields are
    // expected).
    const protocol = (s.expectReply ?? s.expect)?.protocol ?? 1;
    if (protocol >= 2 && s.expect?.records) {
      check(protocol === 2 ? recordV2Ok : recordV3Ok, s.expect.records,
        `${file}: step ${i} protocol ${protocol} records`);
    }
    for (const r of protocol >= 2 ? [] : s.expectReply?.records ?? s.expect?.records ?? []) {
      check(recordOk, r, `${file}: step ${i} record`);
    }
  });
}
if (files.length === 0 || checked === 0) {
  console.error(`nothing checked under ${dir}`);
  process.exit(1);
}
console.log(`${files.length} vectors, ${checked} records and replies checked against the schemas, ${failed} invalid`);
process.exit(failed ? 1 : 0);
