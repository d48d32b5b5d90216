/* compare: is the candidate session better than the baseline, or is the
 * difference noise? (`action: "compare"`, docs/tool.md "Comparing
 * sessions"). Pure: two sessions' frames in, the `comparison` object out.
 *
 * Each metric is tested on the per-frame values of both sessions with a
 * two-sided Mann–Whitney U test (stats.h) at COMPARE_METRIC_ALPHA (the
 * verdict's level COMPARE_ALPHA split over the four metrics it draws on,
 * Bonferroni: two runs of one workload get a verdict at most 1 % of the
 * time), and counts as changed only when it is both significant and larger than a floor that
 * keeps irrelevant but detectable shifts out ("material"). The verdict is
 * decided by the first metric that changed, in the order jank ratio, frozen
 * frames, then build and raster time (any worse → regressed). */
#ifndef TELESCOPE_COMPARE_H
#define TELESCOPE_COMPARE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"
#include "workload.h"

#define COMPARE_ALPHA 0.01          /* false-verdict rate on one workload, at most */
#define COMPARE_METRIC_ALPHA (COMPARE_ALPHA / 4) /* per metric: the verdict's four */
#define COMPARE_MIN_FRAMES 30       /* fewer on either side: "too_few_frames" */
#define COMPARE_MIN_JANK_DELTA 0.01 /* jank ratio: at least one point of 100 */
#define COMPARE_MIN_SHIFT_US 200    /* times: Hodges–Lehmann shift at least this… */
#define COMPARE_MIN_SHIFT_FRAC 0.05 /* …and at least this share of the baseline p50 */
#define COMPARE_MIN_BLOCK_US 100    /* findings: mean self time per frame moved at least this… */
#define COMPARE_MAX_INTERACTIONS 8  /* interactions compared (most baseline frames first) */
#define COMPARE_MAX_FINDINGS 5      /* findings compared (baseline's first, then candidate's) */

typedef struct {
  const char *id;        /* session id, e.g. "s3" */
  const frame_t *frames; /* record.h; per-frame timings (blocks may be absent) */
  size_t nframes;
  int64_t budget_us;      /* the session's budget */
  double refresh_rate;    /* Hz, 0 unknown */
  const char *build_mode; /* "debug"|"profile"|"release"|NULL unknown */
  int tracking[4];        /* widgets, layouts, paints, rebuilds (wp_track_t) */
  const json_t *findings; /* the session summary's "findings" array, may be NULL */
  uint64_t frames_total;  /* frames in the session (nframes may be a bounded sample) */
  const json_t *workload; /* the session's summary.workload (workload.h), NULL: none */
} compare_side_t;

/* The `comparison` object: {baseline, candidate, verdict, decidedBy,
 * comparable, warnings, test, metrics, interactions, findings} (the
 * JSON-schema fragment is in docs/tool.md). Both sides are borrowed. New
 * reference; NULL when out of memory. */
json_t *compare_sessions(const compare_side_t *baseline, const compare_side_t *candidate);

#endif
