/* causes: the VM timeline's GC pauses and shader compilation joined to a
 * session's frames become findings ranked with the blocks' (docs/tool.md
 * "Findings"), and the worst frames say how much of each they held. */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "causes.h"
#include "summary.h"

#define BUDGET 16667
#define N 40

static frame_t F[N];
static const frame_t *P[N];

/* Frame i: vsync at i * 16667 µs, build starts 500 µs later. Every fifth
 * frame misses the budget: on build (build 30 ms) or, with raster_janky, on
 * raster (raster 30 ms). */
static void frames(int raster_janky) {
  memset(F, 0, sizeof F);
  for (int i = 0; i < N; i++) {
    frame_t *f = &F[i];
    int janky = i % 5 == 2;
    f->seq = i + 1;
    f->frame_number = i + 1;
    f->vsync_start_us = 1000000 + (int64_t)i * 16667;
    f->vsync_overhead_us = 500;
    f->build_us = janky && !raster_janky ? 30000 : 6000;
    f->raster_us = janky && raster_janky ? 30000 : 4000;
    f->total_span_us = f->vsync_overhead_us + f->build_us + f->raster_us;
    f->at_us = f->vsync_start_us + f->total_span_us;
    f->layer_cache_count = f->picture_cache_count = -1;
    P[i] = f;
  }
}

static json_t *summary_of(int frame_events) {
  summary_t *s = summary_new(BUDGET, 0);
  for (int i = 0; i < N; i++) ck_assert_int_eq(summary_add_frame(s, &F[i]), 0);
  summary_set_tracking(s, frame_events ? 0 : 1, 0, 0);
  json_t *j = summary_to_json(s, 10, 5, 5);
  summary_free(s);
  return j;
}

static vmtl_event_t ev(vmtl_kind_t kind, vmtl_thread_t thread, int64_t ts, int64_t dur) {
  vmtl_event_t e;
  memset(&e, 0, sizeof e);
  e.kind = kind;
  e.thread = thread;
  e.ts_us = ts;
  e.dur_us = dur;
  strcpy(e.name, kind == VMTL_GC ? "CollectNewGeneration" : "shader");
  return e;
}

static const json_t *finding(const json_t *sum, size_t i) {
  return json_array_get(json_object_get(sum, "findings"), i);
}

static const char *kind_of(const json_t *f) { return json_string_value(json_object_get(f, "kind")); }

static const json_t *finding_of_kind(const json_t *sum, const char *kind) {
  size_t i;
  const json_t *f;
  json_array_foreach(json_object_get(sum, "findings"), i, f) if (!strcmp(kind_of(f), kind)) return f;
  return NULL;
}

START_TEST(gc_in_the_build_of_janky_frames_comes_first) {
  frames(0);
  vmtl_event_t e[N];
  size_t n = 0;
  for (int i = 0; i < N; i++) {
    vmtl_window_t w = causes_window(&F[i]);
    if (i % 5 == 2) /* a 15 ms scavenge inside every janky frame's build */
      e[n++] = ev(VMTL_GC, VMTL_THREAD_UI, w.build_start_us + 500, 15000);
    else if (i % 5 == 4) /* a short one elsewhere: noise */
      e[n++] = ev(VMTL_GC, VMTL_THREAD_UI, w.build_start_us + 100, 300);
  }
  /* GC on a helper thread is no pause of the UI thread */
  e[n++] = ev(VMTL_GC, VMTL_THREAD_OTHER, causes_window(&F[7]).build_start_us, 25000);
  json_t *sum = summary_of(0);
  causes_input_t in = {0, e, n, 0};
  ck_assert_int_eq(causes_apply(sum, P, N, BUDGET, &in), 0);
  const json_t *f = finding(sum, 0);
  ck_assert_str_eq(kind_of(f), "gc");
  ck_assert_str_eq(json_string_value(json_object_get(f, "thread")), "ui");
  ck_assert_int_eq(json_integer_value(json_object_get(f, "jankFrames")), N / 5);
  ck_assert_int_eq(json_integer_value(json_object_get(f, "ofJankFrames")), N / 5);
  ck_assert_int_eq(json_integer_value(json_object_get(f, "perJankFrameUs")), 15000);
  /* the others: a 300 µs pause in half of them (never the helper's 25 ms) */
  ck_assert_int_lt(json_integer_value(json_object_get(f, "perOtherFrameUs")), 300);
  /* The build finding keeps the build time beyond the GC (never beyond
   * shader compilation, of which there is none): per janky frame 30 000
   * − 15 000 − 6 000 otherwise = 9 000 µs of its 13 333 over the budget. */
  const json_t *build = finding_of_kind(sum, "build");
  ck_assert_ptr_nonnull(build);
  ck_assert_int_eq(json_integer_value(json_object_get(build, "explainedUs")), N / 5 * 9000);
  /* every worst frame is a janky one and says how long its GC was */
  size_t i;
  json_t *w;
  json_array_foreach(json_object_get(sum, "worstFrames"), i, w)
    ck_assert_int_eq(json_integer_value(json_object_get(w, "gcUs")), 15000);
  json_decref(sum);
}
END_TEST

START_TEST(shader_compilation_outranks_the_raster_finding) {
  frames(1);
  vmtl_event_t e[N];
  size_t n = 0;
  for (int i = 0; i < N; i++)
    if (i % 5 == 2) {
      vmtl_window_t w = causes_window(&F[i]);
      /* straddles the raster window's end: only the 18 ms inside count */
      e[n++] = ev(VMTL_SHADER, VMTL_THREAD_RASTER, w.raster_end_us - 18000, 25000);
    }
  json_t *sum = summary_of(0);
  ck_assert_str_eq(kind_of(finding(sum, 0)), "raster");
  causes_input_t in = {0, e, n, 0};
  ck_assert_int_eq(causes_apply(sum, P, N, BUDGET, &in), 0);
  ck_assert_str_eq(kind_of(finding(sum, 0)), "shader");
  ck_assert_int_eq(json_integer_value(json_object_get(finding(sum, 0), "perJankFrameUs")), 18000);
  ck_assert_str_eq(kind_of(finding(sum, 1)), "raster");
  /* The raster finding keeps the raster time beyond the shader compilation
   * (never beyond the GC, of which there is none): per janky frame 30 000
   * − 18 000 − 4 000 otherwise = 8 000 µs of its 13 333 over the budget. */
  ck_assert_int_eq(json_integer_value(json_object_get(finding(sum, 1), "explainedUs")),
                   N / 5 * 8000);
  json_t *w0 = json_array_get(json_object_get(sum, "worstFrames"), 0);
  ck_assert_int_eq(json_integer_value(json_object_get(w0, "shaderUs")), 18000);
  ck_assert_ptr_null(json_object_get(w0, "gcUs"));
  json_decref(sum);
}
END_TEST

/* perOtherFrameUs is the mean over the frames that missed neither budget: a
 * frame janky on raster alone is a janky frame for the shader cause too, so
 * its compile time never counts as "otherwise" (issue 24, item 1). */
START_TEST(shader_time_otherwise_is_over_the_frames_that_were_not_janky) {
  frames(1);
  vmtl_event_t e[N];
  size_t n = 0;
  for (int i = 0; i < N; i++) {
    vmtl_window_t w = causes_window(&F[i]);
    if (i % 5 == 2) /* 15 ms inside the raster of each of the 8 raster-janky frames, over
                       * before the next frame's raster begins */
      e[n++] = ev(VMTL_SHADER, VMTL_THREAD_RASTER, w.raster_start_us + 500, 15000);
    else if (i % 5 == 4) /* 400 µs in 8 of the 32 frames that kept the budget */
      e[n++] = ev(VMTL_SHADER, VMTL_THREAD_RASTER, w.raster_start_us + 100, 400);
  }
  json_t *sum = summary_of(0);
  causes_input_t in = {0, e, n, 0};
  ck_assert_int_eq(causes_apply(sum, P, N, BUDGET, &in), 0);
  const json_t *f = finding_of_kind(sum, "shader");
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(json_integer_value(json_object_get(f, "jankFrames")), N / 5);
  ck_assert_int_eq(json_integer_value(json_object_get(f, "perJankFrameUs")), 15000);
  ck_assert_int_eq(json_integer_value(json_object_get(f, "perOtherFrameUs")), 8 * 400 / 32);
  json_decref(sum);
}
END_TEST

START_TEST(a_clock_offset_moves_events_out_of_the_windows) {
  frames(0);
  vmtl_event_t e[N];
  size_t n = 0;
  for (int i = 0; i < N; i++)
    if (i % 5 == 2) e[n++] = ev(VMTL_GC, VMTL_THREAD_UI, causes_window(&F[i]).build_start_us, 15000);
  json_t *sum = summary_of(0);
  /* the same events on a clock 40 ms behind: they land in later frames that
   * were not janky, and the GC finding goes */
  causes_input_t in = {0, e, n, 40000};
  ck_assert_int_eq(causes_apply(sum, P, N, BUDGET, &in), 0);
  size_t i;
  json_t *f;
  json_array_foreach(json_object_get(sum, "findings"), i, f) ck_assert_str_ne(kind_of(f), "gc");
  json_decref(sum);
  /* and back on the frames' clock it is there */
  sum = summary_of(0);
  in.offset_us = 0;
  ck_assert_int_eq(causes_apply(sum, P, N, BUDGET, &in), 0);
  ck_assert_str_eq(kind_of(finding(sum, 0)), "gc");
  json_decref(sum);
}
END_TEST

START_TEST(no_events_no_timeline_findings) {
  frames(0);
  vmtl_event_t e[1];
  size_t n = 0;
  json_t *sum = summary_of(0);
  causes_input_t in = {0, e, n, 0};
  ck_assert_int_eq(causes_apply(sum, P, N, BUDGET, &in), 0);
  size_t i;
  json_t *f;
  json_array_foreach(json_object_get(sum, "findings"), i, f) ck_assert_str_ne(kind_of(f), "gc");
  json_decref(sum);
}
END_TEST

/* Without the watcher no track* option names anything: the advice in next
 * is the watcher, and advice is never among the findings. */
START_TEST(without_the_watcher_the_finding_says_what_it_would_add) {
  frames(0);
  json_t *sum = summary_of(1);
  const json_t *n0 = json_array_get(json_object_get(sum, "next"), 0);
  ck_assert_str_eq(kind_of(n0), "tracking");
  causes_input_t in = {1, NULL, 0, 0};
  ck_assert_int_eq(causes_apply(sum, P, N, BUDGET, &in), 0);
  n0 = json_array_get(json_object_get(sum, "next"), 0);
  ck_assert_str_eq(kind_of(n0), "watcher");
  ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(n0, "why")), "watcher"));
  size_t i;
  json_t *f;
  json_array_foreach(json_object_get(sum, "findings"), i, f) {
    ck_assert_str_ne(kind_of(f), "tracking");
    ck_assert_str_ne(kind_of(f), "watcher");
  }
  json_decref(sum);
}
END_TEST

START_TEST(windows_follow_frame_timing) {
  frame_t f;
  memset(&f, 0, sizeof f);
  f.vsync_start_us = 1000;
  f.vsync_overhead_us = 200;
  f.build_us = 5000;
  f.raster_us = 3000;
  f.total_span_us = 9000; /* a 800 µs hand-over between the threads */
  vmtl_window_t w = causes_window(&f);
  ck_assert_int_eq(w.build_start_us, 1200);
  ck_assert_int_eq(w.build_end_us, 6200);
  ck_assert_int_eq(w.raster_start_us, 7000);
  ck_assert_int_eq(w.raster_end_us, 10000);
}
END_TEST

int main(void) {
  Suite *s = suite_create("causes");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, gc_in_the_build_of_janky_frames_comes_first);
  tcase_add_test(tc, shader_compilation_outranks_the_raster_finding);
  tcase_add_test(tc, shader_time_otherwise_is_over_the_frames_that_were_not_janky);
  tcase_add_test(tc, a_clock_offset_moves_events_out_of_the_windows);
  tcase_add_test(tc, no_events_no_timeline_findings);
  tcase_add_test(tc, without_the_watcher_the_finding_says_what_it_would_add);
  tcase_add_test(tc, windows_follow_frame_timing);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
