#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

/* Flutter sums each duration as ms (µs / 1000) and divides by the count;
 * summing µs first differs only in the last bits of a double. */
static int put_times(json_t *o, const char *what, int64_t *us, size_t n) {
  char key[80];
  stats_sort(us, n);
  double total = 0;
  size_t missed = 0;
  for (size_t i = 0; i < n; i++) {
    total += (double)us[i] / 1000.0;
    missed += us[i] > REPORT_FLUTTER_BUDGET_US;
  }
  int err = 0;
  snprintf(key, sizeof key, "average_%s_time_millis", what);
  err |= json_object_set_new(o, key, json_real(total / (double)n));
  snprintf(key, sizeof key, "90th_percentile_%s_time_millis", what);
  err |= json_object_set_new(o, key, json_real((double)stats_percentile(us, n, 0.9) / 1000.0));
  snprintf(key, sizeof key, "99th_percentile_%s_time_millis", what);
  err |= json_object_set_new(o, key, json_real((double)stats_percentile(us, n, 0.99) / 1000.0));
  snprintf(key, sizeof key, "worst_%s_time_millis", what);
  err |= json_object_set_new(o, key, json_real((double)us[n - 1] / 1000.0));
  snprintf(key, sizeof key, "missed_%s_budget_count", what);
  err |= json_object_set_new(o, key, json_integer((json_int_t)missed));
  return err;
}

json_t *report_timeline_summary(const frame_t *frames, size_t n) {
  json_t *o = json_pack("{s:I,s:I}", "frame_count", (json_int_t)n, "frame_rasterizer_count",
                        (json_int_t)n);
  if (!o || n == 0) return o;
  int64_t *v = malloc(n * sizeof *v);
  if (!v) goto fail;
  for (size_t i = 0; i < n; i++) v[i] = frames[i].build_us;
  if (put_times(o, "frame_build", v, n)) goto fail;
  for (size_t i = 0; i < n; i++) v[i] = frames[i].raster_us;
  if (put_times(o, "frame_rasterizer", v, n)) goto fail;
  free(v);
  return o;
fail:
  free(v);
  json_decref(o);
  return NULL;
}

static int set_copy(json_t *o, const char *key, const json_t *v) {
  return v ? json_object_set_new(o, key, json_deep_copy(v)) : 0;
}

json_t *report_new(const report_input_t *in) {
  json_t *o = report_timeline_summary(in->frames, in->nframes);
  if (!o) return NULL;
  int err = 0;
  err |= json_object_set_new(o, "generator", json_string("telescope-mcp check"));
  err |= json_object_set_new(o, "version", json_string(in->version ? in->version : ""));
  err |= json_object_set_new(o, "exitCode", json_integer(in->exit_code));
  err |= json_object_set_new(o, "durationMs", json_integer((json_int_t)in->duration_ms));
  if (in->interaction_id) err |= json_object_set_new(o, "interactionId", json_string(in->interaction_id));
  err |= json_object_set_new(o, "framesComplete", json_boolean(in->complete));
  err |= set_copy(o, "session", in->session);
  err |= set_copy(o, "summary", in->summary);
  err |= set_copy(o, "budgetLimits", in->budgets);
  err |= set_copy(o, "budgets", in->budgets_result);
  err |= set_copy(o, "diagnosis", in->diagnosis);
  if (err) {
    json_decref(o);
    return NULL;
  }
  return o;
}
