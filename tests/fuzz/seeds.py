#!/usr/bin/env python3
"""Writes the seed corpora of tests/fuzz/corpus/<target>/ (committed; rerun
after changing this file: python3 tests/fuzz/seeds.py). Seeds are real
messages: the transcript cases' input.jsonl, the tools/call arguments in them,
replies shaped like the watcher's, and the URI forms users paste. Deterministic
(fixed random seed), so rerunning changes nothing unless this file did."""
import base64
import glob
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
rng = random.Random(20261202)


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def dumps(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


# ---- mcp_line: whole sessions ------------------------------------------------
cases = sorted(glob.glob(os.path.join(ROOT, "tests/cases/*/input.jsonl")))
for path in cases:
    name = os.path.basename(os.path.dirname(path))
    with open(path, "rb") as f:
        write("mcp_line", "case_" + name, f.read())

MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {}}


def init(v, id_=0):
    return {"jsonrpc": "2.0", "id": id_, "method": "initialize",
            "params": {"protocolVersion": v, "capabilities": {},
                       "clientInfo": {"name": "fuzz", "version": "0"}}}


def call(id_, args, meta=None):
    p = {"name": "telescope_frames", "arguments": args}
    if meta:
        p["_meta"] = meta
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": p}


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
for v in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]:
    msgs = [init(v), INITIALIZED,
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            call(2, {"action": "status"}),
            call(3, {"action": "start", "interactionId": "scroll"}, {"progressToken": "p1"}),
            call(4, {"action": "read", "limit": 5}, {"progressToken": 7}),
            {"jsonrpc": "2.0", "method": "notifications/cancelled",
             "params": {"requestId": 3, "reason": "user"}},
            call(5, {"action": "capture", "durationMs": 100}),
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}},
            call(6, {"action": "stop"}),
            {"jsonrpc": "2.0", "id": "p", "method": "ping"}]
    write("mcp_line", "session_" + v, "".join(dumps(m) + "\n" for m in msgs))
# A batch in the one era that allows them, with calls that finish later.
batch = [call(10, {"action": "start"}), call(11, {"action": "status"}),
         {"jsonrpc": "2.0", "id": 12, "method": "ping"}, INITIALIZED,
         call(13, {"action": "capture"})]
write("mcp_line", "batch_2025_03_26",
      dumps(init("2025-03-26")) + "\n" + dumps(batch) + "\n" +
      dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
             "params": {"requestId": 10}}) + "\r\n")
# The stateless era, every request with its own _meta, no initialize.
modern = [{"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": MODERN_META}},
          {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": MODERN_META}},
          call(3, {"action": "read", "cursor": "abc"}, MODERN_META),
          call(4, {"action": "mark", "interactionId": "tap", "linkedBy": "agent"}, MODERN_META)]
write("mcp_line", "modern_stateless", "".join(dumps(m) + "\n" for m in modern))
# A line over the 8192-byte limit between two good ones.
write("mcp_line", "oversize",
      dumps(init("2025-11-25")) + "\n" + "{\"x\":\"" + "a" * 9000 + "\"}\n" +
      dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}) + "\n")

# ---- validate: tool arguments, schemas, cursors ----------------------------
n = 0
for path in cases:
    with open(path, "rb") as f:
        for line in f:
            try:
                m = json.loads(line)
            except ValueError:
                continue
            for one in (m if isinstance(m, list) else [m]):
                if isinstance(one, dict) and one.get("method") == "tools/call":
                    params = one.get("params")
                    args = params.get("arguments") if isinstance(params, dict) else None
                    if args is not None:
                        write("validate", "args_%03d" % n, dumps(args))
                        n += 1
for i, a in enumerate([
        {"action": "capture", "durationMs": 100, "trackWidgets": True, "chart": "svg"},
        {"limit": 1000, "detail": "blocks", "budgetMs": 16.7},
        {"limit": 20.0}, {"limit": 5000}, {"budgetMs": 0}, {"interactionId": "é" * 64},
        {"linkedBy": "\u0000"}, {"unknown": 1}, [], "status", None, 1.5]):
    write("validate", "args_more_%02d" % i, dumps(a))
with open(os.path.join(ROOT, "schema/telescope_frames.input.json"), "rb") as f:
    write("validate", "schema_input", f.read())
write("validate", "schema_small", dumps({
    "type": "object", "additionalProperties": False, "required": ["a"],
    "properties": {"a": {"type": "integer", "minimum": 0, "maximum": 3},
                   "b": {"type": "string", "minLength": 1, "maxLength": 4,
                         "pattern": "^[\\x20-\\x7E]+$"},
                   "c": {"enum": ["x", "y"]}, "d": {"type": "number", "exclusiveMinimum": 0}}}))


def fnv1a(s):
    h = 2166136261
    for b in s:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


def cursor(run_id, seq):
    plain = ("v1:%s:%d" % (run_id, seq)).encode()
    plain += (":%08x" % fnv1a(plain)).encode()
    return base64.urlsafe_b64encode(plain).decode().rstrip("=")


for i, (r, s) in enumerate([("r-abc", 1043), ("run-1", 0), ("x" * 128, 999999999999999999),
                            ("é:ü", 7)]):
    c = cursor(r, s)
    write("validate", "cursor_%d" % i, c)
    write("validate", "cursor_args_%d" % i, dumps({"action": "read", "cursor": c}))

# ---- record: watcher replies -------------------------------------------------
BLOCK_NAMES = ["BUILD", "LAYOUT", "PAINT", "ProductCard", "ListView", "Image", "Text",
               "é-widget", "_Private<T>"]


def frame(seq, fn, at, interaction=None, with_blocks=True):
    build, raster = rng.randint(100, 30000), rng.randint(100, 30000)
    f = {"seq": seq, "frameNumber": fn, "atUs": at, "vsyncStartUs": at - rng.randint(0, 20000),
         "buildUs": build, "rasterUs": raster, "vsyncOverheadUs": rng.randint(0, 500),
         "totalSpanUs": build + raster + rng.randint(0, 1000)}
    if rng.random() < 0.7:
        f["layerCacheCount"] = rng.randint(0, 9)
        f["pictureCacheCount"] = rng.randint(0, 9)
    if with_blocks:
        blocks = {}
        for name in rng.sample(BLOCK_NAMES, rng.randint(0, 5)):
            micros = rng.randint(0, build)
            blocks[name] = {"micros": micros, "selfMicros": rng.randint(0, micros),
                            "count": rng.randint(1, 20)}
        f["blocks"] = blocks
    if interaction:
        f["interactionId"], f["linkedBy"] = interaction, "agent"
    return f


def reply(run, first, last, records=None, interaction=None, **extra):
    r = {"protocol": 1, "watcherVersion": "0.1.0", "runId": run, "livenessCounter": last + 10,
         "nowUs": 81234999, "collecting": True, "lifecycle": "resumed", "framesEnabled": True,
         "refreshRate": 60.0,
         "interaction": {"interactionId": interaction, "linkedBy": "agent"} if interaction else None,
         "firstSeq": first, "lastSeq": last, "pending": 0, "droppedAttributions": 0}
    if records is not None:
        r["records"] = records
        r["more"] = False
    r.update(extra)
    return r


at = 81000000
recs = []
for s in range(1000, 1012):
    at += 16667
    recs.append(frame(s, 5000 + s, at, "scroll-feed" if s % 3 else None))
write("record", "read_reply", dumps(reply("r-abc", 1000, 1011, recs, "scroll-feed")))
write("record", "status_reply", dumps(reply("r-abc", 0, 0, lifecycle=None, collecting=False,
                                            type="status")))
write("record", "frames_detail", dumps(reply("r-abc", 1, 3, [frame(1, -1, 100, None, False),
                                                              frame(2, 7, 200), frame(3, 8, 300)])))
# A session: first look, a later read with a gap (ring overflow), a repeat,
# then a hot restart (new runId, seq from 1).
first = reply("run-a", 1, 4, [frame(s, s, 1000 * s) for s in range(1, 5)])
gap = reply("run-a", 9, 12, [frame(s, s, 1000 * s, "tap") for s in range(9, 13)], "tap")
restart = reply("run-b", 1, 2, [frame(s, s, 1000 * s) for s in range(1, 3)])
write("record", "session_gap_restart", dumps([first, gap, gap, restart]))
write("record", "jank_mix", dumps(reply("j", 1, 40, [
    dict(frame(s, s, 20000 * s), buildUs=s * 1000, totalSpanUs=s * 25000) for s in range(1, 41)])))
# Malformed shapes (the sim's `reply wrongtypes`, out-of-order seq, ...).
bad = reply("r", 1, 2, [frame(2, 2, 10), frame(1, 1, 20)])
write("record", "bad_seq_order", dumps(bad))
write("record", "bad_types", dumps(dict(reply("r", 1, 1), livenessCounter="12", refreshRate=True)))
write("record", "bad_blocks", dumps(reply("r", 1, 1, [dict(frame(1, 1, 1), blocks={
    "X": {"micros": -1, "selfMicros": 0, "count": 0}})])))

# ---- vm_uri: what users paste ---------------------------------------------------
W = "ws://127.0.0.1:53166/EMYU73JbR-A=/ws"
for i, u in enumerate([
        "http://127.0.0.1:53166/EMYU73JbR-A=/", "http://127.0.0.1:53166/EMYU73JbR-A=", W,
        "HTTP://127.0.0.1:53166/EMYU73JbR-A=//", "https://127.0.0.1:53166/EMYU73JbR-A=/",
        "wss://127.0.0.1:53166/EMYU73JbR-A=/ws", W + "\n", "  http://127.0.0.1:53166/x=/ \r\n\n",
        "http://127.0.0.1:9101?uri=http://127.0.0.1:53166/EMYU73JbR-A=/",
        "http://127.0.0.1:9101/?uri=http%3A%2F%2F127.0.0.1%3A53166%2FEMYU73JbR-A%3D%2F",
        "http://127.0.0.1:9101/#/?theme=dark&uri=ws%3A%2F%2F127.0.0.1%3A53166%2FEMYU73JbR-A%3D%2Fws&ide=x",
        "A Dart VM Service on sdk gphone64 arm64 is available at: http://127.0.0.1:53166/EMYU73JbR-A=/",
        "An Observatory debugger and profiler on Chrome is available at: http://127.0.0.1:53166/a=",
        "Debug service listening on ws://127.0.0.1:53166/EMYU73JbR-A=/ws",
        "http://localhost:53166/EMYU73JbR-A=/", "http://[::1]:53166/EMYU73JbR-A=/",
        "http://[::ffff:127.0.0.1]:1/t=/", "ws://127.9.8.7:1/EMYU73JbR-A=/ws",
        "http://127.0.0.1:8181/", "http://127.0.0.1:53166/a%2Bb-_=/",
        "http://192.168.1.20:53166/tok=/", "http://example.com/tok=/", "ftp://127.0.0.1:1/x",
        "http://127.0.0.1:99999/x=/", "http://[::1/x", "ws://:1/ws", "", "http://"]):
    write("vm_uri", "uri_%02d" % i, u)


# ---- record: the same replies in protocol 2 ----------------------------------
# Converted from the protocol-1 seeds above (no random draws, so the seeds
# before this point are unchanged): one blockNames table per reply, blocks as
# [nameIndex, micros, selfMicros, count] quadruples.
def to_v2(r):
    if isinstance(r, list):
        return [to_v2(x) for x in r]
    r = dict(r, protocol=2)
    if "records" not in r:
        return r
    names = []
    out = []
    for rec in r["records"]:
        rec = dict(rec)
        if isinstance(rec.get("blocks"), dict):
            flat = []
            for name, b in rec["blocks"].items():
                if name not in names:
                    names.append(name)
                flat += [names.index(name), b["micros"], b["selfMicros"], b["count"]]
            rec["blocks"] = flat
        out.append(rec)
    r["records"] = out
    r["blockNames"] = names
    return r


for name in ["read_reply", "frames_detail", "session_gap_restart", "jank_mix", "bad_blocks"]:
    with open(os.path.join(HERE, "corpus", "record", name), encoding="utf-8") as f:
        write("record", name + "_v2", dumps(to_v2(json.load(f))))


# ---- vmtl: getVMTimeline replies ---------------------------------------------
# In the VM's form (runtime/vm/timeline.cc): thread_name metadata, X events
# with dur, the engine's B/E pairs, shader work tagged devtoolsTag "shaders".

def meta(tid, name):
    return {"name": "thread_name", "ph": "M", "pid": 1, "tid": tid, "args": {"name": name}}


def tl(events, origin=1000, extent=100000):
    return {"type": "Timeline", "traceEvents": events, "timeOriginMicros": origin,
            "timeExtentMicros": extent}


def frame_events(t0, gc=False, shader=False):
    ev = [{"name": "Animator::BeginFrame", "cat": "Embedder", "ph": "B", "pid": 1, "tid": 2, "ts": t0, "args": {}},
          {"name": "Animator::BeginFrame", "cat": "Embedder", "ph": "E", "pid": 1, "tid": 2, "ts": t0 + 6000, "args": {}},
          {"name": "Rasterizer::DoDraw", "cat": "Embedder", "ph": "B", "pid": 1, "tid": 3, "ts": t0 + 6500, "args": {}}]
    if gc:
        ev.append({"name": "CollectNewGeneration", "cat": "GC", "ph": "X", "pid": 1, "tid": 2,
                   "ts": t0 + 1000, "dur": 4000, "args": {"isolateGroupId": "isolateGroups/1"}})
    if shader:
        ev += [{"name": "SkSL compile", "cat": "Embedder", "ph": "B", "pid": 1, "tid": 3, "ts": t0 + 7000,
                "args": {"devtoolsTag": "shaders"}},
               {"name": "SkSL compile", "cat": "Embedder", "ph": "E", "pid": 1, "tid": 3, "ts": t0 + 12000, "args": {}}]
    ev.append({"name": "Rasterizer::DoDraw", "cat": "Embedder", "ph": "E", "pid": 1, "tid": 3, "ts": t0 + 14000, "args": {}})
    return ev


names = [meta(2, "io.flutter.1.ui (2)"), meta(3, "io.flutter.1.raster (3)"), meta(4, "DartWorker (4)")]
one = names + [e for i in range(4) for e in frame_events(10000 + i * 16667, gc=i == 1, shader=i == 2)]
write("vmtl", "frames_gc_shader", dumps(tl(one)))
write("vmtl", "no_thread_names", dumps(tl([e for i in range(3) for e in frame_events(5000 + i * 16667, gc=True)])))
a = names + frame_events(10000, shader=True)[:4]
b = frame_events(10000, shader=True)[2:] + frame_events(26667, gc=True)
write("vmtl", "two_pulls_overlapping", dumps([tl(a), tl(b), tl(b)]))
write("vmtl", "not_timeline", dumps({"type": "Success"}))
