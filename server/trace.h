/* trace: a session's frames as a Chrome trace-event JSON document
 * (`chart: "trace"`), which Perfetto (ui.perfetto.dev) and chrome://tracing
 * open. Pure: frames in, text out. docs/tool.md "Trace file" describes the
 * layout; in short, one process with three named threads:
 *
 *   tid 1 "UI"            each frame's build as a complete ("X") event, from
 *                          vsyncStart + vsyncOverhead for buildUs, with the
 *                          frame's blocks nested inside it;
 *   tid 2 "Raster"        each frame's raster, ending at vsyncStart +
 *                          totalSpan (FrameTiming's rasterFinish);
 *   tid 3 "Interactions"  one slice per run of consecutive frames that carry
 *                          the same interactionId.
 *
 * Timestamps are µs from the first frame's vsyncStart. Janky frames (build
 * or raster over the budget) carry args.janky true and cname "terrible",
 * the others "good". */
#ifndef TELESCOPE_TRACE_H
#define TELESCOPE_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

#define TRACE_TID_UI 1
#define TRACE_TID_RASTER 2
#define TRACE_TID_INTERACTIONS 3

/* The document (compact JSON, NUL-terminated; the caller frees it), or NULL
 * when out of memory. frames are borrowed and in seq order; title names the
 * process (NULL: "telescope"). */
char *trace_json(const frame_t *frames, size_t n, int64_t budget_us, const char *title);

#endif
