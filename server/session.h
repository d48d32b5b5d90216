/* session: one measurement session (docs/tool.md "Sessions"): its options,
 * its store of frames, its timeline and its warnings. The session manager
 * (sessions.h) alone changes its state and the fields below; every other
 * module reads it through the accessors.
 *
 * Ownership: reference-counted. Whoever holds a session_t * from a callback
 * or a waiter holds one reference (session_unref releases it); the manager
 * holds one while it is open or in the history. The session owns its store,
 * its timeline slot (events) and its warnings; the last unref frees them. */
#ifndef TELESCOPE_SESSION_H
#define TELESCOPE_SESSION_H

#include <jansson.h>
#include <stdint.h>

#include "appsrc_timeline.h"
#include "store.h"
#include "workload.h"
#include "wproto.h"

#define SESSION_MAX_WARNINGS 4

typedef struct session session_t;
typedef enum { SESSION_OPENING = 0, SESSION_ACTIVE, SESSION_CLOSING, SESSION_CLOSED } session_state_t;

typedef struct {
  const char *interaction_id; /* may be NULL; copied */
  const char *linked_by;      /* NULL: "agent" */
  double budget_ms;           /* <= 0: from the app's refresh rate */
  int track[WP_TRACK__COUNT]; /* switch these profile* extensions on while it is open */
  int capture;                /* a capture's private window (never the current session) */
  int no_timeline;            /* do not record GC/Embedder on the VM timeline for it */
  int include_startup;        /* judge start-up frames as any other (store_set_include_startup) */
  const workload_t *workload; /* the steps it plays (issue 32); NULL: none; copied */
} session_options_t;

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
  int collection_lost;    /* a reply in it said another tool switched collection off */
  int include_startup;    /* includeStartup: start-up frames are judged as any other */
  int frame_events;       /* it began on Flutter.Frame events (no watcher): no blocks */
  store_t *store;         /* set once the session has begun (its first position is known) */
  uint64_t read_pos;
  int stop_took; /* a stop answered and took its frames: reads in flight then take none */
  uint64_t started_ms, stopped_ms;
  int asked;           /* the begin call in flight covers this session */
  int close_requested; /* a close came while it was opening */
  uint64_t close_gen;  /* closing: the drain generation that ends it */
  uint64_t close_ms;   /* when the close began: it follows `more` for SESSIONS_CLOSE_MORE_MS */
  int close_batch;     /* 1: waiting for the app's last batch of timings; 2: waited */
  int open_failed;
  wp_status_t open_status; /* why it failed to open */
  wp_status_t end;         /* closed: why the final drain did not get through */
  char *warnings[SESSION_MAX_WARNINGS + 1];
  size_t nwarnings;
  appsrc_tl_slot_t tl; /* the VM timeline while it was open (issue 15) */
  workload_t *workload; /* owned; NULL without one */
  char drive_id[32];    /* the drive that plays it ("" until it started) */
  session_t *next;     /* in the manager's open list */
};

/* A new session "s<n>" opening at now (ms), one reference; NULL: out of memory. */
session_t *session_new(unsigned n, const session_options_t *opt, uint64_t now);
void session_warn(session_t *s, const char *text); /* a note for its `warnings` (copied) */
/* It begins after r's lastSeq: everything the watcher numbers after it is
 * its own (a store; the profile switches on[] say what blocks to expect).
 * -1: out of memory (no store). */
int session_begin(session_t *s, const record_reply_t *r, const int on[WP_TRACK__COUNT], uint64_t now);
/* A begun session becomes active once its switches are on or failed (then
 * it says so in its warnings): 1 when it did. */
int session_activate(session_t *s, const int on[WP_TRACK__COUNT], const int failed[WP_TRACK__COUNT]);

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
int session_stop_took(const session_t *s);
void session_set_stop_took(session_t *s);
/* Why the session ended without its final drain (diag NONE when it had it). */
const wp_status_t *session_end_status(const session_t *s);
/* The `session` object of the output schema at loop time now (new reference). */
json_t *session_to_json(const session_t *s, uint64_t now);
double session_refresh_rate(const session_t *s);    /* Hz when it began; 0 unknown */
const char *session_build_mode(const session_t *s); /* NULL unknown */
/* 1 when the watcher said at start that another tool was collecting the
 * timeline (collectionTakenOver): the session took the buffer over. */
int session_taken_over(const session_t *s);
/* Some reply of the session said collectionLost: another tool switched the
 * Flutter timeline off while it ran, so later frames have no blocks. */
int session_collection_lost(const session_t *s);
/* The VM-timeline events kept for it (GC, shader, long raster work), in
 * the order they were read; borrowed. */
const vmtl_event_t *session_timeline(const session_t *s, size_t *n);
/* 1 when it measured Flutter.Frame events (no watcher in the app): no blocks. */
int session_frame_events(const session_t *s);
/* The tracking switches it asked for. */
const int *session_track(const session_t *s);
/* The workload it plays (NULL: none), and the drive that plays it, as the
 * call that started the drive set it ("" until then). */
const workload_t *session_workload(const session_t *s);
const char *session_drive_id(const session_t *s);
void session_set_drive_id(session_t *s, const char *id);
/* Short notes about the session for the answer's `warnings` (a switch that
 * could not be set); borrowed, NULL-terminated. */
const char *const *session_warnings(const session_t *s);

#endif
