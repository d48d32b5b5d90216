/* A workload played during a capture or a session (issue 32; DRIVE 3, 4;
 * docs/tool.md "Workload"). With the watcher, one `drive` request and the
 * app plays the steps itself; its progress comes back in the `drive` of
 * every reply (appfacts keeps the newest), which the session's drain brings
 * every SESSIONS_DRAIN_MS, so this only looks, and asks for a status only
 * when no reply came for a while. Without the watcher but with
 * ext.flutter.driver, each step is flutter_driver's own commands, sent one
 * after the other, the frames attributed by a mark per step. With neither,
 * the call fails saying what to add: never an empty capture. */
#include "actions.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DRIVE_LOOK_MS 100      /* how often the capture looks at the drive's state */
#define DRIVE_ASK_AFTER_MS 600 /* no reply for this long: ask for a status */
#define DRIVE_SETTLE_MS 400    /* after the drive ended: the last frames reach a drain */
#define DRIVE_BOUND_SLACK_MS 5000

static const char *const NEITHER =
    "workload: the app has neither the telescope watcher nor flutter_driver's extension, so "
    "nothing can play the steps. Add the watcher (package telescope: "
    "`TelescopePlugin.install(); TelescopePlugin.registerWatcher(FramePerfWatcher());` in main, "
    "README \"Quick start with your app\") or call `enableFlutterDriverExtension()` (package "
    "flutter_driver) before runApp, then restart the app";

/* A drive that could not start: the session closes, then the call fails
 * with the message op->drive_json holds. */
static void aborted(void *arg, session_t *s, const wp_status_t *st) {
  op_t *op = arg;
  (void)st;
  op->wait = NULL;
  if (s) session_unref(s);
  op_fail_text(op, "%s", json_string_value(json_object_get(op->drive_json, "error")));
}

static void drive_abort(op_t *op, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void drive_abort(op_t *op, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  json_decref(op->drive_json);
  op->drive_json = json_pack("{s:s,s:s}", "state", "failed", "error", msg);
  if (op->app) fe_closing(op->app->fe);
  session_t *s = op->s;
  op->s = NULL;
  if (!(op->wait = sessions_close(op->app->sessions, s, aborted, op)))
    op_fail_text(op, "%s", msg);
  session_unref(s);
}

/* The outcome as summary.workload.drive: {id, via, state, run, runs, step,
 * of, error?, candidates?, cut?}. */
static json_t *outcome_json(const record_drive_t *d, const char *via) {
  json_t *o = json_pack("{s:s,s:s,s:s,s:i,s:i,s:i,s:i}", "id", d->id, "via", via, "state",
                        d->state, "run", d->run, "runs", d->runs, "step", d->step, "of", d->of);
  if (!o) return NULL;
  if (d->error[0]) json_object_set_new(o, "error", json_string(d->error));
  if (d->ncandidates) {
    json_t *c = json_array();
    for (int i = 0; c && i < d->ncandidates; i++) json_array_append_new(c, json_string(d->candidates[i]));
    json_object_set_new(o, "candidates", c);
  }
  if (d->ncut) {
    json_t *c = json_array();
    for (int i = 0; c && i < d->ncut; i++) json_array_append_new(c, json_string(d->cut[i]));
    json_object_set_new(o, "cut", c);
  }
  return o;
}

static uint64_t bound_ms(const op_t *op) {
  const workload_t *w = &op->a.workload;
  if (op->a.duration_ms >= 0) return (uint64_t)op->a.duration_ms;
  return (uint64_t)w->repeat * w->nsteps * (WORKLOAD_STEP_CUT_MS + 1000) + DRIVE_BOUND_SLACK_MS;
}

static void progress(op_t *op, int run, int runs, int step, int of) {
  char msg[160];
  if (!op->call) return;
  snprintf(msg, sizeof msg, "workload: run %d of %d, step %d of %d", run, runs, step, of);
  tool_call_progress(op->call, (double)((run - 1) * of + step - 1), (double)runs * of, msg);
}

/* ---- with the watcher ---------------------------------------------------- */

static void watch(uv_timer_t *t);

static void status_seen(void *arg, const wp_status_t *st, const record_reply_t *r) {
  (void)arg; /* the reply went through appfacts already: watch() reads it */
  (void)st;
  (void)r;
}

static void drive_sent(void *arg, const wp_status_t *st, const record_reply_t *r) {
  op_t *op = arg;
  if (wp_failed(st)) {
    if (st->diag == DIAG_WATCHER_ERROR && st->rpc_code == -32602)
      drive_abort(op, "workload: the app refused the steps: %s", st->detail);
    else if (st->diag == DIAG_WATCHER_ERROR)
      drive_abort(op, "workload: the watcher did not start the drive: %s", st->detail);
    else
      drive_abort(op, "workload: the drive request failed: %s", st->detail);
    return;
  }
  if (!r->drive.present) {
    drive_abort(op, "workload: this watcher does not play workloads (its reply to action drive has "
                    "no `drive`): update the telescope package in the app");
    return;
  }
  session_set_drive_id(op->s, r->drive.id);
  snprintf(op->drive_run_id, sizeof op->drive_run_id, "%s", r->run_id);
  json_decref(op->drive_json);
  op->drive_json = outcome_json(&r->drive, "watcher");
  op->drive_bound = uv_now(op->ctx->loop) + bound_ms(op);
  if (op->drive_sent)
    op->drive_sent(op);
  else
    watch(&op->timer);
}

/* The capture looks at the newest `drive` any reply brought. */
static void watch(uv_timer_t *t) {
  op_t *op = op_from_timer(t);
  uint64_t now = uv_now(op->ctx->loop);
  const record_drive_t *d = &op->app->facts.drive;
  if (!op->drive_ended && !op->app->facts.frame_events &&
      strcmp(op->app->facts.run_id, op->drive_run_id)) {
    /* The watcher answers from a new run (a hot restart, a new app): the
     * drive went with the old isolate, and waiting for its end would wait
     * out the bound. (Frame events while the watcher is away are another
     * source, not another run: the drive may still play.) */
    json_object_set_new(op->drive_json, "state", json_string("failed"));
    json_object_set_new(op->drive_json, "error",
                        json_string("the app restarted during the drive: the new run plays nothing"));
    op->drive_ended = 1;
    op->drive_end_ms = now;
    op->drive_failed = 1;
  }
  int ours = d->present && !strcmp(d->id, session_drive_id(op->s));
  if (ours && !op->drive_ended) {
    json_decref(op->drive_json);
    op->drive_json = outcome_json(d, "watcher");
    if (strcmp(d->state, "running")) {
      op->drive_ended = 1;
      op->drive_end_ms = now;
      op->drive_failed = !strcmp(d->state, "failed");
    } else if (now - op->last_progress >= 1000) {
      op->last_progress = now;
      progress(op, d->run, d->runs, d->step, d->of);
    }
  }
  if (op->drive_ended && now >= op->drive_end_ms + DRIVE_SETTLE_MS) {
    op->drive_ended_cb(op);
    return;
  }
  if (!op->drive_ended && now >= op->drive_bound) {
    op_warn(op, "workload: still playing after %llu ms; the capture stopped it (give a longer "
                "durationMs, or fewer steps)",
            (unsigned long long)bound_ms(op));
    if (op->drive_json) json_object_set_new(op->drive_json, "stoppedByCapture", json_true());
    op->drive_ended_cb(op);
    return;
  }
  if (!op->wpc && now >= op->app->facts.at_ms + DRIVE_ASK_AFTER_MS) {
    wp_request_t req = {WP_STATUS, 0, 0, NULL, NULL};
    if (op_wp(op, &req, status_seen) < 0) return;
  }
  op_timer(op, DRIVE_LOOK_MS, watch);
}

/* ---- with flutter_driver -------------------------------------------------- */

static void drv_step(op_t *op);

static void drv_over(op_t *op) {
  op->drive_ended = 1;
  op->drive_end_ms = uv_now(op->ctx->loop);
  op->drive_ended_cb(op);
}

static void drv_settled(uv_timer_t *t) {
  drv_over(op_from_timer(t));
}

/* The interaction is ended (mark without one) once the steps are over. */
static void drv_unmarked(void *arg, const wp_status_t *st, const record_reply_t *r) {
  op_t *op = arg;
  (void)st;
  (void)r;
  op_timer(op, DRIVE_SETTLE_MS, drv_settled);
}

static void drv_finish(op_t *op, const char *state, const char *error) {
  json_object_set_new(op->drive_json, "state", json_string(state));
  json_object_set_new(op->drive_json, "run", json_integer(op->drive_run));
  json_object_set_new(op->drive_json, "step", json_integer(op->drive_step));
  if (error) json_object_set_new(op->drive_json, "error", json_string(error));
  op->drive_failed = error != NULL;
  wp_request_t req = {WP_MARK, 0, 0, NULL, NULL};
  op_wp(op, &req, drv_unmarked);
}

static void drv_send(op_t *op);

static void drv_replied(void *arg, const vm_result_t *res) {
  op_t *op = arg;
  op->vmc = NULL;
  const json_t *resp = json_object_get(res->result, "response");
  if (res->diag == DIAG_NONE && !res->rpc_code && !json_is_true(json_object_get(res->result, "isError"))) {
    drv_send(op);
    return;
  }
  char label[256], error[700];
  const json_t *cmd = json_array_get(op->drive_cmds, op->drive_cmd - 1);
  char *said = resp ? json_dumps(resp, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
  workload_t one = op->a.workload;
  one.steps[0] = op->a.workload.steps[op->drive_step - 1];
  one.nsteps = 1;
  workload_label(&one, label, sizeof label);
  snprintf(error, sizeof error, "step %d (%s), flutter_driver `%s`: %s", op->drive_step, label,
           json_string_value(json_object_get(cmd, "command")),
           res->diag != DIAG_NONE || res->rpc_code ? (res->detail ? res->detail : "failed")
           : said                                  ? said
                                                   : "isError");
  free(said);
  drv_finish(op, "failed", error);
}

/* The step's next command, or the next step once they are all answered. */
static void drv_send(op_t *op) {
  json_t *cmd = json_array_get(op->drive_cmds, op->drive_cmd);
  if (!cmd) {
    drv_step(op);
    return;
  }
  op->drive_cmd++;
  op->vmc = vm_app_call_extension(op->app->app, VM_APP_DRIVER_EXTENSION, json_deep_copy(cmd),
                                  drv_replied, op);
  if (!op->vmc) op_fail_text(op, "internal error: out of memory");
}

static void drv_waited(uv_timer_t *t) {
  drv_send(op_from_timer(t));
}

/* The step's interaction is set: play it. */
static void drv_marked(void *arg, const wp_status_t *st, const record_reply_t *r) {
  op_t *op = arg;
  (void)r;
  if (wp_failed(st)) {
    drv_finish(op, "failed", st->detail);
    return;
  }
  const wl_step_t *s = &op->a.workload.steps[op->drive_step - 1];
  if (s->kind == WL_WAIT)
    op_timer(op, (uint64_t)s->ms, drv_waited);
  else
    drv_send(op);
}

static void drv_step(op_t *op) {
  const workload_t *w = &op->a.workload;
  if (op->drive_step < (int)w->nsteps) {
    op->drive_step++;
  } else if (op->drive_run < w->repeat) {
    op->drive_run++;
    op->drive_step = 1;
  } else {
    drv_finish(op, "done", NULL);
    return;
  }
  progress(op, op->drive_run, w->repeat, op->drive_step, (int)w->nsteps);
  double hz = session_refresh_rate(op->s);
  json_decref(op->drive_cmds);
  op->drive_cmds = workload_driver_commands(&w->steps[op->drive_step - 1], hz);
  op->drive_cmd = 0;
  if (!op->drive_cmds) {
    op_fail_text(op, "internal error: out of memory");
    return;
  }
  char iid[RECORD_MAX_INTERACTION + 1];
  workload_interaction(iid, sizeof iid, session_drive_id(op->s), op->drive_run, op->drive_step);
  wp_request_t req = {WP_MARK, 0, 0, iid, WORKLOAD_LINKED_BY};
  op_wp(op, &req, drv_marked);
}

/* ---- the start ------------------------------------------------------------ */

void action_drive(op_t *op, void (*sent)(op_t *op), void (*ended)(op_t *op)) {
  op->drive_sent = sent;
  op->drive_ended_cb = ended;
  const workload_t *w = &op->a.workload;
  char err[400];
  if (!session_frame_events(op->s)) {
    /* A capture of this app whose drive we have not yet seen end: the app
     * would take a second drive once the first ended, and the end the
     * first capture waits for would never be reported (a reply carries
     * one drive), leaving it to wait out its bound. */
    for (op_t *o = op->ctx->ops; o; o = o->next)
      if (o != op && o->app == op->app && o->drive_mode == 1 && !o->drive_ended && o->drive_ended_cb) {
        drive_abort(op, "workload: a drive is running (%s, of another capture): wait for that one",
                    o->s ? session_drive_id(o->s) : "");
        return;
      }
    char *steps = json_dumps(w->steps_json, JSON_COMPACT);
    if (!steps) {
      op_fail_text(op, "internal error: out of memory");
      return;
    }
    op->drive_mode = 1;
    op_wp_drive(op, steps, w->repeat, drive_sent); /* the params are copied */
    free(steps);
    return;
  }
  if (!op->app->app || !vm_app_has_driver(op->app->app)) {
    drive_abort(op, "%s", NEITHER);
    return;
  }
  if (workload_driver_check(w, err, sizeof err) < 0) {
    drive_abort(op, "%s", err);
    return;
  }
  if (!ended) {
    drive_abort(op, "workload: without the watcher a workload plays only in a capture (the "
                    "call itself sends flutter_driver's commands, one step after the other): use "
                    "action capture, or add the watcher");
    return;
  }
  char id[32];
  snprintf(id, sizeof id, "d%s", session_id(op->s) + 1); /* s4 -> d4 */
  session_set_drive_id(op->s, id);
  op->drive_mode = 2;
  op->drive_run = 1;
  op->drive_step = 0;
  op->drive_json = json_pack("{s:s,s:s,s:s,s:i,s:i,s:i,s:i}", "id", id, "via", "flutterDriver",
                             "state", "running", "run", 1, "runs", w->repeat, "step", 1, "of",
                             (int)w->nsteps);
  op->drive_bound = uv_now(op->ctx->loop) + bound_ms(op);
  drv_step(op);
}

/* ---- the answer ------------------------------------------------------------ */

void action_drive_put(op_t *op, json_t *r) {
  const workload_t *w = op->s ? session_workload(op->s) : NULL;
  if (!w || !r) return;
  store_t *st = session_store(op->s);
  size_t n = st ? store_recent_count(st) : 0;
  frame_t *frames = calloc(n ? n : 1, sizeof *frames); /* shallow copies */
  if (!frames) return;
  for (size_t i = 0; i < n; i++) frames[i] = *store_recent_at(st, i);
  json_t *wl = workload_summary(w, frames, n, session_budget_us(op->s), session_drive_id(op->s));
  free(frames);
  if (!wl) return;
  /* A stop's drive was started by another call: its outcome is the newest
   * `drive` of the app when it is this session's. */
  const record_drive_t *d = op->app ? &op->app->facts.drive : NULL;
  json_t *dj = op->drive_json ? json_incref(op->drive_json)
               : d && d->present && !strcmp(d->id, session_drive_id(op->s)) ? outcome_json(d, "watcher")
                                                                            : NULL;
  const char *state = json_string_value(json_object_get(dj, "state"));
  if (state && !strcmp(state, "failed")) op->drive_failed = 1;
  if (dj) json_object_set_new(wl, "drive", dj);
  json_t *sum = json_object_get(r, "summary");
  json_object_set_new(sum ? sum : r, "workload", wl);
}
