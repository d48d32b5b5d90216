/* metric: one frame metric (µs) accumulated for a summary: exact values up to
 * a window, then a log histogram whose percentiles are within 0.8 %. Pure.
 *
 * Ownership: the caller embeds the metric_t (metric_init / metric_close);
 * the metric owns its arrays. */
#ifndef TELESCOPE_METRIC_H
#define TELESCOPE_METRIC_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Histogram buckets: values below 128 µs exactly, above that 64 buckets per
 * power of two (the top 7 significant bits), so a bucket is at most 1/64 of
 * its lower bound wide and its midpoint is within 1/128 (< 0.8 %) of any
 * value in it. Values are clamped at 2^40 µs (12 days). */
#define HIST_LINEAR 128
#define HIST_SUB 64
#define HIST_MAX_VALUE ((INT64_C(1) << 40) - 1)
#define HIST_N (HIST_LINEAR + 34 * HIST_SUB)

typedef struct {
  uint64_t n;
  double sum; /* exact for sums below 2^53 µs (285 years of frames) */
  int64_t min, max;
  int64_t *vals; /* exact window; NULL once hist took over */
  size_t len, cap, window;
  uint64_t *hist; /* HIST_N counts, NULL while exact */
} metric_t;

void metric_init(metric_t *m, size_t window);
void metric_close(metric_t *m);
/* Adds v (clamped to [0, HIST_MAX_VALUE]); -1 when out of memory. */
int metric_add(metric_t *m, int64_t v);
/* {count, mean, p50, p90, p99, max} (new reference; NULL when empty or out of memory). */
json_t *metric_to_json(const metric_t *m);
/* qsort's comparison of int64_t values, ascending. */
int metric_cmp_i64(const void *a, const void *b);
/* The nearest rank of percentile p (0..1) among n sorted values. */
size_t metric_rank(uint64_t n, double p);

#endif
