/* frame_cause: each janky worst frame's own cause (docs/tool.md "Worst
 * frames"), by the rule that ranks the findings, applied to that frame
 * alone: of the frame's blocks (self time, a phase's " (root)" merged into
 * the phase), its raster time, its GC and its shader compilation — or its
 * build time when it has no blocks — the one whose time there lies furthest
 * beyond its mean over the calm frames (steady, neither side over budget), at
 * most the frame's overrun (max(build, raster) − budget). A more specific
 * cause (widget, render object, GC, shader) goes first when it explains at
 * least FINDINGS_TIE_SHARE of what the phase or raster time above it does.
 * Equal amounts: more time beyond the mean uncapped first, then the name.
 *
 * The largest block of a frame is not its cause: a BUILD of 8 ms in a frame
 * whose calm frames build for 8 ms is not why it missed, a PAINT of 3 ms where
 * calm frames paint for 0.5 ms is. Pure: frames and timeline numbers are the
 * caller's (borrowed). */
#ifndef TELESCOPE_FRAME_CAUSE_H
#define TELESCOPE_FRAME_CAUSE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"
#include "vmtl_join.h"

/* A frame's cause: kind and name (name[0..len), borrowed from the frames or
 * static), and the frame's time in it. kind NULL: none. */
typedef struct {
  const char *kind, *name;
  size_t len;
  int64_t us;
} frame_cause_t;

/* The causes of frames[at[0..nat)] (nat at most FRAME_CAUSE_MAX) into
 * out[0..nat): none for a frame that is not janky or where nothing lies
 * beyond the calm frames. 0, or -1 when out of memory (out then all none). */
#define FRAME_CAUSE_MAX 16
int frame_cause_of(const frame_t *const *frames, size_t nframes, const vmtl_causes_t *tl,
                   int64_t budget_us, const size_t *at, size_t nat, frame_cause_t *out);

/* Sets `cause` ({kind, name, us}: the frame's time in it) on each janky entry
 * of summary.worstFrames whose frame (same seq and frameNumber) is among
 * frames; an entry whose frame is not there, or where nothing lies beyond the
 * calm frames, is left without one. tl: what the VM timeline held in each
 * frame (its GC and shader time), or NULL when it was not read. 0, or -1 when out
 * of memory (entries then may lack their cause; the summary stays valid). */
int frame_cause_apply(json_t *summary, const frame_t *const *frames, size_t nframes,
                      const vmtl_causes_t *tl, int64_t budget_us);

#endif
