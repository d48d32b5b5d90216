/* report: Flutter's TimelineSummary keys from hand-computed frames (the
 * 16 ms boundary included), the empty case, and the report's own members. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static double num(const json_t *o, const char *k) {
  const json_t *v = json_object_get(o, k);
  ck_assert_msg(v != NULL, "missing %s", k);
  return json_number_value(v);
}

START_TEST(timeline_summary_keys) {
  /* Build µs sorted: 3000 4000 5000 6000 7000 8000 9000 16000 16001 30000.
   * Sum 104 001 → average 10.4001 ms. p90: round(9·0.9 = 8.1) = 8 → 16.001;
   * p99: round(8.91) = 9 → 30; worst 30. Missed (> 16 000 µs, strictly):
   * 16001 and 30000 → 2; exactly 16 000 is not missed. Raster: 2000 each,
   * one 16000 → average (9·2 + 16)/10 = 3.4, missed 0. */
  int64_t build[] = {4000, 16000, 16001, 3000, 5000, 6000, 7000, 8000, 9000, 30000};
  frame_t f[10];
  memset(f, 0, sizeof f);
  for (int i = 0; i < 10; i++) {
    f[i].seq = i + 1;
    f[i].build_us = build[i];
    f[i].raster_us = i == 4 ? 16000 : 2000;
  }
  json_t *o = report_timeline_summary(f, 10);
  ck_assert_double_eq_tol(num(o, "average_frame_build_time_millis"), 10.4001, 1e-12);
  ck_assert_double_eq_tol(num(o, "90th_percentile_frame_build_time_millis"), 16.001, 1e-12);
  ck_assert_double_eq_tol(num(o, "99th_percentile_frame_build_time_millis"), 30, 1e-12);
  ck_assert_double_eq_tol(num(o, "worst_frame_build_time_millis"), 30, 1e-12);
  ck_assert_int_eq(json_integer_value(json_object_get(o, "missed_frame_build_budget_count")), 2);
  ck_assert_double_eq_tol(num(o, "average_frame_rasterizer_time_millis"), 3.4, 1e-12);
  ck_assert_double_eq_tol(num(o, "90th_percentile_frame_rasterizer_time_millis"), 2, 1e-12);
  ck_assert_double_eq_tol(num(o, "99th_percentile_frame_rasterizer_time_millis"), 16, 1e-12);
  ck_assert_double_eq_tol(num(o, "worst_frame_rasterizer_time_millis"), 16, 1e-12);
  ck_assert_int_eq(json_integer_value(json_object_get(o, "missed_frame_rasterizer_budget_count")),
                   0);
  ck_assert_int_eq(json_integer_value(json_object_get(o, "frame_count")), 10);
  ck_assert_int_eq(json_integer_value(json_object_get(o, "frame_rasterizer_count")), 10);
  ck_assert_int_eq(json_object_size(o), 12);
  /* The frames themselves were not reordered. */
  ck_assert_int_eq(f[0].build_us, 4000);
  json_decref(o);
}
END_TEST

START_TEST(empty_and_report_members) {
  json_t *o = report_timeline_summary(NULL, 0);
  ck_assert_int_eq(json_integer_value(json_object_get(o, "frame_count")), 0);
  ck_assert_ptr_null(json_object_get(o, "average_frame_build_time_millis"));
  json_decref(o);

  json_t *diag = json_pack("{s:s}", "code", "app_idle");
  report_input_t in = {"0.1.0", 2000, "scroll", NULL, NULL, NULL, NULL, diag, NULL, 0, 1, 2};
  json_t *r = report_new(&in);
  ck_assert_str_eq(json_string_value(json_object_get(r, "generator")), "telescope-mcp check");
  ck_assert_int_eq(json_integer_value(json_object_get(r, "exitCode")), 2);
  ck_assert_int_eq(json_integer_value(json_object_get(r, "durationMs")), 2000);
  ck_assert_str_eq(json_string_value(json_object_get(r, "interactionId")), "scroll");
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r, "diagnosis"), "code")),
                   "app_idle");
  ck_assert_ptr_null(json_object_get(r, "summary"));
  json_decref(r);
  json_decref(diag);
}
END_TEST

int main(void) {
  Suite *s = suite_create("report");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, timeline_summary_keys);
  tcase_add_test(tc, empty_and_report_members);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
