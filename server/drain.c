#include "drain.h"

#include <stdio.h>
#include <string.h>

#include "log.h"

static void drain_reply(void *arg, const wp_status_t *st, const record_reply_t *r);

static void drain_send(drain_t *d, int64_t since) {
  wp_request_t req = {WP_READ, since, 0, NULL, NULL};
  if (!(d->call = wp_call(d->t, &req, drain_reply, d))) {
    wp_status_set(&d->status, DIAG_NONE, RPC_INTERNAL_ERROR, "out of memory");
    d->gen_done = d->gen_started;
  }
}

/* A drain generation ended: the owner closes the closing sessions it covers,
 * a drain asked for meanwhile starts, and the owner does what is due. */
static void drain_finish(void *arg) {
  drain_t *d = arg;
  d->gen_done = d->gen_started;
  int again = d->cbs->ended(d->arg);
  d->more_left = 0;
  if (again) d->again = 1;
  if (d->again) {
    d->again = 0;
    drain_start(d);
  }
  d->cbs->after(d->arg);
}

/* The frames of a generation are in: pull the timeline that goes with
 * them (the VM recorded it meanwhile), then end the generation. A drain
 * that could not reach the app will not reach its timeline. */
static void drain_done(drain_t *d) {
  if (appsrc_timeline_pull(d->tl, !d->stopped && !wp_failed(&d->status), drain_finish, d)) return;
  drain_finish(d);
}

static void drain_reply(void *arg, const wp_status_t *st, const record_reply_t *r) {
  drain_t *d = arg;
  d->call = NULL;
  if (wp_failed(st)) {
    d->status = *st;
    d->restart_reread = 0;
    log_debug("sessions: drain failed: %s", st->detail);
    drain_done(d);
    return;
  }
  d->cbs->reply(d->arg, r);
  if (strcmp(d->run, r->run_id) != 0 && !d->restart_reread) {
    /* A hot restart: the new run starts with attribution and Flutter's
     * switches off, and its seq starts again at 1. Read it from its start
     * (the owner switches everything on again). Or not a restart: the
     * source changed (the watcher went missing, or came). */
    int source_changed = r->frame_events != d->run_fe;
    snprintf(d->run, sizeof d->run, "%s", r->run_id);
    d->seq = 0;
    d->restart_reread = 1;
    if (source_changed)
      log_info("sessions: the frame source changed; following the new run");
    else
      log_info("sessions: the app restarted; following the new run");
    d->run_fe = r->frame_events;
    d->cbs->run_changed(d->arg, source_changed, r);
    drain_send(d, 0);
    if (!d->call) drain_done(d);
    return;
  }
  d->restart_reread = 0;
  d->cbs->feed(d->arg, r);
  if (r->nrecords) d->seq = r->records[r->nrecords - 1].seq;
  d->more_left = r->more;
  if (r->more && ++d->pages < DRAIN_MAX_PAGES) {
    drain_send(d, d->seq);
    if (d->call) return;
  }
  wp_status_set(&d->status, DIAG_NONE, 0, NULL);
  drain_done(d);
}

void drain_start(drain_t *d) {
  if (drain_busy(d)) { /* a generation (its pull included) is under way */
    d->again = 1;
    return;
  }
  d->gen_started++;
  d->pages = 0;
  if (!d->run_known || !d->have_t) { /* nothing has begun: nothing to drain */
    log_debug("sessions: drain with nothing begun (run_known %d, have_t %d)", d->run_known, d->have_t);
    wp_status_set(&d->status, DIAG_NONE, 0, NULL);
    drain_done(d);
    return;
  }
  drain_send(d, d->seq);
  if (!d->call) drain_done(d);
}

int drain_busy(const drain_t *d) { return d->call || appsrc_timeline_pulling(d->tl); }

void drain_begin_run(drain_t *d, const record_reply_t *r) {
  if (d->run_known) return;
  snprintf(d->run, sizeof d->run, "%s", r->run_id);
  d->seq = r->last_seq;
  d->run_known = 1;
  d->run_fe = r->frame_events;
}

void drain_forget_run(drain_t *d) { d->run_known = 0; }

void drain_set_transport(drain_t *d) {
  d->have_t = 1;
  d->run_known = 0;
}

void drain_cancel(drain_t *d) {
  d->stopped = 1;
  wp_cancel(d->call);
  d->call = NULL;
}

void drain_init(drain_t *d, const wp_transport_t *t, appsrc_timeline_t *tl, const drain_cbs_t *cbs,
                void *arg) {
  memset(d, 0, sizeof *d);
  d->t = t;
  d->tl = tl;
  d->cbs = cbs;
  d->arg = arg;
}
