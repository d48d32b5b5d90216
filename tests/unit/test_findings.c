/* findings: the ranking of jank causes on hand-computed inputs, fed through
 * summary_add_frame as the session feeds it (docs/tool.md "Findings"), and
 * the warnings. Every expected number below is worked out in its comment. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"
#include "summary.h"

#define BUDGET 16667 /* 60 Hz; the significance floor is 16667 / 20 = 833 µs */

static frame_t mk(int64_t seq, int64_t build, int64_t raster) {
  frame_t f;
  memset(&f, 0, sizeof f);
  f.seq = seq;
  f.frame_number = seq;
  f.build_us = build;
  f.raster_us = raster;
  f.total_span_us = build + raster;
  f.layer_cache_count = f.picture_cache_count = -1;
  return f;
}

static void add(summary_t *s, int64_t seq, int64_t build, int64_t raster, record_block_t *b,
                size_t n) {
  frame_t f = mk(seq, build, raster);
  f.blocks = b;
  f.nblocks = n;
  ck_assert_int_eq(summary_add_frame(s, &f), 0);
}

static json_t *fnd(const summary_t *s, size_t i) {
  json_t *all = summary_findings(s, SUMMARY_FINDINGS);
  ck_assert_ptr_nonnull(all);
  json_t *f = json_incref(json_array_get(all, i));
  json_decref(all);
  return f; /* NULL past the end */
}
static size_t nfindings(const summary_t *s) {
  json_t *all = summary_findings(s, SUMMARY_FINDINGS);
  size_t n = json_array_size(all);
  json_decref(all);
  return n;
}
#define S(f, k) json_string_value(json_object_get(f, k))
#define I(f, k) json_integer_value(json_object_get(f, k))

START_TEST(classify_phases_render_objects_widgets) {
  static const char *const phase[] = {"BUILD",
                                      "LAYOUT",
                                      "LAYOUT (root)",
                                      "PAINT (root)",
                                      "COMPOSITING",
                                      "FINALIZE TREE",
                                      "UPDATING COMPOSITING BITS (root)",
                                      "POST_FRAME",
                                      "SEMANTICS",
                                      "Semantics.updateChildren"};
  for (size_t i = 0; i < sizeof phase / sizeof *phase; i++)
    ck_assert_msg(findings_classify(phase[i]) == FINDING_PHASE, "%s", phase[i]);
  ck_assert_int_eq(findings_classify("RenderFlex"), FINDING_RENDER_OBJECT);
  ck_assert_int_eq(findings_classify("RenderFlex intrinsics"), FINDING_RENDER_OBJECT);
  /* Near misses are user names, not phases. */
  ck_assert_int_eq(findings_classify("BUILDER"), FINDING_WIDGET);
  ck_assert_int_eq(findings_classify("LAYOUT (root) "), FINDING_WIDGET);
  ck_assert_int_eq(findings_classify("Build"), FINDING_WIDGET);
  ck_assert_int_eq(findings_classify("ProductCard"), FINDING_WIDGET);
  ck_assert_int_eq(findings_classify(" (root)"), FINDING_WIDGET);
  ck_assert_str_eq(findings_kind_name(FINDING_RENDER_OBJECT), "render_object");
}
END_TEST

/* Issue 13's case: ProductCard 4 ms of self time in each of 20 frames,
 * SlowWidget 20 ms in the 20th only, which alone is janky (build 29 ms).
 * Over all frames ProductCard has 80 ms and SlowWidget 20 ms, so topBlocks
 * puts ProductCard first; the findings compare the janky frame with the 19
 * others: SlowWidget 20000 vs 0 (excess 20000), ProductCard 4000 vs 4000
 * (excess 0, not a cause), BUILD 1000 vs 1000 (not a cause). */
START_TEST(rare_slow_beats_steady_heavy) {
  summary_t *s = summary_new(BUDGET, 0);
  for (int i = 1; i <= 20; i++) {
    record_block_t b[] = {
        {"ProductCard", 6000, 4000, 4}, {"SlowWidget", 20000, 20000, 1}, {"BUILD", 31000, 1000, 1}};
    if (i < 20)
      add(s, i, 9000, 3000, (record_block_t[]){b[0], b[2]}, 2);
    else
      add(s, i, 29000, 3000, b, 3);
  }
  json_t *j = summary_to_json(s, 10, 5, 0);
  ck_assert_str_eq(S(json_array_get(json_object_get(j, "topBlocks"), 0), "name"), "ProductCard");
  json_t *jank = json_object_get(j, "jank");
  ck_assert_int_eq(I(jank, "buildMissed"), 1);
  ck_assert_int_eq(I(jank, "rasterMissed"), 0);
  ck_assert_str_eq(S(jank, "boundBy"), "build");
  json_t *fs = json_object_get(j, "findings");
  ck_assert_int_eq(json_array_size(fs), 1);
  json_t *f = json_array_get(fs, 0);
  ck_assert_str_eq(S(f, "kind"), "widget");
  ck_assert_str_eq(S(f, "name"), "SlowWidget");
  ck_assert_str_eq(S(f, "thread"), "ui");
  ck_assert_int_eq(I(f, "jankFrames"), 1);
  ck_assert_int_eq(I(f, "ofJankFrames"), 1);
  ck_assert_int_eq(I(f, "perJankFrameUs"), 20000);
  ck_assert_int_eq(I(f, "perOtherFrameUs"), 0);
  ck_assert_ptr_nonnull(strstr(S(f, "hint"), "build()"));
  json_decref(j);
  summary_free(s);
}
END_TEST

/* Equal excess → name ascending; a widget with a small (but significant)
 * excess ranks above a phase with a large one, since the phase's time is not
 * something to change in itself. Two janky frames (build 20000) and two
 * others: Zeta and Alpha 3000 in each janky frame (excess 3000 each),
 * LAYOUT 9000 vs 1000 (excess 8000), Mid 1500 in one janky frame only
 * (mean 750 < 833: noise). */
START_TEST(ties_by_name_and_widgets_above_phases) {
  summary_t *s = summary_new(BUDGET, 0);
  record_block_t calm[] = {{"LAYOUT", 1000, 1000, 1}};
  record_block_t j1[] = {{"Zeta", 3000, 3000, 1},
                         {"Alpha", 3000, 3000, 1},
                         {"LAYOUT", 9000, 9000, 1},
                         {"Mid", 1500, 1500, 1}};
  record_block_t j2[] = {
      {"Zeta", 3000, 3000, 1}, {"Alpha", 3000, 3000, 1}, {"LAYOUT", 9000, 9000, 1}};
  add(s, 1, 5000, 1000, calm, 1);
  add(s, 2, 20000, 1000, j1, 4);
  add(s, 3, 5000, 1000, calm, 1);
  add(s, 4, 20000, 1000, j2, 3);
  ck_assert_uint_eq(nfindings(s), 3);
  json_t *f0 = fnd(s, 0), *f1 = fnd(s, 1), *f2 = fnd(s, 2);
  ck_assert_str_eq(S(f0, "name"), "Alpha");
  ck_assert_str_eq(S(f1, "name"), "Zeta");
  ck_assert_int_eq(I(f1, "jankFrames"), 2);
  ck_assert_str_eq(S(f2, "name"), "LAYOUT");
  ck_assert_str_eq(S(f2, "kind"), "phase");
  ck_assert_int_eq(I(f2, "perJankFrameUs"), 9000);
  ck_assert_int_eq(I(f2, "perOtherFrameUs"), 1000);
  ck_assert_ptr_nonnull(strstr(S(f2, "hint"), "intrinsic"));
  json_decref(f0), json_decref(f1), json_decref(f2);
  summary_free(s);
}
END_TEST

/* The significance floor: excess 832 µs is noise, 833 is a cause. One janky
 * and one calm frame each time. */
START_TEST(significance_floor) {
  for (int64_t excess = 832; excess <= 833; excess++) {
    summary_t *s = summary_new(BUDGET, 0);
    record_block_t calm[] = {{"Card", 1000, 1000, 1}};
    record_block_t janky[] = {{"Card", 1000 + excess, 1000 + excess, 1}};
    add(s, 1, 1000, 1000, calm, 1);
    add(s, 2, 17000, 1000, janky, 1);
    ck_assert_uint_eq(nfindings(s), excess == 833 ? 1 : 0);
    summary_free(s);
  }
}
END_TEST

/* At exactly the budget a frame is not janky: it is one of the "other"
 * frames. Frame 1 build 16667 (Card 10000), frame 2 build 16668 (Card
 * 15000): Card 15000 per janky frame vs 10000 per other frame. A raster of
 * exactly 16667 misses nothing. */
START_TEST(budget_boundary) {
  summary_t *s = summary_new(BUDGET, 0);
  record_block_t a[] = {{"Card", 10000, 10000, 1}}, b[] = {{"Card", 15000, 15000, 1}};
  add(s, 1, 16667, 16667, a, 1);
  add(s, 2, 16668, 16667, b, 1);
  ck_assert_int_eq(summary_jank_frames(s), 1);
  json_t *f = fnd(s, 0);
  ck_assert_str_eq(S(f, "name"), "Card");
  ck_assert_int_eq(I(f, "ofJankFrames"), 1);
  ck_assert_int_eq(I(f, "perJankFrameUs"), 15000);
  ck_assert_int_eq(I(f, "perOtherFrameUs"), 10000);
  json_decref(f);
  ck_assert_uint_eq(nfindings(s), 1); /* no raster finding: raster never exceeded */
  summary_free(s);
}
END_TEST

/* Frames with no blocks at all: nothing names a cause. With tracking unknown
 * or off, the first finding says to switch trackWidgets on (BUILD is the
 * default phase); when widgets were tracked, there is nothing to say.
 * Build 30000 in the janky frame vs 5000 in the other. */
START_TEST(frames_without_blocks) {
  summary_t *s = summary_new(BUDGET, 0);
  add(s, 1, 5000, 1000, NULL, 0);
  add(s, 2, 30000, 1000, NULL, 0);
  ck_assert_uint_eq(nfindings(s), 1);
  json_t *f = fnd(s, 0);
  ck_assert_str_eq(S(f, "kind"), "tracking");
  ck_assert_str_eq(S(f, "name"), "trackWidgets");
  ck_assert_int_eq(I(f, "perJankFrameUs"), 30000);
  ck_assert_int_eq(I(f, "perOtherFrameUs"), 5000);
  ck_assert_ptr_nonnull(strstr(S(f, "hint"), "trackWidgets: true"));
  json_decref(f);
  summary_set_tracking(s, 0, 0, 0);
  ck_assert_uint_eq(nfindings(s), 1);
  summary_set_tracking(s, 1, 0, 0);
  ck_assert_uint_eq(nfindings(s), 0);
  summary_free(s);
}
END_TEST

/* Only phases in the janky frames: the tracking finding goes first and names
 * the option for the top phase (LAYOUT → trackLayouts), then the phase. A
 * named block below the phases in any janky frame means tracking worked. */
START_TEST(tracking_finding_follows_the_top_phase) {
  summary_t *s = summary_new(BUDGET, 0);
  record_block_t calm[] = {{"BUILD", 2000, 2000, 1}, {"LAYOUT", 1000, 1000, 1}};
  record_block_t janky[] = {{"BUILD", 2000, 2000, 1}, {"LAYOUT", 15000, 15000, 1}};
  add(s, 1, 4000, 1000, calm, 2);
  add(s, 2, 18000, 1000, janky, 2);
  json_t *f0 = fnd(s, 0), *f1 = fnd(s, 1);
  ck_assert_str_eq(S(f0, "kind"), "tracking");
  ck_assert_str_eq(S(f0, "name"), "trackLayouts");
  ck_assert_str_eq(S(f1, "name"), "LAYOUT");
  json_decref(f0), json_decref(f1);
  summary_set_tracking(s, 0, 1, 0); /* layouts were on: nothing to switch on */
  f0 = fnd(s, 0);
  ck_assert_str_eq(S(f0, "name"), "LAYOUT");
  json_decref(f0);
  summary_free(s);

  s = summary_new(BUDGET, 0);
  record_block_t named[] = {{"LAYOUT", 15000, 14000, 1}, {"RenderFlex", 1000, 1000, 1}};
  add(s, 1, 4000, 1000, calm, 2);
  add(s, 2, 18000, 1000, named, 2);
  f0 = fnd(s, 0);
  ck_assert_str_eq(S(f0, "kind"), "render_object"); /* excess 1000 ≥ 833, tier above LAYOUT */
  ck_assert_str_eq(S(f0, "name"), "RenderFlex");
  json_decref(f0);
  summary_free(s);
}
END_TEST

/* A frame that missed only on the raster thread is neither a janky frame for
 * the UI blocks nor an "other" one. Raster 30000 and 20000 in the two
 * raster-missed frames (mean 25000) vs 3000 in the calm one. */
START_TEST(raster_finding_and_bound_by) {
  summary_t *s = summary_new(BUDGET, 0);
  record_block_t b[] = {{"Card", 2000, 2000, 1}};
  record_block_t heavy[] = {{"Card", 9000, 9000, 1}};
  add(s, 1, 5000, 3000, b, 1);
  add(s, 2, 5000, 30000, heavy, 1); /* Card's 9000 here must not count as jank */
  add(s, 3, 5000, 20000, b, 1);
  json_t *j = summary_to_json(s, 0, 0, 0), *jank = json_object_get(j, "jank");
  ck_assert_int_eq(I(jank, "buildMissed"), 0);
  ck_assert_int_eq(I(jank, "rasterMissed"), 2);
  ck_assert_str_eq(S(jank, "boundBy"), "raster");
  json_t *fs = json_object_get(j, "findings");
  ck_assert_int_eq(json_array_size(fs), 1);
  json_t *f = json_array_get(fs, 0);
  ck_assert_str_eq(S(f, "kind"), "raster");
  ck_assert_str_eq(S(f, "thread"), "raster");
  ck_assert_int_eq(I(f, "jankFrames"), 2);
  ck_assert_int_eq(I(f, "perJankFrameUs"), 25000);
  ck_assert_int_eq(I(f, "perOtherFrameUs"), 3000);
  json_decref(j);
  /* Now one frame misses both: 2 raster, 1 build of 3 janky → raster 2·2 ≥ 3
   * and build 2·1 < 3: still raster. One more build miss makes it both. */
  add(s, 4, 20000, 20000, b, 1);
  ck_assert_str_eq(summary_bound_by(s), "raster");
  add(s, 5, 20000, 1000, b, 1);
  ck_assert_str_eq(summary_bound_by(s), "both");
  summary_free(s);
  s = summary_new(BUDGET, 0);
  ck_assert_str_eq(summary_bound_by(s), "none");
  summary_free(s);
}
END_TEST

/* At most five, and "(other)" (names past the cap) never is one. */
START_TEST(at_most_five_and_never_other) {
  summary_t *s = summary_new(BUDGET, 0);
  static char names[SUMMARY_MAX_BLOCK_NAMES + 8][16];
  record_block_t b[SUMMARY_MAX_BLOCK_NAMES + 8];
  size_t n = SUMMARY_MAX_BLOCK_NAMES + 8;
  for (size_t i = 0; i < n; i++) {
    snprintf(names[i], sizeof names[i], "W%04zu", i);
    b[i] = (record_block_t){names[i], 10, 10, 1};
  }
  /* Three calm frames (a record holds at most 256 blocks) fill the cap. */
  add(s, 1, 1000, 1000, b, 200);
  add(s, 2, 1000, 1000, b + 200, 256);
  add(s, 3, 1000, 1000, b + 456, SUMMARY_MAX_BLOCK_NAMES - 456);
  for (size_t i = 0; i < 7; i++) b[i].self_micros = 5000 + 100 * (int64_t)i;
  for (size_t i = SUMMARY_MAX_BLOCK_NAMES; i < n; i++) b[i].self_micros = 50000;
  record_block_t janky[15];
  memcpy(janky, b, 7 * sizeof *b);
  memcpy(janky + 7, b + SUMMARY_MAX_BLOCK_NAMES, 8 * sizeof *b); /* land in "(other)" */
  add(s, 4, 90000, 1000, janky, 15);
  json_t *all = summary_findings(s, SUMMARY_FINDINGS);
  ck_assert_int_eq(json_array_size(all), 5);
  /* W000i: 5000 + 100·i in the janky frame vs 10 / 3 = 3 per calm frame, so
   * W0006 has the largest excess (5597) and W0002 is the fifth (5197). */
  ck_assert_str_eq(S(json_array_get(all, 0), "name"), "W0006");
  ck_assert_str_eq(S(json_array_get(all, 4), "name"), "W0002");
  size_t i;
  json_t *f;
  json_array_foreach(all, i, f) ck_assert_str_ne(S(f, "name"), SUMMARY_OTHER);
  json_decref(all);
  summary_free(s);
}
END_TEST

/* Tracking set on the session reaches its interactions' summaries, those
 * made before the call and those made after. */
START_TEST(tracking_reaches_interactions) {
  summary_t *s = summary_new(BUDGET, 1);
  frame_t f = mk(1, 30000, 1000);
  f.interaction_id = "a", f.linked_by = "agent";
  summary_add_frame(s, &f);
  ck_assert_uint_eq(nfindings(summary_interaction(s, "a")), 1); /* unknown: trackWidgets */
  summary_set_tracking(s, 1, 1, 1);
  f.seq = 2, f.interaction_id = "b";
  summary_add_frame(s, &f);
  ck_assert_uint_eq(nfindings(summary_interaction(s, "a")), 0);
  ck_assert_uint_eq(nfindings(summary_interaction(s, "b")), 0);
  ck_assert_uint_eq(nfindings(s), 0);
  summary_free(s);
}
END_TEST

START_TEST(warnings) {
  json_t *w = findings_warnings_new("debug", 1, 0, 1);
  ck_assert_int_eq(json_array_size(w), 2);
  ck_assert_str_eq(json_string_value(json_array_get(w, 0)),
                   "debug build: timings are inflated; run `flutter run --profile` for real ones");
  ck_assert_str_eq(json_string_value(json_array_get(w, 1)),
                   "trackWidgets, trackPaints on: they add overhead to the frames measured");
  json_decref(w);
  w = findings_warnings_new("profile", 0, 1, 0);
  ck_assert_int_eq(json_array_size(w), 1);
  ck_assert_str_eq(json_string_value(json_array_get(w, 0)),
                   "trackLayouts on: it adds overhead to the frames measured");
  json_decref(w);
  w = findings_warnings_new(NULL, -1, 0, -1); /* unknown is not on */
  ck_assert_int_eq(json_array_size(w), 0);
  json_decref(w);
  w = findings_warnings_new("release", 1, 1, 1);
  ck_assert_int_eq(json_array_size(w), 1);
  ck_assert_ptr_nonnull(strstr(json_string_value(json_array_get(w, 0)),
                               "trackWidgets, trackLayouts, trackPaints on"));
  json_decref(w);
}
END_TEST

int main(void) {
  Suite *s = suite_create("findings");
  TCase *tc = tcase_create("ranking");
  tcase_add_test(tc, classify_phases_render_objects_widgets);
  tcase_add_test(tc, rare_slow_beats_steady_heavy);
  tcase_add_test(tc, ties_by_name_and_widgets_above_phases);
  tcase_add_test(tc, significance_floor);
  tcase_add_test(tc, budget_boundary);
  tcase_add_test(tc, frames_without_blocks);
  tcase_add_test(tc, tracking_finding_follows_the_top_phase);
  tcase_add_test(tc, raster_finding_and_bound_by);
  tcase_add_test(tc, at_most_five_and_never_other);
  tcase_add_test(tc, tracking_reaches_interactions);
  tcase_add_test(tc, warnings);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
