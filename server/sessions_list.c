/* The open sessions of one app and each session's passage through them:
 * opened, begun at a reply's position, active once its switches are on,
 * closed into the history (or failed). Below sessions.c: it calls nothing
 * of it. */
#include "log.h"
#include "sessions_impl.h"

session_t *sessions_session_new(sessions_t *m, const session_options_t *opt) {
  session_t *s = session_new(++*m->ids, opt, now_ms(m));
  if (!s) return NULL;
  s->next = m->open;
  m->open = s;
  appsrc_timeline_attach(m->tl, &s->tl);
  return s;
}

void sessions_unlink(sessions_t *m, session_t *s) {
  for (session_t **p = &m->open; *p; p = &(*p)->next)
    if (*p == s) {
      *p = s->next;
      break;
    }
  s->next = NULL;
  appsrc_timeline_detach(m->tl, &s->tl);
  if (m->current == s) m->current = NULL;
}

void sessions_close_now(sessions_t *m, session_t *s, const wp_status_t *st) {
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

void sessions_fail_open(sessions_t *m, session_t *s, const wp_status_t *st) {
  s->open_failed = 1;
  s->open_status = *st;
  s->state = SESSION_CLOSED;
  sessions_unlink(m, s);
  if (!m->open) drain_forget_run(&m->drain);
  session_unref(s); /* the open list's reference; waiters keep theirs */
}

void sessions_begin(sessions_t *m, session_t *s, const record_reply_t *r) {
  if (session_begin(s, r, m->sw.on, now_ms(m)) < 0) {
    wp_status_t st;
    wp_status_set(&st, DIAG_NONE, RPC_INTERNAL_ERROR, "out of memory");
    sessions_fail_open(m, s, &st);
    return;
  }
  drain_begin_run(&m->drain, r);
}

void sessions_promote(sessions_t *m) {
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
