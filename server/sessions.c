#include "sessions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "container_of.h"
#include "log.h"
#include "summary.h"

#define MAX_WARNINGS 4

struct session {
  int refs;
  char id[16];
  session_state_t state;
  int capture;
  char *interaction_id, *linked_by;
  double budget_ms;
  int64_t budget_us;
  int track[WP_TRACK__COUNT];
  double refresh_rate;    /* the app's, when the session began (Hz; 0 unknown) */
  const char *build_mode; /* static "debug"/"profile"/"release"; NULL unknown */
  int taken_over;         /* the start found another tool collecting (collectionTakenOver) */
  int include_startup;    /* includeStartup: start-up frames are judged as any other */
  int frame_events;       /* it began on Flutter.Frame events (no watcher): no blocks */
  store_t *store; /* set once the session has begun (its first position is known) */
  uint64_t read_pos;
  uint64_t started_ms, stopped_ms;
  int asked;           /* the begin call in flight covers this session */
  int close_requested; /* a close came while it was opening */
  uint64_t close_gen;  /* closing: the drain generation that ends it */
  uint64_t close_ms;   /* when the close began: it follows `more` for SESSIONS_CLOSE_MORE_MS */
  int open_failed;
  wp_status_t open_status; /* why it failed to open */
  wp_status_t end;         /* closed: why the final drain did not get through */
  char *warnings[MAX_WARNINGS + 1];
  size_t nwarnings;
  /* The VM timeline while it was open (issue 15). */
  int timeline;        /* asked for it */
  int tl_on;           /* the VM recorded GC and Embedder for it at some point */
  int tl_dropped;      /* events it should have were lost (ring overwrite, cap) */
  vmtl_event_t *tl_ev; /* kept events, SESSIONS_TL_MAX_EVENTS at most */
  size_t tl_n, tl_cap;
  session_t *next; /* in the manager's open list */
};

typedef enum { W_OPEN, W_OPEN_AFTER, W_CLOSE, W_DRAIN } wait_kind_t;

struct sessions_wait {
  sessions_t *m;
  wait_kind_t kind;
  session_t *s; /* a reference, handed to the callback */
  uint64_t gen; /* W_DRAIN: satisfied once a drain of this generation ended; 0: not asked yet */
  int joined;
  int ready; /* on the ready list */
  wp_status_t st;
  session_options_t opt; /* W_OPEN_AFTER: what to open once the close is over */
  sessions_open_cb open_cb;
  sessions_cb cb;
  void *arg;
  sessions_wait_t *next, *prev;
};

typedef enum { COLL_OFF = 0, COLL_ON } coll_t;

/* The VM timeline's recorded streams, as our calls left them. UNKNOWN: not
 * read since the last session; READ: read, ours not added yet; ON: GC and
 * Embedder recorded (set by us when tl_set); NONE: not available (web, an
 * old VM, no answer) until no session is open. */
typedef enum { TL_UNKNOWN = 0, TL_READ, TL_ON, TL_NONE } tl_t;
typedef enum { TLC_FLAGS = 0, TLC_SET, TLC_MICROS, TLC_CHECK, TLC_RESTORE } tlc_t;

struct sessions {
  uv_loop_t *loop;
  wp_transport_t t;
  int have_t;
  sessions_reply_cb on_reply;
  void *reply_arg;
  unsigned next_id;

  session_t *open;    /* opening, active and closing sessions */
  session_t *current; /* the `start`ed one, in open */
  session_t *history[SESSIONS_HISTORY]; /* closed, oldest first */
  size_t nhistory;

  /* Attribution in the app as our own calls left it. */
  coll_t coll;
  int coll_dirty; /* a switch call may still run late: compare on the next reply */
  int run_fe;     /* the run drained is the frame-events stand-in's, not a watcher's */
  int watcher_dirty; /* we left a watcher (the source switched) that may still be collecting:
                        settle it by the next reply that comes from a watcher */
  int track_prev[WP_TRACK__COUNT]; /* before we switched it on; -1 unknown */
  int track_on[WP_TRACK__COUNT];
  int track_failed[WP_TRACK__COUNT]; /* could not be switched on while sessions are open */
  int track_dirty[WP_TRACK__COUNT];
  int settling; /* the last session closed: switching back before its closers are answered */
  int reconcile_tries; /* status calls made to settle a doubtful switch with no session open */
  char *interaction_id, *linked_by;

  /* The VM timeline (one owner: these fields, driven by pump and the drain). */
  tl_t tl;
  json_t *tl_prev;   /* recordedStreams before our set (owned) */
  json_t *tl_back;   /* what to set back: the VM's streams at the end less ours (owned) */
  char *tl_why;      /* TL_NONE's warning, for sessions that open while it holds (owned) */
  int tl_set;        /* we changed them: set them back when no session wants them */
  int tl_gone;       /* the connection to that VM dropped since: nothing to set back */
  void *tl_ctl;      /* the timeline control call in flight (a transport handle) */
  tlc_t tl_ctl_kind;
  void *tl_pull;     /* the pull in flight, part of a drain generation */
  vmtl_parser_t *tl_parser;
  int64_t tl_origin; /* the next pull starts here (timeline µs); -1: not known */
  int64_t tl_newest; /* the newest event time any pull saw (-1: none yet) */

  /* One control call at a time: start, stop, status/mark to begin, switches. */
  wp_call_t *ctl;
  wp_track_t ctl_track;
  int ctl_value;

  /* The drain: one in flight, feeding every begun session. */
  wp_call_t *drain;
  char run[RECORD_MAX_RUN_ID + 1];
  int run_known;
  int64_t seq; /* the last seq drained of run */
  int restart_reread;
  int drain_again;
  int pages;
  int more_left; /* the generation ended at SESSIONS_MAX_PAGES with records still waiting */
  uint64_t gen_started, gen_done;
  wp_status_t drain_status; /* of the drain that ended last */

  uv_timer_t timer;
  uv_idle_t idle;
  int handles_open;
  sessions_wait_t *waits, *waits_tail; /* pending, oldest first */
  sessions_wait_t *ready, *ready_tail; /* to be called back on the next idle turn, oldest first */
  int checking, recheck;
  int freeing;
};

typedef enum { SW_GET = 0, SW_ON, SW_BACK } sw_mode_t;

static void pump(sessions_t *m);
static void check_waiters(sessions_t *m);
static void drain_start(sessions_t *m);

static uint64_t now_ms(sessions_t *m) { return uv_now(m->loop); }

static void on_timer(uv_timer_t *t);

static int dirty(const sessions_t *m) {
  int d = m->coll_dirty | m->watcher_dirty;
  for (int t = 0; t < WP_TRACK__COUNT; t++) d |= m->track_dirty[t];
  return d;
}

/* The timer drains while sessions are open and, with none open, settles a
 * switch left in doubt by asking the watcher (bounded), so an app that comes
 * back is put right even when nobody calls. */
static void timer_ensure(sessions_t *m) {
  if (!uv_is_active((uv_handle_t *)&m->timer))
    uv_timer_start(&m->timer, on_timer, SESSIONS_DRAIN_MS, SESSIONS_DRAIN_MS);
}

/* ---- sessions ---------------------------------------------------------- */

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

void session_ref(session_t *s) { s->refs++; }

void session_unref(session_t *s) {
  if (!s || --s->refs > 0) return;
  free(s->tl_ev);
  free(s->interaction_id);
  free(s->linked_by);
  for (size_t i = 0; i < s->nwarnings; i++) free(s->warnings[i]);
  store_free(s->store);
  free(s);
}

static void session_warn(session_t *s, const char *text) {
  if (s->nwarnings == MAX_WARNINGS) return;
  char *w = strdup(text);
  if (w) s->warnings[s->nwarnings++] = w;
}

static session_t *session_new(sessions_t *m, const session_options_t *opt) {
  session_t *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->refs = 1;
  snprintf(s->id, sizeof s->id, "s%u", ++m->next_id);
  s->capture = opt->capture;
  s->timeline = !opt->no_timeline;
  s->include_startup = opt->include_startup;
  s->budget_ms = opt->budget_ms;
  memcpy(s->track, opt->track, sizeof s->track);
  if (opt->interaction_id) {
    s->interaction_id = strdup(opt->interaction_id);
    s->linked_by = strdup(opt->linked_by ? opt->linked_by : "agent");
    if (!s->interaction_id || !s->linked_by) {
      session_unref(s);
      return NULL;
    }
  }
  s->started_ms = now_ms(m);
  s->next = m->open;
  m->open = s;
  return s;
}

static void open_unlink(sessions_t *m, session_t *s) {
  for (session_t **p = &m->open; *p; p = &(*p)->next)
    if (*p == s) {
      *p = s->next;
      break;
    }
  s->next = NULL;
  if (m->current == s) m->current = NULL;
}

/* A closed session goes into the history, which owns the open list's
 * reference from now on. Older sessions keep timings only. */
static void history_push(sessions_t *m, session_t *s) {
  if (m->nhistory == SESSIONS_HISTORY) {
    session_unref(m->history[0]);
    memmove(m->history, m->history + 1, (SESSIONS_HISTORY - 1) * sizeof *m->history);
    m->nhistory--;
  }
  m->history[m->nhistory++] = s;
  if (m->nhistory > SESSIONS_HISTORY_BLOCKS) {
    session_t *old = m->history[m->nhistory - 1 - SESSIONS_HISTORY_BLOCKS];
    if (old->store) store_drop_blocks(old->store);
  }
}

static void session_close_now(sessions_t *m, session_t *s, const wp_status_t *st) {
  s->state = SESSION_CLOSED;
  s->stopped_ms = now_ms(m);
  if (st && wp_failed(st)) s->end = *st;
  open_unlink(m, s);
  history_push(m, s);
  if (!m->open) {
    log_debug("sessions: the last open session closed");
    m->settling = 1;
    m->run_known = 0; /* the next session starts the drain afresh */
  }
  log_debug("session %s closed (%llu frames)", s->id,
            (unsigned long long)(s->store ? store_frames_seen(s->store) : 0));
}

static void session_fail_open(sessions_t *m, session_t *s, const wp_status_t *st) {
  s->open_failed = 1;
  s->open_status = *st;
  s->state = SESSION_CLOSED;
  open_unlink(m, s);
  if (!m->open) m->run_known = 0;
  session_unref(s); /* the open list's reference; waiters keep theirs */
}

/* The session begins after the reply's lastSeq: everything the watcher
 * numbers after it is the session's. */
static void session_begin(sessions_t *m, session_t *s, const record_reply_t *r) {
  s->asked = 0;
  s->refresh_rate = r->refresh_rate;
  s->build_mode = r->build_mode;
  s->taken_over = r->collection_taken_over;
  s->frame_events = r->frame_events;
  s->budget_us = summary_budget_us(s->budget_ms, r->refresh_rate);
  s->store = store_new(s->budget_us);
  if (s->store) store_set_include_startup(s->store, s->include_startup);
  if (!s->store || store_add_reply(s->store, r, NULL) < 0) {
    wp_status_t st;
    wp_status_set(&st, DIAG_NONE, RPC_INTERNAL_ERROR, "out of memory");
    store_free(s->store);
    s->store = NULL;
    session_fail_open(m, s, &st);
    return;
  }
  store_set_tracking(s->store, s->track[0] || m->track_on[0], s->track[1] || m->track_on[1],
                     s->track[2] || m->track_on[2]);
  s->started_ms = now_ms(m);
  if (!m->run_known) {
    snprintf(m->run, sizeof m->run, "%s", r->run_id);
    m->seq = r->last_seq;
    m->run_known = 1;
    m->run_fe = r->frame_events;
  }
}

/* Opening sessions that have begun become active once their switches are
 * on (or could not be set: then they say so). */
static void promote(sessions_t *m) {
  int closing = 0;
  for (session_t *s = m->open, *next; s; s = next) {
    next = s->next;
    if (s->state != SESSION_OPENING || !s->store) continue;
    int ready = 1;
    for (int t = 0; t < WP_TRACK__COUNT; t++)
      if (s->track[t] && !m->track_on[t] && !m->track_failed[t]) ready = 0;
    if (!ready) continue;
    for (int t = 0; t < WP_TRACK__COUNT; t++)
      if (s->track[t] && m->track_failed[t]) {
        char w[128];
        snprintf(w, sizeof w, "track%c%s: could not be switched on in the app",
                 wp_track_name(t)[0] - 'a' + 'A', wp_track_name(t) + 1);
        session_warn(s, w);
      }
    s->state = SESSION_ACTIVE;
    if (s->close_requested) {
      s->state = SESSION_CLOSING;
      s->close_ms = now_ms(m);
      s->close_gen = m->gen_started + 1;
      closing = 1;
    }
  }
  if (closing) drain_start(m);
}

/* ---- control calls ----------------------------------------------------- */

static void ctl_reply(void *arg, const wp_status_t *st, const record_reply_t *r) {
  sessions_t *m = arg;
  m->ctl = NULL;
  wp_action_t action = (wp_action_t)m->ctl_value;
  if (r) m->on_reply(m->reply_arg, r);
  switch (action) {
  case WP_START:
  case WP_STATUS:
  case WP_MARK:
    if (!wp_failed(st) && action == WP_START) m->coll = COLL_ON;
    if (wp_failed(st) && action == WP_START && wp_maybe_ran(st)) m->coll_dirty = 1;
    for (session_t *s = m->open, *next; s; s = next) {
      next = s->next;
      if (!s->asked) continue;
      if (wp_failed(st))
        session_fail_open(m, s, st);
      else
        session_begin(m, s, r);
    }
    if (wp_failed(st))
      log_debug("sessions: %s failed: %s", action == WP_START ? "start" : "begin", st->detail);
    break;
  case WP_STOP:
    /* A stop that failed for any reason (even a watcher unregistered for a
     * while) leaves the app's flag in doubt: checked on the next contact. */
    m->coll = COLL_OFF;
    if (wp_failed(st)) m->coll_dirty = 1;
    break;
  default:
    break;
  }
  if (dirty(m)) timer_ensure(m);
  if (r && action == WP_STATUS) sessions_note_reply(m, r);
  promote(m);
  pump(m);
  check_waiters(m);
}

static void switch_reply(void *arg, const wp_status_t *st, int value) {
  sessions_t *m = arg;
  m->ctl = NULL;
  wp_track_t t = m->ctl_track;
  if (m->ctl_value == SW_GET) { /* read before switching on */
    if (wp_failed(st))
      m->track_failed[t] = 1;
    else
      m->track_prev[t] = value < 0 ? 0 : value;
  } else if (m->ctl_value == SW_ON) {
    if (wp_failed(st)) {
      m->track_failed[t] = 1;
      if (wp_maybe_ran(st)) m->track_dirty[t] = 1;
    } else {
      m->track_on[t] = 1;
      m->track_dirty[t] = 0;
    }
  } else { /* set back */
    m->track_on[t] = 0;
    m->track_dirty[t] = wp_failed(st);
  }
  if (wp_failed(st)) log_debug("sessions: profile switch %s: %s", wp_track_name(t), st->detail);
  if (dirty(m)) timer_ensure(m);
  promote(m);
  pump(m);
  check_waiters(m);
}

static int ctl_send(sessions_t *m, wp_action_t action, const char *iid, const char *linked_by) {
  wp_request_t req = {action, 0, 0, iid, linked_by};
  m->ctl_value = (int)action;
  m->ctl = wp_call(&m->t, &req, ctl_reply, m);
  return m->ctl ? 0 : -1;
}

/* SW_BACK sets the switch to what it was before we switched it on. */
static int switch_send(sessions_t *m, wp_track_t t, sw_mode_t mode) {
  int value = mode == SW_GET ? -1 : mode == SW_ON ? 1 : m->track_prev[t] == 1;
  m->ctl_track = t;
  m->ctl_value = (int)mode;
  m->ctl = wp_switch(&m->t, t, value, switch_reply, m);
  return m->ctl ? 0 : -1;
}

/* ---- the VM timeline -------------------------------------------------- */

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

static int tl_wanted(const sessions_t *m) {
  for (session_t *s = m->open; s; s = s->next)
    if (s->timeline) return 1;
  return 0;
}

static int has_stream(const json_t *arr, const char *name) {
  size_t i;
  json_t *v;
  json_array_foreach(arr, i, v) if (json_is_string(v) && !strcmp(json_string_value(v), name)) return 1;
  return 0;
}

/* The timeline is not to be had while these sessions are open: they say so. */
static void tl_none(sessions_t *m, const char *why) {
  char w[512];
  m->tl = TL_NONE;
  snprintf(w, sizeof w, "timeline: %s; no gc or shader findings", why);
  for (session_t *s = m->open; s; s = s->next)
    if (s->timeline) session_warn(s, w);
  free(m->tl_why);
  m->tl_why = strdup(w);
  log_debug("sessions: %s", w);
}

/* A session that opened after the timeline was found missing says so too. */
static void tl_none_again(sessions_t *m) {
  if (!m->tl_why) return;
  for (session_t *s = m->open; s; s = s->next) {
    if (!s->timeline) continue;
    int said = 0;
    for (size_t i = 0; i < s->nwarnings; i++) said |= !strcmp(s->warnings[i], m->tl_why);
    if (!said) session_warn(s, m->tl_why);
  }
}

static void tl_forget(sessions_t *m) {
  m->tl = TL_UNKNOWN;
  free(m->tl_why);
  m->tl_why = NULL;
  m->tl_gone = 0;
  m->tl_origin = m->tl_newest = -1;
  json_decref(m->tl_prev);
  m->tl_prev = NULL;
  json_decref(m->tl_back);
  m->tl_back = NULL;
  vmtl_parser_free(m->tl_parser);
  m->tl_parser = NULL;
}

/* What to set back at the end: the streams the VM records now (rec) less
 * the ones we added, so a stream another client (DevTools) switched on or off
 * meanwhile stays as it left it. rec NULL (the VM answered with an error):
 * what we found. Leaves tl_back NULL when none of ours is recorded now;
 * -1: out of memory. */
static int tl_back_from(sessions_t *m, const json_t *rec) {
  json_decref(m->tl_back);
  m->tl_back = NULL;
  if (!rec) {
    m->tl_back = m->tl_prev ? json_deep_copy(m->tl_prev) : json_array();
    return m->tl_back ? 0 : -1;
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
          !has_stream(m->tl_prev, tl_streams[k]))
        added = 1;
    if (added) {
      ours = 1;
    } else if (json_array_append(back, v) < 0) {
      json_decref(back);
      return -1;
    }
  }
  if (ours)
    m->tl_back = back;
  else
    json_decref(back);
  return 0;
}

static void tl_ctl_reply(void *arg, const vm_result_t *res) {
  sessions_t *m = arg;
  m->tl_ctl = NULL;
  int ok = res->diag == DIAG_NONE && res->rpc_code == 0 && res->result;
  char why[400];
  snprintf(why, sizeof why, "%s", res->diag != DIAG_NONE || res->rpc_code ? res->detail : "no result");
  switch (m->tl_ctl_kind) {
  case TLC_FLAGS: {
    const json_t *avail = ok ? json_object_get(res->result, "availableStreams") : NULL;
    const json_t *rec = ok ? json_object_get(res->result, "recordedStreams") : NULL;
    if (ok && tl_recorder_elsewhere(json_string_value(json_object_get(res->result, "recorderName")),
                                    why, sizeof why)) {
      tl_none(m, why);
      break;
    }
    if (!json_is_array(rec)) {
      tl_none(m, ok ? "the VM sent no recordedStreams" : why);
      break;
    }
    int all = 1;
    for (size_t i = 0; i < 2; i++) {
      if (json_is_array(avail) && !has_stream(avail, tl_streams[i])) {
        snprintf(why, sizeof why, "the VM does not offer the %s stream", tl_streams[i]);
        tl_none(m, why);
        goto done;
      }
      all &= has_stream(rec, tl_streams[i]);
    }
    json_decref(m->tl_prev);
    m->tl_prev = json_deep_copy(rec);
    m->tl = all ? TL_ON : TL_READ; /* already recorded (DevTools): nothing to set or restore */
    break;
  }
  case TLC_SET:
    if (ok) {
      m->tl = TL_ON;
      m->tl_set = 1;
    } else {
      if (wp_maybe_ran(&(wp_status_t){res->diag, res->rpc_code, ""})) m->tl_set = 1; /* may have run: restore anyway */
      tl_none(m, why);
    }
    break;
  case TLC_MICROS: {
    const json_t *ts = ok ? json_object_get(res->result, "timestamp") : NULL;
    if (!json_is_integer(ts)) {
      tl_none(m, ok ? "the VM sent no timestamp" : why);
      break;
    }
    m->tl_origin = json_integer_value(ts);
    if (!m->tl_parser && !(m->tl_parser = vmtl_parser_new())) tl_none(m, "out of memory");
    for (session_t *s = m->open; s; s = s->next)
      if (s->timeline && m->tl == TL_ON) s->tl_on = 1;
    break;
  }
  case TLC_CHECK: {
    /* No answer at all: a set would wait as long again, so none is sent. */
    const json_t *rec = ok ? json_object_get(res->result, "recordedStreams") : NULL;
    int mute = !json_is_array(rec) && res->diag != DIAG_NONE;
    if (mute || tl_back_from(m, json_is_array(rec) ? rec : NULL) < 0)
      log_warn("sessions: the VM's timeline streams could not be set back: %s",
               mute ? why : "out of memory");
    if (!m->tl_back) { /* or none of ours is recorded any more: nothing to set */
      m->tl_set = 0;
      tl_forget(m);
    }
    break;
  }
  case TLC_RESTORE:
    /* Set back, or tried: a VM that did not answer keeps ours (said in the log). */
    if (!ok) log_warn("sessions: the VM's timeline streams could not be set back: %s", why);
    m->tl_set = 0;
    tl_forget(m);
    break;
  }
done:
  pump(m);
  check_waiters(m);
}

static int tl_send(sessions_t *m, tlc_t kind, const char *method, json_t *params) {
  m->tl_ctl_kind = kind;
  m->tl_ctl = m->t.call_vm(m->t.arg, method, params, tl_ctl_reply, m);
  return m->tl_ctl ? 0 : -1;
}

/* The timeline's next control step, if one is due: 1 when a call went out. */
static int tl_step(sessions_t *m, int want) {
  if (!m->t.call_vm) return 0;
  int tl_want = want && tl_wanted(m);
  if (!tl_want) {
    if (m->tl_set && m->tl_gone) {
      /* The VM we changed is gone (the app exited or was replaced): there is
       * nothing to set back, and another app must not get our old flags. */
      log_info("sessions: the app went away; its timeline streams are not set back");
      m->tl_set = 0;
    }
    if (m->tl_set && !m->tl_pull && !m->tl_back)
      return tl_send(m, TLC_CHECK, "getVMTimelineFlags", NULL) == 0;
    if (m->tl_set && !m->tl_pull)
      return tl_send(m, TLC_RESTORE, "setVMTimelineFlags",
                     json_pack("{s:O}", "recordedStreams", m->tl_back)) == 0;
    if (!m->tl_set && m->tl != TL_UNKNOWN && !m->tl_pull) tl_forget(m);
    return 0;
  }
  json_decref(m->tl_back); /* a session came before they were set back: ours stay */
  m->tl_back = NULL;
  if (m->tl == TL_UNKNOWN) return tl_send(m, TLC_FLAGS, "getVMTimelineFlags", NULL) == 0;
  if (m->tl == TL_NONE) tl_none_again(m);
  if (m->tl == TL_READ) {
    json_t *streams = json_deep_copy(m->tl_prev);
    for (size_t i = 0; streams && i < 2; i++)
      if (!has_stream(streams, tl_streams[i])) json_array_append_new(streams, json_string(tl_streams[i]));
    return tl_send(m, TLC_SET, "setVMTimelineFlags", json_pack("{s:o}", "recordedStreams", streams)) == 0;
  }
  if (m->tl == TL_ON && m->tl_origin < 0) return tl_send(m, TLC_MICROS, "getVMTimelineMicros", NULL) == 0;
  if (m->tl == TL_ON) /* a session that opened later */
    for (session_t *s = m->open; s; s = s->next)
      if (s->timeline) s->tl_on = 1;
  return 0;
}

static void tl_sink(void *arg, const vmtl_event_t *ev) {
  sessions_t *m = arg;
  for (session_t *s = m->open; s; s = s->next) {
    if (!s->timeline || !s->tl_on || !s->store || s->state == SESSION_CLOSED) continue;
    if (s->tl_n == SESSIONS_TL_MAX_EVENTS) {
      s->tl_dropped = 1;
      continue;
    }
    if (s->tl_n == s->tl_cap) {
      size_t cap = s->tl_cap ? s->tl_cap * 2 : 256;
      if (cap > SESSIONS_TL_MAX_EVENTS) cap = SESSIONS_TL_MAX_EVENTS;
      vmtl_event_t *p = realloc(s->tl_ev, cap * sizeof *p);
      if (!p) {
        s->tl_dropped = 1;
        continue;
      }
      s->tl_ev = p;
      s->tl_cap = cap;
    }
    s->tl_ev[s->tl_n++] = *ev;
  }
}

static int track_wanted(sessions_t *m, wp_track_t t) {
  for (session_t *s = m->open; s; s = s->next)
    if (s->track[t]) return 1;
  return 0;
}

/* Does the next control step, if any: one call at a time, in this order:
 * attribution on/off, then the begin position of opening sessions, then the
 * profile switches. Called after every event that may change what is due. */
static void pump(sessions_t *m) {
  /* A session opened (a capture) while the last close was still setting the
   * app back: that switch-back is moot, and its closers must not wait on it. */
  if (m->settling && m->open) {
    m->settling = 0;
    check_waiters(m);
  }
  if (m->ctl || m->tl_ctl || !m->have_t || m->freeing) return;
  int want = m->open != NULL;
  session_t *unbegun = NULL;
  for (session_t *s = m->open; s; s = s->next)
    if (s->state == SESSION_OPENING && !s->store) unbegun = s;
  if (want && m->coll == COLL_OFF) {
    for (session_t *s = m->open; s; s = s->next)
      if (s->state == SESSION_OPENING && !s->store) s->asked = 1;
    const char *iid = unbegun && unbegun->interaction_id ? unbegun->interaction_id : m->interaction_id;
    const char *lb = unbegun && unbegun->interaction_id ? unbegun->linked_by : m->linked_by;
    if (ctl_send(m, WP_START, iid, lb) == 0) return;
    goto oom;
  }
  if (!want && m->coll == COLL_ON) {
    free(m->interaction_id);
    free(m->linked_by);
    m->interaction_id = m->linked_by = NULL; /* the watcher's stop ends the interaction */
    if (ctl_send(m, WP_STOP, NULL, NULL) == 0) return;
    goto oom;
  }
  if (unbegun) {
    for (session_t *s = m->open; s; s = s->next)
      if (s->state == SESSION_OPENING && !s->store) s->asked = 1;
    /* An opening session with its own interaction marks it; the reply of
     * either call says where the stream stands. */
    int mark = unbegun->interaction_id != NULL;
    if (ctl_send(m, mark ? WP_MARK : WP_STATUS, unbegun->interaction_id, unbegun->linked_by) == 0)
      return;
    goto oom;
  }
  for (int t = 0; t < WP_TRACK__COUNT; t++) {
    if (want && track_wanted(m, t) && !m->track_on[t] && !m->track_failed[t]) {
      if (switch_send(m, t, m->track_prev[t] < 0 ? SW_GET : SW_ON) == 0) return;
      goto oom;
    }
    if (!want && m->track_on[t]) {
      if (switch_send(m, t, SW_BACK) == 0) return;
      goto oom;
    }
  }
  if (tl_step(m, want)) return;
  if (!want && (m->tl_ctl || m->tl_pull)) return; /* settling waits for the timeline too */
  if (!want) {
    m->settling = 0;
    for (int t = 0; t < WP_TRACK__COUNT; t++) m->track_failed[t] = 0;
  }
  return;

oom: /* nothing was sent: the next event tries again */
  log_warn("sessions: out of memory; a control call was not sent");
}

/* ---- the drain --------------------------------------------------------- */

static void drain_reply(void *arg, const wp_status_t *st, const record_reply_t *r);

static void drain_send(sessions_t *m, int64_t since) {
  wp_request_t req = {WP_READ, since, 0, NULL, NULL};
  if (!(m->drain = wp_call(&m->t, &req, drain_reply, m))) {
    wp_status_set(&m->drain_status, DIAG_NONE, RPC_INTERNAL_ERROR, "out of memory");
    m->gen_done = m->gen_started;
  }
}

static void drain_finish(sessions_t *m);

/* A pull's reply: its events go to the sessions recording the timeline.
 * Whatever happened, the generation then ends: the timeline only explains,
 * it never holds a stop. */
static void tl_pull_reply(void *arg, const vm_result_t *res) {
  sessions_t *m = arg;
  m->tl_pull = NULL;
  if (res->diag == DIAG_NONE && res->rpc_code == VM_INVALID_TIMELINE_REQUEST && m->tl == TL_ON) {
    /* The recorder changed under us, or its name was not one we know: the
     * timeline is not to be had, said once (pulls stop with TL_NONE). */
    char why[400];
    snprintf(why, sizeof why, "getVMTimeline answered %d (%.200s); " TL_REMEDY,
             VM_INVALID_TIMELINE_REQUEST, res->detail ? res->detail : "");
    for (session_t *s = m->open; s; s = s->next)
      if (!s->tl_n) s->tl_on = 0;
    tl_none(m, why);
  } else if (res->diag != DIAG_NONE || res->rpc_code || !res->result) {
    log_debug("sessions: timeline pull failed: %s", res->detail);
  } else if (m->tl_parser) {
    vmtl_pull_stats_t st;
    char err[128];
    if (vmtl_parse(m->tl_parser, res->result, tl_sink, m, &st, err, sizeof err) < 0) {
      log_debug("sessions: timeline: %s", err);
    } else {
      /* The reply's timeOriginMicros is the oldest event the recorder still
       * holds (docs/flutter-apis.md): later than the newest one an earlier
       * pull saw, and its ring overwrote events before we read them. */
      if (m->tl_newest >= 0 && st.origin_us > m->tl_newest)
        for (session_t *s = m->open; s; s = s->next)
          if (s->tl_on) s->tl_dropped = 1;
      if (st.newest_ts_us > m->tl_newest) m->tl_newest = st.newest_ts_us;
      if (st.newest_ts_us - SESSIONS_TL_OVERLAP_US > m->tl_origin)
        m->tl_origin = st.newest_ts_us - SESSIONS_TL_OVERLAP_US;
    }
  }
  drain_finish(m);
}

/* The frames of a generation are in: pull the timeline that goes with
 * them (the VM recorded it meanwhile), then end the generation. */
static void drain_done(sessions_t *m) {
  /* A drain that could not reach the app will not reach its timeline. */
  if (m->tl == TL_ON && m->tl_parser && m->tl_origin >= 0 && tl_wanted(m) && m->t.call_vm &&
      !m->freeing && !wp_failed(&m->drain_status)) {
    json_t *p = json_pack("{s:I, s:I}", "timeOriginMicros", (json_int_t)m->tl_origin,
                          "timeExtentMicros", (json_int_t)(INT64_C(1) << 40));
    if ((m->tl_pull = m->t.call_vm(m->t.arg, "getVMTimeline", p, tl_pull_reply, m))) return;
  }
  drain_finish(m);
}

/* A drain generation ended: closing sessions it covers are closed, a drain
 * asked for meanwhile starts, and waiters are looked at. */
static void drain_finish(sessions_t *m) {
  m->gen_done = m->gen_started;
  int again = 0;
  for (session_t *s = m->open, *next; s; s = next) {
    next = s->next;
    if (s->state != SESSION_CLOSING || s->close_gen > m->gen_done) continue;
    if (m->more_left && !wp_failed(&m->drain_status) &&
        now_ms(m) < s->close_ms + SESSIONS_CLOSE_MORE_MS) {
      /* The watcher holds more of this session's frames: keep reading, for
       * a while (an app that outruns the drain would keep a stop waiting). */
      s->close_gen = m->gen_started + 1;
      again = 1;
      continue;
    }
    session_close_now(m, s, &m->drain_status);
  }
  m->more_left = 0;
  if (again) m->drain_again = 1;
  if (m->drain_again) {
    m->drain_again = 0;
    drain_start(m);
  }
  pump(m);
  check_waiters(m);
}

static void feed(sessions_t *m, const record_reply_t *r) {
  for (session_t *s = m->open; s; s = s->next)
    if (s->store && store_add_reply(s->store, r, NULL) < 0) session_warn(s, "out of memory: frames were dropped");
}

static void drain_reply(void *arg, const wp_status_t *st, const record_reply_t *r) {
  sessions_t *m = arg;
  m->drain = NULL;
  if (wp_failed(st)) {
    m->drain_status = *st;
    m->restart_reread = 0;
    log_debug("sessions: drain failed: %s", st->detail);
    drain_done(m);
    return;
  }
  m->on_reply(m->reply_arg, r);
  sessions_note_reply(m, r);
  if (strcmp(m->run, r->run_id) != 0 && !m->restart_reread) {
    /* A hot restart: the new run starts with attribution and Flutter's
     * switches off, and its seq starts again at 1. Read it from its start
     * and switch everything on again. */
    snprintf(m->run, sizeof m->run, "%s", r->run_id);
    m->seq = 0;
    m->restart_reread = 1;
    m->coll = COLL_OFF;
    if (r->frame_events != m->run_fe) {
      /* Not a restart: the source changed (the watcher went missing, or
       * came). The app's switches stay as we set them; a watcher we leave
       * may still collect, and is stopped once it answers again. */
      log_info("sessions: the frame source changed; following the new run");
      if (!r->frame_events) m->coll_dirty = 0;
      else m->watcher_dirty = 1;
      m->run_fe = r->frame_events;
      timer_ensure(m);
    } else {
      log_info("sessions: the app restarted; following the new run");
      for (int t = 0; t < WP_TRACK__COUNT; t++) m->track_on[t] = 0;
    }
    pump(m);
    drain_send(m, 0);
    if (!m->drain) drain_done(m);
    return;
  }
  m->restart_reread = 0;
  feed(m, r);
  if (r->nrecords) m->seq = r->records[r->nrecords - 1].seq;
  m->more_left = r->more;
  if (r->more && ++m->pages < SESSIONS_MAX_PAGES) {
    drain_send(m, m->seq);
    if (m->drain) return;
  }
  wp_status_set(&m->drain_status, DIAG_NONE, 0, NULL);
  drain_done(m);
}

static void drain_start(sessions_t *m) {
  if (m->drain || m->tl_pull) { /* a generation (its pull included) is under way */
    m->drain_again = 1;
    return;
  }
  m->gen_started++;
  m->pages = 0;
  if (!m->run_known || !m->have_t) { /* nothing has begun: nothing to drain */
    log_debug("sessions: drain with nothing begun (run_known %d, have_t %d)", m->run_known, m->have_t);
    wp_status_set(&m->drain_status, DIAG_NONE, 0, NULL);
    drain_done(m);
    return;
  }
  drain_send(m, m->seq);
  if (!m->drain) drain_done(m);
}

static void on_timer(uv_timer_t *t) {
  sessions_t *m = container_of(t, sessions_t, timer);
  if (!m->open) {
    if (!dirty(m) || m->reconcile_tries >= SESSIONS_RECONCILE_TRIES) {
      m->reconcile_tries = 0;
      uv_timer_stop(&m->timer);
    } else if (!m->ctl && m->have_t) {
      m->reconcile_tries++;
      if (ctl_send(m, WP_STATUS, NULL, NULL) < 0) log_warn("sessions: out of memory");
    }
    return;
  }
  if (!m->drain && !m->tl_pull) drain_start(m);
  pump(m);
}

/* ---- waiters ----------------------------------------------------------- */

/* Both lists keep arrival order: waiters that become ready in the same
 * pass are called back in the order their calls came (two joined stops, a
 * read and a stop), so the first asked is the first to hand out frames. */
static void wait_unlink(sessions_wait_t *w) {
  sessions_t *m = w->m;
  sessions_wait_t **head = w->ready ? &m->ready : &m->waits;
  sessions_wait_t **tail = w->ready ? &m->ready_tail : &m->waits_tail;
  if (w->prev)
    w->prev->next = w->next;
  else
    *head = w->next;
  if (w->next)
    w->next->prev = w->prev;
  else
    *tail = w->prev;
  w->next = w->prev = NULL;
}

/* Appends w to the list its `ready` flag names. */
static void wait_append(sessions_wait_t *w) {
  sessions_t *m = w->m;
  sessions_wait_t **head = w->ready ? &m->ready : &m->waits;
  sessions_wait_t **tail = w->ready ? &m->ready_tail : &m->waits_tail;
  w->prev = *tail;
  w->next = NULL;
  if (*tail)
    (*tail)->next = w;
  else
    *head = w;
  *tail = w;
}

static void wait_free(sessions_wait_t *w) {
  if (w->s) session_unref(w->s);
  free((char *)w->opt.interaction_id);
  free((char *)w->opt.linked_by);
  free(w);
}

static void on_idle(uv_idle_t *h);

static void make_ready(sessions_wait_t *w, const wp_status_t *st) {
  sessions_t *m = w->m;
  log_debug("sessions: waiter %d of %s ready", (int)w->kind, w->s ? w->s->id : "-");
  wait_unlink(w);
  if (st)
    w->st = *st;
  else
    wp_status_set(&w->st, DIAG_NONE, 0, NULL);
  w->ready = 1;
  wait_append(w);
  if (!uv_is_active((uv_handle_t *)&m->idle)) uv_idle_start(&m->idle, on_idle);
}

/* Callbacks run here, a loop turn after the event that readied them, oldest
 * first; the ones readied meanwhile wait for the next turn. A callback may
 * cancel any other waiter. */
static void on_idle(uv_idle_t *h) {
  sessions_t *m = container_of(h, sessions_t, idle);
  size_t n = 0;
  for (sessions_wait_t *w = m->ready; w; w = w->next) n++;
  while (n-- && m->ready) {
    sessions_wait_t *w = m->ready;
    wait_unlink(w);
    w->ready = 0;
    session_t *s = w->s;
    w->s = NULL;
    if (s && s->open_failed) {
      session_unref(s);
      s = NULL;
    }
    if (w->open_cb)
      w->open_cb(w->arg, s, w->joined, &w->st);
    else if (w->cb)
      w->cb(w->arg, s, &w->st);
    else if (s)
      session_unref(s); /* nobody waits (a cancelled capture's close) */
    wait_free(w);
  }
  if (!m->ready) uv_idle_stop(&m->idle);
}

/* The session a W_OPEN_AFTER waiter asked for, now that the close it waited
 * for is over: join one that another call opened meanwhile, or open it. */
static void open_after(sessions_t *m, sessions_wait_t *w) {
  session_unref(w->s);
  w->s = NULL;
  w->kind = W_OPEN;
  if (m->current) {
    w->s = m->current;
    w->joined = 1;
  } else if ((w->s = session_new(m, &w->opt))) {
    m->current = w->s;
  } else {
    wp_status_t st;
    wp_status_set(&st, DIAG_NONE, RPC_INTERNAL_ERROR, "out of memory");
    make_ready(w, &st);
    return;
  }
  session_ref(w->s);
}

static void check_waiters(sessions_t *m) {
  if (m->checking) {
    m->recheck = 1;
    return;
  }
  m->checking = 1;
  do {
    m->recheck = 0;
    int need_drain = 0, opened = 0;
    for (sessions_wait_t *w = m->waits, *next; w; w = next) {
      next = w->next;
      session_t *s = w->s;
      if (s && s->open_failed) {
        make_ready(w, &s->open_status);
        continue;
      }
      switch (w->kind) {
      case W_OPEN:
        if (s->state != SESSION_OPENING) make_ready(w, NULL);
        break;
      case W_OPEN_AFTER:
        if (s->state == SESSION_CLOSED && !m->settling) {
          open_after(m, w);
          opened = 1;
        }
        break;
      case W_CLOSE:
        if (s->state == SESSION_CLOSED && !m->settling) make_ready(w, &s->end);
        break;
      case W_DRAIN:
        if (s->state == SESSION_CLOSED)
          make_ready(w, &s->end);
        else if (s->state == SESSION_OPENING)
          break;
        else if (!w->gen) {
          w->gen = m->gen_started + 1;
          need_drain = 1;
        } else if (m->gen_done >= w->gen)
          make_ready(w, &m->drain_status);
        break;
      }
    }
    if (opened) {
      timer_ensure(m);
      pump(m);
      m->recheck = 1;
    }
    if (need_drain) drain_start(m);
  } while (m->recheck);
  m->checking = 0;
}

static sessions_wait_t *wait_new(sessions_t *m, wait_kind_t kind, session_t *s) {
  sessions_wait_t *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->m = m;
  w->kind = kind;
  w->s = s;
  if (s) session_ref(s);
  wait_append(w);
  return w;
}

void sessions_wait_cancel(sessions_wait_t *w) {
  if (!w) return;
  wait_unlink(w);
  wait_free(w);
}

void sessions_open_abandon(sessions_wait_t *w) {
  if (!w) return;
  session_t *s = w->kind == W_OPEN ? w->s : NULL;
  if (s && s->capture && s->state != SESSION_CLOSED) {
    /* Nobody will ever hold this window: close it as its stop would. */
    sessions_wait_t *c = sessions_close(w->m, s, NULL, NULL);
    (void)c; /* answers nobody; NULL only when out of memory */
  }
  sessions_wait_cancel(w);
}

/* ---- the API ----------------------------------------------------------- */

sessions_wait_t *sessions_open(sessions_t *m, const session_options_t *opt, sessions_open_cb cb,
                               void *arg) {
  session_t *s = m->current;
  sessions_wait_t *w;
  log_debug("sessions: open (capture %d) with current %s state %d", opt->capture,
            s ? s->id : "-", s ? (int)s->state : -1);
  /* A start while the last session's close is still setting the app back
   * waits for that, as it would for the close itself. */
  if (!s && !opt->capture && m->settling && m->nhistory) s = m->history[m->nhistory - 1];
  if (!opt->capture && s && (s->state == SESSION_CLOSING || s->state == SESSION_CLOSED ||
                             s->close_requested)) {
    if (!(w = wait_new(m, W_OPEN_AFTER, s))) return NULL;
    w->opt = *opt;
    w->opt.interaction_id = dup_or_null(opt->interaction_id);
    w->opt.linked_by = dup_or_null(opt->linked_by);
  } else if (!opt->capture && s) {
    if (!(w = wait_new(m, W_OPEN, s))) return NULL;
    w->joined = 1;
  } else {
    if (!(s = session_new(m, opt))) return NULL;
    if (!(w = wait_new(m, W_OPEN, s))) {
      open_unlink(m, s);
      session_unref(s);
      return NULL;
    }
    if (!opt->capture) m->current = s;
    timer_ensure(m);
  }
  w->open_cb = cb;
  w->arg = arg;
  pump(m);
  check_waiters(m);
  return w;
}

sessions_wait_t *sessions_close(sessions_t *m, session_t *s, sessions_cb cb, void *arg) {
  log_debug("sessions: close %s (state %d, settling %d)", s->id, (int)s->state, m->settling);
  sessions_wait_t *w = wait_new(m, W_CLOSE, s);
  if (!w) return NULL;
  w->cb = cb;
  w->arg = arg;
  if (s->state == SESSION_OPENING) {
    s->close_requested = 1;
  } else if (s->state == SESSION_ACTIVE) {
    s->state = SESSION_CLOSING;
    s->close_ms = now_ms(m);
    s->close_gen = m->gen_started + 1;
    drain_start(m);
  }
  check_waiters(m);
  return w;
}

sessions_wait_t *sessions_drain(sessions_t *m, session_t *s, sessions_cb cb, void *arg) {
  sessions_wait_t *w = wait_new(m, W_DRAIN, s);
  if (!w) return NULL;
  w->cb = cb;
  w->arg = arg;
  check_waiters(m);
  return w;
}

session_t *sessions_current(sessions_t *m) { return m->current; }

void sessions_kick(sessions_t *m) {
  if (m->open) drain_start(m);
}

session_t *sessions_find(sessions_t *m, const char *id) {
  for (session_t *s = m->open; s; s = s->next)
    if (!strcmp(s->id, id)) return s;
  for (size_t i = 0; i < m->nhistory; i++)
    if (!strcmp(m->history[i]->id, id)) return m->history[i];
  return NULL;
}

int sessions_busy(const sessions_t *m) { return m->open != NULL; }

session_t *sessions_stopped(sessions_t *m, size_t k) {
  return k < m->nhistory ? m->history[m->nhistory - 1 - k] : NULL;
}

double session_refresh_rate(const session_t *s) { return s->refresh_rate; }
const char *session_build_mode(const session_t *s) { return s->build_mode; }
int session_taken_over(const session_t *s) { return s->taken_over; }
int session_frame_events(const session_t *s) { return s->frame_events; }

void sessions_note_interaction(sessions_t *m, const char *interaction_id, const char *linked_by) {
  free(m->interaction_id);
  free(m->linked_by);
  m->interaction_id = dup_or_null(interaction_id);
  m->linked_by = interaction_id ? strdup(linked_by ? linked_by : "agent") : NULL;
}

/* A start or stop, or a switch, that we gave up on may have run late in the
 * app: on the next contact, believe what the watcher says about collecting,
 * set a doubtful switch again, and let the pump put things right. Only on
 * contact, so a hung app is not called in a loop. */
void sessions_note_reply(sessions_t *m, const record_reply_t *r) {
  if (m->ctl || m->freeing || !m->have_t) return;
  if (m->coll_dirty) {
    m->coll = r->collecting ? COLL_ON : COLL_OFF;
    m->coll_dirty = 0;
  }
  if (m->watcher_dirty && !r->frame_events) {
    /* The watcher answers again: it is the source now, collecting or not. */
    m->watcher_dirty = 0;
    if (r->collecting && !m->open) m->coll = COLL_ON; /* the pump stops it */
  }
  if (!dirty(m)) m->reconcile_tries = 0;
  if (!m->open)
    for (int t = 0; t < WP_TRACK__COUNT; t++)
      if (m->track_dirty[t]) {
        if (switch_send(m, t, SW_BACK) == 0) return;
      }
  pump(m);
}

void sessions_app_gone(sessions_t *m) {
  if (m->tl != TL_UNKNOWN || m->tl_set) {
    m->tl_gone = 1;
    if (m->tl == TL_ON || m->tl == TL_READ) m->tl = TL_NONE; /* no more pulls from it */
  }
  pump(m);
  check_waiters(m);
}

void sessions_set_transport(sessions_t *m, const wp_transport_t *t) {
  log_debug("sessions: transport set (%s open)", m->open ? "sessions" : "nothing");
  m->t = *t;
  m->have_t = 1;
  m->run_known = 0;
}

static void handle_closed(uv_handle_t *h) {
  sessions_t *m = h->data;
  if (--m->handles_open == 0) free(m);
}

sessions_t *sessions_new(uv_loop_t *loop, sessions_reply_cb on_reply, void *reply_arg) {
  sessions_t *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->loop = loop;
  m->on_reply = on_reply;
  m->reply_arg = reply_arg;
  for (int t = 0; t < WP_TRACK__COUNT; t++) m->track_prev[t] = -1;
  m->tl_origin = m->tl_newest = -1;
  uv_timer_init(loop, &m->timer);
  uv_idle_init(loop, &m->idle);
  m->timer.data = m->idle.data = m;
  m->handles_open = 2;
  return m;
}

void sessions_free(sessions_t *m) {
  if (!m) return;
  m->freeing = 1;
  wp_cancel(m->ctl);
  wp_cancel(m->drain);
  m->ctl = m->drain = NULL;
  if (m->tl_ctl) m->t.cancel(m->tl_ctl);
  if (m->tl_pull) m->t.cancel(m->tl_pull);
  m->tl_ctl = m->tl_pull = NULL;
  tl_forget(m);
  while (m->waits) sessions_wait_cancel(m->waits);
  while (m->ready) sessions_wait_cancel(m->ready);
  while (m->open) {
    session_t *s = m->open;
    open_unlink(m, s);
    session_unref(s);
  }
  for (size_t i = 0; i < m->nhistory; i++) session_unref(m->history[i]);
  m->nhistory = 0;
  free(m->interaction_id);
  free(m->linked_by);
  uv_close((uv_handle_t *)&m->timer, handle_closed);
  uv_close((uv_handle_t *)&m->idle, handle_closed);
}

/* ---- accessors --------------------------------------------------------- */

const char *session_id(const session_t *s) { return s->id; }
session_state_t session_state(const session_t *s) { return s->state; }
int session_is_capture(const session_t *s) { return s->capture; }
store_t *session_store(session_t *s) { return s->store; }
int64_t session_budget_us(const session_t *s) { return s->budget_us; }
uint64_t session_read_pos(const session_t *s) { return s->read_pos; }
void session_set_read_pos(session_t *s, uint64_t pos) { s->read_pos = pos; }
const wp_status_t *session_end_status(const session_t *s) { return &s->end; }
const int *session_track(const session_t *s) { return s->track; }
const char *const *session_warnings(const session_t *s) { return (const char *const *)s->warnings; }
const vmtl_event_t *session_timeline(const session_t *s, size_t *n) {
  *n = s->tl_n;
  return s->tl_ev;
}

static const char *const state_name[] = {"opening", "active", "closing", "stopped"};

json_t *session_to_json(const session_t *s, uint64_t now) {
  /* A session's window ends when its close was asked for; the final drain
   * that follows (longer behind a slow app) is not part of the window. */
  uint64_t end = s->close_ms ? s->close_ms : s->state == SESSION_CLOSED ? s->stopped_ms : now;
  uint64_t dur = end > s->started_ms ? end - s->started_ms : 0;
  json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I}", "id", s->id, "state",
                        state_name[s->state], "durationMs", (json_int_t)dur, "framesSeen",
                        (json_int_t)(s->store ? store_frames_seen(s->store) : 0), "framesLost",
                        (json_int_t)(s->store ? store_frames_lost(s->store) : 0), "restarts",
                        (json_int_t)(s->store ? store_restarts(s->store) : 0));
  if (!o) return NULL;
  int bad = 0;
  if (s->capture) bad |= json_object_set_new(o, "capture", json_true());
  if (s->timeline)
    bad |= json_object_set_new(o, "timeline", json_string(s->tl_on ? "on" : "off"));
  if (s->tl_dropped) bad |= json_object_set_new(o, "timelineDropped", json_true());
  if (s->store && store_number_gaps(s->store))
    bad |= json_object_set_new(o, "frameNumberGaps", json_integer((json_int_t)store_number_gaps(s->store)));
  if (s->interaction_id) {
    bad |= json_object_set_new(o, "interactionId", json_string(s->interaction_id));
    bad |= json_object_set_new(o, "linkedBy", json_string(s->linked_by));
  }
  json_t *tr = json_array();
  for (int t = 0; tr && t < WP_TRACK__COUNT; t++)
    if (s->track[t]) bad |= json_array_append_new(tr, json_string(wp_track_name(t)));
  if (tr && json_array_size(tr))
    bad |= json_object_set_new(o, "tracking", tr);
  else
    json_decref(tr);
  if (bad) {
    json_decref(o);
    return NULL;
  }
  return o;
}
