/* workload: the steps an agent asks the app to play during a capture or a
 * session (issue 32, docs/tool.md "Workload"). It checks them whole before
 * anything is sent (every message names the field), turns them into
 * flutter_driver commands for an app without the watcher, and reads what
 * they measured run by run from the frames the drive attributed
 * (interactionId "<drive>/r<run>/s<step>", linkedBy "drive"). Pure: no loop,
 * no clock. */
#ifndef TELESCOPE_WORKLOAD_H
#define TELESCOPE_WORKLOAD_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"

#define WORKLOAD_MAX_STEPS 32
#define WORKLOAD_MAX_REPEAT 10
#define WORKLOAD_MAX_FINDER 128  /* characters in a finder, prefix included */
#define WORKLOAD_FINDER_BYTES (4 * WORKLOAD_MAX_FINDER) /* UTF-8: up to 4 bytes a character */
#define WORKLOAD_STEP_CUT_MS 10000 /* the watcher cuts a step after this (DRIVE 3) */
#define WORKLOAD_SLOP 18.0       /* Flutter's kTouchSlop (gestures/constants.dart) */
#define WORKLOAD_LINKED_BY "drive"

typedef enum { WL_SCROLL = 0, WL_FLING, WL_TAP, WL_WAIT, WL_BACK } wl_kind_t;

typedef struct {
  wl_kind_t kind;
  double dx, dy;   /* scroll, fling: logical px */
  int ms;          /* scroll: its duration; wait: how long */
  double velocity; /* fling: px/s */
  char finder[WORKLOAD_FINDER_BYTES + 1]; /* scroll/fling `in` ("" : the largest Scrollable), tap */
} wl_step_t;

typedef struct {
  wl_step_t steps[WORKLOAD_MAX_STEPS];
  size_t nsteps;
  int repeat;
  json_t *steps_json; /* the steps as given (a copy), as the watcher gets them */
} workload_t;

/* Checks the `workload` argument whole: {steps: [1..32 steps], repeat:
 * 1..10}. 0 and *w filled (workload_close frees it), or -1 with *w empty and
 * a message naming the field ("workload.steps[1].fling.velocity: …"). */
int workload_parse(workload_t *w, const json_t *v, char *err, size_t errlen);
void workload_close(workload_t *w);
/* A deep copy (0), or -1 out of memory with *dst empty. */
int workload_copy(workload_t *dst, const workload_t *src);

/* "fling key:feed", "scroll, wait 300 ms, tap text:Settings": the steps in
 * one line (cut with "…" at n). */
void workload_label(const workload_t *w, char *buf, size_t n);

/* flutter_driver (DRIVE 4): 0 when every step can be played through
 * ext.flutter.driver, else -1 naming the step that cannot (a scroll or
 * fling without `in`: flutter_driver has no "largest Scrollable"). */
int workload_driver_check(const workload_t *w, char *err, size_t errlen);
/* The ext.flutter.driver commands of one step at hz (under 1: 60; raised
 * so a scroll makes at least 2 moves), each an object
 * of string params (new reference): scroll/fling a `scroll` then
 * `waitUntilNoTransientCallbacks`, tap a `tap`, back a `tap` of `PageBack`,
 * wait none (the caller waits). NULL when out of memory. */
json_t *workload_driver_commands(const wl_step_t *s, double hz);
/* The pointer travel of a drag and a fling's duration (DRIVE 2): the slop is
 * consumed before the drag starts, so the pointer goes L + WORKLOAD_SLOP. */
int64_t workload_fling_duration_us(const wl_step_t *s);

/* The interaction a step's frames carry: "<drive>/r<run>/s<step>". */
void workload_interaction(char *buf, size_t n, const char *drive_id, int run, int step);
/* Reads "<drive>/r<run>/s<step>" back: 0 and run, step, the drive id in
 * id (n bytes), or -1. */
int workload_interaction_parse(const char *iid, char *id, size_t n, int *run, int *step);

/* summary.workload (new reference): the steps and their label, and per run
 * (1..repeat) its frames, janky frames, jank ratio and build and raster
 * p90 over the frames the drive attributed (start-up frames left out, as
 * the summary's jank does), then the spread across the runs that drew
 * frames (max − min; jank in points of 100). A frame is janky when its
 * build or raster exceeds budget_us. drive_id: the session's own drive
 * (other drives' frames are not its runs); NULL or "" takes the first
 * drive of the window. NULL when out of memory. */
json_t *workload_summary(const workload_t *w, const frame_t *frames, size_t n, int64_t budget_us,
                         const char *drive_id);

/* The verdict on one metric from per-run samples (compare with repeats):
 * "worse"/"better" when every run of one side lies beyond every run of the
 * other, by a gap of more than WORKLOAD_RUNS_GAP times the larger side's
 * spread, and the medians differ by at least min_delta; else "same". Needs
 * two runs on each side. With 3 runs a side and both sides alike, one
 * metric is called worse about 0.9 % of the time (normal runs, simulated),
 * against 3 % with a bare separation; a shift of 5 run-to-run standard
 * deviations is found 94 % of the time. */
#define WORKLOAD_RUNS_GAP 0.5
/* The median of v's n values (v is sorted in place); 0 when n is 0. */
double workload_median(double *v, size_t n);
const char *workload_runs_change(const double *a, size_t na, const double *b, size_t nb,
                                 double min_delta);

#endif
