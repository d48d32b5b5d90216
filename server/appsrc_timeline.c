#include "appsrc_timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "container_of.h"
#include "log.h"
#include "vm_wire.h"

/* The VM timeline's recorded streams, as our calls left them. UNKNOWN: not
 * read since the last session; READ: read, ours not added yet; ON: GC and
 * Embedder recorded (set by us when set); NONE: not available (web, an
 * old VM, no answer) until no session is open. */
typedef enum { TL_UNKNOWN = 0, TL_READ, TL_ON, TL_NONE } tl_t;
typedef enum { TLC_FLAGS = 0, TLC_SET, TLC_MICROS, TLC_CHECK, TLC_RESTORE } tlc_t;

struct appsrc_timeline {
  const wp_transport_t *t; /* the owner's */
  appsrc_settled_cb settled;
  void *arg;
  appsrc_slot_t *slots;    /* attached: the open sessions' (appsrc_tl_slot_t) */
  tl_t tl;
  json_t *prev;  /* recordedStreams before our set (owned) */
  json_t *back;  /* what to set back: the VM's streams at the end less ours (owned) */
  char *why;     /* TL_NONE's warning, for sessions that open while it holds (owned) */
  int set;       /* we changed them: set them back when no session wants them */
  int gone;      /* the connection to that VM dropped since: nothing to set back */
  void *ctl;     /* the control call in flight (a transport handle) */
  tlc_t ctl_kind;
  void *pull;    /* the pull in flight, part of a drain generation */
  appsrc_done_cb pull_done;
  void *pull_arg;
  vmtl_parser_t *parser;
  int64_t origin; /* the next pull starts here (timeline µs); -1: not known */
  int64_t newest; /* the newest event time any pull saw (-1: none yet) */
  char lost[300]; /* why the last set-back failed, until taken ("": it did not) */
  json_t *orphan; /* prev of ours left recorded by it (owned): the next session takes them over */
  /* A pull's reply of VM_CLIENT_TEXT_MIN bytes or more comes as text and is
   * parsed on libuv's thread pool, off the loop. While it is (working), the
   * worker alone touches parser and the fields below, and the pull counts as
   * in flight; its events reach the slots on the loop when it ends. */
  uv_loop_t *loop;
  uv_work_t work;
  char *text;         /* the reply's copy, the worker's */
  size_t text_len;
  vmtl_parser_t *wparser; /* parser, as the worker's until it ends */
  int wforgot;        /* the timeline was forgotten meanwhile: free wparser, drop its events */
  vmtl_event_t *wev;  /* the events it read */
  size_t wn, wcap;
  int wlost;          /* some did not fit in memory */
  vmtl_pull_stats_t wst;
  int wrc;            /* vmtl_parse's result; -1 also when the reply could not be read */
  int wrpc;           /* the reply was a JSON-RPC error with this code */
  char werr[160];
  int working, freed; /* freed: appsrc_timeline_free came during the work */
};

/* Each attached slot as the timeline's (its base is its first member). */
#define SLOTS(src, s) \
  for (appsrc_tl_slot_t *s = (appsrc_tl_slot_t *)(src)->slots; s; s = (appsrc_tl_slot_t *)s->base.next)

static const char *const tl_streams[] = {"GC", "Embedder"};

/* The VM's kInvalidTimelineRequest: its recorder keeps no events for the VM
 * service (dart-lang/sdk runtime/vm/service.cc GetVMTimelineCommon). */
#define VM_INVALID_TIMELINE_REQUEST 114

/* The recorders whose events go elsewhere than getVMTimeline (runtime/vm/
 * timeline.h *_RECORDER_NAME; docs/flutter-apis.md), and what to do. */
static const struct {
  const char *name, *where;
} tl_elsewhere[] = {
    {"Systrace", "the OS's trace (flutter run --trace-systrace)"},
    {"Fuchsia", "the OS's trace"},
    {"Macos", "the OS's trace (signposts)"},
    {"File", "a file (flutter run --trace-to-file)"},
    {"Perfettofile", "a Perfetto file (flutter run --trace-to-file)"},
    {"Callback", "the embedder's own tracer"},
};
#define TL_REMEDY \
  "run the app without --trace-systrace, --trace-to-file or a Perfetto recorder"

/* Why the recorder named so keeps no events for us (into why), or 0. */
static int tl_recorder_elsewhere(const char *name, char *why, size_t len) {
  for (size_t i = 0; name && i < sizeof tl_elsewhere / sizeof *tl_elsewhere; i++)
    if (!strcmp(name, tl_elsewhere[i].name)) {
      snprintf(why, len, "the VM's timeline recorder is \"%s\": its events go to %s, not to the VM "
               "service; " TL_REMEDY, name, tl_elsewhere[i].where);
      return 1;
    }
  return 0;
}

/* A pull is in flight: asked, or its reply still being read off the loop. */
static int tl_pulling(const appsrc_timeline_t *src) {
  return src->pull != NULL || src->working;
}

static int tl_wanted(const appsrc_timeline_t *src) {
  SLOTS(src, s) if (s->base.want) return 1;
  return 0;
}

static int has_stream(const json_t *arr, const char *name) {
  size_t i;
  json_t *v;
  json_array_foreach(arr, i, v) if (json_is_string(v) && !strcmp(json_string_value(v), name)) return 1;
  return 0;
}

/* The timeline is not to be had while these sessions are open: they say so. */
static void tl_none(appsrc_timeline_t *src, const char *why) {
  char w[512];
  src->tl = TL_NONE;
  snprintf(w, sizeof w, "timeline: %s; no gc or shader findings", why);
  SLOTS(src, s) if (s->base.want) s->base.warn(&s->base, w, 0);
  free(src->why);
  src->why = strdup(w);
  log_debug("sessions: %s", w);
}

/* A session that opened after the timeline was found missing says so too. */
static void tl_none_again(appsrc_timeline_t *src) {
  if (!src->why) return;
  SLOTS(src, s) if (s->base.want) s->base.warn(&s->base, src->why, 1);
}

static void tl_forget(appsrc_timeline_t *src) {
  src->tl = TL_UNKNOWN;
  free(src->why);
  src->why = NULL;
  src->gone = 0;
  src->origin = src->newest = -1;
  json_decref(src->prev);
  src->prev = NULL;
  json_decref(src->back);
  src->back = NULL;
  if (src->working && src->parser == src->wparser)
    src->wforgot = 1; /* the worker's: freed when it ends */
  else
    vmtl_parser_free(src->parser);
  src->parser = NULL;
}

/* What to set back at the end: the streams the VM records now (rec) less
 * the ones we added, so a stream another client (DevTools) switched on or off
 * meanwhile stays as it left it. rec NULL (the VM answered with an error):
 * what we found. Leaves back NULL when none of ours is recorded now;
 * -1: out of memory. */
static int tl_back_from(appsrc_timeline_t *src, const json_t *rec) {
  json_decref(src->back);
  src->back = NULL;
  if (!rec) {
    src->back = src->prev ? json_deep_copy(src->prev) : json_array();
    return src->back ? 0 : -1;
  }
  json_t *back = json_array();
  int ours = 0;
  size_t i;
  json_t *v;
  if (!back) return -1;
  json_array_foreach(rec, i, v) {
    int added = 0;
    for (size_t k = 0; k < 2; k++)
      if (json_is_string(v) && !strcmp(json_string_value(v), tl_streams[k]) &&
          !has_stream(src->prev, tl_streams[k]))
        added = 1;
    if (added) {
      ours = 1;
    } else if (json_array_append(back, v) < 0) {
      json_decref(back);
      return -1;
    }
  }
  if (ours)
    src->back = back;
  else
    json_decref(back);
  return 0;
}

/* The streams we added stay recorded: said in the log and, through
 * appsrc_timeline_lost, in the answer of the stop that waited for it. */
static void tl_lost(appsrc_timeline_t *src, const char *why) {
  log_warn("sessions: the VM's timeline streams could not be set back: %s", why);
  json_decref(src->orphan);
  src->orphan = src->prev ? json_incref(src->prev) : NULL;
  snprintf(src->lost, sizeof src->lost,
           "timeline: the app's VM timeline streams (GC, Embedder) could not be set back and stay "
           "recorded: %.160s",
           why);
}

static void tl_ctl_reply(void *arg, const vm_result_t *res) {
  appsrc_timeline_t *src = arg;
  src->ctl = NULL;
  int ok = res->diag == DIAG_NONE && res->rpc_code == 0 && res->result;
  char why[400];
  snprintf(why, sizeof why, "%s", res->diag != DIAG_NONE || res->rpc_code ? res->detail : "no result");
  switch (src->ctl_kind) {
  case TLC_FLAGS: {
    const json_t *avail = ok ? json_object_get(res->result, "availableStreams") : NULL;
    const json_t *rec = ok ? json_object_get(res->result, "recordedStreams") : NULL;
    if (ok && tl_recorder_elsewhere(json_string_value(json_object_get(res->result, "recorderName")),
                                    why, sizeof why)) {
      tl_none(src, why);
      break;
    }
    if (!json_is_array(rec)) {
      tl_none(src, ok ? "the VM sent no recordedStreams" : why);
      break;
    }
    int all = 1;
    for (size_t i = 0; i < 2; i++) {
      if (json_is_array(avail) && !has_stream(avail, tl_streams[i])) {
        snprintf(why, sizeof why, "the VM does not offer the %s stream", tl_streams[i]);
        tl_none(src, why);
        goto done;
      }
      all &= has_stream(rec, tl_streams[i]);
    }
    json_decref(src->prev);
    src->prev = json_deep_copy(rec);
    src->tl = all ? TL_ON : TL_READ; /* already recorded (DevTools): nothing to set or restore */
    if (all && src->orphan) { /* ... unless ours, left on: set back at this session's end */
      json_decref(src->prev);
      src->prev = json_incref(src->orphan);
      src->set = 1;
    }
    json_decref(src->orphan);
    src->orphan = NULL;
    break;
  }
  case TLC_SET:
    if (ok) {
      src->tl = TL_ON;
      src->set = 1;
    } else {
      if (wp_maybe_ran(&(wp_status_t){res->diag, res->rpc_code, ""})) src->set = 1; /* may have run: restore anyway */
      tl_none(src, why);
    }
    break;
  case TLC_MICROS: {
    const json_t *ts = ok ? json_object_get(res->result, "timestamp") : NULL;
    if (!json_is_integer(ts)) {
      tl_none(src, ok ? "the VM sent no timestamp" : why);
      break;
    }
    src->origin = json_integer_value(ts);
    if (!src->parser && !(src->parser = vmtl_parser_new())) tl_none(src, "out of memory");
    SLOTS(src, s) if (s->base.want && src->tl == TL_ON) s->base.on = 1;
    break;
  }
  case TLC_CHECK: {
    /* No answer at all: a set would wait as long again, so none is sent. */
    const json_t *rec = ok ? json_object_get(res->result, "recordedStreams") : NULL;
    int mute = !json_is_array(rec) && res->diag != DIAG_NONE;
    if (mute || tl_back_from(src, json_is_array(rec) ? rec : NULL) < 0)
      tl_lost(src, mute ? why : "out of memory");
    if (!src->back) { /* or none of ours is recorded any more: nothing to set */
      src->set = 0;
      tl_forget(src);
    }
    break;
  }
  case TLC_RESTORE:
    /* Set back, or tried: a VM that did not answer keeps ours (said in the log). */
    if (!ok) tl_lost(src, why);
    src->set = 0;
    tl_forget(src);
    break;
  }
done:
  src->settled(src->arg);
}

static int tl_send(appsrc_timeline_t *src, tlc_t kind, const char *method, json_t *params) {
  src->ctl_kind = kind;
  src->ctl = src->t->call_vm(src->t->arg, method, params, tl_ctl_reply, src);
  return src->ctl ? 0 : -1;
}

int appsrc_timeline_step(appsrc_timeline_t *src, int want) {
  if (!src->t->call_vm) return 0;
  int tl_want = want && tl_wanted(src);
  if (!tl_want) {
    if (src->set && src->gone) {
      /* The VM we changed is gone (the app exited or was replaced): there is
       * nothing to set back, and another app must not get our old flags. */
      log_info("sessions: the app went away; its timeline streams are not set back");
      src->set = 0;
    }
    if (src->set && !tl_pulling(src) && !src->back)
      return tl_send(src, TLC_CHECK, "getVMTimelineFlags", NULL) == 0;
    if (src->set && !tl_pulling(src))
      return tl_send(src, TLC_RESTORE, "setVMTimelineFlags",
                     json_pack("{s:O}", "recordedStreams", src->back)) == 0;
    if (!src->set && src->tl != TL_UNKNOWN && !tl_pulling(src)) tl_forget(src);
    return 0;
  }
  json_decref(src->back); /* a session came before they were set back: ours stay */
  src->back = NULL;
  if (src->tl == TL_UNKNOWN) return tl_send(src, TLC_FLAGS, "getVMTimelineFlags", NULL) == 0;
  if (src->tl == TL_NONE) tl_none_again(src);
  if (src->tl == TL_READ) {
    json_t *streams = json_deep_copy(src->prev);
    for (size_t i = 0; streams && i < 2; i++)
      if (!has_stream(streams, tl_streams[i])) json_array_append_new(streams, json_string(tl_streams[i]));
    return tl_send(src, TLC_SET, "setVMTimelineFlags", json_pack("{s:o}", "recordedStreams", streams)) == 0;
  }
  if (src->tl == TL_ON && src->origin < 0) return tl_send(src, TLC_MICROS, "getVMTimelineMicros", NULL) == 0;
  if (src->tl == TL_ON) /* a session that opened later */
    SLOTS(src, s) if (s->base.want) s->base.on = 1;
  return 0;
}

static void tl_sink(void *arg, const vmtl_event_t *ev) {
  appsrc_timeline_t *src = arg;
  SLOTS(src, s) {
    if (!s->base.want || !s->base.on || !s->base.begun) continue;
    if (s->n == APPSRC_TL_MAX_EVENTS) {
      s->base.dropped = 1;
      continue;
    }
    if (s->n == s->cap) {
      size_t cap = s->cap ? s->cap * 2 : 256;
      if (cap > APPSRC_TL_MAX_EVENTS) cap = APPSRC_TL_MAX_EVENTS;
      vmtl_event_t *p = realloc(s->ev, cap * sizeof *p);
      if (!p) {
        s->base.dropped = 1;
        continue;
      }
      s->ev = p;
      s->cap = cap;
    }
    s->ev[s->n++] = *ev;
  }
}

/* A pull read the VM's events since the last: the origin moves on. */
static void tl_pulled(appsrc_timeline_t *src, const vmtl_pull_stats_t *st) {
  /* The reply's timeOriginMicros is the oldest event the recorder still
   * holds (docs/flutter-apis.md): later than the newest one an earlier pull
   * saw, and its ring overwrote events before we read them. */
  if (src->newest >= 0 && st->origin_us > src->newest)
    SLOTS(src, s) if (s->base.on) s->base.dropped = 1;
  if (st->newest_ts_us > src->newest) src->newest = st->newest_ts_us;
  if (st->newest_ts_us - APPSRC_TL_OVERLAP_US > src->origin)
    src->origin = st->newest_ts_us - APPSRC_TL_OVERLAP_US;
}

/* A pull the VM did not answer with events (rpc: its JSON-RPC error, 0 for
 * none). */
static void tl_pull_failed(appsrc_timeline_t *src, int rpc, const char *detail) {
  if (rpc == VM_INVALID_TIMELINE_REQUEST && src->tl == TL_ON) {
    /* The recorder changed under us, or its name was not one we know: the
     * timeline is not to be had, said once (pulls stop with TL_NONE). */
    char why[400];
    snprintf(why, sizeof why, "getVMTimeline answered %d (%.200s); " TL_REMEDY,
             VM_INVALID_TIMELINE_REQUEST, detail ? detail : "");
    SLOTS(src, s) if (!s->n) s->base.on = 0;
    tl_none(src, why);
  } else {
    log_debug("sessions: timeline pull failed: %s", detail);
  }
}

static void tl_work_sink(void *arg, const vmtl_event_t *ev) {
  appsrc_timeline_t *src = arg;
  if (src->wn == src->wcap) {
    size_t cap = src->wcap ? src->wcap * 2 : 1024;
    vmtl_event_t *p = realloc(src->wev, cap * sizeof *p);
    if (!p) {
      src->wlost = 1;
      return;
    }
    src->wev = p;
    src->wcap = cap;
  }
  src->wev[src->wn++] = *ev;
}

/* On the thread pool: the reply's JSON, then its events. */
static void tl_work(uv_work_t *w) {
  appsrc_timeline_t *src = container_of(w, appsrc_timeline_t, work);
  const json_t *result;
  json_t *msg = vm_wire_read_text(src->text, src->text_len, &result, &src->wrpc, src->werr,
                                  sizeof src->werr);
  src->text = NULL;
  src->wrc = result ? vmtl_parse(src->wparser, result, tl_work_sink, src, &src->wst, src->werr,
                                 sizeof src->werr)
                    : -1;
  json_decref(msg);
}

static void tl_release(appsrc_timeline_t *src);

static void tl_work_done(uv_work_t *w, int status) {
  appsrc_timeline_t *src = container_of(w, appsrc_timeline_t, work);
  int forgot = src->wforgot;
  src->working = 0;
  free(src->text); /* still there when the work never ran (cancelled) */
  src->text = NULL;
  if (forgot) vmtl_parser_free(src->wparser);
  src->wparser = NULL;
  src->wforgot = 0;
  if (src->freed) {
    tl_release(src);
    return;
  }
  if (status) {
    log_debug("sessions: timeline pull failed: %s", uv_strerror(status));
  } else if (src->wrpc) {
    if (!forgot) tl_pull_failed(src, src->wrpc, src->werr);
  } else if (src->wrc < 0) {
    log_debug("sessions: timeline: %s", src->werr);
  } else {
    if (src->wlost) log_debug("sessions: timeline: out of memory: some events of a pull are lost");
    for (size_t i = 0; i < src->wn; i++) tl_sink(src, &src->wev[i]);
    if (!forgot) tl_pulled(src, &src->wst); /* else the timeline starts afresh */
  }
  free(src->wev);
  src->wev = NULL;
  src->wn = src->wcap = 0;
  src->pull_done(src->pull_arg);
}

/* The reply's text read off the loop (tl_work): 0 when the work is queued
 * (pull_done follows it). */
static int tl_work_queue(appsrc_timeline_t *src, const char *text, size_t len) {
  if (!(src->text = malloc(len))) return -1;
  memcpy(src->text, text, len);
  src->text_len = len;
  src->wparser = src->parser;
  src->wn = 0;
  src->wlost = 0;
  if (uv_queue_work(src->loop, &src->work, tl_work, tl_work_done)) {
    free(src->text);
    src->text = NULL;
    return -1;
  }
  src->working = 1;
  return 0;
}

/* A pull's reply: its events go to the sessions recording the timeline.
 * Whatever happened, the generation then ends: the timeline only explains,
 * it never holds a stop. */
static void tl_pull_reply(void *arg, const vm_result_t *res) {
  appsrc_timeline_t *src = arg;
  src->pull = NULL;
  if (res->diag != DIAG_NONE || res->rpc_code) {
    tl_pull_failed(src, res->diag == DIAG_NONE ? res->rpc_code : 0, res->detail);
  } else if (!res->result && res->records && src->parser) { /* large: as text */
    if (tl_work_queue(src, res->records, res->records_len) == 0) return;
    log_debug("sessions: timeline pull failed: out of memory");
  } else if (!res->result) {
    log_debug("sessions: timeline pull failed: %s", res->detail);
  } else if (src->parser) {
    vmtl_pull_stats_t st;
    char err[128];
    if (vmtl_parse(src->parser, res->result, tl_sink, src, &st, err, sizeof err) < 0)
      log_debug("sessions: timeline: %s", err);
    else
      tl_pulled(src, &st);
  }
  src->pull_done(src->pull_arg);
}

int appsrc_timeline_pull(appsrc_timeline_t *src, int ok, appsrc_done_cb done, void *arg) {
  if (!(src->tl == TL_ON && src->parser && src->origin >= 0 && tl_wanted(src) && src->t->call_vm && ok) ||
      tl_pulling(src))
    return 0;
  json_t *p = json_pack("{s:I, s:I}", "timeOriginMicros", (json_int_t)src->origin,
                        "timeExtentMicros", (json_int_t)(INT64_C(1) << 40));
  src->pull_done = done;
  src->pull_arg = arg;
  src->pull = src->t->call_vm(src->t->arg, "getVMTimeline", p, tl_pull_reply, src);
  return src->pull != NULL;
}

int appsrc_timeline_calling(const appsrc_timeline_t *src) { return src->ctl != NULL; }

const char *appsrc_timeline_lost(appsrc_timeline_t *src) {
  static char taken[sizeof src->lost];
  if (!src->lost[0]) return NULL;
  memcpy(taken, src->lost, sizeof taken);
  src->lost[0] = 0;
  return taken;
}
int appsrc_timeline_pulling(const appsrc_timeline_t *src) { return tl_pulling(src); }

void appsrc_timeline_gone(appsrc_timeline_t *src) {
  json_decref(src->orphan); /* another VM must not lose streams another client set */
  src->orphan = NULL;
  if (src->tl != TL_UNKNOWN || src->set) {
    src->gone = 1;
    if (src->tl == TL_ON || src->tl == TL_READ) src->tl = TL_NONE; /* no more pulls from it */
  }
}

void appsrc_timeline_attach(appsrc_timeline_t *src, appsrc_tl_slot_t *slot) {
  slot->base.next = src->slots;
  src->slots = &slot->base;
}

void appsrc_timeline_detach(appsrc_timeline_t *src, appsrc_tl_slot_t *slot) {
  for (appsrc_slot_t **p = &src->slots; *p; p = &(*p)->next)
    if (*p == &slot->base) {
      *p = slot->base.next;
      break;
    }
  slot->base.next = NULL;
}

void appsrc_tl_slot_close(appsrc_tl_slot_t *slot) {
  free(slot->ev);
  slot->ev = NULL;
  slot->n = slot->cap = 0;
}

appsrc_timeline_t *appsrc_timeline_new(uv_loop_t *loop, const wp_transport_t *t,
                                       appsrc_settled_cb settled, void *arg) {
  appsrc_timeline_t *src = calloc(1, sizeof *src);
  if (!src) return NULL;
  src->loop = loop;
  src->t = t;
  src->settled = settled;
  src->arg = arg;
  src->origin = src->newest = -1;
  return src;
}

static void tl_release(appsrc_timeline_t *src) {
  tl_forget(src);
  json_decref(src->orphan);
  free(src->wev);
  free(src);
}

void appsrc_timeline_free(appsrc_timeline_t *src) {
  if (!src) return;
  if (src->ctl) src->t->cancel(src->ctl);
  if (src->pull) src->t->cancel(src->pull);
  src->ctl = src->pull = NULL;
  if (src->working) { /* the worker holds the parser: released when it ends */
    src->freed = 1;
    uv_cancel((uv_req_t *)&src->work);
    return;
  }
  tl_release(src);
}
