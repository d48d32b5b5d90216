/* waits: the calls waiting on the session manager (an open, a close, a
 * drain), and their callbacks, run a loop turn after the event that readied
 * them (a uv_idle), oldest first. The manager (sessions.c) decides when a
 * wait is ready (its check_waiters); this file keeps the two lists and
 * makes the calls.
 *
 * Ownership: the queue owns its waits until their callback ran or they were
 * cancelled (both free them). A wait holds one reference to its session and
 * hands it to the callback (the callee releases it; with no callback, the
 * queue does). The queue's idle handle is the owner's to close. */
#ifndef TELESCOPE_WAITS_H
#define TELESCOPE_WAITS_H

#include <uv.h>

#include "session.h"

struct sessions;
typedef struct sessions_wait sessions_wait_t;

/* s: a new reference for the callee, or NULL when there is none (then st
 * says why). st: the outcome (DIAG_NONE, or why the step failed). */
typedef void (*sessions_cb)(void *arg, session_t *s, const wp_status_t *st);
/* The same for an open; joined is 1 when the call joined a session another
 * call opened (`alreadyActive`). */
typedef void (*sessions_open_cb)(void *arg, session_t *s, int joined, const wp_status_t *st);

typedef enum { W_OPEN, W_OPEN_AFTER, W_CLOSE, W_DRAIN } wait_kind_t;

typedef struct {
  sessions_wait_t *waits, *waits_tail; /* pending, oldest first */
  sessions_wait_t *ready, *ready_tail; /* to be called back on the next idle turn, oldest first */
  uv_idle_t idle;
} waits_t;

struct sessions_wait {
  struct sessions *m; /* the manager it waits on */
  waits_t *q;
  wait_kind_t kind;
  session_t *s; /* a reference, handed to the callback */
  uint64_t gen; /* W_DRAIN: satisfied once a drain of this generation ended; 0: not asked yet */
  int joined;
  int ready; /* on the ready list */
  wp_status_t st;
  session_options_t opt; /* W_OPEN_AFTER: what to open once the close is over (strings owned) */
  sessions_open_cb open_cb;
  sessions_cb cb;
  void *arg;
  sessions_wait_t *next, *prev;
};

void waits_init(waits_t *q, uv_loop_t *loop);
/* A pending wait of kind on s (a new reference; s may be NULL); NULL: out of memory. */
sessions_wait_t *waits_new(waits_t *q, struct sessions *m, wait_kind_t kind, session_t *s);
/* W_OPEN_AFTER: what to open once the close is over (the strings copied). */
void waits_set_options(sessions_wait_t *w, const session_options_t *opt);
/* w is answered on the next loop turn with st (NULL: no failure). */
void waits_ready(sessions_wait_t *w, const wp_status_t *st);
/* Drops w, pending or ready: its callback will not be called. */
void waits_cancel(sessions_wait_t *w);

#endif
