#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_i64(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

void stats_sort(int64_t *v, size_t n) {
  if (n > 1) qsort(v, n, sizeof *v, cmp_i64);
}

int64_t stats_percentile(const int64_t *sorted, size_t n, double p) {
  if (n == 0) return 0;
  if (p < 0) p = 0;
  if (p > 1) p = 1;
  return sorted[(size_t)llround((double)(n - 1) * p)];
}

/* Pairs with b_j − a_i ≤ d. For a fixed j that is the a_i ≥ b_j − d; the
 * threshold rises with j, so one pointer walks a once. */
static uint64_t pairs_le(const int64_t *a, size_t na, const int64_t *b, size_t nb, int64_t d) {
  uint64_t count = 0;
  size_t i = 0; /* first a_i ≥ b_j − d */
  for (size_t j = 0; j < nb; j++) {
    int64_t t = b[j] - d;
    while (i < na && a[i] < t) i++;
    count += na - i;
  }
  return count;
}

/* The k-th smallest (1-based) difference b_j − a_i: the least d with at
 * least k pairs at or below it. */
static int64_t kth_diff(const int64_t *a, size_t na, const int64_t *b, size_t nb, uint64_t k) {
  int64_t lo = b[0] - a[na - 1], hi = b[nb - 1] - a[0];
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2; /* hi − lo ≥ 0, so this floors */
    if (pairs_le(a, na, b, nb, mid) >= k)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

double stats_hodges_lehmann(const int64_t *a, size_t na, const int64_t *b, size_t nb) {
  if (na == 0 || nb == 0) return 0;
  uint64_t m = (uint64_t)na * nb;
  if (m % 2) return (double)kth_diff(a, na, b, nb, m / 2 + 1);
  return ((double)kth_diff(a, na, b, nb, m / 2) + (double)kth_diff(a, na, b, nb, m / 2 + 1)) / 2;
}

typedef struct {
  int64_t v;
  int from_a;
} tagged_t;

static int cmp_tagged(const void *x, const void *y) {
  int64_t a = ((const tagged_t *)x)->v, b = ((const tagged_t *)y)->v;
  return (a > b) - (a < b);
}

/* Exact two-sided p: the share of the C(N, na) ways to pick na of the N
 * (doubled, hence integer) midranks whose sum lies at least as far from its
 * mean na·(N+1) as the observed one. Counted by a subset-sum table; with
 * ties the distribution need not be symmetric, which is why the tail is
 * taken on |sum − mean| rather than doubling one side. */
static int exact_p(const int *rank2, size_t n, size_t na, long obs2, double *p) {
  long total = (long)n * ((long)n + 1); /* sum of all doubled ranks */
  size_t width = (size_t)total + 1;
  double *dp = calloc((na + 1) * width, sizeof *dp);
  if (!dp) return -1;
  dp[0] = 1;
  for (size_t k = 0; k < n; k++)
    for (size_t j = (k + 1 < na ? k + 1 : na); j >= 1; j--)
      for (long s = total; s >= rank2[k]; s--)
        dp[j * width + (size_t)s] += dp[(j - 1) * width + (size_t)(s - rank2[k])];
  long mean2 = (long)na * ((long)n + 1);
  long dev = labs(obs2 - mean2);
  double hit = 0, all = 0;
  for (long s = 0; s <= total; s++) {
    double c = dp[na * width + (size_t)s];
    all += c;
    if (labs(s - mean2) >= dev) hit += c;
  }
  free(dp);
  *p = all > 0 ? hit / all : 1;
  return 0;
}

int stats_mann_whitney(const int64_t *a, size_t na, const int64_t *b, size_t nb, stats_mw_t *out) {
  memset(out, 0, sizeof *out);
  out->p = 1;
  out->cles = 0.5;
  if (na == 0 || nb == 0) return 0;

  size_t n = na + nb;
  tagged_t *all = malloc(n * sizeof *all);
  int64_t *as = malloc(na * sizeof *as), *bs = malloc(nb * sizeof *bs);
  int *rank2 = malloc(n * sizeof *rank2);
  if (!all || !as || !bs || !rank2) goto fail;
  for (size_t i = 0; i < na; i++) all[i] = (tagged_t){a[i], 1};
  for (size_t j = 0; j < nb; j++) all[na + j] = (tagged_t){b[j], 0};
  qsort(all, n, sizeof *all, cmp_tagged);

  /* Midranks: a run of t equal values at ranks r+1 … r+t all get r + (t+1)/2.
   * Doubled (2r + t + 1) they stay integers for the exact table. */
  double r1 = 0, tie_term = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && all[j].v == all[i].v) j++;
    double t = (double)(j - i);
    int mid2 = (int)(2 * i + (j - i) + 1);
    for (size_t k = i; k < j; k++) {
      rank2[k] = mid2;
      if (all[k].from_a) r1 += mid2 / 2.0;
    }
    tie_term += t * t * t - t;
    i = j;
  }
  double n1 = (double)na, n2 = (double)nb, nn = (double)n;
  out->u = r1 - n1 * (n1 + 1) / 2;
  out->cles = 1 - out->u / (n1 * n2);

  if (n <= STATS_EXACT_MAX_N) {
    /* Only the ranks' values matter to the table, not which side they are on. */
    if (exact_p(rank2, n, na, lround(2 * r1), &out->p)) goto fail;
    out->exact = 1;
  } else {
    double mu = n1 * n2 / 2;
    double var = n1 * n2 / 12 * ((nn + 1) - tie_term / (nn * (nn - 1)));
    if (var <= 0) {
      out->p = 1; /* every value equal: no evidence of any difference */
    } else {
      double d = fabs(out->u - mu) - 0.5;
      if (d < 0) d = 0;
      out->z = (out->u < mu ? -d : d) / sqrt(var);
      out->p = erfc(fabs(out->z) / sqrt(2.0));
    }
  }
  if (out->p > 1) out->p = 1;

  memcpy(as, a, na * sizeof *as);
  memcpy(bs, b, nb * sizeof *bs);
  stats_sort(as, na);
  stats_sort(bs, nb);
  out->shift = stats_hodges_lehmann(as, na, bs, nb);

  free(all);
  free(as);
  free(bs);
  free(rank2);
  return 0;

fail:
  free(all);
  free(as);
  free(bs);
  free(rank2);
  memset(out, 0, sizeof *out);
  return -1;
}
