/* The simulator's two clocks. Every module reads time here, so none of them
 * calls back into main.c for it. */
#ifndef TELESCOPE_SIM_CLOCK_H
#define TELESCOPE_SIM_CLOCK_H

#include <stdint.h>

/* Monotonic clock in µs: the simulated engine, timeline and CPU-profiler
 * clock (FrameTiming, getVMTimeline and getCpuSamples share it, as on a
 * device: docs/flutter-apis.md, "Clocks"). */
int64_t sim_clock_now_us(void);
/* Wall clock in ms since the epoch (event timestamps). */
int64_t sim_clock_wall_ms(void);

#endif
