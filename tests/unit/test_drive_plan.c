/* Runs every shared drive vector (tests/vectors/drive/, format in its
 * README.md) through the C plan (watcher/sim/model_drive_plan.c), and checks
 * how steps are parsed (DRIVE.md §1). The Dart plan runs the same files. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_drive_plan.h"
#include "vector_files.h"

#define VECTOR_DIR TELESCOPE_SOURCE_DIR "/tests/vectors/drive"
#define MIN_VECTORS 13
#define MAX_VECTORS 128
#define TOLERANCE 1e-6

static char *vector_paths[MAX_VECTORS];
static int n_vectors;

static void vectors_list(void) {
  n_vectors = vector_files_list(VECTOR_DIR, vector_paths, MAX_VECTORS);
}

START_TEST(enough_vectors) {
  ck_assert_int_ge(n_vectors, MIN_VECTORS);
}
END_TEST

/* The vector's step goes through the same parser the drive action uses. */
static void step_of(json_t *v, dp_step_t *step) {
  json_t *arr = json_pack("[O]", json_object_get(v, "step"));
  char *text = json_dumps(arr, JSON_COMPACT), *detail = NULL;
  dp_step_t steps[DP_MAX_STEPS];
  int n = dp_steps_parse(text, steps, &detail);
  ck_assert_msg(n == 1, "step parse: %s", detail ? detail : "?");
  *step = steps[0];
  free(text);
  json_decref(arr);
}

START_TEST(vector) {
  const char *path = vector_paths[_i];
  json_error_t jerr;
  json_t *v = json_load_file(path, 0, &jerr);
  ck_assert_msg(v != NULL, "%s: %s", path, jerr.text);
  dp_step_t step;
  step_of(v, &step);
  json_t *start = json_object_get(v, "start"), *expect = json_object_get(v, "expect");
  dp_plan_t plan;
  const char *error = NULL;
  int rc = dp_plan_make(&step, json_number_value(json_object_get(start, "x")),
                        json_number_value(json_object_get(start, "y")),
                        json_number_value(json_object_get(v, "hz")), &plan, &error);
  json_t *want_error = json_object_get(expect, "error");
  if (want_error) {
    ck_assert_msg(rc == -1, "%s: planned, expected an error", path);
    ck_assert_str_eq(error, json_string_value(want_error));
    ck_assert_uint_eq(plan.n, 0);
    json_decref(v);
    return;
  }
  ck_assert_msg(rc == 0, "%s: %s", path, error ? error : "?");
  json_t *events = json_object_get(expect, "events");
  ck_assert_msg(plan.n == json_array_size(events), "%s: %zu events, expected %zu", path, plan.n,
                json_array_size(events));
  for (size_t i = 0; i < plan.n; i++) {
    json_t *e = json_array_get(events, i);
    const dp_event_t *got = &plan.events[i];
    ck_assert_msg(got->t_us == json_integer_value(json_object_get(e, "t")),
                  "%s: event %zu at %lld us, expected %lld", path, i, (long long)got->t_us,
                  (long long)json_integer_value(json_object_get(e, "t")));
    ck_assert_str_eq(dp_event_kind_name(got->kind), json_string_value(json_object_get(e, "kind")));
    ck_assert_msg(fabs(got->x - json_number_value(json_object_get(e, "x"))) < TOLERANCE &&
                      fabs(got->y - json_number_value(json_object_get(e, "y"))) < TOLERANCE,
                  "%s: event %zu at (%.9f, %.9f)", path, i, got->x, got->y);
  }
  ck_assert_int_eq(plan.duration_us, json_integer_value(json_object_get(expect, "durationUs")));
  json_t *velocity = json_object_get(expect, "velocity");
  ck_assert_int_eq(plan.has_velocity, velocity != NULL);
  if (velocity) {
    ck_assert_double_eq_tol(plan.vx, json_number_value(json_object_get(velocity, "x")), TOLERANCE);
    ck_assert_double_eq_tol(plan.vy, json_number_value(json_object_get(velocity, "y")), TOLERANCE);
  }
  dp_plan_free(&plan);
  json_decref(v);
}
END_TEST

/* Each bad text and what its detail must name. */
static const struct {
  const char *text, *names;
} bad_steps[] = {
    {"{\"scroll\":{}}", "steps must be a JSON array"},
    {"[]", "1-32 steps"},
    {"not json", "steps must be a JSON array"},
    {"[{\"wait\":100},{\"swipe\":{}}]", "steps[1]: unknown key \"swipe\""},
    {"[{\"scroll\":{\"dy\":-100,\"speed\":3}}]", "steps[0].scroll: unknown key \"speed\""},
    {"[{\"scroll\":{\"dy\":-100,\"ms\":20}}]", "steps[0].scroll.ms must be a number 50-10000"},
    {"[{\"scroll\":{\"dy\":-100,\"ms\":10001}}]", "steps[0].scroll.ms"},
    {"[{\"scroll\":{\"dy\":\"-100\"}}]", "steps[0].scroll.dy must be a number"},
    {"[{\"fling\":{\"dy\":-100,\"ms\":300}}]", "steps[0].fling: unknown key \"ms\""},
    {"[{\"fling\":{\"dy\":-100,\"velocity\":99}}]", "steps[0].fling.velocity must be a number 100-20000"},
    {"[{\"fling\":{\"dy\":-100,\"velocity\":20001}}]", "steps[0].fling.velocity"},
    {"[{\"scroll\":{\"dy\":-100,\"in\":\"feed\"}}]", "steps[0].scroll.in must be a finder"},
    {"[{\"tap\":\"key:\"}]", "steps[0].tap must be a finder"},
    {"[{\"tap\":\"label:OK\"}]", "steps[0].tap must be a finder"},
    {"[{\"wait\":10001}]", "steps[0].wait must be a number 0-10000"},
    {"[{\"wait\":-1}]", "steps[0].wait"},
    {"[{\"back\":false}]", "steps[0].back must be true"},
    {"[{\"wait\":1,\"tap\":\"key:a\"}]", "steps[0] must be an object with one of"},
    {"[3]", "steps[0] must be an object"},
};

START_TEST(bad_step) {
  dp_step_t steps[DP_MAX_STEPS];
  char *detail = NULL;
  ck_assert_int_eq(dp_steps_parse(bad_steps[_i].text, steps, &detail), -1);
  ck_assert_ptr_nonnull(detail);
  ck_assert_msg(strstr(detail, bad_steps[_i].names), "%s: detail \"%s\" lacks \"%s\"",
                bad_steps[_i].text, detail, bad_steps[_i].names);
  free(detail);
}
END_TEST

START_TEST(too_many_steps) {
  char text[40 * 12] = "[";
  for (int i = 0; i < 33; i++) strcat(text, i ? ",{\"wait\":1}" : "{\"wait\":1}");
  strcat(text, "]");
  dp_step_t steps[DP_MAX_STEPS];
  char *detail = NULL;
  ck_assert_int_eq(dp_steps_parse(text, steps, &detail), -1);
  ck_assert_ptr_nonnull(strstr(detail, "1-32 steps"));
  free(detail);
  /* 32 is the most, and allowed. */
  size_t len = strlen(text); /* drop the last ",{"wait":1}" */
  text[len - 12] = ']';
  text[len - 11] = '\0';
  ck_assert_int_eq(dp_steps_parse(text, steps, &detail), 32);
}
END_TEST

START_TEST(good_steps) {
  dp_step_t s[DP_MAX_STEPS];
  char *detail = NULL;
  int n = dp_steps_parse("[{\"fling\":{\"dy\":-3000,\"in\":\"key:feed\"}},{\"wait\":300},"
                         "{\"tap\":\"text:Item 3\"},{\"back\":true},{\"scroll\":{\"dx\":5}}]",
                         s, &detail);
  ck_assert_msg(n == 5, "%s", detail ? detail : "?");
  ck_assert_int_eq(s[0].kind, DP_FLING);
  ck_assert_double_eq(s[0].velocity, 4000);
  ck_assert_double_eq(s[0].dx, 0);
  ck_assert_str_eq(s[0].finder, "key:feed");
  ck_assert_int_eq(s[1].kind, DP_WAIT);
  ck_assert_double_eq(s[1].ms, 300);
  ck_assert_int_eq(s[2].kind, DP_TAP);
  ck_assert_str_eq(s[2].finder, "text:Item 3");
  ck_assert_int_eq(s[3].kind, DP_BACK);
  ck_assert_int_eq(s[4].kind, DP_SCROLL);
  ck_assert_double_eq(s[4].ms, 800);
  ck_assert_str_eq(s[4].finder, "");
}
END_TEST

int main(void) {
  vectors_list();
  Suite *s = suite_create("drive_plan");
  TCase *tc = tcase_create("vectors");
  tcase_add_test(tc, enough_vectors);
  if (n_vectors > 0) tcase_add_loop_test(tc, vector, 0, n_vectors);
  suite_add_tcase(s, tc);
  TCase *parse = tcase_create("parse");
  tcase_add_loop_test(parse, bad_step, 0, (int)(sizeof bad_steps / sizeof bad_steps[0]));
  tcase_add_test(parse, too_many_steps);
  tcase_add_test(parse, good_steps);
  suite_add_tcase(s, parse);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  for (int i = 0; i < n_vectors; i++) free(vector_paths[i]);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
