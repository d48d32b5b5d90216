/* diagnose: every code and every branch of the decision (DESIGN 4 table and
 * procedure), the re-read / probe steps as the tool layer drives them, and
 * the evidence each diagnosis carries. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose.h"

/* A healthy, connected app whose read found nothing, nothing known before. */
static diagnose_facts_t base(void) {
  diagnose_facts_t f;
  memset(&f, 0, sizeof f);
  f.connected = 1;
  f.watcher_present = 1;
  f.session_active = 1;
  f.frames_enabled = -1;
  f.elapsed_ms = -1;
  return f;
}

static void expect_final(const diagnose_facts_t *f, diag_code_t want) {
  diagnose_step_t s = diagnose_step(f);
  ck_assert_int_eq(s.next, DIAGNOSE_NEXT_NONE);
  ck_assert_msg(s.code == want, "got %s, want %s", diag_name(s.code) ? diag_name(s.code) : "none",
                diag_name(want) ? diag_name(want) : "none");
}

START_TEST(connection_problems_in_order) {
  diagnose_facts_t f = base();
  f.rejected = 1, f.connected = 0, f.watcher_present = 0;
  expect_final(&f, DIAG_CONNECTION_REJECTED);
  f.rejected = 0;
  expect_final(&f, DIAG_NOT_CONNECTED);
  f.connected = 1;
  f.paused = 1, f.timed_out = 1;
  expect_final(&f, DIAG_WATCHER_MISSING);
  f.watcher_present = 1;
  expect_final(&f, DIAG_ISOLATE_PAUSED);
  f.paused = 0;
  expect_final(&f, DIAG_UNRESPONSIVE);
}
END_TEST

/* No watcher: a plain Dart program (known, no Flutter extension, no frame
 * event) is not_flutter; anything that says Flutter, or an extension list
 * that proves nothing (web), keeps watcher_missing. */
START_TEST(watcher_absent_or_not_flutter) {
  ck_assert_int_eq(diagnose_watcher_absent(1, 0, 0), DIAG_NOT_FLUTTER);
  ck_assert_int_eq(diagnose_watcher_absent(1, 1, 0), DIAG_WATCHER_MISSING);
  ck_assert_int_eq(diagnose_watcher_absent(1, 0, 3), DIAG_WATCHER_MISSING);
  ck_assert_int_eq(diagnose_watcher_absent(0, 0, 0), DIAG_WATCHER_MISSING);
  ck_assert(diag_is_error(DIAG_NOT_FLUTTER));
  ck_assert_str_eq(diag_name(DIAG_NOT_FLUTTER), "not_flutter");
  ck_assert_ptr_null(strstr(diag_hint(DIAG_NOT_FLUTTER), "TelescopePlugin"));
  ck_assert_ptr_nonnull(strstr(diag_hint(DIAG_NOT_FLUTTER), "vmServiceUri"));
}
END_TEST

START_TEST(restart_and_loss) {
  diagnose_facts_t f = base();
  f.restarted = 1, f.frames_lost = 4, f.new_frames = 10;
  expect_final(&f, DIAG_APP_RESTARTED); /* restart explains the gap */
  f.restarted = 0;
  expect_final(&f, DIAG_FRAMES_LOST);
  f.new_frames = 0; /* lost and nothing new: still frames_lost, no probe */
  expect_final(&f, DIAG_FRAMES_LOST);
  f.timed_out = 1;
  expect_final(&f, DIAG_UNRESPONSIVE);
}
END_TEST

START_TEST(frames_present) {
  diagnose_facts_t f = base();
  f.new_frames = 3, f.new_frames_have_blocks = 1;
  expect_final(&f, DIAG_NONE); /* all well: no diagnosis */
  f.session_active = 0, f.new_frames_have_blocks = 0;
  expect_final(&f, DIAG_ATTRIBUTION_OFF);
  f.new_frames_have_blocks = 1; /* blocks from some other session: attribution is on */
  expect_final(&f, DIAG_NONE);
  f.session_active = 1, f.new_frames_have_blocks = 0; /* in a session, a frame with no block */
  expect_final(&f, DIAG_NONE);
}
END_TEST

START_TEST(liveness_moved_rereads_then_pending) {
  diagnose_facts_t f = base();
  f.liveness_before_known = 1, f.liveness_before = 100, f.liveness_now = 112;
  diagnose_step_t s = diagnose_step(&f);
  ck_assert_int_eq(s.next, DIAGNOSE_NEXT_REREAD);
  ck_assert_int_eq(s.delay_ms, 150);
  f.reread_done = 1; /* the tool re-read and still found nothing */
  expect_final(&f, DIAG_FRAMES_PENDING);
  f.new_frames = 2; /* the re-read found them */
  expect_final(&f, DIAG_NONE);
}
END_TEST

START_TEST(liveness_flat_or_unknown_watches_then_probes) {
  diagnose_facts_t f = base();
  /* Unknown before: watch the counter, untouched, first. */
  diagnose_step_t s = diagnose_step(&f);
  ck_assert_int_eq(s.next, DIAGNOSE_NEXT_WATCH);
  ck_assert_int_eq(s.delay_ms, DIAGNOSE_WATCH_MS);
  /* It moved by itself: the app is drawing, never idle; re-read, then pending. */
  f.watch = DIAGNOSE_WATCH_MOVED;
  s = diagnose_step(&f);
  ck_assert_int_eq(s.next, DIAGNOSE_NEXT_REREAD);
  f.reread_done = 1;
  expect_final(&f, DIAG_FRAMES_PENDING);
  f.reread_done = 0;
  /* Still through the watch: now the probe decides. */
  f.watch = DIAGNOSE_WATCH_STILL;
  s = diagnose_step(&f);
  ck_assert_int_eq(s.next, DIAGNOSE_NEXT_PROBE);
  ck_assert_int_eq(s.delay_ms, 500);
  /* Flat: probe as well, even after a re-read. */
  f.liveness_before_known = 1, f.liveness_before = 100, f.liveness_now = 100, f.reread_done = 1;
  s = diagnose_step(&f);
  ck_assert_int_eq(s.next, DIAGNOSE_NEXT_PROBE);
  f.probe = DIAGNOSE_PROBE_MOVED;
  expect_final(&f, DIAG_APP_IDLE);
  /* The tool refreshes liveness_now after the probe: the probe's own frame
   * moved it, which is app_idle, not a re-read. */
  f.liveness_now = 101;
  expect_final(&f, DIAG_APP_IDLE);
  f.liveness_now = 100;
  f.probe = DIAGNOSE_PROBE_NOT_MOVED;
  expect_final(&f, DIAG_ENGINE_STALLED);
  f.liveness_before_known = 0;
  expect_final(&f, DIAG_ENGINE_STALLED);
  /* A counter that went backwards (a restart the caller missed) is not "moved". */
  f.liveness_before_known = 1, f.liveness_before = 500, f.liveness_now = 3, f.probe = 0;
  ck_assert_int_eq(diagnose_step(&f).next, DIAGNOSE_NEXT_PROBE); /* (watched: still) */
  f.watch = DIAGNOSE_WATCH_NOT_DONE;
  ck_assert_int_eq(diagnose_step(&f).next, DIAGNOSE_NEXT_WATCH);
}
END_TEST

START_TEST(evidence) {
  diagnose_facts_t f = base();
  f.liveness_before_known = 1, f.liveness_before = 100, f.liveness_now = 100;
  f.probe = DIAGNOSE_PROBE_NOT_MOVED, f.liveness_after_probe = 100;
  f.lifecycle = "hidden", f.frames_enabled = 0, f.elapsed_ms = 2000;
  json_t *d = diagnose_to_json(DIAG_ENGINE_STALLED, &f), *ev = json_object_get(d, "evidence");
  ck_assert_str_eq(json_string_value(json_object_get(d, "code")), "engine_stalled");
  ck_assert_str_eq(json_string_value(json_object_get(d, "message")),
                   diag_message(DIAG_ENGINE_STALLED));
  ck_assert_str_eq(json_string_value(json_object_get(d, "hint")), diag_hint(DIAG_ENGINE_STALLED));
  ck_assert_str_eq(json_string_value(json_object_get(ev, "probe")), "not_moved");
  ck_assert_str_eq(json_string_value(json_object_get(ev, "lifecycle")), "hidden");
  ck_assert(json_is_false(json_object_get(ev, "framesEnabled")));
  ck_assert_int_eq(json_integer_value(json_object_get(ev, "livenessBefore")), 100);
  ck_assert_int_eq(json_integer_value(json_object_get(ev, "livenessAfterProbe")), 100);
  ck_assert_int_eq(json_integer_value(json_object_get(ev, "elapsedMs")), 2000);
  json_decref(d);

  f.probe = DIAGNOSE_PROBE_MOVED, f.liveness_after_probe = 101, f.lifecycle = NULL;
  f.frames_enabled = -1;
  d = diagnose_to_json(DIAG_APP_IDLE, &f), ev = json_object_get(d, "evidence");
  ck_assert_str_eq(json_string_value(json_object_get(ev, "probe")), "moved");
  ck_assert(json_is_null(json_object_get(ev, "lifecycle")));
  ck_assert_ptr_null(json_object_get(ev, "framesEnabled"));
  json_decref(d);

  f.frames_lost = 37, f.new_frames = 5;
  d = diagnose_to_json(DIAG_FRAMES_LOST, &f), ev = json_object_get(d, "evidence");
  ck_assert_int_eq(json_integer_value(json_object_get(ev, "framesLost")), 37);
  json_decref(d);

  f.pause_kind = "PauseBreakpoint";
  d = diagnose_to_json(DIAG_ISOLATE_PAUSED, &f), ev = json_object_get(d, "evidence");
  ck_assert_str_eq(json_string_value(json_object_get(ev, "pauseKind")), "PauseBreakpoint");
  json_decref(d);

  f.liveness_before_known = 0, f.liveness_now = 9, f.reread_done = 1;
  d = diagnose_to_json(DIAG_FRAMES_PENDING, &f), ev = json_object_get(d, "evidence");
  ck_assert_ptr_null(json_object_get(ev, "livenessBefore"));
  ck_assert_int_eq(json_integer_value(json_object_get(ev, "livenessNow")), 9);
  json_decref(d);

  ck_assert_ptr_null(diagnose_to_json(DIAG_NONE, &f));
  /* Every code renders with its wire name. */
  for (int c = DIAG_NONE + 1; c < DIAG__COUNT; c++) {
    d = diagnose_to_json((diag_code_t)c, &f);
    ck_assert_str_eq(json_string_value(json_object_get(d, "code")), diag_name((diag_code_t)c));
    ck_assert(json_is_object(json_object_get(d, "evidence")));
    json_decref(d);
  }
}
END_TEST

START_TEST(liveness_object) {
  json_t *l = diagnose_liveness_to_json(18342, 1, 17738, 10012);
  ck_assert_int_eq(json_integer_value(json_object_get(l, "counter")), 18342);
  ck_assert_int_eq(json_integer_value(json_object_get(l, "delta")), 604);
  ck_assert_int_eq(json_integer_value(json_object_get(l, "elapsedMs")), 10012);
  ck_assert_double_eq_tol(json_real_value(json_object_get(l, "framesPerSecond")), 60.3, 1e-9);
  json_decref(l);
  l = diagnose_liveness_to_json(5, 0, 0, 100); /* first look: the counter alone */
  ck_assert_uint_eq(json_object_size(l), 1);
  json_decref(l);
  l = diagnose_liveness_to_json(5, 1, 900, 100); /* went backwards: a restart */
  ck_assert_uint_eq(json_object_size(l), 1);
  json_decref(l);
  l = diagnose_liveness_to_json(7, 1, 7, 0); /* no time passed: no rate */
  ck_assert_int_eq(json_integer_value(json_object_get(l, "delta")), 0);
  ck_assert_ptr_null(json_object_get(l, "framesPerSecond"));
  json_decref(l);
}
END_TEST

int main(void) {
  Suite *s = suite_create("diagnose");
  TCase *tc = tcase_create("decide");
  tcase_add_test(tc, connection_problems_in_order);
  tcase_add_test(tc, watcher_absent_or_not_flutter);
  tcase_add_test(tc, restart_and_loss);
  tcase_add_test(tc, frames_present);
  tcase_add_test(tc, liveness_moved_rereads_then_pending);
  tcase_add_test(tc, liveness_flat_or_unknown_watches_then_probes);
  tcase_add_test(tc, evidence);
  tcase_add_test(tc, liveness_object);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
