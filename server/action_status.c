/* status: connection, isolate, watcher, liveness, clock and the sessions
 * (DESIGN 4). The connection state comes from vm_app (kept from the VM's
 * stream events), the rest from one watcher call. */
#include "actions.h"

#include <string.h>

#include "summary.h"

#define CLOCK_TOPUP 32 /* records read for clock evidence while it has few samples */

static void answer(op_t *op) {
  tool_ctx_t *ctx = op->ctx;
  json_t *r = op_result(op);
  if (!r) goto done;
  json_t *l = appfacts_liveness_json(&op->app->facts);
  if (l) json_object_set_new(r, "liveness", l);
  if (op->app->facts.watcher) json_object_set(r, "watcher", op->app->facts.watcher);
  json_object_set_new(r, "clock", summary_clock_to_json(&op->app->facts.clock));
  session_t *s = sessions_current(op->app->sessions);
  if (s) json_object_set_new(r, "session", session_to_json(s, uv_now(ctx->loop)));
done:
  op_finish(op, r, 0, NULL);
}

static void clock_reply(void *arg, const wp_status_t *st, const record_reply_t *r) {
  (void)st;
  (void)r;
  answer(arg); /* the clock is evidence; its absence is no failure */
}

static void watcher_reply(void *arg, const wp_status_t *st, const record_reply_t *r) {
  op_t *op = arg;
  if (wp_failed(st)) {
    op_fail_status(op, st);
    return;
  }
  if (op->app->facts.clock.seen < SUMMARY_CLOCK_MIN_SAMPLES && r->last_seq > 0) {
    int64_t since = r->last_seq > CLOCK_TOPUP ? r->last_seq - CLOCK_TOPUP : 0;
    wp_request_t req = {WP_READ, since, CLOCK_TOPUP, NULL, NULL};
    op_wp(op, &req, clock_reply);
    return;
  }
  answer(op);
}

static void refreshed(void *arg, const vm_result_t *res) {
  op_t *op = arg;
  op->vmc = NULL;
  if (res->diag != DIAG_NONE) {
    op_fail_diag(op, res->diag, res->detail);
    return;
  }
  const char *w = json_string_value(json_object_get(res->result, "watcher"));
  int paused = json_is_true(json_object_get(res->result, "paused"));
  /* "unknown" (DWDS WebSocket mode lists no extensions until the page is
   * asked) is settled by asking the watcher itself. */
  /* A Flutter app without the watcher still answers, from its frame events. */
  if (paused || (w && strcmp(w, "missing") == 0 && !fe_in_use(op->app->fe))) {
    op_fail_diag(op, paused ? DIAG_ISOLATE_PAUSED : DIAG_WATCHER_MISSING, NULL);
    return;
  }
  wp_request_t req = {WP_STATUS, 0, 0, NULL, NULL};
  op_wp(op, &req, watcher_reply);
}

void action_status(op_t *op) {
  op->vmc = vm_app_refresh(op->app->app, refreshed, op);
  if (!op->vmc) op_fail_text(op, "internal error: out of memory");
}
