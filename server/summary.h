/* summary: the per-frame statistics an agent reads in one glance (DESIGN 4,
 * docs/tool.md "Summary"). An accumulator: frames are added one by one and the
 * memory stays bounded however many arrive. Pure: no loop, no clock. */
#ifndef TELESCOPE_SUMMARY_H
#define TELESCOPE_SUMMARY_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"

#define SUMMARY_WINDOW 65536            /* frames kept per metric for exact percentiles */
#define SUMMARY_INTERACTION_WINDOW 8192 /* the same, per interaction */
#define SUMMARY_MAX_BLOCK_NAMES 512     /* distinct names; the rest add up under "(other)" */
#define SUMMARY_MAX_INTERACTIONS 64     /* distinct ids; the rest add up under "(other)" */
#define SUMMARY_OTHER "(other)"
#define SUMMARY_TOP_BLOCKS 10
#define SUMMARY_WORST_FRAMES 5
#define SUMMARY_WORST_BLOCKS 3   /* self-time blocks listed per worst frame */
#define SUMMARY_FINDINGS 5       /* findings listed (server/findings.h) */
#define SUMMARY_SPARK_MAX 60     /* characters in the sparkline */
#define SUMMARY_FROZEN_US 700000 /* frozen: totalSpanUs >= this (Sentry's rule) */
#define SUMMARY_STARTUP_NUMBERS 5 /* start-up frame numbers listed */
#define SUMMARY_JANK_KEEP 2048    /* janky frames the ranking looks at one by one */
#define SUMMARY_MAX_BYTES 4096   /* compact JSON bound of summary_to_json_bounded */

typedef struct summary summary_t;

/* The jank budget in µs: budget_ms when > 0, else 1e6 / refresh_rate when > 0,
 * else 60 Hz (16667); rounded to the nearest µs, at least 1. */
int64_t summary_budget_us(double budget_ms, double refresh_rate);

/* A new empty accumulator judging jank against budget_us; with_interactions
 * also keeps one child accumulator per interactionId. NULL on OOM. */
summary_t *summary_new(int64_t budget_us, int with_interactions);
void summary_free(summary_t *s);

/* Adds one frame (borrowed; nothing of it is kept by pointer). 0, or -1 on OOM
 * (the frame is then not counted anywhere). */
int summary_add_frame(summary_t *s, const frame_t *f);

/* What the session switched on (1), left off (0) or does not know (-1); the
 * findings use it to tell when names are missing because tracking was off.
 * Applies to the interactions' summaries too. Unknown until called. */
void summary_set_tracking(summary_t *s, int widgets, int layouts, int paints);
/* jank.boundBy: "none" without janky frames; "both" when build and raster each
 * missed in at least half of them; else the side that missed more often. */
const char *summary_bound_by(const summary_t *s);
/* The findings array (new reference, at most max; docs/tool.md "Findings"). */
json_t *summary_findings(const summary_t *s, size_t max);
/* The `next` array: advice, never a cause (findings_next_to_json). */
json_t *summary_next(const summary_t *s);
/* Both from one pass over the janky frames (what each cause explains):
 * *findings as summary_findings, *next as summary_next (either may be NULL
 * not to ask). Returns -1, both NULL, when out of memory. */
int summary_findings_and_next(const summary_t *s, size_t max, json_t **findings, json_t **next);

uint64_t summary_frames(const summary_t *s);
uint64_t summary_jank_frames(const summary_t *s);
int summary_exact(const summary_t *s); /* 0 once a metric outgrew its exact window */
/* The child accumulator of one interaction, or NULL if none was seen. */
const summary_t *summary_interaction(const summary_t *s, const char *interaction_id);

/* The summary object of schema/telescope_frames.output.json (new reference),
 * with up to top_blocks blocks, worst_frames frames and max_interactions
 * interactions (the most frames first; SIZE_MAX for all). */
json_t *summary_to_json(const summary_t *s, size_t top_blocks, size_t worst_frames,
                        size_t max_interactions);
/* summary_to_json with the defaults, shrunk step by step (interactions, then
 * worstFrames, then topBlocks; docs/tool.md) until the compact text is at most
 * max_bytes. */
json_t *summary_to_json_bounded(const summary_t *s, size_t max_bytes);
/* What is added to a summary after the bound (timeline findings, each worst
 * frame's cause, where, rebuilds) may take it past max_bytes: the worst
 * frames' topBlocks give way, one block at a time from the last frame, until
 * it fits or none is left. Returns its compact length then. */
size_t summary_fit_worst_blocks(json_t *summary, size_t max_bytes);

/* The sparkline alone (UTF-8, at most SUMMARY_SPARK_MAX characters); the
 * caller frees it. Level of a value v: ceil(4·v/budget) − 1 clamped to 0..7 of
 * "▁▂▃▄▅▆▇█", so a frame at the budget is ▄ and above 1.75× budget is █. */
char *summary_sparkline(const summary_t *s);

/* Clock parity evidence (DESIGN 4 "Clock"): the newest SUMMARY_CLOCK_SAMPLES
 * values of atUs − vsyncStartUs. Both stamps come from one clock on every
 * engine (the Dart timeline's; performance.now() on the web), so on a sound
 * app each lies in [−SUMMARY_CLOCK_SLACK_US, work + SUMMARY_CLOCK_MAX_US]:
 * the record is stamped after its vsync, after the frame's own work, within
 * the timings batching delay (≤ 1 s). Consistent when at least
 * SUMMARY_CLOCK_MIN_SAMPLES count and none is out of range. A sample above
 * SUMMARY_CLOCK_MAX_US is a frame whose own UI work was long, not another
 * clock, when its work explains it or, work unknown, when such samples are
 * the minority: those are left out of the verdict (not out of the numbers).
 * Another clock shows as every sample off by the same amount. */
#define SUMMARY_CLOCK_SAMPLES 256
#define SUMMARY_CLOCK_MIN_SAMPLES 8
#define SUMMARY_CLOCK_SLACK_US 1000
#define SUMMARY_CLOCK_MAX_US 1000000
typedef struct {
  int64_t ring[SUMMARY_CLOCK_SAMPLES];
  int64_t work[SUMMARY_CLOCK_SAMPLES]; /* the frame's own work, µs (0: unknown) */
  uint64_t seen;                       /* samples ever added; the ring holds the newest */
} summary_clock_t;

void summary_clock_init(summary_clock_t *c);
/* One frame whose work is unknown (see summary_clock_add_frame). */
void summary_clock_add(summary_clock_t *c, int64_t at_us, int64_t vsync_start_us);
/* One frame and its own work (vsync overhead + build + raster, or its span),
 * which widens its bound. */
void summary_clock_add_frame(summary_clock_t *c, int64_t at_us, int64_t vsync_start_us,
                             int64_t work_us);
/* {"parity", "samples", "minUs", "medianUs", "maxUs"} (new reference); the
 * numbers are left out while no sample exists. */
json_t *summary_clock_to_json(const summary_clock_t *c);

#endif
