#include "budgets.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef enum { K_RATIO, K_MS, K_COUNT } kind_t;

/* Each budget: its name, where its value sits in the summary, and how the
 * summary's number becomes the budget's unit (µs → ms for the times). */
static const struct {
  const char *name, *group, *field;
  kind_t kind;
} budgets[] = {
    {"jankRatioMax", "jank", "ratio", K_RATIO},
    {"buildP90MsMax", "buildUs", "p90", K_MS},
    {"rasterP90MsMax", "rasterUs", "p90", K_MS},
    {"frozenMax", "jank", "frozen", K_COUNT},
};
#define NBUDGETS (sizeof budgets / sizeof budgets[0])

int budgets_validate(const json_t *b, char *err, size_t errlen) {
  if (!json_is_object(b)) return snprintf(err, errlen, "budgets: must be an object"), -1;
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)b, key, v) {
    size_t i = 0;
    while (i < NBUDGETS && strcmp(key, budgets[i].name)) i++;
    if (i == NBUDGETS)
      return snprintf(err, errlen,
                      "budgets.%s: unknown (jankRatioMax, buildP90MsMax, rasterP90MsMax, "
                      "frozenMax)",
                      key),
             -1;
    double x = json_number_value(v);
    switch (budgets[i].kind) {
      case K_RATIO:
        if (!json_is_number(v) || x < 0 || x > 1)
          return snprintf(err, errlen, "budgets.%s: must be a number from 0 to 1", key), -1;
        break;
      case K_MS:
        if (!json_is_number(v) || !(x > 0) || !isfinite(x))
          return snprintf(err, errlen, "budgets.%s: must be a number of ms above 0", key), -1;
        break;
      case K_COUNT:
        if (!json_is_integer(v) || json_integer_value(v) < 0)
          return snprintf(err, errlen, "budgets.%s: must be an integer >= 0", key), -1;
        break;
    }
  }
  if (json_object_size(b) == 0)
    return snprintf(err, errlen,
                    "budgets: give at least one of jankRatioMax, buildP90MsMax, "
                    "rasterP90MsMax, frozenMax"),
           -1;
  return 0;
}

json_t *budgets_eval(const json_t *b, const json_t *summary) {
  json_t *failed = json_array(), *checked = json_array(), *unmeasured = json_array();
  if (!failed || !checked || !unmeasured) goto fail;
  json_int_t frames = json_integer_value(json_object_get(summary, "frames"));
  for (size_t i = 0; i < NBUDGETS; i++) {
    json_t *limit = json_object_get(b, budgets[i].name);
    if (!limit) continue;
    json_t *v = json_object_get(json_object_get(summary, budgets[i].group), budgets[i].field);
    if (frames <= 0 || !json_is_number(v)) {
      if (json_array_append_new(unmeasured, json_string(budgets[i].name))) goto fail;
      continue;
    }
    /* µs / 1000 is correctly rounded, so 5200 µs compares equal to a limit
     * written 5.2: the boundary holds in the unit the caller wrote. */
    double actual = budgets[i].kind == K_MS ? json_number_value(v) / 1000.0 : json_number_value(v);
    if (json_array_append_new(checked, json_string(budgets[i].name))) goto fail;
    if (actual > json_number_value(limit)) {
      json_t *f = budgets[i].kind == K_COUNT
                      ? json_pack("{s:s,s:O,s:I}", "name", budgets[i].name, "limit", limit,
                                  "actual", (json_int_t)json_integer_value(v))
                      : json_pack("{s:s,s:O,s:f}", "name", budgets[i].name, "limit", limit,
                                  "actual", actual);
      if (json_array_append_new(failed, f)) goto fail;
    }
  }
  const char *verdict = json_array_size(failed) ? "fail" : "pass";
  /* "o" steals, also when json_pack fails: from here nothing is ours to free. */
  json_t *out =
      json_pack("{s:s,s:o,s:o}", "verdict", verdict, "failed", failed, "checked", checked);
  failed = checked = NULL;
  if (!out) goto fail;
  if (json_array_size(unmeasured) && json_object_set(out, "unmeasured", unmeasured)) goto fail_out;
  if (frames <= 0 &&
      json_object_set_new(out, "note",
                          json_string("no frames were measured, so no budget could fail")))
    goto fail_out;
  json_decref(unmeasured);
  return out;

fail_out:
  json_decref(out);
fail:
  json_decref(failed);
  json_decref(checked);
  json_decref(unmeasured);
  return NULL;
}

/* Appends to buf at *n without ever passing len; *n counts what would have
 * been written, as snprintf does. */
static void put(char *buf, size_t len, size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t len, size_t *n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(*n < len ? buf + *n : NULL, *n < len ? len - *n : 0, fmt, ap);
  va_end(ap);
  if (k > 0) *n += (size_t)k;
}

int budgets_format(const json_t *v, char *buf, size_t len) {
  const json_t *failed = json_object_get(v, "failed"),
               *unmeasured = json_object_get(v, "unmeasured");
  size_t checked = json_array_size(json_object_get(v, "checked")), n = 0, i;
  const json_t *f;
  if (len) buf[0] = 0;
  if (!json_array_size(failed)) {
    put(buf, len, &n, "budgets: PASS (%zu checked", checked);
  } else {
    put(buf, len, &n, "budgets: FAIL");
    json_array_foreach(failed, i, f) put(buf, len, &n, "%s %s %g > %g", i ? ";" : "",
                                         json_string_value(json_object_get(f, "name")),
                                         json_number_value(json_object_get(f, "actual")),
                                         json_number_value(json_object_get(f, "limit")));
    put(buf, len, &n, " (%zu of %zu passed", checked - json_array_size(failed), checked);
  }
  if (json_array_size(unmeasured)) {
    put(buf, len, &n, "; not measured:");
    json_array_foreach(unmeasured, i, f)
        put(buf, len, &n, "%s %s", i ? "," : "", json_string_value(f));
  }
  const char *note = json_string_value(json_object_get(v, "note"));
  if (note) put(buf, len, &n, "; %s", note);
  put(buf, len, &n, ")");
  return (int)n;
}
