/* dtd_wsc: a small WebSocket client on an lws context, for telescope-dtd:
 * the daemon's watch on each registered VM service (dtd_impl holds a
 * VmService connection and unregisters the app when it closes) and the
 * one-shot `telescope-dtd register|unregister|list` client.
 *
 * Ownership: the module owns each dtd_wsc_t; it is freed when lws destroys
 * its wsi. After on_close, or after dtd_wsc_close, no callback comes. */
#ifndef TELESCOPE_DTD_WSC_H
#define TELESCOPE_DTD_WSC_H

#include <libwebsockets.h>
#include <stddef.h>

typedef struct dtd_wsc dtd_wsc_t;

typedef struct {
  void (*on_open)(void *arg);
  void (*on_message)(void *arg, const char *text, size_t len); /* one whole text message */
  void (*on_close)(void *arg, const char *why); /* failed to connect, or closed: the last call */
  void *arg;
} dtd_wsc_cbs_t;

/* The protocol every context (or vhost) that makes dtd_wsc connections must
 * list. */
#define DTD_WSC_PROTOCOL \
  { "dtd-wsc", dtd_wsc_callback, 0, 65536, 0, NULL, 0 }
int dtd_wsc_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                     size_t len);

/* Dials ws_uri (ws://host:port/path) on ctx (and vhost, may be NULL). NULL
 * with err set when the URI is unusable or lws refused at once; otherwise
 * on_open or on_close follows from the loop. */
dtd_wsc_t *dtd_wsc_open(struct lws_context *ctx, struct lws_vhost *vhost, const char *ws_uri,
                        const dtd_wsc_cbs_t *cbs, char *err, size_t errlen);
/* Queues one text message (copied). */
int dtd_wsc_send(dtd_wsc_t *w, const char *text);
/* Hangs up; no callback comes after this. */
void dtd_wsc_close(dtd_wsc_t *w);

#endif
