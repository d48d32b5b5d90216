/* The drive plan: steps parsed as DRIVE.md §1 says, and each drag turned
 * into pointer events as §2 says. The rules that are decisions rather than
 * facts are written down in tests/vectors/drive/README.md. */
#include "model_drive_plan.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_HZ 60.0
#define DEFAULT_SCROLL_MS 800.0
#define DEFAULT_VELOCITY 4000.0

static char *detail_new(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *detail_new(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int len = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *s = len >= 0 ? malloc((size_t)len + 1) : NULL;
  if (!s) return NULL;
  va_start(ap, fmt);
  vsnprintf(s, (size_t)len + 1, fmt, ap);
  va_end(ap);
  return s;
}

static const char *const kind_names[] = {"scroll", "fling", "tap", "wait", "back"};

const char *dp_kind_name(dp_kind_t kind) {
  return kind_names[kind];
}

const char *dp_event_kind_name(dp_event_kind_t kind) {
  return kind == DP_DOWN ? "down" : kind == DP_MOVE ? "move" : "up";
}

/* A finder: "key:", "text:" or "type:" and at least one character after. */
static int finder_valid(const char *f) {
  static const char *const prefixes[] = {"key:", "text:", "type:"};
  if (strlen(f) > DP_FINDER_MAX) return 0;
  for (size_t i = 0; i < 3; i++) {
    size_t n = strlen(prefixes[i]);
    if (!strncmp(f, prefixes[i], n)) return f[n] != '\0';
  }
  return 0;
}

static char *finder_get(json_t *v, const char *where, char *out) {
  if (!json_is_string(v) || !finder_valid(json_string_value(v)))
    return detail_new("%s must be a finder \"key:NAME\", \"text:LABEL\" or \"type:WidgetType\" "
                      "(at most %d bytes)",
                      where, DP_FINDER_MAX);
  strcpy(out, json_string_value(v));
  return NULL;
}

/* A number in [lo, hi] (absent: keeps *out). */
static char *number_get(json_t *v, const char *where, double lo, double hi, double *out) {
  if (!v) return NULL;
  if (!json_is_number(v) || json_number_value(v) < lo || json_number_value(v) > hi)
    return detail_new("%s must be a number %g-%g", where, lo, hi);
  *out = json_number_value(v);
  return NULL;
}

/* scroll or fling: {"dx":…, "dy":…, "ms"|"velocity":…, "in":F}. */
static char *drag_parse(json_t *v, const char *at, dp_step_t *st) {
  char where[64];
  const char *key;
  json_t *field;
  char *detail = NULL;
  int fling = st->kind == DP_FLING;
  if (!json_is_object(v)) return detail_new("%s must be an object", at);
  json_object_foreach(v, key, field) {
    snprintf(where, sizeof where, "%s.%s", at, key);
    if (!strcmp(key, "dx") || !strcmp(key, "dy")) {
      detail = number_get(field, where, -1e6, 1e6, key[1] == 'x' ? &st->dx : &st->dy);
    } else if (!fling && !strcmp(key, "ms")) {
      detail = number_get(field, where, 50, 10000, &st->ms);
    } else if (fling && !strcmp(key, "velocity")) {
      detail = number_get(field, where, 100, 20000, &st->velocity);
    } else if (!strcmp(key, "in")) {
      detail = finder_get(field, where, st->finder);
    } else {
      detail = detail_new("%s: unknown key \"%s\" (%s)", at, key,
                          fling ? "dx, dy, velocity, in" : "dx, dy, ms, in");
    }
    if (detail) return detail;
  }
  return NULL;
}

static char *step_parse(json_t *v, size_t i, dp_step_t *st) {
  char at[48];
  const char *key;
  json_t *body;
  memset(st, 0, sizeof *st);
  st->ms = DEFAULT_SCROLL_MS;
  st->velocity = DEFAULT_VELOCITY;
  if (!json_is_object(v) || json_object_size(v) != 1)
    return detail_new("steps[%zu] must be an object with one of scroll, fling, tap, wait, back", i);
  json_object_foreach(v, key, body) {
    snprintf(at, sizeof at, "steps[%zu].%s", i, key);
    size_t k;
    for (k = 0; k < 5 && strcmp(key, kind_names[k]); k++) continue;
    if (k == 5)
      return detail_new("steps[%zu]: unknown key \"%s\" (scroll, fling, tap, wait, back)", i, key);
    st->kind = (dp_kind_t)k;
    switch (st->kind) {
      case DP_SCROLL:
      case DP_FLING:
        return drag_parse(body, at, st);
      case DP_TAP:
        return finder_get(body, at, st->finder);
      case DP_WAIT:
        st->ms = 0;
        if (!body) return NULL;
        return json_is_number(body) ? number_get(body, at, 0, 10000, &st->ms)
                                    : detail_new("%s must be a number 0-10000", at);
      case DP_BACK:
        return json_is_true(body) ? NULL : detail_new("%s must be true", at);
    }
  }
  return NULL;
}

int dp_steps_parse(const char *text, dp_step_t *out, char **detail) {
  json_error_t jerr;
  json_t *steps = text ? json_loads(text, JSON_DECODE_ANY, &jerr) : NULL;
  size_t i;
  json_t *v;
  *detail = NULL;
  if (!json_is_array(steps) || json_array_size(steps) < 1 ||
      json_array_size(steps) > DP_MAX_STEPS) {
    *detail = detail_new("steps must be a JSON array of 1-%d steps", DP_MAX_STEPS);
    json_decref(steps);
    return -1;
  }
  json_array_foreach(steps, i, v) {
    if ((*detail = step_parse(v, i, &out[i]))) break;
  }
  int n = *detail ? -1 : (int)json_array_size(steps);
  json_decref(steps);
  return n;
}

/* ---- the plan ------------------------------------------------------------ */

static void event_add(dp_plan_t *p, int64_t t, dp_event_kind_t kind, double x, double y) {
  p->events[p->n++] = (dp_event_t){t, kind, x, y};
}

/* A drag of n moves, the i-th at times[i] (i = 1..n), the pointer going
 * P = d + SLOP·u in even parts: the slop is spent before the drag starts,
 * so the content moves by d (as WidgetController.drag accounts for it). */
int dp_plan_make(const dp_step_t *step, double x0, double y0, double hz, dp_plan_t *plan,
                 const char **error) {
  memset(plan, 0, sizeof *plan);
  *error = NULL;
  if (step->kind == DP_WAIT || step->kind == DP_BACK) return 0;
  size_t n = 0;
  double T = 1e6 / (hz > 0 ? hz : DEFAULT_HZ), D = 0, px = 0, py = 0;
  if (step->kind != DP_TAP) {
    double len = hypot(step->dx, step->dy);
    if (len == 0) {
      *error = "empty drag";
      return -1;
    }
    px = step->dx + DP_TOUCH_SLOP * step->dx / len;
    py = step->dy + DP_TOUCH_SLOP * step->dy / len;
    if (step->kind == DP_SCROLL) {
      long long k = llround(step->ms * 1000.0 / T);
      n = k > 1 ? (size_t)k : 1;
    } else {
      D = hypot(px, py) / step->velocity * 1e6;
      long long k = llround(D / T);
      n = k > 2 ? (size_t)k : 2;
    }
  }
  plan->events = malloc((n + 2) * sizeof *plan->events);
  if (!plan->events) {
    *error = "out of memory";
    return -1;
  }
  event_add(plan, 0, DP_DOWN, x0, y0);
  /* A scroll's i-th move is at round(i·T), a fling's at round(i·D/n):
   * spelled as the contract does, since i·(n·T)/n may round apart. */
  for (size_t i = 1; i <= n; i++) {
    double t = step->kind == DP_SCROLL ? (double)i * T : (double)i * D / (double)n;
    event_add(plan, llround(t), DP_MOVE, x0 + px * (double)i / (double)n,
              y0 + py * (double)i / (double)n);
  }
  dp_event_t last = plan->events[plan->n - 1];
  event_add(plan, last.t_us, DP_UP, last.x, last.y);
  plan->duration_us = last.t_us;
  if (step->kind == DP_FLING) {
    plan->has_velocity = 1;
    plan->vx = px / (D / 1e6);
    plan->vy = py / (D / 1e6);
  }
  return 0;
}

void dp_plan_free(dp_plan_t *plan) {
  free(plan->events);
  memset(plan, 0, sizeof *plan);
}
