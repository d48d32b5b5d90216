#include "sim_drive.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim.h"

#define HEAVY_EVERY 7         /* tiles 6, 13, 20, ... are HeavyTiles */
#define HEAVY_BUILD_US 24000  /* + up to 2 ms, seeded per tile */
#define LIGHT_BUILD_US 500    /* + up to 0.4 ms */
#define MAX_CANDIDATES 5
/* The app's start draws a few frames before the feed rests, as a real
 * launch does: a workload's first frames are then not the app's first
 * (which the server sets apart as startup, frame numbers 1-3). */
#define LAUNCH_FRAMES 4
/* Flutter's kMinFlingVelocity and kMaxFlingVelocity (px/s,
 * packages/flutter/lib/src/gestures/constants.dart). */
#define MIN_FLING 50.0
#define MAX_FLING 8000.0

/* ClampingScrollSimulation (packages/flutter/lib/src/widgets/
 * scroll_simulation.dart at 095d6b96): Android's spline fling. */
#define FRICTION 0.015
#define INFLEXION 0.35
#define PHYSICAL_COEFF (9.80665 * 39.37 * 160.0 * 0.84)

static const char *const state_names[] = {"none", "running", "done", "failed"};

static char *message_new(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *message_new(const char *fmt, ...) {
  char buf[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return strdup(buf);
}

void sim_drive_init(sim_t *s) {
  memset(&s->drive, 0, sizeof s->drive);
  s->drive.first_built = 0;
  s->drive.last_built = (int64_t)(SIM_FEED_H / SIM_FEED_TILE) - 1; /* built at startup */
  s->drive.launch_left = LAUNCH_FRAMES;
}

static void interaction_forget(sim_drive_t *d) {
  free(d->saved_id);
  free(d->saved_by);
  d->saved_id = d->saved_by = NULL;
}

void sim_drive_free(sim_t *s) {
  sim_drive_t *d = &s->drive;
  dp_plan_free(&d->plan);
  json_decref(d->candidates);
  json_decref(d->cut);
  interaction_forget(d);
}

void sim_drive_reset(sim_t *s) {
  sim_drive_free(s);
  sim_drive_init(s);
}

/* ---- the feed ---------------------------------------------------------- */

static int feed_on_screen(const sim_t *s) {
  return s->gen.scenario == SIM_SCENARIO_SCROLLLIST;
}

static int64_t first_visible(const sim_drive_t *d) {
  return (int64_t)floor(d->offset / SIM_FEED_TILE);
}

static int64_t last_visible(const sim_drive_t *d) {
  int64_t last = (int64_t)floor((d->offset + SIM_FEED_H - 1e-9) / SIM_FEED_TILE);
  return last < SIM_FEED_ITEMS ? last : SIM_FEED_ITEMS - 1;
}

static int heavy(int64_t tile) {
  return tile % HEAVY_EVERY == HEAVY_EVERY - 1;
}

/* How many on-screen widgets finder matches (the element walk of the
 * watcher), and the centre of the first one's box. The screen holds the
 * ListView (key feed; a Scrollable inside), and its visible tiles: each a
 * FeedTile or a HeavyTile holding a Text "Item N". */
static int feed_match(const sim_t *s, const char *finder, double *cx, double *cy) {
  const sim_drive_t *d = &s->drive;
  int64_t first = first_visible(d), last = last_visible(d), i;
  int n = 0;
  if (!feed_on_screen(s)) return 0;
  *cx = SIM_FEED_W / 2;
  *cy = SIM_FEED_H / 2;
  if (!strcmp(finder, "key:feed") || !strcmp(finder, "type:ListView") ||
      !strcmp(finder, "type:Scrollable"))
    return 1;
  for (i = first; i <= last; i++) {
    char text[32];
    snprintf(text, sizeof text, "text:Item %lld", (long long)i);
    if (!strcmp(finder, text) || !strcmp(finder, "type:Text") ||
        !strcmp(finder, heavy(i) ? "type:HeavyTile" : "type:FeedTile")) {
      if (n++ == 0) *cy = (double)i * SIM_FEED_TILE + SIM_FEED_TILE / 2 - d->offset;
    }
  }
  return n;
}

/* Up to 5 finders for what is on screen: keys, then texts, then the
 * scrollables' types (DRIVE.md §3). */
static json_t *candidates_new(const sim_t *s) {
  json_t *c = json_array();
  int64_t i;
  if (!feed_on_screen(s)) return c;
  json_array_append_new(c, json_string("key:feed"));
  for (i = first_visible(&s->drive); i <= last_visible(&s->drive); i++) {
    if (json_array_size(c) == MAX_CANDIDATES) return c;
    char text[32];
    snprintf(text, sizeof text, "text:Item %lld", (long long)i);
    json_array_append_new(c, json_string(text));
  }
  if (json_array_size(c) < MAX_CANDIDATES) json_array_append_new(c, json_string("type:ListView"));
  return c;
}

static uint64_t tile_seed(const sim_t *s, int64_t tile) {
  uint64_t r = s->cfg.seed ^ ((uint64_t)tile * 0x9E6C63D0676A9A99ull);
  return sim_rand_next(&r);
}

/* Builds the tiles that came on screen since the last frame (a ListView
 * disposes of those that left and builds those that enter). */
static int64_t tiles_build(sim_t *s, int64_t *heavy_us) {
  sim_drive_t *d = &s->drive;
  int64_t first = first_visible(d), last = last_visible(d), i, light_us = 0;
  for (i = first; i <= last; i++) {
    if (i >= d->first_built && i <= d->last_built) continue;
    d->tiles_built++;
    if (heavy(i)) {
      d->heavy_built++;
      *heavy_us += HEAVY_BUILD_US + (int64_t)(tile_seed(s, i) % 2000);
    } else {
      light_us += LIGHT_BUILD_US + (int64_t)(tile_seed(s, i) % 400);
    }
  }
  d->first_built = first;
  d->last_built = last;
  return light_us;
}

static double max_offset(void) {
  return SIM_FEED_ITEMS * SIM_FEED_TILE - SIM_FEED_H;
}

static double clamp_offset(double v) {
  return v < 0 ? 0 : v > max_offset() ? max_offset() : v;
}

static double decel_rate(void) {
  return log(0.78) / log(0.9);
}

/* After the pointer left at velocity (content px/s): a ballistic scroll,
 * unless too slow to fling. */
static void ballistic_start(sim_drive_t *d, double velocity, int64_t now_us) {
  if (fabs(velocity) < MIN_FLING) return;
  if (fabs(velocity) > MAX_FLING) velocity = velocity > 0 ? MAX_FLING : -MAX_FLING;
  double reference = FRICTION * PHYSICAL_COEFF / INFLEXION;
  d->ballistic = 1;
  d->bal_from = d->offset;
  d->bal_velocity = velocity;
  d->bal_start_us = now_us;
  d->bal_duration_s = decel_rate() * INFLEXION * pow(fabs(velocity) / reference, 1 / (decel_rate() - 1));
  d->bal_distance = velocity * d->bal_duration_s / decel_rate();
}

/* The scroll at time now_us: it settles at the simulation's end, at an
 * edge, or once it moves less than a pixel a frame. */
static void ballistic_step(sim_t *s, int64_t now_us) {
  sim_drive_t *d = &s->drive;
  double t = (double)(now_us - d->bal_start_us) / 1e6 / d->bal_duration_s;
  if (t > 1) t = 1;
  double x = d->bal_from + d->bal_distance * (1 - pow(1 - t, decel_rate()));
  double speed = fabs(d->bal_velocity) * pow(1 - t, decel_rate() - 1);
  d->offset = clamp_offset(x);
  if (t >= 1 || d->offset != x || speed / s->gen.fps < 1) d->ballistic = 0;
}

/* One pointer event into the feed's drag: the content follows the pointer
 * once it has gone past the touch slop. */
static void pointer_apply(sim_t *s, const dp_event_t *e, int64_t now_us) {
  sim_drive_t *d = &s->drive;
  double travel;
  switch (e->kind) {
    case DP_DOWN:
      d->pointer_down = 1;
      d->ballistic = 0; /* a touch stops a scroll in flight */
      d->down_y = e->y;
      d->down_offset = d->offset;
      break;
    case DP_MOVE:
      travel = d->down_y - e->y;
      if (fabs(travel) > DP_TOUCH_SLOP)
        d->offset = clamp_offset(d->down_offset + travel - (travel > 0 ? 1 : -1) * DP_TOUCH_SLOP);
      break;
    case DP_UP:
      d->pointer_down = 0;
      ballistic_start(d, d->release_vy, now_us);
      break;
  }
}

/* ---- the drive ---------------------------------------------------------- */

static dp_step_t *current(sim_drive_t *d) {
  return &d->steps[d->step - 1];
}

static void interaction_set_step(sim_t *s) {
  sim_drive_t *d = &s->drive;
  char id[48];
  if (d->by_driver || !s->model) return;
  snprintf(id, sizeof id, "%s/r%d/s%d", d->id, d->run, d->step);
  wm_set_interaction(s->model, id, "drive");
}

/* The drive is over: the pointer is released (a cut or a cancel), the
 * interaction from before comes back unless a stop ended the session. */
static void drive_end(sim_t *s, sim_drive_state_t state, int restore) {
  sim_drive_t *d = &s->drive;
  d->state = state;
  d->report_once = !d->by_driver;
  d->pointer_down = 0;
  d->step_started = 0;
  dp_plan_free(&d->plan);
  if (restore && !d->by_driver && s->model) wm_set_interaction(s->model, d->saved_id, d->saved_by);
  interaction_forget(d);
}

static void drive_fail(sim_t *s, json_t *candidates, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void drive_fail(sim_t *s, json_t *candidates, const char *fmt, ...) {
  sim_drive_t *d = &s->drive;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->error, sizeof d->error, fmt, ap);
  va_end(ap);
  json_decref(d->candidates);
  d->candidates = candidates;
  drive_end(s, SIM_DRIVE_FAILED, 1);
}

/* flutter_driver's scroll (handler_factory.dart _scroll): duration *
 * frequency / 1e6 moves (at least 1 here, where flutter_driver would
 * divide by zero), each (dx, dy) / moves and duration / moves apart, no
 * slop; down at the start and up after the last move. */
static int driver_plan(const sim_drive_t *d, const dp_step_t *st, double x, double y,
                       dp_plan_t *plan) {
  int64_t moves = (int64_t)((double)d->driver_duration_us * d->driver_hz / 1e6), i;
  if (moves < 1) moves = 1;
  int64_t pause = d->driver_duration_us / moves;
  memset(plan, 0, sizeof *plan);
  plan->events = malloc((size_t)(moves + 2) * sizeof *plan->events);
  if (!plan->events) return -1;
  plan->events[plan->n++] = (dp_event_t){0, DP_DOWN, x, y};
  for (i = 1; i <= moves; i++)
    plan->events[plan->n++] = (dp_event_t){i * pause, DP_MOVE, x + st->dx * (double)i / (double)moves,
                                            y + st->dy * (double)i / (double)moves};
  plan->events[plan->n++] = (dp_event_t){moves * pause, DP_UP, x + st->dx, y + st->dy};
  plan->duration_us = moves * pause;
  return 0;
}

/* Starts the current step: finds its target, plans its events. -1 when
 * the drive failed (a finder that matches nothing or several widgets). */
static int step_begin(sim_t *s, int64_t now_us) {
  sim_drive_t *d = &s->drive;
  dp_step_t *st = current(d);
  double x = 0, y = 0;
  const char *error = NULL;
  d->step_started = 1;
  d->step_start_us = now_us;
  d->step_frames = 0;
  d->next_event = 0;
  d->release_vy = 0;
  dp_plan_free(&d->plan);
  interaction_set_step(s);
  if (st->kind == DP_WAIT || st->kind == DP_BACK) return 0;
  /* Without "in", a drag goes to the largest visible Scrollable. */
  const char *finder = st->finder[0] ? st->finder : "type:Scrollable";
  int n = feed_match(s, finder, &x, &y);
  if (n != 1) {
    char what[24];
    snprintf(what, sizeof what, n ? "%d widgets" : "no widget", n);
    if (st->finder[0])
      drive_fail(s, candidates_new(s), "run %d step %d (%s): %s match%s \"%s\"", d->run, d->step,
                 dp_kind_name(st->kind), what, n > 1 ? "" : "es", finder);
    else
      drive_fail(s, candidates_new(s), "run %d step %d (%s): no Scrollable on screen", d->run,
                 d->step, dp_kind_name(st->kind));
    return -1;
  }
  int rc = d->by_driver && st->kind == DP_SCROLL ? driver_plan(d, st, x, y, &d->plan)
                                                   : dp_plan_make(st, x, y, s->gen.fps, &d->plan, &error);
  if (rc < 0) {
    drive_fail(s, NULL, "run %d step %d (%s): %s", d->run, d->step, dp_kind_name(st->kind),
               error ? error : "out of memory");
    return -1;
  }
  /* The content moves against the pointer: up the screen scrolls down. */
  if (d->plan.has_velocity)
    d->release_vy = -d->plan.vy;
  else if (d->plan.duration_us > 0)
    d->release_vy = -(d->plan.events[d->plan.n - 1].y - y) / ((double)d->plan.duration_us / 1e6);
  return 0;
}

static void step_next(sim_t *s) {
  sim_drive_t *d = &s->drive;
  d->step_started = 0;
  if (d->step < d->n_steps) {
    d->step++;
  } else if (d->run < d->runs) {
    d->run++;
    d->step = 1;
  } else {
    drive_end(s, SIM_DRIVE_DONE, 1);
  }
}

static int step_finished(const sim_t *s, int64_t now_us) {
  const sim_drive_t *d = &s->drive;
  const dp_step_t *st = &d->steps[d->step - 1];
  switch (st->kind) {
    case DP_WAIT:
      return now_us - d->step_start_us >= (int64_t)(st->ms * 1000);
    case DP_TAP:
    case DP_BACK:
      return d->step_frames >= 1;
    case DP_SCROLL:
    case DP_FLING:
      break;
  }
  return d->next_event == d->plan.n && !d->ballistic;
}

static uint64_t work_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A drive runs, or its fling still settles: the ticks and frames whose
 * drive work is counted (work_ns, work_frames). */
static int driving(const sim_drive_t *d) {
  return d->state == SIM_DRIVE_RUNNING || d->ballistic;
}

static int drive_tick(sim_t *s, int64_t now_us);

int sim_drive_tick(sim_t *s, int64_t now_us) {
  if (!driving(&s->drive)) return drive_tick(s, now_us);
  uint64_t t0 = work_now_ns();
  int driven = drive_tick(s, now_us);
  s->drive.work_ns += work_now_ns() - t0;
  return driven;
}

static int drive_tick(sim_t *s, int64_t now_us) {
  sim_drive_t *d = &s->drive;
  /* Each pass starts a step or ends one; a drive of zero-length waits
   * ends within one tick, every step visited once. */
  while (d->state == SIM_DRIVE_RUNNING) {
    if (!d->step_started && step_begin(s, now_us) < 0) break;
    if (now_us - d->step_start_us >= DP_STEP_CUT_US) {
      char at[24];
      snprintf(at, sizeof at, "%d/%d", d->run, d->step);
      json_array_append_new(d->cut, json_string(at));
      d->cuts++;
      d->pointer_down = 0; /* released: a cancel, no fling */
      d->ballistic = 0;
      step_next(s);
      continue;
    }
    if (!step_finished(s, now_us)) break;
    step_next(s);
  }
  if (d->ballistic || (d->launch_left > 0 && feed_on_screen(s))) return 1;
  return d->state == SIM_DRIVE_RUNNING && d->step_started && current(d)->kind != DP_WAIT;
}

static int64_t drive_frame(sim_t *s, int64_t vsync_us, int64_t *heavy_us) {
  sim_drive_t *d = &s->drive;
  *heavy_us = 0;
  if (!feed_on_screen(s)) {
    if (d->state == SIM_DRIVE_RUNNING && d->step_started) d->step_frames++; /* a back */
    return 0;
  }
  d->feed_frames++;
  if (d->launch_left > 0) d->launch_left--;
  if (d->state == SIM_DRIVE_RUNNING && d->step_started) {
    /* One move a frame: the k-th frame of the step delivers the events
     * planned up to k periods in, counted in frames (not the wall clock),
     * so a loaded machine plays the same gesture. */
    int64_t due = (int64_t)((double)d->step_frames * 1e6 / s->gen.fps);
    while (d->next_event < d->plan.n && d->plan.events[d->next_event].t_us <= due)
      pointer_apply(s, &d->plan.events[d->next_event++], vsync_us);
    d->step_frames++;
  }
  /* A scroll released in this frame moves from the next one on. */
  if (d->ballistic && d->bal_start_us != vsync_us) ballistic_step(s, vsync_us);
  return tiles_build(s, heavy_us);
}

int64_t sim_drive_frame(sim_t *s, int64_t vsync_us, int64_t *heavy_us) {
  sim_drive_t *d = &s->drive;
  int driven = driving(d);
  uint64_t t0 = work_now_ns();
  int64_t build = drive_frame(s, vsync_us, heavy_us);
  if (driven) {
    d->work_ns += work_now_ns() - t0;
    d->work_frames++;
  }
  return build;
}

/* ---- the actions ------------------------------------------------------ */

static const char *param_text(json_t *params, const char *key, char *buf, size_t n) {
  json_t *v = json_object_get(params, key);
  if (json_is_string(v)) return json_string_value(v);
  if (json_is_integer(v)) {
    snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    return buf;
  }
  return NULL;
}

/* A drive's first state: run 1, step 1, the interaction saved. */
static void drive_begin(sim_t *s, int n_steps, int runs) {
  sim_drive_t *d = &s->drive;
  d->n_steps = n_steps;
  d->runs = runs;
  d->run = d->step = 1;
  d->step_started = 0;
  d->state = SIM_DRIVE_RUNNING;
  d->report_once = 0;
  d->error[0] = '\0';
  json_decref(d->candidates);
  d->candidates = NULL;
  json_decref(d->cut);
  d->cut = json_array();
  interaction_forget(d);
  if (!d->by_driver && s->model && wm_interaction_id(s->model)) {
    d->saved_id = strdup(wm_interaction_id(s->model));
    d->saved_by = strdup(wm_interaction_linked_by(s->model));
  }
}

int sim_drive_start(sim_t *s, json_t *params, int64_t now_us, char **message) {
  sim_drive_t *d = &s->drive;
  char buf[32], *detail = NULL;
  dp_step_t steps[DP_MAX_STEPS];
  *message = NULL;
  if (d->state == SIM_DRIVE_RUNNING) {
    *message = message_new("a drive is running (%s)", d->id);
    return -32000;
  }
  const char *repeat = param_text(params, "repeat", buf, sizeof buf);
  int runs = 1;
  if (repeat) {
    char *end;
    long v = strtol(repeat, &end, 10);
    if (!*repeat || *end || v < 1 || v > DP_MAX_REPEAT || repeat[0] == '+' || repeat[0] == ' ') {
      *message = message_new("repeat must be a decimal 1-%d, got \"%s\"", DP_MAX_REPEAT, repeat);
      return -32602;
    }
    runs = (int)v;
  }
  json_t *text = json_object_get(params, "steps");
  if (!json_is_string(text)) {
    *message = message_new("steps must be the steps as JSON text (an array of 1-%d steps)",
                           DP_MAX_STEPS);
    return -32602;
  }
  int n = dp_steps_parse(json_string_value(text), steps, &detail);
  if (n < 0) {
    *message = detail;
    return -32602;
  }
  for (int i = 0; i < n; i++) {
    dp_plan_t probe;
    const char *error;
    if (dp_plan_make(&steps[i], 0, 0, 60, &probe, &error) < 0) {
      *message = message_new("steps[%d].%s: %s (dx and dy are both 0)", i,
                             dp_kind_name(steps[i].kind), error);
      return -32602;
    }
    dp_plan_free(&probe);
  }
  memcpy(d->steps, steps, (size_t)n * sizeof *steps);
  d->by_driver = 0;
  snprintf(d->id, sizeof d->id, "d%u", ++d->counter);
  drive_begin(s, n, runs);
  /* The first step starts now: a bad finder is in this very reply. */
  sim_drive_tick(s, now_us);
  return 0;
}

int sim_drive_driver_step(sim_t *s, const dp_step_t *step, int64_t duration_us, double hz,
                          int64_t now_us, char **message) {
  sim_drive_t *d = &s->drive;
  *message = NULL;
  if (d->state == SIM_DRIVE_RUNNING) {
    *message = message_new(d->by_driver ? "a gesture is in progress" : "a drive is running (%s)",
                           d->id);
    return -1;
  }
  d->steps[0] = *step;
  d->by_driver = 1;
  d->driver_duration_us = duration_us;
  d->driver_hz = hz;
  drive_begin(s, 1, 1);
  sim_drive_tick(s, now_us);
  if (d->state == SIM_DRIVE_FAILED) {
    *message = strdup(d->error);
    return -1;
  }
  return 0;
}

void sim_drive_cancel(sim_t *s) {
  /* A flutter_driver gesture is not the watcher's to stop. */
  if (s->drive.state != SIM_DRIVE_RUNNING || s->drive.by_driver) return;
  snprintf(s->drive.error, sizeof s->drive.error, "cancelled by stop");
  drive_end(s, SIM_DRIVE_FAILED, 0); /* stop has cleared the interaction */
}

void sim_drive_reply_add(sim_t *s, json_t *reply, int own) {
  sim_drive_t *d = &s->drive;
  if (d->by_driver || d->state == SIM_DRIVE_NONE) return;
  if (d->state != SIM_DRIVE_RUNNING && !d->report_once && !own) return;
  if (d->state != SIM_DRIVE_RUNNING) d->report_once = 0;
  json_t *o = json_pack("{s:s, s:s, s:i, s:i, s:i, s:i}", "id", d->id, "state",
                        state_names[d->state], "run", d->run, "runs", d->runs, "step", d->step,
                        "of", d->n_steps);
  if (!o) return;
  if (d->error[0]) json_object_set_new(o, "error", json_string(d->error));
  if (d->candidates) json_object_set(o, "candidates", d->candidates);
  if (json_array_size(d->cut)) json_object_set(o, "cut", d->cut);
  json_object_set_new(reply, "drive", o);
}

int sim_drive_busy(const sim_t *s) {
  return s->drive.state == SIM_DRIVE_RUNNING;
}

int sim_drive_animating(const sim_t *s) {
  return s->drive.ballistic;
}

json_t *sim_drive_stats_json(const sim_t *s) {
  const sim_drive_t *d = &s->drive;
  return json_pack("{s:f, s:I, s:I, s:I, s:I, s:b, s:s, s:I, s:I, s:I, s:I}", "offset", d->offset, "cuts",
                   (json_int_t)d->cuts, "tilesBuilt", (json_int_t)d->tiles_built, "heavyBuilt", (json_int_t)d->heavy_built,
                   "feedFrames", (json_int_t)d->feed_frames, "animating", d->ballistic, "state",
                   state_names[d->state], "firstVisible", (json_int_t)first_visible(d),
                   "lastVisible", (json_int_t)last_visible(d), "driveWorkNs", (json_int_t)d->work_ns,
                   "drivenFrames", (json_int_t)d->work_frames);
}
