/* The frame generator: a libuv timer at --fps draws frames the way the
 * Flutter engine and framework would, for the scenario in force. Each frame
 * is a FlutterTimeline block tree with seeded durations, handed to the watcher
 * model (wm_frame_drawn) in finish order, and a FrameTiming delivered later
 * in batches (wm_timings), as the engine batches them (~100 ms). */
#ifndef TELESCOPE_SIM_GEN_H
#define TELESCOPE_SIM_GEN_H

#include "sim.h"

int sim_gen_init(sim_t *s);
void sim_gen_close(sim_t *s); /* closes both timers */

void sim_gen_set_scenario(sim_t *s, sim_scenario_t scenario);
void sim_gen_set_fps(sim_t *s, double fps);
/* The next n drawn frames are janky (SlowWidget, build > 2x budget). */
void sim_gen_inject(sim_t *s, int n);
/* Delivers every timing that is due now (timings-delay permitting). */
void sim_gen_flush(sim_t *s);

/* Scenario names: "steady", "janky", "idle", "stalled"; -1 when unknown. */
int sim_scenario_parse(const char *name);
const char *sim_scenario_name(sim_scenario_t scenario);

#endif
