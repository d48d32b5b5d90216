/* answer_text: the text block an agent reads, rendered from real results.
 * The fixtures in tests/unit/answers/ are structuredContent captured from
 * telescope-mcp --sim (seed 7: janky with trackWidgets, raster-bound,
 * layout-bound, and no app at all), so the budgets are checked on the shapes
 * the tool really produces. Also the tool description's size and promises
 * (frames_tool_doc.c). Set ANSWER_TEXT_PRINT=1 to see the texts. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer_text.h"
#include "cpuprof.h"
#include "frame_events.h"
#include "frames_tool.h"
#include "schema_embed.h"

/* The doc strings are weak while frames_tool.c keeps an older copy of the
 * instructions; include them under other names to test these ones. */
#define frames_tool_description doc_description
#define frames_tool_instructions doc_instructions
#include "../../server/frames_tool_doc.c"
#undef frames_tool_description
#undef frames_tool_instructions

static json_t *fixture(const char *name, int *is_error) {
  char path[512];
  snprintf(path, sizeof path, "%s/tests/unit/answers/%s.json", TELESCOPE_SOURCE_DIR, name);
  json_error_t e;
  json_t *f = json_load_file(path, 0, &e);
  ck_assert_msg(f != NULL, "%s: %s", path, e.text);
  *is_error = json_is_true(json_object_get(f, "isError"));
  json_t *r = json_incref(json_object_get(f, "result"));
  json_decref(f);
  return r;
}

static char *render(const json_t *r, int is_error, const char *name) {
  char *t = answer_text_render(r, is_error);
  ck_assert_ptr_nonnull(t);
  if (getenv("ANSWER_TEXT_PRINT")) fprintf(stderr, "---- %s (%zu bytes)\n%s\n", name, strlen(t), t);
  ck_assert_msg(t[0] && t[strlen(t) - 1] != '\n', "no trailing newline");
  return t;
}

static char *render_fixture(const char *name, json_t **out) {
  int is_error;
  json_t *r = fixture(name, &is_error);
  char *t = render(r, is_error, name);
  if (out)
    *out = r;
  else
    json_decref(r);
  return t;
}

/* The line (0-based) where needle first appears, or -1. */
static int line_of(const char *text, const char *needle) {
  const char *at = strstr(text, needle);
  if (!at) return -1;
  int n = 0;
  for (const char *p = text; p < at; p++) n += *p == '\n';
  return n;
}

START_TEST(janky_stop_within_budget_cause_first) {
  json_t *r;
  char *t = render_fixture("stop_janky", &r);
  ck_assert_uint_le(strlen(t), 1500);
  const json_t *sum = json_object_get(r, "summary");
  const char *first = json_string_value(
      json_object_get(json_array_get(json_object_get(sum, "findings"), 0), "name"));
  ck_assert_str_eq(first, "SlowWidget");
  /* The verdict first: frames, jank, what bound it; the cause within 3 lines. */
  char verdict[160];
  snprintf(verdict, sizeof verdict, "stop: %lld frames, %lld janky",
           (long long)json_integer_value(json_object_get(sum, "frames")),
           (long long)json_integer_value(json_object_get(json_object_get(sum, "jank"), "frames")));
  ck_assert_int_eq(line_of(t, verdict), 0);
  ck_assert_int_eq(line_of(t, "bound by build"), 0);
  ck_assert_int_ge(line_of(t, "cause 1: SlowWidget (widget)"), 1);
  ck_assert_int_le(line_of(t, "cause 1: SlowWidget (widget)"), 2);
  /* The share of the jank it explains is in the cause line. */
  ck_assert_ptr_nonnull(
      strstr(t, "cause 1: SlowWidget (widget) explains 97% of the jank, in 30/30"));
  /* Worst frames that share a cause are merged on one line, frame numbers in
   * order. */
  const json_t *wf = json_object_get(sum, "worstFrames");
  ck_assert_int_eq(json_array_size(wf), 5);
  const char *p = strstr(t, "\nframes "), *eol = strchr(p + 1, '\n');
  ck_assert_ptr_nonnull(p);
  const char *named = strstr(p, ": SlowWidget ");
  ck_assert_msg(named && (!eol || named < eol), "the merged line names the cause");
  ck_assert_ptr_nonnull(strstr(t, "\nframes 58, 74, 90, 187, 242: SlowWidget "));
  ck_assert_ptr_nonnull(strstr(t, "\xe2\x80\x93")); /* a range: 36.2–39.9 ms */
  /* ms with one decimal: the fixture's worst build, 48234 µs, reads 48.2. */
  ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(sum, "buildUs"), "max")),
                   48234);
  ck_assert_ptr_nonnull(strstr(t, "max 48.2 ms"));
  /* connection and liveness belong in status, not here. */
  ck_assert_ptr_null(strstr(t, "liveness"));
  ck_assert_ptr_null(strstr(t, "connected"));
  /* Far shorter than the JSON it stands for. */
  char *json = json_dumps(r, JSON_COMPACT);
  ck_assert_uint_lt(strlen(t) * 4, strlen(json));
  free(json);
  free(t);
  json_decref(r);
}
END_TEST

/* Where to edit: the CPU samples' functions after the causes, the app's own
 * numbered and first, other code as context, each with its place; a widget
 * finding carries its `at`; still within 1 500 bytes. The where object is
 * added to the real janky stop (the shape cpuprof_where_json gives). */
START_TEST(where_lines_after_the_causes) {
  json_t *r;
  free(render_fixture("stop_janky", &r));
  json_t *sum = json_object_get(r, "summary");
  json_error_t e;
  json_t *w = json_loads(
      "{\"samplePeriodUs\":1000,\"jankySamples\":640,\"samplesPerJankyFrame\":21.3,"
      "\"fewSamples\":false,\"functions\":["
      "{\"function\":\"SlowWidget.build\",\"code\":\"app\",\"file\":\"lib/slow_widget.dart\","
      "\"line\":42,\"jankyUs\":24100,\"calmUs\":0,\"explainedUs\":402000,\"explains\":0.8,"
      "\"frames\":30,\"top\":\"jsonDecode\"},"
      "{\"function\":\"_layoutCards\",\"code\":\"app\",\"file\":\"lib/cards.dart\","
      "\"jankyUs\":3000,\"calmUs\":1000,\"explainedUs\":60000,\"explains\":0.12,\"frames\":30},"
      "{\"function\":\"RenderFlex.performLayout\",\"code\":\"flutter\","
      "\"file\":\"package:flutter/src/rendering/flex.dart\",\"line\":900,\"jankyUs\":2000,"
      "\"calmUs\":500,\"explainedUs\":45000,\"explains\":0.09,\"frames\":28}]}",
      0, &e);
  ck_assert_ptr_nonnull(w);
  json_object_set_new(sum, "where", w);
  ck_assert_int_eq(cpuprof_attach(json_object_get(sum, "findings"), w), 0);
  char *t = render(r, 0, "stop with where");
  ck_assert_uint_le(strlen(t), 1500);
  ck_assert_ptr_nonnull(strstr(t, "\n  at: SlowWidget.build (lib/slow_widget.dart:42)\n"));
  int w1 = line_of(t,
                   "where 1: SlowWidget.build (lib/slow_widget.dart:42) explains 80% of the "
                   "jank: 24.1 ms per janky frame vs 0.0 ms otherwise (mostly in jsonDecode)");
  int w2 = line_of(t, "where 2: _layoutCards (lib/cards.dart) explains 12%");
  int ctx = line_of(t,
                    "where (flutter code): RenderFlex.performLayout "
                    "(package:flutter/src/rendering/flex.dart:900)");
  ck_assert_int_gt(w1, line_of(t, "cause 1:"));
  ck_assert_int_eq(w2, w1 + 1);
  ck_assert_int_eq(ctx, w2 + 1);
  free(t);
  /* A worst frame's place: omitted where the cause's name already says it
   * (SlowWidget → SlowWidget.build), on a line of its own where it differs. */
  json_t *wf = json_object_get(sum, "worstFrames");
  for (size_t i = 0; i < json_array_size(wf); i++)
    json_object_set_new(json_array_get(wf, i), "at",
                        json_string("SlowWidget.build (lib/slow_widget.dart:42)"));
  json_object_set_new(json_array_get(wf, 0), "at", json_string("Feed.parse (lib/feed.dart:9)"));
  t = render(r, 0, "worst frames with places");
  ck_assert_ptr_null(strstr(t, " in SlowWidget.build"));
  ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(wf, 0), "frameNumber")), 187);
  ck_assert_ptr_nonnull(strstr(t, "\nframe 187: SlowWidget "));
  ck_assert_ptr_nonnull(strstr(t, " in Feed.parse (lib/feed.dart:9)\n"));
  ck_assert_ptr_nonnull(strstr(t, "\nframes 58, 74, 90, 242: SlowWidget "));
  free(t);
  /* Too few samples says so, with the period. */
  json_object_set_new(w, "fewSamples", json_true());
  json_object_set_new(w, "samplesPerJankyFrame", json_real(1.5));
  t = render(r, 0, "few samples");
  ck_assert_ptr_nonnull(
      strstr(t, "where: 1.5 CPU samples per janky frame (one per 1000 µs): too few"));
  free(t);
  json_decref(r);
}
END_TEST

/* However many findings there are, only the first ANSWER_TEXT_HINTS get a
 * hint line, and those in order (issue 24, item 7: one more was printed). */
START_TEST(hint_lines_stop_at_their_limit) {
  json_t *r;
  free(render_fixture("stop_janky", &r));
  json_t *fs = json_array();
  for (int i = 0; i < ANSWER_TEXT_HINTS + 3; i++) {
    char name[32], hint[32];
    snprintf(name, sizeof name, "Widget%d", i);
    snprintf(hint, sizeof hint, "hint number %d", i);
    json_array_append_new(
        fs, json_pack("{s:s,s:s,s:s,s:i,s:i,s:i,s:i,s:s}", "kind", "widget", "name", name, "thread",
                      "ui", "jankFrames", 5, "ofJankFrames", 9, "perJankFrameUs", 20000 - i * 1000,
                      "perOtherFrameUs", 500, "hint", hint));
  }
  json_object_set_new(json_object_get(r, "summary"), "findings", fs);
  char *t = render(r, 0, "stop with many findings");
  int hints = 0;
  for (const char *p = t; (p = strstr(p, "  hint: ")); p++) hints++;
  ck_assert_int_eq(hints, ANSWER_TEXT_HINTS);
  char want[32];
  snprintf(want, sizeof want, "hint number %d", ANSWER_TEXT_HINTS - 1);
  ck_assert_ptr_nonnull(strstr(t, want));
  snprintf(want, sizeof want, "hint number %d", ANSWER_TEXT_HINTS);
  ck_assert_ptr_null(strstr(t, want));
  free(t);
  json_decref(r);
}
END_TEST

START_TEST(raster_and_layout_bound_stops) {
  char *t = render_fixture("capture_raster", NULL);
  ck_assert_uint_le(strlen(t), 1500);
  ck_assert_int_eq(line_of(t, "bound by raster"), 0);
  ck_assert_int_eq(line_of(t, "cause 1: raster (raster thread) explains 100% of the jank"), 2);
  ck_assert_ptr_nonnull(strstr(t, ": raster ")); /* the worst frames' cause */
  free(t);
  t = render_fixture("capture_layout", NULL);
  ck_assert_uint_le(strlen(t), 1500);
  /* Advice is not a cause: the option to switch on is on its own line. */
  ck_assert_int_eq(line_of(t, "cause 1: LAYOUT (phase) explains 92% of the jank"), 2);
  ck_assert_int_eq(line_of(t, "next: start again with trackLayouts: true"), 4);
  ck_assert_ptr_null(strstr(t, "cause 2"));
  free(t);
}
END_TEST

START_TEST(short_actions_within_600) {
  static const char *const names[] = {"status", "start", "mark", "read"};
  for (size_t i = 0; i < 4; i++) {
    char *t = render_fixture(names[i], NULL);
    ck_assert_msg(strncmp(t, names[i], strlen(names[i])) == 0, "%s: starts with the action", t);
    if (strcmp(names[i], "read")) ck_assert_uint_le(strlen(t), 600);
    free(t);
  }
  char *t = render_fixture("status", NULL);
  ck_assert_int_eq(line_of(t, "status: connected, isolate main (native), watcher present"), 0);
  ck_assert_int_ge(line_of(t, "liveness: "), 1);
  free(t);
  t = render_fixture("start", NULL);
  ck_assert_ptr_nonnull(strstr(t, "session s1 active, tracking widgets"));
  ck_assert_ptr_nonnull(strstr(t, "then call stop"));
  free(t);
  t = render_fixture("mark", NULL);
  ck_assert_str_eq(t, "mark: interaction scroll-feed begun");
  free(t);
  json_t *r;
  t = render_fixture("read", &r);
  ck_assert_uint_le(strlen(t), 1500);
  char want[300];
  snprintf(want, sizeof want, "nextCursor: %s",
           json_string_value(json_object_get(r, "nextCursor")));
  ck_assert_ptr_nonnull(strstr(t, want));
  json_decref(r);
  free(t);
}
END_TEST

START_TEST(error_carries_the_diagnosis) {
  json_t *r;
  char *t = render_fixture("stop_not_connected", &r);
  ck_assert_uint_le(strlen(t), 600);
  ck_assert_int_eq(line_of(t, "error: stop failed"), 0);
  const json_t *d = json_object_get(r, "diagnosis");
  char want[400];
  snprintf(want, sizeof want, "diagnosis not_connected: %s Hint: %s",
           json_string_value(json_object_get(d, "message")),
           json_string_value(json_object_get(d, "hint")));
  ck_assert_ptr_nonnull(strstr(t, want));
  ck_assert_ptr_nonnull(strstr(t, "connection: not_connected"));
  json_decref(r);
  free(t);
}
END_TEST

/* A diagnosis whose evidence.detail explains the failure carries it: the
 * malformed part of a URI, between the message and the hint. */
START_TEST(diagnosis_detail_in_the_text) {
  json_t *r = json_pack("{s:s,s:{s:s,s:s,s:s,s:{s:s}}}", "action", "status", "diagnosis", "code",
                        "not_connected", "message", "No Flutter app is connected.", "hint",
                        "Pass vmServiceUri.", "evidence", "detail",
                        "VM-service URI scheme must be http, https, ws or wss");
  char *t = render(r, 0, "detail");
  ck_assert_str_eq(t,
                   "status: diagnosis not_connected: No Flutter app is connected. Detail: "
                   "VM-service URI scheme must be http, https, ws or wss. Hint: Pass "
                   "vmServiceUri.");
  free(t);
  /* A detail that ends its own sentence gets no second full stop. */
  json_object_set_new(json_object_get(json_object_get(r, "diagnosis"), "evidence"), "detail",
                      json_string("the app threw."));
  t = render(r, 0, "detail with a full stop");
  ck_assert_ptr_nonnull(strstr(t, " Detail: the app threw. Hint: "));
  free(t);
  json_object_del(json_object_get(json_object_get(r, "diagnosis"), "evidence"), "detail");
  t = render(r, 0, "no detail");
  ck_assert_ptr_null(strstr(t, "Detail:"));
  free(t);
  json_decref(r);
}
END_TEST

/* budgets on stop/capture: the verdict line right after the summary's
 * verdict, in check's words. */
START_TEST(budgets_verdict_line) {
  int is_error;
  json_t *r = fixture("stop_janky", &is_error);
  json_object_set_new(r, "budgets",
                      json_pack("{s:s,s:[{s:s,s:f,s:f},{s:s,s:f,s:f}],s:[s,s,s]}", "verdict",
                                "fail", "failed", "name", "jankRatioMax", "limit", 0.05, "actual",
                                0.35, "name", "buildP90MsMax", "limit", 16.0, "actual", 22.4,
                                "checked", "jankRatioMax", "buildP90MsMax", "frozenMax"));
  char *t = render(r, is_error, "budgets fail");
  ck_assert_int_eq(line_of(t,
                           "budgets: FAIL jankRatioMax 0.35 > 0.05; buildP90MsMax 22.4 > 16 "
                           "(1 of 3 passed)\n"),
                   2);
  ck_assert_uint_le(strlen(t), 1500);
  free(t);
  json_object_set_new(
      r, "budgets",
      json_pack("{s:s,s:[],s:[s]}", "verdict", "pass", "failed", "checked", "frozenMax"));
  t = render(r, is_error, "budgets pass");
  ck_assert_int_eq(line_of(t, "budgets: PASS (1 checked)\n"), 2);
  free(t);
  json_object_del(r, "budgets");
  t = render(r, is_error, "no budgets");
  ck_assert_int_eq(line_of(t, "budgets:"), -1);
  free(t);
  json_decref(r);
}
END_TEST

/* compare: the verdict and what decided it, each moved metric with before →
 * after and p, the unmoved ones on one line, the moved finding and
 * interaction, and the warnings (not-comparable ones first and so marked). */
static json_t *comparison(int comparable) {
  json_error_t err;
  json_t *c = json_pack_ex(
      &err, 0,
      "{s:{s:s,s:i},s:{s:s,s:i},s:s,s:b,s:s,s:["
      "{s:s,s:s,s:b},{s:s,s:s,s:b}],"
      "s:{s:{s:f,s:f,s:f,s:b,s:s,s:i,s:i},"
      "s:{s:f,s:f,s:f,s:b,s:s,s:i,s:i},"
      "s:{s:{s:i,s:i},s:{s:i,s:i},s:f,s:f,s:b,s:s},"
      "s:{s:{s:i,s:i},s:{s:i,s:i},s:f,s:f,s:b,s:s}},"
      "s:[{s:s,s:f,s:f,s:f,s:s},{s:s,s:f,s:f,s:f,s:s}],"
      "s:[{s:s,s:s},{s:s,s:s}]}",
      "baseline", "id", "s1", "frames", 240, "candidate", "id", "s2", "frames", 236, "verdict",
      "improved", "comparable", comparable, "decidedBy", "jankRatio", "warnings", "code",
      "debug_build", "message", "debug-build timings are inflated", "notComparable", 0, "code",
      "budget_differs", "message", "budgets differ (16667 µs vs 8000 µs)", "notComparable",
      !comparable, "metrics", "jankRatio", "baseline", 0.3, "candidate", 0.0125, "p", 1.2e-9,
      "significant", 1, "change", "better", "baselineCount", 72, "candidateCount", 3, "frozen",
      "baseline", 0.0, "candidate", 0.0, "p", 1.0, "significant", 0, "change", "same",
      "baselineCount", 0, "candidateCount", 0, "buildUs", "baseline", "p50", 9100, "p90", 30300,
      "candidate", "p50", 4000, "p90", 5200, "shiftUs", -5050.0, "p", 3.4e-12, "significant", 1,
      "change", "better", "rasterUs", "baseline", "p50", 2800, "p90", 4200, "candidate", "p50",
      3100, "p90", 4100, "shiftUs", 300.0, "p", 0.28, "significant", 0, "change", "same",
      "findings", "name", "SlowWidget", "baselineUsPerFrame", 2700.0, "candidateUsPerFrame", 0.0,
      "p", 1e-7, "change", "better", "name", "Card", "baselineUsPerFrame", 400.0,
      "candidateUsPerFrame", 410.0, "p", 0.8, "change", "same", "interactions", "interactionId",
      "scroll", "verdict", "improved", "interactionId", "tap", "verdict", "unchanged");
  ck_assert_msg(c != NULL, "%s", err.text);
  json_t *r = json_pack("{s:s,s:o}", "action", "compare", "comparison", c);
  return r;
}

START_TEST(compare_verdict_and_moved_metrics) {
  json_t *r = comparison(1);
  char *t = render(r, 0, "compare");
  ck_assert_str_eq(
      t,
      "compare: improved, candidate s2 vs baseline s1 (236 vs 240 frames; decided by jank ratio)\n"
      "  jank ratio 30.0% \xe2\x86\x92 1.2% (72 \xe2\x86\x92 3 frames): better, p=1.2e-09\n"
      "  build p50 9.1 \xe2\x86\x92 4.0 ms, p90 30.3 \xe2\x86\x92 5.2 ms: better (shift -5.0 "
      "ms), p=3.4e-12\n"
      "  no significant change: frozen frames 0 \xe2\x86\x92 0, p=1; raster p50 2.8 "
      "\xe2\x86\x92 3.1 ms, p90 4.2 \xe2\x86\x92 4.1 ms, p=0.28\n"
      "  SlowWidget: 2.7 \xe2\x86\x92 0.0 ms per frame: better, p=1e-07\n"
      "  interactions: scroll improved\n"
      "warning: debug-build timings are inflated\n"
      "warning: budgets differ (16667 \xc2\xb5s vs 8000 \xc2\xb5s)");
  free(t);
  json_decref(r);
  /* Not comparable: said first, the verdict kept only as what was measured,
   * the reason first among the warnings. */
  r = comparison(0);
  t = render(r, 0, "compare not comparable");
  ck_assert_int_eq(line_of(t,
                           "compare: NOT COMPARABLE (as measured: improved; do not act on "
                           "it), candidate s2"),
                   0);
  ck_assert_int_lt(line_of(t, "warning (not comparable): budgets differ"),
                   line_of(t, "warning: debug-build"));
  ck_assert_ptr_null(strstr(t, "compare: ok"));
  free(t);
  json_decref(r);
}
END_TEST

/* The optional lines, each present only when its field is. */
START_TEST(warnings_cursor_truncation_chart_frames) {
  json_t *r = json_pack(
      "{s:s,s:{s:I,s:I,s:{s:I,s:f,s:I,s:I,s:I,s:s}},s:[s,s],s:s,s:{s:s},s:{s:b,s:I},"
      "s:[{s:I},{s:I}]}",
      "action", "read", "summary", "frames", (json_int_t)2, "budgetUs", (json_int_t)8333, "jank",
      "frames", (json_int_t)0, "ratio", 0.0, "frozen", (json_int_t)0, "buildMissed", (json_int_t)0,
      "rasterMissed", (json_int_t)0, "boundBy", "none", "warnings", "w one", "w two", "nextCursor",
      "CUR", "chart", "path", "/tmp/c.svg", "truncated", "frames", 1, "omitted", (json_int_t)7,
      "frames", "seq", (json_int_t)41, "seq", (json_int_t)42);
  char *t = render(r, 0, "optional");
  ck_assert_int_eq(line_of(t, "read: 2 frames, 0 janky (0.0%); budget 8.3 ms"), 0);
  ck_assert_ptr_null(strstr(t, "bound by")); /* nothing janky: no boundBy to tell */
  ck_assert_int_lt(line_of(t, "warning: w one"), line_of(t, "warning: w two"));
  ck_assert_ptr_nonnull(strstr(t,
                               "frames: 2 listed in structuredContent (seq 41\xe2\x80\x93"
                               "42)"));
  ck_assert_ptr_nonnull(strstr(t, "truncated: {\"frames\":true,\"omitted\":7}"));
  ck_assert_ptr_nonnull(strstr(t, "nextCursor: CUR"));
  ck_assert_ptr_nonnull(strstr(t, "chart: /tmp/c.svg"));
  free(t);
  json_decref(r);
  /* Nothing known at all still says which action it was. */
  r = json_object();
  t = render(r, 0, "empty");
  ck_assert_str_eq(t, "telescope_frames: ok");
  free(t);
  json_decref(r);
}
END_TEST

/* Worst frames with different causes: one line per cause, at most three;
 * a frame that missed on raster and rasterized longer than it built is
 * blamed on raster; phases only when nothing below them is named. */
/* Issue 19: start-up frames have their own line and are no cause; a worst
 * frame that made no jank is not listed; GC the server holds for a frame is
 * on its line, and names the line when it is the frame's own cause; advice
 * for an app without the watcher is a `next` line, never a cause. */
START_TEST(startup_gc_and_next_lines) {
  json_t *r = json_loads(
      "{\"action\":\"capture\",\"summary\":{\"frames\":40,\"budgetUs\":16667,"
      "\"jank\":{\"frames\":2,\"ratio\":0.0513,\"frozen\":0,\"buildMissed\":2,"
      "\"rasterMissed\":0,\"boundBy\":\"build\",\"overUs\":20000},"
      "\"startup\":{\"frames\":1,\"frameNumbers\":[1],\"buildUsMax\":1712345,"
      "\"rasterUsMax\":40100},"
      "\"findings\":[{\"kind\":\"gc\",\"name\":\"GC\",\"thread\":\"ui\",\"jankFrames\":2,"
      "\"ofJankFrames\":2,\"perJankFrameUs\":19000,\"perOtherFrameUs\":0,"
      "\"explainedUs\":19000,\"explains\":0.95,\"hint\":\"h\"}],"
      "\"next\":[{\"kind\":\"watcher\",\"why\":\"add the telescope watcher\"}],"
      "\"worstFrames\":["
      "{\"seq\":30,\"frameNumber\":830,\"buildUsMax\":0,\"buildUs\":26000,\"rasterUs\":1000,"
      "\"totalSpanUs\":1,\"gcUs\":19000,\"topBlocks\":[{\"name\":\"BUILD\",\"selfMicros\":2400}],"
      "\"cause\":{\"kind\":\"gc\",\"name\":\"GC\",\"us\":19000}},"
      "{\"seq\":31,\"frameNumber\":831,\"buildUs\":20000,\"rasterUs\":1000,"
      "\"totalSpanUs\":1,\"gcUs\":1500,\"topBlocks\":[{\"name\":\"Tile\",\"selfMicros\":9000}],"
      "\"cause\":{\"kind\":\"widget\",\"name\":\"Tile\",\"us\":9000}},"
      "{\"seq\":12,\"frameNumber\":812,\"buildUs\":9000,\"rasterUs\":1000,\"totalSpanUs\":1}]}}",
      0, NULL);
  ck_assert_ptr_nonnull(r);
  char *t = render(r, 0, "startup");
  ck_assert_int_eq(line_of(t, "startup: 1 frame (frame 1), build max 1712.3 ms"), 1);
  ck_assert_int_eq(line_of(t, "cause 1: GC (gc) explains 95% of the jank, in 2/2"), 2);
  ck_assert_int_eq(line_of(t, "next: add the telescope watcher"), 4);
  ck_assert_ptr_nonnull(strstr(t, "\nframe 830: GC 19.0 ms (build 26.0 ms)\n"));
  ck_assert_ptr_nonnull(strstr(t, "\nframe 831: Tile 9.0 ms (build 20.0 ms, GC 1.5 ms)"));
  ck_assert_ptr_null(strstr(t, "812")); /* within budget: not a worst-frame line */
  ck_assert_ptr_null(strstr(t, "cause 2"));
  free(t);
  /* The no-watcher warning is not said twice: the next line asks for it. */
  json_object_set_new(r, "warnings", json_pack("[s,s]", FE_NOTE, "w"));
  t = render(r, 0, "startup, warned");
  ck_assert_ptr_null(strstr(t, "no telescope watcher in the app"));
  ck_assert_ptr_nonnull(strstr(t, "\nwarning: w"));
  free(t);
  json_object_set_new(json_object_get(r, "summary"), "next", json_array());
  t = render(r, 0, "startup, no next");
  ck_assert_ptr_nonnull(strstr(t, "warning: " FE_NOTE));
  free(t);
  json_decref(r);
}
END_TEST

START_TEST(worst_frames_by_cause) {
  json_t *r = json_loads(
      "{\"action\":\"stop\",\"summary\":{\"frames\":9,\"budgetUs\":16667,"
      "\"jank\":{\"frames\":5,\"ratio\":0.5556,\"frozen\":0,\"buildMissed\":4,"
      "\"rasterMissed\":1,\"boundBy\":\"build\"},\"worstFrames\":["
      "{\"seq\":9,\"frameNumber\":9,\"buildUs\":3000,\"rasterUs\":50000,\"totalSpanUs\":1,"
      "\"topBlocks\":[{\"name\":\"Big\",\"selfMicros\":2000}]},"
      "{\"seq\":7,\"frameNumber\":7,\"buildUs\":40000,\"rasterUs\":1000,\"totalSpanUs\":1,"
      "\"topBlocks\":[{\"name\":\"BUILD\",\"selfMicros\":30000},{\"name\":\"Big\",\"selfMicros\":"
      "9000}]},"
      "{\"seq\":3,\"frameNumber\":3,\"buildUs\":30000,\"rasterUs\":1000,\"totalSpanUs\":1,"
      "\"topBlocks\":[{\"name\":\"LAYOUT\",\"selfMicros\":20000}]},"
      "{\"seq\":2,\"frameNumber\":2,\"buildUs\":29000,\"rasterUs\":1000,\"totalSpanUs\":1,"
      "\"topBlocks\":[{\"name\":\"Big\",\"selfMicros\":8000}]},"
      "{\"seq\":5,\"frameNumber\":5,\"buildUs\":20000,\"rasterUs\":1000,\"totalSpanUs\":1}]}}",
      0, NULL);
  ck_assert_ptr_nonnull(r);
  char *t = render(r, 0, "causes");
  ck_assert_int_eq(line_of(t, "frame 9: raster 50.0 ms"), 1);
  ck_assert_int_eq(line_of(t,
                           "frames 2, 7: Big 8.0\xe2\x80\x93"
                           "9.0 ms (build 29.0\xe2\x80\x93"
                           "40.0 ms)"),
                   2);
  ck_assert_int_eq(line_of(t, "frame 3: LAYOUT 20.0 ms (build 30.0 ms)"), 3);
  ck_assert_ptr_null(strstr(t, "frame 5")); /* a fourth cause line is left out */
  free(t);
  json_decref(r);
}
END_TEST

/* The GC range of a line covers only the frames that had GC: one frame
 * with 1.5 ms of it and one with none read "GC 1.5 ms", never "0.0–1.5". */
START_TEST(gc_range_of_the_frames_that_had_gc) {
  json_t *r = json_loads(
      "{\"action\":\"stop\",\"summary\":{\"frames\":9,\"budgetUs\":16667,"
      "\"jank\":{\"frames\":2,\"ratio\":0.2222,\"frozen\":0,\"buildMissed\":2,"
      "\"rasterMissed\":0,\"boundBy\":\"build\"},\"worstFrames\":["
      "{\"seq\":4,\"frameNumber\":40,\"buildUs\":25000,\"rasterUs\":1000,\"totalSpanUs\":1,"
      "\"gcUs\":1500,\"cause\":{\"kind\":\"widget\",\"name\":\"Tile\",\"us\":9000}},"
      "{\"seq\":6,\"frameNumber\":60,\"buildUs\":24000,\"rasterUs\":1000,\"totalSpanUs\":1,"
      "\"cause\":{\"kind\":\"widget\",\"name\":\"Tile\",\"us\":8000}}]}}",
      0, NULL);
  ck_assert_ptr_nonnull(r);
  char *t = render(r, 0, "gc range");
  ck_assert_msg(strstr(t,
                       "frames 40, 60: Tile 8.0\xe2\x80\x93"
                       "9.0 ms (build 24.0\xe2\x80\x93"
                       "25.0 ms, GC 1.5 ms)") != NULL,
                "%s", t);
  free(t);
  json_decref(r);
}
END_TEST

/* A worst frame's own cause (frame_cause.h) is its label, whatever its
 * largest block: 854 builds for 8.4 ms as calm frames do, its PAINT is why. */
START_TEST(worst_frame_labelled_by_its_own_cause) {
  json_t *r = json_loads(
      "{\"action\":\"stop\",\"summary\":{\"frames\":16,\"budgetUs\":16667,"
      "\"jank\":{\"frames\":2,\"ratio\":0.125,\"frozen\":0,\"buildMissed\":2,"
      "\"rasterMissed\":0,\"boundBy\":\"build\"},\"worstFrames\":["
      "{\"seq\":5,\"frameNumber\":855,\"buildUs\":53682,\"rasterUs\":7133,\"totalSpanUs\":1,"
      "\"topBlocks\":[{\"name\":\"PAINT\",\"selfMicros\":30770}],"
      "\"cause\":{\"kind\":\"phase\",\"name\":\"PAINT\",\"us\":30770}},"
      "{\"seq\":4,\"frameNumber\":854,\"buildUs\":17367,\"rasterUs\":5629,\"totalSpanUs\":1,"
      "\"topBlocks\":[{\"name\":\"BUILD\",\"selfMicros\":8433},{\"name\":\"PAINT\","
      "\"selfMicros\":4582}],\"cause\":{\"kind\":\"phase\",\"name\":\"PAINT\",\"us\":4582}}]}}",
      0, NULL);
  ck_assert_ptr_nonnull(r);
  char *t = render(r, 0, "causes");
  ck_assert_int_eq(line_of(t,
                           "frames 854, 855: PAINT 4.6\xe2\x80\x93"
                           "30.8 ms (build 17.4\xe2\x80\x93"
                           "53.7 ms)"),
                   1);
  ck_assert_ptr_null(strstr(t, "BUILD 8.4"));
  free(t);
  json_decref(r);
}
END_TEST

/* What the model sees first: name + description + inputSchema under 900
 * tokens, counted as compact JSON bytes / 4; and the promises of issue 13. */
START_TEST(tool_doc_budget_and_promises) {
  json_t *in = json_loads(schema_telescope_frames_input, 0, NULL);
  json_t *def = json_pack("{s:s,s:s,s:o}", "name", FRAMES_TOOL_NAME, "description", doc_description,
                          "inputSchema", in);
  char *text = json_dumps(def, JSON_COMPACT);
  size_t bytes = strlen(text);
  fprintf(stderr, "tool definition seen first: %zu bytes, ~%zu tokens (bytes/4)\n", bytes,
          bytes / 4);
  ck_assert_uint_le(bytes / 4, 900);
  free(text);
  json_decref(def);
  static const char *const promises[] = {"trackWidgets: true", "blocks for durationMs",
                                         "flutter_driver", "flutter run --profile",
                                         "budgetMs is fixed at start"};
  for (size_t i = 0; i < 5; i++) {
    ck_assert_msg(strstr(doc_description, promises[i]), "description: %s", promises[i]);
    ck_assert_msg(strstr(doc_instructions, promises[i]), "instructions: %s", promises[i]);
  }
  ck_assert_ptr_null(strstr(doc_description, "per-widget attribution"));
}
END_TEST

int main(void) {
  Suite *s = suite_create("answer_text");
  TCase *tc = tcase_create("render");
  tcase_add_test(tc, janky_stop_within_budget_cause_first);
  tcase_add_test(tc, where_lines_after_the_causes);
  tcase_add_test(tc, hint_lines_stop_at_their_limit);
  tcase_add_test(tc, raster_and_layout_bound_stops);
  tcase_add_test(tc, short_actions_within_600);
  tcase_add_test(tc, error_carries_the_diagnosis);
  tcase_add_test(tc, diagnosis_detail_in_the_text);
  tcase_add_test(tc, budgets_verdict_line);
  tcase_add_test(tc, compare_verdict_and_moved_metrics);
  tcase_add_test(tc, warnings_cursor_truncation_chart_frames);
  tcase_add_test(tc, worst_frames_by_cause);
  tcase_add_test(tc, worst_frame_labelled_by_its_own_cause);
  tcase_add_test(tc, gc_range_of_the_frames_that_had_gc);
  tcase_add_test(tc, startup_gc_and_next_lines);
  tcase_add_test(tc, tool_doc_budget_and_promises);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
