/* findings: the ranked causes of jank an agent reads first (docs/tool.md
 * "Findings"), and the warnings that qualify every number of a summary.
 *
 * The ranking compares janky frames with the frames that were not janky,
 * never all frames together: a widget that costs 4 ms in every frame is not a
 * cause of the one frame in twenty that a 20 ms widget makes janky. Pure: the
 * caller (summary.c) accumulates the per-name sums frame by frame and hands
 * them over here only when the JSON is written. */
#ifndef TELESCOPE_FINDINGS_H
#define TELESCOPE_FINDINGS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define FINDINGS_MAX 5
/* A block is a cause only when its mean self time per janky frame exceeds its
 * mean per other frame by at least budget / FINDINGS_MIN_EXCESS_DIV (0.8 ms at
 * 60 Hz): below that it is noise a frame's jitter already explains. */
#define FINDINGS_MIN_EXCESS_DIV 20

typedef enum {
  FINDING_WIDGET = 0,    /* a widget build, or a user's own FlutterTimeline block */
  FINDING_RENDER_OBJECT, /* "Render…": a layout, paint or intrinsics pass */
  FINDING_PHASE,         /* one of the framework's pipeline phases (BUILD, LAYOUT…) */
  FINDING_RASTER,        /* frames that missed the budget on the raster thread */
  FINDING_TRACKING,      /* names are missing: switch a track* option on (next, not a finding) */
  FINDING_BUILD          /* frames missed on build and nothing names any of it: no blocks at all */
} finding_kind_t;

/* 0 for the kinds an agent can change directly (widget, render object, gc,
 * shader), 1 for the rest (phase, raster). */
int findings_kind_tier(const char *kind);

/* The kind of a block name: FINDING_PHASE for FlutterTimeline's phase names
 * (BUILD, LAYOUT, PAINT, COMPOSITING, FINALIZE TREE, UPDATING COMPOSITING BITS,
 * SEMANTICS, POST_FRAME, each optionally " (root)", and Semantics.*),
 * FINDING_RENDER_OBJECT for names starting "Render", else FINDING_WIDGET. */
finding_kind_t findings_classify(const char *name);
const char *findings_kind_name(finding_kind_t kind);

/* One block name's self time, summed separately over the frames that missed
 * the budget on build and over the frames that were not janky at all. */
typedef struct {
  const char *name; /* borrowed */
  int64_t jank_self_us;
  uint64_t jank_frames; /* build-missed frames that contained the name */
  int64_t other_self_us;
  /* The janky time it explains (the ranking's key): summed over the
   * build-missed frames, its self time beyond its mean in the frames that
   * missed nothing, at most that frame's build overrun (buildUs − budget). */
  int64_t explained_us;
} findings_block_t;

/* Everything the ranking looks at; the sums are over whole frames. */
typedef struct {
  int64_t budget_us;
  uint64_t build_missed;                    /* frames with buildUs > budget */
  uint64_t raster_missed;                   /* frames with rasterUs > budget */
  uint64_t other_frames;                    /* frames with neither over budget */
  uint64_t build_missed_named;              /* build-missed frames with a name below the phases */
  double build_us_missed, build_us_other;   /* buildUs summed over those frames */
  double raster_us_missed, raster_us_other; /* rasterUs summed over those frames */
  int track_widgets, track_layouts, track_paints; /* 1 on, 0 off, -1 unknown */
  const findings_block_t *blocks;                 /* borrowed */
  size_t nblocks;
  uint64_t jank_frames;       /* janky frames (build or raster missed): ofJankFrames */
  double jank_over_us;        /* the jank to explain: Σ max(buildUs, rasterUs) − budget */
  int64_t raster_explained_us; /* the raster finding's explained time (as a block's, on raster) */
  int64_t build_explained_us;  /* the same of buildUs: the `build` finding, frames without blocks */
} findings_input_t;

/* A finding is at most 1 in 10 less than the one above it: a more specific
 * cause (widget, render object, gc, shader) goes first. */
#define FINDINGS_TIE_SHARE 0.9

/* The `findings` array (new reference; empty when nothing was janky), at most
 * max entries, NULL on OOM. Rule (docs/tool.md "Ranking"): the larger share
 * of the jank explained (`explains`) first; a more specific cause goes ahead
 * of a phase or the raster finding within FINDINGS_TIE_SHARE of it; equal →
 * name ascending. A name is a cause when its excess (janky mean − other mean)
 * is at least budget / FINDINGS_MIN_EXCESS_DIV. Advice is never a finding. */
json_t *findings_to_json(const findings_input_t *in, size_t max);

/* The `next` array (new reference, maybe empty; NULL on OOM): what to switch
 * on to learn more. When no build-missed frame names anything below the
 * phases, the track* option that would name the top phase's work — never one
 * that was on. Each entry is {"kind":"tracking","option","why"}. */
json_t *findings_next_to_json(const findings_input_t *in);

/* Sorts a findings array (as findings_to_json makes, possibly with gc and
 * shader entries added) in place by the rule above, and cuts it to max.
 * 0, or -1 when an entry lacks its fields (the array is left as it was). */
int findings_sort_json(json_t *findings, size_t max);

/* What a cause explains of one janky frame (docs/tool.md "What a cause
 * explains"): its time beyond its calm-frame mean (excess), never below 0
 * and never more than that frame's overrun on its thread. */
double findings_explained(double excess, double overrun);

/* A finding's share of the jank: explained / jank over, 0..1, 2 decimals. */
double findings_share(int64_t explained_us, double jank_over_us);

/* The `warnings` a result carries (new reference, an array, maybe empty; NULL
 * on OOM): a debug build_mode (may be NULL when unknown) inflates timings, and
 * each track* option that is on adds overhead (one line for all of them). */
json_t *findings_warnings_new(const char *build_mode, int track_widgets, int track_layouts,
                              int track_paints);

#endif
