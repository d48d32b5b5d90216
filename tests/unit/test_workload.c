/* workload (issue 32): the steps checked with messages naming the field,
 * flutter_driver's commands for each step (the exact params), the runs a
 * drive's frames make and their spread, the text line, a reply's `drive`,
 * and compare judging the runs when both played the same workload. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer_text.h"
#include "compare.h"
#include "workload.h"

static json_t *load(const char *text) {
  json_error_t e;
  json_t *j = json_loads(text, 0, &e);
  ck_assert_msg(j != NULL, "%s: %s", text, e.text);
  return j;
}

static int parse(workload_t *w, const char *text, char *err, size_t n) {
  json_t *j = load(text);
  int rc = workload_parse(w, j, err, n);
  json_decref(j);
  return rc;
}

START_TEST(parses_every_step_with_defaults) {
  workload_t w;
  char err[320];
  ck_assert_int_eq(parse(&w,
                         "{\"steps\":[{\"scroll\":{\"dy\":-2000,\"in\":\"key:feed\"}},"
                         "{\"fling\":{\"dx\":10,\"dy\":-3000}},{\"tap\":\"text:Settings\"},"
                         "{\"wait\":300},{\"back\":true}],\"repeat\":3}",
                         err, sizeof err),
                   0);
  ck_assert_uint_eq(w.nsteps, 5);
  ck_assert_int_eq(w.repeat, 3);
  ck_assert_int_eq(w.steps[0].kind, WL_SCROLL);
  ck_assert_int_eq(w.steps[0].ms, 800); /* default */
  ck_assert_double_eq(w.steps[0].dx, 0);
  ck_assert_double_eq(w.steps[0].dy, -2000);
  ck_assert_str_eq(w.steps[0].finder, "key:feed");
  ck_assert_int_eq(w.steps[1].kind, WL_FLING);
  ck_assert_double_eq(w.steps[1].velocity, 4000); /* default */
  ck_assert_str_eq(w.steps[1].finder, "");
  ck_assert_str_eq(w.steps[2].finder, "text:Settings");
  ck_assert_int_eq(w.steps[3].ms, 300);
  ck_assert_int_eq(w.steps[4].kind, WL_BACK);
  char label[256];
  workload_label(&w, label, sizeof label);
  ck_assert_str_eq(label, "scroll key:feed, fling, tap text:Settings, wait 300 ms, back");
  workload_t c;
  ck_assert_int_eq(workload_copy(&c, &w), 0);
  ck_assert(json_equal(c.steps_json, w.steps_json));
  workload_close(&c);
  workload_close(&w);
  ck_assert_int_eq(parse(&w, "{\"steps\":[{\"wait\":0}]}", err, sizeof err), 0);
  ck_assert_int_eq(w.repeat, 1);
  workload_close(&w);
}
END_TEST

/* A finder's limit is in characters: 128 of "é" (two bytes each) are kept
 * whole, not cut at 128 bytes inside a character. */
START_TEST(finder_of_wide_characters_is_kept_whole) {
  char finder[8 + 2 * 123 + 1] = "text:", text[400];
  for (int i = 0; i < 123; i++) strcat(finder, "\xc3\xa9"); /* "text:" + 123 × "é" = 128 */
  snprintf(text, sizeof text, "{\"steps\":[{\"tap\":\"%s\"}]}", finder);
  workload_t w;
  char err[320];
  ck_assert_int_eq(parse(&w, text, err, sizeof err), 0);
  ck_assert_str_eq(w.steps[0].finder, finder);
  char label[600];
  workload_label(&w, label, sizeof label);
  ck_assert_str_eq(label + strlen("tap "), finder);
  workload_close(&w);
  strcat(finder, "\xc3\xa9"); /* 129 characters */
  snprintf(text, sizeof text, "{\"steps\":[{\"tap\":\"%s\"}]}", finder);
  ck_assert_int_eq(parse(&w, text, err, sizeof err), -1);
  ck_assert_str_eq(err, "workload.steps[0].tap: longer than 128 characters or contains NUL");
}
END_TEST

START_TEST(bad_steps_name_the_field) {
  static const char *const bad[][2] = {
      {"[]", "workload: must be an object"},
      {"{\"steps\":[]}", "workload.steps: must be an array of 1 to 32 steps"},
      {"{\"steps\":[{\"wait\":1}],\"repeat\":0}", "workload.repeat: must be an integer from 1 to 10"},
      {"{\"steps\":[{\"wait\":1}],\"repeat\":11}", "workload.repeat"},
      {"{\"steps\":[{\"wait\":1}],\"times\":2}", "workload.times: unknown key"},
      {"{\"steps\":[{\"wait\":1},{\"swipe\":{}}]}", "workload.steps[1].swipe: unknown step"},
      {"{\"steps\":[{\"wait\":1,\"tap\":\"key:a\"}]}", "workload.steps[0]: must be an object with one key"},
      {"{\"steps\":[{\"fling\":{\"dy\":-300,\"velocity\":50}}]}",
       "workload.steps[0].fling.velocity: must be from 100 to 20000, got 50"},
      {"{\"steps\":[{\"scroll\":{\"dy\":-300,\"ms\":20}}]}", "workload.steps[0].scroll.ms: must be from 50"},
      {"{\"steps\":[{\"scroll\":{\"dy\":-300,\"ms\":100.5}}]}", "workload.steps[0].scroll.ms: must be an integer"},
      {"{\"steps\":[{\"scroll\":{\"dy\":-300,\"velocity\":900}}]}",
       "workload.steps[0].scroll.velocity: unknown key"},
      {"{\"steps\":[{\"fling\":{\"dx\":0}}]}", "workload.steps[0].fling: empty drag"},
      {"{\"steps\":[{\"fling\":{\"dy\":-9,\"in\":\"feed\"}}]}", "workload.steps[0].fling.in: \"feed\" is not a finder"},
      {"{\"steps\":[{\"tap\":\"key:\"}]}", "workload.steps[0].tap: \"key:\" is not a finder"},
      {"{\"steps\":[{\"tap\":3}]}", "workload.steps[0].tap: must be a finder string"},
      {"{\"steps\":[{\"wait\":10001}]}", "workload.steps[0].wait: must be an integer from 0 to 10000"},
      {"{\"steps\":[{\"back\":false}]}", "workload.steps[0].back: must be true"},
      {"{\"steps\":[{\"scroll\":{\"dy\":\"-300\"}}]}", "workload.steps[0].scroll.dy: must be a number"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    workload_t w;
    char err[320];
    ck_assert_int_eq(parse(&w, bad[i][0], err, sizeof err), -1);
    ck_assert_msg(strstr(err, bad[i][1]) != NULL, "%s -> %s", bad[i][0], err);
    ck_assert_ptr_null(w.steps_json);
  }
  /* 33 steps */
  char big[1024] = "{\"steps\":[";
  for (int i = 0; i < 33; i++) strcat(big, i ? ",{\"wait\":1}" : "{\"wait\":1}");
  strcat(big, "]}");
  workload_t w;
  char err[320];
  ck_assert_int_eq(parse(&w, big, err, sizeof err), -1);
  ck_assert_ptr_nonnull(strstr(err, "1 to 32 steps"));
}
END_TEST

static const json_t *cmd_at(const json_t *cmds, size_t i) {
  return json_array_get(cmds, i);
}
static const char *p(const json_t *cmd, const char *k) {
  return json_string_value(json_object_get(cmd, k));
}

/* The exact params of flutter_driver's Scroll, Tap and finders
 * (lib/src/common/gesture.dart, find.dart, message.dart). */
START_TEST(driver_commands_are_flutter_drivers_wire) {
  workload_t w;
  char err[320];
  ck_assert_int_eq(parse(&w,
                         "{\"steps\":[{\"scroll\":{\"dy\":-2000,\"ms\":800,\"in\":\"key:feed\"}},"
                         "{\"fling\":{\"dy\":-3000,\"velocity\":4000,\"in\":\"type:ListView\"}},"
                         "{\"tap\":\"text:Item 3\"},{\"back\":true},{\"wait\":5}]}",
                         err, sizeof err),
                   0);
  ck_assert_int_eq(workload_driver_check(&w, err, sizeof err), 0);
  json_t *c = workload_driver_commands(&w.steps[0], 120);
  ck_assert_uint_eq(json_array_size(c), 2);
  const json_t *s = cmd_at(c, 0);
  ck_assert_uint_eq(json_object_size(s), 8);
  ck_assert_str_eq(p(s, "command"), "scroll");
  ck_assert_str_eq(p(s, "finderType"), "ByValueKey");
  ck_assert_str_eq(p(s, "keyValueString"), "feed");
  ck_assert_str_eq(p(s, "keyValueType"), "String");
  ck_assert_str_eq(p(s, "dx"), "0.0"); /* Dart's '$dx' of a double */
  ck_assert_str_eq(p(s, "dy"), "-2000.0");
  ck_assert_str_eq(p(s, "duration"), "800000"); /* µs */
  ck_assert_str_eq(p(s, "frequency"), "120");
  ck_assert_str_eq(p(cmd_at(c, 1), "command"), "waitUntilNoTransientCallbacks");
  ck_assert_uint_eq(json_object_size(cmd_at(c, 1)), 1);
  json_decref(c);
  /* A fling is a scroll whose duration is D = (L + slop) / velocity. */
  c = workload_driver_commands(&w.steps[1], 0);
  s = cmd_at(c, 0);
  ck_assert_str_eq(p(s, "finderType"), "ByType");
  ck_assert_str_eq(p(s, "type"), "ListView");
  ck_assert_str_eq(p(s, "duration"), "754500"); /* (3000 + 18) / 4000 s */
  ck_assert_str_eq(p(s, "frequency"), "60");
  ck_assert_int_eq(workload_fling_duration_us(&w.steps[1]), 754500);
  json_decref(c);
  /* The display's rate, rounded (60 when unknown or under 1), raised so that
   * flutter_driver's scroll makes at least 2 moves (totalMoves = duration x
   * frequency ~/ 1e6; under 1 it divides by zero): 754.5 ms at 1 Hz needs 3. */
  c = workload_driver_commands(&w.steps[1], 59.6);
  ck_assert_str_eq(p(cmd_at(c, 0), "frequency"), "60");
  json_decref(c);
  c = workload_driver_commands(&w.steps[1], 0.2);
  ck_assert_str_eq(p(cmd_at(c, 0), "frequency"), "60");
  json_decref(c);
  c = workload_driver_commands(&w.steps[1], 1);
  ck_assert_str_eq(p(cmd_at(c, 0), "frequency"), "3");
  json_decref(c);
  workload_t short_fling = {0};
  ck_assert_int_eq(parse(&short_fling,
                         "{\"steps\":[{\"fling\":{\"dy\":-20,\"velocity\":20000,\"in\":\"key:feed\"}}]}",
                         err, sizeof err),
                   0);
  c = workload_driver_commands(&short_fling.steps[0], 60); /* (20 + 18) / 20000 s = 1.9 ms */
  ck_assert_str_eq(p(cmd_at(c, 0), "duration"), "1900");
  long long moves = 1900LL * atoll(p(cmd_at(c, 0), "frequency")) / 1000000;
  ck_assert_int_eq(moves, 2);
  json_decref(c);
  workload_close(&short_fling);
  c = workload_driver_commands(&w.steps[2], 60);
  ck_assert_uint_eq(json_array_size(c), 1);
  s = cmd_at(c, 0);
  ck_assert_uint_eq(json_object_size(s), 3);
  ck_assert_str_eq(p(s, "command"), "tap");
  ck_assert_str_eq(p(s, "finderType"), "ByText");
  ck_assert_str_eq(p(s, "text"), "Item 3");
  json_decref(c);
  c = workload_driver_commands(&w.steps[3], 60);
  s = cmd_at(c, 0);
  ck_assert_uint_eq(json_object_size(s), 2);
  ck_assert_str_eq(p(s, "command"), "tap");
  ck_assert_str_eq(p(s, "finderType"), "PageBack");
  json_decref(c);
  c = workload_driver_commands(&w.steps[4], 60);
  ck_assert_uint_eq(json_array_size(c), 0); /* the caller waits */
  json_decref(c);
  workload_close(&w);
  /* Without `in` flutter_driver has nothing to scroll. */
  ck_assert_int_eq(parse(&w, "{\"steps\":[{\"wait\":5},{\"fling\":{\"dy\":-300}}]}", err, sizeof err), 0);
  ck_assert_int_eq(workload_driver_check(&w, err, sizeof err), -1);
  ck_assert_ptr_nonnull(strstr(err, "workload.steps[1].fling: needs \"in\""));
  workload_close(&w);
}
END_TEST

START_TEST(interaction_names_round_trip) {
  char buf[64], id[32];
  int run, step;
  workload_interaction(buf, sizeof buf, "d1", 2, 3);
  ck_assert_str_eq(buf, "d1/r2/s3");
  ck_assert_int_eq(workload_interaction_parse(buf, id, sizeof id, &run, &step), 0);
  ck_assert_str_eq(id, "d1");
  ck_assert_int_eq(run, 2);
  ck_assert_int_eq(step, 3);
  ck_assert_int_eq(workload_interaction_parse("scroll", id, sizeof id, &run, &step), -1);
  ck_assert_int_eq(workload_interaction_parse("d1/r0/s1", id, sizeof id, &run, &step), -1);
  ck_assert_int_eq(workload_interaction_parse("d1/r1/s1x", id, sizeof id, &run, &step), -1);
  ck_assert_int_eq(workload_interaction_parse("/r1/s1", id, sizeof id, &run, &step), -1);
}
END_TEST

/* frames of run `run` step 1 of drive "d1": n frames, `janky` of them over budget */
static size_t add_run(frame_t *f, size_t at, int run, size_t n, size_t janky, int64_t build) {
  char iid[32];
  for (size_t i = 0; i < n; i++) {
    frame_t *x = &f[at + i];
    memset(x, 0, sizeof *x);
    x->seq = (int64_t)(at + i + 1);
    x->build_us = i < janky ? 30000 : build + (int64_t)i;
    x->raster_us = 4000 + (int64_t)i;
    workload_interaction(iid, sizeof iid, "d1", run, 1);
    x->interaction_id = strdup(iid);
    x->linked_by = strdup("drive");
  }
  return at + n;
}

START_TEST(summary_gives_runs_and_spread) {
  workload_t w;
  char err[320];
  ck_assert_int_eq(parse(&w, "{\"steps\":[{\"fling\":{\"dy\":-3000,\"in\":\"key:feed\"}}],\"repeat\":3}",
                         err, sizeof err),
                   0);
  frame_t f[400];
  size_t n = add_run(f, 0, 1, 100, 5, 5000);
  n = add_run(f, n, 2, 100, 7, 5000);
  n = add_run(f, n, 3, 50, 2, 6000);
  /* not the drive's: by hand, and another drive */
  memset(&f[n], 0, sizeof f[n]);
  f[n].build_us = 90000;
  f[n].interaction_id = strdup("d1/r1/s1");
  f[n].linked_by = strdup("agent");
  n++;
  memset(&f[n], 0, sizeof f[n]);
  f[n].build_us = 90000;
  f[n].interaction_id = strdup("d9/r1/s1");
  f[n].linked_by = strdup("drive");
  n++;
  memset(&f[n], 0, sizeof f[n]);
  f[n].build_us = 90000;
  f[n].startup = 1;
  f[n].interaction_id = strdup("d1/r1/s1");
  f[n].linked_by = strdup("drive");
  n++;
  json_t *s = workload_summary(&w, f, n, 16667, NULL);
  ck_assert_ptr_nonnull(s);
  ck_assert_str_eq(json_string_value(json_object_get(s, "label")), "fling key:feed");
  ck_assert_str_eq(json_string_value(json_object_get(s, "driveId")), "d1");
  ck_assert_int_eq(json_integer_value(json_object_get(s, "repeat")), 3);
  const json_t *runs = json_object_get(s, "runs");
  ck_assert_uint_eq(json_array_size(runs), 3);
  for (size_t k = 0; k < 3; k++) /* numbered from 1, as the interaction ids */
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(runs, k), "run")), (json_int_t)k + 1);
  const json_t *r1 = json_array_get(runs, 0), *r3 = json_array_get(runs, 2);
  ck_assert_int_eq(json_integer_value(json_object_get(r1, "frames")), 100);
  ck_assert_int_eq(json_integer_value(json_object_get(r1, "jankFrames")), 5);
  ck_assert_double_eq_tol(json_number_value(json_object_get(r1, "jankRatio")), 0.05, 1e-9);
  ck_assert_double_eq_tol(json_number_value(json_object_get(r3, "jankRatio")), 0.04, 1e-9);
  /* p90 of 100: index llround(99 * 0.9) = 89 of the sorted values (95
   * calm ones 5005..5099 first); of 50: index 44 (48 calm, 6002..6049) */
  ck_assert_int_eq(json_integer_value(json_object_get(r1, "buildP90Us")), 5094);
  ck_assert_int_eq(json_integer_value(json_object_get(r1, "rasterP90Us")), 4089);
  ck_assert_int_eq(json_integer_value(json_object_get(r3, "buildP90Us")), 6046);
  ck_assert_int_eq(json_integer_value(json_object_get(r3, "rasterP90Us")), 4044);
  const json_t *sp = json_object_get(s, "spread");
  ck_assert_double_eq_tol(json_number_value(json_object_get(sp, "jankPoints")), 3.0, 1e-9);
  ck_assert_int_eq(json_integer_value(json_object_get(sp, "buildP90Us")), 6046 - 5094);
  ck_assert_int_eq(json_integer_value(json_object_get(sp, "rasterP90Us")), 4089 - 4044);
  /* the text line */
  json_t *r = json_pack("{s:s,s:{s:I,s:I,s:O}}", "action", "capture", "summary", "frames",
                        (json_int_t)250, "budgetUs", (json_int_t)16667, "workload", s);
  char *t = answer_text_render(r, 0);
  ck_assert_msg(strstr(t, "workload: fling key:feed, 3 runs: jank 5.0 %, 7.0 %, 4.0 % (spread 3.0 points)"),
                "%s", t);
  free(t);
  json_decref(r);
  json_decref(s);
  for (size_t i = 0; i < n; i++) record_frame_close(&f[i]);
  /* one run, none drawn: no spread */
  s = workload_summary(&w, f, 0, 16667, NULL);
  ck_assert_ptr_null(json_object_get(s, "spread"));
  ck_assert_ptr_null(json_object_get(s, "driveId"));
  ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(json_object_get(s, "runs"), 1), "frames")), 0);
  json_decref(s);
  /* one run of three drew frames: no spread, which needs two */
  n = add_run(f, 0, 2, 20, 1, 5000);
  s = workload_summary(&w, f, n, 16667, NULL);
  ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(json_object_get(s, "runs"), 1), "frames")), 20);
  ck_assert_ptr_null(json_object_get(s, "spread"));
  json_decref(s);
  for (size_t i = 0; i < n; i++) record_frame_close(&f[i]);
  workload_close(&w);
}
END_TEST

/* The label of the summary of a workload (text) without frames. */
static void summary_label(const char *text, char *label, size_t n) {
  workload_t w;
  char err[320];
  ck_assert_int_eq(parse(&w, text, err, sizeof err), 0);
  frame_t f[1];
  json_t *s = workload_summary(&w, f, 0, 16667, NULL);
  ck_assert_ptr_nonnull(s);
  snprintf(label, n, "%s", json_string_value(json_object_get(s, "label")));
  json_decref(s);
  workload_close(&w);
}

/* The summary's label of a long workload is cut at 511 bytes, "…" included
 * (32 taps of 30 bytes each would make 1 022). */
START_TEST(summary_label_is_cut_at_511_bytes) {
  char text[2048] = "{\"steps\":[";
  for (int i = 0; i < WORKLOAD_MAX_STEPS; i++)
    snprintf(text + strlen(text), sizeof text - strlen(text), "%s{\"tap\":\"key:item_%020d\"}",
             i ? "," : "", i);
  strcat(text, "]}");
  char label[600];
  summary_label(text, label, sizeof label);
  ck_assert_uint_eq(strlen(label), 511);
  ck_assert_str_eq(label + 508, "\xe2\x80\xa6");
  ck_assert(!strncmp(label, "tap key:item_00000000000000000000, tap key:item_", 48));
}
END_TEST

/* ... and cut between characters: 8 taps of "text:" + 60 × "é", the first
 * with an "x" more, put the cut inside an "é"; a label of half a character
 * is not UTF-8, and the summary would be dropped. */
START_TEST(summary_label_is_cut_between_characters) {
  char text[2048] = "{\"steps\":[";
  for (int i = 0; i < 8; i++) {
    snprintf(text + strlen(text), sizeof text - strlen(text), "%s{\"tap\":\"text:%s", i ? "," : "",
             i ? "" : "x");
    for (int k = 0; k < 60; k++) strcat(text, "\xc3\xa9");
    strcat(text, "\"}");
  }
  strcat(text, "]}");
  char label[600];
  summary_label(text, label, sizeof label);
  ck_assert_uint_eq(strlen(label), 510); /* the "é" at 507 is cut: "…" takes its place */
  ck_assert_str_eq(label + 507, "\xe2\x80\xa6");
}
END_TEST

START_TEST(failed_drive_text_names_why_and_what_is_on_screen) {
  json_t *r = load("{\"action\":\"capture\",\"workload\":{\"label\":\"fling key:fed\",\"steps\":[],"
                   "\"repeat\":1,\"runs\":[{\"run\":1,\"frames\":0,\"jankFrames\":0,\"jankRatio\":0,"
                   "\"buildP90Us\":0,\"rasterP90Us\":0}],\"drive\":{\"id\":\"d1\",\"via\":\"watcher\","
                   "\"state\":\"failed\",\"run\":1,\"runs\":1,\"step\":1,\"of\":1,"
                   "\"error\":\"key:fed: no widget\",\"candidates\":[\"key:feed\",\"type:ListView\"],"
                   "\"cut\":[\"1/2\"]}}}");
  char *t = answer_text_render(r, 1);
  ck_assert_msg(strstr(t, "workload failed at run 1 step 1: key:fed: no widget\n"), "%s", t);
  ck_assert_msg(strstr(t, "on screen: key:feed, type:ListView\n"), "%s", t);
  ck_assert_msg(strstr(t, "cut at 10 s (run/step): 1/2"), "%s", t);
  free(t);
  json_decref(r);
}
END_TEST

START_TEST(runs_change_needs_separation_beyond_spread) {
  double a[] = {0.18, 0.179, 0.185}, b[] = {0.30, 0.31, 0.29}, c[] = {0.181, 0.183, 0.18};
  ck_assert_str_eq(workload_runs_change(a, 3, b, 3, 0.01), "worse");
  ck_assert_str_eq(workload_runs_change(b, 3, a, 3, 0.01), "better");
  ck_assert_str_eq(workload_runs_change(a, 3, c, 3, 0.01), "same"); /* overlap */
  double d[] = {0.186, 0.188, 0.187};
  ck_assert_str_eq(workload_runs_change(a, 3, d, 3, 0.01), "same"); /* separated, under the floor */
  double wide[] = {0.10, 0.30}, e[] = {0.31, 0.33};
  ck_assert_str_eq(workload_runs_change(wide, 2, e, 2, 0.01), "same"); /* shift within the spread */
  ck_assert_str_eq(workload_runs_change(a, 1, b, 3, 0.01), "same");     /* one run: no samples */
  /* The gap must be more than WORKLOAD_RUNS_GAP (0.5) times the spread:
   * spread 2, a gap of exactly 1 is not enough, 1.5 is. */
  double lo[] = {10, 12}, at_half[] = {13, 13}, beyond[] = {13.5, 13.5};
  ck_assert_str_eq(workload_runs_change(lo, 2, at_half, 2, 0.01), "same");
  ck_assert_str_eq(workload_runs_change(lo, 2, beyond, 2, 0.01), "worse");
}
END_TEST

/* n frames of one steady distribution, the first `janky` over budget. */
static frame_t *steady(size_t n, size_t janky) {
  frame_t *f = calloc(n, sizeof *f);
  for (size_t i = 0; i < n; i++) {
    f[i].seq = (int64_t)i + 1;
    f[i].build_us = i < janky ? 25000 : 4000 + (int64_t)(i % 50) * 20;
    f[i].raster_us = 3000 + (int64_t)(i % 40) * 10;
    f[i].total_span_us = f[i].build_us + f[i].raster_us;
  }
  return f;
}

static json_t *runs_json(const char *steps, const double *jank, int n, json_int_t b90) {
  json_t *w = json_pack("{s:s,s:o,s:i,s:[]}", "label", "fling key:feed", "steps", load(steps),
                        "repeat", n, "runs");
  for (int i = 0; i < n; i++)
    json_array_append_new(json_object_get(w, "runs"),
                          json_pack("{s:i,s:i,s:i,s:f,s:I,s:I}", "run", i + 1, "frames", 100,
                                    "jankFrames", (int)(jank[i] * 100), "jankRatio", jank[i],
                                    "buildP90Us", b90 + i * 10, "rasterP90Us", (json_int_t)3400));
  return w;
}

START_TEST(compare_judges_runs_of_the_same_workload) {
  const char *fling = "[{\"fling\":{\"dy\":-3000,\"in\":\"key:feed\"}}]";
  double base[] = {0.18, 0.179, 0.185}, worse[] = {0.30, 0.31, 0.29}, same[] = {0.181, 0.183, 0.178};
  /* the frames alone say nothing changed */
  frame_t *fa = steady(300, 54), *fb = steady(300, 54);
  compare_side_t a = {"s1", fa, 300, 16667, 60, "profile", {0, 0, 0, 0}, NULL, 300, NULL};
  compare_side_t b = {"s2", fb, 300, 16667, 60, "profile", {0, 0, 0, 0}, NULL, 300, NULL};
  json_t *wa = runs_json(fling, base, 3, 5000), *wb = runs_json(fling, worse, 3, 5000);
  a.workload = wa;
  b.workload = wb;
  json_t *c = compare_sessions(&a, &b);
  ck_assert_str_eq(json_string_value(json_object_get(c, "verdict")), "regressed");
  ck_assert_str_eq(json_string_value(json_object_get(c, "decidedBy")), "jankRatio");
  const json_t *cw = json_object_get(c, "workload");
  ck_assert(json_is_true(json_object_get(cw, "same")));
  ck_assert(json_is_true(json_object_get(cw, "byRuns")));
  const json_t *jr = json_object_get(json_object_get(json_object_get(c, "metrics"), "jankRatio"), "runs");
  ck_assert_uint_eq(json_array_size(json_object_get(jr, "candidate")), 3);
  ck_assert_uint_eq(json_array_size(json_object_get(jr, "baseline")), 3); /* each side's every run */
  ck_assert_str_eq(json_string_value(json_object_get(jr, "change")), "worse");
  json_t *answer = json_pack("{s:s,s:O}", "action", "compare", "comparison", c);
  char *t = answer_text_render(answer, 0);
  ck_assert_msg(strstr(t, "both ran the same workload (fling key:feed); jank and p90s judged run by run"), "%s", t);
  free(t);
  json_decref(answer);
  json_decref(c);
  json_decref(wb);
  /* the same runs: unchanged, though it would be judged the same anyway */
  wb = runs_json(fling, same, 3, 5000);
  b.workload = wb;
  c = compare_sessions(&a, &b);
  ck_assert_str_eq(json_string_value(json_object_get(c, "verdict")), "unchanged");
  json_decref(c);
  json_decref(wb);
  /* frames that differ, runs that overlap: the runs decide (unchanged) */
  frame_t *fc = steady(300, 120);
  compare_side_t cc = {"s3", fc, 300, 16667, 60, "profile", {0, 0, 0, 0}, NULL, 300, NULL};
  wb = runs_json(fling, same, 3, 5000);
  cc.workload = wb;
  c = compare_sessions(&a, &cc);
  ck_assert_str_eq(json_string_value(json_object_get(c, "verdict")), "unchanged");
  json_decref(c);
  cc.workload = NULL;
  c = compare_sessions(&a, &cc); /* without the runs, the frames decide */
  ck_assert_str_eq(json_string_value(json_object_get(c, "verdict")), "regressed");
  ck_assert_ptr_nonnull(json_object_get(c, "workload"));
  ck_assert(json_is_false(json_object_get(json_object_get(c, "workload"), "same")));
  json_decref(c);
  json_decref(wb);
  /* build p90 runs 300 µs apart on a 7.6 ms baseline: under its 5 % floor */
  json_t *p1 = runs_json(fling, base, 3, 7600), *p2 = runs_json(fling, base, 3, 7900);
  a.workload = p1;
  b.workload = p2;
  c = compare_sessions(&a, &b);
  ck_assert_str_eq(json_string_value(json_object_get(c, "verdict")), "unchanged");
  json_decref(c);
  json_decref(p2);
  p2 = runs_json(fling, base, 3, 8100); /* 500 µs: over it */
  b.workload = p2;
  c = compare_sessions(&a, &b);
  ck_assert_str_eq(json_string_value(json_object_get(c, "verdict")), "regressed");
  ck_assert_str_eq(json_string_value(json_object_get(c, "decidedBy")), "buildUs");
  json_decref(c);
  json_decref(p1);
  json_decref(p2);
  a.workload = wa;
    /* different workloads: not comparable */
  wb = runs_json("[{\"scroll\":{\"dy\":-3000}}]", same, 3, 5000);
  b.workload = wb;
  c = compare_sessions(&a, &b);
  ck_assert(json_is_false(json_object_get(c, "comparable")));
  ck_assert(json_is_false(json_object_get(json_object_get(c, "workload"), "byRuns")));
  json_decref(c);
  json_decref(wb);
  json_decref(wa);
  free(fa);
  free(fb);
  free(fc);
}
END_TEST

/* Two runs a side are the fewest the runs can decide on (repeat 2); one is
 * not, and the frames decide. Either side with one run is enough to leave it
 * to the frames. */
START_TEST(two_runs_a_side_are_enough_to_judge_by_runs) {
  const char *fling = "[{\"fling\":{\"dy\":-3000,\"in\":\"key:feed\"}}]";
  double base[] = {0.18, 0.185}, worse[] = {0.30, 0.31};
  frame_t *fa = steady(300, 54), *fb = steady(300, 54);
  compare_side_t a = {"s1", fa, 300, 16667, 60, "profile", {0, 0, 0, 0}, NULL, 300, NULL};
  compare_side_t b = {"s2", fb, 300, 16667, 60, "profile", {0, 0, 0, 0}, NULL, 300, NULL};
  for (int na = 1; na <= 2; na++)
    for (int nb = 1; nb <= 2; nb++) {
      json_t *wa = runs_json(fling, base, na, 5000), *wb = runs_json(fling, worse, nb, 5000);
      json_object_set_new(wb, "repeat", json_integer(na)); /* the same workload, runs short */
      a.workload = wa;
      b.workload = wb;
      json_t *c = compare_sessions(&a, &b);
      int by_runs = na == 2 && nb == 2;
      ck_assert_msg(json_is_boolean(json_object_get(json_object_get(c, "workload"), "byRuns")) &&
                        json_is_true(json_object_get(json_object_get(c, "workload"), "byRuns")) == by_runs,
                    "%d and %d runs", na, nb);
      ck_assert_str_eq(json_string_value(json_object_get(c, "verdict")), by_runs ? "regressed" : "unchanged");
      json_decref(c);
      json_decref(wa);
      json_decref(wb);
    }
  free(fa);
  free(fb);
}
END_TEST

START_TEST(reply_drive_is_read_and_checked) {
  const char *base = "{\"protocol\":3,\"watcherVersion\":\"1\",\"runId\":\"r\",\"livenessCounter\":1,"
                     "\"nowUs\":1,\"collecting\":true,\"lifecycle\":\"resumed\",\"framesEnabled\":true,"
                     "\"refreshRate\":60,\"interaction\":null,\"firstSeq\":0,\"lastSeq\":0,"
                     "\"pending\":0,\"droppedAttributions\":0,\"drive\":%s}";
  char text[1200], err[RECORD_ERR_LEN];
  snprintf(text, sizeof text, base,
           "{\"id\":\"d2\",\"state\":\"failed\",\"run\":1,\"runs\":3,\"step\":2,\"of\":2,"
           "\"error\":\"text:Nope: no widget\",\"candidates\":[\"key:feed\",\"text:Item 1\"],\"cut\":[\"1/1\"]}");
  json_t *j = load(text);
  record_reply_t r;
  ck_assert_int_eq(record_reply_parse(&r, j, err, sizeof err), 0);
  ck_assert(r.drive.present);
  ck_assert_str_eq(r.drive.id, "d2");
  ck_assert_str_eq(r.drive.state, "failed");
  ck_assert_int_eq(r.drive.runs, 3);
  ck_assert_int_eq(r.drive.step, 2);
  ck_assert_str_eq(r.drive.error, "text:Nope: no widget");
  ck_assert_int_eq(r.drive.ncandidates, 2);
  ck_assert_str_eq(r.drive.candidates[1], "text:Item 1");
  ck_assert_int_eq(r.drive.ncut, 1);
  record_reply_close(&r);
  json_decref(j);
  snprintf(text, sizeof text, base, /* 31 bytes: the longest id kept */
           "{\"id\":\"d234567890123456789012345678901\",\"state\":\"done\",\"run\":1,\"runs\":1,"
           "\"step\":1,\"of\":1}");
  j = load(text);
  ck_assert_int_eq(record_reply_parse(&r, j, err, sizeof err), 0);
  ck_assert_str_eq(r.drive.id, "d234567890123456789012345678901");
  record_reply_close(&r);
  json_decref(j);
  static const char *const bad[][2] = {
      {"{\"id\":\"d2\",\"state\":\"paused\",\"run\":1,\"runs\":1,\"step\":1,\"of\":1}", "reply.drive.state"},
      {"{\"state\":\"done\",\"run\":1,\"runs\":1,\"step\":1,\"of\":1}", "reply.drive.id"},
      /* 32 bytes: one over the id's room (31 and its end) */
      {"{\"id\":\"d2345678901234567890123456789012\",\"state\":\"done\",\"run\":1,\"runs\":1,"
       "\"step\":1,\"of\":1}",
       "reply.drive.id: must be a string of 1 to 31 bytes"},
      {"{\"id\":\"d2\",\"state\":\"done\",\"runs\":1,\"step\":1,\"of\":1}", "reply.drive.run"},
      {"{\"id\":\"d2\",\"state\":\"done\",\"run\":1,\"runs\":1,\"step\":1,\"of\":1,\"candidates\":[1]}",
       "reply.drive.candidates[0]"},
      {"[1]", "reply.drive: must be an object"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    snprintf(text, sizeof text, base, bad[i][0]);
    j = load(text);
    ck_assert_int_eq(record_reply_parse(&r, j, err, sizeof err), -1);
    ck_assert_msg(strstr(err, bad[i][1]) != NULL, "%s -> %s", bad[i][0], err);
    json_decref(j);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("workload");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, parses_every_step_with_defaults);
  tcase_add_test(tc, bad_steps_name_the_field);
  tcase_add_test(tc, finder_of_wide_characters_is_kept_whole);
  tcase_add_test(tc, driver_commands_are_flutter_drivers_wire);
  tcase_add_test(tc, interaction_names_round_trip);
  tcase_add_test(tc, summary_gives_runs_and_spread);
  tcase_add_test(tc, summary_label_is_cut_at_511_bytes);
  tcase_add_test(tc, summary_label_is_cut_between_characters);
  tcase_add_test(tc, failed_drive_text_names_why_and_what_is_on_screen);
  tcase_add_test(tc, runs_change_needs_separation_beyond_spread);
  tcase_add_test(tc, compare_judges_runs_of_the_same_workload);
  tcase_add_test(tc, two_runs_a_side_are_enough_to_judge_by_runs);
  tcase_add_test(tc, reply_drive_is_read_and_checked);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
