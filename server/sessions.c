#include "sessions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "appsrc_timeline.h"
#include "container_of.h"
#include "drain.h"
#include "history.h"
#include "log.h"
#include "switches.h"
#include "waits.h"

/* The session manager's state: this file alone owns it. */
typedef enum { COLL_OFF = 0, COLL_ON } coll_t;
struct sessions {
  uv_loop_t *loop;
  wp_transport_t t;
  int have_t;
  sessions_reply_cb on_reply;
  void *reply_arg;
  unsigned own_ids, *ids; /* the last session id given (ids: shared over apps) */

  session_t *open;    /* opening, active and closing sessions */
  session_t *current; /* the `start`ed one, in open */
  history_t history;  /* closed, with their own reference */

  /* Attribution in the app as our own calls left it. */
  coll_t coll;
  int coll_dirty; /* a switch call may still run late: compare on the next reply */
  int watcher_dirty; /* a watcher we left (source switched) may collect: its next reply says */
  switches_t sw; /* the profile* switches (switches.h) */
  int settling; /* the last session closed: switching back before its closers are answered */
  int reconcile_tries; /* status calls made to settle a doubtful switch with no session open */
  char *interaction_id, *linked_by;
  appsrc_timeline_t *tl; /* the VM timeline (appsrc_timeline.h); owned */

  /* One control call at a time: start/stop/status/mark (ctl), switches, timeline. */
  wp_call_t *ctl;
  int ctl_value;

  drain_t drain; /* one generation at a time, feeding every begun session */
  void *batch;   /* the transport's batch wait, for the closes that wait (close_batch 1) */

  uv_timer_t timer;
  waits_t q; /* its idle handle is closed with the timer */
  int handles_open;
  int checking, recheck;
  int freeing;
};

static inline uint64_t now_ms(sessions_t *m) { return uv_now(m->loop); }

static void pump(sessions_t *m);
static void check_waiters(sessions_t *m);

static void on_timer(uv_timer_t *t);

static int dirty(const sessions_t *m) {
  return m->coll_dirty | m->watcher_dirty | switches_dirty(&m->sw);
}

static int ctl_busy(const sessions_t *m) { return m->ctl || switches_calling(&m->sw); }

/* The timer drains while sessions are open and, with none open, settles a
 * switch left in doubt by asking the watcher (bounded), so an app that comes
 * back is put right even when nobody calls. */
static void timer_ensure(sessions_t *m) {
  if (!uv_is_active((uv_handle_t *)&m->timer))
    uv_timer_start(&m->timer, on_timer, SESSIONS_DRAIN_MS, SESSIONS_DRAIN_MS);
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

/* ---- the open list ----------------------------------------------------
 * The open sessions and each session's passage through them: opened, begun
 * at a reply's position, active once its switches are on, closed into the
 * history (or failed). */

static session_t *sessions_session_new(sessions_t *m, const session_options_t *opt) {
  session_t *s = session_new(++*m->ids, opt, now_ms(m));
  if (!s) return NULL;
  s->next = m->open;
  m->open = s;
  appsrc_timeline_attach(m->tl, &s->tl);
  return s;
}

static void sessions_unlink(sessions_t *m, session_t *s) {
  for (session_t **p = &m->open; *p; p = &(*p)->next)
    if (*p == s) {
      *p = s->next;
      break;
    }
  s->next = NULL;
  appsrc_timeline_detach(m->tl, &s->tl);
  if (m->current == s) m->current = NULL;
}

static void sessions_close_now(sessions_t *m, session_t *s, const wp_status_t *st) {
  s->state = SESSION_CLOSED;
  s->stopped_ms = now_ms(m);
  if (st && wp_failed(st)) s->end = *st;
  sessions_unlink(m, s);
  history_push(&m->history, s); /* takes the open list's reference */
  if (!m->open) {
    log_debug("sessions: the last open session closed");
    m->settling = 1;
    drain_forget_run(&m->drain); /* the next session starts the drain afresh */
  }
  log_debug("session %s closed (%llu frames)", s->id,
            (unsigned long long)(s->store ? store_frames_seen(s->store) : 0));
}

static void sessions_fail_open(sessions_t *m, session_t *s, const wp_status_t *st) {
  s->open_failed = 1;
  s->open_status = *st;
  s->state = SESSION_CLOSED;
  sessions_unlink(m, s);
  if (!m->open) drain_forget_run(&m->drain);
  session_unref(s); /* the open list's reference; waiters keep theirs */
}

static void sessions_begin(sessions_t *m, session_t *s, const record_reply_t *r) {
  if (session_begin(s, r, m->sw.on, now_ms(m)) < 0) {
    wp_status_t st;
    wp_status_set(&st, DIAG_NONE, RPC_INTERNAL_ERROR, "out of memory");
    sessions_fail_open(m, s, &st);
    return;
  }
  drain_begin_run(&m->drain, r);
}

static void sessions_promote(sessions_t *m) {
  int closing = 0;
  for (session_t *s = m->open, *next; s; s = next) {
    next = s->next;
    if (s->state != SESSION_OPENING || !session_activate(s, m->sw.on, m->sw.failed)) continue;
    if (s->close_requested) {
      s->state = SESSION_CLOSING;
      s->close_ms = now_ms(m);
      s->close_gen = m->drain.gen_started + 1;
      closing = 1;
    }
  }
  if (closing) drain_start(&m->drain);
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
        sessions_fail_open(m, s, st);
      else
        sessions_begin(m, s, r);
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
  if (r) sessions_note_reply(m, r); /* after the switch: a pump before would send it again */
  sessions_promote(m);
  pump(m);
  check_waiters(m);
}

/* A switch call was answered. */
static void switches_settled(void *arg) {
  sessions_t *m = arg;
  if (dirty(m)) timer_ensure(m);
  sessions_promote(m);
  pump(m);
  check_waiters(m);
}

static int ctl_send(sessions_t *m, wp_action_t action, const char *iid, const char *linked_by) {
  wp_request_t req = {action, 0, 0, iid, linked_by};
  m->ctl_value = (int)action;
  m->ctl = wp_call(&m->t, &req, ctl_reply, m);
  return m->ctl ? 0 : -1;
}

/* The timeline source answered a control call. */
static void tl_settled(void *arg) {
  sessions_t *m = arg;
  pump(m);
  check_waiters(m);
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
  if (ctl_busy(m) || appsrc_timeline_calling(m->tl) || !m->have_t || m->freeing) return;
  int want = m->open != NULL;
  session_t *unbegun = NULL;
  for (session_t *s = m->open; s; s = s->next)
    if (s->state == SESSION_OPENING && !s->store) unbegun = s;
  /* The timeline records before a session begins: every frame it counts is
   * then drawn with GC and Embedder recorded, after the time its pulls start
   * from. Begun first, a slow app or link let a shader burst through before
   * the streams were set, and it read as raster work nothing explains. */
  if (unbegun && appsrc_timeline_step(m->tl, want)) return;
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
  int wanted[WP_TRACK__COUNT] = {0};
  for (session_t *s = m->open; s; s = s->next)
    for (int t = 0; t < WP_TRACK__COUNT; t++) wanted[t] |= s->track[t];
  int sent = switches_step(&m->sw, want, wanted);
  if (sent > 0) return;
  if (sent < 0) goto oom;
  if (appsrc_timeline_step(m->tl, want)) return;
  if (!want && (appsrc_timeline_calling(m->tl) || appsrc_timeline_pulling(m->tl)))
    return; /* settling waits for the timeline too */
  if (!want) {
    const char *lost = appsrc_timeline_lost(m->tl); /* said to the closers that wait */
    if (lost && history_newest(&m->history, 0)) session_warn(history_newest(&m->history, 0), lost);
    m->settling = 0;
    switches_settle(&m->sw);
  }
  return;

oom: /* nothing was sent: the next event tries again */
  log_warn("sessions: out of memory; a control call was not sent");
}

/* ---- the drain's callbacks (drain.h) ----------------------------------- */

static void drain_on_reply(void *arg, const record_reply_t *r) {
  sessions_t *m = arg;
  m->on_reply(m->reply_arg, r);
  sessions_note_reply(m, r);
}

/* A hot restart: the new run starts with attribution and Flutter's switches
 * off; switch everything on again. A changed source is not a restart: the
 * app's switches stay as we set them; a watcher we leave may still collect,
 * and is stopped once it answers again. */
static void drain_on_run_changed(void *arg, int source_changed, const record_reply_t *r) {
  sessions_t *m = arg;
  m->coll = COLL_OFF;
  if (source_changed) {
    if (!r->frame_events) m->coll_dirty = 0;
    else m->watcher_dirty = 1;
    timer_ensure(m);
  } else {
    switches_app_restarted(&m->sw);
  }
  pump(m);
}

static void drain_on_feed(void *arg, const record_reply_t *r) {
  sessions_t *m = arg;
  for (session_t *s = m->open; s; s = s->next) {
    if (!s->store) continue;
    if (store_add_reply(s->store, r, NULL) < 0) session_warn(s, "out of memory: frames were dropped");
    if (r->collection_lost) s->collection_lost = 1;
  }
}

/* The app's last batch is in (or none was due): the closes that waited
 * read once more. */
static void on_batch(void *arg, const vm_result_t *res) {
  sessions_t *m = arg;
  (void)res;
  m->batch = NULL;
  for (session_t *s = m->open; s; s = s->next)
    if (s->close_batch == 1) {
      s->close_batch = 2;
      s->close_gen = m->drain.gen_started + 1;
    }
  drain_start(&m->drain);
}

/* A close waits once for the app's last batch of timings before its last
 * read: the frames drawn just before the stop are in it (issue 21 item 5). */
static int wait_batch(sessions_t *m, session_t *s) {
  if (s->close_batch || !m->t.batch) return 0;
  s->close_batch = 1;
  if (!m->batch && !(m->batch = m->t.batch(m->t.arg, on_batch, m))) s->close_batch = 2;
  return s->close_batch == 1;
}

/* A drain generation ended: closing sessions it covers are closed (or read
 * on while the watcher holds more of their frames). */
static int drain_on_ended(void *arg) {
  sessions_t *m = arg;
  drain_t *d = &m->drain;
  int again = 0;
  for (session_t *s = m->open, *next; s; s = next) {
    next = s->next;
    if (s->state != SESSION_CLOSING || s->close_gen > d->gen_done || s->close_batch == 1) continue;
    if (d->more_left && !wp_failed(&d->status) && now_ms(m) < s->close_ms + SESSIONS_CLOSE_MORE_MS) {
      /* The watcher holds more of this session's frames: keep reading, for
       * a while (an app that outruns the drain would keep a stop waiting). */
      s->close_gen = d->gen_started + 1;
      again = 1;
      continue;
    }
    if (!wp_failed(&d->status) && wait_batch(m, s)) continue;
    sessions_close_now(m, s, &d->status);
  }
  return again;
}

static void drain_on_after(void *arg) {
  sessions_t *m = arg;
  pump(m);
  check_waiters(m);
}

static const drain_cbs_t drain_cbs = {drain_on_reply, drain_on_run_changed, drain_on_feed, drain_on_ended,
                                      drain_on_after};

static void on_timer(uv_timer_t *t) {
  sessions_t *m = container_of(t, sessions_t, timer);
  if (!m->open) {
    if (!dirty(m) || m->reconcile_tries >= SESSIONS_RECONCILE_TRIES) {
      m->reconcile_tries = 0;
      uv_timer_stop(&m->timer);
    } else if (!ctl_busy(m) && m->have_t) {
      m->reconcile_tries++;
      if (ctl_send(m, WP_STATUS, NULL, NULL) < 0) log_warn("sessions: out of memory");
    }
    return;
  }
  if (!drain_busy(&m->drain)) drain_start(&m->drain);
  pump(m);
}

/* ---- waiters ----------------------------------------------------------- */

/* The session a W_OPEN_AFTER waiter asked for, now that the close it waited
 * for is over: join one that another call opened meanwhile, or open it. */
static void open_after(sessions_t *m, sessions_wait_t *w) {
  session_unref(w->s);
  w->s = NULL;
  w->kind = W_OPEN;
  if (m->current) {
    w->s = m->current;
    w->joined = 1;
  } else if ((w->s = sessions_session_new(m, &w->opt))) {
    m->current = w->s;
  } else {
    wp_status_t st;
    wp_status_set(&st, DIAG_NONE, RPC_INTERNAL_ERROR, "out of memory");
    waits_ready(w, &st);
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
    for (sessions_wait_t *w = m->q.waits, *next; w; w = next) {
      next = w->next;
      session_t *s = w->s;
      if (s && s->open_failed) {
        waits_ready(w, &s->open_status);
        continue;
      }
      switch (w->kind) {
      case W_OPEN:
        if (s->state != SESSION_OPENING) waits_ready(w, NULL);
        break;
      case W_OPEN_AFTER:
        if (s->state == SESSION_CLOSED && !m->settling) {
          open_after(m, w);
          opened = 1;
        }
        break;
      case W_CLOSE:
        if (s->state == SESSION_CLOSED && !m->settling) waits_ready(w, &s->end);
        break;
      case W_DRAIN:
        if (s->state == SESSION_CLOSED)
          waits_ready(w, &s->end);
        else if (s->state == SESSION_OPENING)
          break;
        else if (!w->gen) {
          w->gen = m->drain.gen_started + 1;
          need_drain = 1;
        } else if (m->drain.gen_done >= w->gen)
          waits_ready(w, &m->drain.status);
        break;
      }
    }
    if (opened) {
      timer_ensure(m);
      pump(m);
      m->recheck = 1;
    }
    if (need_drain) drain_start(&m->drain);
  } while (m->recheck);
  m->checking = 0;
}

void sessions_wait_cancel(sessions_wait_t *w) { waits_cancel(w); }

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
  if (!s && !opt->capture && m->settling) s = history_newest(&m->history, 0);
  if (!opt->capture && s && (s->state == SESSION_CLOSING || s->state == SESSION_CLOSED ||
                             s->close_requested)) {
    if (!(w = waits_new(&m->q, m, W_OPEN_AFTER, s))) return NULL;
    waits_set_options(w, opt);
  } else if (!opt->capture && s) {
    if (!(w = waits_new(&m->q, m, W_OPEN, s))) return NULL;
    w->joined = 1;
  } else {
    if (!(s = sessions_session_new(m, opt))) return NULL;
    if (!(w = waits_new(&m->q, m, W_OPEN, s))) {
      sessions_unlink(m, s);
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
  sessions_wait_t *w = waits_new(&m->q, m, W_CLOSE, s);
  if (!w) return NULL;
  w->cb = cb;
  w->arg = arg;
  if (s->state == SESSION_OPENING) {
    s->close_requested = 1;
  } else if (s->state == SESSION_ACTIVE) {
    s->state = SESSION_CLOSING;
    s->close_ms = now_ms(m);
    s->close_gen = m->drain.gen_started + 1;
    drain_start(&m->drain);
  }
  check_waiters(m);
  return w;
}

sessions_wait_t *sessions_drain(sessions_t *m, session_t *s, sessions_cb cb, void *arg) {
  sessions_wait_t *w = waits_new(&m->q, m, W_DRAIN, s);
  if (!w) return NULL;
  w->cb = cb;
  w->arg = arg;
  check_waiters(m);
  return w;
}

session_t *sessions_current(sessions_t *m) { return m->current; }

void sessions_kick(sessions_t *m) {
  if (m->open) drain_start(&m->drain);
}

session_t *sessions_find(sessions_t *m, const char *id) {
  for (session_t *s = m->open; s; s = s->next)
    if (!strcmp(s->id, id)) return s;
  return history_find(&m->history, id);
}

int sessions_busy(const sessions_t *m) { return m->open != NULL; }

unsigned sessions_switched_on(const sessions_t *m, wp_track_t t) { return m->sw.on_sent[t]; }

session_t *sessions_stopped(sessions_t *m, size_t k) { return history_newest(&m->history, k); }

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
  if (ctl_busy(m) || m->freeing || !m->have_t) return;
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
  if (!m->open && switches_restore_dirty(&m->sw)) return;
  pump(m);
}

void sessions_app_gone(sessions_t *m) {
  appsrc_timeline_gone(m->tl);
  pump(m);
  check_waiters(m);
}

void sessions_set_transport(sessions_t *m, const wp_transport_t *t) {
  log_debug("sessions: transport set (%s open)", m->open ? "sessions" : "nothing");
  m->t = *t; /* no session is open, so no close waits for a batch (m->batch) */
  m->have_t = 1;
  drain_set_transport(&m->drain);
}

static void handle_closed(uv_handle_t *h) {
  sessions_t *m = h->data;
  if (--m->handles_open == 0) free(m);
}

sessions_t *sessions_new(uv_loop_t *loop, sessions_reply_cb on_reply, void *reply_arg,
                         unsigned *ids) {
  sessions_t *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->ids = ids ? ids : &m->own_ids;
  if (!(m->tl = appsrc_timeline_new(loop, &m->t, tl_settled, m))) {
    free(m);
    return NULL;
  }
  m->loop = loop;
  m->on_reply = on_reply;
  m->reply_arg = reply_arg;
  switches_init(&m->sw, &m->t, switches_settled, m);
  drain_init(&m->drain, &m->t, m->tl, &drain_cbs, m);
  uv_timer_init(loop, &m->timer);
  waits_init(&m->q, loop);
  m->timer.data = m->q.idle.data = m;
  m->handles_open = 2;
  return m;
}

void sessions_free(sessions_t *m) {
  if (!m) return;
  m->freeing = 1;
  wp_cancel(m->ctl);
  m->ctl = NULL;
  switches_cancel(&m->sw);
  drain_cancel(&m->drain);
  if (m->batch) m->t.cancel(m->batch);
  m->batch = NULL;
  while (m->q.waits) waits_cancel(m->q.waits);
  while (m->q.ready) waits_cancel(m->q.ready);
  while (m->open) {
    session_t *s = m->open;
    sessions_unlink(m, s);
    session_unref(s);
  }
  appsrc_timeline_free(m->tl); /* cancels its calls; nothing is set back */
  m->tl = NULL;
  history_close(&m->history);
  free(m->interaction_id);
  free(m->linked_by);
  uv_close((uv_handle_t *)&m->timer, handle_closed);
  uv_close((uv_handle_t *)&m->q.idle, handle_closed);
}
