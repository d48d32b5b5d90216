/* vmtl: trace events of getVMTimeline read into GC / shader / raster events
 * (thread names, B/E pairs across pulls, repeats of overlapping pulls,
 * malformed entries) and joined to frames by time (window edges, threads,
 * clock offsets, unions). The replies are shaped like the VM's
 * (runtime/vm/timeline.cc: integer ts/dur, cat = stream, "name (tid)"). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmtl.h"
#include "vmtl_join.h"

/* ---- building replies ----------------------------------------------------------- */

static json_t *meta(int64_t tid, const char *name) {
  char full[128];
  snprintf(full, sizeof full, "%s (%lld)", name, (long long)tid);
  return json_pack("{s:s,s:s,s:i,s:I,s:{s:s,s:s}}", "name", "thread_name", "ph", "M", "pid", 7,
                   "tid", (json_int_t)tid, "args", "name", full, "mode", "basic");
}

static json_t *ev(const char *ph, int64_t tid, const char *cat, const char *name, int64_t ts) {
  return json_pack("{s:s,s:s,s:I,s:i,s:I,s:s,s:{s:s}}", "name", name, "cat", cat, "tid",
                   (json_int_t)tid, "pid", 7, "ts", (json_int_t)ts, "ph", ph, "args",
                   "isolateGroupId", "isolateGroups/1");
}

static json_t *x(int64_t tid, const char *cat, const char *name, int64_t ts, int64_t dur) {
  json_t *e = ev("X", tid, cat, name, ts);
  json_object_set_new(e, "dur", json_integer(dur));
  return e;
}

static json_t *with_arg(json_t *e, const char *k, const char *v) {
  json_object_set_new(json_object_get(e, "args"), k, json_string(v));
  return e;
}

/* Steals the entries; NULL ends the list. */
static json_t *reply(json_t *first, ...) {
  json_t *events = json_array();
  va_list ap;
  va_start(ap, first);
  for (json_t *e = first; e; e = va_arg(ap, json_t *)) json_array_append_new(events, e);
  va_end(ap);
  return json_pack("{s:s,s:o,s:I,s:I}", "type", "Timeline", "traceEvents", events,
                   "timeOriginMicros", (json_int_t)1000, "timeExtentMicros", (json_int_t)500000);
}

#define UI 100
#define RASTER 101
#define WORKER 102
#define IO 103

typedef struct {
  size_t n;
  vmtl_event_t ev[4096];
} got_t;

static void collect(void *arg, const vmtl_event_t *e) {
  got_t *g = arg;
  ck_assert_uint_lt(g->n, 4096);
  g->ev[g->n++] = *e;
}

static vmtl_pull_stats_t parse_ok(vmtl_parser_t *p, json_t *r, got_t *g) {
  vmtl_pull_stats_t st;
  char err[128] = "";
  ck_assert_int_eq(vmtl_parse(p, r, collect, g, &st, err, sizeof err), 0);
  ck_assert_str_eq(err, "");
  json_decref(r);
  return st;
}

static const vmtl_event_t *find(const got_t *g, const char *name, int64_t ts) {
  for (size_t i = 0; i < g->n; i++)
    if (!strcmp(g->ev[i].name, name) && g->ev[i].ts_us == ts) return &g->ev[i];
  return NULL;
}

/* ---- thread names ---------------------------------------------------------------- */

START_TEST(thread_names_classified) {
  static const struct {
    const char *name;
    vmtl_thread_t want;
  } cases[] = {
      {"io.flutter.1.ui (22531)", VMTL_THREAD_UI}, /* iOS */
      {"1.ui (12652)", VMTL_THREAD_UI},            /* Android */
      {"io.flutter.ui (225695)", VMTL_THREAD_UI},  /* desktop */
      {"ui", VMTL_THREAD_UI},
      {"1.platform (22585)", VMTL_THREAD_UI}, /* merged platform/UI thread */
      {"io.flutter.1.raster (23811)", VMTL_THREAD_RASTER},
      {"io.flutter.1.gpu (23811)", VMTL_THREAD_RASTER}, /* before the rename */
      {"1.raster", VMTL_THREAD_RASTER},
      {"gpu", VMTL_THREAD_RASTER},
      {"io.flutter.1.io (24579)", VMTL_THREAD_OTHER},
      {"DartWorker (67239)", VMTL_THREAD_OTHER},
      {"FlutterConcurrentMessageLoopWorker (27651)", VMTL_THREAD_OTHER},
      {"build (1)", VMTL_THREAD_OTHER}, /* "ui" must follow a dot */
      {"ui.thing (3)", VMTL_THREAD_OTHER},
      {"1.ui (-77)", VMTL_THREAD_UI},    /* tids print signed */
      {"1.ui (12x)", VMTL_THREAD_OTHER}, /* not the VM's decoration */
      {" (12652)", VMTL_THREAD_UNKNOWN}, /* the VM's form of an unnamed thread */
      {"", VMTL_THREAD_UNKNOWN},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    ck_assert_msg(vmtl_thread_classify(cases[i].name) == cases[i].want, "%s", cases[i].name);
  ck_assert(vmtl_thread_classify(NULL) == VMTL_THREAD_UNKNOWN);
}
END_TEST

/* ---- what is kept ------------------------------------------------------------------ */

/* One realistic reply: names first, then blocks per thread (not sorted by time). */
static json_t *realistic(void) {
  return reply(
      meta(UI, "1.ui"), meta(RASTER, "1.raster"), meta(WORKER, "DartWorker"), meta(IO, "1.io"),
      /* raster thread: the frame envelope, a shader compile inside, long and short work */
      with_arg(ev("B", RASTER, "Embedder", "Rasterizer::DoDraw", 20000), "frame_number", "7"),
      with_arg(ev("B", RASTER, "Embedder", "GrGLProgramBuilder::finalize", 21000), "devtoolsTag",
               "shaders"),
      ev("E", RASTER, "Embedder", "GrGLProgramBuilder::finalize", 29000),
      x(RASTER, "Embedder", "EntityPass::Render", 29500, 3000),
      x(RASTER, "Embedder", "SurfaceFrame::Submit", 32600, 400),
      ev("E", RASTER, "Embedder", "Rasterizer::DoDraw", 33000),
      /* UI thread: a scavenge with nested phases, and a long build that is no cause */
      with_arg(ev("B", UI, "Embedder", "Animator::BeginFrame", 10000), "frame_number", "7"),
      ev("B", UI, "GC", "CollectNewGeneration", 11000),
      ev("B", UI, "GC", "ProcessWeakHandles", 12000),
      ev("E", UI, "GC", "ProcessWeakHandles", 12500),
      ev("E", UI, "GC", "CollectNewGeneration", 15000), x(UI, "Embedder", "Layout", 15500, 2000),
      ev("E", UI, "Embedder", "Animator::BeginFrame", 19000),
      /* a helper thread's concurrent marking is no pause of the UI thread */
      x(WORKER, "GC", "ConcurrentMark", 9000, 8000), NULL);
}

START_TEST(realistic_reply_kinds_and_threads) {
  vmtl_parser_t *p = vmtl_parser_new();
  got_t g = {0};
  vmtl_pull_stats_t st = parse_ok(p, realistic(), &g);
  ck_assert_uint_eq(st.trace_events, 18);
  ck_assert_uint_eq(st.kept, 5);
  ck_assert_uint_eq(g.n, 5);
  ck_assert_uint_eq(st.repeats + st.malformed + st.unmatched, 0);
  ck_assert_int_eq(st.origin_us, 1000);
  ck_assert_int_eq(st.extent_us, 500000);
  ck_assert_int_eq(st.newest_ts_us, 33000);

  const vmtl_event_t *e = find(&g, "GrGLProgramBuilder::finalize", 21000);
  ck_assert_ptr_nonnull(e);
  ck_assert(e->kind == VMTL_SHADER && e->thread == VMTL_THREAD_RASTER);
  ck_assert_int_eq(e->dur_us, 8000);
  e = find(&g, "EntityPass::Render", 29500);
  ck_assert(e && e->kind == VMTL_RASTER && e->dur_us == 3000);
  e = find(&g, "CollectNewGeneration", 11000);
  ck_assert(e && e->kind == VMTL_GC && e->thread == VMTL_THREAD_UI && e->dur_us == 4000);
  e = find(&g, "ProcessWeakHandles", 12000);
  ck_assert(e && e->kind == VMTL_GC && e->dur_us == 500);
  e = find(&g, "ConcurrentMark", 9000);
  ck_assert(e && e->kind == VMTL_GC && e->thread == VMTL_THREAD_OTHER);
  /* The envelopes, short raster work and UI-thread work are no causes. */
  ck_assert_ptr_null(find(&g, "Rasterizer::DoDraw", 20000));
  ck_assert_ptr_null(find(&g, "SurfaceFrame::Submit", 32600));
  ck_assert_ptr_null(find(&g, "Layout", 15500));
  ck_assert_ptr_null(find(&g, "Animator::BeginFrame", 10000));
  /* Completion order: the inner GC phase ends first. */
  ck_assert_str_eq(g.ev[0].name, "GrGLProgramBuilder::finalize");
  size_t inner = 0, outer = 0;
  for (size_t i = 0; i < g.n; i++) {
    if (!strcmp(g.ev[i].name, "ProcessWeakHandles")) inner = i;
    if (!strcmp(g.ev[i].name, "CollectNewGeneration")) outer = i;
  }
  ck_assert_uint_lt(inner, outer);
  vmtl_parser_free(p);
}
END_TEST

START_TEST(older_vm_complete_events_and_reals) {
  /* Older VMs write GC scopes as X events; a trace from elsewhere may use reals. */
  vmtl_parser_t *p = vmtl_parser_new();
  got_t g = {0};
  json_t *r = reply(meta(UI, "io.flutter.1.ui"), meta(RASTER, "io.flutter.1.gpu"),
                    x(UI, "GC", "CollectOldGeneration", 5000, 7000), NULL);
  json_t *real = json_pack("{s:s,s:s,s:I,s:f,s:f,s:s,s:{s:s}}", "name", "compile", "cat",
                           "Embedder", "tid", (json_int_t)RASTER, "ts", 6000.4, "dur", 1999.6, "ph",
                           "X", "args", "devtoolsTag", "shaders");
  json_array_append_new(json_object_get(r, "traceEvents"), real);
  vmtl_pull_stats_t st = parse_ok(p, r, &g);
  ck_assert_uint_eq(st.kept, 2);
  ck_assert(g.ev[0].kind == VMTL_GC && g.ev[0].thread == VMTL_THREAD_UI);
  ck_assert_int_eq(g.ev[0].dur_us, 7000);
  ck_assert(g.ev[1].kind == VMTL_SHADER && g.ev[1].thread == VMTL_THREAD_RASTER);
  ck_assert_int_eq(g.ev[1].ts_us, 6000);
  ck_assert_int_eq(g.ev[1].dur_us, 2000);
  vmtl_parser_free(p);
}
END_TEST

START_TEST(missing_thread_names) {
  /* No metadata at all: GC is kept as of an unknown thread (the join counts it), and
   * raster work cannot be told from other work, so none is kept. */
  vmtl_parser_t *p = vmtl_parser_new();
  got_t g = {0};
  vmtl_pull_stats_t st = parse_ok(
      p,
      reply(x(UI, "GC", "CollectNewGeneration", 1000, 3000),
            x(RASTER, "Embedder", "EntityPass::Render", 1000, 9000),
            with_arg(x(RASTER, "Embedder", "compile", 2000, 100), "devtoolsTag", "shaders"), NULL),
      &g);
  ck_assert_uint_eq(st.kept, 2);
  ck_assert(g.ev[0].kind == VMTL_GC && g.ev[0].thread == VMTL_THREAD_UNKNOWN);
  ck_assert(g.ev[1].kind == VMTL_SHADER && g.ev[1].thread == VMTL_THREAD_UNKNOWN);
  /* The VM's form of an unnamed thread is " (tid)": still unknown. */
  got_t g2 = {0};
  parse_ok(p, reply(meta(UI, ""), x(UI, "GC", "CollectNewGeneration", 9000, 10), NULL), &g2);
  ck_assert(g2.n == 1 && g2.ev[0].thread == VMTL_THREAD_UNKNOWN);
  vmtl_parser_free(p);
}
END_TEST

/* Issue 19: a pipeline compile that carries no devtoolsTag is still a
 * shader compilation when the builder names it (DevTools' Flutter 3.7 iOS
 * recording: 19.9 ms in GrMtlPipelineStateBuilder::finalize, 0.8 ms of it
 * tagged), bare or as the pretty function. A name that only contains one
 * (finalizeX, MyGr…) is not. */
START_TEST(shader_builders_by_name) {
  vmtl_parser_t *p = vmtl_parser_new();
  got_t g = {0};
  vmtl_pull_stats_t st = parse_ok(
      p,
      reply(meta(RASTER, "io.flutter.1.raster (2)"),
            ev("B", RASTER, "Embedder", "GrMtlPipelineStateBuilder::finalize", 1000),
            ev("E", RASTER, "Embedder", "GrMtlPipelineStateBuilder::finalize", 20900),
            x(RASTER, "Embedder", "GrVkPipelineStateBuilder::finalize", 30000, 400),
            x(RASTER, "Embedder", "GrGLProgramBuilder::finalizeX", 40000, 400),
            x(RASTER, "Embedder",
              "GrMtlPipelineState *GrMtlPipelineStateBuilder::finalize(const GrProgramDesc &, "
              "const GrProgramInfo &, const GrMtlPrecompiledLibraries *)",
              50000, 700),
            x(RASTER, "Embedder", "MyGrVkPipelineStateBuilder::finalize", 60000, 400), NULL),
      &g);
  ck_assert_uint_eq(st.kept, 3);
  const vmtl_event_t *m = find(&g, "GrMtlPipelineStateBuilder::finalize", 1000);
  ck_assert_ptr_nonnull(m);
  ck_assert(m->kind == VMTL_SHADER && m->dur_us == 19900);
  m = find(&g, "GrVkPipelineStateBuilder::finalize", 30000);
  ck_assert(m && m->kind == VMTL_SHADER);
  ck_assert_ptr_null(find(&g, "GrGLProgramBuilder::finalizeX", 40000));
  /* The pretty function TRACE_FUNC gives, as the 3.7 recording has it (the
   * kept name is cut to VMTL_NAME_MAX). */
  int pretty = 0;
  for (size_t i = 0; i < g.n; i++) pretty |= g.ev[i].ts_us == 50000 && g.ev[i].kind == VMTL_SHADER;
  ck_assert(pretty);
  vmtl_parser_free(p);
}
END_TEST

START_TEST(names_learned_earlier_are_kept) {
  vmtl_parser_t *p = vmtl_parser_new();
  got_t g = {0};
  parse_ok(p, reply(meta(UI, "1.ui"), meta(RASTER, "1.raster"), NULL), &g);
  parse_ok(p,
           reply(x(UI, "GC", "CollectNewGeneration", 1000, 3000),
                 x(RASTER, "Embedder", "EntityPass::Render", 1000, 9000), NULL),
           &g);
  ck_assert_uint_eq(g.n, 2);
  ck_assert(g.ev[0].thread == VMTL_THREAD_UI);
  ck_assert(g.ev[1].kind == VMTL_RASTER && g.ev[1].thread == VMTL_THREAD_RASTER);
  vmtl_parser_free(p);
}
END_TEST

START_TEST(merged_platform_thread) {
  /* Android since merged_platform_ui_thread: the root isolate's thread is named ".platform"
   * (named ".ui" then ".platform"); its GC is a UI pause, and with a raster thread present
   * its long work is no raster work. */
  vmtl_parser_t *p = vmtl_parser_new();
  got_t g = {0};
  parse_ok(p,
           reply(meta(UI, "1.platform"), meta(RASTER, "1.raster"),
                 x(UI, "GC", "CollectNewGeneration", 1000, 3000),
                 x(UI, "Embedder", "Animator::BeginFrame", 900, 9000), NULL),
           &g);
  ck_assert_uint_eq(g.n, 1);
  ck_assert(g.ev[0].kind == VMTL_GC && g.ev[0].thread == VMTL_THREAD_UI);
  vmtl_parser_free(p);

  /* macOS: no raster thread; raster work runs on the platform thread (DevTools' fallback). */
  p = vmtl_parser_new();
  got_t m = {0};
  parse_ok(p,
           reply(meta(5, "io.flutter.platform"), meta(6, "io.flutter.ui"),
                 x(5, "Embedder", "EntityPass::Render", 1000, 4000),
                 x(6, "Embedder", "Layout", 1000, 4000), NULL),
           &m);
  ck_assert_uint_eq(m.n, 1);
  ck_assert(m.ev[0].kind == VMTL_RASTER && !strcmp(m.ev[0].name, "EntityPass::Render"));
  vmtl_parser_free(p);
}
END_TEST

/* ---- pulls ------------------------------------------------------------------------- */

START_TEST(repeats_across_overlapping_pulls) {
  vmtl_parser_t *p = vmtl_parser_new();
  got_t g = {0};
  vmtl_pull_stats_t st = parse_ok(p, realistic(), &g);
  ck_assert_uint_eq(st.kept, 5);
  /* The same reply again: everything is a repeat (the metadata is not an event). */
  g.n = 0;
  st = parse_ok(p, realistic(), &g);
  ck_assert_uint_eq(st.kept, 0);
  ck_assert_uint_eq(g.n, 0);
  ck_assert_uint_eq(st.repeats, 13); /* the 400 µs X could never be kept: not remembered */
  /* The next window overlaps the last one: its old part is dropped, its new part kept. */
  st = parse_ok(p,
                reply(meta(UI, "1.ui"), x(WORKER, "GC", "ConcurrentMark", 9000, 8000),
                      ev("B", UI, "GC", "CollectNewGeneration", 11000),
                      ev("E", UI, "GC", "CollectNewGeneration", 15000),
                      ev("B", UI, "GC", "CollectOldGeneration", 40000),
                      ev("E", UI, "GC", "CollectOldGeneration", 52000), NULL),
                &g);
  ck_assert_uint_eq(st.repeats, 3);
  ck_assert_uint_eq(st.kept, 1);
  ck_assert(g.n == 1 && !strcmp(g.ev[0].name, "CollectOldGeneration") && g.ev[0].dur_us == 12000);
  vmtl_parser_free(p);
}
END_TEST

START_TEST(same_entry_twice_in_one_reply_is_real) {
  /* Recursion at one µs: two B events alike in one reply are two scopes, not a repeat. */
  vmtl_parser_t *p = vmtl_parser_new();
  got_t g = {0};
  vmtl_pull_stats_t st =
      parse_ok(p,
               reply(meta(UI, "1.ui"), ev("B", UI, "GC", "Scavenge", 100),
                     ev("B", UI, "GC", "Scavenge", 100), ev("E", UI, "GC", "Scavenge", 101),
                     ev("E", UI, "GC", "Scavenge", 300), NULL),
               &g);
  ck_assert_uint_eq(st.repeats, 0);
  ck_assert_uint_eq(st.kept, 2);
  ck_assert_int_eq(g.ev[0].dur_us, 1);
  ck_assert_int_eq(g.ev[1].dur_us, 200);
  vmtl_parser_free(p);
}
END_TEST

START_TEST(begin_in_one_pull_end_in_the_next) {
  vmtl_parser_t *p = vmtl_parser_new();
  got_t g = {0};
  vmtl_pull_stats_t st = parse_ok(
      p,
      reply(meta(RASTER, "1.raster"),
            with_arg(ev("B", RASTER, "Embedder", "compile", 500000), "devtoolsTag", "shaders"),
            x(RASTER, "Embedder", "other", 400000, 10), NULL),
      &g);
  ck_assert_uint_eq(st.kept, 0);
  ck_assert_uint_eq(st.unmatched, 0);
  /* The next window repeats the B (overlap) and brings the E, which has no args. */
  st = parse_ok(
      p,
      reply(meta(RASTER, "1.raster"),
            with_arg(ev("B", RASTER, "Embedder", "compile", 500000), "devtoolsTag", "shaders"),
            ev("E", RASTER, "Embedder", "compile", 530000), NULL),
      &g);
  ck_assert_uint_eq(st.repeats, 1);
  ck_assert_uint_eq(st.kept, 1);
  ck_assert(g.n == 1 && g.ev[0].kind == VMTL_SHADER && g.ev[0].ts_us == 500000 &&
            g.ev[0].dur_us == 30000);
  /* An E whose B came before the window, repeated by the next one, closes nothing else. */
  parse_ok(p,
           reply(ev("B", RASTER, "Embedder", "outer", 540000),
                 ev("B", RASTER, "Embedder", "inner", 541000),
                 ev("E", RASTER, "Embedder", "inner", 545000), NULL),
           &g);
  st = parse_ok(p,
                reply(ev("E", RASTER, "Embedder", "compile", 530000),
                      ev("E", RASTER, "Embedder", "inner", 545000),
                      ev("E", RASTER, "Embedder", "outer", 560000), NULL),
                &g);
  ck_assert_uint_eq(st.repeats, 2);
  ck_assert_uint_eq(st.unmatched, 0);
  const vmtl_event_t *outer = find(&g, "outer", 540000);
  ck_assert(outer && outer->kind == VMTL_RASTER && outer->dur_us == 20000);
  vmtl_parser_free(p);
}
END_TEST

/* A GC that begins at exactly the newest timestamp of the previous pull on
 * its thread is new, not a repeat: the order of a thread's events cannot
 * tell them apart there, the keys must (issue 24, item 4: it was dropped,
 * so the pause was lost). */
START_TEST(begin_at_the_previous_pulls_last_timestamp_is_new) {
  vmtl_parser_t *p = vmtl_parser_new();
  got_t g = {0};
  vmtl_pull_stats_t st = parse_ok(p,
                                  reply(meta(UI, "1.ui"), ev("B", UI, "GC", "CollectNewGeneration", 10000),
                                        ev("E", UI, "GC", "CollectNewGeneration", 20000), NULL),
                                  &g);
  ck_assert_uint_eq(st.kept, 1);
  /* The overlapping next pull: the old pair again, then a GC from 20000 µs. */
  g.n = 0;
  st = parse_ok(p,
                reply(meta(UI, "1.ui"), ev("B", UI, "GC", "CollectNewGeneration", 10000),
                      ev("E", UI, "GC", "CollectNewGeneration", 20000),
                      ev("B", UI, "GC", "CollectOldGeneration", 20000),
                      ev("E", UI, "GC", "CollectOldGeneration", 26000), NULL),
                &g);
  ck_assert_uint_eq(st.repeats, 2);
  ck_assert_uint_eq(st.kept, 1);
  ck_assert_uint_eq(st.unmatched, 0);
  const vmtl_event_t *gc = find(&g, "CollectOldGeneration", 20000);
  ck_assert(gc && gc->kind == VMTL_GC && gc->dur_us == 6000);
  vmtl_parser_free(p);
}
END_TEST

START_TEST(older_than_the_lookback_is_presumed_seen) {
  vmtl_parser_t *p = vmtl_parser_new();
  got_t g = {0};
  parse_ok(p, reply(x(UI, "GC", "a", 10000000, 10), NULL), &g);
  /* Ends more than the lookback before the newest ts seen: a pull older than any overlap. */
  vmtl_pull_stats_t st =
      parse_ok(p,
               reply(x(UI, "GC", "old", 10000000 - VMTL_LOOKBACK_US - 100, 50),
                     x(UI, "GC", "long", 10000000 - VMTL_LOOKBACK_US - 100, 500), NULL),
               &g);
  ck_assert_uint_eq(st.repeats, 1);
  ck_assert(g.n == 2 && !strcmp(g.ev[1].name, "long")); /* still running inside the overlap */
  vmtl_parser_free(p);
}
END_TEST

/* The edge of the lookback: an entry ending exactly there is still within
 * what the keys remember (the ring lets go of entries older than it), so it
 * is judged by its key: one no earlier pull had (a thread's block flushed
 * late) is kept, not presumed seen. */
START_TEST(ending_exactly_at_the_lookback_edge_is_judged_by_its_key) {
  vmtl_parser_t *p = vmtl_parser_new();
  got_t g = {0};
  parse_ok(p, reply(x(UI, "GC", "a", 10000000, 10), NULL), &g); /* newest ts: 10000000 */
  g.n = 0;
  int64_t edge = 10000000 - VMTL_LOOKBACK_US;
  vmtl_pull_stats_t st = parse_ok(p, reply(x(UI, "GC", "late", edge - 50, 50), NULL), &g);
  ck_assert_uint_eq(st.repeats, 0);
  ck_assert(g.n == 1 && !strcmp(g.ev[0].name, "late"));
  /* and the same entry again is a repeat */
  g.n = 0;
  st = parse_ok(p, reply(x(UI, "GC", "late", edge - 50, 50), NULL), &g);
  ck_assert_uint_eq(st.repeats, 1);
  ck_assert_uint_eq(g.n, 0);
  vmtl_parser_free(p);
}
END_TEST

START_TEST(many_entries_remembered) {
  /* More entries than the first ring holds: it grows, and a second pass is all repeats. */
  vmtl_parser_t *p = vmtl_parser_new();
  json_t *events = json_array();
  json_array_append_new(events, meta(UI, "1.ui"));
  for (int i = 0; i < 5000; i++)
    json_array_append_new(events, x(UI, "GC", "Scavenge", i * 100, 50));
  json_t *r = json_pack("{s:s,s:o}", "type", "Timeline", "traceEvents", events);
  got_t *g = calloc(1, sizeof *g);
  vmtl_pull_stats_t st;
  ck_assert_int_eq(vmtl_parse(p, r, NULL, NULL, &st, NULL, 0), 0);
  ck_assert_uint_eq(st.kept, 5000);
  ck_assert_int_eq(st.origin_us, -1);
  ck_assert_int_eq(st.extent_us, -1);
  ck_assert_int_eq(vmtl_parse(p, r, collect, g, &st, NULL, 0), 0);
  ck_assert_uint_eq(st.kept, 0);
  ck_assert_uint_eq(st.repeats, 5000);
  json_decref(r);
  free(g);
  vmtl_parser_free(p);
}
END_TEST

START_TEST(ring_overflow_keeps_begin_end_straight) {
  /* More keys than remembered between a pull and its overlap: the per-thread order of B/E
   * events still tells the repeated E from a new one, so it cannot close the wrong B. */
  vmtl_parser_t *p = vmtl_parser_new();
  json_t *events = json_array();
  json_array_append_new(events, meta(RASTER, "1.raster"));
  json_array_append_new(events, ev("B", RASTER, "Embedder", "outer", 100));
  json_array_append_new(events, ev("B", RASTER, "Embedder", "a", 150));
  json_array_append_new(events, ev("E", RASTER, "Embedder", "a", 200));
  for (int i = 0; i < VMTL_SEEN_MAX + 100; i++)
    json_array_append_new(events, x(UI, "GC", "Scavenge", 300 + i, 1));
  json_t *r = json_pack("{s:s,s:o}", "type", "Timeline", "traceEvents", events);
  vmtl_pull_stats_t st;
  ck_assert_int_eq(vmtl_parse(p, r, NULL, NULL, &st, NULL, 0), 0);
  json_decref(r);
  got_t *g = calloc(1, sizeof *g);
  st = parse_ok(p,
                reply(ev("B", RASTER, "Embedder", "outer", 100),
                      ev("B", RASTER, "Embedder", "a", 150), ev("E", RASTER, "Embedder", "a", 200),
                      ev("E", RASTER, "Embedder", "outer", 5000), NULL),
                g);
  ck_assert_uint_eq(st.repeats, 3);
  ck_assert_uint_eq(st.unmatched, 0);
  ck_assert_uint_eq(g->n, 1);
  ck_assert_str_eq(g->ev[0].name, "outer");
  ck_assert_int_eq(g->ev[0].dur_us, 4900);
  free(g);
  vmtl_parser_free(p);
}
END_TEST

/* ---- B/E matching -------------------------------------------------------------------- */

START_TEST(end_matches_by_name_else_innermost) {
  vmtl_parser_t *p = vmtl_parser_new();
  got_t g = {0};
  vmtl_pull_stats_t st = parse_ok(
      p,
      reply(meta(UI, "1.ui"), ev("E", UI, "GC", "orphan", 50), /* no B at all */
            ev("B", UI, "GC", "outer", 100), ev("B", UI, "GC", "lost", 200),
            ev("E", UI, "GC", "outer", 400), /* closes outer; lost is dropped */
            ev("B", UI, "GC", "a", 500), ev("E", UI, "GC", "", 600),  /* no name: the innermost */
            ev("B", UI, "GC", "b", 700), ev("E", UI, "GC", "b", 650), /* ends before it began */
            ev("E", UI, "GC", "b", 900), NULL),
      &g);
  ck_assert_uint_eq(st.unmatched, 2);
  ck_assert_uint_eq(st.malformed, 1);
  ck_assert_uint_eq(st.kept, 3);
  ck_assert(find(&g, "outer", 100) && find(&g, "outer", 100)->dur_us == 300);
  ck_assert(find(&g, "a", 500) && find(&g, "a", 500)->dur_us == 100);
  ck_assert(find(&g, "b", 700) && find(&g, "b", 700)->dur_us == 200);
  ck_assert_ptr_null(find(&g, "lost", 200));
  vmtl_parser_free(p);
}
END_TEST

START_TEST(open_begins_bounded) {
  vmtl_parser_t *p = vmtl_parser_new();
  json_t *events = json_array();
  for (int i = 0; i < VMTL_MAX_OPEN + 10; i++) {
    char name[16];
    snprintf(name, sizeof name, "b%d", i);
    json_array_append_new(events, ev("B", UI, "GC", name, 1000 + i));
  }
  json_array_append_new(events, ev("E", UI, "GC", "b0", 5000)); /* evicted: falls to innermost */
  json_t *r = json_pack("{s:s,s:o}", "type", "Timeline", "traceEvents", events);
  got_t g = {0};
  vmtl_pull_stats_t st = parse_ok(p, r, &g);
  ck_assert_uint_eq(st.unmatched, 10);
  ck_assert_uint_eq(st.kept, 1);
  char want[16];
  snprintf(want, sizeof want, "b%d", VMTL_MAX_OPEN + 9);
  ck_assert_str_eq(g.ev[0].name, want);
  vmtl_parser_free(p);
}
END_TEST

START_TEST(many_threads_bounded) {
  /* More named threads than remembered: UI and raster survive, work goes on. */
  vmtl_parser_t *p = vmtl_parser_new();
  json_t *events = json_array();
  for (int i = 0; i < 2 * VMTL_MAX_THREADS; i++)
    json_array_append_new(events, meta(1000 + i, "DartWorker"));
  json_array_append_new(events, meta(UI, "1.ui"));
  json_array_append_new(events, meta(RASTER, "1.raster"));
  for (int i = 0; i < 2 * VMTL_MAX_THREADS; i++)
    json_array_append_new(events, ev("B", 5000 + i, "Embedder", "w", 10));
  json_array_append_new(events, x(UI, "GC", "CollectNewGeneration", 100, 10));
  json_array_append_new(events, x(RASTER, "Embedder", "EntityPass::Render", 100, 2000));
  json_t *r = json_pack("{s:s,s:o}", "type", "Timeline", "traceEvents", events);
  got_t g = {0};
  vmtl_pull_stats_t st = parse_ok(p, r, &g);
  ck_assert_uint_eq(st.kept, 2);
  ck_assert(g.ev[0].thread == VMTL_THREAD_UI && g.ev[1].kind == VMTL_RASTER);
  ck_assert_uint_le(st.kept + st.repeats + st.malformed + st.unmatched, st.trace_events);
  vmtl_parser_free(p);
}
END_TEST

/* ---- malformed input ---------------------------------------------------------------- */

START_TEST(not_a_timeline) {
  vmtl_parser_t *p = vmtl_parser_new();
  const char *bad[] = {"[]",
                       "{\"type\":\"PerfettoTimeline\",\"trace\":\"AAAA\"}",
                       "{\"traceEvents\":[]}",
                       "{\"type\":\"Timeline\"}",
                       "{\"type\":\"Timeline\",\"traceEvents\":{}}",
                       "{\"type\":7}",
                       "null"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    json_t *j = json_loads(bad[i], JSON_DECODE_ANY, NULL);
    vmtl_pull_stats_t st;
    char err[128] = "";
    got_t g = {0};
    ck_assert_int_eq(vmtl_parse(p, j, collect, &g, &st, err, sizeof err), -1);
    ck_assert_msg(strncmp(err, "timeline: ", 10) == 0, "%s: %s", bad[i], err);
    ck_assert_uint_eq(st.trace_events + st.kept, 0);
    ck_assert_int_eq(st.newest_ts_us, -1);
    json_decref(j);
  }
  /* Nothing changed: the parser behaves as a fresh one. */
  got_t g = {0};
  vmtl_pull_stats_t st = parse_ok(p, realistic(), &g);
  ck_assert_uint_eq(st.kept, 5);
  ck_assert_uint_eq(st.repeats, 0);
  vmtl_parser_free(p);
}
END_TEST

START_TEST(malformed_entries_counted_and_skipped) {
  const char *text =
      "{\"type\":\"Timeline\",\"traceEvents\":["
      "{\"name\":\"thread_name\",\"ph\":\"M\",\"tid\":100,\"args\":{\"name\":\"1.ui (100)\"}},"
      "{\"name\":\"thread_name\",\"ph\":\"M\",\"tid\":\"101\",\"args\":{\"name\":\"1.raster\"}},"
      "{\"name\":\"thread_name\",\"ph\":\"M\",\"tid\":102},"
      "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":7,\"args\":{\"name\":\"app\"}},"
      "7, \"X\", null, [],"
      "{\"name\":\"a\",\"cat\":\"GC\",\"tid\":100,\"ts\":10,\"dur\":5},"
      "{\"name\":\"a\",\"cat\":\"GC\",\"ph\":7,\"tid\":100,\"ts\":10,\"dur\":5},"
      "{\"name\":\"a\",\"cat\":\"GC\",\"ph\":\"XX\",\"tid\":100,\"ts\":10,\"dur\":5},"
      "{\"name\":\"a\",\"cat\":\"GC\",\"ph\":\"X\",\"ts\":10,\"dur\":5},"
      "{\"name\":\"a\",\"cat\":\"GC\",\"ph\":\"X\",\"tid\":\"100\",\"ts\":10,\"dur\":5},"
      "{\"name\":\"a\",\"cat\":\"GC\",\"ph\":\"X\",\"tid\":100.5,\"ts\":10,\"dur\":5},"
      "{\"name\":\"a\",\"cat\":\"GC\",\"ph\":\"X\",\"tid\":100,\"ts\":-1,\"dur\":5},"
      "{\"name\":\"a\",\"cat\":\"GC\",\"ph\":\"X\",\"tid\":100,\"ts\":\"10\",\"dur\":5},"
      "{\"name\":\"a\",\"cat\":\"GC\",\"ph\":\"X\",\"tid\":100,\"ts\":9007199254740993,\"dur\":5},"
      "{\"name\":\"a\",\"cat\":\"GC\",\"ph\":\"X\",\"tid\":100,\"ts\":1e300,\"dur\":5},"
      "{\"name\":\"a\",\"cat\":\"GC\",\"ph\":\"X\",\"tid\":100,\"ts\":10},"
      "{\"name\":\"a\",\"cat\":\"GC\",\"ph\":\"X\",\"tid\":100,\"ts\":10,\"dur\":-5},"
      "{\"name\":\"a\",\"cat\":\"GC\",\"ph\":\"X\",\"tid\":100,\"ts\":10,\"dur\":true},"
      "{\"name\":7,\"cat\":\"GC\",\"ph\":\"X\",\"tid\":100,\"ts\":10,\"dur\":5},"
      "{\"name\":\"i\",\"cat\":\"GC\",\"ph\":\"i\",\"tid\":100},"
      /* fine: instants, counters and async events are read past */
      "{\"name\":\"i\",\"cat\":\"GC\",\"ph\":\"i\",\"s\":\"p\",\"tid\":100,\"ts\":11},"
      "{\"name\":\"n\",\"cat\":\"Dart\",\"ph\":\"b\",\"id\":\"1f\",\"tid\":100,\"ts\":12},"
      /* fine: no cat, no name, no args */
      "{\"ph\":\"X\",\"tid\":100,\"ts\":10,\"dur\":5},"
      "{\"name\":\"good\",\"cat\":\"Embedder,GC\",\"ph\":\"X\",\"tid\":100,\"ts\":20,\"dur\":5},"
      "{\"name\":\"notgc\",\"cat\":\"GCX\",\"ph\":\"X\",\"tid\":100,\"ts\":20,\"dur\":5}"
      "]}";
  json_error_t je;
  json_t *r = json_loads(text, 0, &je);
  ck_assert_msg(r != NULL, "%s", je.text);
  vmtl_parser_t *p = vmtl_parser_new();
  got_t g = {0};
  vmtl_pull_stats_t st = parse_ok(p, r, &g);
  ck_assert_uint_eq(st.trace_events, 28);
  ck_assert_uint_eq(st.malformed, 2 + 4 + 15);
  ck_assert_uint_eq(st.kept, 1);
  ck_assert_str_eq(g.ev[0].name, "good");
  ck_assert(g.ev[0].thread == VMTL_THREAD_UI);
  ck_assert_int_eq(st.newest_ts_us, 20);
  vmtl_parser_free(p);
}
END_TEST

START_TEST(names_copied_safely) {
  vmtl_parser_t *p = vmtl_parser_new();
  char longname[200] = "";
  for (int i = 0; i < 30; i++) strcat(longname, "\xc3\xa9"); /* é: 2 bytes */
  json_t *bad = x(UI, "GC", "x", 30, 5);
  json_object_set_new(bad, "name", json_stringn_nocheck("ab\xff\xc3(\xe2\x82", 7));
  json_t *nul = x(UI, "GC", "x", 40, 5);
  json_object_set_new(nul, "name", json_stringn("ab\0cd", 5));
  got_t g = {0};
  parse_ok(p, reply(x(UI, "GC", longname, 10, 5), x(UI, "GC", "", 20, 5), bad, nul, NULL), &g);
  ck_assert_uint_eq(g.n, 4);
  ck_assert_uint_eq(strlen(g.ev[0].name), 46); /* 23 whole characters fit in 47 bytes */
  ck_assert_int_eq(memcmp(g.ev[0].name, longname, 46), 0);
  ck_assert_str_eq(g.ev[1].name, "");
  ck_assert_str_eq(g.ev[2].name,
                   "ab?"
                   "?(?"
                   "?");
  ck_assert_str_eq(g.ev[3].name, "ab");
  vmtl_parser_free(p);
}
END_TEST

/* ---- the join ------------------------------------------------------------------------- */

static vmtl_event_t E(vmtl_kind_t k, vmtl_thread_t t, int64_t ts, int64_t dur, const char *name) {
  vmtl_event_t e = {ts, dur, k, t, ""};
  snprintf(e.name, sizeof e.name, "%s", name);
  return e;
}

static vmtl_window_t W(int64_t bs, int64_t be, int64_t rs, int64_t re) {
  return (vmtl_window_t){bs, be, rs, re};
}

START_TEST(join_straddling_edges) {
  vmtl_event_t ev[] = {
      E(VMTL_GC, VMTL_THREAD_UI, 900, 300, "left"),          /* 900..1200 over the start 1000 */
      E(VMTL_GC, VMTL_THREAD_UI, 1900, 400, "right"),        /* 1900..2300 over the end 2000 */
      E(VMTL_SHADER, VMTL_THREAD_RASTER, 4000, 9000, "all"), /* covers the raster window */
      E(VMTL_RASTER, VMTL_THREAD_RASTER, 2500, 1000, "r1"),  /* over the raster start */
  };
  vmtl_window_t fr[] = {W(1000, 2000, 3000, 6000), W(7000, 8000, 9000, 20000)};
  vmtl_causes_t out[2];
  ck_assert_int_eq(vmtl_join(ev, 4, fr, 2, 0, out), 0);
  ck_assert_int_eq(out[0].gc_us, 200 + 100);
  ck_assert_uint_eq(out[0].gc_n, 2);
  ck_assert_int_eq(out[0].shader_us, 2000);
  ck_assert_uint_eq(out[0].shader_n, 1);
  ck_assert_int_eq(out[0].raster_top_us, 500);
  ck_assert_str_eq(out[0].raster_top, "r1");
  /* The second frame: only the tail of the shader (9000..13000). */
  ck_assert_int_eq(out[1].gc_us, 0);
  ck_assert_uint_eq(out[1].gc_n, 0);
  ck_assert_int_eq(out[1].shader_us, 4000);
  ck_assert_int_eq(out[1].raster_top_us, 0);
  ck_assert_str_eq(out[1].raster_top, "");
}
END_TEST

START_TEST(join_threads) {
  vmtl_event_t ev[] = {
      E(VMTL_GC, VMTL_THREAD_RASTER, 1000, 500, "gc-raster"), /* not the UI thread's pause */
      E(VMTL_GC, VMTL_THREAD_OTHER, 1000, 800, "ConcurrentMark"),
      E(VMTL_GC, VMTL_THREAD_UNKNOWN, 1100, 100, "unnamed"),  /* best effort: counts */
      E(VMTL_SHADER, VMTL_THREAD_OTHER, 1200, 300, "warmup"), /* counts wherever it ran */
      E(VMTL_SHADER, VMTL_THREAD_UI, 1600, 100, "ui-shader"),
  };
  vmtl_window_t fr[] = {W(1000, 2000, 1000, 2000)};
  vmtl_causes_t out[1];
  ck_assert_int_eq(vmtl_join(ev, 5, fr, 1, 0, out), 0);
  ck_assert_int_eq(out[0].gc_us, 100);
  ck_assert_uint_eq(out[0].gc_n, 1);
  ck_assert_int_eq(out[0].shader_us, 400);
  ck_assert_uint_eq(out[0].shader_n, 2);
}
END_TEST

START_TEST(join_nested_counted_once) {
  vmtl_event_t ev[] = {
      E(VMTL_GC, VMTL_THREAD_UI, 1000, 4000, "CollectNewGeneration"),
      E(VMTL_GC, VMTL_THREAD_UI, 2000, 500, "ProcessWeakHandles"),
      E(VMTL_GC, VMTL_THREAD_UI, 4500, 1000, "overlapping"), /* 4500..5500 extends the union */
      E(VMTL_GC, VMTL_THREAD_UI, 7000, 0, "instant"),        /* covers nothing */
      E(VMTL_SHADER, VMTL_THREAD_RASTER, 100, 50, "a"),
      E(VMTL_SHADER, VMTL_THREAD_RASTER, 100, 50, "a"),
  };
  vmtl_window_t fr[] = {W(0, 10000, 0, 10000)};
  vmtl_causes_t out[1];
  ck_assert_int_eq(vmtl_join(ev, 6, fr, 1, 0, out), 0);
  ck_assert_int_eq(out[0].gc_us, 4500);
  ck_assert_uint_eq(out[0].gc_n, 1);
  ck_assert_int_eq(out[0].shader_us, 50);
  ck_assert_uint_eq(out[0].shader_n, 1);
}
END_TEST

START_TEST(join_clock_offsets_move_attribution) {
  /* A 1 ms GC at 10 500 on the timeline clock; frames' builds at 10 000..11 000 and
   * 12 000..13 000 on theirs. */
  vmtl_event_t ev[] = {E(VMTL_GC, VMTL_THREAD_UI, 10500, 1000, "gc"),
                       E(VMTL_RASTER, VMTL_THREAD_RASTER, 10500, 1000, "r")};
  vmtl_window_t fr[] = {W(10000, 11000, 10000, 11000), W(12000, 13000, 12000, 13000)};
  vmtl_causes_t out[2];
  ck_assert_int_eq(vmtl_join(ev, 2, fr, 2, 0, out), 0);
  ck_assert_int_eq(out[0].gc_us, 500);
  ck_assert_int_eq(out[1].gc_us, 0);
  ck_assert_int_eq(vmtl_join(ev, 2, fr, 2, 1500, out), 0); /* 12 000..13 000 */
  ck_assert_int_eq(out[0].gc_us, 0);
  ck_assert_int_eq(out[1].gc_us, 1000);
  ck_assert_int_eq(out[1].raster_top_us, 1000);
  ck_assert_str_eq(out[1].raster_top, "r");
  ck_assert_int_eq(vmtl_join(ev, 2, fr, 2, -500, out), 0); /* 10 000..11 000 */
  ck_assert_int_eq(out[0].gc_us, 1000);
  ck_assert_int_eq(out[1].gc_us, 0);
  ck_assert_str_eq(out[1].raster_top, "");
  ck_assert_int_eq(vmtl_join(ev, 2, fr, 2, INT64_MAX, out), 0); /* far away: no overflow */
  ck_assert_int_eq(out[0].gc_us + out[1].gc_us, 0);
}
END_TEST

START_TEST(join_raster_top) {
  vmtl_event_t ev[] = {
      E(VMTL_RASTER, VMTL_THREAD_RASTER, 0, 10000, "long-before"), /* overlaps 1000..? */
      E(VMTL_RASTER, VMTL_THREAD_RASTER, 3000, 2000, "inside"),
      E(VMTL_RASTER, VMTL_THREAD_RASTER, 7000, 9000, "past-the-end"),
      E(VMTL_RASTER, VMTL_THREAD_RASTER, 20000, 5000, "elsewhere"),
  };
  vmtl_causes_t out[4];
  vmtl_window_t fr[] = {W(0, 0, 5000, 9000), W(0, 0, 2900, 5100), W(0, 0, 9500, 13000),
                        W(0, 0, 30000, 40000)};
  ck_assert_int_eq(vmtl_join(ev, 4, fr, 4, 0, out), 0);
  ck_assert_int_eq(out[0].raster_top_us, 4000); /* long-before covers it whole */
  ck_assert_str_eq(out[0].raster_top, "long-before");
  ck_assert_int_eq(out[1].raster_top_us, 2200); /* long-before: 2900..5100 */
  ck_assert_str_eq(out[1].raster_top, "long-before");
  ck_assert_int_eq(out[2].raster_top_us, 3500);
  ck_assert_str_eq(out[2].raster_top, "past-the-end");
  ck_assert_int_eq(out[3].raster_top_us, 0);
  ck_assert_str_eq(out[3].raster_top, "");
  /* Ties go to the earliest start. */
  vmtl_event_t tie[] = {E(VMTL_RASTER, VMTL_THREAD_RASTER, 500, 100, "late"),
                        E(VMTL_RASTER, VMTL_THREAD_RASTER, 100, 100, "early")};
  vmtl_window_t one[] = {W(0, 0, 0, 1000)};
  ck_assert_int_eq(vmtl_join(tie, 2, one, 1, 0, out), 0);
  ck_assert_str_eq(out[0].raster_top, "early");
}
END_TEST

START_TEST(join_degenerate) {
  vmtl_causes_t out[2];
  memset(out, 0x55, sizeof out);
  vmtl_window_t fr[] = {W(10, 5, 10, 5), W(0, 100, 0, 100)}; /* a reversed window is empty */
  vmtl_event_t ev[] = {E(VMTL_GC, VMTL_THREAD_UI, 0, 50, "g"),
                       E(VMTL_GC, VMTL_THREAD_UI, 0, -5, "negative"),
                       E(VMTL_SHADER, VMTL_THREAD_UI, VMTL_TIME_MAX * 4, 5, "absurd")};
  ck_assert_int_eq(vmtl_join(ev, 3, fr, 2, 0, out), 0);
  ck_assert_int_eq(out[0].gc_us, 0);
  ck_assert_str_eq(out[0].raster_top, "");
  ck_assert_int_eq(out[1].gc_us, 50);
  ck_assert_int_eq(out[1].shader_us, 0);
  ck_assert_int_eq(vmtl_join(NULL, 0, fr, 2, 0, out), 0);
  ck_assert_int_eq(out[1].gc_us, 0);
  ck_assert_int_eq(vmtl_join(ev, 3, NULL, 0, 0, NULL), 0);
}
END_TEST

/* The join against the obvious O(events × frames) answer, on random traces. */
static uint64_t rng_state = 88172645463325252ull;
static int64_t rnd(int64_t n) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (int64_t)(rng_state % (uint64_t)n);
}

static int64_t naive_union(const vmtl_event_t *ev, size_t n, int kind, int64_t s, int64_t e,
                           int64_t off) {
  int64_t total = 0;
  for (int64_t t = s; t < e; t++) { /* µs by µs: slow and obviously right */
    for (size_t i = 0; i < n; i++) {
      if ((int)ev[i].kind != kind) continue;
      if (kind == VMTL_GC && ev[i].thread != VMTL_THREAD_UI && ev[i].thread != VMTL_THREAD_UNKNOWN)
        continue;
      if (ev[i].ts_us + off <= t && t < ev[i].ts_us + off + ev[i].dur_us) {
        total++;
        break;
      }
    }
  }
  return total;
}

START_TEST(join_matches_brute_force) {
  for (int round = 0; round < 200; round++) {
    size_t n = (size_t)rnd(40), m = 1 + (size_t)rnd(8);
    vmtl_event_t ev[40];
    vmtl_window_t fr[8];
    for (size_t i = 0; i < n; i++) {
      char name[16];
      snprintf(name, sizeof name, "e%zu", i);
      ev[i] = E((vmtl_kind_t)rnd(3), (vmtl_thread_t)rnd(4), rnd(400), rnd(120), name);
    }
    for (size_t f = 0; f < m; f++) {
      int64_t bs = rnd(450), rs = rnd(450);
      fr[f] = W(bs, bs + rnd(100), rs, rs + rnd(100));
    }
    int64_t off = rnd(101) - 50;
    vmtl_causes_t out[8];
    ck_assert_int_eq(vmtl_join(ev, n, fr, m, off, out), 0);
    for (size_t f = 0; f < m; f++) {
      ck_assert_int_eq(out[f].gc_us,
                       naive_union(ev, n, VMTL_GC, fr[f].build_start_us, fr[f].build_end_us, off));
      ck_assert_int_eq(out[f].shader_us, naive_union(ev, n, VMTL_SHADER, fr[f].raster_start_us,
                                                     fr[f].raster_end_us, off));
      int64_t best = 0;
      const char *who = "";
      int64_t who_ts = 0;
      for (size_t i = 0; i < n; i++) {
        if (ev[i].kind != VMTL_RASTER || ev[i].dur_us <= 0) continue;
        int64_t a = ev[i].ts_us + off, b = a + ev[i].dur_us;
        int64_t lo = a > fr[f].raster_start_us ? a : fr[f].raster_start_us;
        int64_t hi = b < fr[f].raster_end_us ? b : fr[f].raster_end_us;
        if (hi - lo > best || (hi - lo == best && best > 0 && a < who_ts)) {
          best = hi - lo;
          who = ev[i].name;
          who_ts = a;
        }
      }
      ck_assert_int_eq(out[f].raster_top_us, best);
      if (best > 0) {
        /* Same overlap and start may differ in name only by the sort's tie-break. */
        int64_t got_ts = -1;
        for (size_t i = 0; i < n; i++)
          if (!strcmp(ev[i].name, out[f].raster_top)) got_ts = ev[i].ts_us + off;
        ck_assert_int_eq(got_ts, who_ts);
      } else {
        ck_assert_str_eq(out[f].raster_top, who);
      }
    }
  }
}
END_TEST

/* ---- parse then join, end to end ----------------------------------------------------- */

START_TEST(parse_then_join_explains_frames) {
  vmtl_parser_t *p = vmtl_parser_new();
  got_t g = {0};
  parse_ok(p, realistic(), &g);
  /* Frame 7: build 10 000..19 000, raster 20 000..33 000 (same clock on native). */
  vmtl_window_t fr[] = {W(10000, 19000, 20000, 33000)};
  vmtl_causes_t out[1];
  ck_assert_int_eq(vmtl_join(g.ev, g.n, fr, 1, 0, out), 0);
  ck_assert_int_eq(out[0].gc_us, 4000); /* the scavenge, its phase inside it counted once */
  ck_assert_uint_eq(out[0].gc_n, 1);
  ck_assert_int_eq(out[0].shader_us, 8000);
  ck_assert_int_eq(out[0].raster_top_us, 3000);
  ck_assert_str_eq(out[0].raster_top, "EntityPass::Render");
  vmtl_parser_free(p);
}
END_TEST

int main(void) {
  Suite *s = suite_create("vmtl");
  TCase *tc = tcase_create("parse");
  tcase_add_test(tc, thread_names_classified);
  tcase_add_test(tc, realistic_reply_kinds_and_threads);
  tcase_add_test(tc, older_vm_complete_events_and_reals);
  tcase_add_test(tc, missing_thread_names);
  tcase_add_test(tc, shader_builders_by_name);
  tcase_add_test(tc, names_learned_earlier_are_kept);
  tcase_add_test(tc, merged_platform_thread);
  tcase_add_test(tc, repeats_across_overlapping_pulls);
  tcase_add_test(tc, same_entry_twice_in_one_reply_is_real);
  tcase_add_test(tc, begin_in_one_pull_end_in_the_next);
  tcase_add_test(tc, begin_at_the_previous_pulls_last_timestamp_is_new);
  tcase_add_test(tc, ending_exactly_at_the_lookback_edge_is_judged_by_its_key);
  tcase_add_test(tc, older_than_the_lookback_is_presumed_seen);
  tcase_add_test(tc, many_entries_remembered);
  tcase_add_test(tc, ring_overflow_keeps_begin_end_straight);
  tcase_add_test(tc, end_matches_by_name_else_innermost);
  tcase_add_test(tc, open_begins_bounded);
  tcase_add_test(tc, many_threads_bounded);
  tcase_add_test(tc, not_a_timeline);
  tcase_add_test(tc, malformed_entries_counted_and_skipped);
  tcase_add_test(tc, names_copied_safely);
  suite_add_tcase(s, tc);
  TCase *tj = tcase_create("join");
  tcase_add_test(tj, join_straddling_edges);
  tcase_add_test(tj, join_threads);
  tcase_add_test(tj, join_nested_counted_once);
  tcase_add_test(tj, join_clock_offsets_move_attribution);
  tcase_add_test(tj, join_raster_top);
  tcase_add_test(tj, join_degenerate);
  tcase_add_test(tj, join_matches_brute_force);
  tcase_add_test(tj, parse_then_join_explains_frames);
  suite_add_tcase(s, tj);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
