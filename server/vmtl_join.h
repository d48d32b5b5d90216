/* vmtl_join: what of the VM timeline fell inside each frame's build and raster windows (GC
 * pauses, shader compilations, the longest raster event). Pure: takes the events a parser kept
 * (vmtl.h) and the frames' windows, gives numbers per frame; the caller owns every array. */
#ifndef TELESCOPE_VMTL_JOIN_H
#define TELESCOPE_VMTL_JOIN_H

#include <stddef.h>
#include <stdint.h>

#include "vmtl.h"

/* A frame's windows on the frames' clock (FrameTiming). */
typedef struct {
  int64_t build_start_us, build_end_us, raster_start_us, raster_end_us;
} vmtl_window_t;
typedef struct {
  /* Union of GC intervals (UI thread, or unknown thread) inside the build window. */
  int64_t gc_us;
  /* Union of shader intervals (any thread) inside the raster window. */
  int64_t shader_us;
  /* The longest single VMTL_RASTER event's overlap with the raster window. */
  int64_t raster_top_us;
  /* Separate pauses / compilations (pieces of the union) touching the window. */
  uint32_t gc_n, shader_n;
  /* The name of raster_top's event ("" when none; ties: the earliest start). */
  char raster_top[VMTL_NAME_MAX];
} vmtl_causes_t;
/* For each of the nfr frames, what fell inside its windows. offset_us is added to event times to
 * bring them onto the frames' clock (0 on native: same clock). Events need not be sorted; cost
 * O((nev + nfr) log(nev + nfr)). Events with dur < 0 or |ts| > VMTL_TIME_MAX are ignored.
 * Returns 0, -1 on allocation failure (out zeroed). */
int vmtl_join(const vmtl_event_t *ev, size_t nev, const vmtl_window_t *fr, size_t nfr,
              int64_t offset_us, vmtl_causes_t *out);

#endif
