/* budgets: limits against summaries, the boundary (equal passes) and the
 * step just past it, any subset, the empty session, and the validation of a
 * budgets object. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "budgets.h"

static json_t *summary(json_int_t frames, double ratio, json_int_t frozen, json_int_t build_p90,
                       json_int_t raster_p90) {
  json_t *s =
      json_pack("{s:I,s:I,s:{s:I,s:f,s:I}}", "frames", frames, "budgetUs", (json_int_t)16667,
                "jank", "frames", (json_int_t)0, "ratio", ratio, "frozen", frozen);
  if (frames > 0) {
    json_object_set_new(
        s, "buildUs",
        json_pack("{s:I,s:I,s:I}", "avg", build_p90 / 2, "p50", build_p90 / 2, "p90", build_p90));
    json_object_set_new(s, "rasterUs",
                        json_pack("{s:I,s:I,s:I}", "avg", raster_p90 / 2, "p50", raster_p90 / 2,
                                  "p90", raster_p90));
  }
  return s;
}

static json_t *all_budgets(void) {
  return json_pack("{s:f,s:f,s:f,s:i}", "jankRatioMax", 0.05, "buildP90MsMax", 5.2,
                   "rasterP90MsMax", 8.0, "frozenMax", 1);
}

static const json_t *failed_named(const json_t *r, const char *name) {
  size_t i;
  json_t *f;
  json_array_foreach(json_object_get(r, "failed"), i,
                     f) if (!strcmp(json_string_value(json_object_get(f, "name")), name)) return f;
  return NULL;
}

START_TEST(equal_to_limit_passes) {
  json_t *b = all_budgets(), *s = summary(100, 0.05, 1, 5200, 8000);
  json_t *r = budgets_eval(b, s);
  ck_assert_str_eq(json_string_value(json_object_get(r, "verdict")), "pass");
  ck_assert_int_eq(json_array_size(json_object_get(r, "failed")), 0);
  ck_assert_int_eq(json_array_size(json_object_get(r, "checked")), 4);
  ck_assert_ptr_null(json_object_get(r, "note"));
  json_decref(r);
  json_decref(s);
  json_decref(b);
}
END_TEST

START_TEST(just_over_limit_fails) {
  /* One µs, one frozen frame, 0.0001 of ratio past each limit. */
  json_t *b = all_budgets(), *s = summary(100, 0.0501, 2, 5201, 8001);
  json_t *r = budgets_eval(b, s);
  ck_assert_str_eq(json_string_value(json_object_get(r, "verdict")), "fail");
  ck_assert_int_eq(json_array_size(json_object_get(r, "failed")), 4);
  const json_t *f = failed_named(r, "buildP90MsMax");
  ck_assert_ptr_nonnull(f);
  ck_assert_double_eq_tol(json_real_value(json_object_get(f, "limit")), 5.2, 1e-12);
  ck_assert_double_eq_tol(json_real_value(json_object_get(f, "actual")), 5.201, 1e-12);
  f = failed_named(r, "frozenMax");
  ck_assert_int_eq(json_integer_value(json_object_get(f, "actual")), 2);
  ck_assert_int_eq(json_integer_value(json_object_get(f, "limit")), 1);
  f = failed_named(r, "jankRatioMax");
  ck_assert_double_eq_tol(json_real_value(json_object_get(f, "actual")), 0.0501, 1e-12);
  ck_assert_ptr_nonnull(failed_named(r, "rasterP90MsMax"));
  json_decref(r);
  json_decref(s);
  json_decref(b);
}
END_TEST

START_TEST(subset_checks_only_what_was_given) {
  /* Raster far over 8 ms, but only the build budget is set: pass. */
  json_t *b = json_pack("{s:f}", "buildP90MsMax", 6.0), *s = summary(50, 0.5, 9, 5999, 90000);
  json_t *r = budgets_eval(b, s);
  ck_assert_str_eq(json_string_value(json_object_get(r, "verdict")), "pass");
  ck_assert_int_eq(json_array_size(json_object_get(r, "checked")), 1);
  ck_assert_str_eq(json_string_value(json_array_get(json_object_get(r, "checked"), 0)),
                   "buildP90MsMax");
  json_decref(r);
  json_decref(b);
  /* An integer limit works for the ms budgets too. */
  b = json_pack("{s:i}", "buildP90MsMax", 5);
  r = budgets_eval(b, s);
  ck_assert_str_eq(json_string_value(json_object_get(r, "verdict")), "fail");
  ck_assert_double_eq_tol(
      json_real_value(json_object_get(failed_named(r, "buildP90MsMax"), "actual")), 5.999, 1e-12);
  json_decref(r);
  json_decref(s);
  json_decref(b);
}
END_TEST

START_TEST(empty_session_fails_nothing_and_says_so) {
  json_t *b = all_budgets(), *s = summary(0, 0, 0, 0, 0);
  json_t *r = budgets_eval(b, s);
  ck_assert_str_eq(json_string_value(json_object_get(r, "verdict")), "pass");
  ck_assert_int_eq(json_array_size(json_object_get(r, "failed")), 0);
  ck_assert_int_eq(json_array_size(json_object_get(r, "checked")), 0);
  ck_assert_int_eq(json_array_size(json_object_get(r, "unmeasured")), 4);
  ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(r, "note")), "no frames"));
  json_decref(r);
  json_decref(s);
  json_decref(b);
}
END_TEST

/* The one line check prints and the text block shows, from the verdicts
 * budgets_eval gives: pass, fail with each broken limit, unmeasured, the
 * empty session, and a buffer too small (cut, NUL-terminated, length as
 * snprintf reports it). */
START_TEST(format_line) {
  char line[256];
  json_t *b = all_budgets(), *s = summary(100, 0.02, 0, 5000, 7000);
  json_t *r = budgets_eval(b, s);
  budgets_format(r, line, sizeof line);
  ck_assert_str_eq(line, "budgets: PASS (4 checked)");
  json_decref(r);
  json_decref(s);
  s = summary(100, 0.25, 3, 5201, 7000);
  r = budgets_eval(b, s);
  int n = budgets_format(r, line, sizeof line);
  ck_assert_str_eq(line,
                   "budgets: FAIL jankRatioMax 0.25 > 0.05; buildP90MsMax 5.201 > 5.2; "
                   "frozenMax 3 > 1 (1 of 4 passed)");
  ck_assert_int_eq(n, (int)strlen(line));
  char small[16];
  ck_assert_int_eq(budgets_format(r, small, sizeof small), n);
  ck_assert_str_eq(small, "budgets: FAIL j");
  json_decref(r);
  json_decref(s);
  /* A budget the summary cannot judge is named, not passed silently. */
  s = summary(100, 0.02, 0, 5000, 7000);
  json_object_del(s, "rasterUs");
  r = budgets_eval(b, s);
  budgets_format(r, line, sizeof line);
  ck_assert_str_eq(line, "budgets: PASS (3 checked; not measured: rasterP90MsMax)");
  json_decref(r);
  json_decref(s);
  s = summary(0, 0, 0, 0, 0);
  r = budgets_eval(b, s);
  budgets_format(r, line, sizeof line);
  ck_assert_str_eq(line,
                   "budgets: PASS (0 checked; not measured: jankRatioMax, buildP90MsMax, "
                   "rasterP90MsMax, frozenMax; no frames were measured, so no budget could "
                   "fail)");
  json_decref(r);
  json_decref(s);
  json_decref(b);
}
END_TEST

START_TEST(validation) {
  char err[256];
  const char *bad[][2] = {
      {"[]", "budgets: must be an object"},
      {"{}", "budgets: give at least one"},
      {"{\"jankRatioMax\": 1.5}", "budgets.jankRatioMax: must be a number from 0 to 1"},
      {"{\"jankRatioMax\": \"0.1\"}", "budgets.jankRatioMax"},
      {"{\"buildP90MsMax\": 0}", "budgets.buildP90MsMax: must be a number of ms above 0"},
      {"{\"rasterP90MsMax\": -1}", "budgets.rasterP90MsMax"},
      {"{\"frozenMax\": 1.5}", "budgets.frozenMax: must be an integer >= 0"},
      {"{\"frozenMax\": -1}", "budgets.frozenMax"},
      {"{\"jankRatio\": 0.1}", "budgets.jankRatio: unknown"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    json_t *j = json_loads(bad[i][0], JSON_DECODE_ANY, NULL);
    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq(budgets_validate(j, err, sizeof err), -1);
    ck_assert_msg(strstr(err, bad[i][1]) != NULL, "%s → %s", bad[i][0], err);
    json_decref(j);
  }
  json_t *ok = all_budgets();
  ck_assert_int_eq(budgets_validate(ok, err, sizeof err), 0);
  json_decref(ok);
  ok = json_pack("{s:i,s:i}", "jankRatioMax", 0, "frozenMax", 0);
  ck_assert_int_eq(budgets_validate(ok, err, sizeof err), 0);
  json_decref(ok);
}
END_TEST

int main(void) {
  Suite *s = suite_create("budgets");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, equal_to_limit_passes);
  tcase_add_test(tc, just_over_limit_fails);
  tcase_add_test(tc, subset_checks_only_what_was_given);
  tcase_add_test(tc, empty_session_fails_nothing_and_says_so);
  tcase_add_test(tc, format_line);
  tcase_add_test(tc, validation);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
