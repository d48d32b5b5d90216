/* stats: the two-sample statistics behind `compare` (docs/tool.md
 * "Comparing sessions"). Pure: arrays of per-frame µs in, numbers out.
 *
 * The rank test is Mann–Whitney U (Wilcoxon rank-sum): no assumption about
 * the shape of frame times, which are skewed and heavy-tailed, and robust to
 * a few outliers. Ties get midranks. Small samples (STATS_EXACT_MAX_N values
 * in all) get the exact permutation distribution of the rank sum, ties
 * included; larger ones the normal approximation with the tie-corrected
 * variance and a continuity correction. */
#ifndef TELESCOPE_STATS_H
#define TELESCOPE_STATS_H

#include <stddef.h>
#include <stdint.h>

#define STATS_EXACT_MAX_N 40 /* na + nb up to this: exact p (C(40,20) < 2^53 counts) */

typedef struct {
  double u;     /* U of sample a: pairs (a_i, b_j) with a_i > b_j, a tie counting ½ */
  double z;     /* normal score, continuity-corrected towards 0; 0 when exact */
  double p;     /* two-sided p value; 1 when either sample is empty */
  int exact;    /* 1: p from the exact permutation distribution */
  double cles;  /* common-language effect size: P(b > a) + ½·P(b = a) = 1 − u/(na·nb) */
  double shift; /* Hodges–Lehmann shift: the median of all b_j − a_i */
} stats_mw_t;

/* Mann–Whitney U of a against b (neither needs to be sorted; both are only
 * read). 0, or -1 when out of memory (*out then zeroed). Empty a or b gives
 * p 1, cles 0.5, shift 0. */
int stats_mann_whitney(const int64_t *a, size_t na, const int64_t *b, size_t nb, stats_mw_t *out);

/* The median of the na·nb differences b_j − a_i of two SORTED arrays, found
 * by bisection over the difference in O((na + nb)·log range) time and no
 * memory, so it works on 65 536 × 65 536 frames. An even count averages the
 * two middle differences. 0 when either is empty. */
double stats_hodges_lehmann(const int64_t *a_sorted, size_t na, const int64_t *b_sorted, size_t nb);

/* Nearest rank as docs/tool.md defines it (and Flutter's
 * FrameTimingSummarizer): sorted[round((n − 1)·p)], halves away from zero;
 * p in [0, 1]. 0 when n is 0. */
int64_t stats_percentile(const int64_t *sorted, size_t n, double p);

/* Sorts v ascending in place. */
void stats_sort(int64_t *v, size_t n);

#endif
