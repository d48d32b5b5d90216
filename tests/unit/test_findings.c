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

static json_t *nxt(const summary_t *s, size_t i) {
  json_t *all = summary_next(s);
  ck_assert_ptr_nonnull(all);
  json_t *f = json_incref(json_array_get(all, i));
  json_decref(all);
  return f;
}

/* Frames with no blocks at all: no name is a cause; the build time itself is
 * (kind build: 30000 − 5000 beyond the calm frame, capped at the overrun
 * 13333). Advice is never a cause (issue 19): `next` says to switch
 * trackWidgets on (BUILD is the default phase) while it is off or unknown;
 * when widgets were tracked there is nothing to suggest. */
START_TEST(frames_without_blocks) {
  summary_t *s = summary_new(BUDGET, 0);
  add(s, 1, 5000, 1000, NULL, 0);
  add(s, 2, 30000, 1000, NULL, 0);
  ck_assert_uint_eq(nfindings(s), 1);
  json_t *b = fnd(s, 0);
  ck_assert_str_eq(S(b, "kind"), "build");
  ck_assert_int_eq(I(b, "explainedUs"), 13333);
  ck_assert_int_eq(I(b, "perOtherFrameUs"), 5000);
  json_decref(b);
  json_t *n = nxt(s, 0);
  ck_assert_str_eq(S(n, "kind"), "tracking");
  ck_assert_str_eq(S(n, "option"), "trackWidgets");
  json_decref(n);
  summary_set_tracking(s, 0, 0, 0);
  n = nxt(s, 0);
  ck_assert_str_eq(S(n, "option"), "trackWidgets");
  json_decref(n);
  summary_set_tracking(s, 1, 0, 0);
  ck_assert_ptr_null(nxt(s, 0)); /* an option already on is never suggested */
  ck_assert_uint_eq(nfindings(s), 1);
  summary_free(s);
}
END_TEST

/* `next` follows the ranking (issue 19): the phase that explains the most
 * jank, not the one with the most time beyond the calm frames. PAINT is 14 ms
 * over its calm mean in a frame 1.3 ms over budget (explains 1 333), LAYOUT
 * 8 ms over in a frame 13.3 ms over (explains 8 000): mean excess favours
 * PAINT (7 000 against 4 000), the jank explained LAYOUT. The BUILD hint
 * points at `next` only when `next` is about widgets. */
START_TEST(next_follows_the_jank_explained) {
  record_block_t calm[] = {{"BUILD", 2000, 2000, 1}, {"LAYOUT", 1000, 1000, 1},
                           {"PAINT", 1000, 1000, 1}};
  record_block_t a[] = {{"BUILD", 2000, 2000, 1}, {"LAYOUT", 1000, 1000, 1},
                        {"PAINT", 15000, 15000, 1}};
  record_block_t b[] = {{"BUILD", 2000, 2000, 1}, {"LAYOUT", 9000, 9000, 1},
                        {"PAINT", 1000, 1000, 1}};
  /* BUILD in frame 3: as calm, 3 000 beyond (a finding below LAYOUT), 18 000
   * beyond (capped at 13 333: the first cause). */
  static const int64_t build3[3] = {2000, 5000, 20000};
  static const char *const first[3] = {"LAYOUT", "LAYOUT", "BUILD"};
  static const char *const option[3] = {"trackLayouts", "trackLayouts", "trackWidgets"};
  for (int k = 0; k < 3; k++) {
    summary_t *s = summary_new(BUDGET, 0);
    b[0].micros = b[0].self_micros = build3[k];
    add(s, 1, 4000, 1000, calm, 3);
    add(s, 2, 18000, 1000, a, 3);
    add(s, 3, 30000, 1000, b, 3);
    json_t *f0 = fnd(s, 0), *n0 = nxt(s, 0);
    ck_assert_str_eq(S(f0, "name"), first[k]);
    ck_assert_str_eq(S(n0, "option"), option[k]);
    json_decref(f0);
    json_decref(n0);
    for (size_t i = 0; i < nfindings(s); i++) {
      json_t *f = fnd(s, i);
      if (!strcmp(S(f, "name"), "BUILD"))
        ck_assert_msg((strstr(S(f, "hint"), "see next") != NULL) == (k == 2),
                      "BUILD's hint points at next only when next is about widgets: %s",
                      S(f, "hint"));
      json_decref(f);
    }
    summary_free(s);
  }
}
END_TEST

/* Only phases in the janky frames: `next` names the option for the top phase
 * (LAYOUT → trackLayouts) and the first finding is the phase itself. With
 * layouts tracked, no advice, and the hint no longer says to track them. A
 * named block below the phases in any janky frame means tracking worked. */
START_TEST(tracking_finding_follows_the_top_phase) {
  summary_t *s = summary_new(BUDGET, 0);
  record_block_t calm[] = {{"BUILD", 2000, 2000, 1}, {"LAYOUT", 1000, 1000, 1}};
  record_block_t janky[] = {{"BUILD", 2000, 2000, 1}, {"LAYOUT", 15000, 15000, 1}};
  add(s, 1, 4000, 1000, calm, 2);
  add(s, 2, 18000, 1000, janky, 2);
  json_t *f0 = fnd(s, 0), *n0 = nxt(s, 0);
  ck_assert_str_eq(S(n0, "option"), "trackLayouts");
  ck_assert_str_eq(S(f0, "name"), "LAYOUT");
  ck_assert_ptr_null(strstr(S(f0, "hint"), "track"));
  json_decref(f0), json_decref(n0);
  summary_set_tracking(s, 0, 1, 0); /* layouts were on: nothing to switch on */
  ck_assert_ptr_null(nxt(s, 0));
  f0 = fnd(s, 0);
  ck_assert_str_eq(S(f0, "name"), "LAYOUT");
  ck_assert_ptr_null(strstr(S(f0, "hint"), "trackLayouts"));
  json_decref(f0);
  summary_free(s);

  s = summary_new(BUDGET, 0);
  record_block_t named[] = {{"LAYOUT", 15000, 14000, 1}, {"RenderFlex", 1000, 1000, 1}};
  add(s, 1, 4000, 1000, calm, 2);
  add(s, 2, 18000, 1000, named, 2);
  ck_assert_ptr_null(nxt(s, 0));
  f0 = fnd(s, 0);
  /* Build overrun 18000 − 16667 = 1333: LAYOUT explains min(14000 − 1000,
   * 1333) = 1333, RenderFlex min(1000, 1333) = 1000 — 75 % of LAYOUT's, not a
   * near tie (90 %): the phase stays first, the name second. */
  ck_assert_str_eq(S(f0, "name"), "LAYOUT");
  ck_assert_int_eq(I(f0, "explainedUs"), 1333);
  json_decref(f0);
  f0 = fnd(s, 1);
  ck_assert_str_eq(S(f0, "name"), "RenderFlex");
  ck_assert_int_eq(I(f0, "explainedUs"), 1000);
  json_decref(f0);
  summary_free(s);
}
END_TEST

/* Issue 19's acceptance: the ranking on hand-computed inputs.
 * Steady-heavy vs rare-slow: 20 janky frames of 30 ms build (overrun 13333
 * each, 266660 in all) among 80 calm frames of 10 ms.
 *  - Steady: 9000 µs in every calm frame and 22000 in each janky frame:
 *    excess 13000 per janky frame → explains 20 × 13000 = 260000 (98 %).
 *  - Rare: 60000 in 2 of the janky frames only, 0 elsewhere: 60000 beyond
 *    the calm frames' 0 in each, capped at the overrun 13333 → explains
 *    2 × 13333 = 26666 (10 %), though its worst frame is far slower.
 * The cause in 20 of 20 janky frames comes first; the one in 2 of 20 never
 * lifts above it. */
START_TEST(ranking_steady_heavy_above_rare_slow) {
  summary_t *s = summary_new(BUDGET, 0);
  record_block_t calm[] = {{"Steady", 9000, 9000, 1}};
  for (int i = 0; i < 80; i++) add(s, i + 1, 10000, 1000, calm, 1);
  for (int i = 0; i < 20; i++) {
    record_block_t j[] = {{"Steady", 22000, 22000, 1}, {"Rare", i < 2 ? 60000 : 0, i < 2 ? 60000 : 0, 1}};
    add(s, 100 + i, 30000, 1000, j, i < 2 ? 2 : 1);
  }
  json_t *f0 = fnd(s, 0), *f1 = fnd(s, 1);
  ck_assert_str_eq(S(f0, "name"), "Steady");
  ck_assert_int_eq(I(f0, "jankFrames"), 20);
  ck_assert_int_eq(I(f0, "ofJankFrames"), 20);
  ck_assert_int_eq(I(f0, "explainedUs"), 260000);
  ck_assert(json_real_value(json_object_get(f0, "explains")) == 0.98);
  ck_assert_str_eq(S(f1, "name"), "Rare");
  ck_assert_int_eq(I(f1, "jankFrames"), 2);
  ck_assert_int_eq(I(f1, "perJankFrameUs"), 6000); /* 120000 / 20 */
  ck_assert_int_eq(I(f1, "explainedUs"), 26666);
  ck_assert(json_real_value(json_object_get(f1, "explains")) == 0.1);
  json_decref(f0), json_decref(f1);
  json_t *j = summary_to_json(s, 0, 0, 0);
  ck_assert_int_eq(I(json_object_get(j, "jank"), "overUs"), 266660);
  json_decref(j);
  summary_free(s);
}
END_TEST

/* Rare-but-slow wins when it is the one that made the frames janky: a
 * widget costing 4 ms in every frame (calm and janky alike: excess 0) is no
 * cause; the one that costs 20 ms in the 1 janky frame explains all of its
 * 12333 µs overrun (build 29000). */
START_TEST(ranking_rare_slow_above_steady_everywhere) {
  summary_t *s = summary_new(BUDGET, 0);
  record_block_t calm[] = {{"Everywhere", 4000, 4000, 1}};
  for (int i = 0; i < 19; i++) add(s, i + 1, 9000, 1000, calm, 1);
  record_block_t j[] = {{"Everywhere", 4000, 4000, 1}, {"Slow", 20000, 20000, 1}};
  add(s, 20, 29000, 1000, j, 2);
  ck_assert_uint_eq(nfindings(s), 1);
  json_t *f0 = fnd(s, 0);
  ck_assert_str_eq(S(f0, "name"), "Slow");
  ck_assert_int_eq(I(f0, "explainedUs"), 12333);
  ck_assert(json_real_value(json_object_get(f0, "explains")) == 1.0);
  json_decref(f0);
  summary_free(s);
}
END_TEST

/* Ties: equal explained → name ascending; a specific cause within 10 % of a
 * phase goes first; 11 % behind stays behind. Build 40000 (overrun 23333)
 * in one janky frame, nothing elsewhere. */
START_TEST(ranking_ties_and_specificity) {
  summary_t *s = summary_new(BUDGET, 0);
  add(s, 1, 5000, 1000, NULL, 0);
  record_block_t j[] = {{"BUILD", 20000, 20000, 1}, {"Zeta", 9000, 9000, 1},
                        {"Alpha", 9000, 9000, 1}, {"Near", 18000, 18000, 1}};
  add(s, 2, 40000, 1000, j, 4);
  json_t *all = summary_findings(s, SUMMARY_FINDINGS);
  ck_assert_int_eq(json_array_size(all), 4);
  /* Near 18000 ≥ 0.9 × 20000: the widget goes ahead of the phase. */
  ck_assert_str_eq(S(json_array_get(all, 0), "name"), "Near");
  ck_assert_str_eq(S(json_array_get(all, 1), "name"), "BUILD");
  ck_assert_str_eq(S(json_array_get(all, 2), "name"), "Alpha"); /* 9000 each: by name */
  ck_assert_str_eq(S(json_array_get(all, 3), "name"), "Zeta");
  json_decref(all);
  summary_free(s);

  s = summary_new(BUDGET, 0);
  add(s, 1, 5000, 1000, NULL, 0);
  record_block_t k[] = {{"BUILD", 20000, 20000, 1}, {"Behind", 17800, 17800, 1}};
  add(s, 2, 40000, 1000, k, 2);
  json_t *f0 = fnd(s, 0); /* 17800 < 18000: not a near tie */
  ck_assert_str_eq(S(f0, "name"), "BUILD");
  json_decref(f0);
  summary_free(s);
}
END_TEST

/* Start-up frames (frame_t.startup) are counted in frames but are never
 * jank, a cause or a worst frame: a 1.7 s warm-up frame named "Framework
 * initialization" does not become cause 1. */
START_TEST(startup_frames_are_not_jank) {
  summary_t *s = summary_new(BUDGET, 0);
  record_block_t warm[] = {{"Framework initialization", 1700000, 1700000, 1}};
  frame_t f = mk(1, 1712000, 40000);
  f.blocks = warm;
  f.nblocks = 1;
  f.startup = 1;
  ck_assert_int_eq(summary_add_frame(s, &f), 0);
  for (int i = 0; i < 9; i++) add(s, i + 2, 5000, 3000, NULL, 0);
  add(s, 11, 5000, 20000, NULL, 0);
  ck_assert_uint_eq(summary_frames(s), 11);
  ck_assert_uint_eq(summary_jank_frames(s), 1);
  json_t *j = summary_to_json(s, 10, 5, 0);
  json_t *st = json_object_get(j, "startup"), *jank = json_object_get(j, "jank");
  ck_assert_int_eq(I(st, "frames"), 1);
  ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(st, "frameNumbers"), 0)), 1);
  ck_assert_int_eq(I(st, "buildUsMax"), 1712000);
  ck_assert(json_real_value(json_object_get(jank, "ratio")) == 0.1); /* 1 of 10 steady */
  ck_assert_str_eq(S(jank, "boundBy"), "raster");
  json_t *fs = json_object_get(j, "findings");
  ck_assert_int_eq(json_array_size(fs), 1);
  ck_assert_str_eq(S(json_array_get(fs, 0), "kind"), "raster");
  /* Only the janky frame is a worst frame. */
  ck_assert_int_eq(json_array_size(json_object_get(j, "worstFrames")), 1);
  ck_assert_int_eq(I(json_array_get(json_object_get(j, "worstFrames"), 0), "seq"), 11);
  json_decref(j);
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
   * W0006 explains the most (5597, below the overrun 73333) and W0002 is the
   * fifth (5197). */
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
  json_t *n = summary_next(summary_interaction(s, "a")); /* unknown: trackWidgets */
  ck_assert_int_eq(json_array_size(n), 1);
  json_decref(n);
  summary_set_tracking(s, 1, 1, 1);
  f.seq = 2, f.interaction_id = "b";
  summary_add_frame(s, &f);
  n = summary_next(summary_interaction(s, "a"));
  ck_assert_int_eq(json_array_size(n), 0);
  json_decref(n);
  n = summary_next(summary_interaction(s, "b"));
  ck_assert_int_eq(json_array_size(n), 0);
  json_decref(n);
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
  tcase_add_test(tc, ranking_steady_heavy_above_rare_slow);
  tcase_add_test(tc, ranking_rare_slow_above_steady_everywhere);
  tcase_add_test(tc, ranking_ties_and_specificity);
  tcase_add_test(tc, startup_frames_are_not_jank);
  tcase_add_test(tc, tracking_finding_follows_the_top_phase);
  tcase_add_test(tc, next_follows_the_jank_explained);
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
