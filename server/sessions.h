/* sessions: the session manager (docs/tool.md "Sessions"). It alone decides
 * which session is opening, active, closing or closed. It owns:
 *  - the sessions: the one `start` opened (current), the private windows of
 *    captures, and the last SESSIONS_HISTORY closed ones (readable by id);
 *  - attribution in the app, reference-counted: switched on (watcher start
 *    and the requested ext.flutter.profile* switches) while any session is
 *    open and set back when none is, re-checked after calls the app may have
 *    run late;
 *  - one background drain (every SESSIONS_DRAIN_MS while a session is open)
 *    that feeds every open session's store and follows hot restarts.
 *
 * A session is reference-counted: the manager holds one reference while it
 * is open or in the history, and every callback hands the callee a new one
 * (release it with session_unref). Every callback runs from the loop (a
 * uv_idle turn), never from inside the call that caused it. */
#ifndef TELESCOPE_SESSIONS_H
#define TELESCOPE_SESSIONS_H

#include <jansson.h>
#include <uv.h>

#include "store.h"
#include "vmtl.h"
#include "wproto.h"

#define SESSIONS_DRAIN_MS 200 /* background drain interval (DESIGN: at most 250) */
#define SESSIONS_HISTORY 16   /* closed sessions kept readable by id */
#define SESSIONS_MAX_PAGES 8  /* read pages per drain generation: bounds how long a read waits */
#define SESSIONS_CLOSE_MORE_MS 2000 /* how long a close keeps reading while the watcher says `more` */
#define SESSIONS_RECONCILE_TRIES 150 /* status calls (one per drain tick) to settle a doubtful switch */
#define SESSIONS_TL_MAX_EVENTS 20000  /* timeline events kept per session (then timelineDropped) */
#define SESSIONS_TL_OVERLAP_US 500000 /* pulls reach back this far: events are recorded when they end */

typedef struct sessions sessions_t;
typedef struct session session_t;
typedef struct sessions_wait sessions_wait_t;

typedef enum { SESSION_OPENING = 0, SESSION_ACTIVE, SESSION_CLOSING, SESSION_CLOSED } session_state_t;

typedef struct {
  const char *interaction_id; /* may be NULL; copied */
  const char *linked_by;      /* NULL: "agent" */
  double budget_ms;           /* <= 0: from the app's refresh rate */
  int track[WP_TRACK__COUNT]; /* switch these profile* extensions on while it is open */
  int capture;                /* a capture's private window (never the current session) */
  int no_timeline;            /* do not record GC/Embedder on the VM timeline for it */
  int include_startup;        /* judge start-up frames as any other (store_set_include_startup) */
} session_options_t;

/* s: a new reference for the callee, or NULL when there is none (then st
 * says why). st: the outcome (DIAG_NONE, or why the step failed). */
typedef void (*sessions_cb)(void *arg, session_t *s, const wp_status_t *st);
/* The same for an open; joined is 1 when the call joined a session another
 * call opened (`alreadyActive`). */
typedef void (*sessions_open_cb)(void *arg, session_t *s, int joined, const wp_status_t *st);
/* Every valid watcher reply the manager receives (liveness, clock evidence). */
typedef void (*sessions_reply_cb)(void *arg, const record_reply_t *r);

sessions_t *sessions_new(uv_loop_t *loop, sessions_reply_cb on_reply, void *reply_arg)
    __attribute__((warn_unused_result));
/* Frees every session and handle (shutdown: nothing is switched back in the
 * app, pending callbacks are dropped). The loop must run once more. */
void sessions_free(sessions_t *m);
/* The app to talk to; only while no session is open (the transport is
 * copied). */
void sessions_set_transport(sessions_t *m, const wp_transport_t *t);
/* 1 while a session is opening, active or closing. */
int sessions_busy(const sessions_t *m);

/* Opens a session. Without opt->capture and with a current session opening
 * or active: joins it; closing: waits for the close, then opens a new one.
 * A capture always opens its own. Returns a wait handle (NULL when out of
 * memory: cb is not called). */
sessions_wait_t *sessions_open(sessions_t *m, const session_options_t *opt, sessions_open_cb cb,
                               void *arg) __attribute__((warn_unused_result));
/* Closes s: a final drain that starts after this call, then the session is
 * closed (and attribution set back if it was the last open one). A close in
 * progress is joined; a closed session answers at once (from the loop). The
 * callback gets s, closed, and st saying whether the final drain got
 * through (not: the session ends with what it had). */
sessions_wait_t *sessions_close(sessions_t *m, session_t *s, sessions_cb cb, void *arg)
    __attribute__((warn_unused_result));
/* Waits for a drain that starts after this call (an opening s: first its
 * open), then calls back with s. */
sessions_wait_t *sessions_drain(sessions_t *m, session_t *s, sessions_cb cb, void *arg)
    __attribute__((warn_unused_result));
/* The caller gave up (its call was cancelled): cb will not be called. */
void sessions_wait_cancel(sessions_wait_t *w);
/* The same for the open of a capture, whose window nobody else can close:
 * it is closed (attribution and the timeline set back when it was the
 * last). */
void sessions_open_abandon(sessions_wait_t *w);

/* The connection to the app dropped (it exited, or another app took the
 * URI): timeline flags set on that VM are not set back on whatever comes
 * next. */
void sessions_app_gone(sessions_t *m);
/* A hot restart was seen on the VM service: drain at once. */
void sessions_kick(sessions_t *m);
/* The current (`start`ed) session, opening, active or closing; NULL when none.
 * Borrowed. */
session_t *sessions_current(sessions_t *m);
/* A session by id: open or in the history. Borrowed. */
session_t *sessions_find(sessions_t *m, const char *id);
/* The k-th most recently closed session (0: the newest), or NULL. Borrowed. */
session_t *sessions_stopped(sessions_t *m, size_t k);
/* The app's interaction as the tool last set it (mark/start); re-applied
 * after a hot restart while sessions are open. */
void sessions_note_interaction(sessions_t *m, const char *interaction_id, const char *linked_by);
/* A watcher reply seen elsewhere (a read outside sessions, status, mark):
 * lets the manager notice attribution left in the wrong state. */
void sessions_note_reply(sessions_t *m, const record_reply_t *r);

void session_ref(session_t *s);
void session_unref(session_t *s);
const char *session_id(const session_t *s);
session_state_t session_state(const session_t *s);
int session_is_capture(const session_t *s);
store_t *session_store(session_t *s); /* NULL while opening */
int64_t session_budget_us(const session_t *s);
/* Where plain reads continue (a store position). */
uint64_t session_read_pos(const session_t *s);
void session_set_read_pos(session_t *s, uint64_t pos);
/* Why the session ended without its final drain (diag NONE when it had it). */
const wp_status_t *session_end_status(const session_t *s);
/* The `session` object of the output schema at loop time now (new reference). */
json_t *session_to_json(const session_t *s, uint64_t now);
double session_refresh_rate(const session_t *s);     /* Hz when it began; 0 unknown */
const char *session_build_mode(const session_t *s);  /* NULL unknown */
/* 1 when the watcher said at start that another tool was collecting the
 * timeline (collectionTakenOver): the session took the buffer over. */
int session_taken_over(const session_t *s);
/* The VM-timeline events kept for it (GC, shader, long raster work), in
 * the order they were read; borrowed. */
const vmtl_event_t *session_timeline(const session_t *s, size_t *n);
/* 1 when it measured Flutter.Frame events (no watcher in the app): no blocks. */
int session_frame_events(const session_t *s);
/* The tracking switches it asked for. */
const int *session_track(const session_t *s);
/* Short notes about the session for the answer's `warnings` (a switch that
 * could not be set); borrowed, NULL-terminated. */
const char *const *session_warnings(const session_t *s);
/* Frees the blocks of the kept frames of sessions in the history beyond
 * the newest SESSIONS_HISTORY_BLOCKS (memory bound). */
#define SESSIONS_HISTORY_BLOCKS 4

#endif
