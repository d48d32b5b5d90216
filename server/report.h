/* report: the file `telescope-mcp check --report` writes
 * (schema/check_report.json). Our own summary, budgets and diagnosis, plus
 * the keys of Flutter's TimelineSummary (flutter/flutter,
 * packages/flutter_driver/lib/src/driver/timeline_summary.dart, summaryJson)
 * at the top level, computed the way that file computes them, so dashboards
 * that chart `*.timeline_summary.json` read ours unchanged. Pure. */
#ifndef TELESCOPE_REPORT_H
#define TELESCOPE_REPORT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"

/* flutter_driver's kBuildBudget: a fixed 16 ms whatever the refresh rate;
 * a frame "missed" it when its duration is strictly greater. */
#define REPORT_FLUTTER_BUDGET_US 16000

/* The TimelineSummary keys of n frames (borrowed), as a new object:
 * average_/90th_percentile_/99th_percentile_/worst_frame_build_time_millis,
 * missed_frame_build_budget_count, the same five for frame_rasterizer, and
 * frame_count, frame_rasterizer_count. Milliseconds are µs / 1000; a
 * percentile is sorted[round((n − 1)·p/100)] (percentile_utils.dart
 * findPercentile). With n = 0 only the two counts (Flutter throws there).
 * NULL when out of memory. */
json_t *report_timeline_summary(const frame_t *frames, size_t n);

typedef struct {
  const char *version;          /* telescope-mcp's */
  int64_t duration_ms;          /* --duration-ms */
  const char *interaction_id;   /* --interaction, or NULL */
  const json_t *session;        /* the stop answer's "session", or NULL */
  const json_t *summary;        /* the stop answer's "summary", or NULL */
  const json_t *budgets;        /* the --budgets object, or NULL */
  const json_t *budgets_result; /* budgets_eval's answer, or NULL */
  const json_t *diagnosis;      /* why nothing was measured, or NULL */
  const frame_t *frames;        /* every frame check saw */
  size_t nframes;
  int complete;  /* frames holds all of summary.frames */
  int exit_code; /* what check exits with */
} report_input_t;

/* The report object (new reference; the inputs are copied), or NULL when
 * out of memory. */
json_t *report_new(const report_input_t *in);

#endif
