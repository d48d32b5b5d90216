/* bench_core: in-process drivers for the benchmarks (tests/bench) and the
 * callgrind regression check. The replies it feeds are real watcher replies:
 * the C watcher model (watcher/sim/model.c, the same code telescope-sim
 * serves) records frames of BENCH_BLOCKS distinct blocks and answers `read`,
 * and each reply is wrapped in the JSON-RPC envelope the VM service sends, so
 * the bytes parsed here are the bytes telescope-mcp receives.
 *
 *   bench_core throughput parse|ingest [PASSES]
 *       parse: json_loadb alone over the replies (the baseline);
 *       ingest: what telescope-mcp does with them as it drains a session
 *       (the records cut out of the text, the rest parsed with jansson,
 *       record_reply_parse_raw, store_add_reply), then the session summary.
 *       Replies are in wire protocol 3, as telescope-mcp asks. Prints JSON
 *       with records/s.
 *   bench_core memory FRAMES
 *       one store fed FRAMES frames (the 500-record reply, seqs shifted), then
 *       its summary; prints JSON with the peak RSS (VmHWM).
 *   bench_core inframe BLOCKS [FRAMES]
 *       the watcher's own work inside a frame (issue 21 item 8): the C model
 *       fed FRAMES frames of BLOCKS timeline blocks (nested like widget
 *       builds), once attributing them in the frame as 0.1.0 did (the
 *       baseline, attribute_in_frame) and once parking them raw for the
 *       timings callback (today), interleaved in batches of 8 frames, the
 *       same input for both, after 4 096 unmeasured frames that fill the
 *       ring. Prints JSON with the thread CPU time per frame in
 *       wm_frame_drawn (in the frame) and in wm_timings (outside), and
 *       whether both placements wrote the same records.
 *   bench_core hot framing|dispatch|ingest|summary
 *       runs one hot path once on a small fixed input inside a function named
 *       hot_<name>, for valgrind --tool=callgrind --toggle-collect=hot_<name>.
 *
 * Deterministic: jansson's hash seed is fixed, the model's clock is ours. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

#include "config.h"
#include "frames_tool.h"
#include "framing.h"
#include "mcp.h"
#include "model.h"
#include "record.h"
#include "store.h"
#include "summary.h"
#include "vm_wire.h"

#define BENCH_BLOCKS 20        /* distinct blocks per record (issue 7) */
#define BENCH_REPLY_RECORDS 500 /* records per reply: what a session drain asks for */
#define BENCH_BUDGET_US 16667

typedef struct {
  char **text; /* owned JSON-RPC response texts */
  size_t *len;
  size_t n;
  size_t records; /* in all of them */
} replies_t;

static char block_names[BENCH_BLOCKS][32];

static void die(const char *what) {
  fprintf(stderr, "bench_core: %s\n", what);
  exit(1);
}

/* One frame of the model: BENCH_BLOCKS - 1 sibling blocks inside BUILD, in
 * finish order (children first), then its timing. */
static void model_draw(wm_t *wm, int64_t frame, int64_t vsync_us) {
  wm_event_t ev[BENCH_BLOCKS];
  int64_t t = vsync_us + 100;
  size_t i;
  for (i = 0; i + 1 < BENCH_BLOCKS; i++) {
    int64_t dur = 20 + (int64_t)((frame * 7 + (int64_t)i * 13) % 200);
    ev[i] = (wm_event_t){block_names[i], t + 1, dur};
    t += dur + 2;
  }
  ev[i] = (wm_event_t){block_names[i], vsync_us + 100, t - vsync_us - 100 + 50};
  int64_t build_finish = t + 60;
  wm_frame_drawn(wm, frame, build_finish + 20, ev, BENCH_BLOCKS);
  wm_timing_t timing = {frame,        vsync_us, vsync_us + 100, build_finish, build_finish + 50,
                        build_finish + 1500 + (frame % 900), frame % 3, frame % 2};
  wm_timings(wm, &timing, 1);
}

static json_t *model_call(wm_t *wm, json_t *params, int64_t now_us) {
  char *err = NULL;
  json_t *r = wm_handle(wm, params, now_us, &err);
  json_decref(params);
  if (!r) die(err ? err : "watcher model refused a call");
  return r;
}

/* nreplies replies of per_reply records each, seqs continuing. */
static void replies_make(replies_t *out, size_t nreplies, size_t per_reply) {
  wm_config_t cfg = {0};
  cfg.ring_capacity = 4096;
  cfg.pending_capacity = 256;
  cfg.read_limit_cap = per_reply;
  cfg.refresh_rate = 60;
  wm_t *wm = wm_new(&cfg, "bench-run");
  if (!wm) die("out of memory");
  int64_t frame = 0, now = 1000000;
  char limit[32];
  snprintf(limit, sizeof limit, "%zu", per_reply);
  json_decref(model_call(wm, json_pack("{s:s}", "action", "start"), now));
  out->text = calloc(nreplies, sizeof *out->text);
  out->len = calloc(nreplies, sizeof *out->len);
  if (!out->text || !out->len) die("out of memory");
  out->n = nreplies;
  out->records = 0;
  for (size_t r = 0; r < nreplies; r++) {
    int64_t since = frame;
    for (size_t i = 0; i < per_reply; i++, now += 16667) model_draw(wm, ++frame, now);
    char s[32];
    snprintf(s, sizeof s, "%lld", (long long)since);
    json_t *reply =
        model_call(wm, json_pack("{s:s, s:s, s:s, s:s}", "action", "read", "since", s, "limit", limit,
                                 "protocol", "3"),
                   now);
    out->records += json_array_size(json_object_get(reply, "records"));
    json_t *env = json_pack("{s:s, s:I, s:o}", "jsonrpc", "2.0", "id", (json_int_t)(r + 1),
                            "result", reply);
    out->text[r] = json_dumps(env, JSON_COMPACT);
    out->len[r] = strlen(out->text[r]);
    json_decref(env);
  }
  wm_free(wm);
}

static void replies_free(replies_t *r) {
  for (size_t i = 0; i < r->n; i++) free(r->text[i]);
  free(r->text);
  free(r->len);
}

/* What telescope-mcp does with one drained reply (vm_client.c,
 * parse_message): the records cut out of the text, the rest parsed, the
 * records read from their text and the whole validated, then taken into
 * the store. */
static void ingest_one(store_t *st, const char *text, size_t len) {
  char err[RECORD_ERR_LEN];
  json_error_t jerr;
  size_t rest, rl;
  char *cut = vm_wire_cut_records(text, len, &rest, &rl);
  if (!cut) die("no records to cut");
  json_t *env = json_loadb(cut + rl, rest, 0, &jerr);
  if (!env) die(jerr.text);
  record_reply_t r;
  if (record_reply_parse_raw(&r, json_object_get(env, "result"), cut, rl, err, sizeof err) < 0)
    die(err);
  if (store_add_reply(st, &r, NULL) < 0) die("out of memory");
  record_reply_close(&r);
  json_decref(env);
  free(cut);
}

static size_t summarise(const store_t *st) {
  json_t *j = summary_to_json_bounded(store_summary(st, NULL), SUMMARY_MAX_BYTES);
  char *s = json_dumps(j, JSON_COMPACT);
  size_t n = s ? strlen(s) : 0;
  free(s);
  json_decref(j);
  return n;
}

/* CPU time of this process: on a shared, oversubscribed machine the wall
 * clock mostly measures the neighbours. */
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The peak resident set, from Linux's /proc; -1 elsewhere. */
static long peak_rss_kib(void) {
#ifdef __linux__
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  if (!f) return -1;
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, "VmHWM:", 6)) kib = strtol(line + 6, NULL, 10);
  fclose(f);
  return kib;
#else
  return -1;
#endif
}

/* ---- throughput ---------------------------------------------------------- */

static int run_throughput(int ingest, int passes) {
  replies_t rs;
  replies_make(&rs, 8, BENCH_REPLY_RECORDS);
  size_t bytes = 0, sink = 0;
  for (size_t i = 0; i < rs.n; i++) bytes += rs.len[i];
  double t0 = now_s();
  for (int p = 0; p < passes; p++) {
    if (ingest) { /* one session per pass: drains, then the summary of stop */
      store_t *st = store_new(BENCH_BUDGET_US);
      if (!st) die("out of memory");
      for (size_t i = 0; i < rs.n; i++) ingest_one(st, rs.text[i], rs.len[i]);
      if (store_frames_seen(st) != rs.records) die("the store did not take every record");
      sink += summarise(st);
      store_free(st);
    } else {
      for (size_t i = 0; i < rs.n; i++) {
        json_error_t jerr;
        json_t *j = json_loadb(rs.text[i], rs.len[i], 0, &jerr);
        if (!j) die(jerr.text);
        sink += json_object_size(j);
        json_decref(j);
      }
    }
  }
  double secs = now_s() - t0;
  printf("{\"mode\":\"%s\",\"records\":%zu,\"bytes\":%zu,\"seconds\":%.6f,"
         "\"recordsPerSec\":%.1f,\"bytesPerRecord\":%.1f,\"sink\":%zu}\n",
         ingest ? "ingest" : "parse", rs.records * (size_t)passes, bytes * (size_t)passes, secs,
         (double)rs.records * passes / secs, (double)bytes / (double)rs.records, sink);
  replies_free(&rs);
  return 0;
}

/* ---- memory -------------------------------------------------------------- */

/* A reply of n records built directly (no JSON), so the process holds
 * almost nothing but the store before it is fed: its growth is the store's. */
static void reply_build(record_reply_t *r, size_t n) {
  memset(r, 0, sizeof *r);
  r->watcher_version = strdup("0.1.0");
  r->run_id = strdup("bench-run");
  r->records = calloc(n, sizeof *r->records);
  if (!r->watcher_version || !r->run_id || !r->records) die("out of memory");
  r->collecting = r->frames_enabled = r->has_records = 1;
  r->lifecycle = "resumed";
  r->refresh_rate = 60;
  r->first_seq = 1;
  r->last_seq = (int64_t)n;
  r->nrecords = n;
  for (size_t i = 0; i < n; i++) {
    frame_t *f = &r->records[i];
    int64_t seq = (int64_t)i + 1, vsync = 1000000 + seq * 16667;
    f->seq = f->frame_number = seq;
    f->vsync_start_us = vsync;
    f->build_us = 3000 + (seq * 37) % 9000;
    f->raster_us = 1500 + (seq * 53) % 17000;
    f->vsync_overhead_us = 100;
    f->total_span_us = f->build_us + f->raster_us + 200;
    f->at_us = vsync + f->build_us + 180;
    f->layer_cache_count = seq % 3;
    f->picture_cache_count = seq % 2;
    f->blocks = calloc(BENCH_BLOCKS, sizeof *f->blocks);
    if (!f->blocks) die("out of memory");
    f->nblocks = BENCH_BLOCKS;
    for (size_t b = 0; b < BENCH_BLOCKS; b++) {
      record_block_t *bl = &f->blocks[b];
      bl->name = record_name_new(block_names[b]);
      if (!bl->name) die("out of memory");
      bl->self_micros = 20 + (seq * 7 + (int64_t)b * 13) % 200;
      bl->micros = bl->self_micros + (b + 1 == BENCH_BLOCKS ? 2500 : 0);
      bl->count = 1;
    }
  }
}

/* Feeds frames frames into st: the reply's records again and again, their
 * seqs moved on each time, so the store takes every one as new (ring and
 * summary as in a session). */
static void store_feed(store_t *st, record_reply_t *r, uint64_t frames) {
  int64_t shift = (int64_t)r->nrecords;
  for (uint64_t done = 0; done < frames; done += r->nrecords) {
    size_t keep = r->nrecords;
    if (frames - done < r->nrecords) r->nrecords = (size_t)(frames - done);
    if (store_add_reply(st, r, NULL) < 0) die("out of memory");
    r->nrecords = keep;
    for (size_t i = 0; i < r->nrecords; i++) {
      r->records[i].seq += shift;
      r->records[i].frame_number += shift;
    }
    r->first_seq += shift;
    r->last_seq += shift;
  }
}

static int run_memory(uint64_t frames) {
  record_reply_t r;
  reply_build(&r, BENCH_REPLY_RECORDS);
  long before = peak_rss_kib();
  store_t *st = store_new(BENCH_BUDGET_US);
  if (!st) die("out of memory");
  store_feed(st, &r, frames);
  size_t text = summarise(st);
  uint64_t seen = store_frames_seen(st);
  store_free(st);
  record_reply_close(&r);
  if (seen != frames) die("the store did not take every frame");
  printf("{\"frames\":%llu,\"peakRssKiB\":%ld,\"baseRssKiB\":%ld,\"summaryBytes\":%zu}\n",
         (unsigned long long)frames, peak_rss_kib(), before, text);
  return 0;
}

/* ---- in-frame cost ------------------------------------------------------- */

#define INFRAME_BATCH 8 /* frames between two timings batches (~130 ms at 60 Hz) */
#define INFRAME_NAMES 40 /* distinct names: trackWidgets repeats widget types */
#define INFRAME_WARMUP 4096 /* frames run first, unmeasured: the ring (4 096) fills and the
                               heap stops growing, so page faults do not count as frame work */

static double thread_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* n blocks of one frame in finish order: chains of 5 nested builds (the
 * innermost finishes first) side by side, all inside BUILD, the last. */
static void inframe_events(wm_event_t *ev, size_t n, int64_t start, int64_t frame) {
  static char names[INFRAME_NAMES][16];
  if (!names[0][0])
    for (int i = 0; i < INFRAME_NAMES; i++) snprintf(names[i], sizeof names[i], "Widget%02d", i);
  size_t k = 0;
  int64_t t = start + 10;
  while (k + 1 < n) {
    size_t depth = n - 1 - k < 5 ? n - 1 - k : 5;
    int64_t span = 40 + (frame * 7 + (int64_t)k) % 60;
    for (size_t j = depth; j-- > 0; k++) /* innermost first */
      ev[k] = (wm_event_t){names[(k * 7 + j) % INFRAME_NAMES], t + (int64_t)j,
                           span - 2 * (int64_t)j};
    t += span + 3;
  }
  ev[k] = (wm_event_t){"BUILD", start, t - start + 20};
}

static int run_inframe(size_t nblocks, size_t frames) {
  if (nblocks < 1 || frames < INFRAME_BATCH) return 2;
  frames -= frames % INFRAME_BATCH;
  wm_t *wm[2];
  double in_ns[2] = {0, 0}, out_ns[2] = {0, 0};
  for (int m = 0; m < 2; m++) {
    wm_config_t cfg = {0};
    cfg.attribute_in_frame = m == 0; /* 0: the baseline, 0.1.0's placement */
    cfg.auto_off_us = INT64_MAX / 4;
    wm[m] = wm_new(&cfg, "bench-inframe");
    if (!wm[m]) die("out of memory");
    json_decref(model_call(wm[m], json_pack("{s:s}", "action", "start"), 0));
  }
  wm_event_t *ev = calloc(nblocks * INFRAME_BATCH, sizeof *ev);
  wm_timing_t timing[INFRAME_BATCH];
  if (!ev) die("out of memory");
  for (size_t done = 0; done < INFRAME_WARMUP + frames; done += INFRAME_BATCH) {
    int timed = done >= INFRAME_WARMUP;
    for (size_t k = 0; k < INFRAME_BATCH; k++) {
      int64_t f = (int64_t)(done + k) + 1, vsync = 1000000 + f * 16667;
      inframe_events(ev + k * nblocks, nblocks, vsync + 100, f);
      timing[k] = (wm_timing_t){f, vsync, vsync + 100, vsync + 9000, vsync + 9100, vsync + 14000,
                                0, 0};
    }
    /* Alternate which placement goes first: caches and the neighbours'
     * load then favour neither. */
    for (int i = 0; i < 2; i++) {
      int m = (int)((done / INFRAME_BATCH + (size_t)i) % 2);
      double t0 = thread_ns();
      for (size_t k = 0; k < INFRAME_BATCH; k++)
        wm_frame_drawn(wm[m], timing[k].frame_number, timing[k].build_finish_us - 50,
                       ev + k * nblocks, nblocks);
      double t1 = thread_ns();
      wm_timings(wm[m], timing, INFRAME_BATCH);
      double t2 = thread_ns();
      if (timed) {
        in_ns[m] += t1 - t0;
        out_ns[m] += t2 - t1;
      }
    }
  }
  /* Both placements must have written the same records. */
  json_t *reply[2];
  for (int m = 0; m < 2; m++)
    reply[m] = model_call(wm[m], json_pack("{s:s,s:s}", "action", "read", "since", "0"), 0);
  json_t *recs[2] = {json_object_get(reply[0], "records"), json_object_get(reply[1], "records")};
  int same = json_array_size(recs[0]) > 0 && json_equal(recs[0], recs[1]);
  json_decref(reply[0]);
  json_decref(reply[1]);
  printf("{\"blocks\":%zu,\"frames\":%zu,\"sameRecords\":%s,"
         "\"baseline\":{\"inFrameNs\":%.1f,\"timingsNs\":%.1f},"
         "\"now\":{\"inFrameNs\":%.1f,\"timingsNs\":%.1f},\"ratio\":%.4f}\n",
         nblocks, frames, same ? "true" : "false", in_ns[0] / (double)frames,
         out_ns[0] / (double)frames, in_ns[1] / (double)frames, out_ns[1] / (double)frames,
         in_ns[1] / in_ns[0]);
  free(ev);
  for (int m = 0; m < 2; m++) wm_free(wm[m]);
  return same ? 0 : 1;
}

/* ---- hot paths (callgrind) ----------------------------------------------- */

/* Not static and never inlined: callgrind toggles collection on these names. */
size_t hot_framing(const char *data, size_t len);
size_t hot_dispatch(mcp_session_t *s, uv_loop_t *loop, const char *lines);
size_t hot_ingest(store_t *st, const replies_t *rs);
size_t hot_summary(const store_t *st);

static void count_line(void *arg, const char *line, size_t len, int oversize) {
  *(size_t *)arg += oversize ? 0 : len;
}

__attribute__((noinline)) size_t hot_framing(const char *data, size_t len) {
  framing_t f;
  size_t seen = 0;
  framing_init(&f, CONFIG_DEFAULT_MAX_LINE_BYTES);
  for (size_t off = 0; off < len; off += 4096) /* libuv's read size: lines split anywhere */
    framing_feed(&f, data + off, len - off < 4096 ? len - off : 4096, count_line, &seen);
  framing_finish(&f, count_line, &seen);
  framing_close(&f);
  return seen;
}

static size_t emitted;
static void count_emit(void *arg, const char *line, size_t len) {
  emitted++;
}

__attribute__((noinline)) size_t hot_dispatch(mcp_session_t *s, uv_loop_t *loop,
                                              const char *lines) {
  const char *p = lines, *nl;
  size_t before = emitted;
  while ((nl = strchr(p, '\n'))) {
    mcp_session_handle_line(s, p, (size_t)(nl - p));
    p = nl + 1;
  }
  while (mcp_session_inflight(s)) uv_run(loop, UV_RUN_ONCE);
  return emitted - before;
}

__attribute__((noinline)) size_t hot_ingest(store_t *st, const replies_t *rs) {
  for (size_t i = 0; i < rs->n; i++) ingest_one(st, rs->text[i], rs->len[i]);
  return (size_t)store_frames_seen(st);
}

__attribute__((noinline)) size_t hot_summary(const store_t *st) {
  return summarise(st);
}

static void tool_closed(void *arg) {
  (void)arg;
}

static int run_hot(const char *name) {
  size_t got = 0, want = 0;
  if (!strcmp(name, "framing")) {
    /* 400 tools/call lines of about 150 bytes. */
    size_t cap = 400 * 200, len = 0;
    char *data = malloc(cap);
    if (!data) die("out of memory");
    for (int i = 0; i < 400; i++)
      len += (size_t)snprintf(data + len, cap - len,
                              "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":"
                              "{\"name\":\"telescope_frames\",\"arguments\":{\"action\":"
                              "\"read\",\"detail\":\"summary\",\"limit\":%d}}}\n",
                              i, i % 1000);
    want = len - 400;
    got = hot_framing(data, len);
    free(data);
  } else if (!strcmp(name, "dispatch")) {
    /* 50 status calls with no app configured: MCP parse, classify, argument
     * validation against the schema, the tool's answer, the result line. */
    uv_loop_t loop;
    config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.log_level = LOG_ERROR;
    cfg.call_timeout_ms = CONFIG_DEFAULT_CALL_TIMEOUT_MS;
    cfg.max_line_bytes = CONFIG_DEFAULT_MAX_LINE_BYTES;
    if (uv_loop_init(&loop)) die("uv_loop_init");
    frames_tool_t *tool = frames_tool_new(&loop, &cfg);
    mcp_session_t *s = mcp_session_new(count_emit, NULL);
    if (!tool || !s) die("out of memory");
    mcp_tool_t t = frames_tool_mcp(tool);
    mcp_session_add_tool(s, &t);
    const char *init = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
                       "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{"
                       "\"name\":\"bench\",\"version\":\"0\"}}}";
    const char *inited = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
    mcp_session_handle_line(s, init, strlen(init));
    mcp_session_handle_line(s, inited, strlen(inited));
    size_t cap = 50 * 160, len = 0;
    char *lines = malloc(cap);
    if (!lines) die("out of memory");
    for (int i = 1; i <= 50; i++)
      len += (size_t)snprintf(lines + len, cap - len,
                              "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":"
                              "{\"name\":\"telescope_frames\",\"arguments\":{\"action\":"
                              "\"status\"}}}\n",
                              i);
    want = 50;
    got = hot_dispatch(s, &loop, lines);
    free(lines);
    mcp_session_free(s);
    frames_tool_close(tool, tool_closed, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
  } else if (!strcmp(name, "ingest")) {
    replies_t rs;
    replies_make(&rs, 2, 50); /* 100 records of 20 blocks */
    store_t *st = store_new(BENCH_BUDGET_US);
    if (!st) die("out of memory");
    want = rs.records;
    got = hot_ingest(st, &rs);
    store_free(st);
    replies_free(&rs);
  } else if (!strcmp(name, "summary")) {
    record_reply_t r; /* a session of 2000 frames */
    reply_build(&r, BENCH_REPLY_RECORDS);
    store_t *st = store_new(BENCH_BUDGET_US);
    if (!st) die("out of memory");
    store_feed(st, &r, 2000);
    got = hot_summary(st) > 0;
    want = 1;
    store_free(st);
    record_reply_close(&r);
  } else {
    fprintf(stderr, "bench_core: unknown hot path '%s'\n", name);
    return 2;
  }
  if (got != want) {
    fprintf(stderr, "bench_core: hot %s did %zu of %zu\n", name, got, want);
    return 1;
  }
  printf("{\"hot\":\"%s\",\"units\":%zu}\n", name, got);
  return 0;
}

int main(int argc, char **argv) {
  json_object_seed(0x7e1e5c09);
  for (int i = 0; i < BENCH_BLOCKS; i++)
    snprintf(block_names[i], sizeof block_names[i], i + 1 == BENCH_BLOCKS ? "BUILD" : "Widget%02d",
             i + 1);
  if (argc >= 3 && !strcmp(argv[1], "throughput")) {
    int ingest = !strcmp(argv[2], "ingest");
    if (!ingest && strcmp(argv[2], "parse")) goto usage;
    int passes = argc >= 4 ? atoi(argv[3]) : 10;
    return run_throughput(ingest, passes > 0 ? passes : 1);
  }
  if (argc >= 3 && !strcmp(argv[1], "memory"))
    return run_memory(strtoull(argv[2], NULL, 10));
  if (argc >= 3 && !strcmp(argv[1], "hot")) return run_hot(argv[2]);
  if (argc >= 3 && !strcmp(argv[1], "inframe"))
    return run_inframe(strtoul(argv[2], NULL, 10),
                       argc >= 4 ? strtoul(argv[3], NULL, 10) : 2000);
usage:
  fprintf(stderr, "usage: bench_core throughput parse|ingest [PASSES]\n"
                  "       bench_core memory FRAMES\n"
                  "       bench_core inframe BLOCKS [FRAMES]\n"
                  "       bench_core hot framing|dispatch|ingest|summary\n");
  return 2;
}
