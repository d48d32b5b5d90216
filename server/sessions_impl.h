/* The session manager's state, shared by sessions.c (control calls, the
 * drain's callbacks, waiters, the API) and sessions_list.c (the open list
 * and each session's passage through it). Nothing else includes it. */
#ifndef TELESCOPE_SESSIONS_IMPL_H
#define TELESCOPE_SESSIONS_IMPL_H

#include <uv.h>

#include "appsrc_timeline.h"
#include "drain.h"
#include "history.h"
#include "sessions.h"
#include "switches.h"
#include "waits.h"

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

/* sessions_list.c */
session_t *sessions_session_new(sessions_t *m, const session_options_t *opt); /* NULL: no memory */
void sessions_unlink(sessions_t *m, session_t *s); /* out of the open list (not current) */
/* Into the history (st: why its last drain failed, or NULL); the last one
 * to close starts the settling. */
void sessions_close_now(sessions_t *m, session_t *s, const wp_status_t *st);
void sessions_fail_open(sessions_t *m, session_t *s, const wp_status_t *st);
/* The session begins after the reply's lastSeq (session_begin). */
void sessions_begin(sessions_t *m, session_t *s, const record_reply_t *r);
/* Opening sessions that have begun become active once their switches are
 * on (or could not be set: then they say so). */
void sessions_promote(sessions_t *m);

#endif
