/* DWDS's batching of the page's events (web mode). A Flutter web app's
 * postEvent (Flutter.Frame, Flutter.RebuiltWidgets, every Extension-stream
 * event) reaches DWDS through the injected client's $emitDebugEvent, which
 * feeds a BatchedStreamController<DebugEvent>(delay: 1000); each batch goes
 * to DWDS as one BatchedDebugEvents message, which DWDS turns back into one
 * Extension event per DebugEvent (dart-lang/webdev d33d2704:
 * dwds/web/client.dart, dwds/lib/shared/batched_stream.dart,
 * dwds/lib/src/handlers/dev_handler.dart, services/proxy_service.dart
 * parseBatchedDebugEvents; docs/flutter-apis.md, "DWDS batches").
 *
 * The controller's loop, as _batchAndSendEvents runs it: wait up to check =
 * max(delay / 10, 1) ms for an event (a timeout counts as "go on"), then
 * take one event, waiting up to check ms more for it when none is there;
 * then, when more than delay ms passed since the last send, note the time
 * and send the buffer if it is not empty. So an idle loop looks every 2 x
 * check ms, every event taken looks too, and the send time moves on even
 * when there is nothing to send. Owns its timer; no sim_t. */
#ifndef TELESCOPE_SIM_DWDS_H
#define TELESCOPE_SIM_DWDS_H

#include <jansson.h>
#include <stdint.h>
#include <uv.h>

typedef struct sim_dwds sim_dwds_t;

/* Called with each batch: an array of {"kind", "data"} in posting order
 * (stolen). The callee emits them as DWDS does. */
typedef void (*sim_dwds_send_cb)(sim_dwds_t *d, json_t *batch);

struct sim_dwds {
  uv_timer_t timer;       /* the loop's current wait (Future.timeout) */
  int on;                 /* initialised with a delay > 0 */
  int delay_ms;           /* _batchDelayMilliseconds */
  int check_ms;           /* _checkDelayMilliseconds: max(delay ~/ 10, 1) */
  int waiting_event;      /* in _hasEventDuring (a timeout means: no event) */
  uint64_t last_send_ms;  /* lastSendTime */
  json_t *buffer;         /* taken, not yet sent: [{kind, data}] */
  uint64_t batches, sent; /* batches sent (non-empty), events in them */
  sim_dwds_send_cb send;
};

/* delay_ms <= 0: no batching (sim_dwds_post must not be called). 0 or -1. */
int sim_dwds_init(sim_dwds_t *d, uv_loop_t *loop, int delay_ms, sim_dwds_send_cb send);
/* Closes the timer; events still buffered are dropped, as with the page. */
void sim_dwds_close(sim_dwds_t *d);
/* The page posts an event (emitDebugEvent); steals data. */
void sim_dwds_post(sim_dwds_t *d, const char *kind, json_t *data);
/* {batchMs, held, batches, sent, lastSendAgoMs} for `stats`. */
json_t *sim_dwds_stats_json(const sim_dwds_t *d);

#endif
