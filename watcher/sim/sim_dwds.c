#include "sim_dwds.h"

#include <stddef.h>

#define container_of(p, type, member) ((type *)((char *)(p)-offsetof(type, member)))

/* The end of a round: `now > lastSendTime + delay` (batched_stream.dart).
 * The send time moves on whether or not anything is sent, so an event that
 * comes after a quiet second can still wait up to a whole delay. */
static void check(sim_dwds_t *d, uint64_t now) {
  json_t *batch;

  if (now <= d->last_send_ms + (uint64_t)d->delay_ms) return;
  d->last_send_ms = now;
  if (!json_array_size(d->buffer)) return;
  batch = d->buffer;
  d->buffer = json_array();
  d->batches++;
  d->sent += json_array_size(batch);
  d->send(d, batch);
}

static void on_wait(uv_timer_t *t) {
  sim_dwds_t *d = container_of(t, sim_dwds_t, timer);

  if (!d->waiting_event) {
    /* _hasEventOrTimeOut timed out, which counts as "go on": the loop now
     * waits once more, in _hasEventDuring, for an event to take. */
    d->waiting_event = 1;
  } else {
    d->waiting_event = 0; /* no event this round: only the time is checked */
    check(d, uv_now(t->loop));
  }
  uv_timer_start(&d->timer, on_wait, (uint64_t)d->check_ms, 0);
}

int sim_dwds_init(sim_dwds_t *d, uv_loop_t *loop, int delay_ms, sim_dwds_send_cb send) {
  d->on = 0;
  d->delay_ms = delay_ms;
  d->check_ms = delay_ms / 10 > 1 ? delay_ms / 10 : 1;
  d->waiting_event = 0;
  d->batches = d->sent = 0;
  d->send = send;
  d->buffer = NULL;
  if (delay_ms <= 0) return 0;
  if (uv_timer_init(loop, &d->timer)) return -1;
  d->buffer = json_array();
  d->last_send_ms = uv_now(loop); /* the client's main() ran as the page loaded */
  d->on = 1;
  uv_timer_start(&d->timer, on_wait, (uint64_t)d->check_ms, 0);
  return 0;
}

void sim_dwds_close(sim_dwds_t *d) {
  if (!d->on) return;
  d->on = 0;
  uv_close((uv_handle_t *)&d->timer, NULL);
  json_decref(d->buffer);
  d->buffer = NULL;
}

void sim_dwds_post(sim_dwds_t *d, const char *kind, json_t *data) {
  if (!d->on) {
    json_decref(data);
    return;
  }
  /* Whichever wait the loop is in ends at once: the event is taken, the
   * time checked, and the next round's first wait starts from now. */
  json_array_append_new(d->buffer, json_pack("{s:s, s:o}", "kind", kind, "data", data));
  d->waiting_event = 0;
  check(d, uv_now(d->timer.loop));
  uv_timer_start(&d->timer, on_wait, (uint64_t)d->check_ms, 0);
}

json_t *sim_dwds_stats_json(const sim_dwds_t *d) {
  uint64_t now = d->on ? uv_now(d->timer.loop) : 0;
  return json_pack("{s:i, s:I, s:I, s:I, s:I}", "batchMs", d->on ? d->delay_ms : 0, "held",
                   (json_int_t)(d->buffer ? json_array_size(d->buffer) : 0), "batches",
                   (json_int_t)d->batches, "sent", (json_int_t)d->sent, "lastSendAgoMs",
                   (json_int_t)(d->on ? now - d->last_send_ms : 0));
}
