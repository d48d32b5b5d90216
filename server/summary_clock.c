/* summary_clock: clock parity, the offset between the app's frame clock and
 * the loop's (summary.h summary_clock_t). */
#include "summary.h"

#include <stdlib.h>
#include <string.h>

#include "metric.h"

/* ---- clock parity --------------------------------------------------------- */

void summary_clock_init(summary_clock_t *c) {
  memset(c, 0, sizeof *c);
}

void summary_clock_add_frame(summary_clock_t *c, int64_t at_us, int64_t vsync_start_us,
                             int64_t work_us) {
  size_t i = (size_t)(c->seen % SUMMARY_CLOCK_SAMPLES);
  /* Both come from the app: saturate rather than overflow. */
  int64_t d;
  if (__builtin_sub_overflow(at_us, vsync_start_us, &d)) d = at_us > 0 ? INT64_MAX : INT64_MIN;
  c->ring[i] = d;
  c->work[i] = work_us > 0 ? work_us : 0;
  c->seen++;
}

void summary_clock_add(summary_clock_t *c, int64_t at_us, int64_t vsync_start_us) {
  summary_clock_add_frame(c, at_us, vsync_start_us, 0);
}

json_t *summary_clock_to_json(const summary_clock_t *c) {
  size_t n = c->seen < SUMMARY_CLOCK_SAMPLES ? (size_t)c->seen : SUMMARY_CLOCK_SAMPLES;
  if (n == 0) return json_pack("{s:s,s:i}", "parity", "unknown", "samples", 0);
  int64_t v[SUMMARY_CLOCK_SAMPLES];
  size_t below = 0, long_known = 0, long_unknown = 0;
  for (size_t i = 0; i < n; i++) {
    int64_t d = c->ring[i];
    if (d < -SUMMARY_CLOCK_SLACK_US)
      below++;
    else if (d > SUMMARY_CLOCK_MAX_US && c->work[i] > 0 && d - c->work[i] <= SUMMARY_CLOCK_MAX_US)
      long_known++; /* explained by the frame's own work */
    else if (d > SUMMARY_CLOCK_MAX_US)
      long_unknown++;
  }
  memcpy(v, c->ring, n * sizeof v[0]);
  qsort(v, n, sizeof v[0], metric_cmp_i64);
  /* Unexplained long samples are long frames while they are the minority;
   * as the majority they are an offset between two clocks. */
  size_t counted = n - long_known - (2 * long_unknown < n ? long_unknown : 0);
  const char *parity = "unknown";
  if (below || 2 * long_unknown >= n)
    parity = n >= SUMMARY_CLOCK_MIN_SAMPLES ? "inconsistent" : "unknown";
  else if (counted >= SUMMARY_CLOCK_MIN_SAMPLES)
    parity = "consistent";
  return json_pack("{s:s,s:I,s:I,s:I,s:I}", "parity", parity, "samples", (json_int_t)n, "minUs",
                   (json_int_t)v[0], "medianUs", (json_int_t)v[metric_rank(n, 0.5)], "maxUs",
                   (json_int_t)v[n - 1]);
}
