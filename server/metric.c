#include "metric.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static size_t hist_index(int64_t v) {
  if (v > HIST_MAX_VALUE) v = HIST_MAX_VALUE;
  if (v < HIST_LINEAR) return (size_t)v;
  int e = 63 - __builtin_clzll((unsigned long long)v); /* >= 7 */
  int shift = e - 6;
  return HIST_LINEAR + (size_t)(shift - 1) * HIST_SUB + (size_t)((v >> shift) - HIST_SUB);
}

static int64_t hist_midpoint(size_t idx) {
  if (idx < HIST_LINEAR) return (int64_t)idx;
  int shift = (int)((idx - HIST_LINEAR) / HIST_SUB) + 1;
  int64_t m = (int64_t)((idx - HIST_LINEAR) % HIST_SUB) + HIST_SUB;
  return (m << shift) + ((INT64_C(1) << shift) - 1) / 2;
}

void metric_init(metric_t *m, size_t window) {
  memset(m, 0, sizeof *m);
  m->window = window;
}

void metric_close(metric_t *m) {
  free(m->vals);
  free(m->hist);
}

int metric_add(metric_t *m, int64_t v) {
  if (!m->hist && m->len == m->window) { /* window full: hand over to the histogram */
    if (!(m->hist = calloc(HIST_N, sizeof *m->hist))) return -1;
    for (size_t i = 0; i < m->len; i++) m->hist[hist_index(m->vals[i])]++;
    free(m->vals);
    m->vals = NULL;
    m->len = m->cap = 0;
  }
  if (m->hist) {
    m->hist[hist_index(v)]++;
  } else {
    if (m->len == m->cap) {
      size_t cap = m->cap ? m->cap * 2 : 64;
      if (cap > m->window) cap = m->window;
      int64_t *nv = realloc(m->vals, cap * sizeof *nv);
      if (!nv) return -1;
      m->vals = nv;
      m->cap = cap;
    }
    m->vals[m->len++] = v;
  }
  if (m->n == 0 || v < m->min) m->min = v;
  if (m->n == 0 || v > m->max) m->max = v;
  m->n++;
  m->sum += (double)v;
  return 0;
}

int metric_cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Nearest rank as Flutter's FrameTimingSummarizer: sorted[round((n-1)·p)],
 * rounding half away from zero like Dart's num.round(). */
size_t metric_rank(uint64_t n, double p) {
  return (size_t)llround((double)(n - 1) * p);
}

json_t *metric_to_json(const metric_t *m) {
  static const double ps[3] = {0.5, 0.9, 0.99};
  int64_t pv[3] = {0, 0, 0};
  if (m->n == 0) return NULL;
  if (!m->hist) {
    int64_t *sorted = malloc(m->len * sizeof *sorted);
    if (!sorted) return NULL;
    memcpy(sorted, m->vals, m->len * sizeof *sorted);
    qsort(sorted, m->len, sizeof *sorted, metric_cmp_i64);
    for (int i = 0; i < 3; i++) pv[i] = sorted[metric_rank(m->n, ps[i])];
    free(sorted);
  } else {
    for (int i = 0; i < 3; i++) {
      uint64_t r = metric_rank(m->n, ps[i]), cum = 0;
      for (size_t b = 0; b < HIST_N; b++) {
        cum += m->hist[b];
        if (cum > r) {
          int64_t est = hist_midpoint(b);
          pv[i] = est < m->min ? m->min : est > m->max ? m->max : est;
          break;
        }
      }
    }
  }
  return json_pack("{s:I,s:I,s:I,s:I,s:I}", "avg", (json_int_t)llround(m->sum / (double)m->n),
                   "p50", (json_int_t)pv[0], "p90", (json_int_t)pv[1], "p99", (json_int_t)pv[2],
                   "max", (json_int_t)m->max);
}
