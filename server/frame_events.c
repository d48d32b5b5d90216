#include "frame_events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "container_of.h"
#include "log.h"
#include "record.h"

/* Flutter's own frame request, the probe without the watcher
 * (docs/flutter-apis.md: registered in debug and profile). */
#define SCHEDULE_FRAME "ext.ui.window.scheduleFrame"

typedef struct {
  int64_t seq, number, vsync_start_us, build_us, raster_us, vsync_overhead_us, total_span_us;
  char *iid, *lb; /* the interaction when it arrived; both NULL or both set */
} fe_frame_t;

typedef enum { FC_FORWARD = 0, FC_LOCAL, FC_PROBE, FC_VM, FC_SYNC, FC_SETTLE } fc_kind_t;

/* The last frames of a read or stop (issue 21 item 5). The engine hands
 * FrameTimings over in batches: native, at most 100 ms after the first frame
 * of a batch (shell.cc kBatchTimeInMilliseconds, debug and profile); web,
 * only when a frame comes more than 100 ms after the last hand-over
 * (web_ui frame_timing_recorder.dart submitTimings). A batch that arrives
 * after the call holds every frame drawn before it, so while the app drew
 * lately (an event within FE_DRAWING_MS: a batch may follow its last frame
 * by up to 1 s in release) a read or stop waits for the next batch, at most
 * FE_SETTLE_MS after the call (a batch timer of 100 ms and a loaded app). On
 * web the last frames may never be handed over (docs/tool.md). */
#define FE_SETTLE_MS 200
#define FE_DRAWING_MS 1000

typedef struct fe_call {
  fe_t *fe;
  fc_kind_t kind;
  json_t *params; /* ext.telescope.frames params (local answers) */
  vm_call_t *fwd; /* the call forwarded to the app, in flight */
  vm_reply_cb cb;
  void *arg;
  int ready;
  uint64_t adds_at, settle_until; /* FC_SETTLE: fe->adds when it began, its deadline */
  struct fe_call *next, *prev;
} fe_call_t;

struct fe {
  uv_loop_t *loop;
  vm_app_t *app;

  /* The run: one isolate's frames. */
  char isolate[128];
  char run_id[RECORD_MAX_RUN_ID + 1];
  unsigned runs;
  fe_frame_t *ring; /* FE_RING slots */
  size_t head, len;
  int64_t next_seq;    /* the seq the next frame gets (first: 1) */
  int64_t last_number; /* highest frame number kept (-1: none) */
  int64_t last_raw;    /* the newest kept frame's number as the event gave it */
  int64_t last_start;  /* ... and its startTime (INT64_MIN: none) */
  int64_t last_end_us; /* raster end of the newest frame */
  uint64_t frames;

  int collecting;
  char *iid, *lb;

  fe_call_t *calls; /* every call in flight, local or forwarded */
  uv_idle_t idle;
  uv_timer_t settle; /* the deadline of the FC_SETTLE calls */
  uint64_t adds;        /* frames kept, every run (FC_SETTLE waits for it to move) */
  uint64_t last_add_ms; /* loop time of the newest frame kept (0: none) */
  int handles;          /* open libuv handles; fe is freed when the last closes */
  int freeing;

  /* Frames of another isolate seen while the current one was unknown. */
  struct {
    char isolate[128];
    json_t *data; /* a reference */
  } held[FE_HELD_MAX];
  size_t nheld;
};

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

/* ---- the ring ----------------------------------------------------------- */

static void frame_clear(fe_frame_t *f) {
  free(f->iid);
  free(f->lb);
  f->iid = f->lb = NULL;
}

static void run_reset(fe_t *fe, const char *isolate) {
  for (size_t i = 0; i < fe->len; i++) frame_clear(&fe->ring[(fe->head + i) % FE_RING]);
  fe->head = fe->len = 0;
  fe->next_seq = 1;
  fe->last_number = -1;
  fe->last_raw = -1;
  fe->last_start = INT64_MIN;
  fe->last_end_us = 0;
  fe->frames = 0;
  fe->runs++;
  snprintf(fe->isolate, sizeof fe->isolate, "%s", isolate);
  /* The isolate id names the run (a hot restart makes a new isolate); the
   * counter tells apart two runs of one id after a reconnect. */
  snprintf(fe->run_id, sizeof fe->run_id, "fe%u:%.100s", fe->runs, isolate);
}

/* A Flutter.Frame field: an integer within the watcher protocol's bounds
 * (record.h), so the reply built from it always validates. */
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

int fe_add(fe_t *fe, const char *isolate_id, const char *kind, const json_t *data,
           const char *current_isolate) {
  if (!isolate_id || !kind || strcmp(kind, "Flutter.Frame") != 0 || !json_is_object(data))
    return 0;
  if (strcmp(isolate_id, fe->isolate) != 0 && fe->isolate[0] &&
      (!current_isolate || !current_isolate[0])) {
    /* Another isolate's, and which is current is not known yet (a
     * reconnect): held until it is, so DDS's replay of an old isolate's
     * events cannot start a run of it. */
    if (fe->nheld < FE_HELD_MAX && strlen(isolate_id) < sizeof fe->held[0].isolate) {
      snprintf(fe->held[fe->nheld].isolate, sizeof fe->held[0].isolate, "%s", isolate_id);
      fe->held[fe->nheld++].data = json_incref((json_t *)data);
    }
    return 0;
  }
  if (strcmp(isolate_id, fe->isolate) != 0) {
    /* Another isolate's frames: a hot restart's new isolate (or the first
     * one) starts a new run; an old one's (DDS replays the Extension
     * stream's history to new listeners) is not ours. */
    if (fe->isolate[0] && current_isolate && current_isolate[0] &&
        strcmp(isolate_id, current_isolate) != 0)
      return 0;
    run_reset(fe, isolate_id);
  }
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
    frame_clear(&fe->ring[fe->head]);
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
  if ((fe->iid && !f->iid) || (fe->lb && !f->lb)) frame_clear(f); /* out of memory: no interaction */
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

uint64_t fe_frames(const fe_t *fe) { return fe->frames; }

static int64_t first_seq(const fe_t *fe) { return fe->len ? fe->ring[fe->head].seq : 0; }

/* ---- answers ------------------------------------------------------------ */

/* A param as the handler sees it: a string (or, from our own wproto, a
 * number). */
static int param_int(const json_t *params, const char *key, int64_t *out) {
  const json_t *v = json_object_get(params, key);
  if (!v) return 0;
  if (json_is_integer(v)) {
    *out = json_integer_value(v);
    return 1;
  }
  if (!json_is_string(v)) return -1;
  char *end;
  long long n = strtoll(json_string_value(v), &end, 10);
  if (end == json_string_value(v) || *end) return -1;
  *out = n;
  return 1;
}

static json_t *record_json(const fe_frame_t *f) {
  json_t *r = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:{}}", "seq", (json_int_t)f->seq,
                        "frameNumber", (json_int_t)f->number, "atUs",
                        (json_int_t)(f->vsync_start_us + f->total_span_us), "vsyncStartUs",
                        (json_int_t)f->vsync_start_us, "buildUs", (json_int_t)f->build_us,
                        "rasterUs", (json_int_t)f->raster_us, "vsyncOverheadUs",
                        (json_int_t)f->vsync_overhead_us, "totalSpanUs",
                        (json_int_t)f->total_span_us, "blocks");
  if (r && f->iid &&
      (json_object_set_new(r, "interactionId", json_string(f->iid)) ||
       json_object_set_new(r, "linkedBy", json_string(f->lb)))) {
    json_decref(r);
    return NULL;
  }
  return r;
}

json_t *fe_answer(fe_t *fe, const json_t *params, int *rpc_code, char *detail, size_t detail_len) {
  const char *action = json_string_value(json_object_get(params, "action"));
  if (!action) action = "read";
  *rpc_code = 0;
  int read = !strcmp(action, "read");
  if (!read && strcmp(action, "start") && strcmp(action, "stop") && strcmp(action, "mark") &&
      strcmp(action, "status") && strcmp(action, "probe")) {
    *rpc_code = RPC_INVALID_PARAMS;
    snprintf(detail, detail_len, "action: unknown value");
    return NULL;
  }
  const char *iid = json_string_value(json_object_get(params, "interactionId"));
  const char *lb = json_string_value(json_object_get(params, "linkedBy"));
  if (!strcmp(action, "start") || !strcmp(action, "mark") || !strcmp(action, "stop")) {
    char *ni = NULL, *nl = NULL;
    if (iid && strcmp(action, "stop")) {
      ni = strdup(iid);
      nl = strdup(lb ? lb : "agent");
      if (!ni || !nl) {
        free(ni);
        free(nl);
        return NULL;
      }
    }
    /* start keeps the interaction unless it names one; mark and stop set it. */
    if (strcmp(action, "start") || ni) {
      free(fe->iid);
      free(fe->lb);
      fe->iid = ni;
      fe->lb = nl;
    }
    if (!strcmp(action, "start")) fe->collecting = 1;
    if (!strcmp(action, "stop")) fe->collecting = 0;
  }
  /* The run is the isolate the tool talks to: once the VM service has named
   * a new one (a hot restart), the old isolate's frames are no longer
   * served, even before the new one posts its first frame, as a restarted
   * watcher's ring starts empty. Serving them would hand out frames of a
   * dead isolate under its run id and show the restart only later. */
  const char *cur = fe->app ? vm_app_isolate_id(fe->app) : "";
  if (!fe->run_id[0])
    run_reset(fe, fe->app ? cur : "app");
  else if (cur[0] && strcmp(cur, fe->isolate) != 0)
    run_reset(fe, cur);
  json_t *inter = fe->iid ? json_pack("{s:s, s:s}", "interactionId", fe->iid, "linkedBy", fe->lb)
                          : json_null();
  json_t *o = json_pack(
      "{s:i, s:s, s:s, s:s, s:I, s:I, s:b, s:n, s:b, s:f, s:o, s:I, s:I, s:i, s:i}", "protocol", 1,
      "watcherVersion", FE_WATCHER_VERSION, "source", FE_SOURCE, "runId", fe->run_id,
      "livenessCounter", (json_int_t)(fe->last_number < 0 ? 0 : fe->last_number), "nowUs",
      (json_int_t)fe->last_end_us, "collecting", fe->collecting, "lifecycle", "framesEnabled", 1,
      "refreshRate", 0.0, "interaction", inter, "firstSeq", (json_int_t)first_seq(fe), "lastSeq",
      (json_int_t)(fe->next_seq - 1), "pending", 0, "droppedAttributions", 0);
  if (!o || !read) return o;
  int64_t since = 0, limit = WP_READ_LIMIT;
  if (param_int(params, "since", &since) < 0 || param_int(params, "limit", &limit) < 0 ||
      limit < 1) {
    json_decref(o);
    *rpc_code = RPC_INVALID_PARAMS;
    snprintf(detail, detail_len, "since/limit: must be integers (limit >= 1)");
    return NULL;
  }
  if (limit > RECORD_MAX_RECORDS) limit = RECORD_MAX_RECORDS;
  json_t *recs = json_array();
  size_t skip = 0;
  int64_t first = first_seq(fe);
  if (fe->len && since >= first) skip = (size_t)(since - first + 1);
  size_t i = skip;
  for (; recs && i < fe->len && (int64_t)(i - skip) < limit; i++) {
    json_t *r = record_json(&fe->ring[(fe->head + i) % FE_RING]);
    if (!r || json_array_append_new(recs, r)) {
      json_decref(recs);
      recs = NULL;
    }
  }
  if (!recs || json_object_set_new(o, "records", recs) ||
      json_object_set_new(o, "more", json_boolean(i < fe->len))) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* ---- the transport ------------------------------------------------------ */

/* Answer from the events: the VM service said this isolate serves no
 * watcher, and it is a Flutter app's (or has posted frames). */
static int local_ok(const fe_t *fe) {
  if (!fe->app || !vm_app_watcher_missing(fe->app)) return 0;
  return vm_app_is_flutter(fe->app) ||
         (fe->frames && !strcmp(fe->isolate, vm_app_isolate_id(fe->app)));
}

int fe_in_use(const fe_t *fe) { return fe && local_ok(fe); }

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
  json_t *o = fe_answer(c->fe, c->params, &rpc, detail, sizeof detail);
  if (!o && !rpc) {
    rpc = RPC_INTERNAL_ERROR;
    snprintf(detail, sizeof detail, "out of memory");
  }
  vm_result_t res = {DIAG_NONE, rpc, o ? "ok" : detail, o};
  deliver(c, &res);
  json_decref(o);
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

/* FC_SETTLE calls whose batch came, or whose deadline passed, are answered. */
static void settle_check(fe_t *fe) {
  uint64_t now = uv_now(fe->loop), next = 0;
  for (fe_call_t *c = fe->calls; c; c = c->next) {
    if (c->kind != FC_SETTLE || c->fwd) continue;
    if (fe->adds > c->adds_at || now >= c->settle_until)
      make_local(c);
    else if (!next || c->settle_until < next)
      next = c->settle_until;
  }
  if (next)
    uv_timer_start(&fe->settle, on_settle_timer, next - now, 0);
  else
    uv_timer_stop(&fe->settle);
}

static void on_settle_timer(uv_timer_t *t) { settle_check(container_of(t, fe_t, settle)); }

static void on_forward_reply(void *arg, const vm_result_t *res) {
  fe_call_t *c = arg;
  c->fwd = NULL;
  if (c->kind == FC_SYNC) {
    /* Whatever the VM said, every event it wrote before it is in. */
    make_local(c);
    return;
  }
  if (c->kind == FC_SETTLE) {
    /* Every event written before the reply is in; now the next batch. */
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

static void *t_call(void *arg, const char *method, json_t *params, vm_reply_cb cb, void *cb_arg) {
  fe_t *fe = arg;
  int watcher = method && !strcmp(method, VM_APP_WATCHER_EXTENSION);
  fe_call_t *c = call_new(fe, FC_FORWARD, cb, cb_arg);
  if (!c) {
    json_decref(params);
    return NULL;
  }
  if (watcher && local_ok(fe)) {
    const char *action = json_string_value(json_object_get(params, "action"));
    c->params = params;
    if (action && !strcmp(action, "probe")) {
      c->kind = FC_PROBE;
      c->fwd = vm_app_call_extension(fe->app, SCHEDULE_FRAME, NULL, on_forward_reply, c);
      if (!c->fwd) goto oom;
    } else {
      /* The events travel on the socket ahead of any reply the VM writes
       * after them: one round trip first, so the answer holds every frame
       * the app posted before this call (a stop misses none in flight). */
      c->kind = FC_SYNC;
      uint64_t now = uv_now(fe->loop);
      if (action && (!strcmp(action, "read") || !strcmp(action, "stop")) && fe->last_add_ms &&
          now - fe->last_add_ms < FE_DRAWING_MS) {
        c->kind = FC_SETTLE; /* the app draws: its newest frames are in the next batch */
        c->adds_at = fe->adds;
        c->settle_until = now + FE_SETTLE_MS;
      }
      c->fwd = vm_app_call_vm(fe->app, "getVersion", NULL, on_forward_reply, c);
      if (!c->fwd) goto oom;
    }
    return c;
  }
  if (watcher) c->params = json_incref(params); /* kept for a local answer if it is missing */
  c->fwd = vm_app_call_extension(fe->app, method, params, on_forward_reply, c);
  if (!c->fwd) goto oom;
  return c;
oom:
  call_unlink(c);
  call_free(c);
  return NULL;
}

static void *t_call_vm(void *arg, const char *method, json_t *params, vm_reply_cb cb, void *cb_arg) {
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

wp_transport_t fe_transport(fe_t *fe) {
  wp_transport_t t = {t_call, t_cancel, t_call_vm, fe};
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

void fe_isolate_known(fe_t *fe, const char *current_isolate) {
  size_t i, n = fe->nheld;
  fe->nheld = 0; /* fe_add below must not hold them again */
  for (i = 0; i < n; i++) {
    if (current_isolate && current_isolate[0] && !strcmp(fe->held[i].isolate, current_isolate))
      fe_add(fe, fe->held[i].isolate, "Flutter.Frame", fe->held[i].data, current_isolate);
    json_decref(fe->held[i].data);
  }
}

void fe_free(fe_t *fe) {
  if (!fe) return;
  fe_isolate_known(fe, NULL); /* drops what is held */
  while (fe->calls) t_cancel(fe->calls);
  for (size_t i = 0; i < fe->len; i++) frame_clear(&fe->ring[(fe->head + i) % FE_RING]);
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
