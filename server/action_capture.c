/* capture (DESIGN 4): its own window for durationMs (a private session, so
 * it neither ends nor is ended by the `start`ed one), then the answer a
 * stop gives. Progress every second; cancelling closes the window. With a
 * workload, the window lasts until it was played and the app settled
 * (action_drive.c). */
#include "actions.h"

#include <stdio.h>

#define PROGRESS_EVERY_MS 1000
#define DEFAULT_DURATION_MS 3000

static void closed(void *arg, session_t *s, const wp_status_t *st) {
  op_t *op = arg;
  op->wait = NULL;
  if (!s) {
    op_fail_status(op, st);
    return;
  }
  session_unref(s);
  action_answer_closed(op, st);
}

static void close_window(op_t *op) {
  if (op->app) fe_closing(op->app->fe);
  if (!(op->wait = sessions_close(op->app->sessions, op->s, closed, op)))
    op_fail_text(op, "internal error: out of memory");
}

static void tick(uv_timer_t *t) {
  op_t *op = op_from_timer(t);
  uint64_t now = uv_now(op->ctx->loop), end = op->t0 + (uint64_t)op->a.duration_ms;
  if (now < end) {
    if (op->call && now > op->t0) {
      char msg[96];
      store_t *st = session_store(op->s);
      snprintf(msg, sizeof msg, "recording: %llu ms of %d, %llu frames",
               (unsigned long long)(now - op->t0), op->a.duration_ms,
               (unsigned long long)(st ? store_frames_seen(st) : 0));
      tool_call_progress(op->call, (double)(now - op->t0), op->a.duration_ms, msg);
    }
    uint64_t left = end - now;
    op_timer(op, left < PROGRESS_EVERY_MS ? left : PROGRESS_EVERY_MS, tick);
    return;
  }
  close_window(op);
}

static void opened(void *arg, session_t *s, int joined, const wp_status_t *st) {
  op_t *op = arg;
  (void)joined; /* a capture never joins */
  op->wait = NULL;
  if (!s) {
    op_fail_status(op, st);
    return;
  }
  op->s = s;
  if (op->a.interaction_id)
    sessions_note_interaction(op->app->sessions, op->a.interaction_id, op->a.linked_by);
  op->t0 = uv_now(op->ctx->loop);
  if (op->a.has_workload) {
    /* The window lasts as long as the workload plays (durationMs, when
     * given, bounds it). */
    action_drive(op, NULL, close_window);
    return;
  }
  tick(&op->timer);
}

void action_capture(op_t *op) {
  if (op->a.duration_ms < 0 && !op->a.has_workload) op->a.duration_ms = DEFAULT_DURATION_MS;
  session_options_t o = {op->a.interaction_id, op->a.linked_by, op->a.budget_ms, {0}, 1, 0, 0, NULL};
  if (op->a.has_workload) o.workload = &op->a.workload;
  o.no_timeline = op->a.no_timeline;
  o.include_startup = op->a.include_startup;
  for (int t = 0; t < WP_TRACK__COUNT; t++) o.track[t] = op->a.track[t];
  if (!(op->wait = sessions_open(op->app->sessions, &o, opened, op)))
    op_fail_text(op, "internal error: out of memory");
}
