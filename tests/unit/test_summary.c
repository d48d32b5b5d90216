/* summary: the math against hand-computed expectations (DESIGN 4), the
 * bounded-memory promises, and the produced JSON against the embedded output
 * schema (a minimal walker, so drift between code and schema fails here). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose.h"
#include "record.h"
#include "schema_embed.h"
#include "summary.h"

/* ---- a minimal JSON-Schema walker: type, enum, const, required, properties,
 * additionalProperties, items, minimum, maximum, maxLength, maxItems. ---- */

static int type_ok(const json_t *v, const char *t) {
  if (!strcmp(t, "object")) return json_is_object(v);
  if (!strcmp(t, "array")) return json_is_array(v);
  if (!strcmp(t, "string")) return json_is_string(v);
  if (!strcmp(t, "integer")) return json_is_integer(v);
  if (!strcmp(t, "number")) return json_is_number(v);
  if (!strcmp(t, "boolean")) return json_is_boolean(v);
  if (!strcmp(t, "null")) return json_is_null(v);
  return 0;
}

static int check(const json_t *sch, const json_t *v, const char *path, char *why, size_t n) {
  json_t *t = json_object_get(sch, "type");
  if (t && !type_ok(v, json_string_value(t)))
    return snprintf(why, n, "%s: not %s", path, json_string_value(t)), 0;
  json_t *en = json_object_get(sch, "enum");
  if (en) {
    size_t i;
    json_t *e;
    int found = 0;
    json_array_foreach(en, i, e) found |= json_equal(e, (json_t *)v);
    if (!found) return snprintf(why, n, "%s: not in enum", path), 0;
  }
  json_t *mn = json_object_get(sch, "minimum"), *mx = json_object_get(sch, "maximum");
  if (mn && json_is_number(v) && json_number_value(v) < json_number_value(mn))
    return snprintf(why, n, "%s: below minimum", path), 0;
  if (mx && json_is_number(v) && json_number_value(v) > json_number_value(mx))
    return snprintf(why, n, "%s: above maximum", path), 0;
  json_t *ml = json_object_get(sch, "maxLength");
  if (ml && json_is_string(v) &&
      record_utf8_length(json_string_value(v)) > (size_t)json_integer_value(ml))
    return snprintf(why, n, "%s: too long", path), 0;
  json_t *mi = json_object_get(sch, "maxItems");
  if (mi && json_is_array(v) && json_array_size(v) > (size_t)json_integer_value(mi))
    return snprintf(why, n, "%s: too many items", path), 0;
  char sub[512];
  if (json_is_object(v)) {
    json_t *req = json_object_get(sch, "required"), *props = json_object_get(sch, "properties");
    json_t *ap = json_object_get(sch, "additionalProperties");
    size_t i;
    json_t *r;
    json_array_foreach(req, i, r) if (!json_object_get(v, json_string_value(r))) return snprintf(
        why, n, "%s.%s: required", path, json_string_value(r)),
        0;
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)v, k, x) {
      snprintf(sub, sizeof sub, "%s.%s", path, k);
      json_t *ps = props ? json_object_get(props, k) : NULL;
      if (!ps && json_is_false(ap)) return snprintf(why, n, "%s: not allowed", sub), 0;
      if (!ps && json_is_object(ap)) ps = ap;
      if (ps && !check(ps, x, sub, why, n)) return 0;
    }
  }
  if (json_is_array(v) && json_object_get(sch, "items")) {
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x) {
      snprintf(sub, sizeof sub, "%s[%zu]", path, i);
      if (!check(json_object_get(sch, "items"), x, sub, why, n)) return 0;
    }
  }
  return 1;
}

static json_t *output_schema_part(const char *name) {
  static json_t *root;
  if (!root) root = json_loads(schema_telescope_frames_output, 0, NULL);
  ck_assert_ptr_nonnull(root);
  json_t *p = json_object_get(json_object_get(root, "properties"), name);
  ck_assert_ptr_nonnull(p);
  return p;
}

static void assert_conforms(const char *part, const json_t *v) {
  char why[600] = "";
  int ok = check(output_schema_part(part), v, part, why, sizeof why);
  ck_assert_msg(ok, "schema: %s", why);
}

/* ---- helpers -------------------------------------------------------------- */

static frame_t mk(int64_t seq, int64_t build, int64_t raster, int64_t span, int64_t vsync) {
  frame_t f;
  memset(&f, 0, sizeof f);
  f.seq = seq;
  f.frame_number = seq + 1000;
  f.at_us = 1000000 + seq * 16667;
  f.vsync_start_us = f.at_us - 5000;
  f.build_us = build;
  f.raster_us = raster;
  f.total_span_us = span;
  f.vsync_overhead_us = vsync;
  f.layer_cache_count = f.picture_cache_count = -1;
  return f;
}

static json_t *stat(json_t *sum, const char *metric, const char *k) {
  json_t *v = json_object_get(json_object_get(sum, metric), k);
  ck_assert_msg(json_is_integer(v), "%s.%s missing", metric, k);
  return v;
}
#define STAT(sum, metric, k) json_integer_value(stat(sum, metric, k))

static json_t *full(const summary_t *s) {
  json_t *j = summary_to_json(s, SUMMARY_TOP_BLOCKS, SUMMARY_WORST_FRAMES, (size_t)-1);
  assert_conforms("summary", j);
  return j;
}

/* ---- budget ---------------------------------------------------------------- */

START_TEST(budget_sources) {
  ck_assert_int_eq(summary_budget_us(0, 0), 16667); /* 60 Hz default */
  ck_assert_int_eq(summary_budget_us(0, 60), 16667);
  ck_assert_int_eq(summary_budget_us(0, 120), 8333);
  ck_assert_int_eq(summary_budget_us(0, 59.94), 16683);
  ck_assert_int_eq(summary_budget_us(8, 120), 8000); /* budgetMs wins */
  ck_assert_int_eq(summary_budget_us(0.0001, 0), 1);
}
END_TEST

/* ---- percentiles ------------------------------------------------------------ */

START_TEST(percentiles_one_frame) {
  summary_t *s = summary_new(16667, 0);
  frame_t f = mk(1, 5, 7, 900, 3);
  ck_assert_int_eq(summary_add_frame(s, &f), 0);
  json_t *j = full(s);
  const char *ks[] = {"avg", "p50", "p90", "p99", "max"};
  for (int i = 0; i < 5; i++) {
    ck_assert_int_eq(STAT(j, "buildUs", ks[i]), 5);
    ck_assert_int_eq(STAT(j, "rasterUs", ks[i]), 7);
    ck_assert_int_eq(STAT(j, "totalSpanUs", ks[i]), 900);
    ck_assert_int_eq(STAT(j, "vsyncOverheadUs", ks[i]), 3);
  }
  ck_assert(json_is_true(json_object_get(j, "exact")));
  json_decref(j);
  summary_free(s);
}
END_TEST

START_TEST(percentiles_two_frames) {
  /* n=2: rank round(1·p): p50 → round(0.5) = 1 (half away from zero, as Dart). */
  summary_t *s = summary_new(16667, 0);
  frame_t a = mk(1, 20, 0, 0, 0), b = mk(2, 10, 0, 0, 0);
  summary_add_frame(s, &a);
  summary_add_frame(s, &b);
  json_t *j = full(s);
  ck_assert_int_eq(STAT(j, "buildUs", "avg"), 15);
  ck_assert_int_eq(STAT(j, "buildUs", "p50"), 20);
  ck_assert_int_eq(STAT(j, "buildUs", "p90"), 20);
  ck_assert_int_eq(STAT(j, "buildUs", "p99"), 20);
  ck_assert_int_eq(STAT(j, "buildUs", "max"), 20);
  json_decref(j);
  summary_free(s);
}
END_TEST

START_TEST(percentiles_hundred_frames) {
  /* 100..1 inserted descending; sorted[i] = i+1. p50: round(49.5)=50 → 51;
   * p90: round(89.1)=89 → 90; p99: round(98.01)=98 → 99; avg 50.5 → 51. */
  summary_t *s = summary_new(16667, 0);
  for (int i = 100; i >= 1; i--) {
    frame_t f = mk(101 - i, i, 2 * i, 0, 0);
    summary_add_frame(s, &f);
  }
  json_t *j = full(s);
  ck_assert_int_eq(STAT(j, "buildUs", "p50"), 51);
  ck_assert_int_eq(STAT(j, "buildUs", "p90"), 90);
  ck_assert_int_eq(STAT(j, "buildUs", "p99"), 99);
  ck_assert_int_eq(STAT(j, "buildUs", "max"), 100);
  ck_assert_int_eq(STAT(j, "buildUs", "avg"), 51);
  ck_assert_int_eq(STAT(j, "rasterUs", "p90"), 180);
  ck_assert_int_eq(STAT(j, "rasterUs", "avg"), 101);
  ck_assert_int_eq(json_integer_value(json_object_get(j, "frames")), 100);
  json_decref(j);
  summary_free(s);
}
END_TEST

START_TEST(percentiles_ties) {
  /* 7,3,7,7 → sorted 3,7,7,7: p50 round(1.5)=2 → 7; avg 24/4 = 6. */
  summary_t *s = summary_new(16667, 0);
  int64_t v[] = {7, 3, 7, 7};
  for (int i = 0; i < 4; i++) {
    frame_t f = mk(i + 1, v[i], 0, 0, 0);
    summary_add_frame(s, &f);
  }
  json_t *j = full(s);
  ck_assert_int_eq(STAT(j, "buildUs", "p50"), 7);
  ck_assert_int_eq(STAT(j, "buildUs", "avg"), 6);
  json_decref(j);
  summary_free(s);
}
END_TEST

/* ---- jank -------------------------------------------------------------------- */

START_TEST(jank_budget_boundary) {
  summary_t *s = summary_new(summary_budget_us(0, 60), 0);
  frame_t at = mk(1, 16667, 16667, 30000, 0);   /* exactly the budget: not janky */
  frame_t over_b = mk(2, 16668, 0, 20000, 0);   /* build over */
  frame_t over_r = mk(3, 100, 16668, 20000, 0); /* raster over */
  summary_add_frame(s, &at);
  summary_add_frame(s, &over_b);
  summary_add_frame(s, &over_r);
  json_t *j = full(s), *jank = json_object_get(j, "jank");
  ck_assert_int_eq(json_integer_value(json_object_get(jank, "frames")), 2);
  ck_assert_double_eq_tol(json_real_value(json_object_get(jank, "ratio")), 0.6667, 1e-9);
  ck_assert_int_eq(json_integer_value(json_object_get(jank, "frozen")), 0);
  ck_assert_int_eq(summary_jank_frames(s), 2);
  json_decref(j);
  summary_free(s);
}
END_TEST

/* The raster finding compares janky frames with the others on their own
 * measure: perOtherFrameUs is the mean raster time of the frames that kept
 * the budget (docs/tool.md "Findings"). */
START_TEST(raster_finding_means_over_janky_and_other_frames) {
  summary_t *s = summary_new(summary_budget_us(0, 60), 0);
  for (int i = 0; i < 10; i++) {
    frame_t f = mk(i + 1, 3000, i % 5 == 0 ? 30000 : 4000 + i, 40000, 0);
    summary_add_frame(s, &f);
  }
  json_t *j = full(s);
  const json_t *raster = NULL, *f;
  size_t i;
  json_array_foreach(json_object_get(j, "findings"), i, f) if (!strcmp(
      json_string_value(json_object_get(f, "kind")), "raster")) raster = f;
  ck_assert_ptr_nonnull(raster);
  ck_assert_int_eq(json_integer_value(json_object_get(raster, "jankFrames")), 2);
  ck_assert_int_eq(json_integer_value(json_object_get(raster, "perJankFrameUs")), 30000);
  /* frames 1-4 and 6-9: 4000 + i, mean 4005 */
  ck_assert_int_eq(json_integer_value(json_object_get(raster, "perOtherFrameUs")), 4005);
  json_decref(j);
  summary_free(s);
}
END_TEST

START_TEST(jank_frozen_boundary) {
  summary_t *s = summary_new(16667, 0);
  frame_t a = mk(1, 10, 10, 700000, 0), b = mk(2, 10, 10, 699999, 0);
  summary_add_frame(s, &a);
  summary_add_frame(s, &b);
  json_t *j = full(s);
  ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j, "jank"), "frozen")), 1);
  ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j, "jank"), "frames")), 0);
  json_decref(j);
  summary_free(s);
}
END_TEST

/* ---- blocks ------------------------------------------------------------------ */

START_TEST(top_blocks_self_time_across_frames) {
  summary_t *s = summary_new(16667, 0);
  record_block_t b1[] = {{"A", 300, 100, 1}, {"B", 200, 200, 2}};
  record_block_t b2[] = {{"A", 60, 50, 1}, {"C", 400, 300, 3}};
  frame_t f1 = mk(1, 1000, 0, 0, 0), f2 = mk(2, 1000, 0, 0, 0);
  f1.blocks = b1, f1.nblocks = 2;
  f2.blocks = b2, f2.nblocks = 2;
  summary_add_frame(s, &f1);
  summary_add_frame(s, &f2);
  json_t *j = full(s), *tb = json_object_get(j, "topBlocks");
  ck_assert_int_eq(json_array_size(tb), 3);
  /* C 300, B 200, A 100+50 = 150 (micros 360, count 2, in 2 frames). */
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(tb, 0), "name")), "C");
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(tb, 1), "name")), "B");
  json_t *a = json_array_get(tb, 2);
  ck_assert_str_eq(json_string_value(json_object_get(a, "name")), "A");
  ck_assert_int_eq(json_integer_value(json_object_get(a, "selfMicros")), 150);
  ck_assert_int_eq(json_integer_value(json_object_get(a, "micros")), 360);
  ck_assert_int_eq(json_integer_value(json_object_get(a, "count")), 2);
  ck_assert_int_eq(json_integer_value(json_object_get(a, "frames")), 2);
  ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(tb, 1), "count")), 2);
  ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(tb, 1), "frames")), 1);
  json_decref(j);
  summary_free(s);
}
END_TEST

START_TEST(top_blocks_ties_by_name_and_cap_at_ten) {
  summary_t *s = summary_new(16667, 0);
  record_block_t b[12];
  char names[12][8];
  for (int i = 0; i < 12; i++) { /* "k11" … "k00": self 5 each, except k03 with 9 */
    snprintf(names[i], sizeof names[i], "k%02d", 11 - i);
    b[i] = (record_block_t){names[i], 9, 11 - i == 3 ? 9 : 5, 1};
  }
  frame_t f = mk(1, 10, 10, 10, 0);
  f.blocks = b, f.nblocks = 12;
  summary_add_frame(s, &f);
  json_t *j = full(s), *tb = json_object_get(j, "topBlocks");
  ck_assert_int_eq(json_array_size(tb), 10);
  const char *want[] = {"k03", "k00", "k01", "k02", "k04", "k05", "k06", "k07", "k08", "k09"};
  for (int i = 0; i < 10; i++)
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(tb, i), "name")), want[i]);
  json_decref(j);
  summary_free(s);
}
END_TEST

START_TEST(block_names_capped_into_other) {
  summary_t *s = summary_new(16667, 0);
  char names[SUMMARY_MAX_BLOCK_NAMES + 10][16];
  for (int i = 0; i < SUMMARY_MAX_BLOCK_NAMES + 10; i++) {
    snprintf(names[i], sizeof names[i], "n%04d", i);
    record_block_t b = {names[i], 1, 1, 1};
    /* The ten over the cap carry much self time, so "(other)" ranks first. */
    if (i >= SUMMARY_MAX_BLOCK_NAMES) b.self_micros = b.micros = 100;
    frame_t f = mk(i + 1, 10, 10, 10, 0);
    f.blocks = &b, f.nblocks = 1;
    summary_add_frame(s, &f);
  }
  json_t *j = full(s), *first = json_array_get(json_object_get(j, "topBlocks"), 0);
  ck_assert_str_eq(json_string_value(json_object_get(first, "name")), SUMMARY_OTHER);
  ck_assert_int_eq(json_integer_value(json_object_get(first, "selfMicros")), 1000);
  ck_assert_int_eq(json_integer_value(json_object_get(first, "frames")), 10);
  json_decref(j);
  summary_free(s);
}
END_TEST

/* ---- worst frames -------------------------------------------------------------- */

START_TEST(worst_frames_ranked) {
  summary_t *s = summary_new(16667, 1);
  /* keys max(build, raster): 10, 50, 30(raster), 50 (tie, later), 70, 20, 60 */
  int64_t build[] = {10, 50, 5, 50, 70, 20, 1};
  int64_t raster[] = {1, 2, 30, 3, 4, 5, 60};
  record_block_t blocks[] = {{"x", 9, 1, 1}, {"y", 9, 7, 1}, {"z", 9, 3, 1}, {"w", 9, 5, 1}};
  for (int i = 0; i < 7; i++) {
    frame_t f = mk(i + 1, build[i], raster[i], 100 + i, 0);
    if (i == 4) {
      f.blocks = blocks, f.nblocks = 4;
      f.interaction_id = "scroll", f.linked_by = "agent";
    }
    summary_add_frame(s, &f);
  }
  json_t *j = full(s), *wf = json_object_get(j, "worstFrames");
  ck_assert_int_eq(json_array_size(wf), 5);
  int64_t want_seq[] = {5, 7, 2, 4, 3};
  for (int i = 0; i < 5; i++)
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(wf, i), "seq")),
                     want_seq[i]);
  json_t *w0 = json_array_get(wf, 0), *tb = json_object_get(w0, "topBlocks");
  ck_assert_str_eq(json_string_value(json_object_get(w0, "interactionId")), "scroll");
  ck_assert_int_eq(json_integer_value(json_object_get(w0, "frameNumber")), 1005);
  ck_assert_int_eq(json_integer_value(json_object_get(w0, "totalSpanUs")), 104);
  ck_assert_int_eq(json_array_size(tb), 3); /* y 7, w 5, z 3 */
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(tb, 0), "name")), "y");
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(tb, 1), "name")), "w");
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(tb, 2), "name")), "z");
  ck_assert_ptr_null(json_object_get(json_array_get(wf, 1), "interactionId"));
  json_decref(j);
  summary_free(s);
}
END_TEST

/* ---- sparkline ------------------------------------------------------------------ */

START_TEST(sparkline_levels) {
  summary_t *s = summary_new(1000, 0);
  int64_t v[] = {0, 250, 251, 1000, 1001, 1750, 1751, 2000};
  for (int i = 0; i < 8; i++) {
    frame_t f = mk(i + 1, v[i], i == 5 ? 3 : 0, 0, 0); /* raster below build: build counts */
    summary_add_frame(s, &f);
  }
  char *sp = summary_sparkline(s);
  ck_assert_str_eq(sp, "▁▁▂▄▅▇██");
  free(sp);
  summary_free(s);
}
END_TEST

START_TEST(sparkline_buckets) {
  summary_t *s = summary_new(1000, 0);
  for (int i = 0; i < 60; i++) {
    frame_t f = mk(i + 1, 0, i == 59 ? 5000 : 0, 0, 0); /* raster spike counts too */
    summary_add_frame(s, &f);
  }
  char *sp = summary_sparkline(s);
  ck_assert_uint_eq(record_utf8_length(sp), 60);
  ck_assert_str_eq(sp + 59 * 3, "█");
  free(sp);
  frame_t f = mk(61, 0, 0, 0, 0);
  summary_add_frame(s, &f);
  sp = summary_sparkline(s); /* 61 frames: pairs merge → 31 characters, spike in the 30th */
  ck_assert_uint_eq(record_utf8_length(sp), 31);
  ck_assert(!strncmp(sp + 29 * 3, "█", 3));
  free(sp);
  summary_free(s);

  /* 1000 frames, one spike at index 500: buckets of 16 after four merges,
   * 63 buckets, pairs merge → 32 characters; the spike is in bucket 31 → 15. */
  s = summary_new(1000, 0);
  for (int i = 0; i < 1000; i++) {
    frame_t g = mk(i + 1, i == 500 ? 5000 : 0, 0, 0, 0);
    summary_add_frame(s, &g);
  }
  sp = summary_sparkline(s);
  ck_assert_uint_eq(record_utf8_length(sp), 32);
  for (int i = 0; i < 32; i++)
    ck_assert_msg(!strncmp(sp + i * 3, i == 15 ? "█" : "▁", 3), "char %d of %s", i, sp);
  free(sp);
  summary_free(s);
}
END_TEST

/* ---- interactions ------------------------------------------------------------ */

START_TEST(interaction_breakdown) {
  summary_t *s = summary_new(16667, 1);
  struct {
    const char *id;
    int64_t build;
  } fr[] = {{"tap", 100},    {"scroll", 20000}, {NULL, 5},
            {"scroll", 300}, {"scroll", 200},   {NULL, 6}};
  for (int i = 0; i < 6; i++) {
    frame_t f = mk(i + 1, fr[i].build, 10, fr[i].build + 10, 0);
    if (fr[i].id) f.interaction_id = (char *)fr[i].id, f.linked_by = "agent";
    summary_add_frame(s, &f);
  }
  json_t *j = full(s), *ia = json_object_get(j, "interactions");
  ck_assert_int_eq(json_array_size(ia), 2);
  json_t *sc = json_array_get(ia, 0), *tap = json_array_get(ia, 1);
  ck_assert_str_eq(json_string_value(json_object_get(sc, "interactionId")), "scroll");
  ck_assert_str_eq(json_string_value(json_object_get(sc, "linkedBy")), "agent");
  ck_assert_int_eq(json_integer_value(json_object_get(sc, "frames")), 3);
  ck_assert_int_eq(json_integer_value(json_object_get(sc, "jankFrames")), 1);
  ck_assert_int_eq(STAT(sc, "buildUs", "p50"), 300); /* 200,300,20000 → rank 1 */
  ck_assert_int_eq(STAT(sc, "buildUs", "avg"), 6833);
  ck_assert_int_eq(STAT(sc, "totalSpanUs", "max"), 20010);
  ck_assert_str_eq(json_string_value(json_object_get(tap, "interactionId")), "tap");
  ck_assert_int_eq(json_integer_value(json_object_get(tap, "frames")), 1);
  const summary_t *child = summary_interaction(s, "scroll");
  ck_assert_ptr_nonnull(child);
  ck_assert_uint_eq(summary_frames(child), 3);
  ck_assert_ptr_null(summary_interaction(s, "nope"));
  json_decref(j);
  summary_free(s);
}
END_TEST

START_TEST(interactions_capped_into_other) {
  summary_t *s = summary_new(16667, 1);
  char id[16];
  for (int i = 0; i < SUMMARY_MAX_INTERACTIONS + 3; i++) {
    snprintf(id, sizeof id, "i%d", i);
    frame_t f = mk(i + 1, 10, 10, 10, 0);
    f.interaction_id = id, f.linked_by = "agent";
    summary_add_frame(s, &f);
  }
  const summary_t *o = summary_interaction(s, SUMMARY_OTHER);
  ck_assert_ptr_nonnull(o);
  ck_assert_uint_eq(summary_frames(o), 3);
  ck_assert_ptr_null(summary_interaction(s, "i65"));
  json_t *j = full(s);
  ck_assert_int_eq(json_array_size(json_object_get(j, "interactions")),
                   SUMMARY_MAX_INTERACTIONS + 1);
  json_decref(j);
  summary_free(s);
}
END_TEST

/* ---- beyond the exact window --------------------------------------------------- */

static int cmp64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

START_TEST(beyond_window_estimates_within_error) {
  enum { N = SUMMARY_WINDOW * 3 + 17 };
  int64_t *all = malloc(N * sizeof *all);
  summary_t *s = summary_new(16667, 0);
  uint64_t x = 88172645463325252ull; /* xorshift: deterministic, spread over 0..200000 */
  double sum = 0;
  for (int i = 0; i < N; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    all[i] = (int64_t)(x % 200000);
    sum += (double)all[i];
    frame_t f = mk(i + 1, all[i], 0, 0, 0);
    ck_assert_int_eq(summary_add_frame(s, &f), 0);
  }
  qsort(all, N, sizeof *all, cmp64);
  json_t *j = full(s);
  ck_assert(json_is_false(json_object_get(j, "exact")));
  ck_assert(!summary_exact(s));
  const char *ks[] = {"p50", "p90", "p99"};
  double ps[] = {0.5, 0.9, 0.99};
  for (int i = 0; i < 3; i++) {
    int64_t truth = all[(size_t)llround((N - 1) * ps[i])];
    int64_t est = STAT(j, "buildUs", ks[i]);
    ck_assert_msg(fabs((double)(est - truth)) <= truth * (1.0 / 128) + 0.5,
                  "%s: est %lld truth %lld", ks[i], (long long)est, (long long)truth);
    ck_assert_int_ne(est, 0);
  }
  ck_assert_int_eq(STAT(j, "buildUs", "max"), all[N - 1]); /* max and avg stay exact */
  ck_assert_int_eq(STAT(j, "buildUs", "avg"), llround(sum / N));
  json_decref(j);
  free(all);
  summary_free(s);
}
END_TEST

/* ---- size bound ---------------------------------------------------------------- */

START_TEST(hundred_thousand_frames_fit_in_4k) {
  enum { N = 100000, B = 20, NAMES = 1000 };
  static char names[NAMES][40];
  for (int i = 0; i < NAMES; i++)
    snprintf(names[i], sizeof names[i], "SomeRatherLongWidgetName%04d", i);
  char ids[100][40];
  for (int i = 0; i < 100; i++) snprintf(ids[i], sizeof ids[i], "interaction-number-%03d", i);
  summary_t *s = summary_new(16667, 1);
  record_block_t b[B];
  for (int i = 0; i < N; i++) {
    for (int k = 0; k < B; k++)
      b[k] = (record_block_t){names[(i * 7 + k * 50) % NAMES], 100 + k, 50 + (i + k) % 97, 1};
    frame_t f = mk(i + 1, 1000 + (i * 37) % 30000, 500 + (i * 11) % 20000, 3000 + (i * 13) % 800000,
                   i % 300);
    f.blocks = b, f.nblocks = B;
    f.interaction_id = ids[i % 100], f.linked_by = "agent";
    ck_assert_int_eq(summary_add_frame(s, &f), 0);
  }
  json_t *j = summary_to_json_bounded(s, SUMMARY_MAX_BYTES);
  assert_conforms("summary", j);
  char *text = json_dumps(j, JSON_COMPACT);
  ck_assert_msg(strlen(text) <= 4096, "summary is %zu bytes", strlen(text));
  ck_assert_int_eq(json_integer_value(json_object_get(j, "frames")), N);
  ck_assert(json_array_size(json_object_get(j, "topBlocks")) > 0);
  ck_assert(json_array_size(json_object_get(j, "worstFrames")) > 0);
  ck_assert_ptr_nonnull(summary_interaction(s, SUMMARY_OTHER)); /* 100 ids > 64 */
  free(text);
  json_decref(j);
  /* The unshrunk form is far larger: the bound is doing work. */
  j = summary_to_json(s, SUMMARY_TOP_BLOCKS, SUMMARY_WORST_FRAMES, (size_t)-1);
  text = json_dumps(j, JSON_COMPACT);
  ck_assert_uint_gt(strlen(text), 4096);
  free(text);
  json_decref(j);
  summary_free(s);
}
END_TEST

START_TEST(small_summary_is_not_shrunk) {
  summary_t *s = summary_new(16667, 1);
  record_block_t b[] = {{"BUILD", 3000, 1200, 1}};
  for (int i = 0; i < 20; i++) {
    frame_t f = mk(i + 1, 1000 * i, 500, 2000 * i, 10);
    f.blocks = b, f.nblocks = 1;
    summary_add_frame(s, &f);
  }
  json_t *j = summary_to_json_bounded(s, SUMMARY_MAX_BYTES);
  /* Builds of 17, 18 and 19 ms are the janky ones: only they are worst frames. */
  ck_assert_int_eq(json_array_size(json_object_get(j, "worstFrames")), 3);
  ck_assert_int_eq(json_array_size(json_object_get(j, "interactions")), 0);
  json_decref(j);
  summary_free(s);
}
END_TEST

START_TEST(empty_summary) {
  summary_t *s = summary_new(8333, 1);
  json_t *j = full(s);
  ck_assert_int_eq(json_integer_value(json_object_get(j, "frames")), 0);
  ck_assert_int_eq(json_integer_value(json_object_get(j, "budgetUs")), 8333);
  ck_assert_ptr_null(json_object_get(j, "buildUs"));
  ck_assert_str_eq(json_string_value(json_object_get(j, "sparkline")), "");
  json_decref(j);
  summary_free(s);
}
END_TEST

/* ---- clock parity ---------------------------------------------------------------- */

START_TEST(clock_parity) {
  summary_clock_t c;
  summary_clock_init(&c);
  json_t *j = summary_clock_to_json(&c);
  assert_conforms("clock", j);
  ck_assert_str_eq(json_string_value(json_object_get(j, "parity")), "unknown");
  json_decref(j);
  int64_t d[] = {9000, 4000, 12000, 5000, 7000, 30000, 8000}; /* 7 samples: still unknown */
  for (int i = 0; i < 7; i++) summary_clock_add(&c, 1000000 + d[i], 1000000);
  j = summary_clock_to_json(&c);
  ck_assert_str_eq(json_string_value(json_object_get(j, "parity")), "unknown");
  json_decref(j);
  summary_clock_add(&c, 6000, 0); /* 8th: sorted 4,5,6,7,8,9,12,30 (k) → median rank 4 */
  j = summary_clock_to_json(&c);
  assert_conforms("clock", j);
  ck_assert_str_eq(json_string_value(json_object_get(j, "parity")), "consistent");
  ck_assert_int_eq(json_integer_value(json_object_get(j, "samples")), 8);
  ck_assert_int_eq(json_integer_value(json_object_get(j, "minUs")), 4000);
  ck_assert_int_eq(json_integer_value(json_object_get(j, "medianUs")), 8000);
  ck_assert_int_eq(json_integer_value(json_object_get(j, "maxUs")), 30000);
  json_decref(j);
  summary_clock_add(&c, 0, 5000000); /* at before vsync by 5 s: another clock */
  j = summary_clock_to_json(&c);
  ck_assert_str_eq(json_string_value(json_object_get(j, "parity")), "inconsistent");
  json_decref(j);
  /* The ring forgets: 256 good samples later it is consistent again. */
  for (int i = 0; i < SUMMARY_CLOCK_SAMPLES; i++) summary_clock_add(&c, 5000, 0);
  j = summary_clock_to_json(&c);
  ck_assert_str_eq(json_string_value(json_object_get(j, "parity")), "consistent");
  ck_assert_int_eq(json_integer_value(json_object_get(j, "samples")), SUMMARY_CLOCK_SAMPLES);
  json_decref(j);
  /* Issue 12 item 5: one frame with over a second of its own UI work does
   * not make the clocks inconsistent, whether its work is known or not. */
  summary_clock_init(&c);
  for (int i = 0; i < 20; i++) summary_clock_add(&c, 5000 + i, 0);
  summary_clock_add_frame(&c, 1800000, 0, 1500000); /* 1.5 s of work, stamped 0.3 s later */
  summary_clock_add(&c, 2500000, 0);                /* work unknown: a lone long frame */
  for (int i = 0; i < 20; i++) summary_clock_add(&c, 6000 + i, 0);
  j = summary_clock_to_json(&c);
  ck_assert_str_eq(json_string_value(json_object_get(j, "parity")), "consistent");
  ck_assert_int_eq(json_integer_value(json_object_get(j, "maxUs")), 2500000); /* still shown */
  json_decref(j);
  /* ... but work that does not explain the stamp is still out of range, and
   * long samples as the majority are an offset, not long frames. */
  summary_clock_init(&c);
  for (int i = 0; i < 10; i++) summary_clock_add_frame(&c, 5000000 + i, 0, 1000);
  j = summary_clock_to_json(&c);
  ck_assert_str_eq(json_string_value(json_object_get(j, "parity")), "inconsistent");
  json_decref(j);
  summary_clock_init(&c);
  for (int i = 0; i < 10; i++) summary_clock_add(&c, 5000 + i, 0);
  for (int i = 0; i < 10; i++) summary_clock_add(&c, 3000000 + i, 0);
  j = summary_clock_to_json(&c);
  ck_assert_str_eq(json_string_value(json_object_get(j, "parity")), "inconsistent");
  json_decref(j);
  /* App input cannot overflow the subtraction. */
  summary_clock_init(&c);
  for (int i = 0; i < 8; i++) summary_clock_add(&c, INT64_MIN, INT64_MAX);
  j = summary_clock_to_json(&c);
  ck_assert_str_eq(json_string_value(json_object_get(j, "parity")), "inconsistent");
  json_decref(j);
  /* A constant offset far beyond the batching delay is not one clock. */
  summary_clock_init(&c);
  for (int i = 0; i < 10; i++) summary_clock_add(&c, 1700000000000000 + i, i);
  j = summary_clock_to_json(&c);
  ck_assert_str_eq(json_string_value(json_object_get(j, "parity")), "inconsistent");
  json_decref(j);
}
END_TEST

/* ---- the other output parts these modules produce ------------------------ */

START_TEST(frames_and_diagnosis_conform) {
  record_block_t b[] = {{"BUILD", 3000, 1200, 1}};
  frame_t f = mk(1042, 4200, 3100, 8000, 120);
  f.blocks = b, f.nblocks = 1;
  f.interaction_id = "scroll-feed", f.linked_by = "agent";
  f.layer_cache_count = 3;
  json_t *arr = json_array();
  json_array_append_new(arr, record_frame_to_json(&f, 1));
  json_array_append_new(arr, record_frame_to_json(&f, 0));
  assert_conforms("frames", arr);
  json_decref(arr);
  json_t *l = diagnose_liveness_to_json(18342, 1, 17738, 10012);
  assert_conforms("liveness", l);
  json_decref(l);
  l = diagnose_liveness_to_json(3, 0, 0, -1);
  assert_conforms("liveness", l);
  json_decref(l);
  diagnose_facts_t facts;
  memset(&facts, 0, sizeof facts);
  facts.lifecycle = "hidden";
  facts.frames_enabled = 0;
  facts.liveness_before_known = 1;
  facts.probe = DIAGNOSE_PROBE_NOT_MOVED;
  facts.pause_kind = "PauseBreakpoint";
  for (int c = DIAG_NONE + 1; c < DIAG__COUNT; c++) {
    json_t *d = diagnose_to_json((diag_code_t)c, &facts);
    assert_conforms("diagnosis", d);
    json_decref(d);
  }
}
END_TEST

/* The jank split and every kind of finding conform to the output schema. */
START_TEST(findings_and_jank_split_conform) {
  summary_t *s = summary_new(16667, 1);
  record_block_t calm[] = {{"BUILD", 3000, 1000, 1}, {"LAYOUT", 1000, 1000, 1}};
  record_block_t janky[] = {{"BUILD", 25000, 1500, 1}, /* 1500 vs 1000: noise */
                            {"SlowWidget", 20000, 20000, 1},
                            {"RenderFlex intrinsics", 3000, 3000, 1},
                            {"LAYOUT", 9000, 6000, 1}};
  frame_t a = mk(1, 5000, 3000, 9000, 10), b = mk(2, 30000, 3000, 34000, 10),
          c = mk(3, 5000, 40000, 46000, 10);
  a.blocks = calm, a.nblocks = 2;
  b.blocks = janky, b.nblocks = 4;
  c.blocks = calm, c.nblocks = 2;
  summary_add_frame(s, &a);
  summary_add_frame(s, &b);
  summary_add_frame(s, &c);
  json_t *j = full(s), *jank = json_object_get(j, "jank");
  ck_assert_int_eq(json_integer_value(json_object_get(jank, "buildMissed")), 1);
  ck_assert_int_eq(json_integer_value(json_object_get(jank, "rasterMissed")), 1);
  ck_assert_str_eq(json_string_value(json_object_get(jank, "boundBy")), "both");
  json_t *fs = json_object_get(j, "findings");
  /* By the jank explained (build overrun 13333 in frame 2, raster overrun
   * 23333 in frame 3): raster min(40000 − 3000, 23333) = 23333, SlowWidget
   * min(20000, 13333) = 13333, LAYOUT 6000 − 1000 = 5000, RenderFlex
   * intrinsics 3000 (no near tie lifts it over LAYOUT: 3000 < 0.9 × 5000). */
  ck_assert_int_eq(json_array_size(fs), 4);
  static const char *const want[] = {"raster", "SlowWidget", "LAYOUT", "RenderFlex intrinsics"};
  for (size_t i = 0; i < 4; i++)
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(fs, i), "name")), want[i]);
  json_decref(j);
  /* The bounded form keeps the findings. */
  j = summary_to_json_bounded(s, SUMMARY_MAX_BYTES);
  ck_assert_int_eq(json_array_size(json_object_get(j, "findings")), 4);
  json_decref(j);
  summary_free(s);
  /* And the tracking kind. */
  s = summary_new(16667, 0);
  frame_t d = mk(1, 30000, 1000, 31000, 0);
  summary_add_frame(s, &d);
  j = full(s);
  /* Advice is in next, never in findings. */
  ck_assert_str_eq(
      json_string_value(json_object_get(json_array_get(json_object_get(j, "next"), 0), "kind")),
      "tracking");
  /* Without blocks the one cause is the build time itself (kind build). */
  ck_assert_int_eq(json_array_size(json_object_get(j, "findings")), 1);
  ck_assert_str_eq(
      json_string_value(json_object_get(json_array_get(json_object_get(j, "findings"), 0), "kind")),
      "build");
  json_decref(j);
  summary_free(s);
}
END_TEST

/* The walker itself must bite, or the conformance tests above prove nothing. */
START_TEST(schema_walker_catches_drift) {
  summary_t *s = summary_new(16667, 1);
  frame_t f = mk(1, 10, 10, 10, 0);
  summary_add_frame(s, &f);
  json_t *j = summary_to_json(s, 10, 5, 64);
  char why[600];
  ck_assert(check(output_schema_part("summary"), j, "summary", why, sizeof why));
  json_t *bad = json_deep_copy(j);
  json_object_set_new(bad, "bogus", json_true());
  ck_assert(!check(output_schema_part("summary"), bad, "summary", why, sizeof why));
  ck_assert(strstr(why, "summary.bogus: not allowed"));
  json_decref(bad);
  bad = json_deep_copy(j);
  json_object_del(bad, "budgetUs");
  ck_assert(!check(output_schema_part("summary"), bad, "summary", why, sizeof why));
  json_decref(bad);
  bad = json_deep_copy(j);
  json_object_set_new(json_object_get(bad, "buildUs"), "p50", json_real(1.5));
  ck_assert(!check(output_schema_part("summary"), bad, "summary", why, sizeof why));
  json_decref(bad);
  bad = json_deep_copy(j);
  json_object_set_new(json_object_get(bad, "jank"), "ratio", json_real(1.5));
  ck_assert(!check(output_schema_part("summary"), bad, "summary", why, sizeof why));
  json_decref(bad);
  bad = json_deep_copy(j);
  json_object_set_new(json_object_get(bad, "jank"), "boundBy", json_string("gpu"));
  ck_assert(!check(output_schema_part("summary"), bad, "summary", why, sizeof why));
  json_decref(bad);
  bad = json_deep_copy(j);
  json_object_set_new(
      bad, "findings",
      json_pack("[{s:s,s:s,s:s,s:s}]", "kind", "vibes", "name", "X", "thread", "ui", "hint", "h"));
  ck_assert(!check(output_schema_part("summary"), bad, "summary", why, sizeof why));
  json_decref(bad);
  bad = json_deep_copy(j);
  char longspark[62];
  memset(longspark, 'x', 61), longspark[61] = 0;
  json_object_set_new(bad, "sparkline", json_string(longspark));
  ck_assert(!check(output_schema_part("summary"), bad, "summary", why, sizeof why));
  json_decref(bad);
  json_decref(j);
  summary_free(s);
}
END_TEST

/* What is added after the bound takes room from the worst frames' topBlocks,
 * the last frame's first, one block at a time, and from nothing else. */
START_TEST(fit_takes_worst_frames_blocks_last_first) {
  json_t *s = json_loads("{\"frames\":1,\"worstFrames\":["
                         "{\"seq\":1,\"topBlocks\":[{\"name\":\"AAAAAAAAAA\"},{\"name\":\"B\"}]},"
                         "{\"seq\":2,\"topBlocks\":[{\"name\":\"CCCCCCCCCC\"},{\"name\":\"D\"}]}]}",
                         0, NULL);
  ck_assert_ptr_nonnull(s);
  size_t full = json_dumpb(s, NULL, 0, JSON_COMPACT);
  ck_assert_uint_eq(summary_fit_worst_blocks(s, full), full); /* fits: untouched */
  size_t len = summary_fit_worst_blocks(s, full - 1);
  ck_assert_uint_le(len, full - 1);
  const json_t *wf = json_object_get(s, "worstFrames");
  ck_assert_uint_eq(json_array_size(json_object_get(json_array_get(wf, 0), "topBlocks")), 2);
  ck_assert_uint_eq(json_array_size(json_object_get(json_array_get(wf, 1), "topBlocks")), 1);
  len = summary_fit_worst_blocks(s, 10); /* cannot fit: every block goes, nothing else */
  ck_assert_uint_eq(json_array_size(json_object_get(json_array_get(wf, 0), "topBlocks")), 0);
  ck_assert_uint_eq(json_array_size(wf), 2);
  ck_assert_int_eq(json_integer_value(json_object_get(s, "frames")), 1);
  ck_assert_uint_eq(len, json_dumpb(s, NULL, 0, JSON_COMPACT));
  json_decref(s);
}
END_TEST

int main(void) {
  Suite *s = suite_create("summary");
  TCase *tc = tcase_create("math");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, budget_sources);
  tcase_add_test(tc, percentiles_one_frame);
  tcase_add_test(tc, percentiles_two_frames);
  tcase_add_test(tc, percentiles_hundred_frames);
  tcase_add_test(tc, percentiles_ties);
  tcase_add_test(tc, jank_budget_boundary);
  tcase_add_test(tc, raster_finding_means_over_janky_and_other_frames);
  tcase_add_test(tc, jank_frozen_boundary);
  tcase_add_test(tc, top_blocks_self_time_across_frames);
  tcase_add_test(tc, top_blocks_ties_by_name_and_cap_at_ten);
  tcase_add_test(tc, block_names_capped_into_other);
  tcase_add_test(tc, worst_frames_ranked);
  tcase_add_test(tc, sparkline_levels);
  tcase_add_test(tc, sparkline_buckets);
  tcase_add_test(tc, interaction_breakdown);
  tcase_add_test(tc, interactions_capped_into_other);
  tcase_add_test(tc, beyond_window_estimates_within_error);
  tcase_add_test(tc, hundred_thousand_frames_fit_in_4k);
  tcase_add_test(tc, small_summary_is_not_shrunk);
  tcase_add_test(tc, empty_summary);
  tcase_add_test(tc, clock_parity);
  tcase_add_test(tc, frames_and_diagnosis_conform);
  tcase_add_test(tc, findings_and_jank_split_conform);
  tcase_add_test(tc, schema_walker_catches_drift);
  tcase_add_test(tc, fit_takes_worst_frames_blocks_last_first);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
