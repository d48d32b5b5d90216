/* chart: the SVG frame chart that stop/capture write when asked for
 * `chart: "svg"`, for the people who review an agent's work (issue 8). One
 * column per frame (or per bucket of frames when there are more than
 * CHART_MAX_SLOTS): a build bar on the left, a raster bar on the right, a bar
 * over the budget in red, the budget line, a shaded band per run of one
 * interaction, the worst frames labelled with their frame number and own
 * cause (frame_cause.h; else their top self-time block). chart_svg is pure (frames in, text out); chart_file.h is the thin
 * file-system shell around it. */
#ifndef TELESCOPE_CHART_H
#define TELESCOPE_CHART_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

#define CHART_WIDTH 1200
#define CHART_HEIGHT 400
#define CHART_MAX_SLOTS 560  /* columns: each bar at least one pixel wide */
#define CHART_WORST 5        /* frames labelled */
#define CHART_LABEL_CHARS 40 /* characters of an app-given name shown in a label */
#define CHART_CLIP_BUDGETS 5 /* the y axis stops at 5 budgets; taller bars are clipped */

/* Colours, named so tests (and readers of the SVG) can find them. */
#define CHART_COLOR_BUILD "#1f77b4"  /* blue */
#define CHART_COLOR_RASTER "#17becf" /* teal */
#define CHART_COLOR_JANK "#d62728"   /* red: this bar is over the budget */

/* 1 when build or raster exceeds budget_us (DESIGN 4, as DevTools). */
int chart_is_janky(const frame_t *f, int64_t budget_us);

/* A standalone SVG document (CHART_WIDTH × CHART_HEIGHT) of frames[0..n)
 * (borrowed, oldest first) judged against budget_us, headed by title (may be
 * NULL) and the counts. Every app-given name is XML-escaped; the text stays
 * bounded (well under 1 MB) however many frames come in. With n == 0 the
 * chart says "no frames". Caller frees; NULL on OOM. */
char *chart_svg(const frame_t *frames, size_t n, int64_t budget_us, const char *title);

#endif
