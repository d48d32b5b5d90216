/* workload: the steps of a drive, checked; flutter_driver's commands; what
 * the runs measured (workload.h). */
#include "workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "stats.h"

static const char *const kinds[] = {"scroll", "fling", "tap", "wait", "back"};

/* ---- checking ------------------------------------------------------------ */

/* A finder "key:NAME", "text:LABEL" or "type:WidgetType" (DRIVE 1). */
static int finder_parse(const json_t *v, char *out, const char *where, char *err, size_t errlen) {
  static const char *const prefixes[] = {"key:", "text:", "type:"};
  const char *s = json_string_value(v);
  if (!s)
    return errbuf_fail(err, errlen, "%s: must be a finder string (\"key:NAME\", \"text:LABEL\" or "
                                    "\"type:WidgetType\")", where);
  if (record_utf8_length(s) > WORKLOAD_MAX_FINDER || strlen(s) != json_string_length(v))
    return errbuf_fail(err, errlen, "%s: longer than %d characters or contains NUL", where,
                       WORKLOAD_MAX_FINDER);
  for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) {
    size_t k = strlen(prefixes[i]);
    if (!strncmp(s, prefixes[i], k) && s[k]) {
      snprintf(out, WORKLOAD_FINDER_BYTES + 1, "%s", s);
      return 0;
    }
  }
  return errbuf_fail(err, errlen,
                     "%s: \"%.40s\" is not a finder (\"key:NAME\", \"text:LABEL\" or "
                     "\"type:WidgetType\", with something after the colon)",
                     where, s);
}

/* A number field of a step: absent gives def; else within [lo, hi]. */
static int number_field(const json_t *o, const char *key, double def, double lo, double hi,
                        int integer, double *out, const char *where, char *err, size_t errlen) {
  const json_t *v = json_object_get(o, key);
  *out = def;
  if (!v) return 0;
  if (integer ? !json_is_integer(v) : !json_is_number(v))
    return errbuf_fail(err, errlen, "%s.%s: must be %s", where, key,
                       integer ? "an integer" : "a number");
  double x = json_number_value(v);
  if (x < lo || x > hi)
    return errbuf_fail(err, errlen, "%s.%s: must be from %g to %g, got %g", where, key, lo, hi, x);
  *out = x;
  return 0;
}

/* scroll or fling: {dx, dy, ms | velocity, in}. */
static int drag_parse(wl_step_t *s, const json_t *o, const char *where, char *err, size_t errlen) {
  const char *key;
  const json_t *v;
  if (!json_is_object(o)) return errbuf_fail(err, errlen, "%s: must be an object", where);
  json_object_foreach((json_t *)o, key, v) {
    int known = !strcmp(key, "dx") || !strcmp(key, "dy") || !strcmp(key, "in") ||
                !strcmp(key, s->kind == WL_SCROLL ? "ms" : "velocity");
    if (!known)
      return errbuf_fail(err, errlen, "%s.%s: unknown key (a %s takes dx, dy, %s, in)", where, key,
                         kinds[s->kind], s->kind == WL_SCROLL ? "ms" : "velocity");
  }
  double ms = 0;
  if (number_field(o, "dx", 0, -1e6, 1e6, 0, &s->dx, where, err, errlen) < 0 ||
      number_field(o, "dy", 0, -1e6, 1e6, 0, &s->dy, where, err, errlen) < 0 ||
      (s->kind == WL_SCROLL && number_field(o, "ms", 800, 50, 10000, 1, &ms, where, err, errlen) < 0) ||
      (s->kind == WL_FLING &&
       number_field(o, "velocity", 4000, 100, 20000, 0, &s->velocity, where, err, errlen) < 0))
    return -1;
  s->ms = (int)ms;
  if (s->dx == 0 && s->dy == 0)
    return errbuf_fail(err, errlen, "%s: empty drag (dx and dy are both 0)", where);
  const json_t *in = json_object_get(o, "in");
  if (in) {
    char w2[96];
    snprintf(w2, sizeof w2, "%s.in", where);
    return finder_parse(in, s->finder, w2, err, errlen);
  }
  return 0;
}

static int step_parse(wl_step_t *s, const json_t *o, size_t i, char *err, size_t errlen) {
  char where[48];
  snprintf(where, sizeof where, "workload.steps[%zu]", i);
  if (!json_is_object(o) || json_object_size(o) != 1)
    return errbuf_fail(err, errlen,
                       "%s: must be an object with one key: scroll, fling, tap, wait or back", where);
  const char *key = json_object_iter_key(json_object_iter((json_t *)o));
  const json_t *v = json_object_iter_value(json_object_iter((json_t *)o));
  size_t k = 0;
  while (k < sizeof kinds / sizeof *kinds && strcmp(kinds[k], key)) k++;
  if (k == sizeof kinds / sizeof *kinds)
    return errbuf_fail(err, errlen,
                       "%s.%s: unknown step (one of scroll, fling, tap, wait, back)", where, key);
  memset(s, 0, sizeof *s);
  s->kind = (wl_kind_t)k;
  char w2[64];
  snprintf(w2, sizeof w2, "%s.%.10s", where, kinds[k]);
  switch (s->kind) {
  case WL_SCROLL:
  case WL_FLING: return drag_parse(s, v, w2, err, errlen);
  case WL_TAP: return finder_parse(v, s->finder, w2, err, errlen);
  case WL_WAIT:
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 10000)
      return errbuf_fail(err, errlen, "%s: must be an integer from 0 to 10000 (ms)", w2);
    s->ms = (int)json_integer_value(v);
    return 0;
  case WL_BACK:
    if (!json_is_true(v)) return errbuf_fail(err, errlen, "%s: must be true", w2);
    return 0;
  }
  return -1;
}

int workload_parse(workload_t *w, const json_t *v, char *err, size_t errlen) {
  memset(w, 0, sizeof *w);
  if (!json_is_object(v))
    return errbuf_fail(err, errlen, "workload: must be an object {steps: [...], repeat: 1-10}");
  const char *key;
  const json_t *x;
  json_object_foreach((json_t *)v, key, x) {
    if (strcmp(key, "steps") && strcmp(key, "repeat"))
      return errbuf_fail(err, errlen, "workload.%s: unknown key (a workload takes steps, repeat)",
                         key);
  }
  const json_t *steps = json_object_get(v, "steps");
  if (!json_is_array(steps) || json_array_size(steps) == 0 ||
      json_array_size(steps) > WORKLOAD_MAX_STEPS)
    return errbuf_fail(err, errlen, "workload.steps: must be an array of 1 to %d steps",
                       WORKLOAD_MAX_STEPS);
  const json_t *rep = json_object_get(v, "repeat");
  if (rep && (!json_is_integer(rep) || json_integer_value(rep) < 1 ||
              json_integer_value(rep) > WORKLOAD_MAX_REPEAT))
    return errbuf_fail(err, errlen, "workload.repeat: must be an integer from 1 to %d",
                       WORKLOAD_MAX_REPEAT);
  workload_t t;
  memset(&t, 0, sizeof t);
  t.repeat = rep ? (int)json_integer_value(rep) : 1;
  for (size_t i = 0; i < json_array_size(steps); i++)
    if (step_parse(&t.steps[i], json_array_get(steps, i), i, err, errlen) < 0) return -1;
  t.nsteps = json_array_size(steps);
  if (!(t.steps_json = json_deep_copy(steps)))
    return errbuf_fail(err, errlen, "workload: out of memory");
  *w = t;
  return 0;
}

void workload_close(workload_t *w) {
  json_decref(w->steps_json);
  memset(w, 0, sizeof *w);
}

int workload_copy(workload_t *dst, const workload_t *src) {
  *dst = *src;
  if (!(dst->steps_json = json_deep_copy(src->steps_json))) {
    memset(dst, 0, sizeof *dst);
    return -1;
  }
  return 0;
}

void workload_label(const workload_t *w, char *buf, size_t n) {
  size_t len = 0;
  if (n) buf[0] = '\0';
  for (size_t i = 0; i < w->nsteps && len < n; i++) {
    const wl_step_t *s = &w->steps[i];
    char one[WORKLOAD_FINDER_BYTES + 32];
    if (s->kind == WL_WAIT)
      snprintf(one, sizeof one, "wait %d ms", s->ms);
    else
      snprintf(one, sizeof one, "%s%s%s", kinds[s->kind], s->finder[0] ? " " : "", s->finder);
    int k = snprintf(buf + len, n - len, "%s%s", i ? ", " : "", one);
    if (k < 0 || (size_t)k >= n - len) {
      if (n >= 4) { /* "…", after the last whole character */
        size_t at = n - 4;
        while (at > 0 && ((unsigned char)buf[at] & 0xc0) == 0x80) at--;
        snprintf(buf + at, 4, "\xe2\x80\xa6");
      }
      return;
    }
    len += (size_t)k;
  }
}

/* ---- flutter_driver ------------------------------------------------------ */

int workload_driver_check(const workload_t *w, char *err, size_t errlen) {
  for (size_t i = 0; i < w->nsteps; i++) {
    const wl_step_t *s = &w->steps[i];
    if ((s->kind == WL_SCROLL || s->kind == WL_FLING) && !s->finder[0])
      return errbuf_fail(err, errlen,
                         "workload.steps[%zu].%s: needs \"in\" (a finder of the list) when the "
                         "app has no watcher: flutter_driver scrolls a widget it finds, it has no "
                         "\"largest Scrollable\"",
                         i, kinds[s->kind]);
  }
  return 0;
}

int64_t workload_fling_duration_us(const wl_step_t *s) {
  double travel = hypot(s->dx, s->dy) + WORKLOAD_SLOP;
  return (int64_t)llround(travel / s->velocity * 1e6);
}

/* Dart's double.toString for what a drag takes: "-3000.0", "12.5". */
static void dart_double(char *buf, size_t n, double x) {
  if (x == floor(x) && fabs(x) < 1e15)
    snprintf(buf, n, "%.1f", x);
  else
    snprintf(buf, n, "%.17g", x);
}

/* SerializableFinder.serialize (flutter_driver lib/src/common/find.dart):
 * ByValueKey keyValueString/keyValueType, ByText text, ByType type. */
static int finder_put(json_t *cmd, const char *finder) {
  if (!strncmp(finder, "key:", 4))
    return json_object_set_new(cmd, "finderType", json_string("ByValueKey")) ||
           json_object_set_new(cmd, "keyValueString", json_string(finder + 4)) ||
           json_object_set_new(cmd, "keyValueType", json_string("String"));
  if (!strncmp(finder, "text:", 5))
    return json_object_set_new(cmd, "finderType", json_string("ByText")) ||
           json_object_set_new(cmd, "text", json_string(finder + 5));
  return json_object_set_new(cmd, "finderType", json_string("ByType")) ||
         json_object_set_new(cmd, "type", json_string(finder + 5));
}

/* flutter_driver's scroll moves duration × frequency / 1e6 times and divides
 * the drag and the duration by that count (flutter/flutter
 * packages/flutter_driver/lib/src/common/handler_factory.dart, _scroll:
 * totalMoves = duration.inMicroseconds * frequency ~/ 1e6): under one move
 * it throws.
 * The display's rate (hz, rounded; 60 when unknown or under 1), raised so
 * that even a short fling makes 2 moves, as DRIVE 2's fling plan does. */
static long long driver_frequency(double hz, long long dur_us) {
  long long f = hz >= 1 ? llround(hz) : 60;
  long long need = dur_us > 0 ? (2000000 + dur_us - 1) / dur_us : 0;
  return f > need ? f : need;
}

json_t *workload_driver_commands(const wl_step_t *s, double hz) {
  json_t *out = json_array(), *cmd = NULL;
  int bad = !out;
  char dx[40], dy[40], dur[24], fr[24];
  long long us;
  switch (s->kind) {
  case WL_SCROLL:
  case WL_FLING:
    dart_double(dx, sizeof dx, s->dx);
    dart_double(dy, sizeof dy, s->dy);
    us = s->kind == WL_FLING ? (long long)workload_fling_duration_us(s) : (long long)s->ms * 1000;
    snprintf(dur, sizeof dur, "%lld", us);
    snprintf(fr, sizeof fr, "%lld", driver_frequency(hz, us));
    cmd = json_pack("{s:s,s:s,s:s,s:s,s:s}", "command", "scroll", "dx", dx, "dy", dy, "duration",
                    dur, "frequency", fr);
    bad |= !cmd || finder_put(cmd, s->finder) || json_array_append_new(out, cmd);
    bad |= json_array_append_new(out, json_pack("{s:s}", "command", "waitUntilNoTransientCallbacks"));
    break;
  case WL_TAP:
    cmd = json_pack("{s:s}", "command", "tap");
    bad |= !cmd || finder_put(cmd, s->finder) || json_array_append_new(out, cmd);
    break;
  case WL_BACK:
    bad |= json_array_append_new(out, json_pack("{s:s,s:s}", "command", "tap", "finderType", "PageBack"));
    break;
  case WL_WAIT: break;
  }
  if (bad) {
    json_decref(out);
    return NULL;
  }
  return out;
}

/* ---- what the runs measured ---------------------------------------------- */

void workload_interaction(char *buf, size_t n, const char *drive_id, int run, int step) {
  snprintf(buf, n, "%s/r%d/s%d", drive_id, run, step);
}

int workload_interaction_parse(const char *iid, char *id, size_t n, int *run, int *step) {
  const char *slash = iid ? strchr(iid, '/') : NULL;
  if (!slash || slash == iid || (size_t)(slash - iid) >= n) return -1;
  char tail;
  if (sscanf(slash, "/r%d/s%d%c", run, step, &tail) != 2 || *run < 1 || *step < 1) return -1;
  memcpy(id, iid, (size_t)(slash - iid));
  id[slash - iid] = '\0';
  return 0;
}

typedef struct {
  int64_t *build, *raster;
  size_t n, janky;
} run_acc_t;

static double round4(double x) {
  return round(x * 1e4) / 1e4;
}

json_t *workload_summary(const workload_t *w, const frame_t *frames, size_t n, int64_t budget_us,
                         const char *drive_id) {
  char label[512], drive[RECORD_MAX_INTERACTION + 1] = "", id[RECORD_MAX_INTERACTION + 1];
  if (drive_id) snprintf(drive, sizeof drive, "%s", drive_id);
  int runs = w->repeat > 0 ? w->repeat : 1;
  run_acc_t acc[WORKLOAD_MAX_REPEAT];
  memset(acc, 0, sizeof acc);
  int bad = 0;
  for (int r = 0; r < runs; r++) {
    acc[r].build = malloc((n ? n : 1) * sizeof(int64_t));
    acc[r].raster = malloc((n ? n : 1) * sizeof(int64_t));
    bad |= !acc[r].build || !acc[r].raster;
  }
  for (size_t i = 0; !bad && i < n; i++) {
    const frame_t *f = &frames[i];
    int run, step;
    if (f->startup || !f->linked_by || strcmp(f->linked_by, WORKLOAD_LINKED_BY) ||
        workload_interaction_parse(f->interaction_id, id, sizeof id, &run, &step) < 0)
      continue;
    if (!drive[0]) snprintf(drive, sizeof drive, "%s", id); /* the first drive of the window */
    if (strcmp(drive, id) || run > runs) continue;
    run_acc_t *a = &acc[run - 1];
    a->build[a->n] = f->build_us;
    a->raster[a->n] = f->raster_us;
    a->janky += f->build_us > budget_us || f->raster_us > budget_us;
    a->n++;
  }
  workload_label(w, label, sizeof label);
  json_t *out = bad ? NULL
                    : json_pack("{s:s,s:O,s:i,s:[]}", "label", label, "steps", w->steps_json,
                                "repeat", w->repeat, "runs");
  json_t *ra = json_object_get(out, "runs");
  double jmin = 0, jmax = 0;
  int64_t bmin = 0, bmax = 0, rmin = 0, rmax = 0;
  int seen = 0;
  for (int r = 0; out && r < runs; r++) {
    run_acc_t *a = &acc[r];
    stats_sort(a->build, a->n);
    stats_sort(a->raster, a->n);
    double j = a->n ? (double)a->janky / (double)a->n : 0;
    int64_t b = stats_percentile(a->build, a->n, 0.9), rs = stats_percentile(a->raster, a->n, 0.9);
    if (json_array_append_new(ra, json_pack("{s:i,s:I,s:I,s:f,s:I,s:I}", "run", r + 1, "frames",
                                            (json_int_t)a->n, "jankFrames", (json_int_t)a->janky,
                                            "jankRatio", round4(j), "buildP90Us", (json_int_t)b,
                                            "rasterP90Us", (json_int_t)rs)))
      bad = 1;
    if (!a->n) continue;
    if (!seen || j < jmin) jmin = j;
    if (!seen || j > jmax) jmax = j;
    if (!seen || b < bmin) bmin = b;
    if (!seen || b > bmax) bmax = b;
    if (!seen || rs < rmin) rmin = rs;
    if (!seen || rs > rmax) rmax = rs;
    seen++;
  }
  if (out && drive[0]) bad |= json_object_set_new(out, "driveId", json_string(drive));
  if (out && seen >= 2)
    bad |= json_object_set_new(out, "spread",
                               json_pack("{s:f,s:I,s:I}", "jankPoints",
                                         round((jmax - jmin) * 1000) / 10, "buildP90Us",
                                         (json_int_t)(bmax - bmin), "rasterP90Us",
                                         (json_int_t)(rmax - rmin)));
  for (int r = 0; r < runs; r++) {
    free(acc[r].build);
    free(acc[r].raster);
  }
  if (bad) {
    json_decref(out);
    return NULL;
  }
  return out;
}

/* ---- compare on runs ----------------------------------------------------- */

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

double workload_median(double *v, size_t n) {
  if (n == 0) return 0;
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

const char *workload_runs_change(const double *a, size_t na, const double *b, size_t nb,
                                 double min_delta) {
  double as[WORKLOAD_MAX_REPEAT], bs[WORKLOAD_MAX_REPEAT];
  if (na < 2 || nb < 2 || na > WORKLOAD_MAX_REPEAT || nb > WORKLOAD_MAX_REPEAT) return "same";
  memcpy(as, a, na * sizeof *a);
  memcpy(bs, b, nb * sizeof *b);
  double delta = workload_median(bs, nb) - workload_median(as, na);
  double spread = fmax(as[na - 1] - as[0], bs[nb - 1] - bs[0]);
  /* The gap between the closest runs of the two sides (<= 0: they overlap). */
  double gap = fmax(bs[0] - as[na - 1], as[0] - bs[nb - 1]);
  if (gap <= WORKLOAD_RUNS_GAP * spread || fabs(delta) < min_delta) return "same";
  return delta > 0 ? "worse" : "better";
}
