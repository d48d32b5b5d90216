#include "frame_events_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "container_of.h"
#include "log.h"
#include "record.h"

/* Flutter's own frame request, the probe without the watcher
 * (docs/flutter-apis.md: registered in debug and profile). */
#define SCHEDULE_FRAME "ext.ui.window.scheduleFrame"

/* The last frames of a read or stop (issue 21 item 5). The engine hands
 * FrameTimings over in batches: native, at most 100 ms after the first frame
 * of a batch (shell.cc kBatchTimeInMilliseconds, debug and profile); web,
 * only when a frame comes more than 100 ms after the last hand-over
 * (web_ui frame_timing_recorder.dart submitTimings). A batch that arrives
 * after the call holds every frame drawn before it, so while the app drew
 * lately (an event within FE_DRAWING_MS: a batch may follow its last frame
 * by up to 1 s in release) a read or stop waits for the next batch, at most
 * FE_SETTLE_MS after the VM answers a call made with it (a batch timer of
 * 100 ms and a loaded app). The batch's events are separate messages (one
 * per timing) that a loaded VM service or DDS may pass on apart: once the
 * first is in, one more round trip brings the rest (every one was written
 * before its reply). With the watcher, a close waits for the same batch
 * (t_batch) before its last read: the watcher's timings callback runs in the
 * same hand-over as the binding's Flutter.Frame events, before the app
 * handles the read.
 *
 * On the web a close does more: the last frames before the app went quiet
 * are handed over only when a later frame comes, and DWDS sends the page's
 * events on in batches about a second apart (dwds/web/client.dart
 * _batchDelayMilliseconds, lib/shared/batched_stream.dart). So the first
 * read of a close (fe_closing), when the app drew within FE_WEB_DRAWING_MS
 * or nothing came yet, waits FE_WEB_NUDGE_MS (past the 100 ms of any
 * hand-over before it), has the app draw one frame
 * (ext.ui.window.scheduleFrame: its submit hands the held timings over; it
 * is in the stop), then waits FE_WEB_FORWARD_MS for DWDS's batch. With the watcher the read is an extension call, which DWDS
 * does not batch: after the frame it waits FE_WEB_HANDOVER_MS (the frame is
 * drawn and its timings callback runs) and asks the watcher. */
#define FE_SETTLE_MS 200
#define FE_DRAWING_MS 1000
#define FE_WEB_NUDGE_MS 110
#define FE_WEB_FORWARD_MS 1500 /* 1 000 ms batches, checked every 200 ms when idle */
#define FE_WEB_DRAWING_MS 3000
#define FE_WEB_HANDOVER_MS 100

static char *dup_or_null(const char *s) {
  return s ? strdup(s) : NULL;
}

/* ---- adding frames ------------------------------------------------------ */

static int get_field(const json_t *data, const char *key, int64_t lo, int64_t hi, int64_t *out) {
  const json_t *v = json_object_get(data, key);
  if (json_is_real(v)) { /* a JSON number the decoder read as real: exact integers only */
    double d = json_real_value(v);
    if (d != (double)(int64_t)d) return -1;
    *out = (int64_t)d;
  } else if (json_is_integer(v)) {
    *out = json_integer_value(v);
  } else {
    return -1;
  }
  return *out < lo || *out > hi ? -1 : 0;
}

static void settle_check(fe_t *fe);
static void on_forward_reply(void *arg, const vm_result_t *res);

int fe_add(fe_t *fe, const char *isolate_id, const char *kind, const json_t *data,
           const char *current_isolate) {
  if (!isolate_id || !kind || strcmp(kind, "Flutter.Frame") != 0 || !json_is_object(data)) return 0;
  if (!current_isolate || !current_isolate[0]) {
    /* Which isolate is current is not known yet (a connect, a reconnect):
     * DDS replays the Extension stream's history to a new listener, old
     * isolates' frames first, so no frame may start a run before the VM
     * names the isolate. Held, the newest kept, until fe_isolate_known. */
    if (strlen(isolate_id) >= sizeof fe->held[0].isolate) return 0;
    if (fe->nheld == FE_HELD_MAX) {
      json_decref(fe->held[fe->held_head].data);
      fe->held_head = (fe->held_head + 1) % FE_HELD_MAX;
      fe->nheld--;
      fe->held_lost++;
    }
    size_t i = (fe->held_head + fe->nheld++) % FE_HELD_MAX;
    snprintf(fe->held[i].isolate, sizeof fe->held[0].isolate, "%s", isolate_id);
    fe->held[i].data = json_incref((json_t *)data);
    return 0;
  }
  if (fe->nheld) fe_isolate_known(fe, current_isolate); /* they came first */
  if (strcmp(isolate_id, current_isolate) != 0) {
    /* Frames are the isolate's the event names: an old isolate's, replayed
     * by DDS, are not the current run's, nor do they start one. */
    fe->foreign++;
    return 0;
  }
  /* A hot restart's new isolate (or the first one) starts a new run. */
  if (strcmp(isolate_id, fe->isolate) != 0) fe_run_reset(fe, isolate_id);
  const int64_t T = RECORD_MAX_TIME_US, A = RECORD_MAX_AMOUNT;
  int64_t number, start, elapsed, build, raster, overhead;
  if (get_field(data, "number", -1, RECORD_MAX_COUNTER, &number) < 0 ||
      get_field(data, "startTime", -T / 2, T / 2, &start) < 0 ||
      get_field(data, "elapsed", 0, A, &elapsed) < 0 ||
      get_field(data, "build", 0, A, &build) < 0 || get_field(data, "raster", 0, A, &raster) < 0 ||
      get_field(data, "vsyncOverhead", 0, A, &overhead) < 0) {
    log_debug("frame events: a Flutter.Frame event with unusable fields was ignored");
    return 0;
  }
  /* A frame is told apart by (number, startTime), never by its number
   * alone: web_ui's FrameTiming defaults frameNumber to 1 and the older web
   * recorder never sets it, so every web frame may carry one number (and
   * warm-up frames repeat the previous one). Frames arrive in drawing order,
   * so a frame neither numbered above nor started after the newest kept one
   * is a repeat: DDS's replay of the Extension stream's history, or a second
   * subscription. */
  if (number <= fe->last_raw && start <= fe->last_start) return 0;
  fe->last_raw = number;
  fe->last_start = start;
  /* Unnumbered or repeated numbers are counted in arrival order, so the
   * records' frame numbers (and the liveness counter) still rise per frame. */
  if (number <= fe->last_number) number = fe->last_number + 1;
  if (fe->len == FE_RING) {
    fe_frame_clear(&fe->ring[fe->head]);
    fe->head = (fe->head + 1) % FE_RING;
    fe->len--;
  }
  fe_frame_t *f = &fe->ring[(fe->head + fe->len) % FE_RING];
  f->seq = fe->next_seq++;
  f->number = number;
  /* startTime is the build start; the vsync came vsyncOverhead before it
   * (FrameTiming.vsyncOverhead = buildStart - vsyncStart). */
  f->vsync_start_us = start - overhead;
  f->build_us = build;
  f->raster_us = raster;
  f->vsync_overhead_us = overhead;
  f->total_span_us = elapsed;
  f->iid = dup_or_null(fe->iid);
  f->lb = dup_or_null(fe->lb);
  if ((fe->iid && !f->iid) || (fe->lb && !f->lb))
    fe_frame_clear(f); /* out of memory: no interaction */
  fe->len++;
  fe->last_number = number;
  fe->last_end_us = f->vsync_start_us + elapsed;
  fe->frames++;
  fe->adds++;
  if (fe->loop) {
    fe->last_add_ms = uv_now(fe->loop);
    settle_check(fe);
  }
  return 1;
}

uint64_t fe_frames(const fe_t *fe) {
  return fe->frames;
}

/* ---- the transport ------------------------------------------------------ */

/* Answer from the events: the VM service said this isolate serves no
 * watcher, and it is a Flutter app's (or has posted frames). */
static int local_ok(const fe_t *fe) {
  if (!fe->app || !vm_app_watcher_missing(fe->app)) return 0;
  return vm_app_is_flutter(fe->app) ||
         (fe->frames && !strcmp(fe->isolate, vm_app_isolate_id(fe->app)));
}

int fe_in_use(const fe_t *fe) {
  return fe && local_ok(fe);
}

static void on_idle(uv_idle_t *h);
static void on_settle_timer(uv_timer_t *t);

static void call_unlink(fe_call_t *c) {
  fe_t *fe = c->fe;
  if (c->prev)
    c->prev->next = c->next;
  else
    fe->calls = c->next;
  if (c->next) c->next->prev = c->prev;
  c->next = c->prev = NULL;
}

static void call_free(fe_call_t *c) {
  json_decref(c->params);
  free(c);
}

static void make_local(fe_call_t *c) {
  c->kind = FC_LOCAL;
  c->ready = 1;
  if (!uv_is_active((uv_handle_t *)&c->fe->idle)) uv_idle_start(&c->fe->idle, on_idle);
}

static void deliver(fe_call_t *c, const vm_result_t *res) {
  call_unlink(c);
  vm_reply_cb cb = c->cb;
  void *arg = c->arg;
  call_free(c);
  cb(arg, res);
}

static void answer_local(fe_call_t *c) {
  char detail[128] = "";
  int rpc = 0;
  /* Frames held until the VM named the isolate: an idle app posts no
   * event that would release them. */
  fe_isolate_known(c->fe, vm_app_isolate_id(c->fe->app));
  json_t *o = fe_answer(c->fe, c->params, &rpc, detail, sizeof detail);
  if (!o && !rpc) {
    rpc = RPC_INTERNAL_ERROR;
    snprintf(detail, sizeof detail, "out of memory");
  }
  vm_result_t res = {DIAG_NONE, rpc, o ? "ok" : detail, o, NULL, 0};
  deliver(c, &res);
  json_decref(o);
}

/* Events travel on the socket ahead of any reply the VM writes after them:
 * once this round trip is answered, every event written before it is in.
 * NULL when out of memory. */
static vm_call_t *round_trip(fe_call_t *c) {
  return c->fwd = vm_app_call_vm(c->fe->app, "getVersion", NULL, on_forward_reply, c);
}

static void on_idle(uv_idle_t *h) {
  fe_t *fe = container_of(h, fe_t, idle);
  /* Answer the calls that were ready when this turn began; a callback may
   * add or cancel others. */
  size_t n = 0;
  for (fe_call_t *c = fe->calls; c; c = c->next) n += c->ready;
  while (n--) {
    fe_call_t *c = fe->calls;
    while (c && !c->ready) c = c->next;
    if (!c) break;
    answer_local(c);
  }
  int left = 0;
  for (fe_call_t *c = fe->calls; c; c = c->next) left |= c->ready;
  if (!left) uv_idle_stop(&fe->idle);
}

/* FC_SETTLE calls whose batch came, or whose deadline passed, are answered;
 * a web stop goes through its stages first. */
static void settle_check(fe_t *fe) {
  uint64_t now = uv_now(fe->loop), next = 0;
  for (fe_call_t *c = fe->calls; c; c = c->next) {
    if (c->kind == FC_BATCH) {
      if (fe->adds > c->adds_at || now >= c->settle_until) {
        deliver(c, &(vm_result_t){DIAG_NONE, 0, "ok", NULL, NULL, 0});
        return settle_check(fe); /* the list changed under us */
      }
      if (!next || c->settle_until < next) next = c->settle_until;
      continue;
    }
    if ((c->kind != FC_SETTLE && c->kind != FC_NUDGE) || c->fwd) continue;
    if (c->web == WEB_WAIT && now >= c->settle_until) {
      c->web = WEB_NUDGING;
      if ((c->fwd = vm_app_call_extension(fe->app, SCHEDULE_FRAME, NULL, on_forward_reply, c)))
        continue;
      c->web = WEB_FORWARD; /* out of memory: no frame, still the batch */
      c->settle_until = now + FE_WEB_FORWARD_MS;
    }
    if (c->kind == FC_NUDGE && c->web == WEB_FORWARD && now >= c->settle_until) {
      c->kind = FC_FORWARD; /* the frame is in: now the watcher's read */
      c->fwd = vm_app_call_extension(fe->app, VM_APP_WATCHER_EXTENSION, json_incref(c->params),
                                     on_forward_reply, c);
      if (!c->fwd) deliver(c, &(vm_result_t){DIAG_NONE, RPC_INTERNAL_ERROR, "out of memory", NULL, NULL, 0});
      return settle_check(fe); /* the list changed under us */
    }
    if (c->web == WEB_NONE && fe->adds > c->adds_at) {
      /* The batch began to come; one round trip brings the rest. */
      c->kind = FC_SYNC;
      if (!round_trip(c)) make_local(c);
      return settle_check(fe); /* the list changed under us */
    }
    if (c->web == WEB_NONE ? now >= c->settle_until
                           : c->web == WEB_FORWARD && now >= c->settle_until)
      make_local(c);
    else if (!next || c->settle_until < next)
      next = c->settle_until;
  }
  if (next)
    uv_timer_start(&fe->settle, on_settle_timer, next - now, 0);
  else
    uv_timer_stop(&fe->settle);
}

static void on_settle_timer(uv_timer_t *t) {
  settle_check(container_of(t, fe_t, settle));
}

static void on_forward_reply(void *arg, const vm_result_t *res) {
  fe_call_t *c = arg;
  c->fwd = NULL;
  if (c->kind == FC_SYNC) {
    /* Whatever the VM said, every event it wrote before it is in. */
    make_local(c);
    return;
  }
  if (c->kind == FC_SETTLE || c->kind == FC_NUDGE) {
    /* Every event written before the reply is in; now the next batch. A
     * web stop's frame was asked (drawn or refused): now DWDS's batch, or
     * the watcher once the frame is drawn. */
    if (c->web == WEB_NUDGING) {
      if (res->diag != DIAG_NONE || res->rpc_code)
        log_debug("frame events: scheduleFrame at a web stop failed (%d)", res->rpc_code);
      c->web = WEB_FORWARD;
      c->settle_until =
          uv_now(c->fe->loop) + (c->kind == FC_NUDGE ? FE_WEB_HANDOVER_MS : FE_WEB_FORWARD_MS);
    } else if (c->web == WEB_NONE) {
      /* A loaded VM answers late, and hands the batch over late too: the
       * wait counts from its answer. */
      c->settle_until = uv_now(c->fe->loop) + FE_SETTLE_MS;
    }
    settle_check(c->fe);
    return;
  }
  if (c->kind == FC_PROBE) {
    /* Flutter scheduled the frame; the probe's reply is the status the
     * caller then polls (the frame event raises the liveness counter). */
    if (res->diag == DIAG_NONE && res->rpc_code == 0) {
      answer_local(c);
      return;
    }
  } else if (c->kind == FC_FORWARD && res->diag == DIAG_WATCHER_MISSING && local_ok(c->fe)) {
    log_debug("frame events: no watcher in the app; answering from Flutter.Frame events");
    make_local(c);
    return;
  }
  deliver(c, res);
}

static fe_call_t *call_new(fe_t *fe, fc_kind_t kind, vm_reply_cb cb, void *arg) {
  fe_call_t *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->fe = fe;
  c->kind = kind;
  c->cb = cb;
  c->arg = arg;
  c->next = fe->calls;
  if (fe->calls) fe->calls->prev = c;
  fe->calls = c;
  return c;
}

/* A web app that drew lately, or whose first frames DWDS may still hold
 * (none came yet: a session shorter than its batch period). */
static int web_may_hold(const fe_t *fe, uint64_t now) {
  return vm_app_is_web(fe->app) && (!fe->last_add_ms || now - fe->last_add_ms < FE_WEB_DRAWING_MS);
}

/* 1 when this watcher call is the first read of a close (fe_closing, taken
 * here) on a web app that may hold frames: see FE_WEB_NUDGE_MS. */
static int web_close_read(fe_t *fe, const char *action, uint64_t now) {
  if (!action || strcmp(action, "read") || !fe->closing) return 0;
  fe->closing = 0;
  return web_may_hold(fe, now);
}

static void *t_call(void *arg, const char *method, json_t *params, vm_reply_cb cb, void *cb_arg) {
  fe_t *fe = arg;
  int watcher = method && !strcmp(method, VM_APP_WATCHER_EXTENSION);
  fe_call_t *c = call_new(fe, FC_FORWARD, cb, cb_arg);
  if (!c) {
    json_decref(params);
    return NULL;
  }
  const char *action = watcher ? json_string_value(json_object_get(params, "action")) : NULL;
  uint64_t now = uv_now(fe->loop);
  if (web_close_read(fe, action, now)) {
    c->web = WEB_WAIT; /* the web engine holds the newest frames: see above */
    c->settle_until = now + FE_WEB_NUDGE_MS;
  }
  if (watcher && local_ok(fe)) {
    c->params = params;
    if (action && !strcmp(action, "probe")) {
      c->kind = FC_PROBE;
      c->fwd = vm_app_call_extension(fe->app, SCHEDULE_FRAME, NULL, on_forward_reply, c);
      if (!c->fwd) goto oom;
    } else {
      /* One round trip first, so the answer holds every frame the app
       * posted before this call (a stop misses none in flight). */
      c->kind = FC_SYNC;
      if (c->web == WEB_WAIT) {
        c->kind = FC_SETTLE;
      } else if (action && (!strcmp(action, "read") || !strcmp(action, "stop")) &&
                 fe->last_add_ms && now - fe->last_add_ms < FE_DRAWING_MS) {
        c->kind = FC_SETTLE; /* the app draws: its newest frames are in the next batch */
        c->adds_at = fe->adds;
      }
      if (!round_trip(c)) goto oom;
    }
    return c;
  }
  if (watcher) c->params = json_incref(params); /* kept for a local answer if it is missing */
  if (c->web == WEB_WAIT) { /* the watcher's read goes out after the frame */
    c->kind = FC_NUDGE;
    json_decref(params);
    settle_check(fe);
    return c;
  }
  c->fwd = vm_app_call_extension(fe->app, method, params, on_forward_reply, c);
  if (!c->fwd) goto oom;
  return c;
oom:
  call_unlink(c);
  call_free(c);
  return NULL;
}

static void *t_call_vm(void *arg, const char *method, json_t *params, vm_reply_cb cb,
                       void *cb_arg) {
  fe_t *fe = arg;
  fe_call_t *c = call_new(fe, FC_VM, cb, cb_arg);
  if (!c) {
    json_decref(params);
    return NULL;
  }
  if (!(c->fwd = vm_app_call_vm(fe->app, method, params, on_forward_reply, c))) {
    call_unlink(c);
    call_free(c);
    return NULL;
  }
  return c;
}

static void t_cancel(void *handle) {
  fe_call_t *c = handle;
  if (!c) return;
  if (c->fwd) vm_call_cancel(c->fwd);
  call_unlink(c);
  call_free(c);
}

/* The transport's batch: while a native app with the watcher drew lately,
 * until the first event of its next batch (at most FE_SETTLE_MS); else at
 * once, from the loop. Answered from the events, the reads wait already. */
static void *t_batch(void *arg, vm_reply_cb cb, void *cb_arg) {
  fe_t *fe = arg;
  fe_call_t *c = fe->loop ? call_new(fe, FC_BATCH, cb, cb_arg) : NULL;
  if (!c) return NULL;
  uint64_t now = uv_now(fe->loop);
  int due = !local_ok(fe) && !vm_app_is_web(fe->app) && fe->last_add_ms &&
            now - fe->last_add_ms < FE_DRAWING_MS;
  c->adds_at = fe->adds;
  c->settle_until = now + (due ? FE_SETTLE_MS : 0);
  uv_timer_start(&fe->settle, on_settle_timer, 0, 0); /* settle_check from the loop */
  return c;
}

void fe_closing(fe_t *fe) {
  if (fe) fe->closing = 1;
}

wp_transport_t fe_transport(fe_t *fe) {
  wp_transport_t t = {t_call, t_cancel, t_call_vm, fe, t_batch};
  return t;
}

/* ---- lifetime ----------------------------------------------------------- */

fe_t *fe_new(uv_loop_t *loop, vm_app_t *app) {
  fe_t *fe = calloc(1, sizeof *fe);
  if (!fe || !(fe->ring = calloc(FE_RING, sizeof *fe->ring))) {
    free(fe);
    return NULL;
  }
  fe->loop = loop;
  fe->app = app;
  fe->last_number = -1;
  fe->last_raw = -1;
  fe->last_start = INT64_MIN;
  fe->next_seq = 1;
  if (loop) {
    uv_idle_init(loop, &fe->idle);
    fe->idle.data = fe;
    uv_timer_init(loop, &fe->settle);
    fe->settle.data = fe;
    fe->handles = 2;
  }
  return fe;
}

static void on_closed(uv_handle_t *h) {
  fe_t *fe = h->data;
  if (--fe->handles == 0) free(fe);
}

/* Drops what is held. */
static void held_drop(fe_t *fe) {
  for (size_t i = 0; i < fe->nheld; i++)
    json_decref(fe->held[(fe->held_head + i) % FE_HELD_MAX].data);
  fe->nheld = fe->held_head = 0;
}

void fe_isolate_known(fe_t *fe, const char *current_isolate) {
  if (!current_isolate || !current_isolate[0] || !fe->nheld) return; /* still held */
  size_t head = fe->held_head, n = fe->nheld;
  fe->nheld = fe->held_head = 0; /* fe_add below must not release them again */
  for (size_t k = 0; k < n; k++) {
    size_t i = (head + k) % FE_HELD_MAX;
    /* In arrival order: the current isolate's frames join its run, others
     * are counted as foreign. */
    fe_add(fe, fe->held[i].isolate, "Flutter.Frame", fe->held[i].data, current_isolate);
    json_decref(fe->held[i].data);
  }
  log_debug("frame events: %zu held frames judged for %s; so far %llu of other isolates dropped, "
            "%llu pushed out of the hold",
            n, current_isolate, (unsigned long long)fe->foreign, (unsigned long long)fe->held_lost);
}

void fe_free(fe_t *fe) {
  if (!fe) return;
  held_drop(fe);
  while (fe->calls) t_cancel(fe->calls);
  for (size_t i = 0; i < fe->len; i++) fe_frame_clear(&fe->ring[(fe->head + i) % FE_RING]);
  free(fe->ring);
  free(fe->iid);
  free(fe->lb);
  if (fe->loop) {
    uv_close((uv_handle_t *)&fe->idle, on_closed);
    uv_close((uv_handle_t *)&fe->settle, on_closed);
  } else {
    free(fe);
  }
}
