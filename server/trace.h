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
 *                          the same interactionId;
 *   tid 4 "UI GC"         the VM timeline's GC pauses on the UI thread (or
 *                          one the VM did not name), at their real times;
 *   tid 5 "Raster work"   shader/pipeline compiles and long engine work on the
 *                          raster thread;
 *   tid 6 "Shaders, other threads"  compiles elsewhere (IO thread warm-up).
 *
 * Timestamps are µs from the first frame's vsyncStart. Janky frames (build
 * or raster over the budget) carry args.janky true and cname "terrible",
 * the others "good"; a janky frame's args also name its cause (boundBy, the
 * top block, and the GC / shader time inside its windows), as the findings
 * count them. The timeline's slices sit on tracks of their own: their real
 * times need not nest with the reconstructed blocks. */
#ifndef TELESCOPE_TRACE_H
#define TELESCOPE_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"
#include "vmtl.h"

#define TRACE_TID_UI 1
#define TRACE_TID_RASTER 2
#define TRACE_TID_INTERACTIONS 3
#define TRACE_TID_GC 4
#define TRACE_TID_RASTER_WORK 5
#define TRACE_TID_OTHER_SHADERS 6

/* The session's VM-timeline events (sessions.h session_timeline), borrowed;
 * offset_us brings their times onto the frames' clock (causes_input_t). */
typedef struct {
  const vmtl_event_t *events;
  size_t nevents;
  int64_t offset_us;
} trace_timeline_t;

/* The document (compact JSON, NUL-terminated; the caller frees it), or NULL
 * when out of memory. frames are borrowed and in seq order; title names the
 * process (NULL: "telescope"); tl may be NULL (no timeline: no GC or shader
 * slices, and frames say nothing of them). */
char *trace_json(const frame_t *frames, size_t n, int64_t budget_us, const char *title,
                 const trace_timeline_t *tl);

#endif
