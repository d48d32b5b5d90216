/* sessions: the session manager (docs/tool.md "Sessions"), its state
 * machine and its waiters. It alone decides which session is opening,
 * active, closing or closed. Its parts, each below it: the session object
 * (session.h), the closed ones (history.h), the waiting calls (waits.h), the
 * drain (drain.h), the profile switches (switches.h) and the app-side
 * sources (appsrc.h: the VM timeline). It owns:
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

#include <uv.h>

#include "history.h"
#include "session.h"
#include "waits.h"

#define SESSIONS_DRAIN_MS 200 /* background drain interval (DESIGN: at most 250) */
#define SESSIONS_CLOSE_MORE_MS 2000 /* how long a close keeps reading while the watcher says `more` */
#define SESSIONS_RECONCILE_TRIES 150 /* status calls (one per drain tick) to settle a doubtful switch */

typedef struct sessions sessions_t;

/* Every valid watcher reply the manager receives (liveness, clock evidence).
 * It must not call back into the manager: the manager checks its own replies. */
typedef void (*sessions_reply_cb)(void *arg, const record_reply_t *r);

/* ids: the counter session ids are drawn from, shared by the managers of
 * several apps so no id is given twice (NULL: the manager's own). */
sessions_t *sessions_new(uv_loop_t *loop, sessions_reply_cb on_reply, void *reply_arg,
                         unsigned *ids) __attribute__((warn_unused_result));
/* Frees every session and handle (shutdown: nothing is switched back in the
 * app, pending callbacks are dropped). The loop must run once more. */
void sessions_free(sessions_t *m);
/* The app to talk to; only while no session is open (the transport is
 * copied). */
void sessions_set_transport(sessions_t *m, const wp_transport_t *t);
/* 1 while a session is opening, active or closing. */
int sessions_busy(const sessions_t *m);
/* How many times a call to switch t on from off was sent (it only grows):
 * a change tells the frames that follow were drawn with it newly on. */
unsigned sessions_switched_on(const sessions_t *m, wp_track_t t);

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

#endif
