/* Tool-argument validation against the real embedded input schema and small
 * hand-made schemas: every keyword, and the message names the field and what
 * is allowed. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "frames_tool.h"
#include "validate.h"

static json_t *schema;

static void setup(void) {
  schema = frames_tool_input_schema_new();
}
static void teardown(void) {
  json_decref(schema);
}

/* Validates args (JSON text); returns the message, "" when valid. */
static const char *check(const char *args_text) {
  static char err[512];
  json_t *args = json_loads(args_text, JSON_DECODE_ANY, NULL);
  ck_assert_msg(args != NULL, "bad test JSON %s", args_text);
  err[0] = '\0';
  int rc = validate_args(schema, args, err, sizeof err);
  json_decref(args);
  ck_assert_int_eq(rc != 0, err[0] != '\0');
  return err;
}

START_TEST(valid_arguments) {
  ck_assert_str_eq(check("{}"), "");
  ck_assert_str_eq(
      check("{\"action\":\"capture\",\"durationMs\":100,\"trackWidgets\":true,\"chart\":\"svg\"}"),
      "");
  ck_assert_str_eq(check("{\"limit\":0}"), "");
  ck_assert_str_eq(check("{\"limit\":1000}"), "");
  ck_assert_str_eq(check("{\"limit\":20.0}"), ""); /* an integral real is an integer */
  ck_assert_str_eq(check("{\"budgetMs\":0.001}"), "");
  ck_assert_str_eq(check("{\"interactionId\":\" ~\"}"), "");
  /* 64 two-byte characters: lengths count code points, not bytes */
  char buf[300] = "{\"linkedBy\":\"";
  for (int i = 0; i < 64; i++) strcat(buf, "\xc3\xa9");
  strcat(buf, "\"}");
  ck_assert_str_eq(check(buf), "");
}
END_TEST

START_TEST(each_keyword_rejects) {
  ck_assert_str_eq(check("{\"limit\":5000}"), "limit: must be an integer from 0 to 1000, got 5000");
  ck_assert_str_eq(check("{\"limit\":-1}"), "limit: must be an integer from 0 to 1000, got -1");
  ck_assert_str_eq(check("{\"limit\":1.5}"),
                   "limit: must be an integer from 0 to 1000, got a number 1.5");
  ck_assert_str_eq(check("{\"limit\":\"3\"}"),
                   "limit: must be an integer from 0 to 1000, got a string \"3\"");
  ck_assert_str_eq(check("{\"budgetMs\":0}"),
                   "budgetMs: must be a number above 0 and at most 10000, got 0");
  ck_assert_str_eq(check("{\"budgetMs\":true}"),
                   "budgetMs: must be a number above 0 and at most 10000, got a boolean true");
  ck_assert_str_eq(check("{\"trackPaints\":1}"),
                   "trackPaints: must be a boolean, got an integer 1");
  ck_assert_str_eq(check("{\"cursor\":7}"), "cursor: must be a string, got an integer 7");
  ck_assert_str_eq(check("{\"action\":\"go\"}"),
                   "action: must be one of \"status\", \"start\", \"mark\", \"read\", \"stop\", "
                   "\"capture\", \"compare\", got \"go\"");
  ck_assert_str_eq(check("{\"linkedBy\":\"\"}"),
                   "linkedBy: must be a string of 1 to 64 characters, got \"\" (0 characters)");
  ck_assert_str_eq(check("{\"interactionId\":\"tab\\t\"}"),
                   "interactionId: must be a string of 1 to 128 characters of printable ASCII "
                   "(0x20-0x7E), got \"tab\\t\" (4 characters)");
  ck_assert_str_eq(check("{\"interactionId\":\"\\u00e9\"}"),
                   "interactionId: must be a string of 1 to 128 characters of printable ASCII "
                   "(0x20-0x7E), got \"\xc3\xa9\" (1 characters)");
  ck_assert(strncmp(check("{\"bogus\":1}"),
                    "bogus: unknown field; allowed fields are action, vmServiceUri,", 61) == 0);
  ck_assert_str_eq(check("[]"), "arguments: must be an object, got an array");
  /* A long value is cut for the message on a character boundary. */
  char buf[400] = "{\"linkedBy\":\"";
  for (int i = 0; i < 100; i++) strcat(buf, "\xc3\xa9");
  strcat(buf, "\"}");
  const char *m = check(buf);
  ck_assert_ptr_nonnull(strstr(m, "...\" (100 characters)") ? m
                                                            : strstr(m, "... (100 characters)"));
  json_t *ok = json_string(m);
  ck_assert_ptr_nonnull(ok); /* still valid UTF-8 */
  json_decref(ok);
}
END_TEST

START_TEST(required_and_exclusive_maximum) {
  json_t *s = json_loads(
      "{\"type\":\"object\",\"required\":[\"n\"],\"properties\":{\"n\":{\"type\":\"number\","
      "\"exclusiveMaximum\":1}}}",
      0, NULL);
  char err[256];
  json_t *a = json_loads("{}", 0, NULL);
  ck_assert_int_eq(validate_args(s, a, err, sizeof err), -1);
  ck_assert_str_eq(err, "n: is required");
  json_decref(a);
  a = json_loads("{\"n\":1}", 0, NULL);
  ck_assert_int_eq(validate_args(s, a, err, sizeof err), -1);
  ck_assert_str_eq(err, "n: must be a number below 1, got 1");
  json_decref(a);
  a = json_loads("{\"n\":0.5,\"extra\":1}", 0, NULL); /* no additionalProperties:false here */
  ck_assert_int_eq(validate_args(s, a, err, sizeof err), 0);
  json_decref(a);
  json_decref(s);
}
END_TEST

START_TEST(schema_check) {
  char err[256];
  ck_assert_int_eq(validate_schema_check(schema, err, sizeof err), 0);
  json_t *s = json_loads(
      "{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"string\",\"format\":\"uri\"}}}", 0,
      NULL);
  ck_assert_int_eq(validate_schema_check(s, err, sizeof err), -1);
  ck_assert_str_eq(err, "x: keyword format is not supported by the validator");
  json_decref(s);
  s = json_loads(
      "{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"string\",\"pattern\":\"^a$\"}}}", 0,
      NULL);
  ck_assert_int_eq(validate_schema_check(s, err, sizeof err), -1);
  json_decref(s);
}
END_TEST

int main(void) {
  Suite *su = suite_create("validate");
  TCase *tc = tcase_create("validate");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, valid_arguments);
  tcase_add_test(tc, each_keyword_rejects);
  tcase_add_test(tc, required_and_exclusive_maximum);
  tcase_add_test(tc, schema_check);
  suite_add_tcase(su, tc);
  SRunner *sr = srunner_create(su);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
