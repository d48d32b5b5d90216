/* summary_impl: the accumulator's state, shared by the files of the summary
 * module only: summary.c (adding frames, findings) and summary_json.c (the
 * output). Nothing else includes it; everyone else uses summary.h.
 *
 * Ownership: a summary_t owns every name, frame and nested summary in it;
 * summary_free releases them. */
#ifndef TELESCOPE_SUMMARY_IMPL_H
#define TELESCOPE_SUMMARY_IMPL_H

#include <string.h>

#include "metric.h"
#include "summary.h"

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

/* Ranks block a before b: more self time first, then name ascending. */
static inline int block_before(int64_t self_a, const char *name_a, int64_t self_b, const char *name_b) {
  if (self_a != self_b) return self_a > self_b;
  return strcmp(name_a, name_b) < 0;
}

#endif
