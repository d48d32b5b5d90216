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
  json_t *o =
      json_pack("{s:I,s:I}", "frame_count", (json_int_t)n, "frame_rasterizer_count", (json_int_t)n);
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

/* When the capture listed fewer frames than it summarised (its answer is
 * capped at 64 KB), the averages, percentiles, worst and count come from the
 * summary, which covers every frame with the same definitions (avg to the
 * µs), and the two missed counts are the listed frames' share scaled to the
 * whole, flagged by "missedCountsEstimated". */
static int from_summary(json_t *o, const json_t *sum, size_t listed) {
  static const struct {
    const char *group, *what, *missed;
  } m[] = {{"buildUs", "frame_build", "missed_frame_build_budget_count"},
           {"rasterUs", "frame_rasterizer", "missed_frame_rasterizer_budget_count"}};
  json_int_t total = json_integer_value(json_object_get(sum, "frames"));
  int err = json_object_set_new(o, "frame_count", json_integer(total)) |
            json_object_set_new(o, "frame_rasterizer_count", json_integer(total));
  for (int i = 0; i < 2 && total > 0; i++) {
    const json_t *g = json_object_get(sum, m[i].group);
    static const char *const stat[][2] = {{"avg", "average_%s_time_millis"},
                                          {"p90", "90th_percentile_%s_time_millis"},
                                          {"p99", "99th_percentile_%s_time_millis"},
                                          {"max", "worst_%s_time_millis"}};
    char key[80];
    for (int k = 0; k < 4; k++) {
      snprintf(key, sizeof key, stat[k][1], m[i].what);
      err |= json_object_set_new(
          o, key, json_real((double)json_integer_value(json_object_get(g, stat[k][0])) / 1000.0));
    }
    json_int_t seen = json_integer_value(json_object_get(o, m[i].missed));
    double est = listed ? (double)seen * (double)total / (double)listed : 0;
    err |= json_object_set_new(o, m[i].missed, json_integer((json_int_t)llround(est)));
  }
  return err | json_object_set_new(o, "missedCountsEstimated", json_true());
}

json_t *report_new(const report_input_t *in) {
  json_t *o = report_timeline_summary(in->frames, in->nframes);
  if (!o) return NULL;
  int err = 0;
  if (!in->complete && in->summary) err |= from_summary(o, in->summary, in->nframes);
  err |= json_object_set_new(o, "generator", json_string("telescope-mcp check"));
  err |= json_object_set_new(o, "version", json_string(in->version ? in->version : ""));
  err |= json_object_set_new(o, "exitCode", json_integer(in->exit_code));
  err |= json_object_set_new(o, "durationMs", json_integer((json_int_t)in->duration_ms));
  if (in->interaction_id)
    err |= json_object_set_new(o, "interactionId", json_string(in->interaction_id));
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
