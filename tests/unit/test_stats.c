/* stats: Mann–Whitney U, Hodges–Lehmann and nearest-rank percentiles against
 * hand-computed samples (the computation is in each test's comment), and
 * against brute force where hand computation runs out. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "stats.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

START_TEST(identical_samples) {
  /* a = b = {1..5}. Each value twice: midranks 1.5, 3.5, 5.5, 7.5, 9.5;
   * R1 = 27.5, U1 = 27.5 − 5·6/2 = 12.5 = na·nb/2. Every arrangement is at
   * least that far from the mean, so the exact p is 1. */
  int64_t a[] = {1, 2, 3, 4, 5}, b[] = {5, 4, 3, 2, 1};
  stats_mw_t r;
  ck_assert_int_eq(stats_mann_whitney(a, N(a), b, N(b), &r), 0);
  ck_assert(r.exact);
  ck_assert_double_eq_tol(r.u, 12.5, 1e-12);
  ck_assert_double_eq_tol(r.p, 1.0, 1e-12);
  ck_assert_double_eq_tol(r.cles, 0.5, 1e-12);
  ck_assert_double_eq_tol(r.shift, 0.0, 1e-12);
}
END_TEST

START_TEST(identical_large_samples) {
  /* 0..49 twice (N = 100, normal approximation): U1 = 1250 = the mean, so
   * |U − μ| − ½ < 0 clamps to 0: z = 0, p = 1. */
  int64_t a[50], b[50];
  for (int i = 0; i < 50; i++) a[i] = b[49 - i] = i * 1000;
  stats_mw_t r;
  ck_assert_int_eq(stats_mann_whitney(a, 50, b, 50, &r), 0);
  ck_assert(!r.exact);
  ck_assert_double_eq_tol(r.u, 1250, 1e-9);
  ck_assert_double_eq_tol(r.z, 0, 1e-12);
  ck_assert_double_eq_tol(r.p, 1, 1e-12);
  ck_assert_double_eq_tol(r.shift, 0, 1e-12);
}
END_TEST

START_TEST(tiny_shifted) {
  /* a = {1,2,3}, b = {4,5,6}: no a beats any b, U1 = 0. Exact: of the
   * C(6,3) = 20 equally likely rank sets for a, only {1,2,3} (R = 6) and
   * {4,5,6} (R = 15) are as far from the mean 10.5: p = 2/20 = 0.1.
   * All nine b − a are positive: cles = 1. Differences sorted
   * 1,2,2,3,3,3,4,4,5: Hodges–Lehmann shift 3. */
  int64_t a[] = {3, 1, 2}, b[] = {6, 4, 5};
  stats_mw_t r;
  ck_assert_int_eq(stats_mann_whitney(a, N(a), b, N(b), &r), 0);
  ck_assert(r.exact);
  ck_assert_double_eq_tol(r.u, 0, 1e-12);
  ck_assert_double_eq_tol(r.p, 0.1, 1e-12);
  ck_assert_double_eq_tol(r.cles, 1, 1e-12);
  ck_assert_double_eq_tol(r.shift, 3, 1e-12);
  /* Reversed: U1 = 9 = na·nb − 0, the same p, the shift negated. */
  ck_assert_int_eq(stats_mann_whitney(b, N(b), a, N(a), &r), 0);
  ck_assert_double_eq_tol(r.u, 9, 1e-12);
  ck_assert_double_eq_tol(r.p, 0.1, 1e-12);
  ck_assert_double_eq_tol(r.cles, 0, 1e-12);
  ck_assert_double_eq_tol(r.shift, -3, 1e-12);
}
END_TEST

START_TEST(tiny_ties) {
  /* a = {1,2,2}, b = {2,3,4}. Combined: 1 | 2 2 2 | 3 | 4 → ranks 1, 3, 3,
   * 3, 5, 6 (the three 2s share ranks 2–4: midrank 3). R1 = 1 + 3 + 3 = 7,
   * U1 = 7 − 3·4/2 = 1 (no a above a b; the two a=2 vs b=2 ties count ½
   * each). Exact: E[R1] = 3·7/2 = 10.5, |7 − 10.5| = 3.5. Of the 20 ways to
   * choose 3 of the ranks {1,3,3,3,5,6}, R ≤ 7 only for {1,3,3} (3 ways)
   * and R ≥ 14 only for {3,5,6} (3 ways): p = 6/20 = 0.3. */
  int64_t a[] = {1, 2, 2}, b[] = {2, 3, 4};
  stats_mw_t r;
  ck_assert_int_eq(stats_mann_whitney(a, N(a), b, N(b), &r), 0);
  ck_assert(r.exact);
  ck_assert_double_eq_tol(r.u, 1, 1e-12);
  ck_assert_double_eq_tol(r.p, 0.3, 1e-12);
  ck_assert_double_eq_tol(r.cles, 1 - 1.0 / 9, 1e-12);
}
END_TEST

START_TEST(large_ties_normal) {
  /* a: 20 × 1 ms and 10 × 2 ms; b: 10 × 1 ms and 20 × 2 ms (N = 60).
   * Two tie groups of 30: midranks 15.5 and 45.5. R1 = 20·15.5 + 10·45.5 =
   * 765, U1 = 765 − 30·31/2 = 300, μ = 450. Σ(t³ − t) = 2·(27000 − 30) =
   * 53940; var = 900/12 · (61 − 53940/3540) = 3432.2034. z = (300 − 450 +
   * ½)/√3432.2034 = −2.551847; p = erfc(2.551847/√2) = 0.0107153. Without
   * the tie correction var would be 4575 and p 0.027: a wrong variance fails. */
  int64_t a[30], b[30];
  for (int i = 0; i < 30; i++) {
    a[i] = i < 20 ? 1000 : 2000;
    b[i] = i < 10 ? 1000 : 2000;
  }
  stats_mw_t r;
  ck_assert_int_eq(stats_mann_whitney(a, 30, b, 30, &r), 0);
  ck_assert(!r.exact);
  ck_assert_double_eq_tol(r.u, 300, 1e-9);
  ck_assert_double_eq_tol(r.z, -2.551847309569682, 1e-9);
  ck_assert_double_eq_tol(r.p, 0.0107153467163799, 1e-9);
  /* Pairs: 200 of 1→2 (+1000), 200 of 2→2 and 200 of 1→1 (0), 100 of
   * 2→1 (−1000); the 450th and 451st of the sorted 900 are both 0. */
  ck_assert_double_eq_tol(r.shift, 0, 1e-12);
}
END_TEST

START_TEST(large_shifted) {
  /* a = 0..49, b = 100..149: U1 = 0, var = 50·50·101/12 = 21041.67,
   * z = (0 − 1250 + ½)/145.057 = −8.613828, p = 7.07e−18. Shift: every
   * b_j − a_i is 100 + (j − i), symmetric around 100. */
  int64_t a[50], b[50];
  for (int i = 0; i < 50; i++) a[i] = i, b[i] = 100 + i;
  stats_mw_t r;
  ck_assert_int_eq(stats_mann_whitney(a, 50, b, 50, &r), 0);
  ck_assert_double_eq_tol(r.u, 0, 1e-12);
  ck_assert_double_eq_tol(r.z, -8.613827934383663, 1e-9);
  ck_assert(r.p < 1e-16 && r.p > 1e-19);
  ck_assert_double_eq_tol(r.shift, 100, 1e-12);
  ck_assert_double_eq_tol(r.cles, 1, 1e-12);
}
END_TEST

START_TEST(empty_sample) {
  int64_t a[] = {1, 2};
  stats_mw_t r;
  ck_assert_int_eq(stats_mann_whitney(a, 2, NULL, 0, &r), 0);
  ck_assert_double_eq(r.p, 1);
  ck_assert_double_eq(r.cles, 0.5);
}
END_TEST

/* Brute force: every na-subset of the pooled values, counted when its
 * U is at least as far from na·nb/2 as the observed one. */
static double brute_p(const int64_t *pool, int n, int na, double u_obs) {
  double hit = 0, all = 0, mean = na * (n - na) / 2.0, dev = fabs(u_obs - mean);
  for (unsigned m = 0; m < (1u << n); m++) {
    if (__builtin_popcount(m) != na) continue;
    double u = 0;
    for (int i = 0; i < n; i++)
      if (m & (1u << i))
        for (int j = 0; j < n; j++)
          if (!(m & (1u << j))) u += pool[i] > pool[j] ? 1 : pool[i] == pool[j] ? 0.5 : 0;
    all++;
    if (fabs(u - mean) >= dev - 1e-9) hit++;
  }
  return hit / all;
}

START_TEST(exact_matches_brute_force) {
  /* Random tiny samples drawn from 4 values, so ties are everywhere. */
  srand(7);
  for (int round = 0; round < 40; round++) {
    int na = 1 + rand() % 7, nb = 1 + rand() % 7;
    int64_t pool[14];
    for (int i = 0; i < na + nb; i++) pool[i] = rand() % 4;
    stats_mw_t r;
    ck_assert_int_eq(stats_mann_whitney(pool, (size_t)na, pool + na, (size_t)nb, &r), 0);
    ck_assert(r.exact);
    ck_assert_double_eq_tol(r.p, brute_p(pool, na + nb, na, r.u), 1e-12);
  }
}
END_TEST

static int cmp_d(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

START_TEST(hodges_lehmann_matches_brute_force) {
  /* a = {0, 10}, b = {1, 2}: differences −9, −8, 1, 2 → (−8 + 1)/2. */
  int64_t a2[] = {0, 10}, b2[] = {1, 2};
  ck_assert_double_eq_tol(stats_hodges_lehmann(a2, 2, b2, 2), -3.5, 1e-12);
  srand(11);
  static int64_t a[300], b[201];
  static double d[300 * 201];
  for (int round = 0; round < 5; round++) {
    size_t na = 1 + (size_t)(rand() % 300), nb = 1 + (size_t)(rand() % 201), k = 0;
    for (size_t i = 0; i < na; i++) a[i] = rand() % 20000 - 5000;
    for (size_t j = 0; j < nb; j++) b[j] = rand() % 30000;
    for (size_t i = 0; i < na; i++)
      for (size_t j = 0; j < nb; j++) d[k++] = (double)(b[j] - a[i]);
    qsort(d, k, sizeof *d, cmp_d);
    double want = k % 2 ? d[k / 2] : (d[k / 2 - 1] + d[k / 2]) / 2;
    stats_sort(a, na);
    stats_sort(b, nb);
    ck_assert_double_eq_tol(stats_hodges_lehmann(a, na, b, nb), want, 1e-9);
  }
}
END_TEST

START_TEST(percentiles_nearest_rank) {
  /* n = 10: p50 → round(4.5) = 5 (half away from zero) → 60; p90 →
   * round(8.1) = 8 → 90; p99 → round(8.91) = 9 → 100; p0 → 10. */
  int64_t v[] = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100};
  ck_assert_int_eq(stats_percentile(v, 10, 0.5), 60);
  ck_assert_int_eq(stats_percentile(v, 10, 0.9), 90);
  ck_assert_int_eq(stats_percentile(v, 10, 0.99), 100);
  ck_assert_int_eq(stats_percentile(v, 10, 0), 10);
  ck_assert_int_eq(stats_percentile(v, 1, 0.99), 10);
  ck_assert_int_eq(stats_percentile(v, 0, 0.5), 0);
  /* n = 4: p50 → round(1.5) = 2 → 30. */
  ck_assert_int_eq(stats_percentile(v, 4, 0.5), 30);
}
END_TEST

int main(void) {
  Suite *s = suite_create("stats");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, identical_samples);
  tcase_add_test(tc, identical_large_samples);
  tcase_add_test(tc, tiny_shifted);
  tcase_add_test(tc, tiny_ties);
  tcase_add_test(tc, large_ties_normal);
  tcase_add_test(tc, large_shifted);
  tcase_add_test(tc, empty_sample);
  tcase_add_test(tc, exact_matches_brute_force);
  tcase_add_test(tc, hodges_lehmann_matches_brute_force);
  tcase_add_test(tc, percentiles_nearest_rank);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
