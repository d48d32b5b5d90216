/* session: one measurement session against the app (DESIGN 4 `start` …
 * `stop`). It switches attribution on through the watcher (and Flutter's own
 * profile* switches when asked, remembering their earlier values), drains the
 * watcher in the background every SESSION_DRAIN_MS so nothing is lost when
 * nobody reads, follows hot restarts (attribution re-enabled on the new run),
 * and feeds every drained reply into its store and into any taps (windows of
 * the session a read or a capture is watching). At close it drains what is
 * left, switches everything back and hands the store over.
 *
 * Every callback runs from the loop, never from inside the session_* call
 * that caused it. */
#ifndef TELESCOPE_SESSION_H
#define TELESCOPE_SESSION_H

#include <jansson.h>
#include <uv.h>

#include "codes.h"
#include "record.h"
#include "store.h"
#include "vm_isolate.h"

#define SESSION_DRAIN_MS 200   /* background drain interval (DESIGN: at most 250) */
#define SESSION_READ_LIMIT 500 /* records asked for per drain call */
#define SESSION_MAX_TAPS 8

typedef enum { TRACK_WIDGETS = 0, TRACK_LAYOUTS, TRACK_PAINTS, TRACK__COUNT } track_t;

/* What ended an asynchronous session step: diag NONE and rpc_code 0 is
 * success; otherwise detail says what went wrong (token-free). */
typedef struct {
  diag_code_t diag;
  int rpc_code;
  char detail[256];
} session_status_t;

typedef struct session session_t;

/* Told about every valid watcher reply the session receives (liveness,
 * version, clock evidence): borrowed for the call. */
typedef void (*session_reply_cb)(void *arg, const record_reply_t *reply);
typedef void (*session_done_cb)(void *arg, session_t *s, const session_status_t *st);

typedef struct {
  const char *id;             /* "s1", copied */
  const char *interaction_id; /* may be NULL; copied */
  const char *linked_by;      /* may be NULL ("agent" then, when interaction_id is set) */
  double budget_ms;           /* <= 0: from the app's refresh rate */
  int track[TRACK__COUNT];    /* switch these Flutter profile* extensions on */
} session_options_t;

/* Opens a session: watcher `start` (the reply fixes where the session
 * begins), then the requested profile* switches. done reports the outcome;
 * on failure the session is already closed and freed (s is NULL), with
 * attribution switched back off when the start had gone through. */
void session_open(uv_loop_t *loop, vm_app_t *app, const session_options_t *opt,
                  session_reply_cb on_reply, void *reply_arg, session_done_cb done, void *arg);

/* Drains now (after any drain in flight), then calls done. */
void session_drain(session_t *s, session_done_cb done, void *arg);

/* Drains what is left, switches attribution and the profile* switches back
 * to what they were, stops the timer. done gets the outcome; on success the
 * session is stopped (state "stopped") and the caller frees it with
 * session_free after reading it. On failure (e.g. the isolate is paused) the
 * session stays active and usable. */
void session_close(session_t *s, session_done_cb done, void *arg);

/* Closes without anyone waiting (a cancelled capture, shutdown): the same
 * switching back, best effort, then frees itself. */
void session_abandon(session_t *s);

/* Frees a stopped session (or an active one on shutdown, without switching
 * anything back). Pending callbacks are dropped. */
void session_free(session_t *s);

/* Frees every session still alive, opening, closing or abandoned (shutdown:
 * their calls are cancelled with the app). */
void session_free_all(void);

/* Taps: extra stores fed with every record the session takes from now on
 * (borrowed; detach before freeing them). */
int session_tap_attach(session_t *s, store_t *tap);
void session_tap_detach(session_t *s, store_t *tap);

/* A new interaction for frames from now on (NULL ends it); it is re-applied
 * after a hot restart. The watcher itself is told by the caller (`mark`). */
void session_set_interaction(session_t *s, const char *interaction_id, const char *linked_by);

/* The hot-restart hint from vm_app: drain at once. */
void session_kick(session_t *s);

store_t *session_store(session_t *s);
const char *session_id(const session_t *s);
int session_active(const session_t *s);
uint64_t session_duration_ms(const session_t *s);
int64_t session_budget_us(const session_t *s);
/* The last drain failure (diag NONE when the last drain went through). */
const session_status_t *session_last_error(const session_t *s);
/* The `session` object of the output schema (new reference). */
json_t *session_to_json(const session_t *s);

#endif
