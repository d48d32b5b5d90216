#include "compare.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "summary.h"

static const char *const tracking_names[4] = {"trackWidgets", "trackLayouts", "trackPaints",
                                              "trackRebuilds"};

/* Per-frame series of one side, optionally of one interaction. */
typedef struct {
  int64_t *build, *raster, *janky, *frozen;
  size_t n;
} series_t;

static void series_free(series_t *s) {
  free(s->build);
  free(s->raster);
  free(s->janky);
  free(s->frozen);
  memset(s, 0, sizeof *s);
}

static int same_workload(const compare_side_t *a, const compare_side_t *b);

/* A frame is janky when its build or its raster exceeds the session's own
 * budget (DevTools' rule, as the summary counts it), frozen at 700 ms. */
static int series_init(series_t *s, const compare_side_t *side, const char *interaction_id) {
  memset(s, 0, sizeof *s);
  size_t cap = side->nframes ? side->nframes : 1;
  s->build = malloc(cap * sizeof *s->build);
  s->raster = malloc(cap * sizeof *s->raster);
  s->janky = malloc(cap * sizeof *s->janky);
  s->frozen = malloc(cap * sizeof *s->frozen);
  if (!s->build || !s->raster || !s->janky || !s->frozen) {
    series_free(s);
    return -1;
  }
  for (size_t i = 0; i < side->nframes; i++) {
    const frame_t *f = &side->frames[i];
    if (interaction_id && (!f->interaction_id || strcmp(f->interaction_id, interaction_id)))
      continue;
    s->build[s->n] = f->build_us;
    s->raster[s->n] = f->raster_us;
    s->janky[s->n] = f->build_us > side->budget_us || f->raster_us > side->budget_us;
    s->frozen[s->n] = f->total_span_us >= SUMMARY_FROZEN_US;
    s->n++;
  }
  return 0;
}

/* Three significant digits: a p value is read for its order of magnitude. */
static double sig3(double x) {
  if (x == 0 || !isfinite(x)) return x;
  char buf[32];
  snprintf(buf, sizeof buf, "%.3g", x);
  return strtod(buf, NULL);
}

static double round4(double x) {
  return round(x * 10000) / 10000;
}

static double sum_of(const int64_t *v, size_t n) {
  double t = 0;
  for (size_t i = 0; i < n; i++) t += (double)v[i];
  return t;
}

/* better / worse / same for a metric where lower is better. */
static const char *change_of(int significant, int material, double delta) {
  if (!significant || !material || delta == 0) return "same";
  return delta < 0 ? "better" : "worse";
}

/* A ratio metric over 0/1 per-frame indicators (janky, frozen): the rank
 * test on indicators is the two-proportion test with a tie correction. */
static json_t *ratio_metric(const int64_t *a, size_t na, const int64_t *b, size_t nb,
                            double min_delta, int counts, const char **change) {
  stats_mw_t mw;
  if (stats_mann_whitney(a, na, b, nb, &mw)) return NULL;
  double ca = sum_of(a, na), cb = sum_of(b, nb);
  double ra = na ? ca / (double)na : 0, rb = nb ? cb / (double)nb : 0;
  int significant = na && nb && mw.p < COMPARE_METRIC_ALPHA;
  double delta = rb - ra;
  *change = change_of(significant, fabs(delta) >= min_delta, delta);
  json_t *m = json_pack("{s:f,s:f,s:f,s:f,s:b,s:s}", "baseline", round4(ra), "candidate",
                        round4(rb), "delta", round4(delta), "p", sig3(mw.p), "significant",
                        significant, "change", *change);
  if (m && counts &&
      json_object_update_new(m, json_pack("{s:I,s:I}", "baselineCount", (json_int_t)ca,
                                          "candidateCount", (json_int_t)cb)))
    goto fail;
  return m;
fail:
  json_decref(m);
  return NULL;
}

static json_t *stats_object(const int64_t *sorted, size_t n) {
  return json_pack("{s:I,s:I,s:I,s:I}", "avg",
                   (json_int_t)llround(n ? sum_of(sorted, n) / (double)n : 0), "p50",
                   (json_int_t)stats_percentile(sorted, n, 0.5), "p90",
                   (json_int_t)stats_percentile(sorted, n, 0.9), "p99",
                   (json_int_t)stats_percentile(sorted, n, 0.99));
}

/* A time metric (µs per frame): percentiles of both sides and their deltas,
 * the Hodges–Lehmann shift, the common-language effect size and the test. */
static json_t *time_metric(const int64_t *a, size_t na, const int64_t *b, size_t nb,
                           const char **change) {
  stats_mw_t mw;
  int64_t *as = malloc((na ? na : 1) * sizeof *as), *bs = malloc((nb ? nb : 1) * sizeof *bs);
  json_t *m = NULL;
  if (!as || !bs || stats_mann_whitney(a, na, b, nb, &mw)) goto done;
  memcpy(as, a, na * sizeof *as);
  memcpy(bs, b, nb * sizeof *bs);
  stats_sort(as, na);
  stats_sort(bs, nb);
  int64_t p50 = stats_percentile(as, na, 0.5);
  double floor_us = fmax(COMPARE_MIN_SHIFT_US, COMPARE_MIN_SHIFT_FRAC * (double)p50);
  int significant = na && nb && mw.p < COMPARE_METRIC_ALPHA;
  *change = change_of(significant, fabs(mw.shift) >= floor_us, mw.shift);
  json_t *sa = stats_object(as, na), *sb = stats_object(bs, nb);
  json_t *d = sa && sb ? json_object() : NULL;
  if (d) {
    static const char *const keys[] = {"avg", "p50", "p90", "p99"};
    for (int k = 0; k < 4; k++)
      json_object_set_new(d, keys[k],
                          json_integer(json_integer_value(json_object_get(sb, keys[k])) -
                                       json_integer_value(json_object_get(sa, keys[k]))));
  }
  m = json_pack("{s:o*,s:o*,s:o*,s:f,s:f,s:f,s:b,s:s}", "baseline", sa, "candidate", sb, "delta", d,
                "shiftUs", round(mw.shift * 10) / 10, "cles", round4(mw.cles), "p", sig3(mw.p),
                "significant", significant, "change", *change);
done:
  free(as);
  free(bs);
  return m;
}

/* The verdict from the metrics' `change`: the first metric that changed, in
 * the order jank ratio, frozen frames, then build and raster time (any
 * worse → regressed). *decided NULL when none did. */
static void decide(const json_t *m, const char **decided, const char **verdict) {
  const char *cj = json_string_value(json_object_get(json_object_get(m, "jankRatio"), "change"));
  const char *cf = json_string_value(json_object_get(json_object_get(m, "frozen"), "change"));
  const char *cb = json_string_value(json_object_get(json_object_get(m, "buildUs"), "change"));
  const char *cr = json_string_value(json_object_get(json_object_get(m, "rasterUs"), "change"));
  *decided = NULL;
  *verdict = "unchanged";
  if (!cj || !cf || !cb || !cr) return;
  if (strcmp(cj, "same")) {
    *decided = "jankRatio";
    *verdict = !strcmp(cj, "better") ? "improved" : "regressed";
  } else if (strcmp(cf, "same")) {
    *decided = "frozen";
    *verdict = !strcmp(cf, "better") ? "improved" : "regressed";
  } else if (!strcmp(cb, "worse") || !strcmp(cr, "worse")) {
    *decided = !strcmp(cb, "worse") ? "buildUs" : "rasterUs";
    *verdict = "regressed";
  } else if (!strcmp(cb, "better") || !strcmp(cr, "better")) {
    *decided = !strcmp(cb, "better") ? "buildUs" : "rasterUs";
    *verdict = "improved";
  }
}

/* jankRatio, frozenFrames, buildUs, rasterUs of two series; *decided names
 * the metric that decides the verdict (NULL: none changed) and *verdict is
 * set accordingly. */
static json_t *metrics_of(const series_t *a, const series_t *b, const char **decided,
                          const char **verdict) {
  const char *cj, *cf, *cb, *cr;
  json_t *jank = ratio_metric(a->janky, a->n, b->janky, b->n, COMPARE_MIN_JANK_DELTA, 1, &cj);
  json_t *frozen = ratio_metric(a->frozen, a->n, b->frozen, b->n, 1e-12, 1, &cf);
  json_t *build = time_metric(a->build, a->n, b->build, b->n, &cb);
  json_t *raster = time_metric(a->raster, a->n, b->raster, b->n, &cr);
  json_t *m = json_pack("{s:o*,s:o*,s:o*,s:o*}", "jankRatio", jank, "frozen", frozen, "buildUs",
                        build, "rasterUs", raster);
  if (!m || !jank || !frozen || !build || !raster) {
    json_decref(m);
    return NULL;
  }
  decide(m, decided, verdict);
  return m;
}

/* The runs of a workload that drew frames: their `key` values into out. */
static size_t runs_of(const json_t *wl, const char *key, double *out) {
  size_t i, n = 0;
  const json_t *run;
  json_array_foreach(json_object_get(wl, "runs"), i, run) {
    if (n == WORKLOAD_MAX_REPEAT) break;
    if (json_integer_value(json_object_get(run, "frames")) > 0)
      out[n++] = json_number_value(json_object_get(run, key));
  }
  return n;
}

/* Both sessions played the same workload (same steps, same repeat). */
static int same_workload(const compare_side_t *a, const compare_side_t *b) {
  return a->workload && b->workload &&
         json_equal(json_object_get(a->workload, "steps"), json_object_get(b->workload, "steps")) &&
         json_equal(json_object_get(a->workload, "repeat"), json_object_get(b->workload, "repeat"));
}

/* With the same workload repeated on both sides, the frames of one run
 * are not independent samples (one slow tile janks several frames in a
 * row): the runs are. Jank ratio and build and raster p90 are then judged
 * on the per-run values (workload_runs_change), each metric saying so in
 * its `runs`; frozen frames stay on the frames. 1 when the runs decided. */
static int runs_decide(const compare_side_t *a, const compare_side_t *b, json_t *metrics) {
  static const struct {
    const char *metric, *run_key;
  } by_run[] = {{"jankRatio", "jankRatio"}, {"buildUs", "buildP90Us"}, {"rasterUs", "rasterP90Us"}};
  double ra[WORKLOAD_MAX_REPEAT], rb[WORKLOAD_MAX_REPEAT];
  if (!metrics || !same_workload(a, b) || runs_of(a->workload, "jankRatio", ra) < 2 ||
      runs_of(b->workload, "jankRatio", rb) < 2)
    return 0;
  for (size_t k = 0; k < sizeof by_run / sizeof *by_run; k++) {
    size_t na = runs_of(a->workload, by_run[k].run_key, ra), nb = runs_of(b->workload, by_run[k].run_key, rb);
    /* The floors of the frame tests: a point of jank; for times 200 µs and
     * 5 % of the baseline's (its runs' median). */
    double floor = k == 0 ? COMPARE_MIN_JANK_DELTA
                          : fmax(COMPARE_MIN_SHIFT_US, COMPARE_MIN_SHIFT_FRAC * workload_median(ra, na));
    const char *change = workload_runs_change(ra, na, rb, nb, floor);
    json_t *m = json_object_get(metrics, by_run[k].metric);
    json_t *va = json_array(), *vb = json_array();
    for (size_t i = 0; i < na; i++) json_array_append_new(va, json_real(ra[i]));
    for (size_t i = 0; i < nb; i++) json_array_append_new(vb, json_real(rb[i]));
    json_object_set_new(m, "runs", json_pack("{s:o*,s:o*,s:s}", "baseline", va, "candidate", vb, "change", change));
    json_object_set_new(m, "change", json_string(change));
    json_object_set_new(m, "significant", json_boolean(strcmp(change, "same") != 0));
  }
  return 1;
}

static int add_warning(json_t *warnings, const char *code, int breaks, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int add_warning(json_t *warnings, const char *code, int breaks, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return json_array_append_new(
      warnings, json_pack("{s:s,s:s,s:b}", "code", code, "message", msg, "notComparable", breaks));
}

/* The warnings, and whether any of them makes the sessions not comparable. */
static json_t *warnings_of(const compare_side_t *a, const compare_side_t *b, int *comparable) {
  json_t *w = json_array();
  if (!w) return NULL;
  int err = 0;
  if (a->budget_us != b->budget_us)
    err |= add_warning(w, "budget_differs", 1,
                       "budgets differ (%lld µs vs %lld µs): jank is judged against each "
                       "session's own budget",
                       (long long)a->budget_us, (long long)b->budget_us);
  if (a->refresh_rate > 0 && b->refresh_rate > 0 && fabs(a->refresh_rate - b->refresh_rate) > 0.5)
    err |= add_warning(w, "refresh_rate_differs", 1, "refresh rates differ (%.1f Hz vs %.1f Hz)",
                       a->refresh_rate, b->refresh_rate);
  if (a->build_mode && b->build_mode && strcmp(a->build_mode, b->build_mode))
    err |= add_warning(w, "build_mode_differs", 1, "build modes differ (%s vs %s)", a->build_mode,
                       b->build_mode);
  else if ((a->build_mode && !strcmp(a->build_mode, "debug")) ||
           (b->build_mode && !strcmp(b->build_mode, "debug")))
    err |= add_warning(w, "debug_build", 0,
                       "debug-build timings are inflated; `flutter run --profile` gives real ones");
  for (int i = 0; i < 4; i++)
    if (!a->tracking[i] != !b->tracking[i])
      err |= add_warning(w, "tracking_differs", 1,
                         "%s was on in the %s only; it adds build/layout/paint overhead",
                         tracking_names[i], a->tracking[i] ? "baseline" : "candidate");
  if (a->nframes < COMPARE_MIN_FRAMES || b->nframes < COMPARE_MIN_FRAMES)
    err |= add_warning(w, "too_few_frames", 1,
                       "too few frames to judge (%zu vs %zu; want %d each): a real change may "
                       "show as unchanged",
                       a->nframes, b->nframes, COMPARE_MIN_FRAMES);
  if (a->workload && b->workload && !same_workload(a, b))
    err |= add_warning(w, "workload_differs", 1,
                       "the sessions played different workloads (%s vs %s): the difference is "
                       "the workload's as much as the code's",
                       json_string_value(json_object_get(a->workload, "label")),
                       json_string_value(json_object_get(b->workload, "label")));
  else if (!a->workload != !b->workload)
    err |= add_warning(w, "workload_one_side", 0,
                       "only the %s played a workload; the other was driven by hand (or not)",
                       a->workload ? "baseline" : "candidate");
  if (a->frames_total > a->nframes || b->frames_total > b->nframes)
    err |= add_warning(w, "sampled", 0,
                       "tested on the frames kept (%zu of %llu vs %zu of %llu), not all",
                       a->nframes, (unsigned long long)a->frames_total, b->nframes,
                       (unsigned long long)b->frames_total);
  if (err) {
    json_decref(w);
    return NULL;
  }
  *comparable = 1;
  size_t i;
  json_t *x;
  json_array_foreach(w, i, x) if (json_is_true(json_object_get(x, "notComparable"))) *comparable =
      0;
  return w;
}

/* Interactions present in both, most baseline frames first; ties by id. */
typedef struct {
  const char *id;
  size_t na, nb;
} ia_t;

static int cmp_ia(const void *x, const void *y) {
  const ia_t *a = x, *b = y;
  if (a->na != b->na) return a->na > b->na ? -1 : 1;
  return strcmp(a->id, b->id);
}

static size_t count_interaction(const compare_side_t *s, const char *id) {
  size_t n = 0;
  for (size_t i = 0; i < s->nframes; i++)
    if (s->frames[i].interaction_id && !strcmp(s->frames[i].interaction_id, id)) n++;
  return n;
}

static json_t *interactions_of(const compare_side_t *a, const compare_side_t *b) {
  json_t *out = json_array();
  size_t cap = 0, n = 0;
  ia_t *ids = NULL;
  if (!out) return NULL;
  /* Distinct ids of the baseline: at most 64 reach a session (summary.h),
   * so the quadratic scan stays small. */
  for (size_t i = 0; i < a->nframes; i++) {
    const char *id = a->frames[i].interaction_id;
    if (!id) continue;
    size_t k = 0;
    while (k < n && strcmp(ids[k].id, id)) k++;
    if (k < n) {
      ids[k].na++;
      continue;
    }
    if (n == cap) {
      cap = cap ? cap * 2 : 8;
      ia_t *g = realloc(ids, cap * sizeof *ids);
      if (!g) goto fail;
      ids = g;
    }
    ids[n++] = (ia_t){id, 1, 0};
  }
  for (size_t k = 0; k < n; k++) ids[k].nb = count_interaction(b, ids[k].id);
  if (n) qsort(ids, n, sizeof *ids, cmp_ia);
  for (size_t k = 0, shown = 0; k < n && shown < COMPARE_MAX_INTERACTIONS; k++) {
    if (!ids[k].nb) continue;
    series_t sa, sb;
    if (series_init(&sa, a, ids[k].id)) goto fail;
    if (series_init(&sb, b, ids[k].id)) {
      series_free(&sa);
      goto fail;
    }
    const char *decided, *verdict;
    json_t *m = metrics_of(&sa, &sb, &decided, &verdict);
    series_free(&sa);
    series_free(&sb);
    if (!m) goto fail;
    json_object_del(m, "frozen"); /* per interaction it is almost always 0 = 0 */
    if (json_array_append_new(
            out, json_pack("{s:s,s:I,s:I,s:s,s:o}", "interactionId", ids[k].id, "baselineFrames",
                           (json_int_t)ids[k].na, "candidateFrames", (json_int_t)ids[k].nb,
                           "verdict", verdict, "metrics", m)))
      goto fail;
    shown++;
  }
  free(ids);
  return out;
fail:
  free(ids);
  json_decref(out);
  return NULL;
}

/* Self µs of block `name` in every frame of a side (0 where absent). */
static int64_t *block_series(const compare_side_t *s, const char *name) {
  int64_t *v = malloc((s->nframes ? s->nframes : 1) * sizeof *v);
  if (!v) return NULL;
  for (size_t i = 0; i < s->nframes; i++) {
    v[i] = 0;
    for (size_t k = 0; k < s->frames[i].nblocks; k++)
      if (!strcmp(s->frames[i].blocks[k].name, name)) v[i] += s->frames[i].blocks[k].self_micros;
  }
  return v;
}

static int name_listed(const json_t *arr, const char *name) {
  size_t i;
  json_t *x;
  json_array_foreach(arr, i,
                     x) if (!strcmp(json_string_value(json_object_get(x, "name")), name)) return 1;
  return 0;
}

/* The top findings of either session (the baseline's first): the named
 * block's self time per frame in both, tested like the times. */
static json_t *findings_of(const compare_side_t *a, const compare_side_t *b) {
  json_t *out = json_array();
  if (!out) return NULL;
  const json_t *lists[2] = {a->findings, b->findings};
  for (int l = 0; l < 2; l++) {
    size_t i;
    json_t *f;
    json_array_foreach((json_t *)lists[l], i, f) {
      if (json_array_size(out) >= COMPARE_MAX_FINDINGS) break;
      const char *name = json_string_value(json_object_get(f, "name"));
      if (!name || name_listed(out, name)) continue;
      int64_t *va = block_series(a, name), *vb = block_series(b, name);
      stats_mw_t mw;
      if (!va || !vb || stats_mann_whitney(va, a->nframes, vb, b->nframes, &mw)) {
        free(va);
        free(vb);
        goto fail;
      }
      double ma = a->nframes ? sum_of(va, a->nframes) / (double)a->nframes : 0;
      double mb = b->nframes ? sum_of(vb, b->nframes) / (double)b->nframes : 0;
      free(va);
      free(vb);
      int significant = a->nframes && b->nframes && mw.p < COMPARE_METRIC_ALPHA;
      double floor_us = fmax(COMPARE_MIN_BLOCK_US, COMPARE_MIN_SHIFT_FRAC * ma);
      const char *kind = json_string_value(json_object_get(f, "kind"));
      json_t *e = json_pack("{s:s,s:f,s:f,s:f,s:f,s:b,s:s}", "name", name, "baselineUsPerFrame",
                            round(ma * 10) / 10, "candidateUsPerFrame", round(mb * 10) / 10,
                            "deltaUsPerFrame", round((mb - ma) * 10) / 10, "p", sig3(mw.p),
                            "significant", significant, "change",
                            change_of(significant, fabs(mb - ma) >= floor_us, mb - ma));
      if (e && kind) json_object_set_new(e, "kind", json_string(kind));
      if (json_array_append_new(out, e)) goto fail;
    }
  }
  return out;
fail:
  json_decref(out);
  return NULL;
}

/* comparison.workload: whether both played the same workload, its label,
 * and whether the runs decided (byRuns). */
static json_t *workload_of(const compare_side_t *a, const compare_side_t *b, int by_runs) {
  int same = same_workload(a, b);
  const json_t *w = a->workload ? a->workload : b->workload;
  json_t *o = json_pack("{s:b,s:b,s:b}", "same", same, "baseline", a->workload != NULL, "candidate",
                        b->workload != NULL);
  if (o && json_is_string(json_object_get(w, "label")))
    json_object_set(o, "label", json_object_get(w, "label"));
  if (o) json_object_set_new(o, "byRuns", json_boolean(by_runs));
  return o;
}

static json_t *side_json(const compare_side_t *s) {
  json_t *o = json_pack("{s:s,s:I,s:I,s:I}", "id", s->id ? s->id : "", "frames",
                        (json_int_t)s->nframes, "framesTotal",
                        (json_int_t)(s->frames_total > s->nframes ? s->frames_total : s->nframes),
                        "budgetUs", (json_int_t)s->budget_us);
  if (!o) return NULL;
  if (s->refresh_rate > 0) json_object_set_new(o, "refreshRate", json_real(s->refresh_rate));
  if (s->build_mode) json_object_set_new(o, "buildMode", json_string(s->build_mode));
  return o;
}

json_t *compare_sessions(const compare_side_t *baseline, const compare_side_t *candidate) {
  series_t sa, sb;
  json_t *out = NULL;
  if (series_init(&sa, baseline, NULL)) return NULL;
  if (series_init(&sb, candidate, NULL)) goto fail_b;
  int comparable = 1;
  const char *decided = NULL, *verdict = "unchanged";
  json_t *warnings = warnings_of(baseline, candidate, &comparable);
  json_t *metrics = metrics_of(&sa, &sb, &decided, &verdict);
  int by_runs = runs_decide(baseline, candidate, metrics);
  if (by_runs) decide(metrics, &decided, &verdict);
  json_t *ia = interactions_of(baseline, candidate);
  json_t *fi = findings_of(baseline, candidate);
  out = json_pack("{s:o*,s:o*,s:s,s:b,s:o*,s:{s:s,s:f},s:o*,s:o*,s:o*}", "baseline",
                  side_json(baseline), "candidate", side_json(candidate), "verdict", verdict,
                  "comparable", comparable, "warnings", warnings, "test", "name", "mann-whitney-u",
                  "alpha", COMPARE_METRIC_ALPHA, "metrics", metrics, "interactions", ia, "findings", fi);
  if (out && decided && json_object_set_new(out, "decidedBy", json_string(decided))) {
    json_decref(out);
    out = NULL;
  }
  if (out && (baseline->workload || candidate->workload) &&
      json_object_set_new(out, "workload", workload_of(baseline, candidate, by_runs))) {
    json_decref(out);
    out = NULL;
  }
  /* Any part that failed (out of memory) fails the whole. */
  if (out && (!json_object_get(out, "baseline") || !json_object_get(out, "candidate") ||
              !warnings || !metrics || !ia || !fi)) {
    json_decref(out);
    out = NULL;
  }
  series_free(&sb);
fail_b:
  series_free(&sa);
  return out;
}
