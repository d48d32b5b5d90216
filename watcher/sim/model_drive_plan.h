/* The drive plan (issue 32, DRIVE.md §1-2): a workload step as the agent
 * writes it, and the timed pointer events that play it. Pure: JSON and
 * numbers in, events out; no loop, no clock. The Dart watcher has the same
 * plan (watcher/flutter/lib/src/core/drive_plan.dart); both are checked
 * against tests/vectors/drive/. */
#ifndef TELESCOPE_SIM_MODEL_DRIVE_PLAN_H
#define TELESCOPE_SIM_MODEL_DRIVE_PLAN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Flutter's kTouchSlop (packages/flutter/lib/src/gestures/constants.dart):
 * the distance a pointer travels before a drag starts. */
#define DP_TOUCH_SLOP 18.0
#define DP_MAX_STEPS 32
#define DP_MAX_REPEAT 10
#define DP_FINDER_MAX 200 /* bytes of a finder string, its prefix included */
/* A step not finished in this long is cut (DRIVE.md §3). */
#define DP_STEP_CUT_US 10000000

typedef enum { DP_SCROLL, DP_FLING, DP_TAP, DP_WAIT, DP_BACK } dp_kind_t;

typedef struct {
  dp_kind_t kind;
  double dx, dy;   /* scroll, fling: logical px */
  double ms;       /* scroll: duration; wait: the wait */
  double velocity; /* fling: px/s */
  char finder[DP_FINDER_MAX + 1]; /* tap: the target; scroll/fling: "in" ("" = none) */
} dp_step_t;

typedef enum { DP_DOWN, DP_MOVE, DP_UP } dp_event_kind_t;

typedef struct {
  int64_t t_us; /* from the step's start */
  dp_event_kind_t kind;
  double x, y;
} dp_event_t;

typedef struct {
  dp_event_t *events; /* owned (dp_plan_free) */
  size_t n;
  int64_t duration_us; /* the last event's time */
  int has_velocity;    /* a fling: the pointer leaves at (vx, vy) px/s */
  double vx, vy;
} dp_plan_t;

/* Parses steps (the JSON text an agent wrote: an array of 1..32 steps) into
 * out (room for DP_MAX_STEPS); returns the count, or -1 with *detail set to
 * a malloc'd message naming the step index (0-based, as "steps[2]") and the
 * field. */
int dp_steps_parse(const char *text, dp_step_t *out, char **detail);

/* The events of step from (x0, y0) at hz frames a second (<= 0: 60) into
 * plan (zeroed first). Returns 0, or -1 with *error a static message ("empty
 * drag"; "out of memory"). wait and back have no events (n 0). */
int dp_plan_make(const dp_step_t *step, double x0, double y0, double hz, dp_plan_t *plan,
                 const char **error);
void dp_plan_free(dp_plan_t *plan);

/* "down", "move", "up". */
const char *dp_event_kind_name(dp_event_kind_t kind);
/* "scroll", "fling", "tap", "wait", "back". */
const char *dp_kind_name(dp_kind_t kind);

#endif
