/* trace: the Chrome trace-event document parsed back — one UI and one raster
 * slice per frame, named threads, janky frames flagged, blocks nested by the
 * reconstruction docs/tool.md describes (checked by hand on one frame),
 * every track properly nested, which the viewers require, and the VM
 * timeline's GC pauses and compiles on their tracks with each janky frame's
 * cause in its args (hand-computed). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "trace.h"

static record_block_t blk(const char *name, int64_t micros, int64_t self) {
  return (record_block_t){record_name_new(name), micros, self, 1};
}

static frame_t frame(int64_t seq, int64_t vsync, int64_t build, int64_t raster) {
  frame_t f;
  memset(&f, 0, sizeof f);
  f.seq = seq;
  f.frame_number = 1000 + seq;
  f.vsync_start_us = vsync;
  f.at_us = vsync + 20000;
  f.vsync_overhead_us = 100;
  f.build_us = build;
  f.raster_us = raster;
  f.total_span_us = 100 + build + 300 + raster; /* 300 µs between build end and raster start */
  f.layer_cache_count = f.picture_cache_count = -1;
  return f;
}

static json_t *parse(char *text) {
  ck_assert_ptr_nonnull(text);
  json_error_t e;
  json_t *doc = json_loads(text, 0, &e);
  ck_assert_msg(doc != NULL, "trace is not JSON: %s", e.text);
  free(text);
  return doc;
}

static json_t *events_where(const json_t *doc, const char *cat, int tid) {
  json_t *out = json_array();
  size_t i;
  json_t *e;
  json_array_foreach(json_object_get(doc, "traceEvents"), i, e) {
    if (strcmp(json_string_value(json_object_get(e, "ph")), "X")) continue;
    if (cat && strcmp(json_string_value(json_object_get(e, "cat")), cat)) continue;
    if (tid && json_integer_value(json_object_get(e, "tid")) != tid) continue;
    json_array_append(out, e);
  }
  return out;
}

static json_int_t ts(const json_t *e) {
  return json_integer_value(json_object_get(e, "ts"));
}
static json_int_t dur(const json_t *e) {
  return json_integer_value(json_object_get(e, "dur"));
}

static int cmp_ev(const void *x, const void *y) {
  const json_t *a = *(json_t *const *)x, *b = *(json_t *const *)y;
  if (ts(a) != ts(b)) return ts(a) < ts(b) ? -1 : 1;
  return dur(a) > dur(b) ? -1 : dur(a) < dur(b);
}

/* Every pair of slices on a track is either disjoint or one contains the other. */
static void assert_nested(const json_t *doc, int tid) {
  json_t *evs = events_where(doc, NULL, tid);
  size_t n = json_array_size(evs);
  json_t **v = malloc((n ? n : 1) * sizeof *v), *stack[64];
  for (size_t i = 0; i < n; i++) v[i] = json_array_get(evs, i);
  qsort(v, n, sizeof *v, cmp_ev);
  int top = 0;
  for (size_t i = 0; i < n; i++) {
    while (top && ts(stack[top - 1]) + dur(stack[top - 1]) <= ts(v[i])) top--;
    if (top)
      ck_assert_msg(ts(v[i]) + dur(v[i]) <= ts(stack[top - 1]) + dur(stack[top - 1]),
                    "tid %d: %s overlaps %s", tid, json_string_value(json_object_get(v[i], "name")),
                    json_string_value(json_object_get(stack[top - 1], "name")));
    ck_assert_int_lt(top, 64);
    stack[top++] = v[i];
  }
  free(v);
  json_decref(evs);
}

static const json_t *named(const json_t *arr, const char *name) {
  size_t i;
  json_t *e;
  json_array_foreach(arr, i,
                     e) if (!strcmp(json_string_value(json_object_get(e, "name")), name)) return e;
  return NULL;
}

START_TEST(one_frame_nesting_by_hand) {
  /* BUILD 3000 (self 1000), A 1500 (self), LAYOUT 800 (self), B 500 (self).
   * Largest first: BUILD goes top level. A (1500) fits BUILD's free 2000 →
   * child, BUILD has 500 free. LAYOUT (800) fits nowhere → top level after
   * BUILD. B (500) fits BUILD's 500 → child after A. With the build starting
   * at vsync 0 + overhead 100: BUILD [100, 3100), A [100, 1600), B [1600,
   * 2100), LAYOUT [3100, 3900). The build is 4000 µs, so nothing is scaled. */
  frame_t f = frame(1, 0, 4000, 2000);
  record_block_t b[] = {blk("A", 1500, 1500), blk("BUILD", 3000, 1000), blk("B", 500, 500),
                        blk("LAYOUT", 800, 800)};
  f.blocks = b;
  f.nblocks = 4;
  json_t *doc = parse(trace_json(&f, 1, 16667, "demo", NULL));
  json_t *blocks = events_where(doc, "block", 1);
  ck_assert_int_eq(json_array_size(blocks), 4);
  const struct {
    const char *name;
    json_int_t ts, dur;
  } want[] = {{"BUILD", 100, 3000}, {"A", 100, 1500}, {"B", 1600, 500}, {"LAYOUT", 3100, 800}};
  for (int i = 0; i < 4; i++) {
    const json_t *e = named(blocks, want[i].name);
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(ts(e), want[i].ts);
    ck_assert_int_eq(dur(e), want[i].dur);
  }
  /* Raster ends at vsync + totalSpan (100 + 4000 + 300 + 2000 = 6400). */
  json_t *r = events_where(doc, "raster", 2);
  ck_assert_int_eq(ts(json_array_get(r, 0)) + dur(json_array_get(r, 0)), 6400);
  ck_assert_int_eq(ts(json_array_get(r, 0)), 4400);
  json_decref(r);
  json_decref(blocks);
  json_decref(doc);

  /* The same blocks in a 1900 µs build: top level sums to 3800, so all are
   * halved (floor): BUILD [100, 1600), A [100, 850), B [850, 1100), LAYOUT
   * [1600, 2000) — the end of the build slice. */
  f.build_us = 1900;
  doc = parse(trace_json(&f, 1, 16667, NULL, NULL));
  blocks = events_where(doc, "block", 1);
  ck_assert_int_eq(ts(named(blocks, "LAYOUT")), 1600);
  ck_assert_int_eq(dur(named(blocks, "LAYOUT")), 400);
  ck_assert_int_eq(ts(named(blocks, "B")), 850);
  ck_assert_int_eq(dur(named(blocks, "A")), 750);
  ck_assert_int_eq(
      json_integer_value(json_object_get(json_object_get(named(blocks, "A"), "args"), "micros")),
      1500);
  assert_nested(doc, 1);
  json_decref(blocks);
  json_decref(doc);
  for (int i = 0; i < 4; i++) record_name_unref(b[i].name);
}
END_TEST

START_TEST(session_round_trip) {
  /* 120 frames at 60 Hz; every 10th janky (build 20 ms, which overlaps the
   * next vsync as a real long frame would push it: the next frame starts
   * after it); frames 40–79 are interaction "scroll", 80–99 "tap". */
  enum { N = 120 };
  frame_t f[N];
  int64_t t = 5000000, janky = 0;
  for (int i = 0; i < N; i++) {
    int slow = i % 10 == 3;
    janky += slow;
    f[i] = frame(i + 1, t, slow ? 20000 : 4000 + i * 10, 3000);
    record_block_t *b = calloc(3, sizeof *b);
    b[0] = blk("BUILD", f[i].build_us - 200, 1000);
    b[1] = blk(slow ? "SlowWidget" : "Card", f[i].build_us - 1500, f[i].build_us - 1500);
    b[2] = blk("LAYOUT", 150, 150);
    f[i].blocks = b;
    f[i].nblocks = 3;
    if (i >= 40 && i < 100) {
      f[i].interaction_id = strdup(i < 80 ? "scroll" : "tap");
      f[i].linked_by = strdup("agent");
    }
    t += slow ? 33334 : 16667;
  }
  json_t *doc = parse(trace_json(f, N, 16667, "telescope s1", NULL));
  json_t *ui = events_where(doc, "frame", 1), *raster = events_where(doc, "raster", 2);
  json_t *ia = events_where(doc, "interaction", 3);
  ck_assert_int_eq(json_array_size(ui), N);
  ck_assert_int_eq(json_array_size(raster), N);
  ck_assert_int_eq(json_array_size(ia), 2);
  ck_assert_int_eq(
      json_integer_value(json_object_get(json_object_get(named(ia, "scroll"), "args"), "frames")),
      40);
  ck_assert_int_eq(
      json_integer_value(json_object_get(json_object_get(named(ia, "tap"), "args"), "jankFrames")),
      2); /* frames 83 and 93 */
  size_t i;
  json_t *e;
  int flagged = 0;
  json_array_foreach(ui, i, e) {
    int j = json_is_true(json_object_get(json_object_get(e, "args"), "janky"));
    ck_assert_str_eq(json_string_value(json_object_get(e, "cname")), j ? "terrible" : "good");
    flagged += j;
  }
  ck_assert_int_eq(flagged, janky);
  ck_assert_int_eq(
      json_integer_value(json_object_get(json_object_get(doc, "otherData"), "jankFrames")), janky);
  ck_assert_int_eq(ts(json_array_get(ui, 0)), 100); /* from the first vsync */
  /* Metadata: the process and three named threads. */
  int threads = 0, process = 0;
  json_array_foreach(json_object_get(doc, "traceEvents"), i, e) {
    if (strcmp(json_string_value(json_object_get(e, "ph")), "M")) continue;
    const char *what = json_string_value(json_object_get(e, "name"));
    threads += !strcmp(what, "thread_name");
    if (!strcmp(what, "process_name")) {
      process++;
      ck_assert_str_eq(json_string_value(json_object_get(json_object_get(e, "args"), "name")),
                       "telescope s1");
    }
  }
  ck_assert_int_eq(threads, 3);
  ck_assert_int_eq(process, 1);
  assert_nested(doc, 1);
  assert_nested(doc, 2);
  assert_nested(doc, 3);
  json_decref(ui);
  json_decref(raster);
  json_decref(ia);
  json_decref(doc);
  for (int k = 0; k < N; k++) record_frame_close(&f[k]);
}
END_TEST

static vmtl_event_t tl_event(vmtl_kind_t kind, vmtl_thread_t thread, int64_t ts, int64_t dur,
                             const char *name) {
  vmtl_event_t e;
  memset(&e, 0, sizeof e);
  e.kind = kind;
  e.thread = thread;
  e.ts_us = ts;
  e.dur_us = dur;
  snprintf(e.name, sizeof e.name, "%s", name);
  return e;
}

static const json_t *arg(const json_t *e, const char *key) {
  return json_object_get(json_object_get(e, "args"), key);
}

START_TEST(timeline_slices_and_frame_causes) {
  /* Three frames 16.667 ms apart on the frames' clock; the timeline's clock
   * is 1 s behind (offset +1 s). Frame 1 misses on build with a 12 ms GC
   * pause on the UI thread inside its build window [100, 22100) (and a
   * helper thread's parallel GC work inside it, not counted again); frame 2
   * is fine; frame 3 misses on raster with a 9 ms shader compile inside its
   * raster window and an 11 ms engine event around it; a shader compile on
   * the IO thread; one GC long before the frames. */
  frame_t f[3];
  f[0] = frame(1, 0, 22000, 3000);
  f[1] = frame(2, 40000, 4000, 3000);
  f[2] = frame(3, 60000, 4000, 20000);
  record_block_t b0[] = {blk("BUILD", 21000, 9000), blk("HeavyList", 12000, 5000)};
  f[0].blocks = b0;
  f[0].nblocks = 2;
  int64_t off = 1000000; /* events + off = frames' clock */
  /* frame 3's raster window: vsync 60000 + span (100+4000+300+20000) − 20000 = [64400, 84400) */
  vmtl_event_t ev[] = {
      tl_event(VMTL_GC, VMTL_THREAD_UI, 5000 - off, 12000, "CollectOldGeneration"),
      tl_event(VMTL_GC, VMTL_THREAD_OTHER, 6000 - off, 8000, "MarkSweep helper"),
      tl_event(VMTL_RASTER, VMTL_THREAD_RASTER, 66000 - off, 11000, "GPURasterizer::Draw"),
      tl_event(VMTL_SHADER, VMTL_THREAD_RASTER, 67000 - off, 9000, "GrGLProgramBuilder::finalize"),
      tl_event(VMTL_SHADER, VMTL_THREAD_OTHER, 41000 - off, 2000, "PipelineLibrary warm-up"),
      tl_event(VMTL_GC, VMTL_THREAD_UI, -500000 - off, 3000, "CollectNewGeneration"),
  };
  trace_timeline_t tl = {ev, sizeof ev / sizeof ev[0], off};
  json_t *doc = parse(trace_json(f, 3, 16667, "t", &tl));
  json_t *gc = events_where(doc, "gc", TRACE_TID_GC);
  json_t *sh = events_where(doc, "shader", TRACE_TID_RASTER_WORK);
  json_t *rw = events_where(doc, "raster-work", TRACE_TID_RASTER_WORK);
  json_t *other = events_where(doc, "shader", TRACE_TID_OTHER_SHADERS);
  /* Only the UI thread's pause inside the span: the helper's work and the
   * pause long before the first frame are not slices. */
  ck_assert_int_eq(json_array_size(gc), 1);
  json_t *all_gc = events_where(doc, "gc", 0);
  ck_assert_int_eq(json_array_size(all_gc), 1);
  json_decref(all_gc);
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(gc, 0), "name")),
                   "CollectOldGeneration");
  ck_assert_int_eq(ts(json_array_get(gc, 0)), 5000); /* its real time, from the first vsync */
  ck_assert_int_eq(dur(json_array_get(gc, 0)), 12000);
  ck_assert_int_eq(json_array_size(sh), 1);
  ck_assert_int_eq(ts(json_array_get(sh, 0)), 67000);
  ck_assert_int_eq(json_array_size(rw), 1);
  ck_assert_int_eq(json_array_size(other), 1);
  /* Timeline tracks are named, and nest (the compile inside the draw). */
  int named_tracks = 0;
  size_t i;
  json_t *e;
  json_array_foreach(json_object_get(doc, "traceEvents"), i, e) {
    if (strcmp(json_string_value(json_object_get(e, "name")), "thread_name")) continue;
    json_int_t tid = json_integer_value(json_object_get(e, "tid"));
    const char *n = json_string_value(arg(e, "name"));
    if (tid == TRACE_TID_GC) {
      ck_assert_str_eq(n, "UI GC");
      named_tracks++;
    }
    if (tid == TRACE_TID_RASTER_WORK) {
      ck_assert_str_eq(n, "Raster work");
      named_tracks++;
    }
    if (tid == TRACE_TID_OTHER_SHADERS) named_tracks++;
  }
  ck_assert_int_eq(named_tracks, 3);
  for (int tid = 1; tid <= TRACE_TID_OTHER_SHADERS; tid++) assert_nested(doc, tid);
  /* Each frame's args: frame 1 bound by build, its cause the GC (12 ms, more
   * than HeavyList's 5 ms self; BUILD is a phase, never the cause); frame 2
   * not janky: no cause; frame 3 bound by raster, the engine's 11 ms draw
   * holds the 9 ms compile: the compile is most of the draw, so it is the
   * cause (the draw alone would name no fix). */
  json_t *ui = events_where(doc, "frame", TRACE_TID_UI);
  const json_t *f1 = json_array_get(ui, 0), *f2 = json_array_get(ui, 1),
               *f3 = json_array_get(ui, 2);
  ck_assert_str_eq(json_string_value(json_object_get(f1, "name")), "Frame 1001");
  ck_assert_str_eq(json_string_value(arg(f1, "boundBy")), "build");
  ck_assert_str_eq(json_string_value(arg(f1, "cause")), "GC");
  ck_assert_int_eq(json_integer_value(arg(f1, "causeUs")), 12000);
  ck_assert_int_eq(json_integer_value(arg(f1, "gcUs")), 12000);
  ck_assert_int_eq(json_integer_value(arg(f1, "gcPauses")), 1);
  ck_assert_str_eq(json_string_value(arg(f1, "topBlock")), "HeavyList");
  ck_assert_int_eq(json_integer_value(arg(f1, "topBlockSelfUs")), 5000);
  ck_assert_ptr_null(arg(f2, "boundBy"));
  ck_assert_ptr_null(arg(f2, "cause"));
  ck_assert_ptr_null(arg(f2, "gcUs"));
  ck_assert_str_eq(json_string_value(arg(f3, "boundBy")), "raster");
  ck_assert_int_eq(json_integer_value(arg(f3, "shaderUs")), 9000);
  ck_assert_int_eq(json_integer_value(arg(f3, "shaderCompiles")), 1);
  ck_assert_str_eq(json_string_value(arg(f3, "cause")), "shader compilation");
  ck_assert_int_eq(json_integer_value(arg(f3, "causeUs")), 9000);
  /* The raster slice carries the same args. */
  json_t *ra = events_where(doc, "raster", TRACE_TID_RASTER);
  ck_assert(
      json_equal(json_object_get(json_array_get(ra, 2), "args"), json_object_get(f3, "args")));
  json_decref(ra);
  json_decref(ui);
  json_decref(gc);
  json_decref(sh);
  json_decref(rw);
  json_decref(other);
  json_decref(doc);

  /* A compile that is the raster's only named work is the cause; with no
   * timeline at all, the phase block is the build's cause and no timeline
   * track is declared. */
  vmtl_event_t only[] = {tl_event(VMTL_SHADER, VMTL_THREAD_RASTER, 67000, 9000,
                                  "GrMtlPipelineStateBuilder::finalize")};
  trace_timeline_t tl2 = {only, 1, 0};
  doc = parse(trace_json(f, 3, 16667, "t", &tl2));
  ui = events_where(doc, "frame", TRACE_TID_UI);
  ck_assert_str_eq(json_string_value(arg(json_array_get(ui, 2), "cause")), "shader compilation");
  json_decref(ui);
  json_decref(doc);
  /* A compile under half of the longest raster event leaves that event the
   * cause (11 ms of draw, 5 ms of it compiling; shaderUs still beside it). */
  vmtl_event_t small[] = {
      tl_event(VMTL_RASTER, VMTL_THREAD_RASTER, 66000, 11000, "Rasterizer::DrawToSurface"),
      tl_event(VMTL_SHADER, VMTL_THREAD_RASTER, 67000, 5000, "GrGLProgramBuilder::finalize")};
  trace_timeline_t tl3 = {small, 2, 0};
  doc = parse(trace_json(f, 3, 16667, "t", &tl3));
  ui = events_where(doc, "frame", TRACE_TID_UI);
  ck_assert_str_eq(json_string_value(arg(json_array_get(ui, 2), "cause")),
                   "Rasterizer::DrawToSurface");
  ck_assert_int_eq(json_integer_value(arg(json_array_get(ui, 2), "causeUs")), 11000);
  ck_assert_int_eq(json_integer_value(arg(json_array_get(ui, 2), "shaderUs")), 5000);
  json_decref(ui);
  json_decref(doc);
  record_block_t b1[] = {blk("BUILD", 21000, 9000), blk("LAYOUT", 500, 500)};
  f[0].blocks = b1;
  doc = parse(trace_json(f, 3, 16667, "t", NULL));
  ui = events_where(doc, "frame", TRACE_TID_UI);
  ck_assert_str_eq(json_string_value(arg(json_array_get(ui, 0), "cause")), "BUILD");
  ck_assert_ptr_null(arg(json_array_get(ui, 0), "gcUs"));
  json_decref(ui);
  ck_assert_int_eq(json_array_size(json_object_get(doc, "traceEvents")),
                   7 + 3 * 2 + 2); /* metadata, frames on two tracks, two blocks */
  json_decref(doc);
  for (size_t k = 0; k < 2; k++) {
    record_name_unref(b0[k].name);
    record_name_unref(b1[k].name);
  }
}
END_TEST

START_TEST(no_frames) {
  json_t *doc = parse(trace_json(NULL, 0, 16667, NULL, NULL));
  json_t *x = events_where(doc, NULL, 0);
  ck_assert_int_eq(json_array_size(x), 0);
  ck_assert_int_eq(json_array_size(json_object_get(doc, "traceEvents")), 7); /* metadata only */
  json_decref(x);
  json_decref(doc);
}
END_TEST

/* A frame whose raster outlasts the next vsync (the raster thread runs
 * while the UI thread builds the next frame): the interaction it ends must
 * still stop where the next interaction starts, so the track never overlaps
 * itself (issue 24, item 6). */
START_TEST(interactions_never_overlap_when_raster_outlasts_the_next_vsync) {
  enum { N = 6 };
  frame_t f[N];
  for (int i = 0; i < N; i++) {
    /* frame 2, the last of "open", rasters for 25 ms: past frames 3's vsync */
    f[i] = frame(i + 1, 1000000 + i * 16667, 4000, i == 2 ? 25000 : 3000);
    f[i].interaction_id = strdup(i < 3 ? "open" : "scroll");
    f[i].linked_by = strdup("agent");
  }
  json_t *doc = parse(trace_json(f, N, 16667, "telescope s1", NULL));
  json_t *ia = events_where(doc, "interaction", 3);
  ck_assert_int_eq(json_array_size(ia), 2);
  const json_t *a = named(ia, "open"), *b = named(ia, "scroll");
  ck_assert_ptr_nonnull(a);
  ck_assert_ptr_nonnull(b);
  ck_assert_msg(ts(a) + dur(a) <= ts(b), "\"open\" ends at %lld, after \"scroll\" starts at %lld",
                (long long)(ts(a) + dur(a)), (long long)ts(b));
  ck_assert_int_eq(ts(b), 3 * 16667); /* the trace's origin is the first vsync */
  ck_assert_int_gt(dur(a), 2 * 16667); /* it still covers its own frames' starts */
  /* a frame janky on raster alone is a janky frame of its interaction */
  ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(a, "args"), "jankFrames")), 1);
  ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(b, "args"), "jankFrames")), 0);
  json_decref(ia);
  json_decref(doc);
  for (int k = 0; k < N; k++) record_frame_close(&f[k]);
}
END_TEST

int main(void) {
  Suite *s = suite_create("trace");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, one_frame_nesting_by_hand);
  tcase_add_test(tc, interactions_never_overlap_when_raster_outlasts_the_next_vsync);
  tcase_add_test(tc, session_round_trip);
  tcase_add_test(tc, timeline_slices_and_frame_causes);
  tcase_add_test(tc, no_frames);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
