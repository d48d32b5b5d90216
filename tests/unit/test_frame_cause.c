/* frame_cause: a janky worst frame's own cause is what lies furthest beyond
 * the calm frames in it, by the findings' rule, not its largest block
 * (docs/tool.md "Worst frames"). The first case is frame 854 of the real
 * android-world-clock-3.4 recording (tests/recordings), whose independent
 * answer is PAINT while its largest block is BUILD. */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "frame_cause.h"

#define BUDGET 16667
#define CALM 6
#define MAXB 4

static frame_t F[CALM + 1];
static record_block_t B[CALM + 1][MAXB];
static const frame_t *P[CALM + 1];

static void block(int f, const char *name, int64_t self) {
  frame_t *fr = &F[f];
  B[f][fr->nblocks] = (record_block_t){(char *)name, self, self, 1};
  fr->blocks = B[f];
  fr->nblocks++;
}

/* CALM calm frames (build 8 ms of BUILD 7.5 ms and PAINT 0.5 ms, raster
 * 4 ms) and frame CALM, janky, with the given build and raster and no
 * blocks yet. */
static void frames(int64_t build_us, int64_t raster_us) {
  memset(F, 0, sizeof F);
  for (int i = 0; i <= CALM; i++) {
    F[i].seq = i + 1;
    F[i].frame_number = 100 + i;
    F[i].build_us = i < CALM ? 8000 : build_us;
    F[i].raster_us = i < CALM ? 4000 : raster_us;
    F[i].layer_cache_count = F[i].picture_cache_count = -1;
    if (i < CALM) {
      block(i, "BUILD", 7500);
      block(i, "PAINT", 500);
    }
    P[i] = &F[i];
  }
}

/* The summary's worstFrames: the janky frame only. */
static json_t *summary(void) {
  return json_pack("{s:[{s:I,s:I}]}", "worstFrames", "seq", (json_int_t)CALM + 1, "frameNumber",
                   (json_int_t)100 + CALM);
}

static const json_t *cause(const json_t *sum) {
  return json_object_get(json_array_get(json_object_get(sum, "worstFrames"), 0), "cause");
}

/* The janky frame's cause among the first n frames, or none (kind NULL). */
static void expect_cause(size_t n, const vmtl_causes_t *tl, const char *kind, const char *name,
                         int64_t us) {
  json_t *sum = summary();
  ck_assert_int_eq(frame_cause_apply(sum, P, n, tl, BUDGET), 0);
  const json_t *c = cause(sum);
  if (!kind) {
    ck_assert_ptr_null(c);
    json_decref(sum);
    return;
  }
  ck_assert_ptr_nonnull(c);
  ck_assert_str_eq(json_string_value(json_object_get(c, "kind")), kind);
  ck_assert_str_eq(json_string_value(json_object_get(c, "name")), name);
  ck_assert_int_eq(json_integer_value(json_object_get(c, "us")), us);
  json_decref(sum);
}

START_TEST(the_largest_block_is_not_the_cause) {
  frames(17367, 5629);        /* 0.7 ms over */
  block(CALM, "BUILD", 8433); /* 0.9 ms beyond the calm frames' */
  block(CALM, "PAINT", 4582); /* 4.1 ms beyond theirs: explains all 0.7 ms */
  expect_cause(CALM + 1, NULL, "phase", "PAINT", 4582);
}
END_TEST

START_TEST(a_widget_goes_first_only_within_the_near_tie) {
  /* BUILD 12 ms beyond; SlowList 11 ms beyond: at least 90 %, so it names it. */
  frames(40000, 4000);
  block(CALM, "BUILD", 19500);
  block(CALM, "SlowList", 11000);
  expect_cause(CALM + 1, NULL, "widget", "SlowList", 11000);
  /* 10 ms beyond is 83 %: the phase's own time is the cause. */
  frames(40000, 4000);
  block(CALM, "BUILD", 19500);
  block(CALM, "SlowList", 10000);
  expect_cause(CALM + 1, NULL, "phase", "BUILD", 19500);
}
END_TEST

START_TEST(a_root_phase_is_the_phase) {
  frames(30000, 4000);
  block(CALM, "BUILD", 7500);
  block(CALM, "PAINT (root)", 9000);
  block(CALM, "PAINT", 9000);
  expect_cause(CALM + 1, NULL, "phase", "PAINT", 18000);
}
END_TEST

START_TEST(shader_compilation_in_a_raster_miss) {
  frames(8000, 30000);
  block(CALM, "BUILD", 7500);
  vmtl_causes_t tl[CALM + 1];
  memset(tl, 0, sizeof tl);
  tl[CALM].shader_us = 14000; /* caps at the 13.3 ms overrun, as raster does: a tie */
  expect_cause(CALM + 1, tl, "shader", "shader compilation", 14000);
  /* Without the timeline the raster thread is all it can say. */
  expect_cause(CALM + 1, NULL, "raster", "raster", 30000);
}
END_TEST

START_TEST(gc_beyond_the_calm_frames) {
  frames(30000, 4000);
  block(CALM, "BUILD", 9000);
  vmtl_causes_t tl[CALM + 1];
  memset(tl, 0, sizeof tl);
  for (int i = 0; i < CALM; i++) tl[i].gc_us = 300;
  tl[CALM].gc_us = 20000;
  expect_cause(CALM + 1, tl, "gc", "GC", 20000);
}
END_TEST

START_TEST(without_blocks_the_build_itself) {
  frames(30000, 4000);
  for (int i = 0; i < CALM; i++) F[i].nblocks = 0;
  expect_cause(CALM + 1, NULL, "build", "build", 30000);
}
END_TEST

START_TEST(no_cause_for_a_frame_not_held_or_not_janky) {
  frames(30000, 4000);
  block(CALM, "PAINT", 9000);
  expect_cause(CALM, NULL, NULL, NULL, 0); /* not among the frames */
  frames(12000, 4000);                     /* within budget */
  block(CALM, "PAINT", 9000);
  expect_cause(CALM + 1, NULL, NULL, NULL, 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("frame_cause");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, the_largest_block_is_not_the_cause);
  tcase_add_test(tc, a_widget_goes_first_only_within_the_near_tie);
  tcase_add_test(tc, a_root_phase_is_the_phase);
  tcase_add_test(tc, shader_compilation_in_a_raster_miss);
  tcase_add_test(tc, gc_beyond_the_calm_frames);
  tcase_add_test(tc, without_blocks_the_build_itself);
  tcase_add_test(tc, no_cause_for_a_frame_not_held_or_not_janky);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
