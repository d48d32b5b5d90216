#include "dtd_wsc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WSC_RX_MAX ((size_t)16 << 20)

struct wsc_msg {
  struct wsc_msg *next;
  size_t len;
  unsigned char buf[]; /* LWS_PRE headroom, then the text */
};

struct dtd_wsc {
  struct lws *wsi;
  dtd_wsc_cbs_t cbs;
  int open;
  int done;       /* on_close was called, or the owner closed it: silence */
  int in_connect; /* inside lws_client_connect_via_info */
  int destroyed;  /* lws destroyed the wsi while in_connect */
  struct wsc_msg *out_head, *out_tail;
  char *rx;
  size_t rx_len, rx_cap;
  char host[256], path[1024], hosthdr[300];
  int port;
};

static void finish(dtd_wsc_t *w, const char *why) {
  if (w->done) return;
  w->done = 1;
  /* A failure inside dtd_wsc_open is its NULL return, not a callback. */
  if (!w->in_connect && w->cbs.on_close) w->cbs.on_close(w->cbs.arg, why);
}

static void wsc_free(dtd_wsc_t *w) {
  struct wsc_msg *m, *n;
  for (m = w->out_head; m; m = n) {
    n = m->next;
    free(m);
  }
  free(w->rx);
  free(w);
}

int dtd_wsc_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                     size_t len) {
  dtd_wsc_t *w = wsi ? lws_get_opaque_user_data(wsi) : NULL;
  (void)user;
  if (!w) return 0;
  switch (reason) {
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR: {
      char why[300];
      snprintf(why, sizeof why, "%s", in ? (const char *)in : "connection failed");
      finish(w, why);
      return 0;
    }
    case LWS_CALLBACK_CLIENT_ESTABLISHED:
      w->open = 1;
      if (!w->done && w->cbs.on_open) w->cbs.on_open(w->cbs.arg);
      if (w->out_head) lws_callback_on_writable(wsi);
      return 0;
    case LWS_CALLBACK_CLIENT_WRITEABLE: {
      struct wsc_msg *m = w->out_head;
      if (w->done) return -1;
      if (!m) return 0;
      w->out_head = m->next;
      if (!w->out_head) w->out_tail = NULL;
      int n = lws_write(wsi, m->buf + LWS_PRE, m->len, LWS_WRITE_TEXT);
      free(m);
      if (n < 0) return -1;
      if (w->out_head) lws_callback_on_writable(wsi);
      return 0;
    }
    case LWS_CALLBACK_CLIENT_RECEIVE:
      if (w->done) return 0;
      if (w->rx_len + len + 1 > w->rx_cap) {
        size_t cap = w->rx_cap ? w->rx_cap : 4096;
        while (cap < w->rx_len + len + 1) cap *= 2;
        char *p = cap <= WSC_RX_MAX ? realloc(w->rx, cap) : NULL;
        if (!p) return -1;
        w->rx = p;
        w->rx_cap = cap;
      }
      memcpy(w->rx + w->rx_len, in, len);
      w->rx_len += len;
      if (lws_is_final_fragment(wsi) && !lws_remaining_packet_payload(wsi)) {
        w->rx[w->rx_len] = '\0';
        size_t n = w->rx_len;
        w->rx_len = 0;
        if (!lws_frame_is_binary(wsi) && w->cbs.on_message) w->cbs.on_message(w->cbs.arg, w->rx, n);
      }
      return 0;
    case LWS_CALLBACK_CLIENT_CLOSED:
      finish(w, "the connection closed");
      return 0;
    case LWS_CALLBACK_WSI_DESTROY:
      finish(w, "the connection ended");
      lws_set_opaque_user_data(wsi, NULL);
      if (w->in_connect)
        w->destroyed = 1;
      else
        wsc_free(w);
      return 0;
    default:
      return 0;
  }
}

/* ws://host:port/path (IPv6 in brackets); no TLS here. */
static int parse(dtd_wsc_t *w, const char *uri, char *err, size_t errlen) {
  const char *p;
  size_t n;
  if (strncmp(uri, "ws://", 5) != 0) {
    snprintf(err, errlen, "not a ws:// URI");
    return -1;
  }
  p = uri + 5;
  if (*p == '[') {
    const char *e = strchr(p, ']');
    if (!e) goto bad;
    n = (size_t)(e - p - 1);
    if (n >= sizeof w->host) goto bad;
    memcpy(w->host, p + 1, n);
    w->host[n] = '\0';
    p = e + 1;
  } else {
    n = strcspn(p, ":/");
    if (!n || n >= sizeof w->host) goto bad;
    memcpy(w->host, p, n);
    w->host[n] = '\0';
    p += n;
  }
  w->port = 80;
  if (*p == ':') {
    char *end;
    long v = strtol(p + 1, &end, 10);
    if (v <= 0 || v > 65535) goto bad;
    w->port = (int)v;
    p = end;
  }
  snprintf(w->path, sizeof w->path, "%s", *p ? p : "/");
  snprintf(w->hosthdr, sizeof w->hosthdr, strchr(w->host, ':') ? "[%s]:%d" : "%s:%d", w->host,
           w->port);
  return 0;
bad:
  snprintf(err, errlen, "malformed URI");
  return -1;
}

dtd_wsc_t *dtd_wsc_open(struct lws_context *ctx, struct lws_vhost *vhost, const char *ws_uri,
                        const dtd_wsc_cbs_t *cbs, char *err, size_t errlen) {
  struct lws_client_connect_info i;
  dtd_wsc_t *w = calloc(1, sizeof *w);
  if (!w) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  w->cbs = *cbs;
  if (parse(w, ws_uri, err, errlen)) {
    free(w);
    return NULL;
  }
  memset(&i, 0, sizeof i);
  i.context = ctx;
  i.vhost = vhost;
  i.address = w->host;
  i.port = w->port;
  i.path = w->path;
  i.host = w->hosthdr;
  i.local_protocol_name = "dtd-wsc";
  i.opaque_user_data = w;
  i.pwsi = &w->wsi;
  w->in_connect = 1;
  struct lws *wsi = lws_client_connect_via_info(&i);
  w->in_connect = 0;
  if (!wsi || w->destroyed || w->done) {
    snprintf(err, errlen, "could not start the connection");
    if (wsi && !w->destroyed) { /* failed but not yet freed by lws: let it go silently */
      dtd_wsc_close(w);
      return NULL;
    }
    wsc_free(w);
    return NULL;
  }
  return w;
}

int dtd_wsc_send(dtd_wsc_t *w, const char *text) {
  size_t len = strlen(text);
  struct wsc_msg *m = malloc(sizeof *m + LWS_PRE + len);
  if (!m) return -1;
  m->next = NULL;
  m->len = len;
  memcpy(m->buf + LWS_PRE, text, len);
  if (w->out_tail)
    w->out_tail->next = m;
  else
    w->out_head = m;
  w->out_tail = m;
  if (w->open && w->wsi) lws_callback_on_writable(w->wsi);
  return 0;
}

void dtd_wsc_close(dtd_wsc_t *w) {
  w->done = 1;
  if (w->wsi) lws_set_timeout(w->wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_ASYNC);
}
