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

# ---- record: the same replies in protocol 3 ----------------------------------
# From the protocol-2 seeds: each record an array in a fixed order, its
# interaction an index into the reply's interactions table.
V3_FIELDS = ["seq", "frameNumber", "atUs", "vsyncStartUs", "buildUs", "rasterUs",
             "vsyncOverheadUs", "totalSpanUs", "layerCacheCount", "pictureCacheCount"]


def to_v3(r):
    if isinstance(r, list):
        return [to_v3(x) for x in r]
    r = dict(r, protocol=3)
    if "records" not in r:
        return r
    pairs = []
    out = []
    for rec in r["records"]:
        a = [rec.get(k, 0) for k in V3_FIELDS] + [rec.get("blocks", [])]
        if "interactionId" in rec:
            pair = [rec["interactionId"], rec.get("linkedBy")]
            if pair not in pairs:
                pairs.append(pair)
            a.append(pairs.index(pair))
        out.append(a)
    r["records"] = out
    r["interactions"] = pairs
    return r


for name in ["read_reply", "frames_detail", "session_gap_restart", "jank_mix", "bad_blocks"]:
    with open(os.path.join(HERE, "corpus", "record", name + "_v2"), encoding="utf-8") as f:
        write("record", name + "_v3", dumps(to_v3(json.load(f))))

# ---- vmtl: getVMTimeline replies -----------------------------------------------
# Shaped like the VM's (dart-lang/sdk runtime/vm/timeline.cc): thread_name
# metadata "<name> (<tid>)" first, then events block by block per thread,
# integer ts/dur, cat = the stream. Its own random source, so the seeds above
# stay as they are.
trng = random.Random(20261215)
PID = 4242
UI_T, RASTER_T, IO_T, WORKER_T, PLATFORM_T = 22531, 23811, 24579, 67239, 22585


def tmeta(tid, name):
    return {"name": "thread_name", "ph": "M", "pid": PID, "tid": tid,
            "args": {"name": "%s (%d)" % (name, tid), "mode": "basic"}}


def tev(ph, tid, cat, name, ts, args=None, dur=None):
    e = {"name": name, "cat": cat, "tid": tid, "pid": PID, "ts": ts, "ph": ph,
         "args": dict(args or {}, isolateGroupId="isolateGroups/1")}
    if dur is not None:
        e["dur"] = dur
    return e


def frames_trace(t0, n, ui=UI_T, gc_as_x=False, names=None):
    """n frames from t0: UI blocks then raster blocks, a scavenge with a
    nested phase in some builds, a shader compile in some rasters."""
    ui_block, raster_block, worker_block = [], [], []
    t = t0
    for f in range(n):
        build = trng.randint(3000, 14000)
        ui_block.append(tev("B", ui, "Embedder", "Animator::BeginFrame", t,
                            {"frame_number": str(f + 1)}))
        if f % 3 == 1:
            g0, g1 = t + 500, t + 500 + trng.randint(800, build - 700)  # inside the frame
            if gc_as_x:
                ui_block.append(tev("X", ui, "GC", "CollectNewGeneration", g0, dur=g1 - g0))
            else:
                ui_block += [tev("B", ui, "GC", "CollectNewGeneration", g0),
                             tev("B", ui, "GC", "ProcessWeakHandles", g0 + 100),
                             tev("E", ui, "GC", "ProcessWeakHandles", g0 + 300),
                             tev("E", ui, "GC", "CollectNewGeneration", g1,
                                 {"usedBefore": "1000", "usedAfter": "200"})]
        ui_block.append(tev("X", ui, "Dart", "Layout", t + 200, dur=build // 3))
        ui_block.append(tev("E", ui, "Embedder", "Animator::BeginFrame", t + build))
        r0 = t + build + 100
        raster = trng.randint(2000, 20000)
        raster_block.append(tev("B", RASTER_T, "Embedder", "Rasterizer::DoDraw", r0,
                                {"frame_number": str(f + 1)}))
        if f % 4 == 2:
            raster_block += [tev("B", RASTER_T, "Embedder", "GrGLProgramBuilder::finalize",
                                 r0 + 200, {"devtoolsTag": "shaders"}),
                             tev("E", RASTER_T, "Embedder", "GrGLProgramBuilder::finalize",
                                 r0 + 200 + raster // 2)]
        raster_block.append(tev("X", RASTER_T, "Embedder", "EntityPass::Render",
                                r0 + raster // 2 + 300, dur=raster // 3))
        raster_block.append(tev("E", RASTER_T, "Embedder", "Rasterizer::DoDraw", r0 + raster))
        if f % 5 == 0:
            worker_block.append(tev("X", WORKER_T, "GC", "ConcurrentMark", t, dur=9000))
        t += 16667
    metas = names if names is not None else [
        tmeta(ui, "1.ui"), tmeta(RASTER_T, "1.raster"), tmeta(IO_T, "1.io"),
        tmeta(WORKER_T, "DartWorker"), tmeta(77, "")]
    return metas + raster_block + ui_block + worker_block, t


def timeline(events, t0, t1):
    return {"type": "Timeline", "traceEvents": events, "timeOriginMicros": t0,
            "timeExtentMicros": t1 - t0}


events, t_end = frames_trace(81000000, 8)
write("vmtl", "frames_android", dumps(timeline(events, 81000000, t_end)))
events, t_end = frames_trace(5000000, 6, gc_as_x=True,
                             names=[tmeta(UI_T, "io.flutter.1.ui"), tmeta(RASTER_T, "io.flutter.1.gpu")])
write("vmtl", "frames_older_vm", dumps(timeline(events, 5000000, t_end)))
events, t_end = frames_trace(9000000, 5, ui=PLATFORM_T,
                             names=[tmeta(PLATFORM_T, "1.platform"), tmeta(RASTER_T, "1.raster")])
write("vmtl", "frames_merged_platform", dumps(timeline(events, 9000000, t_end)))
events, t_end = frames_trace(7000000, 4, names=[])
write("vmtl", "frames_no_names", dumps(timeline(events, 7000000, t_end)))

# Overlapping pulls: each window starts 50 ms before the last one's end; a B
# in one pull and its E in the next.
events, t_end = frames_trace(20000000, 12)
metas = [e for e in events if e["ph"] == "M"]
body = sorted((e for e in events if e["ph"] != "M"), key=lambda e: e["ts"])
pulls = []
start = 20000000
for cut in (20070000, 20140000, t_end + 20000):
    part = [e for e in body if start - 50000 <= e["ts"] < cut]
    pulls.append(timeline(metas + part, start - 50000, cut))
    start = cut
write("vmtl", "pulls_overlapping", dumps(pulls))
write("vmtl", "pulls_same_twice", dumps([pulls[0], pulls[0]]))
# Malformed and refused shapes.
bad = [tmeta(UI_T, "1.ui"), 7, None, [], {"ph": "X"}, {"ph": 7, "tid": 1, "ts": 1},
       tev("X", UI_T, "GC", "neg", -5, dur=3), tev("X", UI_T, "GC", "big", 2 ** 60, dur=3),
       tev("X", UI_T, "GC", "nodur", 10), tev("E", UI_T, "GC", "orphan", 11),
       dict(tev("X", UI_T, "GC", "real", 12.5, dur=1.25)), {"name": "thread_name", "ph": "M"},
       tev("B", UI_T, "GC", "never-ends", 13)]
write("vmtl", "malformed_mix", dumps(timeline(bad, 0, 20)))
write("vmtl", "refused", dumps([{"type": "PerfettoTimeline", "trace": "AAAA"},
                                {"type": "Timeline", "traceEvents": {}}, [], "Timeline"]))
