/* telescope-dtd's daemon: a stand-in for the Dart Tooling Daemon
 * (dart-lang/sdk pkg/dtd_impl) with the parts an app-discovering client
 * uses: the URI with its auth code, JSON-RPC over WebSocket, streamListen /
 * streamCancel / postEvent / registerService / getRegisteredServices, and the
 * ConnectedApp service (registerVmService and unregisterVmService with the
 * trusted client secret, getVmServices, the VmServiceRegistered /
 * VmServiceUnregistered events). Facts and sources: docs/flutter-apis.md,
 * "The Dart Tooling Daemon".
 *
 * Ownership: the caller owns the dtd_daemon_t and the loop; the daemon owns
 * its lws context, connections and registered apps. */
#ifndef TELESCOPE_DTD_DAEMON_H
#define TELESCOPE_DTD_DAEMON_H

#include <jansson.h>
#include <libwebsockets.h>
#include <stddef.h>
#include <uv.h>

#include "dtd_wsc.h"

typedef struct dtd_conn dtd_conn_t;
typedef struct dtd_app dtd_app_t;
typedef struct dtd_daemon dtd_daemon_t;

struct dtd_daemon {
  uv_loop_t *loop;
  char host[64];   /* listen address (default 127.0.0.1) */
  int port;        /* 0: ephemeral; the bound port after dtd_daemon_start */
  char token[32];  /* the URI's auth code, first path segment ("" with --disable-service-auth-codes)
                    */
  char secret[32]; /* the trusted client secret registerVmService needs */
  int unrestricted;     /* --unrestricted: no secret needed */
  int no_connected_app; /* an older DTD without the ConnectedApp service */
  int verbose;
  struct lws_context *ctx;
  struct lws_vhost *vhost;
  dtd_conn_t *conns;
  dtd_app_t *apps; /* registered (and being registered) VM services, in order */
  /* What is done with the transport's events, set before dtd_daemon_start
   * (dtd_methods_attach): the transport calls nothing above it by name. */
  void (*on_message)(dtd_conn_t *c, const char *text, size_t len); /* one whole text message */
  void (*on_conn_gone)(dtd_conn_t *c); /* c is going */
  void (*on_stop)(dtd_daemon_t *d);    /* before the context is destroyed */
};

/* Listens on d->host:d->port. 0, or -1 with a message on stderr. */
int dtd_daemon_start(dtd_daemon_t *d);
/* The ws URI clients dial: ws://host:port/TOKEN (no trailing slash). */
void dtd_daemon_uri(const dtd_daemon_t *d, char *out, size_t n);
/* Closes every connection and the lws context (its handles close as the
 * loop runs on). */
void dtd_daemon_stop(dtd_daemon_t *d);

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
