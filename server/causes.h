/* causes: what the VM timeline and the frame source add to a session's
 * summary (issue 15, docs/tool.md "Findings"):
 *  - findings of kind `gc` (GC pauses inside the build window of frames that
 *    missed the budget on build) and `shader` (shader compilation inside the
 *    raster window of frames that missed it on raster), ranked among the
 *    findings the blocks gave by the same rule (janky mean − other mean);
 *  - `gcUs` / `shaderUs` on the worst frames, and each one's own `cause`
 *    (frame_cause.h, with or without timeline events);
 *  - for a session measured without the watcher, the `watcher` finding in
 *    place of the `tracking` one (no track* option names anything there).
 * Pure: the caller hands in the frames and the events. */
#ifndef TELESCOPE_CAUSES_H
#define TELESCOPE_CAUSES_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"
#include "vmtl_join.h"

typedef struct {
  int frame_events;           /* measured from Flutter.Frame events: no blocks */
  const vmtl_event_t *events; /* the session's timeline events (may be NULL) */
  size_t nevents;
  int64_t offset_us; /* added to event times to put them on the frames' clock */
} causes_input_t;

/* The per-frame windows of a FramePerfRecord (FrameTiming phases). */
vmtl_window_t causes_window(const frame_t *f);

/* Edits summary (the object of summary_to_json) in place: findings and
 * worst frames as above. frames: the session's kept frames (borrowed).
 * 0, or -1 when out of memory (the summary is then as it was or partly
 * edited, still valid). */
int causes_apply(json_t *summary, const frame_t *const *frames, size_t nframes,
                 int64_t budget_us, const causes_input_t *in);

#endif
