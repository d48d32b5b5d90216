#include "answer_text.h"
#include "apps_text.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budgets.h"
#include "cpuprof.h"
#include "dtd_wire.h" /* the dtd line */
#include "rebuilds.h"
#include "findings.h"
#include "frame_events.h" /* FE_NOTE */
#include "workload.h"

/* ---- a growing string that remembers running out of memory ------------- */

typedef struct {
  char *p;
  size_t n, cap;
  int oom;
} sb_t;

static void sb_printf(sb_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sb_t *b, const char *fmt, ...) {
  if (b->oom) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
    va_end(ap);
    if (k < 0) {
      b->oom = 1;
      return;
    }
    if (b->p && b->n + (size_t)k < b->cap) {
      b->n += (size_t)k;
      return;
    }
    size_t cap = b->cap ? b->cap : 512;
    while (cap <= b->n + (size_t)k) cap *= 2;
    char *np = realloc(b->p, cap);
    if (!np) {
      b->oom = 1;
      return;
    }
    b->p = np;
    b->cap = cap;
  }
}

/* ---- reading the result ---------------------------------------------------- */

static const char *str(const json_t *o, const char *key) {
  return json_string_value(json_object_get(o, key));
}
static int64_t num(const json_t *o, const char *key) {
  const json_t *v = json_object_get(o, key);
  return json_is_integer(v) ? (int64_t)json_integer_value(v) : (int64_t)json_number_value(v);
}
static int has(const json_t *o, const char *key) {
  return json_object_get(o, key) != NULL;
}
/* µs as ms with one decimal. */
static double ms(int64_t us) {
  return (double)us / 1000.0;
}

/* ---- summary --------------------------------------------------------------- */

static void verdict(sb_t *b, const char *action, const json_t *sum, int is_error) {
  const json_t *jank = json_object_get(sum, "jank");
  int64_t frames = num(sum, "frames"), budget = num(sum, "budgetUs");
  sb_printf(b, "%s%s: ", is_error ? "error: " : "", action);
  if (!frames) {
    sb_printf(b, "no frames (budget %.1f ms)\n", ms(budget));
    return;
  }
  int64_t jf = num(jank, "frames");
  sb_printf(b, "%lld frames, %lld janky (%.1f%%)", (long long)frames, (long long)jf,
            json_number_value(json_object_get(jank, "ratio")) * 100.0);
  if (jf && has(jank, "boundBy"))
    sb_printf(b, ", bound by %s (build missed %lld, raster %lld)", str(jank, "boundBy"),
              (long long)num(jank, "buildMissed"), (long long)num(jank, "rasterMissed"));
  if (num(jank, "frozen")) sb_printf(b, ", %lld frozen", (long long)num(jank, "frozen"));
  sb_printf(b, "; budget %.1f ms\n", ms(budget));
  const json_t *bu = json_object_get(sum, "buildUs"), *ra = json_object_get(sum, "rasterUs");
  if (bu && ra)
    sb_printf(b, "build p50 %.1f p90 %.1f max %.1f ms; raster p50 %.1f p90 %.1f max %.1f ms\n",
              ms(num(bu, "p50")), ms(num(bu, "p90")), ms(num(bu, "max")), ms(num(ra, "p50")),
              ms(num(ra, "p90")), ms(num(ra, "max")));
}

/* "cause 1: BUILD (phase) explains 92% of the jank, in 18/20 janky frames:
 * 31.0 ms per janky frame vs 4.0 ms otherwise". */
static void findings(sb_t *b, const json_t *sum) {
  const json_t *fs = json_object_get(sum, "findings");
  size_t i;
  const json_t *f;
  json_array_foreach(fs, i, f) {
    const char *kind = str(f, "kind"), *name = str(f, "name");
    if (!kind || !name) continue;
    int build = !strcmp(kind, "build");
    sb_printf(b,
              "cause %zu: %s (%s%s) explains %.0f%% of the jank, in %lld/%lld janky frames: "
              "%.1f ms per janky frame vs %.1f ms otherwise\n",
              i + 1, name, build ? "ui" : kind, strcmp(kind, "raster") && !build ? "" : " thread",
              json_number_value(json_object_get(f, "explains")) * 100.0,
              (long long)num(f, "jankFrames"), (long long)num(f, "ofJankFrames"),
              ms(num(f, "perJankFrameUs")), ms(num(f, "perOtherFrameUs")));
    if (str(f, "at")) sb_printf(b, "  at: %s\n", str(f, "at"));
    if (i < ANSWER_TEXT_HINTS && str(f, "hint")) sb_printf(b, "  hint: %s\n", str(f, "hint"));
  }
}

/* Where to edit, from the CPU samples: "where 1: _parseFeed (lib/feed.dart:17)
 * explains 80% of the jank: 4.0 ms per janky frame vs 0.0 ms otherwise (mostly
 * in jsonDecode)"; the app's own code is numbered, other code is context. */
static void where(sb_t *b, const json_t *sum) {
  char *t = cpuprof_where_text(json_object_get(sum, "where"));
  if (t) sb_printf(b, "%s", t);
  free(t);
  /* "rebuilt: SlowWidget ×12.0 per janky frame vs ×1.0 otherwise (…)" */
  if ((t = rebuilds_text(json_object_get(sum, "rebuilds")))) sb_printf(b, "%s", t);
  free(t);
}

/* Advice, apart from the causes: "next: start again with trackWidgets: true
 * (…)". 1 when it asks for the watcher. */
static int next(sb_t *b, const json_t *sum) {
  size_t i;
  const json_t *n;
  int watcher = 0;
  json_array_foreach(json_object_get(sum, "next"), i, n) {
    const char *kind = str(n, "kind");
    if (!kind) continue;
    if (!strcmp(kind, "tracking") && str(n, "option"))
      sb_printf(b, "next: start again with %s: true (%s)\n", str(n, "option"),
                str(n, "why") ? str(n, "why") : "");
    else if (str(n, "why"))
      sb_printf(b, "next: %s\n", str(n, "why"));
    watcher |= !strcmp(kind, "watcher");
  }
  return watcher;
}

/* "startup: 1 frame (frame 1), build max 1712.3 ms, raster max 40.1 ms: the
 * app's start, not counted as jank". */
static void startup(sb_t *b, const json_t *sum) {
  const json_t *st = json_object_get(sum, "startup"), *fn = json_object_get(st, "frameNumbers"), *v;
  if (!st) return;
  int64_t n = num(st, "frames");
  sb_printf(b, "startup: %lld frame%s (", (long long)n, n == 1 ? "" : "s");
  size_t i;
  json_array_foreach(fn, i, v)
      sb_printf(b, "%s%lld", i ? ", " : "frame ", (long long)json_integer_value(v));
  if ((int64_t)json_array_size(fn) < n) sb_printf(b, ", …");
  sb_printf(b, "), build max %.1f ms, raster max %.1f ms: the app's start, not counted as jank\n",
            ms(num(st, "buildUsMax")), ms(num(st, "rasterUsMax")));
}

/* A worst frame's cause: its own `cause` (frame_cause.h). A frame the server
 * no longer held has none, nor gcUs/shaderUs: the raster thread when it
 * missed there and took longer than the build, else its first block below
 * the phases (or its first block, or the build itself). */
typedef struct {
  const char *name, *at; /* at: the app function sampled most in it (NULL: none) */
  int64_t us, build_us, number, gc_us;
} cause_t;

static cause_t frame_cause(const json_t *w, int64_t budget) {
  cause_t c = {"build",           str(w, "at"),          num(w, "buildUs"),
               num(w, "buildUs"), num(w, "frameNumber"), num(w, "gcUs")};
  if (c.number <= 0) c.number = -num(w, "seq"); /* unnumbered: by seq, printed "seq N" */
  const json_t *own = json_object_get(w, "cause");
  int64_t raster = num(w, "rasterUs");
  if (str(own, "name")) {
    c.name = str(own, "name");
    c.us = num(own, "us");
  } else if (raster > budget && raster >= c.build_us) {
    c.name = "raster";
    c.us = raster;
  } else {
    const json_t *tb = json_object_get(w, "topBlocks"), *first = json_array_get(tb, 0), *blk;
    size_t i;
    json_array_foreach(tb, i, blk) {
      if (str(blk, "name") && findings_classify(str(blk, "name")) != FINDING_PHASE) {
        first = blk;
        break;
      }
    }
    if (str(first, "name")) {
      c.name = str(first, "name");
      c.us = num(first, "selfMicros");
    }
  }
  return c;
}

static void range(sb_t *b, const char *label, int64_t lo, int64_t hi) {
  /* U+2013 EN DASH between the ends of a range. */
  if (lo == hi)
    sb_printf(b, "%s%.1f ms", label, ms(lo));
  else
    sb_printf(b, "%s%.1f\xe2\x80\x93%.1f ms", label, ms(lo), ms(hi));
}

/* "frames 58, 74, 90: SlowWidget 38.2–39.9 ms (build 44.9–45.5 ms, GC 3.1 ms)":
 * the janky worst frames that share a cause on one line, worst cause first,
 * named by the engine's frame number as everywhere else. */
/* Two worst frames share a line when they share the cause and the place. */
static int same(const cause_t *a, const cause_t *b) {
  return !strcmp(a->name, b->name) && !a->at == !b->at && (!a->at || !strcmp(a->at, b->at));
}

static void worst(sb_t *b, const json_t *sum) {
  const json_t *wf = json_object_get(sum, "worstFrames");
  int64_t budget = num(sum, "budgetUs");
  size_t n = json_array_size(wf), lines = 0, m0 = 0;
  if (n > 16) n = 16;
  cause_t c[16];
  int done[16] = {0};
  for (size_t i = 0; i < n; i++) {
    const json_t *w = json_array_get(wf, i);
    if (num(w, "buildUs") <= budget && num(w, "rasterUs") <= budget) continue; /* not janky */
    c[m0++] = frame_cause(w, budget);
  }
  n = m0;
  for (size_t i = 0; i < n && lines < ANSWER_TEXT_WORST_LINES; i++) {
    if (done[i]) continue;
    int64_t lo = c[i].us, hi = c[i].us, blo = c[i].build_us, bhi = c[i].build_us;
    int64_t glo = INT64_MAX, ghi = 0;
    size_t k = 0;
    for (size_t j = i; j < n; j++)
      if (!done[j] && same(&c[j], &c[i])) k++;
    sb_printf(b, "%s ", k > 1 ? "frames" : "frame");
    int64_t nums[16];
    size_t m = 0;
    for (size_t j = i; j < n; j++) {
      if (done[j] || !same(&c[j], &c[i])) continue;
      done[j] = 1;
      if (c[j].us < lo) lo = c[j].us;
      if (c[j].us > hi) hi = c[j].us;
      if (c[j].build_us < blo) blo = c[j].build_us;
      if (c[j].build_us > bhi) bhi = c[j].build_us;
      int64_t extra = strcmp(c[i].name, "GC") ? c[j].gc_us : 0;
      if (extra > 0 && extra < glo) glo = extra;
      if (extra > ghi) ghi = extra;
      size_t p = m++; /* the frames in order, as a reader finds them */
      while (p > 0 && nums[p - 1] > c[j].number) {
        nums[p] = nums[p - 1];
        p--;
      }
      nums[p] = c[j].number;
    }
    for (size_t j = 0; j < m; j++) {
      if (nums[j] < 0)
        sb_printf(b, "%sseq %lld", j ? ", " : "", (long long)-nums[j]);
      else
        sb_printf(b, "%s%lld", j ? ", " : "", (long long)nums[j]);
    }
    sb_printf(b, ": %s ", c[i].name);
    range(b, "", lo, hi);
    int raster_side = !strcmp(c[i].name, "raster") || !strcmp(c[i].name, "shader compilation");
    int paren = 0;
    if (!raster_side && strcmp(c[i].name, "build")) {
      range(b, " (build ", blo, bhi);
      paren = 1;
    }
    if (ghi > 0) {
      range(b, paren ? ", GC " : " (GC ", glo, ghi);
      paren = 1;
    }
    if (paren) sb_printf(b, ")");
    /* "SlowWidget … in SlowWidget.build (…)" says nothing the name did not. */
    size_t nl = strlen(c[i].name);
    if (c[i].at && (strncmp(c[i].at, c[i].name, nl) || c[i].at[nl] != '.'))
      sb_printf(b, " in %s", c[i].at);
    sb_printf(b, "\n");
    lines++;
  }
}

static void interactions(sb_t *b, const json_t *sum) {
  const json_t *ia = json_object_get(sum, "interactions"), *in;
  size_t i;
  if (json_array_size(ia) < 2) return; /* one interaction is the whole verdict again */
  sb_printf(b, "interactions:");
  json_array_foreach(ia, i, in) {
    if (i == 3) {
      sb_printf(b, " +%zu more", json_array_size(ia) - 3);
      break;
    }
    sb_printf(b, "%s %s %lld/%lld janky", i ? ";" : "", str(in, "interactionId"),
              (long long)num(in, "jankFrames"), (long long)num(in, "frames"));
  }
  sb_printf(b, "\n");
}

/* "workload: fling key:feed, 3 runs: jank 18.2 %, 17.9 %, 18.5 % (spread 0.6
 * points)", then, when the drive failed, why and what is on screen. */
static void workload_line(sb_t *b, const json_t *sum) {
  const json_t *w = json_object_get(sum, "workload"), *run, *d, *c;
  size_t i;
  if (!w) return;
  const json_t *runs = json_object_get(w, "runs");
  sb_printf(b, "workload: %s, %zu run%s:", str(w, "label") ? str(w, "label") : "?",
            json_array_size(runs), json_array_size(runs) == 1 ? "" : "s");
  json_array_foreach(runs, i, run) {
    if (num(run, "frames"))
      sb_printf(b, "%s %.1f %%", i ? "," : " jank", json_number_value(json_object_get(run, "jankRatio")) * 100);
    else
      sb_printf(b, "%s no frames", i ? "," : "");
  }
  const json_t *sp = json_object_get(w, "spread");
  if (sp) sb_printf(b, " (spread %.1f points)", json_number_value(json_object_get(sp, "jankPoints")));
  sb_printf(b, "\n");
  if (!(d = json_object_get(w, "drive"))) return;
  const char *state = str(d, "state");
  if (state && !strcmp(state, "failed")) {
    sb_printf(b, "workload failed at run %lld step %lld: %s\n", (long long)num(d, "run"),
              (long long)num(d, "step"), str(d, "error") ? str(d, "error") : "(no reason given)");
    if (json_array_size(json_object_get(d, "candidates"))) {
      sb_printf(b, "on screen:");
      json_array_foreach(json_object_get(d, "candidates"), i, c)
        sb_printf(b, "%s %s", i ? "," : "", json_string_value(c));
      sb_printf(b, "\n");
    }
  }
  if (json_array_size(json_object_get(d, "cut"))) {
    sb_printf(b, "workload: cut at %d s (run/step):", WORKLOAD_STEP_CUT_MS / 1000);
    json_array_foreach(json_object_get(d, "cut"), i, c) sb_printf(b, " %s", json_string_value(c));
    sb_printf(b, "\n");
  }
}

/* ---- the other parts ------------------------------------------------------- */

static void connection(sb_t *b, const json_t *c, int full) {
  const char *state = str(c, "state");
  if (!state) return;
  if (!full && !strcmp(state, "connected") && !json_is_true(json_object_get(c, "paused"))) return;
  sb_printf(b, "%s%s", full ? "" : "connection: ", state);
  if (str(c, "isolateName")) sb_printf(b, ", isolate %s", str(c, "isolateName"));
  if (str(c, "runtime")) sb_printf(b, " (%s)", str(c, "runtime"));
  if (json_is_true(json_object_get(c, "paused")))
    sb_printf(b, ", paused (%s)", str(c, "pauseKind") ? str(c, "pauseKind") : "?");
  if (str(c, "watcher")) {
    sb_printf(b, ", watcher %s", str(c, "watcher"));
    if (str(c, "watcherVersion")) sb_printf(b, " %s", str(c, "watcherVersion"));
  }
  sb_printf(b, "\n");
}

static void watcher(sb_t *b, const json_t *w) {
  if (!w) return;
  sb_printf(b, "app:");
  if (str(w, "lifecycle")) sb_printf(b, " %s,", str(w, "lifecycle"));
  if (str(w, "buildMode")) sb_printf(b, " %s build,", str(w, "buildMode"));
  sb_printf(b, " frames %s", json_is_false(json_object_get(w, "framesEnabled")) ? "off" : "on");
  if (json_number_value(json_object_get(w, "refreshRate")) > 0)
    sb_printf(b, ", %.0f Hz", json_number_value(json_object_get(w, "refreshRate")));
  if (has(w, "lastSeq"))
    sb_printf(b, ", holds seq %lld\xe2\x80\x93%lld", (long long)num(w, "firstSeq"),
              (long long)num(w, "lastSeq"));
  if (str(w, "interactionId")) sb_printf(b, ", interaction %s", str(w, "interactionId"));
  sb_printf(b, "\n");
}

static void liveness(sb_t *b, const json_t *l) {
  if (!l) return;
  sb_printf(b, "liveness: %lld frames drawn", (long long)num(l, "counter"));
  if (has(l, "framesPerSecond"))
    sb_printf(b, ", %.1f fps over %.1f s", json_number_value(json_object_get(l, "framesPerSecond")),
              ms(num(l, "elapsedMs")));
  sb_printf(b, "\n");
}

static void session(sb_t *b, const char *action, const json_t *s) {
  if (!s) return;
  sb_printf(b, "%ssession %s %s",
            strcmp(action, "start") ? "" : "start: ", str(s, "id") ? str(s, "id") : "?",
            str(s, "state"));
  if (json_is_true(json_object_get(s, "alreadyActive"))) sb_printf(b, " (already active)");
  const json_t *tr = json_object_get(s, "tracking"), *t;
  size_t i;
  if (json_array_size(tr)) {
    sb_printf(b, ", tracking");
    json_array_foreach(tr, i, t) sb_printf(b, "%s %s", i ? "," : "", json_string_value(t));
  }
  if (num(s, "durationMs")) sb_printf(b, ", %.1f s", ms(num(s, "durationMs")));
  if (num(s, "framesLost")) sb_printf(b, ", %lld frames lost", (long long)num(s, "framesLost"));
  if (num(s, "restarts")) sb_printf(b, ", %lld restarts", (long long)num(s, "restarts"));
  if (!strcmp(action, "start") && !strcmp(str(s, "state") ? str(s, "state") : "", "active"))
    sb_printf(b, ". Drive the app, then call stop");
  sb_printf(b, "\n");
}

/* evidence.detail is what went wrong in the agent's own terms (which part
 * of the URI is malformed, the error the app sent): the message alone would
 * leave it guessing. */
static void diagnosis(sb_t *b, const json_t *d) {
  if (!d) return;
  sb_printf(b, "diagnosis %s: %s", str(d, "code"), str(d, "message") ? str(d, "message") : "");
  const char *detail = str(json_object_get(d, "evidence"), "detail");
  if (detail && *detail)
    sb_printf(b, " Detail: %s%s", detail, strchr(".!?", detail[strlen(detail) - 1]) ? "" : ".");
  if (str(d, "hint")) sb_printf(b, " Hint: %s", str(d, "hint"));
  sb_printf(b, "\n");
}

/* ---- verdicts: budgets and compare ------------------------------------------ */

/* The same line `check` prints (budgets_format). */
static void budgets_line(sb_t *b, const json_t *v) {
  if (!json_is_object(v)) return;
  char line[1024];
  budgets_format(v, line, sizeof line);
  sb_printf(b, "%s\n", line);
}

/* p as the test gives it, two significant digits: its order of magnitude is
 * what a reader weighs. */
static void p_value(sb_t *b, const json_t *m) {
  sb_printf(b, "p=%.2g", json_number_value(json_object_get(m, "p")));
}

/* "jank ratio 3.3% → 41.7% (2/60 → 25/60 frames)" */
static void ratio_values(sb_t *b, const char *label, const json_t *m, int percent) {
  double k = percent ? 100.0 : 1.0;
  sb_printf(b, "%s %.*f%s \xe2\x86\x92 %.*f%s", label, percent ? 1 : 0,
            json_number_value(json_object_get(m, "baseline")) * k, percent ? "%" : "",
            percent ? 1 : 0, json_number_value(json_object_get(m, "candidate")) * k,
            percent ? "%" : "");
  if (has(m, "baselineCount"))
    sb_printf(b, " (%lld \xe2\x86\x92 %lld frames)", (long long)num(m, "baselineCount"),
              (long long)num(m, "candidateCount"));
}

/* "build p50 4.0 → 9.1 ms, p90 5.2 → 30.3 ms" */
static void time_values(sb_t *b, const char *label, const json_t *m) {
  const json_t *x = json_object_get(m, "baseline"), *y = json_object_get(m, "candidate");
  sb_printf(b, "%s p50 %.1f \xe2\x86\x92 %.1f ms, p90 %.1f \xe2\x86\x92 %.1f ms", label,
            ms(num(x, "p50")), ms(num(y, "p50")), ms(num(x, "p90")), ms(num(y, "p90")));
}

static const struct {
  const char *key, *label;
  int ratio, percent;
} compare_metrics[] = {
    {"jankRatio", "jank ratio", 1, 1}, {"frozen", "frozen frames", 1, 0},
    {"buildUs", "build", 0, 0},        {"rasterUs", "raster", 0, 0},
};
#define N_COMPARE_METRICS (sizeof compare_metrics / sizeof compare_metrics[0])

static void metric_values(sb_t *b, size_t k, const json_t *m) {
  if (compare_metrics[k].ratio) {
    /* frozen: the share is near 0; the counts say it */
    if (compare_metrics[k].percent)
      ratio_values(b, compare_metrics[k].label, m, 1);
    else
      sb_printf(b, "%s %lld \xe2\x86\x92 %lld", compare_metrics[k].label,
                (long long)num(m, "baselineCount"), (long long)num(m, "candidateCount"));
  } else {
    time_values(b, compare_metrics[k].label, m);
  }
}

/* The comparison (compare.h) as an agent acts on it: the verdict and what
 * decided it, one line per metric that moved (before → after, which way,
 * p), the unmoved ones on one line, the findings and interactions that
 * moved, and every warning, those that make the sessions not comparable
 * first and said so. */
static void comparison(sb_t *b, const json_t *c, int is_error) {
  const json_t *ws = json_object_get(c, "warnings"), *w, *ms_ = json_object_get(c, "metrics");
  const char *verdict = str(c, "verdict") ? str(c, "verdict") : "?";
  const char *base = str(json_object_get(c, "baseline"), "id");
  const char *cand = str(json_object_get(c, "candidate"), "id");
  int comparable = !json_is_false(json_object_get(c, "comparable"));
  size_t i;
  sb_printf(b, "%scompare: ", is_error ? "error: " : "");
  if (comparable)
    sb_printf(b, "%s", verdict);
  else
    sb_printf(b, "NOT COMPARABLE (as measured: %s; do not act on it)", verdict);
  sb_printf(b, ", candidate %s vs baseline %s (%lld vs %lld frames", cand ? cand : "?",
            base ? base : "?", (long long)num(json_object_get(c, "candidate"), "frames"),
            (long long)num(json_object_get(c, "baseline"), "frames"));
  if (str(c, "decidedBy")) {
    const char *d = str(c, "decidedBy");
    for (size_t k = 0; k < N_COMPARE_METRICS; k++)
      if (!strcmp(d, compare_metrics[k].key)) d = compare_metrics[k].label;
    sb_printf(b, "; decided by %s", d);
  }
  sb_printf(b, ")\n");
  const json_t *wl = json_object_get(c, "workload");
  if (json_is_true(json_object_get(wl, "same")))
    sb_printf(b, "  both ran the same workload (%s)%s\n", str(wl, "label") ? str(wl, "label") : "?",
              json_is_true(json_object_get(wl, "byRuns")) ? "; jank and p90s judged run by run" : "");
  /* The metrics that moved, in the order that decides the verdict. */
  int same[N_COMPARE_METRICS] = {0}, nsame = 0;
  for (size_t k = 0; k < N_COMPARE_METRICS; k++) {
    const json_t *m = json_object_get(ms_, compare_metrics[k].key);
    if (!m) continue;
    const char *change = str(m, "change") ? str(m, "change") : "same";
    if (!strcmp(change, "same")) {
      same[k] = 1;
      nsame++;
      continue;
    }
    sb_printf(b, "  ");
    metric_values(b, k, m);
    sb_printf(b, ": %s", change);
    if (!compare_metrics[k].ratio)
      sb_printf(b, " (shift %+.1f ms)", json_number_value(json_object_get(m, "shiftUs")) / 1000.0);
    sb_printf(b, ", ");
    p_value(b, m);
    sb_printf(b, "\n");
  }
  if (nsame) {
    sb_printf(b, "  no significant change:");
    int first = 1;
    for (size_t k = 0; k < N_COMPARE_METRICS; k++) {
      if (!same[k]) continue;
      const json_t *m = json_object_get(ms_, compare_metrics[k].key);
      sb_printf(b, "%s ", first ? "" : ";");
      metric_values(b, k, m);
      sb_printf(b, ", ");
      p_value(b, m);
      first = 0;
    }
    sb_printf(b, "\n");
  }
  const json_t *f;
  size_t shown = 0;
  json_array_foreach(json_object_get(c, "findings"), i, f) {
    const char *change = str(f, "change");
    if (!change || !strcmp(change, "same") || shown == 2) continue;
    sb_printf(b, "  %s: %.1f \xe2\x86\x92 %.1f ms per frame: %s, ", str(f, "name"),
              json_number_value(json_object_get(f, "baselineUsPerFrame")) / 1000.0,
              json_number_value(json_object_get(f, "candidateUsPerFrame")) / 1000.0, change);
    p_value(b, f);
    sb_printf(b, "\n");
    shown++;
  }
  shown = 0;
  json_array_foreach(json_object_get(c, "interactions"), i, f) {
    const char *v = str(f, "verdict");
    if (!v || !strcmp(v, "unchanged")) continue;
    if (shown == 3) {
      sb_printf(b, ", \xe2\x80\xa6");
      break;
    }
    sb_printf(b, "%s %s %s", shown ? "," : "  interactions:", str(f, "interactionId"), v);
    shown++;
  }
  if (shown) sb_printf(b, "\n");
  for (int breaking = 1; breaking >= 0; breaking--) json_array_foreach(ws, i, w) {
      if (json_is_true(json_object_get(w, "notComparable")) != breaking) continue;
      sb_printf(b, "warning%s: %s\n", breaking ? " (not comparable)" : "", str(w, "message"));
    }
}

char *answer_text_render(const json_t *r, int is_error) {
  sb_t b = {NULL, 0, 0, 0};
  const char *action = str(r, "action") ? str(r, "action") : "telescope_frames";
  const json_t *sum = json_object_get(r, "summary");
  int asked_for_watcher = 0;
  if (sum) {
    verdict(&b, action, sum, is_error);
    workload_line(&b, sum);
    budgets_line(&b, json_object_get(r, "budgets")); /* a verdict too: next to the first */
    startup(&b, sum);
    findings(&b, sum);
    where(&b, sum);
    asked_for_watcher = next(&b, sum);
    /* Within budget, the worst frames explain nothing an agent must act on. */
    if (num(json_object_get(sum, "jank"), "frames")) worst(&b, sum);
    interactions(&b, sum);
  } else if (json_object_get(r, "workload")) {
    workload_line(&b, r); /* a drive that failed before any frame */
  } else if (is_error) {
    sb_printf(&b, "error: %s failed\n", action);
  } else if (!strcmp(action, "mark") && json_object_get(r, "interaction")) {
    const json_t *in = json_object_get(r, "interaction");
    sb_printf(&b, "mark: interaction %s %s\n",
              str(in, "interactionId") ? str(in, "interactionId") : "(current)",
              str(in, "state") ? str(in, "state") : "");
  } else if (!strcmp(action, "status")) {
    sb_printf(&b, "status: ");
  } else if (json_is_object(json_object_get(r, "comparison"))) {
    comparison(&b, json_object_get(r, "comparison"), is_error);
  } else if (!strcmp(action, "start") && json_object_get(r, "session")) {
    /* the session line below is the verdict */
  } else {
    sb_printf(&b, "%s: ok\n", action);
  }
  connection(&b, json_object_get(r, "connection"), !strcmp(action, "status")); /* else: when wrong */
  diagnosis(&b, json_object_get(r, "diagnosis"));
  sb_printf(&b, "%s", dtd_wire_text(json_object_get(r, "dtd")));
  if (!strcmp(action, "status")) {
    watcher(&b, json_object_get(r, "watcher"));
    liveness(&b, json_object_get(r, "liveness"));
    const json_t *clk = json_object_get(r, "clock");
    if (clk && str(clk, "parity") && !strcmp(str(clk, "parity"), "inconsistent"))
      sb_printf(&b, "clock: %s (%lld samples)\n", str(clk, "parity"),
                (long long)num(clk, "samples"));
  }
  if (strcmp(action, "mark") || !has(r, "interaction"))
    session(&b, action, json_object_get(r, "session"));
  sb_printf(&b, "%s", apps_text(r)); /* which app, when there are several */
  const json_t *ws = json_object_get(r, "warnings"), *w;
  size_t i;
  json_array_foreach(ws, i, w) {
    /* A next line that already asks for the watcher says it in fewer bytes. */
    if (!json_is_string(w) || (asked_for_watcher && !strcmp(json_string_value(w), FE_NOTE)))
      continue;
    sb_printf(&b, "warning: %s\n", json_string_value(w));
  }
  const json_t *frames = json_object_get(r, "frames");
  if (json_array_size(frames))
    sb_printf(&b, "frames: %zu listed in structuredContent (seq %lld\xe2\x80\x93%lld)\n",
              json_array_size(frames), (long long)num(json_array_get(frames, 0), "seq"),
              (long long)num(json_array_get(frames, json_array_size(frames) - 1), "seq"));
  const json_t *tr = json_object_get(r, "truncated");
  if (tr && !json_is_false(tr)) {
    char *t = json_is_string(tr) ? NULL : json_dumps(tr, JSON_COMPACT);
    sb_printf(&b, "truncated: %s\n", json_is_string(tr) ? json_string_value(tr) : t ? t : "yes");
    free(t);
  }
  if (str(r, "nextCursor")) sb_printf(&b, "nextCursor: %s\n", str(r, "nextCursor"));
  const json_t *chart = json_object_get(r, "chart");
  if (str(chart, "path")) sb_printf(&b, "chart: %s\n", str(chart, "path"));
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  if (b.n && b.p[b.n - 1] == '\n') b.p[--b.n] = 0; /* no trailing newline */
  return b.p;
}
