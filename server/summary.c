#include "summary.h"

#include "json_put.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"

/* ---- one metric: exact values up to a window, then a log histogram ------ */

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

static void metric_init(metric_t *m, size_t window) {
  memset(m, 0, sizeof *m);
  m->window = window;
}

static void metric_close(metric_t *m) {
  free(m->vals);
  free(m->hist);
}

static int metric_add(metric_t *m, int64_t v) {
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

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Nearest rank as Flutter's FrameTimingSummarizer: sorted[round((n-1)·p)],
 * rounding half away from zero like Dart's num.round(). */
static size_t rank_of(uint64_t n, double p) {
  return (size_t)llround((double)(n - 1) * p);
}

static json_t *metric_to_json(const metric_t *m) {
  static const double ps[3] = {0.5, 0.9, 0.99};
  int64_t pv[3] = {0, 0, 0};
  if (m->n == 0) return NULL;
  if (!m->hist) {
    int64_t *sorted = malloc(m->len * sizeof *sorted);
    if (!sorted) return NULL;
    memcpy(sorted, m->vals, m->len * sizeof *sorted);
    qsort(sorted, m->len, sizeof *sorted, cmp_i64);
    for (int i = 0; i < 3; i++) pv[i] = sorted[rank_of(m->n, ps[i])];
    free(sorted);
  } else {
    for (int i = 0; i < 3; i++) {
      uint64_t r = rank_of(m->n, ps[i]), cum = 0;
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

/* ---- the accumulator ----------------------------------------------------- */

typedef struct {
  char *name;
  int64_t self_micros, micros, count, frames;
  uint64_t last_frame; /* ordinal of the last frame counted in `frames` */
  /* For findings: self time in build-missed frames and in frames that were
   * not janky, and the build-missed frames that contained the name. */
  int64_t jank_self, other_self;
  uint64_t jank_frames;
} block_agg_t;

typedef struct {
  char *name;
  int64_t self_micros;
} worst_block_t;

typedef struct {
  int64_t key, seq, frame_number, build_us, raster_us, total_span_us;
  char *interaction_id;
  worst_block_t top[SUMMARY_WORST_BLOCKS];
  size_t ntop;
} worst_t;

typedef struct {
  char *id, *linked_by;
  summary_t *s;
} inter_t;

#define BLOCK_SLOTS 1024 /* power of two, > 2 × (SUMMARY_MAX_BLOCK_NAMES + 1) */
#define SPARK_BUCKETS (2 * SUMMARY_SPARK_MAX)

/* A janky frame as the ranking needs it (findings.h): how far each side
 * went over the budget, and its blocks' self times (entries off..off+n of
 * jank_blocks). */
typedef struct {
  int64_t build_over, raster_over;
  size_t off, n;
} jank_frame_t;
typedef struct {
  uint16_t block; /* index into blocks */
  int64_t self_us;
} jank_block_t;

struct summary {
  int64_t budget_us;
  uint64_t frames, jank, frozen;
  /* Start-up frames (frame_t.startup): counted here and in `frames` and the
   * metrics, never in jank, findings or worst frames. */
  uint64_t startup;
  int64_t startup_numbers[SUMMARY_STARTUP_NUMBERS];
  int64_t startup_build_max, startup_raster_max;
  double jank_over_us; /* sum over janky frames of max(build, raster) − budget */
  jank_frame_t *jf;    /* the first SUMMARY_JANK_KEEP janky frames */
  size_t njf, capjf;
  jank_block_t *jb;
  size_t njb, capjb;
  uint64_t build_missed_kept, raster_missed_kept;
  uint64_t build_missed, raster_missed, build_missed_named;
  double build_us_missed, build_us_other, raster_us_missed, raster_us_other;
  int track[3]; /* widgets, layouts, paints: 1 on, 0 off, -1 unknown */
  metric_t build, raster, span, vsync;
  block_agg_t blocks[SUMMARY_MAX_BLOCK_NAMES + 1]; /* the last one is "(other)" */
  size_t nblocks;
  int16_t slots[BLOCK_SLOTS];          /* open addressing into blocks, -1 empty */
  worst_t worst[SUMMARY_WORST_FRAMES]; /* sorted worst first */
  size_t nworst;
  int64_t spark[SPARK_BUCKETS]; /* max per bucket of `spark_width` frames */
  size_t nspark;
  uint64_t spark_width, spark_fill;
  int with_interactions;
  inter_t inter[SUMMARY_MAX_INTERACTIONS + 1]; /* the last one is "(other)" */
  size_t ninter;
};

int64_t summary_budget_us(double budget_ms, double refresh_rate) {
  double us = budget_ms > 0 ? budget_ms * 1000.0 : refresh_rate > 0 ? 1e6 / refresh_rate : 1e6 / 60;
  if (!(us < 1e15)) us = 1e15;
  int64_t r = llround(us);
  return r < 1 ? 1 : r;
}

static summary_t *summary_new_window(int64_t budget_us, int with_interactions, size_t window) {
  summary_t *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->budget_us = budget_us < 1 ? 1 : budget_us;
  metric_init(&s->build, window);
  metric_init(&s->raster, window);
  metric_init(&s->span, window);
  metric_init(&s->vsync, window);
  memset(s->slots, 0xff, sizeof s->slots);
  s->spark_width = 1;
  s->with_interactions = with_interactions;
  s->track[0] = s->track[1] = s->track[2] = -1;
  return s;
}

summary_t *summary_new(int64_t budget_us, int with_interactions) {
  return summary_new_window(budget_us, with_interactions, SUMMARY_WINDOW);
}

void summary_free(summary_t *s) {
  if (!s) return;
  metric_close(&s->build);
  metric_close(&s->raster);
  metric_close(&s->span);
  metric_close(&s->vsync);
  for (size_t i = 0; i < s->nblocks; i++) free(s->blocks[i].name);
  for (size_t i = 0; i < s->nworst; i++) {
    free(s->worst[i].interaction_id);
    for (size_t j = 0; j < s->worst[i].ntop; j++) free(s->worst[i].top[j].name);
  }
  for (size_t i = 0; i < s->ninter; i++) {
    free(s->inter[i].id);
    free(s->inter[i].linked_by);
    summary_free(s->inter[i].s);
  }
  free(s->jf);
  free(s->jb);
  free(s);
}

static uint32_t hash_name(const char *s) { /* FNV-1a */
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* The aggregate for `name`, created on first sight; past the cap every new
 * name lands in "(other)". NULL only on OOM. */
static block_agg_t *block_find(summary_t *s, const char *name) {
  for (;;) {
    uint32_t h = hash_name(name) & (BLOCK_SLOTS - 1);
    while (s->slots[h] >= 0) {
      if (!strcmp(s->blocks[s->slots[h]].name, name)) return &s->blocks[s->slots[h]];
      h = (h + 1) & (BLOCK_SLOTS - 1);
    }
    if (s->nblocks < SUMMARY_MAX_BLOCK_NAMES ||
        (s->nblocks == SUMMARY_MAX_BLOCK_NAMES && !strcmp(name, SUMMARY_OTHER))) {
      block_agg_t *b = &s->blocks[s->nblocks];
      if (!(b->name = dup_str(name))) return NULL;
      s->slots[h] = (int16_t)s->nblocks++;
      return b;
    }
    name = SUMMARY_OTHER;
  }
}

static int64_t frame_key(const frame_t *f) {
  return f->build_us > f->raster_us ? f->build_us : f->raster_us;
}

/* Ranks block a before b: more self time first, then name ascending. */
static int block_before(int64_t self_a, const char *name_a, int64_t self_b, const char *name_b) {
  if (self_a != self_b) return self_a > self_b;
  return strcmp(name_a, name_b) < 0;
}

static void worst_close(worst_t *w) {
  free(w->interaction_id);
  for (size_t j = 0; j < w->ntop; j++) free(w->top[j].name);
  memset(w, 0, sizeof *w);
}

/* Keeps the SUMMARY_WORST_FRAMES frames with the largest max(build, raster);
 * on equal keys the earlier frame stays ahead. */
static int worst_offer(summary_t *s, const frame_t *f) {
  int64_t key = frame_key(f);
  size_t pos = s->nworst;
  while (pos > 0 && key > s->worst[pos - 1].key) pos--;
  if (pos >= SUMMARY_WORST_FRAMES) return 0;
  worst_t w;
  memset(&w, 0, sizeof w);
  w.key = key;
  w.seq = f->seq;
  w.frame_number = f->frame_number;
  w.build_us = f->build_us;
  w.raster_us = f->raster_us;
  w.total_span_us = f->total_span_us;
  if (f->interaction_id && !(w.interaction_id = dup_str(f->interaction_id))) return -1;
  for (size_t i = 0; i < f->nblocks; i++) { /* insertion into the top 3 */
    const record_block_t *b = &f->blocks[i];
    size_t p = w.ntop;
    while (p > 0 &&
           block_before(b->self_micros, b->name, w.top[p - 1].self_micros, w.top[p - 1].name))
      p--;
    if (p >= SUMMARY_WORST_BLOCKS) continue;
    char *name = dup_str(b->name);
    if (!name) {
      worst_close(&w);
      return -1;
    }
    if (w.ntop == SUMMARY_WORST_BLOCKS) free(w.top[--w.ntop].name);
    memmove(&w.top[p + 1], &w.top[p], (w.ntop - p) * sizeof w.top[0]);
    w.top[p].name = name;
    w.top[p].self_micros = b->self_micros;
    w.ntop++;
  }
  if (s->nworst == SUMMARY_WORST_FRAMES) worst_close(&s->worst[--s->nworst]);
  memmove(&s->worst[pos + 1], &s->worst[pos], (s->nworst - pos) * sizeof s->worst[0]);
  s->worst[pos] = w;
  s->nworst++;
  return 0;
}

/* Bounded sparkline: at most SPARK_BUCKETS buckets of spark_width frames;
 * when full, neighbours merge (max) and the width doubles. */
static void spark_add(summary_t *s, int64_t v) {
  if (s->nspark > 0 && s->spark_fill < s->spark_width) {
    if (v > s->spark[s->nspark - 1]) s->spark[s->nspark - 1] = v;
    s->spark_fill++;
    return;
  }
  if (s->nspark == SPARK_BUCKETS) {
    for (size_t i = 0; i < SPARK_BUCKETS / 2; i++)
      s->spark[i] = s->spark[2 * i] > s->spark[2 * i + 1] ? s->spark[2 * i] : s->spark[2 * i + 1];
    s->nspark = SPARK_BUCKETS / 2;
    s->spark_width *= 2;
  }
  s->spark[s->nspark++] = v;
  s->spark_fill = 1;
}

static inter_t *inter_find(summary_t *s, const char *id, const char *linked_by) {
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < s->ninter; i++)
      if (!strcmp(s->inter[i].id, id)) return &s->inter[i];
    if (s->ninter < SUMMARY_MAX_INTERACTIONS ||
        (s->ninter == SUMMARY_MAX_INTERACTIONS && !strcmp(id, SUMMARY_OTHER))) {
      inter_t *in = &s->inter[s->ninter];
      in->s = summary_new_window(s->budget_us, 0, SUMMARY_INTERACTION_WINDOW);
      if (in->s) memcpy(in->s->track, s->track, sizeof s->track);
      in->id = dup_str(id);
      in->linked_by = strcmp(id, SUMMARY_OTHER) && linked_by ? dup_str(linked_by) : NULL;
      if (!in->s || !in->id || (linked_by && strcmp(id, SUMMARY_OTHER) && !in->linked_by)) {
        summary_free(in->s);
        free(in->id);
        free(in->linked_by);
        memset(in, 0, sizeof *in);
        return NULL;
      }
      s->ninter++;
      return in;
    }
    id = SUMMARY_OTHER;
  }
  return NULL;
}

/* A start-up frame: in `frames` and the metrics (they are measured frames),
 * and in the `startup` summary; nothing else. */
static int startup_add(summary_t *s, const frame_t *f) {
  if (metric_add(&s->build, f->build_us) < 0 || metric_add(&s->raster, f->raster_us) < 0 ||
      metric_add(&s->span, f->total_span_us) < 0 || metric_add(&s->vsync, f->vsync_overhead_us) < 0)
    return -1;
  if (s->startup < SUMMARY_STARTUP_NUMBERS) s->startup_numbers[s->startup] = f->frame_number;
  if (f->build_us > s->startup_build_max) s->startup_build_max = f->build_us;
  if (f->raster_us > s->startup_raster_max) s->startup_raster_max = f->raster_us;
  s->startup++;
  s->frames++;
  return 0;
}

/* Keeps what the ranking needs of a janky frame (findings.h), for the first
 * SUMMARY_JANK_KEEP of them; the ranking scales what they explain up to all
 * janky frames. agg: the frame's blocks' aggregates, in its order. */
static int jank_keep(summary_t *s, const frame_t *f, block_agg_t *const *agg) {
  int64_t bo = f->build_us - s->budget_us, ro = f->raster_us - s->budget_us;
  if ((bo <= 0 && ro <= 0) || s->njf == SUMMARY_JANK_KEEP) return 0;
  size_t nb = f->nblocks < RECORD_MAX_BLOCKS ? f->nblocks : RECORD_MAX_BLOCKS;
  if (s->njf == s->capjf) {
    size_t cap = s->capjf ? 2 * s->capjf : 16;
    jank_frame_t *n = realloc(s->jf, cap * sizeof *n);
    if (!n) return -1;
    s->jf = n;
    s->capjf = cap;
  }
  if (bo > 0 && s->njb + nb > s->capjb) {
    size_t cap = s->capjb ? 2 * s->capjb : 64;
    while (cap < s->njb + nb) cap *= 2;
    jank_block_t *n = realloc(s->jb, cap * sizeof *n);
    if (!n) return -1;
    s->jb = n;
    s->capjb = cap;
  }
  jank_frame_t *j = &s->jf[s->njf++];
  j->build_over = bo > 0 ? bo : 0;
  j->raster_over = ro > 0 ? ro : 0;
  j->off = s->njb;
  j->n = 0;
  if (bo > 0) { /* only UI blocks of a build-missed frame can explain it */
    for (size_t i = 0; i < nb; i++) {
      s->jb[s->njb + j->n].block = (uint16_t)(agg[i] - s->blocks);
      s->jb[s->njb + j->n].self_us = f->blocks[i].self_micros;
      j->n++;
    }
    s->njb += j->n;
    s->build_missed_kept++;
  }
  if (ro > 0) s->raster_missed_kept++;
  return 0;
}

int summary_add_frame(summary_t *s, const frame_t *f) {
  /* The fallible lookups come first, so an OOM mostly leaves the counts
   * untouched; after one the summary is still valid, only that frame may be
   * counted partially (e.g. in its interaction but not overall). */
  inter_t *in = NULL;
  if (s->with_interactions && f->interaction_id) {
    if (!(in = inter_find(s, f->interaction_id, f->linked_by))) return -1;
    if (summary_add_frame(in->s, f) < 0) return -1;
  }
  if (f->startup) return startup_add(s, f);
  block_agg_t *agg[RECORD_MAX_BLOCKS];
  for (size_t i = 0; i < f->nblocks && i < RECORD_MAX_BLOCKS; i++)
    if (!(agg[i] = block_find(s, f->blocks[i].name))) return -1;
  if (worst_offer(s, f) < 0) return -1;
  if (jank_keep(s, f, agg) < 0) return -1;
  if (metric_add(&s->build, f->build_us) < 0 || metric_add(&s->raster, f->raster_us) < 0 ||
      metric_add(&s->span, f->total_span_us) < 0 || metric_add(&s->vsync, f->vsync_overhead_us) < 0)
    return -1;
  s->frames++;
  /* Findings compare the frames whose build missed the budget (only UI work
   * can explain those) with the frames that missed nothing; a frame that
   * missed only on the raster thread is in neither block sum. */
  int build_missed = f->build_us > s->budget_us, raster_missed = f->raster_us > s->budget_us;
  int other = !build_missed && !raster_missed, named = 0;
  for (size_t i = 0; i < f->nblocks && i < RECORD_MAX_BLOCKS; i++) {
    agg[i]->self_micros += f->blocks[i].self_micros;
    agg[i]->micros += f->blocks[i].micros;
    agg[i]->count += f->blocks[i].count;
    if (build_missed) agg[i]->jank_self += f->blocks[i].self_micros;
    if (other) agg[i]->other_self += f->blocks[i].self_micros;
    if (agg[i]->last_frame != s->frames) { /* "(other)" may collect several per frame */
      agg[i]->frames++;
      agg[i]->last_frame = s->frames;
      if (build_missed) agg[i]->jank_frames++;
    }
    if (build_missed && !named && findings_classify(f->blocks[i].name) != FINDING_PHASE) named = 1;
  }
  if (build_missed) {
    s->build_missed++;
    s->build_missed_named += (uint64_t)named;
    s->build_us_missed += (double)f->build_us;
  }
  if (raster_missed) {
    s->raster_missed++;
    s->raster_us_missed += (double)f->raster_us;
  }
  if (other) {
    s->build_us_other += (double)f->build_us;
    s->raster_us_other += (double)f->raster_us;
  }
  if (!other) {
    s->jank++;
    s->jank_over_us += (double)(frame_key(f) - s->budget_us);
  }
  if (f->total_span_us >= SUMMARY_FROZEN_US) s->frozen++;
  spark_add(s, frame_key(f));
  return 0;
}

void summary_set_tracking(summary_t *s, int widgets, int layouts, int paints) {
  s->track[0] = widgets;
  s->track[1] = layouts;
  s->track[2] = paints;
  for (size_t i = 0; i < s->ninter; i++)
    summary_set_tracking(s->inter[i].s, widgets, layouts, paints);
}

const char *summary_bound_by(const summary_t *s) {
  /* A side bounds the session when it missed in at least half of the janky
   * frames; when only one side does, or neither, the side that missed more. */
  uint64_t b = s->build_missed, r = s->raster_missed, j = s->jank;
  if (!j) return "none";
  if (2 * b >= j && 2 * r >= j) return "both";
  return b >= r ? "build" : "raster";
}

/* What each block name and the raster thread explain of the janky frames
 * kept (findings.h): per frame, the time beyond the name's mean in the frames
 * that missed nothing, at most that side's overrun; scaled from the kept
 * janky frames to all of them. explained has s->nblocks entries. */
static int explain(const summary_t *s, int64_t *explained, int64_t *raster_explained,
                   int64_t *build_explained) {
  uint64_t other = s->frames - s->startup - s->jank;
  double *e = calloc(s->nblocks ? s->nblocks : 1, sizeof *e), re = 0;
  if (!e) return -1;
  double raster_other = other ? s->raster_us_other / (double)other : 0, be = 0;
  double build_other = other ? s->build_us_other / (double)other : 0;
  for (size_t k = 0; k < s->njf; k++) {
    const jank_frame_t *j = &s->jf[k];
    for (size_t i = 0; i < j->n; i++) {
      const jank_block_t *b = &s->jb[j->off + i];
      double mean_other = other ? (double)s->blocks[b->block].other_self / (double)other : 0;
      double x = (double)b->self_us - mean_other;
      e[b->block] += findings_explained(x, (double)j->build_over);
    }
    if (j->raster_over > 0) {
      double x = (double)(j->raster_over + s->budget_us) - raster_other;
      re += findings_explained(x, (double)j->raster_over);
    }
    if (j->build_over > 0) {
      double x = (double)(j->build_over + s->budget_us) - build_other;
      be += findings_explained(x, (double)j->build_over);
    }
  }
  double bscale = s->build_missed_kept ? (double)s->build_missed / (double)s->build_missed_kept : 0;
  double rscale = s->raster_missed_kept ? (double)s->raster_missed / (double)s->raster_missed_kept : 0;
  for (size_t i = 0; i < s->nblocks; i++) explained[i] = llround(e[i] * bscale);
  *raster_explained = llround(re * rscale);
  *build_explained = llround(be * bscale);
  free(e);
  return 0;
}

json_t *summary_findings(const summary_t *s, size_t max) {
  findings_block_t fb[SUMMARY_MAX_BLOCK_NAMES + 1];
  int64_t explained[SUMMARY_MAX_BLOCK_NAMES + 1], raster_explained = 0, build_explained = 0;
  if (explain(s, explained, &raster_explained, &build_explained) < 0) return NULL;
  size_t n = 0;
  for (size_t i = 0; i < s->nblocks; i++) {
    const block_agg_t *b = &s->blocks[i];
    /* "(other)" mixes names past the cap: nothing an agent could change. */
    if (!strcmp(b->name, SUMMARY_OTHER)) continue;
    fb[n++] = (findings_block_t){b->name, b->jank_self, b->jank_frames, b->other_self,
                                 explained[i]};
  }
  findings_input_t in = {s->budget_us,
                         s->build_missed,
                         s->raster_missed,
                         s->frames - s->startup - s->jank,
                         s->build_missed_named,
                         s->build_us_missed,
                         s->build_us_other,
                         s->raster_us_missed,
                         s->raster_us_other,
                         s->track[0],
                         s->track[1],
                         s->track[2],
                         fb,
                         n,
                         s->jank,
                         s->jank_over_us,
                         raster_explained,
                         build_explained};
  return findings_to_json(&in, max);
}

json_t *summary_next(const summary_t *s) {
  findings_block_t fb[SUMMARY_MAX_BLOCK_NAMES + 1];
  size_t n = 0;
  for (size_t i = 0; i < s->nblocks; i++)
    if (strcmp(s->blocks[i].name, SUMMARY_OTHER))
      fb[n++] = (findings_block_t){s->blocks[i].name, s->blocks[i].jank_self,
                                   s->blocks[i].jank_frames, s->blocks[i].other_self, 0};
  findings_input_t in = {s->budget_us, s->build_missed, s->raster_missed,
                         s->frames - s->startup - s->jank, s->build_missed_named,
                         s->build_us_missed, s->build_us_other, s->raster_us_missed,
                         s->raster_us_other, s->track[0], s->track[1], s->track[2], fb, n, s->jank,
                         s->jank_over_us, 0, 0};
  return findings_next_to_json(&in);
}

uint64_t summary_frames(const summary_t *s) {
  return s->frames;
}
uint64_t summary_jank_frames(const summary_t *s) {
  return s->jank;
}
int summary_exact(const summary_t *s) {
  return !s->build.hist && !s->raster.hist && !s->span.hist && !s->vsync.hist;
}

const summary_t *summary_interaction(const summary_t *s, const char *interaction_id) {
  for (size_t i = 0; i < s->ninter; i++)
    if (!strcmp(s->inter[i].id, interaction_id)) return s->inter[i].s;
  return NULL;
}

static const char *const spark_chars[8] = {"\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83",
                                           "\xe2\x96\x84", "\xe2\x96\x85", "\xe2\x96\x86",
                                           "\xe2\x96\x87", "\xe2\x96\x88"};

static int spark_level(int64_t v, int64_t budget) {
  if (v <= 0) return 0;
  if (v > budget * 2) return 7; /* also keeps 4·v from overflowing */
  int64_t lvl = (4 * v + budget - 1) / budget - 1;
  return lvl < 0 ? 0 : lvl > 7 ? 7 : (int)lvl;
}

char *summary_sparkline(const summary_t *s) {
  int64_t vals[SPARK_BUCKETS];
  size_t n = s->nspark;
  memcpy(vals, s->spark, n * sizeof vals[0]);
  if (n > SUMMARY_SPARK_MAX) { /* pairs merge (max) so that ceil(n/2) <= 60 remain */
    size_t m = 0;
    for (size_t i = 0; i < n; i += 2)
      vals[m++] = i + 1 < n && vals[i + 1] > vals[i] ? vals[i + 1] : vals[i];
    n = m;
  }
  char *out = malloc(n * 3 + 1), *p = out;
  if (!out) return NULL;
  for (size_t i = 0; i < n; i++) {
    memcpy(p, spark_chars[spark_level(vals[i], s->budget_us)], 3);
    p += 3;
  }
  *p = 0;
  return out;
}

/* qsort has no context argument in C11: sort pointers instead. */
static int cmp_block_ptr(const void *a, const void *b) {
  const block_agg_t *x = *(const block_agg_t *const *)a, *y = *(const block_agg_t *const *)b;
  if (block_before(x->self_micros, x->name, y->self_micros, y->name)) return -1;
  if (block_before(y->self_micros, y->name, x->self_micros, x->name)) return 1;
  return 0;
}

static int cmp_inter_ptr(const void *a, const void *b) {
  const inter_t *x = *(const inter_t *const *)a, *y = *(const inter_t *const *)b;
  uint64_t fx = x->s->frames, fy = y->s->frames;
  if (fx != fy) return fx > fy ? -1 : 1;
  return x < y ? -1 : x > y; /* first seen first */
}

/* json_put for arrays (json_put.h). */
static void push(json_t *a, int *bad, json_t *value) {
  if (json_array_append_new(a, value) != 0) *bad = 1;
}

/* A metric with no values is left out; one that could not be built is a
 * failure. */
static void set_metric(json_t *o, int *bad, const char *key, const metric_t *m) {
  if (m->n == 0) return;
  json_put(o, bad, key, metric_to_json(m));
}

json_t *summary_to_json(const summary_t *s, size_t top_blocks, size_t worst_frames,
                        size_t max_interactions) {
  int bad = 0;
  json_t *o = json_object();
  if (!o) return NULL;
  json_put(o, &bad, "frames", json_integer((json_int_t)s->frames));
  json_put(o, &bad, "budgetUs", json_integer(s->budget_us));
  json_put(o, &bad, "exact", json_boolean(summary_exact(s)));
  /* The ratio is of the steady-state frames: start-up is not jank. */
  uint64_t steady = s->frames - s->startup;
  double ratio = steady ? round((double)s->jank / (double)steady * 10000.0) / 10000.0 : 0;
  json_put(o, &bad, "jank",
      json_pack("{s:I,s:f,s:I,s:I,s:I,s:s,s:I}", "frames", (json_int_t)s->jank, "ratio", ratio,
                "frozen", (json_int_t)s->frozen, "buildMissed", (json_int_t)s->build_missed,
                "rasterMissed", (json_int_t)s->raster_missed, "boundBy", summary_bound_by(s),
                "overUs", (json_int_t)llround(s->jank_over_us)));
  json_put(o, &bad, "findings", summary_findings(s, SUMMARY_FINDINGS));
  json_t *next = summary_next(s);
  if (next && !json_array_size(next)) json_decref(next);
  else json_put(o, &bad, "next", next);
  if (s->startup) {
    json_t *nums = json_array();
    for (size_t i = 0; nums && i < s->startup && i < SUMMARY_STARTUP_NUMBERS; i++)
      push(nums, &bad, json_integer(s->startup_numbers[i]));
    json_put(o, &bad, "startup",
             json_pack("{s:I,s:o*,s:I,s:I}", "frames", (json_int_t)s->startup, "frameNumbers",
                       nums, "buildUsMax", (json_int_t)s->startup_build_max, "rasterUsMax",
                       (json_int_t)s->startup_raster_max));
  }
  set_metric(o, &bad, "buildUs", &s->build);
  set_metric(o, &bad, "rasterUs", &s->raster);
  set_metric(o, &bad, "totalSpanUs", &s->span);
  set_metric(o, &bad, "vsyncOverheadUs", &s->vsync);

  const block_agg_t *order[SUMMARY_MAX_BLOCK_NAMES + 1];
  for (size_t i = 0; i < s->nblocks; i++) order[i] = &s->blocks[i];
  qsort(order, s->nblocks, sizeof order[0], cmp_block_ptr);
  json_t *tb = json_array();
  for (size_t i = 0; tb && i < s->nblocks && i < top_blocks; i++)
    push(tb, &bad,
         json_pack("{s:s,s:I,s:I,s:I,s:I}", "name", order[i]->name, "selfMicros",
                   (json_int_t)order[i]->self_micros, "micros", (json_int_t)order[i]->micros,
                   "count", (json_int_t)order[i]->count, "frames", (json_int_t)order[i]->frames));
  json_put(o, &bad, "topBlocks", tb);

  json_t *wf = json_array();
  for (size_t i = 0; wf && i < s->nworst && i < worst_frames; i++) {
    const worst_t *w = &s->worst[i];
    if (s->jank && w->key <= s->budget_us) break; /* sorted: the rest made no jank */
    json_t *j =
        json_pack("{s:I,s:I,s:I,s:I,s:I}", "seq", (json_int_t)w->seq, "frameNumber",
                  (json_int_t)w->frame_number, "buildUs", (json_int_t)w->build_us, "rasterUs",
                  (json_int_t)w->raster_us, "totalSpanUs", (json_int_t)w->total_span_us);
    if (!j) {
      bad = 1;
      break;
    }
    if (w->interaction_id) json_put(j, &bad, "interactionId", json_string(w->interaction_id));
    json_t *bl = json_array();
    for (size_t k = 0; bl && k < w->ntop; k++)
      push(bl, &bad,
           json_pack("{s:s,s:I}", "name", w->top[k].name, "selfMicros",
                     (json_int_t)w->top[k].self_micros));
    json_put(j, &bad, "topBlocks", bl);
    push(wf, &bad, j);
  }
  json_put(o, &bad, "worstFrames", wf);

  if (s->with_interactions) {
    const inter_t *io[SUMMARY_MAX_INTERACTIONS + 1];
    for (size_t i = 0; i < s->ninter; i++) io[i] = &s->inter[i];
    qsort(io, s->ninter, sizeof io[0], cmp_inter_ptr);
    json_t *ia = json_array();
    for (size_t i = 0; ia && i < s->ninter && i < max_interactions; i++) {
      const summary_t *c = io[i]->s;
      json_t *j = json_pack("{s:s,s:I,s:I}", "interactionId", io[i]->id, "frames",
                            (json_int_t)c->frames, "jankFrames", (json_int_t)c->jank);
      if (!j) {
        bad = 1;
        break;
      }
      if (io[i]->linked_by) json_put(j, &bad, "linkedBy", json_string(io[i]->linked_by));
      set_metric(j, &bad, "buildUs", &c->build);
      set_metric(j, &bad, "rasterUs", &c->raster);
      set_metric(j, &bad, "totalSpanUs", &c->span);
      push(ia, &bad, j);
    }
    json_put(o, &bad, "interactions", ia);
  }
  char *spark = summary_sparkline(s);
  json_put(o, &bad, "sparkline", spark ? json_string(spark) : NULL);
  free(spark);
  if (bad) {
    json_decref(o);
    return NULL;
  }
  return o;
}

json_t *summary_to_json_bounded(const summary_t *s, size_t max_bytes) {
  static const size_t steps[][3] = {{SUMMARY_TOP_BLOCKS, SUMMARY_WORST_FRAMES, SIZE_MAX},
                                    {SUMMARY_TOP_BLOCKS, SUMMARY_WORST_FRAMES, 16},
                                    {SUMMARY_TOP_BLOCKS, SUMMARY_WORST_FRAMES, 8},
                                    {SUMMARY_TOP_BLOCKS, SUMMARY_WORST_FRAMES, 4},
                                    {SUMMARY_TOP_BLOCKS, 3, 2},
                                    {5, 3, 1},
                                    {5, 1, 0},
                                    {3, 1, 0},
                                    {1, 0, 0},
                                    {0, 0, 0}};
  size_t nsteps = sizeof steps / sizeof steps[0];
  for (size_t i = 0; i < nsteps; i++) {
    json_t *o = summary_to_json(s, steps[i][0], steps[i][1], steps[i][2]);
    if (!o || i + 1 == nsteps) return o;
    size_t n = json_dumpb(o, NULL, 0, JSON_COMPACT);
    if (n <= max_bytes) return o;
    json_decref(o);
  }
  return NULL;
}

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
  qsort(v, n, sizeof v[0], cmp_i64);
  /* Unexplained long samples are long frames while they are the minority;
   * as the majority they are an offset between two clocks. */
  size_t counted = n - long_known - (2 * long_unknown < n ? long_unknown : 0);
  const char *parity = "unknown";
  if (below || 2 * long_unknown >= n)
    parity = n >= SUMMARY_CLOCK_MIN_SAMPLES ? "inconsistent" : "unknown";
  else if (counted >= SUMMARY_CLOCK_MIN_SAMPLES)
    parity = "consistent";
  return json_pack("{s:s,s:I,s:I,s:I,s:I}", "parity", parity, "samples", (json_int_t)n, "minUs",
                   (json_int_t)v[0], "medianUs", (json_int_t)v[rank_of(n, 0.5)], "maxUs",
                   (json_int_t)v[n - 1]);
}
