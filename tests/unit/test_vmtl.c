/* vmtl: getVMTimeline replies read into the events telescope joins with
 * frames, and the join. Hand-built traces in the VM's own form (thread_name
 * metadata "io.flutter.1.ui (22531)", X events with dur, the engine's B/E
 * pairs, shader work tagged devtoolsTag "shaders"; docs/flutter-apis.md). */
#include <check.h>
#include <stdarg.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "vmtl.h"

#define UI 22531
#define RASTER 23811
#define WORKER 67239

typedef struct {
  vmtl_event_t ev[256];
  size_t n;
} got_t;

static void sink(void *arg, const vmtl_event_t *ev) {
  got_t *g = arg;
  ck_assert_uint_lt(g->n, 256);
  g->ev[g->n++] = *ev;
}

static json_t *meta(int tid, const char *name) {
  return json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name", "thread_name", "ph", "M", "pid", 1,
                   "tid", tid, "args", "name", name);
}

static json_t *x(int tid, const char *cat, const char *name, int64_t ts, int64_t dur) {
  return json_pack("{s:s, s:s, s:s, s:i, s:i, s:I, s:I, s:{}}", "name", name, "cat", cat, "ph", "X",
                   "pid", 1, "tid", tid, "ts", (json_int_t)ts, "dur", (json_int_t)dur, "args");
}

static json_t *be(int tid, const char *ph, const char *name, int64_t ts, int shader) {
  json_t *e = json_pack("{s:s, s:s, s:s, s:i, s:i, s:I}", "name", name, "cat", "Embedder", "ph", ph,
                        "pid", 1, "tid", tid, "ts", (json_int_t)ts);
  json_object_set_new(e, "args", shader ? json_pack("{s:s}", "devtoolsTag", "shaders") : json_object());
  return e;
}

/* A Timeline reply of the given events (stolen), NULL-terminated. */
static json_t *timeline(json_t *first, ...) {
  json_t *a = json_array();
  va_list ap;
  va_start(ap, first);
  for (json_t *e = first; e; e = va_arg(ap, json_t *)) json_array_append_new(a, e);
  va_end(ap);
  return json_pack("{s:s, s:o, s:I, s:I}", "type", "Timeline", "traceEvents", a, "timeOriginMicros",
                   (json_int_t)1000, "timeExtentMicros", (json_int_t)100000);
}

static vmtl_pull_stats_t parse(vmtl_parser_t *p, json_t *reply, got_t *g) {
  vmtl_pull_stats_t st;
  char err[128];
  ck_assert_int_eq(vmtl_parse(p, reply, sink, g, &st, err, sizeof err), 0);
  json_decref(reply);
  return st;
}

START_TEST(threads_are_named_and_only_causes_kept) {
  vmtl_parser_t *p = vmtl_parser_new();
  got_t g = {0};
  vmtl_pull_stats_t st = parse(p, timeline(
      meta(UI, "io.flutter.1.ui (22531)"), meta(RASTER, "io.flutter.1.raster (23811)"),
      meta(WORKER, "DartWorker (67239)"),
      x(UI, "GC", "CollectNewGeneration", 10000, 4000),       /* a pause of the UI thread */
      x(WORKER, "GC", "ConcurrentMark", 10000, 9000),         /* a helper: no pause */
      x(UI, "Dart", "Animator::BeginFrame", 9000, 8000),      /* not a cause */
      be(RASTER, "B", "Rasterizer::DoDraw", 20000, 0), be(RASTER, "B", "SkSL compile", 21000, 1),
      be(RASTER, "E", "SkSL compile", 22500, 0), be(RASTER, "E", "Rasterizer::DoDraw", 23000, 0),
      be(RASTER, "B", "short", 24000, 0), be(RASTER, "E", "short", 24300, 0), NULL), &g);
  ck_assert_uint_eq(st.trace_events, 12);
  ck_assert_int_eq(st.origin_us, 1000);
  ck_assert_int_eq(st.newest_ts_us, 24300);
  ck_assert_uint_eq(g.n, 4);
  ck_assert_uint_eq(st.kept, 4);
  ck_assert_int_eq(g.ev[0].kind, VMTL_GC);
  ck_assert_int_eq(g.ev[0].thread, VMTL_THREAD_UI);
  ck_assert_int_eq(g.ev[1].kind, VMTL_GC);
  ck_assert_int_eq(g.ev[1].thread, VMTL_THREAD_OTHER);
  /* E closes the innermost B of its name: the shader first, then the draw */
  ck_assert_int_eq(g.ev[2].kind, VMTL_SHADER);
  ck_assert_int_eq(g.ev[2].ts_us, 21000);
  ck_assert_int_eq(g.ev[2].dur_us, 1500);
  ck_assert_str_eq(g.ev[2].name, "SkSL compile");
  ck_assert_int_eq(g.ev[3].kind, VMTL_RASTER);
  ck_assert_int_eq(g.ev[3].dur_us, 3000);
  ck_assert_int_eq(g.ev[3].thread, VMTL_THREAD_RASTER);
  vmtl_parser_free(p);
}
END_TEST

START_TEST(overlapping_pulls_keep_each_event_once) {
  vmtl_parser_t *p = vmtl_parser_new();
  got_t g = {0};
  parse(p, timeline(meta(UI, "io.flutter.1.ui"), meta(RASTER, "io.flutter.1.gpu"),
                    x(UI, "GC", "Scavenge", 1000, 500), be(RASTER, "B", "compile", 1500, 1), NULL),
        &g);
  ck_assert_uint_eq(g.n, 1); /* the B waits for its E */
  /* the next pull reaches back: the scavenge and the B again, then the E */
  vmtl_pull_stats_t st = parse(p, timeline(x(UI, "GC", "Scavenge", 1000, 500),
                                           be(RASTER, "B", "compile", 1500, 1),
                                           be(RASTER, "E", "compile", 2500, 0),
                                           x(UI, "GC", "Scavenge", 3000, 200), NULL), &g);
  ck_assert_uint_eq(st.repeats, 2);
  ck_assert_uint_eq(g.n, 3);
  ck_assert_int_eq(g.ev[1].kind, VMTL_SHADER); /* named by an earlier pull: .gpu is raster */
  ck_assert_int_eq(g.ev[1].thread, VMTL_THREAD_RASTER);
  ck_assert_int_eq(g.ev[1].dur_us, 1000);
  ck_assert_int_eq(g.ev[2].ts_us, 3000);
  vmtl_parser_free(p);
}
END_TEST

START_TEST(malformed_entries_are_counted_and_skipped) {
  vmtl_parser_t *p = vmtl_parser_new();
  got_t g = {0};
  json_t *r = timeline(x(UI, "GC", "ok", 100, 10), NULL);
  json_t *ev = json_object_get(r, "traceEvents");
  json_array_append_new(ev, json_string("not an object"));
  json_array_append_new(ev, json_pack("{s:s, s:s, s:i, s:i, s:i}", "name", "n", "ph", "X", "tid", 1,
                                      "ts", -5, "dur", 1));                        /* negative ts */
  json_array_append_new(ev, json_pack("{s:s, s:s, s:s, s:i, s:i}", "name", "n", "ph", "X", "tid",
                                      "1", "ts", 5, "dur", 1));                     /* tid a string */
  json_array_append_new(ev, json_pack("{s:s, s:s, s:s, s:i, s:i}", "name", "n", "cat", "GC", "ph",
                                      "X", "tid", 1, "ts", 5));                     /* no dur */
  json_array_append_new(ev, json_pack("{s:s, s:s, s:i, s:I}", "name", "n", "ph", "E", "tid", 9, "ts",
                                      (json_int_t)7)); /* E without B */
  vmtl_pull_stats_t st = parse(p, r, &g);
  ck_assert_uint_eq(g.n, 1);
  ck_assert_int_eq(g.ev[0].thread, VMTL_THREAD_UNKNOWN); /* no names: kept, thread unknown */
  ck_assert_uint_eq(st.malformed, 4);
  ck_assert_uint_eq(st.unmatched, 1);
  char err[128];
  json_t *bad = json_pack("{s:s}", "type", "Success");
  ck_assert_int_eq(vmtl_parse(p, bad, sink, &g, &st, err, sizeof err), -1);
  ck_assert(strstr(err, "Timeline") != NULL);
  json_decref(bad);
  vmtl_parser_free(p);
}
END_TEST

static vmtl_event_t ev(vmtl_kind_t kind, vmtl_thread_t thread, int64_t ts, int64_t dur) {
  vmtl_event_t e;
  memset(&e, 0, sizeof e);
  e.kind = kind;
  e.thread = thread;
  e.ts_us = ts;
  e.dur_us = dur;
  strcpy(e.name, "e");
  return e;
}

START_TEST(join_counts_overlap_once_per_window) {
  /* two frames: build [1000, 6000) raster [6000, 9000); then [17000, 22000) [22000, 25000) */
  vmtl_window_t w[2] = {{1000, 6000, 6000, 9000}, {17000, 22000, 22000, 25000}};
  vmtl_event_t e[] = {
      ev(VMTL_GC, VMTL_THREAD_UI, 500, 1000),         /* straddles the first build's start: 500 */
      ev(VMTL_GC, VMTL_THREAD_UI, 5500, 12000),       /* its end (500) and the next build's start (500) */
      ev(VMTL_GC, VMTL_THREAD_UI, 18000, 3000),       /* nested pair: counted once */
      ev(VMTL_GC, VMTL_THREAD_UNKNOWN, 19000, 1000),
      ev(VMTL_GC, VMTL_THREAD_RASTER, 2000, 3000),    /* another thread: no pause of the build */
      ev(VMTL_SHADER, VMTL_THREAD_RASTER, 0, 100000), /* covers every raster window */
  };
  vmtl_causes_t c[2];
  ck_assert_int_eq(vmtl_join(e, 6, w, 2, 0, c), 0);
  ck_assert_int_eq(c[0].gc_us, 1000);
  ck_assert_uint_eq(c[0].gc_n, 2);
  ck_assert_int_eq(c[1].gc_us, 500 + 3000);
  ck_assert_int_eq(c[0].shader_us, 3000);
  ck_assert_int_eq(c[1].shader_us, 3000);
  /* a clock 16 ms off moves the pause of frame 2 into frame 1's build */
  vmtl_event_t late = ev(VMTL_GC, VMTL_THREAD_UI, 18000, 2000);
  ck_assert_int_eq(vmtl_join(&late, 1, w, 2, -16000, c), 0);
  ck_assert_int_eq(c[0].gc_us, 2000);
  ck_assert_int_eq(c[1].gc_us, 0);
  ck_assert_int_eq(vmtl_join(&late, 1, w, 2, +3000, c), 0);
  ck_assert_int_eq(c[1].gc_us, 1000); /* [21000, 23000) ∩ [17000, 22000) */
  /* the longest raster work of a window, by its overlap */
  vmtl_event_t r[] = {ev(VMTL_RASTER, VMTL_THREAD_RASTER, 5000, 2500), ev(VMTL_RASTER, VMTL_THREAD_RASTER, 7000, 1800)};
  strcpy(r[1].name, "saveLayer");
  ck_assert_int_eq(vmtl_join(r, 2, w, 2, 0, c), 0);
  ck_assert_int_eq(c[0].raster_top_us, 1800);
  ck_assert_str_eq(c[0].raster_top, "saveLayer");
  ck_assert_int_eq(c[1].raster_top_us, 0);
}
END_TEST

START_TEST(long_names_are_cut_at_a_character) {
  vmtl_parser_t *p = vmtl_parser_new();
  got_t g = {0};
  char name[200] = "";
  for (int i = 0; i < 40; i++) strcat(name, "é"); /* 2 bytes each */
  parse(p, timeline(x(UI, "GC", name, 10, 10), NULL), &g);
  ck_assert_uint_eq(g.n, 1);
  ck_assert_uint_lt(strlen(g.ev[0].name), VMTL_NAME_MAX);
  ck_assert_uint_eq(strlen(g.ev[0].name) % 2, 0);
  vmtl_parser_free(p);
}
END_TEST

int main(void) {
  Suite *s = suite_create("vmtl");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, threads_are_named_and_only_causes_kept);
  tcase_add_test(tc, overlapping_pulls_keep_each_event_once);
  tcase_add_test(tc, malformed_entries_are_counted_and_skipped);
  tcase_add_test(tc, join_counts_overlap_once_per_window);
  tcase_add_test(tc, long_names_are_cut_at_a_character);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
