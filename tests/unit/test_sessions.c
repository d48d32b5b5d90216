/* The session manager's state machine (server/sessions.c) on a real libuv
 * loop, against a fake transport whose watcher is the C model of the watcher
 * (watcher/sim/model.c): the same replies the simulator gives, with faults
 * injected per call. Every test counts its callbacks, checks that none ran
 * synchronously, and ends with uv_loop_close == 0. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "drain.h"
#include "model.h"
#include "sessions.h"

/* ---- the fake transport ------------------------------------------------ */

struct vm_call { /* this test's own: the server's vm_call never links in here */
  uv_timer_t timer;
  char method[64];
  json_t *params;
  vm_reply_cb cb;
  void *arg;
  diag_code_t fail; /* answer with this instead */
  json_t *reply;    /* answered when sent (answer_at_send): what the app held then */
  int cancelled;
  struct vm_call *next;
};

typedef struct {
  uv_loop_t loop;
  wm_t *wm;
  int64_t now_us;
  int64_t frame;
  char log[64][48]; /* "ext.telescope.frames:start", "ext.flutter.profileWidgetBuilds" … */
  int nlog;
  diag_code_t fail_next[8]; /* faults for the next calls, in order */
  int nfail;
  int delay_ms;
  int inflight;
  int tracking[3];
  int answer_at_send; /* the watcher reads its ring when the call arrives, not when it replies */
} fake_t;

static fake_t F;

static void call_closed(uv_handle_t *h) {
  struct vm_call *c = h->data;
  json_decref(c->params);
  json_decref(c->reply);
  free(c);
}

static void call_fire(uv_timer_t *t) {
  struct vm_call *c = t->data;
  F.inflight--;
  vm_result_t res = {DIAG_NONE, 0, "", NULL, NULL, 0};
  json_t *reply = NULL;
  if (c->fail != DIAG_NONE) {
    res.diag = c->fail;
    res.detail = "injected";
  } else if (c->reply) {
    res.result = c->reply;
  } else if (!strcmp(c->method, "ext.telescope.frames")) {
    char *err = NULL;
    reply = wm_handle(F.wm, c->params, F.now_us, &err);
    if (!reply) {
      res.rpc_code = -32602;
      res.detail = err;
    }
    res.result = reply;
    free(err);
  } else { /* a profile switch: Flutter's registerBoolServiceExtension */
    int k = strstr(c->method, "Widget") ? 0 : strstr(c->method, "Layout") ? 1 : 2;
    const char *v = json_string_value(json_object_get(c->params, "enabled"));
    if (v) F.tracking[k] = !strcmp(v, "true");
    reply = json_pack("{s:s}", "enabled", F.tracking[k] ? "true" : "false");
    res.result = reply;
  }
  c->cb(c->arg, &res);
  json_decref(reply);
  uv_close((uv_handle_t *)&c->timer, call_closed);
}

static void *fake_call(void *arg, const char *method, json_t *params, vm_reply_cb cb,
                            void *cb_arg) {
  (void)arg;
  struct vm_call *c = calloc(1, sizeof *c);
  snprintf(c->method, sizeof c->method, "%s", method);
  c->params = params;
  c->cb = cb;
  c->arg = cb_arg;
  if (F.nfail) {
    c->fail = F.fail_next[0];
    memmove(F.fail_next, F.fail_next + 1, sizeof F.fail_next - sizeof *F.fail_next);
    F.nfail--;
  }
  const char *action = json_string_value(json_object_get(params, "action"));
  if (F.answer_at_send && !c->fail && !strcmp(method, "ext.telescope.frames")) {
    char *err = NULL;
    c->reply = wm_handle(F.wm, params, F.now_us, &err);
    ck_assert_ptr_nonnull(c->reply);
    free(err);
  }
  if (F.nlog < 64)
    snprintf(F.log[F.nlog++], sizeof F.log[0], "%s%s%s", method, action ? ":" : "",
             action ? action : "");
  uv_timer_init(&F.loop, &c->timer);
  c->timer.data = c;
  uv_timer_start(&c->timer, call_fire, (uint64_t)F.delay_ms, 0);
  F.inflight++;
  return c;
}

static void fake_cancel(void *handle) {
  struct vm_call *c = handle;
  uv_timer_stop(&c->timer);
  F.inflight--;
  uv_close((uv_handle_t *)&c->timer, call_closed);
}

/* The app draws n frames (each with a BUILD block) and delivers their timings. */
static void draw(int n) {
  for (int i = 0; i < n; i++) {
    F.frame++;
    F.now_us += 16667;
    wm_event_t ev = {"BUILD", F.now_us - 5000, 4000};
    wm_frame_drawn(F.wm, F.frame, F.now_us, &ev, 1);
    wm_timing_t t = {F.frame, F.now_us - 6000, F.now_us - 5000, F.now_us - 1000, F.now_us - 900,
                     F.now_us - 100, 0, 0};
    wm_timings(F.wm, &t, 1);
  }
}

static int count_log(const char *what) {
  int n = 0;
  for (int i = 0; i < F.nlog; i++) n += strcmp(F.log[i], what) == 0;
  return n;
}

/* ---- harness ----------------------------------------------------------- */

typedef struct {
  int calls;
  session_t *s;
  int joined;
  wp_status_t st;
} got_t;

static void on_open(void *arg, session_t *s, int joined, const wp_status_t *st) {
  got_t *g = arg;
  g->calls++;
  g->s = s;
  g->joined = joined;
  g->st = *st;
}

static void on_done(void *arg, session_t *s, const wp_status_t *st) {
  got_t *g = arg;
  g->calls++;
  g->s = s;
  g->st = *st;
}

static int replies;
static void on_reply(void *arg, const record_reply_t *r) {
  (void)arg;
  (void)r;
  replies++;
}

static sessions_t *M;

static void setup(void) {
  memset(&F, 0, sizeof F);
  ck_assert_int_eq(uv_loop_init(&F.loop), 0);
  F.wm = wm_new(NULL, "run-1");
  F.now_us = 1000000;
  F.delay_ms = 1;
  M = sessions_new(&F.loop, on_reply, NULL, NULL);
  wp_transport_t t = {fake_call, fake_cancel, NULL, NULL, NULL};
  sessions_set_transport(M, &t);
  replies = 0;
}

static void teardown(void) {
  sessions_free(M);
  uv_run(&F.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(uv_loop_close(&F.loop), 0);
  wm_free(F.wm);
}

/* Runs the loop until cond holds (bounded). */
#define RUN_UNTIL(cond)                                                      \
  do {                                                                       \
    for (int i_ = 0; i_ < 5000 && !(cond); i_++) uv_run(&F.loop, UV_RUN_ONCE); \
    ck_assert_msg((cond), "never: %s", #cond);                               \
  } while (0)

static session_t *open_one(const session_options_t *o) {
  got_t g = {0};
  sessions_wait_t *w = sessions_open(M, o, on_open, &g);
  ck_assert_ptr_nonnull(w);
  ck_assert_int_eq(g.calls, 0); /* never from inside the call */
  RUN_UNTIL(g.calls == 1);
  ck_assert_ptr_nonnull(g.s);
  return g.s;
}

static uint64_t drain_now(session_t *s) {
  got_t g = {0};
  ck_assert_ptr_nonnull(sessions_drain(M, s, on_done, &g));
  ck_assert_int_eq(g.calls, 0);
  RUN_UNTIL(g.calls == 1);
  session_unref(g.s);
  return store_frames_seen(session_store(s));
}

/* ---- tests ------------------------------------------------------------- */

START_TEST(open_then_join) {
  session_options_t o = {0};
  got_t a = {0}, b = {0};
  sessions_wait_t *wa = sessions_open(M, &o, on_open, &a);
  sessions_wait_t *wb = sessions_open(M, &o, on_open, &b); /* overlapping start */
  ck_assert_ptr_nonnull(wa);
  ck_assert_ptr_nonnull(wb);
  ck_assert_int_eq(a.calls + b.calls, 0);
  RUN_UNTIL(a.calls == 1 && b.calls == 1);
  ck_assert_ptr_eq(a.s, b.s);
  ck_assert_int_eq(a.joined, 0);
  ck_assert_int_eq(b.joined, 1);
  ck_assert_int_eq(session_state(a.s), SESSION_ACTIVE);
  ck_assert_ptr_eq(sessions_current(M), a.s);
  ck_assert_int_eq(count_log("ext.telescope.frames:start"), 1); /* one switch-on for both */
  ck_assert(wm_collecting(F.wm));
  session_unref(a.s);
  session_unref(b.s);
}
END_TEST

START_TEST(frames_delivered_once_to_each_session) {
  session_options_t o = {0};
  draw(5); /* history: before the session */
  session_t *s = open_one(&o);
  draw(7);
  ck_assert_uint_eq(drain_now(s), 7);
  /* A capture window opened now sees only what comes after it. */
  session_options_t c = {0};
  c.capture = 1;
  session_t *w = open_one(&c);
  ck_assert_ptr_ne(w, s);
  ck_assert_ptr_eq(sessions_current(M), s); /* a capture is never the current session */
  ck_assert_int_eq(count_log("ext.telescope.frames:start"), 1); /* attribution already on */
  draw(1200); /* more than two drain pages */
  ck_assert_uint_eq(drain_now(s), 1207);
  ck_assert_uint_eq(store_frames_seen(session_store(w)), 1200);
  ck_assert_uint_eq(store_frames_lost(session_store(s)), 0);
  /* Closing the window leaves the session open and attribution on. */
  got_t g = {0};
  ck_assert_ptr_nonnull(sessions_close(M, w, on_done, &g));
  RUN_UNTIL(g.calls == 1);
  ck_assert_int_eq(session_state(w), SESSION_CLOSED);
  ck_assert_int_eq(session_state(s), SESSION_ACTIVE);
  ck_assert(wm_collecting(F.wm));
  session_unref(g.s);
  session_unref(w);
  session_unref(s);
}
END_TEST

/* A stop asked while a drain is in flight holds every frame the app finished
 * before the stop was asked: the drain in flight read the watcher before
 * those frames, so the close needs a drain of its own (issue 24, item 5). */
START_TEST(stop_during_a_drain_holds_every_frame_finished_before_it) {
  session_options_t o = {0};
  session_t *s = open_one(&o);
  F.delay_ms = 30;
  F.answer_at_send = 1;
  draw(3);
  int reads = count_log("ext.telescope.frames:read");
  got_t d = {0}, c = {0};
  ck_assert_ptr_nonnull(sessions_drain(M, s, on_done, &d));
  RUN_UNTIL(count_log("ext.telescope.frames:read") > reads); /* the app read its ring: 3 frames */
  ck_assert_int_eq(d.calls, 0);                                /* its reply is still on the way */
  draw(4);                                                     /* finished before the stop */
  ck_assert_ptr_nonnull(sessions_close(M, s, on_done, &c));
  RUN_UNTIL(d.calls == 1 && c.calls == 1);
  ck_assert_int_eq(session_state(s), SESSION_CLOSED);
  ck_assert_uint_eq(store_frames_seen(session_store(s)), 7);
  session_unref(d.s);
  session_unref(c.s);
  session_unref(s);
}
END_TEST

/* The same for a read: a drain asked while another is in flight is answered
 * by a drain that began after it was asked, never by the one in flight. */
START_TEST(drain_during_a_drain_holds_every_frame_finished_before_it) {
  session_options_t o = {0};
  session_t *s = open_one(&o);
  F.delay_ms = 30;
  F.answer_at_send = 1;
  draw(3);
  int reads = count_log("ext.telescope.frames:read");
  got_t d = {0}, e = {0};
  ck_assert_ptr_nonnull(sessions_drain(M, s, on_done, &d));
  RUN_UNTIL(count_log("ext.telescope.frames:read") > reads);
  ck_assert_int_eq(d.calls, 0);
  draw(4);
  ck_assert_ptr_nonnull(sessions_drain(M, s, on_done, &e));
  RUN_UNTIL(e.calls == 1);
  ck_assert_int_eq(d.calls, 1); /* the first was answered first */
  ck_assert_uint_eq(store_frames_seen(session_store(s)), 7);
  session_unref(d.s);
  session_unref(e.s);
  session_unref(s);
}
END_TEST

START_TEST(overlapping_closes_join) {
  session_options_t o = {0};
  o.track[WP_TRACK_WIDGETS] = 1;
  session_t *s = open_one(&o);
  ck_assert_int_eq(F.tracking[0], 1);
  draw(3);
  got_t a = {0}, b = {0};
  ck_assert_ptr_nonnull(sessions_close(M, s, on_done, &a));
  ck_assert_ptr_nonnull(sessions_close(M, s, on_done, &b));
  ck_assert_int_eq(session_state(s), SESSION_CLOSING);
  RUN_UNTIL(a.calls == 1 && b.calls == 1);
  ck_assert_ptr_eq(a.s, s);
  ck_assert_ptr_eq(b.s, s);
  ck_assert_int_eq(session_state(s), SESSION_CLOSED);
  ck_assert_uint_eq(store_frames_seen(session_store(s)), 3);
  /* Answered only once attribution and the switch are back as they were. */
  ck_assert(!wm_collecting(F.wm));
  ck_assert_int_eq(F.tracking[0], 0);
  ck_assert_int_eq(count_log("ext.telescope.frames:stop"), 1);
  ck_assert_ptr_null(sessions_current(M));
  ck_assert_ptr_eq(sessions_find(M, session_id(s)), s); /* kept in the history */
  session_unref(a.s);
  session_unref(b.s);
  session_unref(s);
}
END_TEST

/* A switch-on sent while the switch was off is counted (the rebuild table
 * takes the next event as forceRebuild's frame); one the app had on already
 * (another tool) forces no frame and is not. */
static void close_and_wait(session_t *s) {
  got_t c = {0};
  ck_assert_ptr_nonnull(sessions_close(M, s, on_done, &c));
  RUN_UNTIL(c.calls == 1);
  session_unref(c.s);
  session_unref(s);
}

START_TEST(switched_on_counts_only_from_off) {
  session_options_t o = {0};
  o.track[WP_TRACK_WIDGETS] = 1;
  ck_assert_uint_eq(sessions_switched_on(M, WP_TRACK_WIDGETS), 0);
  close_and_wait(open_one(&o));
  ck_assert_uint_eq(sessions_switched_on(M, WP_TRACK_WIDGETS), 1);
  close_and_wait(open_one(&o)); /* set back off at the close: on again */
  ck_assert_uint_eq(sessions_switched_on(M, WP_TRACK_WIDGETS), 2);
  ck_assert_uint_eq(sessions_switched_on(M, WP_TRACK_LAYOUTS), 0);
}
END_TEST

START_TEST(switched_on_not_counted_when_already_on) {
  F.tracking[0] = 1; /* another tool had it on */
  session_options_t o = {0};
  o.track[WP_TRACK_WIDGETS] = 1;
  close_and_wait(open_one(&o));
  ck_assert_int_eq(F.tracking[0], 1); /* left as it was */
  ck_assert_uint_eq(sessions_switched_on(M, WP_TRACK_WIDGETS), 0);
}
END_TEST

START_TEST(start_during_close_opens_a_new_one) {
  session_options_t o = {0};
  session_t *s = open_one(&o);
  got_t c = {0}, n = {0};
  ck_assert_ptr_nonnull(sessions_close(M, s, on_done, &c));
  ck_assert_ptr_nonnull(sessions_open(M, &o, on_open, &n));
  RUN_UNTIL(c.calls == 1 && n.calls == 1);
  ck_assert_ptr_eq(c.s, s);
  ck_assert_ptr_ne(n.s, s);
  ck_assert_int_eq(n.joined, 0);
  ck_assert_int_eq(session_state(n.s), SESSION_ACTIVE);
  ck_assert_str_ne(session_id(n.s), session_id(s));
  ck_assert(wm_collecting(F.wm)); /* stop, then start again, in that order */
  ck_assert_int_eq(count_log("ext.telescope.frames:start"), 2);
  session_unref(c.s);
  session_unref(n.s);
  session_unref(s);
}
END_TEST

START_TEST(app_gone_keeps_frames) {
  session_options_t o = {0};
  session_t *s = open_one(&o);
  draw(10);
  ck_assert_uint_eq(drain_now(s), 10);
  draw(4); /* never drained: the app dies first */
  F.fail_next[0] = F.fail_next[1] = F.fail_next[2] = DIAG_NOT_CONNECTED;
  F.nfail = 3;
  got_t g = {0};
  ck_assert_ptr_nonnull(sessions_close(M, s, on_done, &g));
  RUN_UNTIL(g.calls == 1);
  ck_assert_ptr_eq(g.s, s);
  ck_assert_int_eq(g.st.diag, DIAG_NOT_CONNECTED); /* says why its end is not clean */
  ck_assert_int_eq(session_state(s), SESSION_CLOSED);
  ck_assert_uint_eq(store_frames_seen(session_store(s)), 10); /* what it measured is kept */
  ck_assert_int_eq(session_end_status(s)->diag, DIAG_NOT_CONNECTED);
  session_unref(g.s);
  session_unref(s);
}
END_TEST

START_TEST(open_fails_cleanly) {
  session_options_t o = {0};
  F.fail_next[0] = DIAG_WATCHER_MISSING;
  F.nfail = 1;
  got_t g = {0};
  ck_assert_ptr_nonnull(sessions_open(M, &o, on_open, &g));
  RUN_UNTIL(g.calls == 1);
  ck_assert_ptr_null(g.s);
  ck_assert_int_eq(g.st.diag, DIAG_WATCHER_MISSING);
  ck_assert_ptr_null(sessions_current(M));
  ck_assert(!sessions_busy(M));
  /* The next start works. */
  session_t *s = open_one(&o);
  ck_assert_int_eq(session_state(s), SESSION_ACTIVE);
  session_unref(s);
}
END_TEST

START_TEST(late_stop_is_put_right_on_next_contact) {
  session_options_t o = {0};
  session_t *s = open_one(&o);
  /* The stop times out (the app may still run it later): the manager
   * believes nothing, and asks again once the app answers. */
  F.fail_next[0] = DIAG_NONE; /* the final drain goes through */
  F.fail_next[1] = DIAG_UNRESPONSIVE;
  F.nfail = 2;
  got_t g = {0};
  ck_assert_ptr_nonnull(sessions_close(M, s, on_done, &g));
  RUN_UNTIL(g.calls == 1);
  ck_assert(wm_collecting(F.wm)); /* the stop never reached the app */
  /* Any later reply that shows collecting on triggers the stop again. */
  char *err = NULL;
  json_t *params = json_pack("{s:s}", "action", "status");
  json_t *reply = wm_handle(F.wm, params, F.now_us, &err);
  record_reply_t r;
  char perr[256];
  ck_assert_int_eq(record_reply_parse(&r, reply, perr, sizeof perr), 0);
  sessions_note_reply(M, &r);
  record_reply_close(&r);
  json_decref(reply);
  json_decref(params);
  RUN_UNTIL(!wm_collecting(F.wm));
  ck_assert_int_eq(count_log("ext.telescope.frames:stop"), 2);
  session_unref(g.s);
  session_unref(s);
}
END_TEST

START_TEST(hot_restart_followed) {
  session_options_t o = {0};
  session_t *s = open_one(&o);
  draw(6);
  ck_assert_uint_eq(drain_now(s), 6);
  wm_restart(F.wm, "run-2");
  F.frame = 0;
  draw(4);
  drain_now(s);
  /* The new run is read from its start and attribution switched on again. */
  RUN_UNTIL(wm_collecting(F.wm));
  ck_assert_uint_eq(store_frames_seen(session_store(s)), 10);
  ck_assert_uint_eq(store_restarts(session_store(s)), 1);
  draw(2);
  ck_assert_uint_eq(drain_now(s), 12);
  session_unref(s);
}
END_TEST

/* A hot restart resets the drain's position even when the drain right
 * after it finds the new run empty: the 4 frames that come next are all
 * seen, not read after the old run's seq 6. */
START_TEST(hot_restart_into_an_empty_run) {
  session_options_t o = {0};
  session_t *s = open_one(&o);
  draw(6);
  ck_assert_uint_eq(drain_now(s), 6);
  wm_restart(F.wm, "run-2");
  F.frame = 0;
  drain_now(s); /* the new run, still empty */
  RUN_UNTIL(wm_collecting(F.wm));
  ck_assert_uint_eq(store_restarts(session_store(s)), 1);
  draw(4);
  ck_assert_uint_eq(drain_now(s), 10);
  session_unref(s);
}
END_TEST

/* Overlapping sessions switch on the union of their tracking: a capture
 * without tracking, then a start with trackWidgets, leaves widget tracking
 * on, and the start completes (it waits for its switch). */
START_TEST(overlapping_sessions_track_the_union) {
  session_options_t cap = {0}, with = {0};
  cap.capture = 1;
  with.track[WP_TRACK_WIDGETS] = 1;
  session_t *a = open_one(&cap);
  ck_assert_int_eq(F.tracking[0], 0);
  session_t *b = open_one(&with); /* bounded: never completing fails here */
  ck_assert_ptr_ne(a, b);
  ck_assert_int_eq(F.tracking[0], 1);
  /* a third without tracking leaves it on */
  session_t *c = open_one(&cap);
  draw(2);
  drain_now(c);
  ck_assert_int_eq(F.tracking[0], 1);
  session_unref(a);
  session_unref(b);
  session_unref(c);
}
END_TEST

START_TEST(cancelled_waiters_are_silent) {
  session_options_t o = {0};
  got_t g = {0};
  sessions_wait_t *w = sessions_open(M, &o, on_open, &g);
  sessions_wait_cancel(w);
  RUN_UNTIL(sessions_current(M) && session_state(sessions_current(M)) == SESSION_ACTIVE);
  ck_assert_int_eq(g.calls, 0);
  session_t *s = sessions_current(M);
  w = sessions_drain(M, s, on_done, &g);
  sessions_wait_cancel(w);
  for (int i = 0; i < 50; i++) uv_run(&F.loop, UV_RUN_NOWAIT);
  ck_assert_int_eq(g.calls, 0);
}
END_TEST


START_TEST(open_while_the_last_close_settles) {
  /* Found by the model test: a start (or a capture) that arrives after the
   * last session closed but while its switch-back is still in flight must
   * neither leave the closer unanswered nor skip the wait. */
  session_options_t o = {0};
  o.track[WP_TRACK_WIDGETS] = 1;
  session_t *s = open_one(&o);
  F.delay_ms = 20;
  got_t c = {0}, n = {0}, k = {0};
  ck_assert_ptr_nonnull(sessions_close(M, s, on_done, &c));
  RUN_UNTIL(session_state(s) == SESSION_CLOSED); /* the stop is in flight now */
  ck_assert_ptr_null(sessions_current(M));
  ck_assert_int_eq(c.calls, 0);
  ck_assert_ptr_nonnull(sessions_open(M, &o, on_open, &n));
  RUN_UNTIL(c.calls == 1 && n.calls == 1);
  ck_assert_ptr_ne(n.s, s);
  ck_assert_int_eq(n.joined, 0);
  ck_assert_int_eq(session_state(n.s), SESSION_ACTIVE);
  ck_assert(wm_collecting(F.wm));
  ck_assert_int_eq(F.tracking[0], 1);
  /* The same with a capture window opening during the switch-back. */
  got_t c2 = {0};
  ck_assert_ptr_nonnull(sessions_close(M, n.s, on_done, &c2));
  RUN_UNTIL(session_state(n.s) == SESSION_CLOSED);
  session_options_t w = {0};
  w.capture = 1;
  ck_assert_ptr_nonnull(sessions_open(M, &w, on_open, &k));
  RUN_UNTIL(c2.calls == 1 && k.calls == 1);
  ck_assert_int_eq(session_state(k.s), SESSION_ACTIVE);
  ck_assert(wm_collecting(F.wm));
  session_unref(c.s);
  session_unref(c2.s);
  session_unref(n.s);
  session_unref(k.s);
  session_unref(s);
}
END_TEST

/* Callbacks in the order they ran. */
static int ran;
typedef struct {
  got_t g;
  int at;
} order_t;
static void on_done_ordered(void *arg, session_t *s, const wp_status_t *st) {
  order_t *o = arg;
  o->at = ++ran;
  on_done(&o->g, s, st);
}

START_TEST(joined_closes_answered_in_the_order_they_came) {
  /* Found by the model test under ASan: of two overlapping stops, the later
   * was answered first, so it was the one to hand out (and count) the
   * frames the first asked for. Waiters ready together go oldest first. */
  session_options_t o = {0};
  session_t *s = open_one(&o);
  draw(3);
  order_t a = {{0}, 0}, b = {{0}, 0}, c = {{0}, 0};
  ran = 0;
  ck_assert_ptr_nonnull(sessions_close(M, s, on_done_ordered, &a));
  ck_assert_ptr_nonnull(sessions_close(M, s, on_done_ordered, &b));
  ck_assert_ptr_nonnull(sessions_close(M, s, on_done_ordered, &c));
  RUN_UNTIL(a.g.calls == 1 && b.g.calls == 1 && c.g.calls == 1);
  ck_assert_int_eq(a.at, 1);
  ck_assert_int_eq(b.at, 2);
  ck_assert_int_eq(c.at, 3);
  session_unref(a.g.s);
  session_unref(b.g.s);
  session_unref(c.g.s);
  session_unref(s);
}
END_TEST

/* The history keeps the last SESSIONS_HISTORY closed sessions, each findable
 * by its id: one more closed pushes out only the oldest. */
START_TEST(history_keeps_the_newest_closed_sessions) {
  session_options_t o = {0};
  char ids[SESSIONS_HISTORY + 1][32];
  for (int k = 0; k < SESSIONS_HISTORY + 1; k++) {
    session_t *s = open_one(&o);
    snprintf(ids[k], sizeof ids[k], "%s", session_id(s));
    got_t g = {0};
    ck_assert_ptr_nonnull(sessions_close(M, s, on_done, &g));
    RUN_UNTIL(g.calls == 1);
    session_unref(g.s);
    session_unref(s);
  }
  ck_assert_ptr_null(sessions_find(M, ids[0])); /* the oldest went */
  for (int k = 1; k < SESSIONS_HISTORY + 1; k++) {
    session_t *s = sessions_find(M, ids[k]);
    ck_assert_msg(s != NULL, "closed session %d of %d (%s) is not in the history", k,
                  SESSIONS_HISTORY + 1, ids[k]);
    ck_assert_str_eq(session_id(s), ids[k]);
  }
}
END_TEST

/* A stop while the watcher holds more than a drain generation's pages
 * (DRAIN_MAX_PAGES) of the session's frames reads on until it has them all:
 * the generation ends with `more` left, and the close follows it. */
START_TEST(stop_reads_past_a_generation_while_the_watcher_says_more) {
  wm_free(F.wm);
  wm_config_t cfg = {0};
  cfg.read_limit_cap = 10; /* 10 records a page: 8 pages hold 80 */
  F.wm = wm_new(&cfg, "run-1");
  session_options_t o = {0};
  session_t *s = open_one(&o);
  draw(10 * DRAIN_MAX_PAGES + 25);
  got_t g = {0};
  ck_assert_ptr_nonnull(sessions_close(M, s, on_done, &g));
  RUN_UNTIL(g.calls == 1);
  ck_assert_int_eq(session_state(s), SESSION_CLOSED);
  ck_assert_uint_eq(store_frames_seen(session_store(s)), 10 * DRAIN_MAX_PAGES + 25);
  ck_assert_int_ge(count_log("ext.telescope.frames:read"), DRAIN_MAX_PAGES + 3);
  session_unref(g.s);
  session_unref(s);
}
END_TEST

int main(void) {
  Suite *su = suite_create("sessions");
  TCase *tc = tcase_create("manager");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, open_then_join);
  tcase_add_test(tc, frames_delivered_once_to_each_session);
  tcase_add_test(tc, stop_during_a_drain_holds_every_frame_finished_before_it);
  tcase_add_test(tc, drain_during_a_drain_holds_every_frame_finished_before_it);
  tcase_add_test(tc, overlapping_closes_join);
  tcase_add_test(tc, switched_on_counts_only_from_off);
  tcase_add_test(tc, switched_on_not_counted_when_already_on);
  tcase_add_test(tc, start_during_close_opens_a_new_one);
  tcase_add_test(tc, app_gone_keeps_frames);
  tcase_add_test(tc, open_fails_cleanly);
  tcase_add_test(tc, late_stop_is_put_right_on_next_contact);
  tcase_add_test(tc, hot_restart_followed);
  tcase_add_test(tc, hot_restart_into_an_empty_run);
  tcase_add_test(tc, overlapping_sessions_track_the_union);
  tcase_add_test(tc, cancelled_waiters_are_silent);
  tcase_add_test(tc, open_while_the_last_close_settles);
  tcase_add_test(tc, joined_closes_answered_in_the_order_they_came);
  tcase_add_test(tc, history_keeps_the_newest_closed_sessions);
  tcase_add_test(tc, stop_reads_past_a_generation_while_the_watcher_says_more);
  suite_add_tcase(su, tc);
  SRunner *sr = srunner_create(su);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
