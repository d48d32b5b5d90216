/* drain: the sessions' background read of the watcher (docs/tool.md
 * "Sessions"). One generation at a time: read pages after the last seq
 * drained (at most DRAIN_MAX_PAGES), hand them to the owner to feed the
 * open sessions' stores, follow hot restarts and frame-source changes (read
 * the new run from its start), then pull the app-side sources
 * (appsrc_timeline_pull), then end the generation.
 *
 * Ownership: the owner (the session manager) embeds the drain_t, owns the
 * transport and the timeline source it points at, and reads gen_started,
 * gen_done, more_left and status; the drain owns its call in flight
 * (drain_cancel drops it, no callback). Callbacks run from replies. */
#ifndef TELESCOPE_DRAIN_H
#define TELESCOPE_DRAIN_H

#include <stdint.h>

#include "appsrc_timeline.h"
#include "wproto.h"

#define DRAIN_MAX_PAGES 8 /* read pages per drain generation: bounds how long a read waits */

typedef struct {
  void (*reply)(void *arg, const record_reply_t *r); /* every valid reply (liveness, reconcile) */
  /* The reply is of another run: a hot restart (the app's switches are off
   * again), or source_changed: the frame source changed (watcher ↔ Flutter.Frame). */
  void (*run_changed)(void *arg, int source_changed, const record_reply_t *r);
  void (*feed)(void *arg, const record_reply_t *r); /* records of the run drained */
  /* The generation ended (pulls included): close what it covers; returns 1
   * to read another generation at once. */
  int (*ended)(void *arg);
  void (*after)(void *arg); /* after ended and the next start: do what is due */
} drain_cbs_t;

typedef struct {
  const wp_transport_t *t;  /* the owner's */
  appsrc_timeline_t *tl;    /* pulled after each generation; the owner's */
  const drain_cbs_t *cbs;
  void *arg;
  int have_t, stopped;
  wp_call_t *call;
  char run[RECORD_MAX_RUN_ID + 1];
  int run_known;
  int run_fe;  /* the run drained is the frame-events stand-in's, not a watcher's */
  int64_t seq; /* the last seq drained of run */
  int restart_reread, again, pages;
  int more_left; /* the generation ended at DRAIN_MAX_PAGES with records still waiting */
  uint64_t gen_started, gen_done;
  wp_status_t status; /* of the generation that ended last */
} drain_t;

void drain_init(drain_t *d, const wp_transport_t *t, appsrc_timeline_t *tl, const drain_cbs_t *cbs,
                void *arg);
/* The owner's transport now reaches an app: the run is found afresh. */
void drain_set_transport(drain_t *d);
/* A session began at r: the first one fixes where the drain starts. */
void drain_begin_run(drain_t *d, const record_reply_t *r);
/* No session is open: the next one starts the drain afresh. */
void drain_forget_run(drain_t *d);
/* Starts a generation, or asks for another once the one under way ends. */
void drain_start(drain_t *d);
int drain_busy(const drain_t *d); /* a generation (its pull included) is under way */
/* Drops the call in flight and starts nothing more (shutdown). */
void drain_cancel(drain_t *d);

#endif
