// Converts the Perfetto trace a DevTools export holds (performance.traceBinary:
// the bytes of a perfetto.protos.Trace, as the Dart VM writes it for
// getPerfettoVMTimeline) into Chrome trace-event JSON, the form every other
// recording has. Usage: node perfetto2json.mjs EXPORT.json > trace.json
// The export's other keys are kept (traceBinary is replaced by traceEvents).
// Only what the VM writes is read (field numbers from perfetto's
// protos/perfetto/trace/trace_packet.proto, track_event/track_event.proto,
// track_event/track_descriptor.proto, thread_descriptor.proto,
// interned_data/interned_data.proto, debug_annotation.proto):
//   TracePacket: timestamp 8 (ns), trusted_packet_sequence_id 10,
//     track_event 11, interned_data 12, track_descriptor 60
//   TrackEvent: category_iids 3, debug_annotations 4, type 9 (1 begin, 2 end,
//     3 instant), name_iid 10, track_uuid 11, categories 22, name 23,
//     flow_ids 47 (ignored)
//   TrackDescriptor: uuid 1, name 2, thread 4 {pid 1, tid 2, thread_name 5},
//     parent_uuid 5
// An event on a track that is not a thread's (the VM's async events, such as
// "Frame" and "Warm-up frame") becomes an async "b"/"e" pair whose id is the
// track's uuid, on the parent track's thread when it has one.
//   InternedData: event_categories 1, event_names 2, debug_annotation_names 3
//   DebugAnnotation: name_iid 1, int_value 4, string_value 6, name 10
// Timestamps become µs (ns / 1000: the VM records µs, so the division is exact).
import { readFileSync } from 'node:fs';

function reader(buf) {
  let i = 0;
  const varint = () => { let r = 0n, s = 0n, b; do { b = buf[i++]; r |= BigInt(b & 0x7f) << s; s += 7n; } while (b & 0x80); return r; };
  return {
    done: () => i >= buf.length,
    field() {
      const k = Number(varint()), no = k >>> 3, wt = k & 7;
      if (wt === 0) return { no, v: varint() };
      if (wt === 2) { const n = Number(varint()); const v = buf.subarray(i, i + n); i += n; return { no, b: v }; }
      if (wt === 1) { const v = buf.readBigUInt64LE(i); i += 8; return { no, v }; }
      if (wt === 5) { const v = BigInt(buf.readUInt32LE(i)); i += 4; return { no, v }; }
      throw new Error(`perfetto2json: wire type ${wt} at ${i}`);
    },
  };
}
function* fields(buf) { const r = reader(buf); while (!r.done()) yield r.field(); }
const str = (b) => Buffer.from(b).toString('utf8');
const signed = (v) => BigInt.asIntN(64, v);

const exp = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const bin = Buffer.from(exp.performance.traceBinary);
const tracks = new Map(); // uuid -> {pid, tid, name}
const interned = new Map(); // seq -> {names, cats, ann}
const events = [];
for (const p of fields(bin)) {
  if (p.no !== 1) continue;
  let ts, seq = 0, te, idata, td;
  for (const f of fields(p.b)) {
    if (f.no === 8) ts = f.v;
    else if (f.no === 10) seq = Number(f.v);
    else if (f.no === 11) te = f.b;
    else if (f.no === 12) idata = f.b;
    else if (f.no === 60) td = f.b;
  }
  const it = interned.get(seq) ?? { names: new Map(), cats: new Map(), ann: new Map() };
  interned.set(seq, it);
  if (idata) for (const f of fields(idata)) {
    const table = { 1: it.cats, 2: it.names, 3: it.ann }[f.no];
    if (!table) continue;
    let iid, name;
    for (const g of fields(f.b)) { if (g.no === 1) iid = g.v; if (g.no === 2) name = str(g.b); }
    table.set(iid, name);
  }
  if (td) {
    let uuid, t = {};
    for (const f of fields(td)) {
      if (f.no === 1) uuid = f.v;
      if (f.no === 2) t.trackName = str(f.b);
      if (f.no === 5) t.parent = f.v;
      if (f.no === 4) for (const g of fields(f.b)) {
        if (g.no === 1) t.pid = Number(g.v);
        if (g.no === 2) t.tid = Number(g.v);
        if (g.no === 5) t.name = str(g.b);
      }
    }
    tracks.set(uuid, { ...(tracks.get(uuid) ?? {}), ...t });
  }
  if (te) {
    let type, name, uuid, cats = [], args = {};
    for (const f of fields(te)) {
      if (f.no === 9) type = Number(f.v);
      else if (f.no === 23) name = str(f.b);
      else if (f.no === 10) name = it.names.get(f.v);
      else if (f.no === 11) uuid = f.v;
      else if (f.no === 22) cats.push(str(f.b));
      else if (f.no === 3) cats.push(it.cats.get(f.v));
      else if (f.no === 4) {
        let an, av;
        for (const g of fields(f.b)) {
          if (g.no === 10) an = str(g.b);
          if (g.no === 1) an = it.ann.get(g.v);
          if (g.no === 6) av = str(g.b);
          if (g.no === 4) av = String(signed(g.v));
        }
        if (an !== undefined) args[an] = av;
      }
    }
    const ph = { 1: 'B', 2: 'E', 3: 'i' }[type];
    if (!ph || ts === undefined) continue;
    if (ts % 1000n) throw new Error('perfetto2json: a timestamp is not whole µs');
    events.push({ uuid, ev: { name: name ?? '', cat: cats.join(','), ph, ts: Number(ts / 1000n), args } });
  }
}
const traceEvents = [];
for (const [, t] of tracks)
  if (t.tid !== undefined)
    traceEvents.push({ name: 'thread_name', ph: 'M', pid: t.pid, tid: t.tid, args: { name: `${t.name ?? t.trackName ?? 'thread'} (${t.tid})` } });
for (const { uuid, ev } of events) {
  const t = tracks.get(uuid) ?? {};
  if (t.tid !== undefined) { traceEvents.push({ ...ev, pid: t.pid, tid: t.tid }); continue; }
  const parent = tracks.get(t.parent) ?? {};
  const ph = { B: 'b', E: 'e' }[ev.ph] ?? ev.ph;
  traceEvents.push({ ...ev, ph, id: String(uuid), pid: parent.pid, ...(parent.tid !== undefined ? { tid: parent.tid } : {}) });
}
const { traceBinary, ...perf } = exp.performance;
process.stdout.write(JSON.stringify({ ...exp, performance: perf, traceEvents }) + '\n');
