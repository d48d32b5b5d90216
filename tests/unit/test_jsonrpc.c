/* JSON-RPC classification and builders, fed JSON directly. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "codes.h"
#include "jsonrpc.h"

static jsonrpc_msg_t classify(const char *text, json_t **keep) {
  char why[160];
  *keep = jsonrpc_parse(text, strlen(text), why, sizeof why);
  ck_assert_msg(*keep != NULL, "parse failed: %s", why);
  jsonrpc_msg_t m;
  jsonrpc_classify(*keep, &m);
  return m;
}

START_TEST(request_and_notification) {
  json_t *j;
  jsonrpc_msg_t m =
      classify("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\",\"params\":{}}", &j);
  ck_assert_int_eq(m.kind, JSONRPC_REQUEST);
  ck_assert_str_eq(m.method, "ping");
  ck_assert(json_is_integer(m.id) && json_integer_value(m.id) == 0); /* id 0 is an id */
  ck_assert_ptr_nonnull(m.params);
  json_decref(j);
  m = classify("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &j);
  ck_assert_int_eq(m.kind, JSONRPC_NOTIFICATION);
  ck_assert_ptr_null(m.id);
  json_decref(j);
  m = classify("{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"result\":{}}", &j);
  ck_assert_int_eq(m.kind, JSONRPC_RESPONSE);
  json_decref(j);
}
END_TEST

START_TEST(invalid_shapes) {
  static const struct {
    const char *text;
    int keeps_id;
  } cases[] = {
      {"42", 0},
      {"[1]", 0},
      {"{\"id\":1,\"method\":\"ping\"}", 1},
      {"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", 1},
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}", 1},
      {"{\"jsonrpc\":\"2.0\",\"id\":1}", 1},
      {"{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"ping\"}", 0},
      {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", 0},
      {"{\"jsonrpc\":\"2.0\",\"id\":false,\"method\":\"ping\"}", 0},
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":3}", 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    json_t *j;
    jsonrpc_msg_t m = classify(cases[i].text, &j);
    ck_assert_msg(m.kind == JSONRPC_INVALID, "%s", cases[i].text);
    ck_assert_int_eq(m.error, RPC_INVALID_REQUEST);
    ck_assert_ptr_nonnull(m.why);
    ck_assert_msg((m.id != NULL) == cases[i].keeps_id, "%s", cases[i].text);
    json_decref(j);
  }
}
END_TEST

START_TEST(parse_failures) {
  static const char *bad[] = {"not json", "{\"a\":", "{\"id\":99999999999999999999}",
                              "{\"a\":\"\xff\"}", "{}{}"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char why[160] = "";
    json_t *j = jsonrpc_parse(bad[i], strlen(bad[i]), why, sizeof why);
    ck_assert_msg(j == NULL, "%s parsed", bad[i]);
    ck_assert_msg(strlen(why) > 0, "no reason for %s", bad[i]);
    for (const char *p = why; *p; p++) ck_assert(*p >= 0x20 && *p < 0x7f); /* safe to embed */
  }
}
END_TEST

START_TEST(builders) {
  json_t *id = json_string("x");
  json_t *r = jsonrpc_result_new(id, json_object());
  char *s = json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS);
  ck_assert_str_eq(s, "{\"id\":\"x\",\"jsonrpc\":\"2.0\",\"result\":{}}");
  free(s);
  json_decref(r);
  r = jsonrpc_error_new(NULL, RPC_PARSE_ERROR, NULL, NULL);
  s = json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS);
  ck_assert_str_eq(s,
                   "{\"error\":{\"code\":-32700,\"message\":\"Parse error\"},\"jsonrpc\":\"2.0\"}");
  free(s);
  json_decref(r);
  /* An unusable id is left out, never written as null. */
  json_t *bad = json_real(1.5);
  r = jsonrpc_error_new(bad, RPC_INVALID_REQUEST, "m", json_pack("{s:i}", "a", 1));
  ck_assert_ptr_null(json_object_get(r, "id"));
  ck_assert_int_eq(json_integer_value(
                       json_object_get(json_object_get(json_object_get(r, "error"), "data"), "a")),
                   1);
  json_decref(r);
  json_decref(bad);
  json_decref(id);
}
END_TEST

int main(void) {
  Suite *su = suite_create("jsonrpc");
  TCase *tc = tcase_create("jsonrpc");
  tcase_add_test(tc, request_and_notification);
  tcase_add_test(tc, invalid_shapes);
  tcase_add_test(tc, parse_failures);
  tcase_add_test(tc, builders);
  suite_add_tcase(su, tc);
  SRunner *sr = srunner_create(su);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
