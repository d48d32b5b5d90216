/* vmtl_join: the VM-timeline events a parser kept (vmtl.c), joined to frames' windows. */
#include "vmtl_join.h"

#include <stdlib.h>
#include <string.h>

#include "vmtl_names.h"

/* ---- the join ------------------------------------------------------------------ */

#define NONE SIZE_MAX
#define OFFSET_MAX (INT64_C(1) << 61) /* keeps ts + offset + dur far from overflow */

typedef struct {
  int64_t a, b;
  const char *name;
} span_t;

static int span_cmp(const void *x, const void *y) {
  const span_t *s = x, *t = y;
  if (s->a != t->a) return s->a < t->a ? -1 : 1;
  if (s->b != t->b) return s->b < t->b ? -1 : 1;
  return strncmp(s->name, t->name, VMTL_NAME_MAX);
}

/* Merged, sorted, disjoint intervals with prefix sums of their lengths. */
typedef struct {
  size_t n;
  int64_t *start, *end, *pre; /* pre[i]: total length of intervals 0..i-1 */
} uni_t;

static int uni_build(uni_t *u, span_t *s, size_t n) {
  memset(u, 0, sizeof *u);
  if (n == 0) return 0;
  qsort(s, n, sizeof *s, span_cmp);
  u->start = malloc(n * sizeof *u->start);
  u->end = malloc(n * sizeof *u->end);
  u->pre = malloc((n + 1) * sizeof *u->pre);
  if (!u->start || !u->end || !u->pre) return -1;
  u->pre[0] = 0;
  for (size_t i = 0; i < n; i++) {
    if (u->n > 0 && s[i].a <= u->end[u->n - 1]) {
      if (s[i].b > u->end[u->n - 1]) u->end[u->n - 1] = s[i].b;
      continue;
    }
    u->start[u->n] = s[i].a;
    u->end[u->n] = s[i].b;
    u->n++;
  }
  for (size_t i = 0; i < u->n; i++) u->pre[i + 1] = u->pre[i] + (u->end[i] - u->start[i]);
  return 0;
}

static void uni_free(uni_t *u) {
  free(u->start);
  free(u->end);
  free(u->pre);
}

/* First index in v[0..n) whose value is > x (v sorted ascending). */
static size_t first_above(const int64_t *v, size_t n, int64_t x) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (v[mid] > x)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/* Length of the union inside [s, e), and how many of its pieces touch it. */
static int64_t uni_within(const uni_t *u, int64_t s, int64_t e, uint32_t *count) {
  *count = 0;
  if (u->n == 0 || s >= e) return 0;
  size_t lo = first_above(u->end, u->n, s);       /* first piece ending after s */
  size_t hi = first_above(u->start, u->n, e - 1); /* first piece starting at or after e */
  if (lo >= hi) return 0;
  int64_t sum = u->pre[hi] - u->pre[lo];
  if (u->start[lo] < s) sum -= s - u->start[lo];
  if (u->end[hi - 1] > e) sum -= u->end[hi - 1] - e;
  *count = hi - lo > UINT32_MAX ? UINT32_MAX : (uint32_t)(hi - lo);
  return sum;
}

/* The raster events sorted by start, for "which single event overlaps [s, e) most": the ones
 * starting before s overlap by min(b, e) - s (a prefix maximum of b answers); of those starting
 * inside, the first that runs past e overlaps by e - a, and every one before it ends inside,
 * so a range maximum of lengths answers the rest. */
typedef struct {
  size_t n, size; /* size: leaves of the trees, a power of two */
  span_t *s;
  int64_t *premax_b; /* max b over s[0..i] */
  int64_t *tb;       /* segment tree: max b */
  size_t *tl;        /* segment tree: index of the longest (earliest on ties) */
} top_t;

static size_t longer(const span_t *s, size_t i, size_t j) {
  if (i == NONE) return j;
  if (j == NONE) return i;
  int64_t li = s[i].b - s[i].a, lj = s[j].b - s[j].a;
  return (lj > li || (lj == li && j < i)) ? j : i;
}

static int top_build(top_t *t, span_t *s, size_t n) {
  memset(t, 0, sizeof *t);
  t->s = s;
  t->n = n;
  if (n == 0) return 0;
  qsort(s, n, sizeof *s, span_cmp);
  t->size = 1;
  while (t->size < n) t->size *= 2;
  t->premax_b = malloc(n * sizeof *t->premax_b);
  t->tb = malloc(2 * t->size * sizeof *t->tb);
  t->tl = malloc(2 * t->size * sizeof *t->tl);
  if (!t->premax_b || !t->tb || !t->tl) return -1;
  for (size_t i = 0; i < n; i++)
    t->premax_b[i] = (i == 0 || s[i].b > t->premax_b[i - 1]) ? s[i].b : t->premax_b[i - 1];
  for (size_t i = 0; i < t->size; i++) {
    t->tb[t->size + i] = i < n ? s[i].b : INT64_MIN;
    t->tl[t->size + i] = i < n ? i : NONE;
  }
  for (size_t i = t->size - 1; i > 0; i--) {
    t->tb[i] = t->tb[2 * i] > t->tb[2 * i + 1] ? t->tb[2 * i] : t->tb[2 * i + 1];
    t->tl[i] = longer(s, t->tl[2 * i], t->tl[2 * i + 1]);
  }
  return 0;
}

static void top_free(top_t *t) {
  free(t->premax_b);
  free(t->tb);
  free(t->tl);
}

/* First index in [lo, hi) with b > x, or NONE. */
static size_t first_b_above(const top_t *t, size_t node, size_t nl, size_t nr, size_t lo, size_t hi,
                            int64_t x) {
  if (nr <= lo || hi <= nl || t->tb[node] <= x) return NONE;
  if (nr - nl == 1) return nl;
  size_t mid = nl + (nr - nl) / 2;
  size_t i = first_b_above(t, 2 * node, nl, mid, lo, hi, x);
  return i != NONE ? i : first_b_above(t, 2 * node + 1, mid, nr, lo, hi, x);
}

/* Index of the longest event in [lo, hi) (earliest on ties), or NONE. */
static size_t longest_in(const top_t *t, size_t lo, size_t hi) {
  size_t best_l = NONE, best_r = NONE;
  for (size_t l = lo + t->size, r = hi + t->size; l < r; l /= 2, r /= 2) {
    if (l & 1) best_l = longer(t->s, best_l, t->tl[l++]);
    if (r & 1) best_r = longer(t->s, t->tl[--r], best_r);
  }
  return longer(t->s, best_l, best_r);
}

/* First index in s[0..n) starting at or after x. */
static size_t first_start(const span_t *s, size_t n, int64_t x) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s[mid].a >= x)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

static void top_within(const top_t *t, int64_t s, int64_t e, vmtl_causes_t *out) {
  if (t->n == 0 || s >= e) return;
  size_t lo = first_start(t->s, t->n, s), hi = first_start(t->s, t->n, e);
  int64_t best = 0;
  size_t bi = NONE;
  if (lo > 0) { /* started before the window */
    int64_t reach = t->premax_b[lo - 1] < e ? t->premax_b[lo - 1] : e;
    if (reach - s > 0) {
      best = reach - s;
      bi = first_b_above(t, 1, 0, t->size, 0, lo, reach - 1);
    }
  }
  size_t past = first_b_above(t, 1, 0, t->size, lo, hi, e); /* starts inside, ends after e */
  size_t inside = longest_in(t, lo, past != NONE ? past : hi);
  if (inside != NONE) {
    int64_t ov = t->s[inside].b - t->s[inside].a;
    if (ov > best) {
      best = ov;
      bi = inside;
    }
  }
  if (past != NONE && e - t->s[past].a > best) {
    best = e - t->s[past].a;
    bi = past;
  }
  if (bi == NONE || best <= 0) return;
  out->raster_top_us = best;
  /* The caller's names need not end inside their arrays: read at most one array. */
  const char *name = t->s[bi].name;
  const char *nul = memchr(name, '\0', VMTL_NAME_MAX);
  vmtl_copy_name(out->raster_top, name, nul ? (size_t)(nul - name) : VMTL_NAME_MAX);
}

int vmtl_join(const vmtl_event_t *ev, size_t nev, const vmtl_window_t *fr, size_t nfr,
              int64_t offset_us, vmtl_causes_t *out) {
  if (nfr) memset(out, 0, nfr * sizeof *out);
  if (nev > SIZE_MAX / (8 * sizeof(span_t))) return -1;
  if (offset_us > OFFSET_MAX) offset_us = OFFSET_MAX;
  if (offset_us < -OFFSET_MAX) offset_us = -OFFSET_MAX;
  span_t *gc = malloc((nev ? nev : 1) * sizeof *gc);
  span_t *sh = malloc((nev ? nev : 1) * sizeof *sh);
  span_t *ra = malloc((nev ? nev : 1) * sizeof *ra);
  uni_t ug = {0}, us = {0};
  top_t tr = {0};
  size_t ngc = 0, nsh = 0, nra = 0;
  int rc = -1;
  if (!gc || !sh || !ra) goto out;
  for (size_t i = 0; i < nev; i++) {
    const vmtl_event_t *v = &ev[i];
    if (v->dur_us <= 0 || v->dur_us > VMTL_TIME_MAX || v->ts_us < -VMTL_TIME_MAX ||
        v->ts_us > VMTL_TIME_MAX)
      continue; /* a point in time covers nothing */
    span_t s = {v->ts_us + offset_us, v->ts_us + offset_us + v->dur_us, v->name};
    if (v->kind == VMTL_GC && (v->thread == VMTL_THREAD_UI || v->thread == VMTL_THREAD_UNKNOWN))
      gc[ngc++] = s;
    else if (v->kind == VMTL_SHADER)
      sh[nsh++] = s;
    else if (v->kind == VMTL_RASTER)
      ra[nra++] = s;
  }
  if (uni_build(&ug, gc, ngc) || uni_build(&us, sh, nsh) || top_build(&tr, ra, nra)) goto out;
  for (size_t f = 0; f < nfr; f++) {
    out[f].gc_us = uni_within(&ug, fr[f].build_start_us, fr[f].build_end_us, &out[f].gc_n);
    out[f].shader_us =
        uni_within(&us, fr[f].raster_start_us, fr[f].raster_end_us, &out[f].shader_n);
    top_within(&tr, fr[f].raster_start_us, fr[f].raster_end_us, &out[f]);
  }
  rc = 0;
out:
  if (rc != 0 && nfr) memset(out, 0, nfr * sizeof *out);
  uni_free(&ug);
  uni_free(&us);
  top_free(&tr);
  free(gc);
  free(sh);
  free(ra);
  return rc;
}
