#include "summary.h"

#include "json_put.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"
#include "summary_impl.h"

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

/* The ranking's input (findings.h) over fb, which has room for every block
 * but "(other)" (it mixes names past the cap: nothing an agent could
 * change). */
static int findings_in(const summary_t *s, findings_input_t *in, findings_block_t *fb) {
  int64_t explained[SUMMARY_MAX_BLOCK_NAMES + 1], raster_explained = 0, build_explained = 0;
  if (explain(s, explained, &raster_explained, &build_explained) < 0) return -1;
  size_t n = 0;
  for (size_t i = 0; i < s->nblocks; i++) {
    const block_agg_t *b = &s->blocks[i];
    if (!strcmp(b->name, SUMMARY_OTHER)) continue;
    fb[n++] = (findings_block_t){b->name, b->jank_self, b->jank_frames, b->other_self,
                                 explained[i]};
  }
  *in = (findings_input_t){s->budget_us,
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
  return 0;
}

int summary_findings_and_next(const summary_t *s, size_t max, json_t **findings, json_t **next) {
  findings_block_t fb[SUMMARY_MAX_BLOCK_NAMES + 1];
  findings_input_t in;
  if (findings) *findings = NULL;
  if (next) *next = NULL;
  if (findings_in(s, &in, fb) < 0) return -1;
  if (findings) *findings = findings_to_json(&in, max);
  if (next) *next = findings_next_to_json(&in);
  return 0;
}

json_t *summary_findings(const summary_t *s, size_t max) {
  json_t *f;
  summary_findings_and_next(s, max, &f, NULL);
  return f;
}

json_t *summary_next(const summary_t *s) {
  json_t *n;
  summary_findings_and_next(s, 0, NULL, &n);
  return n;
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

