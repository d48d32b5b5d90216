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

#include <libwebsockets.h>
#include <uv.h>

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

#endif
