/* summary_json: a summary as the output schema's `summary` object (bounded
 * in size), and its sparkline. Reads the accumulator (summary_impl.h). */
#include "summary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json_put.h"
#include "json_len.h"
#include "summary_impl.h"

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
  json_t *findings, *next;
  summary_findings_and_next(s, SUMMARY_FINDINGS, &findings, &next);
  json_put(o, &bad, "findings", findings);
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
    size_t n = json_compact_len(o);
    if (n <= max_bytes) return o;
    json_decref(o);
  }
  return NULL;
}

size_t summary_fit_worst_blocks(json_t *summary, size_t max_bytes) {
  json_t *wf = json_object_get(summary, "worstFrames");
  size_t n = json_array_size(wf), len = json_compact_len(summary);
  for (size_t keep = SUMMARY_WORST_BLOCKS; keep-- > 0 && len > max_bytes;)
    for (size_t i = n; i-- > 0 && len > max_bytes;) {
      json_t *tb = json_object_get(json_array_get(wf, i), "topBlocks");
      if (json_array_size(tb) <= keep) continue;
      while (json_array_size(tb) > keep) json_array_remove(tb, json_array_size(tb) - 1);
      len = json_compact_len(summary);
    }
  return len;
}
