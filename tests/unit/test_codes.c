/* The code tables: names round-trip, and error-ness follows DESIGN 4. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "codes.h"

START_TEST(rpc_messages) {
  ck_assert_str_eq(rpc_error_message(RPC_PARSE_ERROR), "Parse error");
  ck_assert_str_eq(rpc_error_message(-32022), "Unsupported protocol version");
  ck_assert_str_eq(rpc_error_message(12345), "Unknown error");
}
END_TEST

START_TEST(diag_round_trip) {
  for (int c = DIAG_NONE + 1; c < DIAG__COUNT; c++) {
    const char *n = diag_name((diag_code_t)c);
    ck_assert_ptr_nonnull(n);
    ck_assert_int_eq(diag_from_name(n), c);
    ck_assert_ptr_nonnull(diag_hint((diag_code_t)c));
  }
  ck_assert_int_eq(diag_from_name("nope"), DIAG_NONE);
  ck_assert_ptr_null(diag_name(DIAG_NONE));
}
END_TEST

START_TEST(diag_errors_per_design) {
  ck_assert(diag_is_error(DIAG_NOT_CONNECTED));
  ck_assert(diag_is_error(DIAG_UNRESPONSIVE));
  ck_assert(diag_is_error(DIAG_ISOLATE_PAUSED));
  ck_assert(!diag_is_error(DIAG_APP_IDLE));
  ck_assert(!diag_is_error(DIAG_ENGINE_STALLED));
  ck_assert(!diag_is_error(DIAG_FRAMES_PENDING));
}
END_TEST

int main(void) {
  Suite *s = suite_create("codes");
  TCase *tc = tcase_create("tables");
  tcase_add_test(tc, rpc_messages);
  tcase_add_test(tc, diag_round_trip);
  tcase_add_test(tc, diag_errors_per_design);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
