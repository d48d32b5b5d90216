/* The frame generator: a libuv timer at --fps draws frames the way the
 * Flutter engine and framework would, for the scenario in force. Each frame
 * is a FlutterTimeline block tree with seeded durations, handed to the watcher
 * model (wm_frame_drawn) in finish order, and a FrameTiming handed to
 * sim_timings, which delivers it later by the engine's rule (wm_timings,
 * Flutter.Frame). */
#ifndef TELESCOPE_SIM_GEN_H
#define TELESCOPE_SIM_GEN_H

#include "sim.h"

/* Up to SIM_TICK_MAX_FPS the timer ticks once per frame. Above it (a load
 * generator for benchmarks, up to SIM_MAX_FPS) it ticks every millisecond and
 * draws the frames due since the previous tick, their vsyncs one period
 * apart; the "UI thread busy" rule is then off, since no frame's work fits
 * such a period. */
#define SIM_TICK_MAX_FPS 1000
#define SIM_MAX_FPS 100000
/* --blocks: at most this many block names per frame. */
#define SIM_MAX_BLOCKS 64

int sim_gen_init(sim_t *s);
void sim_gen_close(sim_t *s); /* closes its timer and sim_timings' */

void sim_gen_set_scenario(sim_t *s, sim_scenario_t scenario);
void sim_gen_set_fps(sim_t *s, double fps);
/* The next n drawn frames are janky (SlowWidget, build > 2x budget). */
void sim_gen_inject(sim_t *s, int n);
/* `draw N`: nothing is drawn for the next n vsync periods, then those n
 * frames are drawn at once, one period apart: exactly n frames waiting
 * together, however late the machine runs the sim's ticks. */
void sim_gen_draw_held(sim_t *s, int n);
/* --replay: one recorded frame, drawn as draw_frame draws a generated one:
 * its blocks (finish order) to the watcher model at drained_us, its timing to
 * sim_timings (and so to Flutter.Frame). The caller records the timeline. */
void sim_gen_draw_replayed(sim_t *s, const wm_timing_t *timing, const wm_event_t *events, size_t n,
                           int64_t drained_us);

/* Scenario names: "steady", "janky", "idle", "stalled", "rare-slow",
 * "layout-bound", "raster-bound", "gc", "shader", "cpu-rare-slow", "scrolllist"; -1 when
 * unknown. */
int sim_scenario_parse(const char *name);
const char *sim_scenario_name(sim_scenario_t scenario);

#endif
