/* What telescope-dtd's transport (dtd_daemon.c) and its methods
 * (dtd_methods.c) share. Not an API. */
#ifndef TELESCOPE_DTD_IMPL_H
#define TELESCOPE_DTD_IMPL_H

#include <jansson.h>
#include <stddef.h>

#include "dtd_daemon.h"
#include "dtd_wsc.h"

/* One client connection. */
struct dtd_conn {
  struct dtd_conn *next;
  struct lws *wsi;
  dtd_daemon_t *d;
  struct dtd_msg *out_head, *out_tail;
  unsigned char *rx;
  size_t rx_len, rx_cap;
  json_t *streams;  /* object: streamId -> true, the streams it listens to */
  json_t *services; /* object: service -> object method -> capabilities|null */
  unsigned long serial;
};

/* One VM service registered with ConnectedApp (or being registered: DTD
 * connects to it first, as dtd_impl's vmServiceConnectUri does). */
struct dtd_app {
  struct dtd_app *next;
  dtd_daemon_t *d;
  char *uri, *exposed_uri, *name; /* exposed_uri and name may be NULL */
  dtd_wsc_t *watch;               /* our connection to it: its close unregisters it */
  int ready;                      /* connected: listed and announced */
  dtd_conn_t *waiter;             /* the registering client, until it is answered */
  json_t *wait_req;               /* its request (for the reply's id and error data) */
};

/* Queues msg (stolen) as compact JSON to c. */
void dtd_send_json(dtd_conn_t *c, json_t *msg);
/* Answers req on c with result (stolen); nothing for a notification. */
void dtd_reply(dtd_conn_t *c, json_t *req, json_t *result);
/* Answers req with a JSON-RPC error the way json_rpc_2 serializes an
 * RpcException: data (stolen, may be NULL) gains "request": req. */
void dtd_reply_error(dtd_conn_t *c, json_t *req, int code, const char *message, json_t *data);
/* Sends streamNotify {streamId, eventKind, eventData (stolen), timestamp}
 * to every client when all is set, else to those listening to stream. */
void dtd_notify(dtd_daemon_t *d, const char *stream, const char *kind, json_t *data, int all);

#endif
