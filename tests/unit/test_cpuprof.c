/* cpuprof: where to edit, on hand-computed CpuSamples replies (the VM's
 * shape, docs/flutter-apis.md "getCpuSamples"): names and places, what a
 * sample is charged to, the window edges, truncated stacks, functions with
 * no location, replies that overlap, and the differential ranking. Every
 * expected number is worked out in its comment. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "appsrc_cpu.h"
#include "cpuprof.h"

/* Function indices in the reply below. */
enum { F_HEAVY, F_PARSE, F_DECODE, F_SCOPE, F_STEADY, F_NATIVE, F_RARE, F_HELPER, NF };

static json_t *function(const char *kind, const char *name, const char *owner_type,
                        const char *owner, const char *uri, const char *resolved, int line) {
  json_t *f = json_pack("{s:s,s:s}", "type", "@Function", "name", name);
  if (owner)
    json_object_set_new(f, "owner", json_pack("{s:s,s:s}", "type", owner_type, "name", owner));
  if (uri) {
    json_t *loc = json_pack("{s:s,s:{s:s,s:s},s:i}", "type", "SourceLocation", "script", "type",
                            "@Script", "uri", uri, "tokenPos", 100);
    if (line) json_object_set_new(loc, "line", json_integer(line));
    json_object_set_new(f, "location", loc);
  }
  json_t *pf = json_pack("{s:s,s:s,s:i,s:i,s:o}", "type", "ProfileFunction", "kind", kind,
                         "inclusiveTicks", 0, "exclusiveTicks", 0, "function", f);
  if (resolved) json_object_set_new(pf, "resolvedUrl", json_string(resolved));
  return pf;
}

static json_t *functions(void) {
  json_t *a = json_array();
  json_array_append_new(
      a, function("Dart", "build", "@Class", "HeavyTile", "package:sim_app/heavy_tile.dart",
                  "file:///home/dev/sim_app/lib/heavy_tile.dart", 42));
  json_array_append_new(
      a, function("Dart", "_parseFeed", "@Library", "feed", "package:sim_app/feed.dart",
                  "file:///home/dev/sim_app/lib/feed.dart", 17));
  json_array_append_new(a, function("Dart", "jsonDecode", "@Library", "dart.convert",
                                    "dart:convert", "dart:convert", 0));
  json_array_append_new(
      a, function("Dart", "buildScope", "@Class", "BuildOwner",
                  "package:flutter/src/widgets/framework.dart",
                  "file:///sdk/flutter/packages/flutter/lib/src/widgets/framework.dart", 2800));
  json_array_append_new(a, function("Dart", "build", "@Class", "SteadyList",
                                    "file:///home/dev/sim_app/lib/steady_list.dart",
                                    "file:///home/dev/sim_app/lib/steady_list.dart", 9));
  json_t *native = json_pack("{s:s,s:s,s:i,s:i,s:{s:s,s:s}}", "type", "ProfileFunction", "kind",
                             "Native", "inclusiveTicks", 0, "exclusiveTicks", 0, "function", "type",
                             "NativeFunction", "name", "memmove");
  json_array_append_new(a, native);
  json_array_append_new(
      a, function("Dart", "rareSlow", "@Library", "rare", "package:sim_app/rare.dart", NULL, 0));
  json_array_append_new(
      a, function("Dart", "<anonymous closure>", "@Function", "helper",
                  "package:other_pkg/helper.dart",
                  "file:///home/dev/.pub-cache/hosted/other_pkg/lib/helper.dart", 5));
  return a;
}

/* A reply with samples at ts[i] with the stack stacks[i] (top first,
 * terminated by -1). */
static json_t *reply(int period, const int64_t *ts, const int (*stacks)[6], size_t n) {
  json_t *s = json_array();
  for (size_t i = 0; i < n; i++) {
    json_t *st = json_array();
    for (int k = 0; k < 6 && stacks[i][k] >= 0; k++)
      json_array_append_new(st, json_integer(stacks[i][k]));
    json_array_append_new(
        s, json_pack("{s:i,s:I,s:o}", "tid", 7, "timestamp", (json_int_t)ts[i], "stack", st));
  }
  return json_pack("{s:s,s:i,s:i,s:I,s:I,s:i,s:o,s:o}", "type", "CpuSamples", "samplePeriod",
                   period, "maxStackDepth", 128, "timeOriginMicros", (json_int_t)0,
                   "timeExtentMicros", (json_int_t)1000000, "pid", 1, "functions", functions(),
                   "samples", s);
}

static const json_t *fn_at(const json_t *where, size_t i) {
  return json_array_get(json_object_get(where, "functions"), i);
}
static const char *s_of(const json_t *o, const char *k) {
  return json_string_value(json_object_get(o, k));
}
static json_int_t i_of(const json_t *o, const char *k) {
  return json_integer_value(json_object_get(o, k));
}

START_TEST(names_places_and_code_kinds) {
  /* One sample on top of each function, in the reply's order: each is read
   * when a sample first names it, so p.fns keeps that order. */
  static const int st[NF][6] = {{F_HEAVY, -1},  {F_PARSE, -1}, {F_DECODE, -1}, {F_SCOPE, -1},
                                {F_STEADY, -1}, {F_NATIVE, -1}, {F_RARE, -1},  {F_HELPER, -1}};
  int64_t ts[NF] = {5, 6, 7, 8, 9, 10, 11, 12};
  json_t *r = reply(1000, ts, st, NF);
  cpuprof_t p = {0};
  char err[128];
  ck_assert_int_eq(cpuprof_add(&p, r, "sim_app", err, sizeof err), 0);
  ck_assert_uint_eq(p.nfns, NF);
  /* The app's package: URI is lib/<rest> (the package convention). */
  ck_assert_str_eq(p.fns[F_HEAVY].name, "HeavyTile.build");
  ck_assert_str_eq(p.fns[F_HEAVY].file, "lib/heavy_tile.dart");
  ck_assert_int_eq(p.fns[F_HEAVY].line, 42);
  ck_assert_int_eq(p.fns[F_HEAVY].code, CPUPROF_APP);
  /* A top-level function: the bare name. */
  ck_assert_str_eq(p.fns[F_PARSE].name, "_parseFeed");
  ck_assert_int_eq(p.fns[F_DECODE].code, CPUPROF_DART);
  ck_assert_int_eq(p.fns[F_DECODE].line, 0);
  /* Flutter: the file: path of its resolved URL. */
  ck_assert_int_eq(p.fns[F_SCOPE].code, CPUPROF_FLUTTER);
  ck_assert_str_eq(p.fns[F_SCOPE].file,
                   "/sdk/flutter/packages/flutter/lib/src/widgets/framework.dart");
  /* A file: script outside any package cache is the app's own. */
  ck_assert_int_eq(p.fns[F_STEADY].code, CPUPROF_APP);
  ck_assert_str_eq(p.fns[F_STEADY].file, "/home/dev/sim_app/lib/steady_list.dart");
  /* Native code has no source. */
  ck_assert_int_eq(p.fns[F_NATIVE].code, CPUPROF_VM);
  ck_assert_ptr_null(p.fns[F_NATIVE].file);
  ck_assert_str_eq(p.fns[F_NATIVE].name, "memmove");
  /* No line in the location: no line (never a made-up one). */
  ck_assert_int_eq(p.fns[F_RARE].line, 0);
  ck_assert_str_eq(p.fns[F_RARE].file, "lib/rare.dart");
  /* A closure: its enclosing function's name first; another package. */
  ck_assert_str_eq(p.fns[F_HELPER].name, "helper.<anonymous closure>");
  ck_assert_int_eq(p.fns[F_HELPER].code, CPUPROF_PACKAGE);
  /* Without the app's package name only file: URIs are the app's. */
  ck_assert_int_eq(cpuprof_code_of("package:sim_app/a.dart", NULL, NULL), CPUPROF_PACKAGE);
  ck_assert_int_eq(cpuprof_code_of("package:sim_apple/a.dart", NULL, "sim_app"), CPUPROF_PACKAGE);
  ck_assert_int_eq(cpuprof_code_of("file:///h/.pub-cache/x/lib/a.dart", NULL, "sim_app"),
                   CPUPROF_PACKAGE);
  ck_assert_int_eq(cpuprof_code_of("package:flutter_test/a.dart", NULL, "sim_app"),
                   CPUPROF_FLUTTER);
  cpuprof_close(&p);
  json_decref(r);
}
END_TEST

START_TEST(a_sample_is_charged_to_the_innermost_app_frame) {
  /* Frame window [0, 10 000) janky by 5 000 µs, one calm window after it.
   * Stack: jsonDecode (dart:) ← _parseFeed (app) ← HeavyTile.build (app) ←
   * buildScope: charged to _parseFeed, whose top frame is jsonDecode.
   * 4 samples × 1 000 µs = 4 000 µs; calm mean 0, overrun 5 000: explains
   * 4 000 of the 5 000 µs of jank, 0.8. */
  static const int st[][6] = {{F_DECODE, F_PARSE, F_HEAVY, F_SCOPE, -1},
                              {F_DECODE, F_PARSE, F_HEAVY, F_SCOPE, -1},
                              {F_DECODE, F_PARSE, F_HEAVY, F_SCOPE, -1},
                              {F_PARSE, F_HEAVY, F_SCOPE, -1}};
  int64_t ts[] = {1000, 2000, 3000, 4000};
  json_t *r = reply(1000, ts, st, 4);
  cpuprof_t p = {0};
  char err[128];
  ck_assert_int_eq(cpuprof_add(&p, r, "sim_app", err, sizeof err), 0);
  cpuprof_window_t w[] = {{20000, 30000, 0}, {0, 10000, 5000}};
  json_t *where = cpuprof_where_json(&p, w, 2, 833, 5000);
  ck_assert_ptr_nonnull(where);
  ck_assert_int_eq(json_array_size(json_object_get(where, "functions")), 1);
  const json_t *f = fn_at(where, 0);
  ck_assert_str_eq(s_of(f, "function"), "_parseFeed");
  ck_assert_str_eq(s_of(f, "code"), "app");
  ck_assert_str_eq(s_of(f, "file"), "lib/feed.dart");
  ck_assert_int_eq(i_of(f, "line"), 17);
  ck_assert_str_eq(s_of(f, "top"), "jsonDecode");
  ck_assert_int_eq(i_of(f, "jankyUs"), 4000);
  ck_assert_int_eq(i_of(f, "calmUs"), 0);
  ck_assert_int_eq(i_of(f, "explainedUs"), 4000);
  ck_assert_double_eq_tol(json_real_value(json_object_get(f, "explains")), 0.8, 1e-9);
  ck_assert_int_eq(i_of(f, "frames"), 1);
  ck_assert_int_eq(i_of(where, "jankySamples"), 4);
  ck_assert(json_is_false(json_object_get(where, "fewSamples")));
  char buf[128];
  ck_assert_str_eq(cpuprof_place(f, buf, sizeof buf), "_parseFeed (lib/feed.dart:17)");
  json_decref(where);
  cpuprof_close(&p);
  json_decref(r);
}
END_TEST

START_TEST(rare_slow_ranks_ahead_of_steady_heavy) {
  /* Ten 16 ms windows, 20 000 µs apart; windows 3 and 7 janky by 10 000 µs.
   * SteadyList.build: 8 samples in every window → janky mean 8 000 = calm
   * mean 8 000: explains nothing, not listed (a global hotspot list would
   * put it first: 80 samples against 24). rareSlow: 12 samples in each janky
   * window only → min(12 000 − 0, 10 000) × 2 = 20 000 of 20 000: 1.0. */
  enum { N = 10 * 8 + 2 * 12 };
  static int st[N][6];
  int64_t ts[N];
  cpuprof_window_t w[10];
  size_t n = 0;
  for (int k = 0; k < 10; k++) {
    int64_t t0 = k * 20000;
    int janky = k == 3 || k == 7;
    w[k] = (cpuprof_window_t){t0, t0 + (janky ? 27000 : 16000) - (janky ? 7001 : 0),
                              janky ? 10000 : 0};
    for (int i = 0; i < 8; i++) {
      ts[n] = t0 + 100 + i * 1000;
      st[n][0] = F_STEADY, st[n][1] = F_SCOPE, st[n][2] = -1;
      n++;
    }
    for (int i = 0; janky && i < 12; i++) {
      ts[n] = t0 + 8100 + i * 1000;
      st[n][0] = F_RARE, st[n][1] = F_SCOPE, st[n][2] = -1;
      n++;
    }
  }
  ck_assert_int_eq(n, N);
  json_t *r = reply(1000, ts, (const int(*)[6])st, n);
  cpuprof_t p = {0};
  char err[128];
  ck_assert_int_eq(cpuprof_add(&p, r, "sim_app", err, sizeof err), 0);
  json_t *where = cpuprof_where_json(&p, w, 10, 833, 20000);
  ck_assert_int_eq(json_array_size(json_object_get(where, "functions")), 1);
  const json_t *f = fn_at(where, 0);
  ck_assert_str_eq(s_of(f, "function"), "rareSlow");
  ck_assert_int_eq(i_of(f, "explainedUs"), 20000);
  ck_assert_double_eq_tol(json_real_value(json_object_get(f, "explains")), 1.0, 1e-9);
  ck_assert_int_eq(i_of(f, "jankyUs"), 12000);
  ck_assert_int_eq(i_of(f, "frames"), 2);
  /* 2 × (8 + 12) samples in the janky windows: 20 per janky frame. */
  ck_assert_int_eq(i_of(where, "jankySamples"), 40);
  json_decref(where);
  cpuprof_close(&p);
  json_decref(r);
}
END_TEST

START_TEST(window_edges_truncated_stacks_and_no_location) {
  /* Window [1 000, 5 000) janky by 3 000; a calm one [10 000, 14 000).
   * ts 1 000 (at the start: in), 5 000 (at the end: out), 900 (before: out).
   * The stack at 2 000 was truncated by the VM before any app frame: it is
   * charged to its top frame, buildScope, listed as Flutter's code after
   * the app's. The samples at 3 000 and 4 000 have only memmove: native. */
  static const int st[][6] = {
      {F_RARE, -1},  {F_RARE, -1}, {F_RARE, -1}, {F_SCOPE, -1}, {F_NATIVE, F_SCOPE, -1},
      {F_NATIVE, -1}};
  int64_t ts[] = {900, 1000, 5000, 2000, 3000, 4000};
  json_t *r = reply(1000, ts, st, 6);
  cpuprof_t p = {0};
  char err[128];
  ck_assert_int_eq(cpuprof_add(&p, r, "sim_app", err, sizeof err), 0);
  cpuprof_window_t w[] = {{1000, 5000, 3000}, {10000, 14000, 0}};
  json_t *where = cpuprof_where_json(&p, w, 2, 0, 3000);
  /* rareSlow: the sample at 1 000 only (1 000 µs); buildScope 1 000;
   * memmove 2 000 — app first whatever the time, then the others. */
  ck_assert_int_eq(json_array_size(json_object_get(where, "functions")), 3);
  ck_assert_str_eq(s_of(fn_at(where, 0), "function"), "rareSlow");
  ck_assert_int_eq(i_of(fn_at(where, 0), "jankyUs"), 1000);
  ck_assert_ptr_null(json_object_get(fn_at(where, 0), "line"));
  ck_assert_str_eq(s_of(fn_at(where, 1), "function"), "memmove");
  ck_assert_str_eq(s_of(fn_at(where, 1), "code"), "vm");
  ck_assert_ptr_null(json_object_get(fn_at(where, 1), "file"));
  ck_assert_int_eq(i_of(fn_at(where, 1), "jankyUs"), 2000);
  ck_assert_str_eq(s_of(fn_at(where, 2), "function"), "BuildOwner.buildScope");
  ck_assert_str_eq(s_of(fn_at(where, 2), "code"), "flutter");
  ck_assert_int_eq(i_of(where, "jankySamples"), 4);
  char buf[128];
  ck_assert_str_eq(cpuprof_place(fn_at(where, 0), buf, sizeof buf), "rareSlow (lib/rare.dart)");
  ck_assert_str_eq(cpuprof_place(fn_at(where, 1), buf, sizeof buf), "memmove");
  json_decref(where);
  cpuprof_close(&p);
  json_decref(r);
}
END_TEST

START_TEST(overlapping_replies_count_each_sample_once) {
  /* Two janky windows pulled in two calls whose ranges overlap: the sample
   * at 3 000 comes in both replies and counts once. HeavyTile.build: 3
   * samples in [0, 4 000), 2 in [4 000, 8 000): janky mean 2 500, no calm
   * window; explained min(3 000, 2 000) + min(2 000, 2 000) = 4 000. */
  static const int a_st[][6] = {{F_HEAVY, -1}, {F_HEAVY, -1}, {F_HEAVY, -1}};
  static const int b_st[][6] = {{F_HEAVY, -1}, {F_HEAVY, -1}, {F_HEAVY, -1}};
  int64_t a_ts[] = {1000, 2000, 3000}, b_ts[] = {3000, 5000, 6000};
  json_t *a = reply(1000, a_ts, a_st, 3), *b = reply(1000, b_ts, b_st, 3);
  cpuprof_t p = {0};
  char err[128];
  ck_assert_int_eq(cpuprof_add(&p, a, "sim_app", err, sizeof err), 0);
  ck_assert_int_eq(cpuprof_add(&p, b, "sim_app", err, sizeof err), 0);
  ck_assert_uint_eq(p.nsamples, 5);
  ck_assert_uint_eq(p.nfns, 1); /* the one sampled function, once */
  cpuprof_window_t w[] = {{4000, 8000, 2000}, {0, 4000, 2000}};
  json_t *where = cpuprof_where_json(&p, w, 2, 0, 4000);
  const json_t *f = fn_at(where, 0);
  ck_assert_str_eq(s_of(f, "function"), "HeavyTile.build");
  ck_assert_int_eq(i_of(f, "explainedUs"), 4000);
  ck_assert_int_eq(i_of(f, "jankyUs"), 2500);
  /* 5 samples over 2 janky frames: 2.5 < 3, too few to say much. */
  ck_assert(json_is_true(json_object_get(where, "fewSamples")));
  ck_assert_double_eq_tol(json_real_value(json_object_get(where, "samplesPerJankyFrame")), 2.5,
                          1e-9);
  json_decref(where);
  cpuprof_close(&p);
  json_decref(a);
  json_decref(b);
}
END_TEST

/* A debug app's reply: n compiled functions "Fk.run" in lib/fk.dart, plus
 * one that shares F0's name and line in another file; samples on top of
 * every function (order: the reply's, or reversed), one a millisecond. */
static json_t *big_reply(int n, int reversed, int64_t t0) {
  json_t *fns = json_array(), *s = json_array();
  char name[32], uri[64];
  for (int k = 0; k < n; k++) {
    snprintf(name, sizeof name, "F%d", reversed ? n - 1 - k : k);
    snprintf(uri, sizeof uri, "package:sim_app/%s.dart", name);
    json_array_append_new(fns, function("Dart", "run", "@Class", name, uri, NULL, 7));
  }
  json_array_append_new(fns, function("Dart", "run", "@Class", "F0", "package:sim_app/other.dart",
                                      NULL, 7));
  for (int k = 0; k <= n; k++)
    json_array_append_new(s, json_pack("{s:i,s:I,s:[i]}", "tid", 7, "timestamp",
                                       (json_int_t)(t0 + 1000 * k), "stack", k));
  return json_pack("{s:s,s:i,s:o,s:o}", "type", "CpuSamples", "samplePeriod", 1000, "functions",
                   fns, "samples", s);
}

START_TEST(functions_join_by_identity_across_replies) {
  /* 5 000 functions, each sampled, then the same 5 000 listed in reverse
   * order: each is held once (by name, file and line, not by its index in a
   * reply), and F0.run of another file is another function. */
  enum { N = 5000 };
  json_t *a = big_reply(N, 0, 0), *b = big_reply(N, 1, 10000000);
  cpuprof_t p = {0};
  char err[128];
  ck_assert_int_eq(cpuprof_add(&p, a, "sim_app", err, sizeof err), 0);
  ck_assert_uint_eq(p.nfns, N + 1);
  ck_assert_int_eq(cpuprof_add(&p, b, "sim_app", err, sizeof err), 0);
  ck_assert_uint_eq(p.nfns, N + 1);
  ck_assert_uint_eq(p.nsamples, 2 * (N + 1));
  /* b's first sample is on F{N-1}, a's last plain one too: one function. */
  ck_assert_int_eq(p.samples[N + 1].charge, p.samples[N - 1].charge);
  ck_assert_str_eq(p.fns[p.samples[N].charge].file, "lib/other.dart");
  ck_assert_int_ne(p.samples[N].charge, p.samples[0].charge);
  cpuprof_close(&p);
  json_decref(a);
  json_decref(b);
}
END_TEST

START_TEST(a_function_without_a_file_is_not_its_namesakes) {
  /* "A.run" without a location first, then 1 000 "A.run" at line 0 of
   * files a0.dart, a1.dart, …: those probe past the first's slot, and a
   * function with no file is another than one with a file (not a strcmp
   * of NULL). */
  enum { N = 1000 };
  json_t *fns = json_array(), *s = json_array();
  char uri[64];
  json_array_append_new(fns, function("Dart", "run", "@Class", "A", NULL, NULL, 0));
  for (int k = 0; k < N; k++) {
    snprintf(uri, sizeof uri, "package:sim_app/a%d.dart", k);
    json_array_append_new(fns, function("Dart", "run", "@Class", "A", uri, NULL, 0));
  }
  for (int k = 0; k <= N; k++)
    json_array_append_new(s, json_pack("{s:i,s:I,s:[i]}", "tid", 7, "timestamp",
                                       (json_int_t)(1000 * k), "stack", k));
  json_t *r = json_pack("{s:s,s:i,s:o,s:o}", "type", "CpuSamples", "samplePeriod", 1000,
                        "functions", fns, "samples", s);
  cpuprof_t p = {0};
  char err[128];
  ck_assert_int_eq(cpuprof_add(&p, r, "sim_app", err, sizeof err), 0);
  ck_assert_uint_eq(p.nfns, N + 1);
  ck_assert_ptr_null(p.fns[p.samples[0].charge].file);
  ck_assert_str_eq(p.fns[p.samples[1].charge].file, "lib/a0.dart");
  cpuprof_close(&p);
  json_decref(r);
}
END_TEST

START_TEST(unsampled_functions_are_not_held) {
  /* The reply lists 8 functions; its one sample names HeavyTile.build. */
  static const int st[][6] = {{F_HEAVY, -1}};
  int64_t ts[] = {5};
  json_t *r = reply(1000, ts, st, 1);
  cpuprof_t p = {0};
  char err[128];
  ck_assert_int_eq(cpuprof_add(&p, r, "sim_app", err, sizeof err), 0);
  ck_assert_uint_eq(p.nfns, 1);
  ck_assert_str_eq(p.fns[0].name, "HeavyTile.build");
  cpuprof_close(&p);
  json_decref(r);
}
END_TEST

START_TEST(not_a_cpu_samples_reply) {
  cpuprof_t p = {0};
  char err[128] = "";
  json_t *bad = json_pack("{s:s,s:i}", "type", "CpuSamples", "samplePeriod", 1000);
  ck_assert_int_eq(cpuprof_add(&p, bad, "sim_app", err, sizeof err), -1);
  ck_assert_ptr_nonnull(strstr(err, "CpuSamples"));
  ck_assert_uint_eq(p.nsamples, 0);
  /* A stack index past functions[] drops that sample, not the reply. */
  static const int st[][6] = {{F_HEAVY, -1}, {NF + 3, -1}};
  int64_t ts[] = {1, 2};
  json_t *r = reply(1000, ts, st, 2);
  ck_assert_int_eq(cpuprof_add(&p, r, "sim_app", err, sizeof err), 0);
  ck_assert_uint_eq(p.nsamples, 1);
  /* No windows at all: nothing to charge, an empty list. */
  json_t *where = cpuprof_where_json(&p, NULL, 0, 0, 0);
  ck_assert_int_eq(json_array_size(json_object_get(where, "functions")), 0);
  ck_assert(json_is_false(json_object_get(where, "fewSamples")));
  json_decref(where);
  cpuprof_close(&p);
  json_decref(bad);
  json_decref(r);
  /* An isolate that ran nothing in the window: no functions, no samples, a
   * reply all the same (the map is one entry, never none: memcheck and
   * ASan see a write past a zero-sized block). */
  cpuprof_t q = {0};
  json_t *none = json_pack("{s:s,s:i,s:[],s:[]}", "type", "CpuSamples", "samplePeriod", 1000,
                           "functions", "samples");
  ck_assert_int_eq(cpuprof_add(&q, none, "sim_app", err, sizeof err), 0);
  ck_assert_uint_eq(q.nsamples, 0);
  ck_assert_uint_eq(q.nfns, 0);
  cpuprof_close(&q);
  json_decref(none);
}
END_TEST

START_TEST(windows_older_than_the_ring_are_lost_not_idle) {
  /* The VM's ring kept samples from 50 000 on. The janky window [0, 10 000)
   * began before that: lost, not a frame where nothing ran. The janky
   * window [60 000, 70 000) has 5 samples of HeavyTile.build: it alone
   * counts (jankyFrames 1, mean 5 000). */
  static const int st[][6] = {{F_HEAVY, -1}, {F_HEAVY, -1}, {F_HEAVY, -1},
                              {F_HEAVY, -1}, {F_HEAVY, -1}, {F_SCOPE, -1}};
  int64_t ts[] = {61000, 62000, 63000, 64000, 65000, 50000};
  json_t *r = reply(1000, ts, st, 6);
  cpuprof_t p = {0};
  char err[128];
  ck_assert_int_eq(cpuprof_add(&p, r, "sim_app", err, sizeof err), 0);
  cpuprof_window_t w[] = {{0, 10000, 4000}, {60000, 70000, 4000}, {40000, 45000, 0}};
  json_t *where = cpuprof_where_json(&p, w, 3, 0, 8000);
  ck_assert_int_eq(i_of(where, "jankyFrames"), 1);
  ck_assert_int_eq(i_of(where, "jankyFramesLost"), 1);
  const json_t *f = fn_at(where, 0);
  ck_assert_str_eq(s_of(f, "function"), "HeavyTile.build");
  ck_assert_int_eq(i_of(f, "jankyUs"), 5000);
  ck_assert_int_eq(i_of(f, "explainedUs"), 4000);
  json_decref(where);
  cpuprof_close(&p);
  json_decref(r);
}
END_TEST

START_TEST(plan_ranges_around_the_newest_janky_frames) {
  /* 60 Hz frames 16 667 µs apart from t = 1 s, budget 16 667: frames 10
   * and 12 janky on build (close: one merged range), frame 140 janky (over
   * a second later: its own range, asked first: the newest), frame 20 missed only on raster
   * (neither janky nor calm), frame 0 janky but start-up (left out). */
  frame_t f[150];
  memset(f, 0, sizeof f);
  for (int i = 0; i < 150; i++) {
    f[i].vsync_start_us = 1000000 + i * 16667;
    f[i].vsync_overhead_us = 500;
    f[i].build_us = 5000;
    f[i].raster_us = 4000;
  }
  f[10].build_us = f[12].build_us = f[140].build_us = 30000;
  f[20].raster_us = 30000;
  f[0].build_us = 900000;
  f[0].startup = 1;
  /* Inside range 1 but neither janky nor calm: a frame janky by its raster
   * only, and a start-up frame. Neither is a window. */
  f[13].raster_us = 30000;
  f[14].startup = 1;
  cpuprof_window_t w[150];
  int64_t r[APPSRC_CPU_MAX_RANGES][2];
  size_t nr = 0;
  size_t nw = appsrc_cpu_plan(f, 150, 16667, w, r, &nr);
  ck_assert_uint_eq(nr, 2);
  /* Range 0 around frame 140: its UI window ± 100 ms. */
  int64_t s140 = 1000000 + 140 * 16667 + 500;
  ck_assert_int_eq(r[0][0], s140 - APPSRC_CPU_PAD_US);
  ck_assert_int_eq(r[0][1], s140 + 30000 + APPSRC_CPU_PAD_US);
  /* Range 1: frames 10 and 12 merged. */
  int64_t s10 = 1000000 + 10 * 16667 + 500, s12 = 1000000 + 12 * 16667 + 500;
  ck_assert_int_eq(r[1][0], s10 - APPSRC_CPU_PAD_US);
  ck_assert_int_eq(r[1][1], s12 + 30000 + APPSRC_CPU_PAD_US);
  /* Windows: only frames wholly inside a range; 20 and 0 never. */
  size_t janky = 0;
  for (size_t i = 0; i < nw; i++) {
    ck_assert(w[i].start_us >= r[1][0] || w[i].start_us >= r[0][0]);
    ck_assert_int_ne(w[i].start_us, 1000000 + 20 * 16667 + 500);
    ck_assert_int_ne(w[i].start_us, 1000000 + 500);
    ck_assert_int_ne(w[i].start_us, 1000000 + 13 * 16667 + 500);
    ck_assert_int_ne(w[i].start_us, 1000000 + 14 * 16667 + 500);
    if (w[i].over_us) {
      janky++;
      ck_assert_int_eq(w[i].over_us, 30000 - 16667);
    }
  }
  ck_assert_uint_eq(janky, 3);
  /* Frame 11 (calm, between 10 and 12) is in; frame 30 (calm, far) is out. */
  int has11 = 0, has30 = 0;
  for (size_t i = 0; i < nw; i++) {
    has11 |= w[i].start_us == 1000000 + 11 * 16667 + 500;
    has30 |= w[i].start_us == 1000000 + 30 * 16667 + 500;
  }
  ck_assert(has11 && !has30);
  /* No janky frame: no range, nothing to ask. */
  f[10].build_us = f[12].build_us = f[140].build_us = 5000;
  ck_assert_uint_eq(appsrc_cpu_plan(f, 150, 16667, w, r, &nr), 0);
  ck_assert_uint_eq(nr, 0);
}
END_TEST

START_TEST(top_app_function_in_a_frame) {
  /* In [0, 10 000): _parseFeed charged 3 times (under jsonDecode),
   * HeavyTile.build twice, buildScope (Flutter) 4 times: the app function
   * sampled most is _parseFeed, with its place; Flutter's code never is.
   * In [20 000, 30 000) only buildScope ran: no app function. */
  static const int st[][6] = {
      {F_DECODE, F_PARSE, -1}, {F_PARSE, -1}, {F_PARSE, F_HEAVY, -1}, {F_HEAVY, -1}, {F_HEAVY, -1},
      {F_SCOPE, -1},           {F_SCOPE, -1}, {F_SCOPE, -1},          {F_SCOPE, -1}, {F_SCOPE, -1}};
  int64_t ts[] = {1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 25000};
  json_t *r = reply(1000, ts, st, 10);
  cpuprof_t p = {0};
  char err[128], buf[128];
  ck_assert_int_eq(cpuprof_add(&p, r, "sim_app", err, sizeof err), 0);
  ck_assert_str_eq(cpuprof_top_in(&p, 0, 10000, buf, sizeof buf), "_parseFeed (lib/feed.dart:17)");
  /* The window's end is not in it: [0, 3 000) has _parseFeed twice. */
  ck_assert_str_eq(cpuprof_top_in(&p, 0, 3000, buf, sizeof buf), "_parseFeed (lib/feed.dart:17)");
  ck_assert_str_eq(cpuprof_top_in(&p, 3500, 6000, buf, sizeof buf),
                   "HeavyTile.build (lib/heavy_tile.dart:42)");
  ck_assert_ptr_null(cpuprof_top_in(&p, 20000, 30000, buf, sizeof buf));
  ck_assert_ptr_null(cpuprof_top_in(&p, 40000, 50000, buf, sizeof buf));
  cpuprof_close(&p);
  json_decref(r);
}
END_TEST

/* "mostly in": the leaf each function's janky samples sat in most, counted
 * for that function alone. HeavyTile.build: 10 samples under jsonDecode;
 * _parseFeed: 5 under memmove and 1 under jsonDecode, so memmove (the
 * counts of HeavyTile.build's leaves must not carry over: 11 > 5). */
START_TEST(each_function_its_own_leaves) {
  enum { N = 16 };
  static int st[N][6];
  int64_t ts[N];
  for (int i = 0; i < N; i++) {
    ts[i] = 1000 + i * 1000;
    st[i][0] = i < 10 ? F_DECODE : i < 15 ? F_NATIVE : F_DECODE;
    st[i][1] = i < 10 ? F_HEAVY : F_PARSE;
    st[i][2] = -1;
  }
  /* one janky window holding every sample, one calm window with none */
  cpuprof_window_t w[2] = {{0, 30000, 10000}, {40000, 56000, 0}};
  json_t *r = reply(1000, ts, (const int(*)[6])st, N);
  cpuprof_t p = {0};
  char err[128];
  ck_assert_int_eq(cpuprof_add(&p, r, "sim_app", err, sizeof err), 0);
  json_t *where = cpuprof_where_json(&p, w, 2, 833, 10000);
  const json_t *heavy = NULL, *parse = NULL, *f;
  size_t i;
  json_array_foreach(json_object_get(where, "functions"), i, f) {
    if (!strcmp(s_of(f, "function"), "HeavyTile.build")) heavy = f;
    if (!strcmp(s_of(f, "function"), "_parseFeed")) parse = f;
  }
  ck_assert_ptr_nonnull(heavy);
  ck_assert_ptr_nonnull(parse);
  ck_assert_str_eq(s_of(heavy, "top"), "jsonDecode");
  ck_assert_str_eq(s_of(parse, "top"), "memmove");
  json_decref(where);
  cpuprof_close(&p);
  json_decref(r);
}
END_TEST

/* A finding names a widget class; its place is that class's method, on the
 * '.' after the whole name: Tile is not TileList. */
START_TEST(a_finding_gets_the_place_of_its_own_class) {
  json_t *findings = json_loads("[{\"kind\":\"widget\",\"name\":\"Tile\"}]", 0, NULL);
  json_t *where = json_loads(
      "{\"functions\":[{\"function\":\"TileList.build\",\"file\":\"lib/tile_list.dart\","
      "\"line\":3},{\"function\":\"Tile.build\",\"file\":\"lib/tile.dart\",\"line\":9}]}",
      0, NULL);
  ck_assert_int_eq(cpuprof_attach(findings, where), 0);
  ck_assert_str_eq(s_of(json_array_get(findings, 0), "at"), "Tile.build (lib/tile.dart:9)");
  json_decref(findings);
  json_decref(where);
}
END_TEST

int main(void) {
  Suite *s = suite_create("cpuprof");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, names_places_and_code_kinds);
  tcase_add_test(tc, a_sample_is_charged_to_the_innermost_app_frame);
  tcase_add_test(tc, rare_slow_ranks_ahead_of_steady_heavy);
  tcase_add_test(tc, window_edges_truncated_stacks_and_no_location);
  tcase_add_test(tc, overlapping_replies_count_each_sample_once);
  tcase_add_test(tc, not_a_cpu_samples_reply);
  tcase_add_test(tc, functions_join_by_identity_across_replies);
  tcase_add_test(tc, a_function_without_a_file_is_not_its_namesakes);
  tcase_add_test(tc, unsampled_functions_are_not_held);
  tcase_add_test(tc, plan_ranges_around_the_newest_janky_frames);
  tcase_add_test(tc, windows_older_than_the_ring_are_lost_not_idle);
  tcase_add_test(tc, top_app_function_in_a_frame);
  tcase_add_test(tc, each_function_its_own_leaves);
  tcase_add_test(tc, a_finding_gets_the_place_of_its_own_class);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
