/* The scrolllist scenario's feed and the workloads that drive it (issue 32,
 * DRIVE.md §3-5): the watcher's `drive` action and flutter_driver's
 * `scroll`/`tap` both play pointer events (model_drive_plan.h) into one
 * simulated ListView. The feed draws only while driven or while its
 * ballistic scroll settles; a tile is built in the frame it scrolls into
 * view, a HeavyTile for ~25 ms (a janky frame). sim_gen asks it each vsync
 * (sim_drive_tick) and each drawn frame (sim_drive_frame); sim_vm serves
 * the actions. */
#ifndef TELESCOPE_SIM_DRIVE_H
#define TELESCOPE_SIM_DRIVE_H

#include <jansson.h>
#include <stdint.h>

#include "model_drive_plan.h"

struct sim;

typedef enum { SIM_DRIVE_NONE = 0, SIM_DRIVE_RUNNING, SIM_DRIVE_DONE, SIM_DRIVE_FAILED } sim_drive_state_t;

typedef struct {
  /* The feed: a vertical ListView keyed "feed" filling the 400x800 screen,
   * SIM_FEED_ITEMS tiles of SIM_FEED_TILE px, "Item N", every 7th a HeavyTile. */
  double offset;              /* scroll offset, px */
  int64_t first_built, last_built; /* the tiles built (on screen) */
  int pointer_down;
  double down_y, down_offset; /* where the drag began */
  int ballistic;              /* a ClampingScrollSimulation is running */
  double bal_from, bal_velocity, bal_duration_s, bal_distance;
  int64_t bal_start_us;
  uint64_t tiles_built, heavy_built, feed_frames;
  uint64_t cuts; /* steps cut at 10 s, all drives */
  /* The drive's own C work (tick and frame, not the tiles it builds) over
   * the frames a drive or its fling ran in: what driving costs a frame. */
  uint64_t work_ns, work_frames;
  int launch_left; /* frames the app's start still draws (then it rests) */

  /* The drive (one at a time). */
  unsigned counter; /* ids d1, d2, ... per run of the watcher */
  char id[16];
  sim_drive_state_t state;
  int report_once; /* ended: the next reply carries it once more */
  int by_driver;   /* played for an ext.flutter.driver command: no drive object */
  int64_t driver_duration_us;
  double driver_hz;
  dp_step_t steps[DP_MAX_STEPS];
  int n_steps, runs, run, step; /* run, step 1-based: the one playing */
  int step_started;
  int64_t step_start_us;
  uint64_t step_frames;
  dp_plan_t plan;
  size_t next_event;
  double release_vy; /* content px/s when the pointer left */
  char error[512];
  json_t *candidates; /* array or NULL */
  json_t *cut;        /* array of "run/step" */
  char *saved_id, *saved_by; /* the interaction before the drive */
} sim_drive_t;

#define SIM_FEED_ITEMS 1000
#define SIM_FEED_TILE 80.0
#define SIM_FEED_W 400.0
#define SIM_FEED_H 800.0

void sim_drive_init(struct sim *s);
void sim_drive_free(struct sim *s);
/* Hot restart: the drive and the counter are gone, the feed back at 0. */
void sim_drive_reset(struct sim *s);

/* action=drive with params (steps, repeat; strings as the VM hands them).
 * Returns 0 (the drive runs, or failed at once on a bad finder) or a
 * JSON-RPC error code (-32602 bad steps/repeat, -32000 a drive running)
 * with *message malloc'd. */
int sim_drive_start(struct sim *s, json_t *params, int64_t now_us, char **message);
/* Adds "drive" to a watcher reply while one runs, and once after it ended;
 * always to the drive action's own reply (own != 0). */
void sim_drive_reply_add(struct sim *s, json_t *reply, int own);
/* The watcher's stop: a running drive fails, "cancelled by stop" (a
 * flutter_driver gesture goes on). */
void sim_drive_cancel(struct sim *s);

/* ext.flutter.driver scroll or tap: one step played as a drive of its own,
 * with flutter_driver's moves rather than the plan's (for a scroll:
 * duration_us * hz / 1e6 moves of (dx, dy) / moves, no slop; see
 * sim_drive.c). 0, or -1 with *message (no widget, N widgets, busy)
 * malloc'd. sim_drive_busy() says when it has ended. */
int sim_drive_driver_step(struct sim *s, const dp_step_t *step, int64_t duration_us, double hz,
                          int64_t now_us, char **message);
int sim_drive_busy(const struct sim *s);     /* a drive plays */
int sim_drive_animating(const struct sim *s); /* the feed's ballistic scroll runs */

/* Each vsync: advances the drive (starts steps, ends them, cuts at 10 s).
 * Returns 1 when the feed wants a frame drawn. */
int sim_drive_tick(struct sim *s, int64_t now_us);
/* A frame drawn at vsync_us (any scenario): the pointer events due, the
 * scroll, the tiles that came into view (scrolllist only). *heavy_us:
 * HeavyTile build time; returns the other tiles' build time (µs). */
int64_t sim_drive_frame(struct sim *s, int64_t vsync_us, int64_t *heavy_us);

json_t *sim_drive_stats_json(const struct sim *s);

#endif
