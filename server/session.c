#include "session.h"
#include "container_of.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

#define MAX_WAITERS 32
#define MAX_SIDE_CALLS 8

static const char *const track_ext[TRACK__COUNT] = {
    "ext.flutter.profileWidgetBuilds",
    "ext.flutter.profileRenderObjectLayouts",
    "ext.flutter.profileRenderObjectPaints",
};
static const char *const track_name[TRACK__COUNT] = {"widgets", "layouts", "paints"};

typedef enum { S_OPENING, S_ACTIVE, S_CLOSING, S_STOPPED } state_t;

typedef struct {
  uint64_t gen; /* satisfied once a drain of this generation finished */
  session_done_cb cb;
  void *arg;
} waiter_t;

typedef struct {
  vm_call_t *call; /* NULL when the slot is free */
} side_t;

struct session {
  uv_loop_t *loop;
  vm_app_t *app;
  char id[32];
  char *interaction_id, *linked_by;
  double budget_ms;
  int64_t budget_us;
  int track_req[TRACK__COUNT];
  int track_prev[TRACK__COUNT]; /* the value before we switched it; -1 unknown */
  int track_on[TRACK__COUNT];   /* we switched it on */
  store_t *store;
  store_t *taps[SESSION_MAX_TAPS];
  size_t ntaps;
  uv_timer_t timer;
  int timer_running;
  uint64_t started_ms, stopped_ms;
  state_t state;
  session_reply_cb on_reply;
  void *reply_arg;

  /* The background drain: at most one in flight. */
  vm_call_t *drain_call;
  int restart_reread; /* the reply in flight is the re-read of a new run */
  int drain_again;    /* someone asked for a drain while one was in flight */
  uint64_t gen_started, gen_done;
  waiter_t waiters[MAX_WAITERS];
  size_t nwaiters;
  session_status_t last_error;

  /* Open and close run as a sequence of steps, one call at a time. */
  vm_call_t *step_call;
  int step;
  session_done_cb step_done;
  void *step_arg;
  session_status_t step_status;

  /* Fire-and-forget calls (re-enabling after a restart). */
  side_t side[MAX_SIDE_CALLS];

  int abandoned;
  int freeing;
  session_t *live_next, *live_prev; /* every session alive, for session_free_all */
};

static session_t *live;

static uint64_t now_ms(session_t *s) { return uv_now(s->loop); }

static void status_set(session_status_t *st, diag_code_t diag, int rpc_code, const char *detail) {
  st->diag = diag;
  st->rpc_code = rpc_code;
  snprintf(st->detail, sizeof st->detail, "%s", detail ? detail : "");
}

/* The outcome of a VM call as a session status; 0 when it succeeded. */
static int status_from(session_status_t *st, const vm_result_t *res) {
  if (res->diag != DIAG_NONE || res->rpc_code != 0) {
    diag_code_t d = res->diag;
    if (d == DIAG_NONE && (res->rpc_code == RPC_PARSE_ERROR || res->rpc_code == RPC_INTERNAL_ERROR))
      d = DIAG_INVALID_REPLY;
    status_set(st, d, res->rpc_code, res->detail);
    return -1;
  }
  status_set(st, DIAG_NONE, 0, NULL);
  return 0;
}

static json_t *watcher_params(const char *action) {
  return json_pack("{s:s}", "action", action);
}

static vm_call_t *ext_call(session_t *s, json_t *params, vm_reply_cb cb) {
  return vm_app_call_extension(s->app, VM_APP_WATCHER_EXTENSION, params, cb, s);
}

/* ---- the drain ------------------------------------------------------- */

static void drain_send(session_t *s, int64_t since);

static void drain_finish(session_t *s) {
  s->gen_done = s->gen_started;
  /* Waiters satisfied by this generation are called; a callback may add
   * waiters or free the session, so work on a copy. */
  waiter_t ready[MAX_WAITERS];
  size_t nready = 0, keep = 0;
  for (size_t i = 0; i < s->nwaiters; i++) {
    if (s->waiters[i].gen <= s->gen_done)
      ready[nready++] = s->waiters[i];
    else
      s->waiters[keep++] = s->waiters[i];
  }
  s->nwaiters = keep;
  session_status_t st = s->last_error;
  if (s->drain_again) {
    s->drain_again = 0;
    s->gen_started++;
    drain_send(s, store_last_seq(s->store));
  }
  for (size_t i = 0; i < nready; i++) ready[i].cb(ready[i].arg, s, &st);
}

static void side_reply(void *arg, const vm_result_t *res) {
  side_t *slot = arg;
  /* Best effort: a failure shows up in the next drain or status. */
  if (res->diag != DIAG_NONE || res->rpc_code != 0)
    log_debug("session: re-enabling after a restart failed: %s", res->detail);
  slot->call = NULL;
}

static void side_call(session_t *s, const char *method, json_t *params) {
  for (size_t i = 0; i < MAX_SIDE_CALLS; i++)
    if (!s->side[i].call) {
      s->side[i].call = vm_app_call_extension(s->app, method, params, side_reply, &s->side[i]);
      return;
    }
  json_decref(params);
  log_warn("session %s: too many calls in flight; %s not sent", s->id, method);
}

/* After a hot restart the new run starts with collection off and Flutter's
 * debug switches reset: switch them on again. */
static void reenable(session_t *s) {
  json_t *p = watcher_params("start");
  if (s->interaction_id) {
    json_object_set_new(p, "interactionId", json_string(s->interaction_id));
    json_object_set_new(p, "linkedBy", json_string(s->linked_by ? s->linked_by : "agent"));
  }
  side_call(s, VM_APP_WATCHER_EXTENSION, p);
  for (int t = 0; t < TRACK__COUNT; t++)
    if (s->track_on[t]) side_call(s, track_ext[t], json_pack("{s:s}", "enabled", "true"));
}

static void drain_reply(void *arg, const vm_result_t *res) {
  session_t *s = arg;
  s->drain_call = NULL;
  if (status_from(&s->last_error, res) < 0) {
    log_debug("session %s: drain failed: %s", s->id, s->last_error.detail);
    s->restart_reread = 0;
    drain_finish(s);
    return;
  }
  record_reply_t r;
  char err[RECORD_ERR_LEN];
  if (record_reply_parse(&r, res->result, err, sizeof err) < 0 || !r.has_records) {
    status_set(&s->last_error, DIAG_INVALID_REPLY, 0, r.has_records ? err : "no records in a read reply");
    if (!r.has_records) record_reply_close(&r);
    s->restart_reread = 0;
    drain_finish(s);
    return;
  }
  if (s->on_reply) s->on_reply(s->reply_arg, &r);
  const char *run = store_run_id(s->store);
  if (run && strcmp(run, r.run_id) != 0 && !s->restart_reread) {
    /* A hot restart: this reply read the new run from our old position.
     * Read it from its start instead, and switch attribution on again. */
    log_info("session %s: the app restarted; following the new run", s->id);
    record_reply_close(&r);
    s->restart_reread = 1;
    reenable(s);
    drain_send(s, 0);
    return;
  }
  s->restart_reread = 0;
  if (store_add_reply(s->store, &r, NULL) < 0)
    status_set(&s->last_error, DIAG_NONE, RPC_INTERNAL_ERROR, "out of memory");
  for (size_t i = 0; i < s->ntaps; i++) store_add_reply(s->taps[i], &r, NULL);
  int more = r.more;
  record_reply_close(&r);
  if (more) {
    drain_send(s, store_last_seq(s->store));
    return;
  }
  drain_finish(s);
}

static void drain_send(session_t *s, int64_t since) {
  json_t *p = watcher_params("read");
  json_object_set_new(p, "since", json_integer(since));
  json_object_set_new(p, "limit", json_integer(SESSION_READ_LIMIT));
  s->drain_call = ext_call(s, p, drain_reply);
  if (!s->drain_call) {
    status_set(&s->last_error, DIAG_NONE, RPC_INTERNAL_ERROR, "out of memory");
    drain_finish(s);
  }
}

static void drain_start(session_t *s) {
  if (s->drain_call) {
    s->drain_again = 1;
    return;
  }
  s->gen_started++;
  drain_send(s, store_last_seq(s->store));
}

static void on_timer(uv_timer_t *t) {
  session_t *s = container_of(t, session_t, timer);
  if (!s->drain_call) drain_start(s);
}

void session_drain(session_t *s, session_done_cb done, void *arg) {
  if (s->nwaiters == MAX_WAITERS) {
    session_status_t st;
    status_set(&st, DIAG_NONE, RPC_INTERNAL_ERROR, "too many reads waiting for the drain");
    done(arg, s, &st); /* only reachable with 32 calls in flight at once */
    return;
  }
  /* Satisfied by the next drain to start: one in flight began too early. */
  s->waiters[s->nwaiters++] = (waiter_t){s->gen_started + 1, done, arg};
  drain_start(s);
}

void session_kick(session_t *s) {
  if (s->state == S_ACTIVE) drain_start(s);
}

/* ---- open and close: a sequence of steps ------------------------------ */

static void step_fail(session_t *s, const session_status_t *st);
static void open_next(session_t *s);
static void close_next(session_t *s);

static void track_get_reply(void *arg, const vm_result_t *res);
static void track_set_reply(void *arg, const vm_result_t *res);
static void close_track_reply(void *arg, const vm_result_t *res);

static int track_enabled_value(const json_t *result) {
  const json_t *v = json_object_get(result, "enabled");
  const char *sv = json_string_value(v);
  if (sv) return strcmp(sv, "true") == 0;
  if (json_is_boolean(v)) return json_is_true(v);
  return -1;
}

/* Every step's reply starts here: 1 when the call failed (the step is then
 * already failed). */
static int step_reply_failed(session_t *s, const vm_result_t *res) {
  s->step_call = NULL;
  session_status_t st;
  if (status_from(&st, res) < 0) {
    step_fail(s, &st);
    return 1;
  }
  return 0;
}

static void open_start_reply(void *arg, const vm_result_t *res) {
  session_t *s = arg;
  if (step_reply_failed(s, res)) return;
  session_status_t st;
  record_reply_t r;
  char err[RECORD_ERR_LEN];
  if (record_reply_parse(&r, res->result, err, sizeof err) < 0) {
    status_set(&st, DIAG_INVALID_REPLY, 0, err);
    step_fail(s, &st);
    return;
  }
  if (s->on_reply) s->on_reply(s->reply_arg, &r);
  s->budget_us = summary_budget_us(s->budget_ms, r.refresh_rate);
  s->store = store_new(s->budget_us);
  /* The start reply fixes where the session begins: after its lastSeq. */
  if (!s->store || store_add_reply(s->store, &r, NULL) < 0) {
    record_reply_close(&r);
    status_set(&st, DIAG_NONE, RPC_INTERNAL_ERROR, "out of memory");
    step_fail(s, &st);
    return;
  }
  record_reply_close(&r);
  s->step = 0;
  open_next(s);
}

/* Steps after the watcher start: for each requested switch, read its value,
 * then switch it on. step counts 2 per switch. */
static void open_next(session_t *s) {
  while (s->step < 2 * TRACK__COUNT) {
    int t = s->step / 2;
    if (!s->track_req[t]) {
      s->step += 2;
      continue;
    }
    if (s->step % 2 == 0)
      s->step_call = vm_app_call_extension(s->app, track_ext[t], NULL, track_get_reply, s);
    else
      s->step_call = vm_app_call_extension(s->app, track_ext[t],
                                           json_pack("{s:s}", "enabled", "true"), track_set_reply, s);
    return;
  }
  s->state = S_ACTIVE;
  s->started_ms = now_ms(s);
  uv_timer_start(&s->timer, on_timer, SESSION_DRAIN_MS, SESSION_DRAIN_MS);
  s->timer_running = 1;
  session_status_t ok;
  status_set(&ok, DIAG_NONE, 0, NULL);
  session_done_cb done = s->step_done;
  s->step_done = NULL;
  done(s->step_arg, s, &ok);
}

static void track_get_reply(void *arg, const vm_result_t *res) {
  session_t *s = arg;
  if (step_reply_failed(s, res)) return;
  s->track_prev[s->step / 2] = track_enabled_value(res->result);
  s->step++;
  open_next(s);
}

static void track_set_reply(void *arg, const vm_result_t *res) {
  session_t *s = arg;
  if (step_reply_failed(s, res)) return;
  s->track_on[s->step / 2] = 1;
  s->step++;
  open_next(s);
}

static void close_track_reply(void *arg, const vm_result_t *res) {
  session_t *s = arg;
  if (step_reply_failed(s, res)) return;
  s->track_on[s->step - 1] = 0;
  s->step++;
  close_next(s);
}

static void free_now(uv_handle_t *h) {
  session_t *s = container_of((uv_timer_t *)h, session_t, timer);
  if (s->live_prev) s->live_prev->live_next = s->live_next; else live = s->live_next;
  if (s->live_next) s->live_next->live_prev = s->live_prev;
  free(s->interaction_id);
  free(s->linked_by);
  store_free(s->store);
  free(s);
}

static void cancel_calls(session_t *s) {
  if (s->drain_call) vm_call_cancel(s->drain_call);
  if (s->step_call) vm_call_cancel(s->step_call);
  s->drain_call = s->step_call = NULL;
  for (size_t i = 0; i < MAX_SIDE_CALLS; i++)
    if (s->side[i].call) {
      vm_call_cancel(s->side[i].call);
      s->side[i].call = NULL;
    }
}

void session_free(session_t *s) {
  if (!s || s->freeing) return;
  s->freeing = 1;
  cancel_calls(s);
  s->nwaiters = 0;
  uv_timer_stop(&s->timer);
  uv_close((uv_handle_t *)&s->timer, free_now);
}

static void close_stop_reply(void *arg, const vm_result_t *res);

/* A failed open switches back what it had switched on; a failed close keeps
 * the session as it was, unless the app is gone (then it stops locally). */
static void step_fail(session_t *s, const session_status_t *st) {
  session_done_cb done = s->step_done;
  void *darg = s->step_arg;
  s->step_done = NULL;
  if (s->state == S_OPENING) {
    s->step_status = *st;
    if (s->store) { /* the watcher start went through: undo it */
      s->state = S_CLOSING;
      s->abandoned = 1;
      s->step = -1;
      close_next(s);
    } else {
      session_free(s);
    }
    if (done) done(darg, NULL, st);
    return;
  }
  if (s->abandoned) { /* nobody waits: carry on switching back, best effort */
    s->step++;
    close_next(s);
    return;
  }
  int app_gone = st->diag == DIAG_NOT_CONNECTED || st->diag == DIAG_CONNECTION_REJECTED ||
                 st->diag == DIAG_WATCHER_MISSING;
  if (app_gone) {
    s->state = S_STOPPED;
    s->stopped_ms = now_ms(s);
  } else {
    s->state = S_ACTIVE;
    uv_timer_start(&s->timer, on_timer, SESSION_DRAIN_MS, SESSION_DRAIN_MS);
    s->timer_running = 1;
  }
  if (done) done(darg, s, st);
}

/* Close steps: -1 drain, then watcher stop (step 0 → 1), then each switch
 * we turned on is set back (step 1 + t). */
static void close_drained(void *arg, session_t *s, const session_status_t *st) {
  (void)arg;
  if (st->diag == DIAG_ISOLATE_PAUSED || st->diag == DIAG_UNRESPONSIVE) {
    step_fail(s, st);
    return;
  }
  s->step = 0;
  close_next(s);
}

static void close_next(session_t *s) {
  if (s->step < 0) {
    session_drain(s, close_drained, NULL);
    return;
  }
  if (s->step == 0) {
    json_t *p = watcher_params("stop");
    s->step_call = ext_call(s, p, close_stop_reply);
    return;
  }
  while (s->step - 1 < TRACK__COUNT) {
    int t = s->step - 1;
    if (!s->track_on[t]) {
      s->step++;
      continue;
    }
    const char *prev = s->track_prev[t] == 1 ? "true" : "false";
    s->step_call = vm_app_call_extension(s->app, track_ext[t], json_pack("{s:s}", "enabled", prev),
                                         close_track_reply, s);
    return;
  }
  s->state = S_STOPPED;
  s->stopped_ms = now_ms(s);
  if (s->abandoned) {
    session_free(s);
    return;
  }
  session_status_t ok;
  status_set(&ok, DIAG_NONE, 0, NULL);
  session_done_cb done = s->step_done;
  s->step_done = NULL;
  if (done) done(s->step_arg, s, &ok);
}

static void close_stop_reply(void *arg, const vm_result_t *res) {
  session_t *s = arg;
  if (step_reply_failed(s, res)) return;
  s->step = 1;
  close_next(s);
}

void session_open(uv_loop_t *loop, vm_app_t *app, const session_options_t *opt,
                  session_reply_cb on_reply, void *reply_arg, session_done_cb done, void *arg) {
  session_t *s = calloc(1, sizeof *s);
  session_status_t st;
  if (!s) {
    status_set(&st, DIAG_NONE, RPC_INTERNAL_ERROR, "out of memory");
    done(arg, NULL, &st); /* out of memory: the one synchronous answer */
    return;
  }
  s->loop = loop;
  s->app = app;
  snprintf(s->id, sizeof s->id, "%s", opt->id);
  if (opt->interaction_id) {
    s->interaction_id = strdup(opt->interaction_id);
    s->linked_by = strdup(opt->linked_by ? opt->linked_by : "agent");
  }
  s->budget_ms = opt->budget_ms;
  for (int t = 0; t < TRACK__COUNT; t++) {
    s->track_req[t] = opt->track[t];
    s->track_prev[t] = -1;
  }
  s->on_reply = on_reply;
  s->reply_arg = reply_arg;
  s->state = S_OPENING;
  s->step_done = done;
  s->step_arg = arg;
  uv_timer_init(loop, &s->timer);
  s->live_next = live;
  if (live) live->live_prev = s;
  live = s;
  json_t *p = watcher_params("start");
  if (s->interaction_id) {
    json_object_set_new(p, "interactionId", json_string(s->interaction_id));
    json_object_set_new(p, "linkedBy", json_string(s->linked_by));
  }
  s->step_call = ext_call(s, p, open_start_reply);
}

void session_close(session_t *s, session_done_cb done, void *arg) {
  if (s->timer_running) uv_timer_stop(&s->timer);
  s->timer_running = 0;
  s->state = S_CLOSING;
  s->step_done = done;
  s->step_arg = arg;
  s->step = -1;
  close_next(s);
}

void session_abandon(session_t *s) {
  if (s->state == S_STOPPED) {
    session_free(s);
    return;
  }
  s->abandoned = 1;
  s->nwaiters = 0;
  if (s->state == S_CLOSING || s->state == S_OPENING) return; /* already on its way */
  session_close(s, NULL, NULL);
}

void session_free_all(void) {
  for (session_t *s = live; s; s = s->live_next) session_free(s);
}

int session_tap_attach(session_t *s, store_t *tap) {
  if (s->ntaps == SESSION_MAX_TAPS) return -1;
  s->taps[s->ntaps++] = tap;
  return 0;
}

void session_tap_detach(session_t *s, store_t *tap) {
  for (size_t i = 0; i < s->ntaps; i++)
    if (s->taps[i] == tap) {
      s->taps[i] = s->taps[--s->ntaps];
      return;
    }
}

void session_set_interaction(session_t *s, const char *interaction_id, const char *linked_by) {
  free(s->interaction_id);
  free(s->linked_by);
  s->interaction_id = interaction_id ? strdup(interaction_id) : NULL;
  s->linked_by = interaction_id ? strdup(linked_by ? linked_by : "agent") : NULL;
}

store_t *session_store(session_t *s) { return s->store; }
const char *session_id(const session_t *s) { return s->id; }
int session_active(const session_t *s) { return s->state == S_ACTIVE; }
int64_t session_budget_us(const session_t *s) { return s->budget_us; }
const session_status_t *session_last_error(const session_t *s) { return &s->last_error; }

uint64_t session_duration_ms(const session_t *s) {
  uint64_t end = s->state == S_STOPPED ? s->stopped_ms : uv_now(s->loop);
  return end > s->started_ms ? end - s->started_ms : 0;
}

json_t *session_to_json(const session_t *s) {
  json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I}", "id", s->id, "state",
                        s->state == S_STOPPED ? "stopped" : "active", "durationMs",
                        (json_int_t)session_duration_ms(s), "framesSeen",
                        (json_int_t)(s->store ? store_frames_seen(s->store) : 0), "framesLost",
                        (json_int_t)(s->store ? store_frames_lost(s->store) : 0), "restarts",
                        (json_int_t)(s->store ? store_restarts(s->store) : 0));
  if (!o) return NULL;
  if (s->interaction_id) {
    json_object_set_new(o, "interactionId", json_string(s->interaction_id));
    json_object_set_new(o, "linkedBy", json_string(s->linked_by));
  }
  json_t *tr = json_array();
  for (int t = 0; t < TRACK__COUNT; t++)
    if (s->track_req[t]) json_array_append_new(tr, json_string(track_name[t]));
  if (json_array_size(tr))
    json_object_set_new(o, "tracking", tr);
  else
    json_decref(tr);
  return o;
}
