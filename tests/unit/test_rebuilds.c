/* rebuilds: Flutter.RebuiltWidgets event data (widget_inspector.dart
 * exportToJson, docs/flutter-apis.md "Rebuilt widgets") in, the rebuilt
 * widgets of janky frames out. Both location forms, ids without a location,
 * a hot restart, the ring bound, replays, and the ranking worked by hand. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "rebuilds.h"

#define APP "file:///home/dev/app/lib/"

static json_t *ev(const char *text) {
  json_error_t e;
  json_t *j = json_loads(text, 0, &e);
  ck_assert_msg(j != NULL, "%s", e.text);
  return j;
}

static int feed(rebuilds_t *rb, const char *iso, const char *text) {
  json_t *j = ev(text);
  int r = rebuilds_feed(rb, iso, "Flutter.RebuiltWidgets", j, iso);
  json_decref(j);
  return r;
}

START_TEST(both_location_forms) {
  rebuilds_t *rb = rebuilds_new();
  /* The newer form names the widget; the older one only places it. */
  ck_assert_int_eq(feed(rb, "i/1",
                        "{\"startTime\":0,\"frameNumber\":10,\"events\":[41,2,57,3],"
                        "\"locations\":{\"" APP "feed.dart\":{\"ids\":[41],\"lines\":[27],"
                        "\"columns\":[16],\"names\":[\"FeedList\"]}},"
                        "\"newLocations\":{\"" APP "card.dart\":[57,31,18]}}"),
                   1);
  const rebuilds_loc_t *l = rebuilds_location(rb, 41);
  ck_assert_ptr_nonnull(l);
  ck_assert_str_eq(l->name, "FeedList");
  ck_assert_str_eq(l->file, APP "feed.dart");
  ck_assert_int_eq(l->line, 27);
  l = rebuilds_location(rb, 57);
  ck_assert_ptr_nonnull(l);
  ck_assert_ptr_null(l->name);
  ck_assert_int_eq(l->line, 31);
  ck_assert_int_eq(l->column, 18);
  /* The same id in both forms is one location, named. */
  ck_assert_int_eq(feed(rb, "i/1",
                        "{\"frameNumber\":11,\"events\":[57,1],"
                        "\"newLocations\":{\"" APP "card.dart\":[57,31,18]},"
                        "\"locations\":{\"" APP "card.dart\":{\"ids\":[57],\"lines\":[31],"
                        "\"columns\":[18],\"names\":[\"ProductCard\"]}}}"),
                   1);
  ck_assert_str_eq(rebuilds_location(rb, 57)->name, "ProductCard");
  size_t n;
  const rebuilds_count_t *c = rebuilds_frame(rb, 10, &n, NULL);
  ck_assert_uint_eq(n, 2);
  ck_assert_int_eq(c[0].id, 41);
  ck_assert_int_eq(c[0].count, 2);
  ck_assert_int_eq(c[1].id, 57);
  ck_assert_int_eq(c[1].count, 3);
  ck_assert_ptr_null(rebuilds_frame(rb, 12, &n, NULL));
  ck_assert_uint_eq(n, 0);
  /* widgetLocationIdMap's reply: the newer form under "result", as
   * _registerSignalServiceExtension answers (+ the VM's type and method). */
  json_t *map = ev("{\"type\":\"_extensionType\","
                   "\"method\":\"ext.flutter.inspector.widgetLocationIdMap\","
                   "\"result\":{\"" APP
                   "x.dart\":{\"ids\":[90],\"lines\":[5],\"columns\":[1],"
                   "\"names\":[\"X\"]}}}");
  ck_assert_int_eq(rebuilds_add_location_map(rb, map), 0);
  json_decref(map);
  ck_assert_str_eq(rebuilds_location(rb, 90)->name, "X");
  ck_assert_int_eq(rebuilds_location(rb, 90)->line, 5);
  /* No Flutter answers the map bare: such a reply resolves nothing. */
  map = ev("{\"" APP "y.dart\":{\"ids\":[91],\"lines\":[6],\"columns\":[1],"
           "\"names\":[\"Y\"]}}");
  ck_assert_int_eq(rebuilds_add_location_map(rb, map), -1);
  json_decref(map);
  ck_assert_ptr_null(rebuilds_location(rb, 91));
  rebuilds_free(rb);
}
END_TEST

START_TEST(not_ours_malformed_and_replays) {
  rebuilds_t *rb = rebuilds_new();
  json_t *j = ev("{\"frameNumber\":1,\"events\":[1,1]}");
  ck_assert_int_eq(rebuilds_feed(rb, "i/1", "Flutter.Frame", j, "i/1"), 0);
  json_decref(j);
  ck_assert_int_eq(feed(rb, "i/1", "{\"startTime\":5,\"events\":[1,1]}"), 0); /* no frameNumber */
  ck_assert_int_eq(feed(rb, "i/1", "{\"frameNumber\":3,\"events\":\"x\"}"), 0);
  ck_assert_int_eq(feed(rb, "i/1", "{\"frameNumber\":3,\"events\":[1,2,\"x\",4,7]}"), 1);
  size_t n;
  rebuilds_frame(rb, 3, &n, NULL);
  ck_assert_uint_eq(n, 1); /* the bad pair and the odd tail are skipped */
  ck_assert_int_eq(feed(rb, "i/1", "{\"frameNumber\":3,\"events\":[1,9]}"), 0); /* a replay */
  ck_assert_int_eq(feed(rb, "i/1", "{\"frameNumber\":2,\"events\":[1,9]}"), 0);
  ck_assert_uint_eq(rebuilds_frames(rb), 1);
  rebuilds_free(rb);
}
END_TEST

START_TEST(restart_clears) {
  rebuilds_t *rb = rebuilds_new();
  feed(rb, "i/1",
       "{\"frameNumber\":100,\"events\":[41,1],\"locations\":{\"" APP
       "a.dart\":{\"ids\":[41],\"lines\":[1],\"columns\":[1],\"names\":[\"A\"]}}}");
  ck_assert_ptr_nonnull(rebuilds_location(rb, 41));
  /* An old isolate's event, replayed after the new one is current: dropped;
   * replayed at a reconnect, before the VM names the current one: dropped
   * too, the table kept. */
  json_t *j = ev("{\"frameNumber\":101,\"events\":[41,1]}");
  ck_assert_int_eq(rebuilds_feed(rb, "i/0", "Flutter.RebuiltWidgets", j, "i/1"), 0);
  ck_assert_int_eq(rebuilds_feed(rb, "i/0", "Flutter.RebuiltWidgets", j, ""), 0);
  ck_assert_ptr_nonnull(rebuilds_location(rb, 41));
  /* The new isolate (a hot restart): ids start again, frame numbers too. */
  ck_assert_int_eq(rebuilds_feed(rb, "i/2", "Flutter.RebuiltWidgets", j, "i/2"), 1);
  json_decref(j);
  ck_assert_ptr_null(rebuilds_location(rb, 41));
  ck_assert_uint_eq(rebuilds_frames(rb), 1);
  ck_assert_int_eq(feed(rb, "i/2", "{\"frameNumber\":5,\"events\":[41,1]}"), 0);
  rebuilds_clear(rb); /* the restart event, before any new-isolate event */
  ck_assert_uint_eq(rebuilds_frames(rb), 0);
  ck_assert_int_eq(feed(rb, "i/2", "{\"frameNumber\":5,\"events\":[41,1]}"), 1);
  rebuilds_free(rb);
}
END_TEST

START_TEST(ring_is_bounded) {
  rebuilds_t *rb = rebuilds_new();
  char buf[128];
  for (int i = 1; i <= REBUILDS_MAX_FRAMES + 10; i++) {
    snprintf(buf, sizeof buf, "{\"frameNumber\":%d,\"events\":[7,%d]}", i, i);
    ck_assert_int_eq(feed(rb, "i/1", buf), 1);
  }
  ck_assert_uint_eq(rebuilds_frames(rb), REBUILDS_MAX_FRAMES);
  size_t n;
  ck_assert_ptr_null(rebuilds_frame(rb, 10, &n, NULL)); /* dropped */
  const rebuilds_count_t *c = rebuilds_frame(rb, 11, &n, NULL);
  ck_assert_ptr_nonnull(c);
  ck_assert_int_eq(c[0].count, 11);
  c = rebuilds_frame(rb, REBUILDS_MAX_FRAMES + 10, &n, NULL);
  ck_assert_int_eq(c[0].count, REBUILDS_MAX_FRAMES + 10);
  rebuilds_free(rb);
}
END_TEST

/* Frame 0 is the one switching tracking on forced (every widget, 50 times):
 * janky, but left out. Frames 1..6. Janky: 2, 4 (and 7, which has no event).
 * Calm: 1, 3, 5.
 * Frame 6 missed on raster only: neither, left out of both means.
 *   id 41 Steady: 5 in every frame       → janky 5.0, calm 5.0: not listed
 *   id 63 Slow:   12 in 2, 12 in 4, 1 in 3 → janky 24/2 = 12.0, calm 1/3 ≈ 0.33
 *   id 57 Card:   3 in 2, 1 in 4, 1 in 1 and 5 → janky 2.0, calm 2/3 ≈ 0.67
 *   id 99 (no location): 2 in 4           → janky 1.0, calm 0
 *   id 58 Text:   9 in 6 only (neither)   → not listed
 *   id 70 List:   10 in 2 and 4, 9 in 1, 3, 5 → janky 10.0, calm 9.0: excess 1.0
 *                 but only 1.11× the calm mean (< REBUILDS_MIN_RATIO): not listed
 * Excess: 63 11.67 > 57 1.33 > 70 1.0 (left out) = 99 1.0 (listed third); 41 is 0. */
START_TEST(ranking_by_hand) {
  rebuilds_t *rb = rebuilds_new();
  rebuilds_switched_on(rb);
  feed(rb, "i/1", "{\"frameNumber\":0,\"events\":[41,50,57,50,63,50,70,50,99,50]}");
  feed(rb, "i/1",
       "{\"frameNumber\":1,\"events\":[41,5,57,1,70,9],\"locations\":{\"" APP
       "feed.dart\":{\"ids\":[41,57,63],\"lines\":[27,31,42],\"columns\":[1,1,1],"
       "\"names\":[\"Steady\",\"Card\",\"Slow\"]}}}");
  feed(rb, "i/1", "{\"frameNumber\":2,\"events\":[41,5,63,12,57,3,70,10]}");
  feed(rb, "i/1", "{\"frameNumber\":3,\"events\":[41,5,63,1,70,9]}");
  feed(rb, "i/1", "{\"frameNumber\":4,\"events\":[41,5,63,12,57,1,99,2,70,10]}");
  feed(rb, "i/1", "{\"frameNumber\":5,\"events\":[41,5,57,1,70,9]}");
  feed(rb, "i/1", "{\"frameNumber\":6,\"events\":[41,5,58,9]}");
  rebuilds_frame_t f[] = {{0, 1, 0}, {1, 0, 1}, {2, 1, 0}, {3, 0, 1},
                          {4, 1, 0}, {5, 0, 1}, {6, 0, 0}, {7, 1, 0}};
  json_t *r = rebuilds_summary(rb, f, 8);
  ck_assert_ptr_nonnull(r);
  ck_assert_int_eq(json_integer_value(json_object_get(r, "jankyFrames")), 2);
  ck_assert_int_eq(json_integer_value(json_object_get(r, "calmFrames")), 3);
  ck_assert_int_eq(json_integer_value(json_object_get(r, "framesWithEvents")), 7);
  json_t *w = json_object_get(r, "widgets");
  ck_assert_uint_eq(json_array_size(w), 3);
  json_t *a = json_array_get(w, 0), *b = json_array_get(w, 1), *c = json_array_get(w, 2);
  ck_assert_str_eq(json_string_value(json_object_get(a, "name")), "Slow");
  ck_assert_str_eq(json_string_value(json_object_get(a, "file")), "lib/feed.dart");
  ck_assert_int_eq(json_integer_value(json_object_get(a, "line")), 42);
  ck_assert_double_eq_tol(json_number_value(json_object_get(a, "perJankyFrame")), 12.0, 1e-9);
  ck_assert_double_eq_tol(json_number_value(json_object_get(a, "perCalmFrame")), 1.0 / 3, 1e-9);
  ck_assert_str_eq(json_string_value(json_object_get(b, "name")), "Card");
  ck_assert_double_eq_tol(json_number_value(json_object_get(b, "perJankyFrame")), 2.0, 1e-9);
  ck_assert_double_eq_tol(json_number_value(json_object_get(b, "perCalmFrame")), 2.0 / 3, 1e-9);
  ck_assert_str_eq(json_string_value(json_object_get(c, "name")), "location 99");
  ck_assert_ptr_null(json_object_get(c, "file"));
  char *t = rebuilds_text(r);
  ck_assert_ptr_nonnull(t);
  ck_assert_msg(strstr(t,
                       "rebuilt: Slow ×12.0 per janky frame vs ×0.3 otherwise "
                       "(lib/feed.dart:42)\n") == t,
                "%s", t);
  ck_assert_ptr_nonnull(strstr(t, "rebuilt: location 99 ×1.0 per janky frame vs ×0.0 otherwise\n"));
  free(t);
  json_decref(r);
  /* Every frame calm: nothing rebuilt more when janky, no lines. */
  rebuilds_frame_t calm[] = {{1, 0, 1}, {2, 0, 1}};
  r = rebuilds_summary(rb, calm, 2);
  ck_assert_uint_eq(json_array_size(json_object_get(r, "widgets")), 0);
  t = rebuilds_text(r);
  ck_assert_str_eq(t, "");
  free(t);
  json_decref(r);
  /* Janky frames that rebuilt the same as calm ones: the subtrees rebuilt in
   * every frame, most first, at least once a janky frame (Card, once, is). */
  rebuilds_frame_t same[] = {{1, 0, 1}, {5, 1, 0}};
  r = rebuilds_summary(rb, same, 2);
  w = json_object_get(r, "widgets");
  ck_assert_uint_eq(json_array_size(w), 3);
  ck_assert(json_is_true(json_object_get(json_array_get(w, 0), "steady")));
  t = rebuilds_text(r);
  ck_assert_str_eq(t,
                   "rebuilt in every frame: location 70 ×9.0 per janky frame vs ×9.0 otherwise\n"
                   "rebuilt in every frame: Steady ×5.0 per janky frame vs ×5.0 otherwise "
                   "(lib/feed.dart:27)\n"
                   "rebuilt in every frame: Card ×1.0 per janky frame vs ×1.0 otherwise "
                   "(lib/feed.dart:31)\n");
  free(t);
  json_decref(r);
  /* ... but fewer than once a janky frame is nothing: said once. */
  rebuilds_switched_on(rb); /* off and on again: frame 9 is the forced one */
  feed(rb, "i/1", "{\"frameNumber\":9,\"events\":[57,50]}");
  feed(rb, "i/1", "{\"frameNumber\":10,\"events\":[57,1]}");
  feed(rb, "i/1", "{\"frameNumber\":11,\"events\":[57,1]}");
  feed(rb, "i/1", "{\"frameNumber\":12,\"events\":[]}");
  rebuilds_frame_t rare[] = {{9, 1, 0}, {10, 0, 1}, {11, 1, 0}, {12, 1, 0}};
  r = rebuilds_summary(rb, rare, 4);
  ck_assert_uint_eq(json_array_size(json_object_get(r, "widgets")), 0);
  t = rebuilds_text(r);
  ck_assert_str_eq(t, "rebuilt: no widget rebuilt more in the 2 janky frames than in the others\n");
  free(t);
  json_decref(r);
  /* No frame with an event: nothing at all. */
  rebuilds_frame_t none[] = {{7, 1, 0}, {8, 0, 1}};
  ck_assert_ptr_null(rebuilds_summary(rb, none, 2));
  rebuilds_free(rb);
}
END_TEST

static int baseline_of(const rebuilds_t *rb, int64_t number) {
  size_t n;
  int b = -1;
  ck_assert_ptr_nonnull(rebuilds_frame(rb, number, &n, &b));
  return b;
}

/* forceRebuild's frame is the first event after our switch-on, whatever the
 * numbers: iOS steps them by 2 (87, 89, 91 in the ios-metal recording) and
 * any platform skips some (flutter#94896). None without a switch-on (another
 * tool had tracking on: no forced frame); a replay does not take the mark. */
START_TEST(baseline_frames) {
  rebuilds_t *rb = rebuilds_new();
  rebuilds_switched_on(rb);
  feed(rb, "i/1", "{\"frameNumber\":87,\"events\":[1,9]}");
  feed(rb, "i/1", "{\"frameNumber\":89,\"events\":[1,1]}");
  feed(rb, "i/1", "{\"frameNumber\":91,\"events\":[1,1]}");
  feed(rb, "i/1", "{\"frameNumber\":97,\"events\":[1,1]}"); /* a gap: still on */
  ck_assert_int_eq(baseline_of(rb, 87), 1);
  ck_assert_int_eq(baseline_of(rb, 89), 0);
  ck_assert_int_eq(baseline_of(rb, 91), 0);
  ck_assert_int_eq(baseline_of(rb, 97), 0);
  /* Off and on again: the next new frame, not a replay of an old one. */
  rebuilds_switched_on(rb);
  ck_assert_int_eq(feed(rb, "i/1", "{\"frameNumber\":91,\"events\":[1,1]}"), 0);
  feed(rb, "i/1", "{\"frameNumber\":140,\"events\":[1,9]}");
  feed(rb, "i/1", "{\"frameNumber\":142,\"events\":[1,1]}");
  ck_assert_int_eq(baseline_of(rb, 140), 1);
  ck_assert_int_eq(baseline_of(rb, 142), 0);
  /* A hot restart: the switch-on sent to the new isolate arms before its
   * first event clears the old table, and the mark survives the clear. */
  rebuilds_switched_on(rb);
  feed(rb, "i/2", "{\"frameNumber\":2,\"events\":[1,9]}");
  feed(rb, "i/2", "{\"frameNumber\":4,\"events\":[1,1]}");
  ck_assert_int_eq(baseline_of(rb, 2), 1);
  ck_assert_int_eq(baseline_of(rb, 4), 0);
  rebuilds_free(rb);
  /* Tracking already on (another tool): no frame is the baseline. */
  rb = rebuilds_new();
  feed(rb, "i/1", "{\"frameNumber\":10,\"events\":[1,1]}");
  feed(rb, "i/1", "{\"frameNumber\":30,\"events\":[1,1]}");
  ck_assert_int_eq(baseline_of(rb, 10), 0);
  ck_assert_int_eq(baseline_of(rb, 30), 0);
  rebuilds_free(rb);
}
END_TEST

/* The web engine's frameNumber is -1 before flutter#171592, older Flutter
 * sends none: counted, never joined, and the count says which. */
START_TEST(unjoinable_events) {
  rebuilds_t *rb = rebuilds_new();
  int web = -1;
  ck_assert_uint_eq(rebuilds_unjoined(rb, &web), 0);
  ck_assert_int_eq(web, 0);
  rebuilds_switched_on(rb);
  ck_assert_int_eq(feed(rb, "i/1", "{\"frameNumber\":-1,\"events\":[1,9]}"), 0);
  ck_assert_int_eq(feed(rb, "i/1", "{\"frameNumber\":-1,\"events\":[1,1]}"), 0);
  ck_assert_uint_eq(rebuilds_frames(rb), 0);
  ck_assert_uint_eq(rebuilds_unjoined(rb, &web), 2);
  ck_assert_int_eq(web, 1);
  /* The forced frame was the first -1 event: a later numbered one is not. */
  ck_assert_int_eq(feed(rb, "i/1", "{\"frameNumber\":5,\"events\":[1,1]}"), 1);
  ck_assert_int_eq(baseline_of(rb, 5), 0);
  rebuilds_clear(rb);
  ck_assert_int_eq(feed(rb, "i/1", "{\"startTime\":3,\"events\":[1,1]}"), 0);
  ck_assert_uint_eq(rebuilds_unjoined(rb, &web), 1);
  ck_assert_int_eq(web, 0);
  rebuilds_free(rb);
}
END_TEST

/* Names and files are cut to REBUILDS_MAX_TEXT bytes, whole characters
 * (a cut inside a UTF-8 sequence would make jansson refuse the string);
 * ids beyond 32 bits are not the framework's: skipped. */
START_TEST(long_names_and_odd_ids) {
  rebuilds_t *rb = rebuilds_new();
  char name[700] = "", ev[1400];
  for (int i = 0; i < 300; i++) strcat(name, "\xc3\xa9"); /* é: 2 bytes */
  snprintf(ev, sizeof ev, "{\"frameNumber\":0,\"events\":[]}");
  feed(rb, "i/1", ev);
  snprintf(ev, sizeof ev,
           "{\"frameNumber\":1,\"events\":[5,2,5000000000,3],\"locations\":{\"" APP
           "a.dart\":{\"ids\":[5],\"lines\":[3],\"columns\":[1],\"names\":[\"%s\"]}}}",
           name);
  ck_assert_int_eq(feed(rb, "i/1", ev), 1);
  size_t n;
  rebuilds_frame(rb, 1, &n, NULL);
  ck_assert_uint_eq(n, 1);
  rebuilds_frame_t f[] = {{1, 1, 0}};
  json_t *r = rebuilds_summary(rb, f, 1);
  ck_assert_ptr_nonnull(r);
  const char *got =
      json_string_value(json_object_get(json_array_get(json_object_get(r, "widgets"), 0), "name"));
  ck_assert_ptr_nonnull(got);
  ck_assert_uint_eq(strlen(got), REBUILDS_MAX_TEXT);
  json_decref(r);
  rebuilds_free(rb);
}
END_TEST

START_TEST(file_of) {
  char *s = rebuilds_file_of("file:///home/lib/dev/app/lib/src/w.dart");
  ck_assert_str_eq(s, "lib/src/w.dart");
  free(s);
  s = rebuilds_file_of("file:///home/dev/app/test/w.dart");
  ck_assert_str_eq(s, "/home/dev/app/test/w.dart");
  free(s);
  s = rebuilds_file_of("org-dartlang-app:/w.dart");
  ck_assert_str_eq(s, "org-dartlang-app:/w.dart");
  free(s);
}
END_TEST

int main(void) {
  Suite *s = suite_create("rebuilds");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, both_location_forms);
  tcase_add_test(tc, not_ours_malformed_and_replays);
  tcase_add_test(tc, restart_clears);
  tcase_add_test(tc, ring_is_bounded);
  tcase_add_test(tc, ranking_by_hand);
  tcase_add_test(tc, baseline_frames);
  tcase_add_test(tc, unjoinable_events);
  tcase_add_test(tc, long_names_and_odd_ids);
  tcase_add_test(tc, file_of);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
