/* vm_isolate's pure decisions (vm_isolate.c and vm_call.c), reached by including the .c: which pause
 * kinds stop extension calls (native vs web), extension presence, and the
 * stringification of extension params (the VM hands Map<String,String>). */
#include "../../server/vm_isolate.c"
#include "../../server/vm_call.c"

#include <check.h>

START_TEST(pause_kinds) {
  static const char *paused[] = {"PauseStart",       "PauseExit",      "PauseBreakpoint",
                                 "PauseInterrupted", "PauseException", "PausePostRequest"};
  for (size_t i = 0; i < sizeof paused / sizeof *paused; i++)
    ck_assert_msg(kind_is_paused(paused[i], RUNTIME_NATIVE), "%s", paused[i]);
  static const char *running[] = {"Resume", "None", "BreakpointAdded", "PauseSomethingNew", ""};
  for (size_t i = 0; i < sizeof running / sizeof *running; i++)
    ck_assert_msg(!kind_is_paused(running[i], RUNTIME_NATIVE), "%s", running[i]);
  ck_assert(!kind_is_paused(NULL, RUNTIME_NATIVE));
  /* DWDS reports PauseStart for a running page; a real breakpoint still counts */
  ck_assert(!kind_is_paused("PauseStart", RUNTIME_WEB));
  ck_assert(kind_is_paused("PauseBreakpoint", RUNTIME_WEB));
  ck_assert(kind_is_paused("PauseStart", RUNTIME_UNKNOWN));
}
END_TEST

START_TEST(extension_presence) {
  json_t *iso = json_loads(
      "{\"extensionRPCs\":[\"ext.flutter.reassemble\",\"ext.telescope.frames\"]}", 0, NULL);
  ck_assert(lists_extension(iso, "ext.telescope.frames"));
  ck_assert(!lists_extension(iso, "ext.telescope"));
  json_decref(iso);
  iso = json_loads("{\"type\":\"Isolate\"}", 0, NULL); /* omitted when empty */
  ck_assert(!lists_extension(iso, "ext.telescope.frames"));
  json_decref(iso);
  iso = json_loads("{\"extensionRPCs\":[1,null,{\"x\":\"ext.telescope.frames\"}]}", 0, NULL);
  ck_assert(!lists_extension(iso, "ext.telescope.frames"));
  json_decref(iso);
}
END_TEST

START_TEST(params_become_strings) {
  json_t *in = json_loads(
      "{\"action\":\"read\",\"since\":42,\"ratio\":1.5,\"on\":true,\"off\":false,"
      "\"nothing\":null,\"obj\":{\"a\":1,\"b\":[1,2]},\"list\":[1,\"x\"],"
      "\"isolateId\":\"isolates/999\"}",
      0, NULL);
  json_t *out = stringify_params(in);
  const char *k;
  json_t *v;
  json_object_foreach(out, k, v) ck_assert_msg(json_is_string(v), "%s is not a string", k);
  ck_assert_str_eq(json_string_value(json_object_get(out, "action")), "read");
  ck_assert_str_eq(json_string_value(json_object_get(out, "since")), "42");
  ck_assert_str_eq(json_string_value(json_object_get(out, "ratio")), "1.5");
  ck_assert_str_eq(json_string_value(json_object_get(out, "on")), "true");
  ck_assert_str_eq(json_string_value(json_object_get(out, "off")), "false");
  ck_assert_str_eq(json_string_value(json_object_get(out, "nothing")), "null");
  ck_assert_str_eq(json_string_value(json_object_get(out, "obj")), "{\"a\":1,\"b\":[1,2]}");
  ck_assert_str_eq(json_string_value(json_object_get(out, "list")), "[1,\"x\"]");
  /* the caller never picks the isolate: vm_app adds its own */
  ck_assert_ptr_null(json_object_get(out, "isolateId"));
  json_decref(out);
  json_decref(in);
  out = stringify_params(NULL);
  ck_assert_int_eq(json_object_size(out), 0);
  json_decref(out);
}
END_TEST

START_TEST(web_internal_errors_told_apart) {
  static const struct {
    const char *error;
    int is_watcher;
    diag_code_t want;
  } cases[] = {
      {"{\"code\":-32603,\"message\":\"Unexpected DWDS error for callServiceExtension: "
       "TimeoutException after 0:00:10.000000\"}",
       1, DIAG_UNRESPONSIVE},
      {"{\"code\":-32603,\"message\":\"Unexpected DWDS error for callServiceExtension: Bad "
       "state: No clients available for service extension\"}",
       1, DIAG_NOT_CONNECTED},
      {"{\"code\":-32603,\"message\":\"Unexpected null value\"}", 1, DIAG_WATCHER_MISSING},
      {"{\"code\":-32603,\"message\":\"Internal error\",\"data\":{\"details\":\"Unknown "
       "service method: ext.telescope.frames\"}}",
       1, DIAG_WATCHER_MISSING},
      /* a profile switch failing is not the watcher missing */
      {"{\"code\":-32603,\"message\":\"Unexpected null value\"}", 0, DIAG_NONE},
      {"{\"code\":-32603,\"message\":\"Bad state: something else\"}", 1, DIAG_NONE},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    json_t *e = json_loads(cases[i].error, 0, NULL);
    ck_assert_ptr_nonnull(e);
    ck_assert_msg(web_internal_error_diag(e, cases[i].is_watcher) == cases[i].want, "case %zu", i);
    json_decref(e);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("vm_isolate_pure");
  TCase *tc = tcase_create("pure");
  tcase_add_test(tc, pause_kinds);
  tcase_add_test(tc, extension_presence);
  tcase_add_test(tc, params_become_strings);
  tcase_add_test(tc, web_internal_errors_told_apart);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
