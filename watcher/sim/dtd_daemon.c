/* telescope-dtd's transport: the WebSocket server on the loop, the auth
 * code check, message reassembly and the per-connection send queue. The
 * methods are dtd_methods.c. */
#include "dtd_daemon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


#define DTD_RX_MAX ((size_t)16 << 20)

struct dtd_msg {
  struct dtd_msg *next;
  size_t len;
  unsigned char buf[]; /* LWS_PRE, then the text */
};

struct pss {
  dtd_conn_t *conn;
};

/* dart-lang/sdk pkg/dtd_impl/lib/src/dart_tooling_daemon.dart,
 * _uriTokenHandler: the first path segment must be the auth code, else 403
 * "missing or invalid authentication code"; then a Cascade of the WebSocket
 * handler (any path) and the SSE handler. */
static int token_ok(const dtd_daemon_t *d, const char *uri) {
  size_t n = strlen(d->token);
  if (!n) return 1;
  return uri[0] == '/' && strncmp(uri + 1, d->token, n) == 0 &&
         (uri[1 + n] == '\0' || uri[1 + n] == '/' || uri[1 + n] == '?');
}

static int send_http(struct lws *wsi, unsigned status, const char *body) {
  unsigned char buf[LWS_PRE + 1024], *start = buf + LWS_PRE, *p = start,
                                     *end = buf + sizeof buf - 1;
  size_t blen = strlen(body);
  unsigned char bb[LWS_PRE + 256];
  if (lws_add_http_common_headers(wsi, status, "text/plain; charset=utf-8", blen, &p, end) ||
      lws_finalize_write_http_header(wsi, start, &p, end))
    return -1;
  if (blen > sizeof bb - LWS_PRE) blen = sizeof bb - LWS_PRE;
  memcpy(bb + LWS_PRE, body, blen);
  return blen && lws_write(wsi, bb + LWS_PRE, blen, LWS_WRITE_HTTP_FINAL) < 0 ? -1 : 0;
}

static dtd_conn_t *conn_new(dtd_daemon_t *d, struct lws *wsi) {
  static unsigned long serial;
  dtd_conn_t *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->wsi = wsi;
  c->d = d;
  c->serial = ++serial;
  c->streams = json_object();
  c->services = json_object();
  c->next = d->conns;
  d->conns = c;
  return c;
}

static void conn_free(dtd_conn_t *c) {
  dtd_conn_t **pp;
  for (pp = &c->d->conns; *pp; pp = &(*pp)->next)
    if (*pp == c) {
      *pp = c->next;
      break;
    }
  if (c->d->on_conn_gone) c->d->on_conn_gone(c);
  for (struct dtd_msg *m = c->out_head, *n; m; m = n) {
    n = m->next;
    free(m);
  }
  json_decref(c->streams);
  json_decref(c->services);
  free(c->rx);
  free(c);
}

static int callback_dtd(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                        size_t len) {
  struct lws_context *ctx = lws_get_context(wsi);
  dtd_daemon_t *d = ctx ? lws_context_user(ctx) : NULL;
  struct pss *pss = user;
  char uri[1024];
  switch (reason) {
    case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
      if (lws_hdr_copy(wsi, uri, sizeof uri, WSI_TOKEN_GET_URI) > 0 && token_ok(d, uri)) return 0;
      if (d->verbose) fprintf(stderr, "telescope-dtd: upgrade refused: 403\n");
      if (send_http(wsi, 403, "missing or invalid authentication code")) return -1;
      return 1;
    case LWS_CALLBACK_HTTP:
      if (lws_hdr_copy(wsi, uri, sizeof uri, WSI_TOKEN_GET_URI) <= 0 || !token_ok(d, uri)) {
        if (send_http(wsi, 403, "missing or invalid authentication code")) return -1;
      } else if (send_http(wsi, 404, "Not Found")) {
        return -1;
      }
      return lws_http_transaction_completed(wsi) ? -1 : 0;
    case LWS_CALLBACK_ESTABLISHED:
      pss->conn = conn_new(d, wsi);
      if (!pss->conn) return -1;
      if (d->verbose) fprintf(stderr, "telescope-dtd: client %lu connected\n", pss->conn->serial);
      return 0;
    case LWS_CALLBACK_RECEIVE: {
      dtd_conn_t *c = pss->conn;
      if (!c) return 0;
      if (c->rx_len + len + 1 > c->rx_cap) {
        size_t cap = c->rx_cap ? c->rx_cap : 4096;
        while (cap < c->rx_len + len + 1) cap *= 2;
        unsigned char *p = cap <= DTD_RX_MAX ? realloc(c->rx, cap) : NULL;
        if (!p) return -1;
        c->rx = p;
        c->rx_cap = cap;
      }
      memcpy(c->rx + c->rx_len, in, len);
      c->rx_len += len;
      if (lws_is_final_fragment(wsi) && !lws_remaining_packet_payload(wsi)) {
        size_t n = c->rx_len;
        c->rx[n] = '\0';
        c->rx_len = 0;
        if (c->d->on_message) c->d->on_message(c, (const char *)c->rx, n);
      }
      return 0;
    }
    case LWS_CALLBACK_SERVER_WRITEABLE: {
      dtd_conn_t *c = pss->conn;
      struct dtd_msg *m = c ? c->out_head : NULL;
      if (!m) return 0;
      c->out_head = m->next;
      if (!c->out_head) c->out_tail = NULL;
      int n = lws_write(wsi, m->buf + LWS_PRE, m->len, LWS_WRITE_TEXT);
      free(m);
      if (n < 0) return -1;
      if (c->out_head) lws_callback_on_writable(wsi);
      return 0;
    }
    case LWS_CALLBACK_CLOSED:
      if (pss->conn) {
        if (d->verbose)
          fprintf(stderr, "telescope-dtd: client %lu disconnected\n", pss->conn->serial);
        conn_free(pss->conn);
        pss->conn = NULL;
      }
      return 0;
    default:
      break;
  }
  return lws_callback_http_dummy(wsi, reason, user, in, len);
}

void dtd_send_json(dtd_conn_t *c, json_t *msg) {
  char *text = msg ? json_dumps(msg, JSON_COMPACT) : NULL;
  json_decref(msg);
  if (!text) return;
  size_t len = strlen(text);
  struct dtd_msg *m = malloc(sizeof *m + LWS_PRE + len);
  if (m) {
    m->next = NULL;
    m->len = len;
    memcpy(m->buf + LWS_PRE, text, len);
    if (c->out_tail)
      c->out_tail->next = m;
    else
      c->out_head = m;
    c->out_tail = m;
    lws_callback_on_writable(c->wsi);
  }
  free(text);
}

void dtd_reply(dtd_conn_t *c, json_t *req, json_t *result) {
  json_t *id = json_object_get(req, "id");
  if (!id || !c) { /* a notification gets nothing */
    json_decref(result);
    return;
  }
  dtd_send_json(c, json_pack("{s:s, s:o, s:O}", "jsonrpc", "2.0", "result", result, "id", id));
}

void dtd_reply_error(dtd_conn_t *c, json_t *req, int code, const char *message, json_t *data) {
  json_t *id = json_object_get(req, "id");
  if (!id || !c) {
    json_decref(data);
    return;
  }
  if (!data) data = json_object();
  if (json_is_object(data) && !json_object_get(data, "request"))
    json_object_set(data, "request", req);
  dtd_send_json(c, json_pack("{s:s, s:{s:i, s:s, s:o}, s:O}", "jsonrpc", "2.0", "error", "code",
                             code, "message", message, "data", data, "id", id));
}

void dtd_notify(dtd_daemon_t *d, const char *stream, const char *kind, json_t *data, int all) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  json_int_t ms = (json_int_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
  for (dtd_conn_t *c = d->conns; c; c = c->next) {
    if (!all && !json_object_get(c->streams, stream)) continue;
    dtd_send_json(c, json_pack("{s:s, s:s, s:{s:s, s:s, s:O, s:I}}", "jsonrpc", "2.0", "method",
                               "streamNotify", "params", "streamId", stream, "eventKind", kind,
                               "eventData", data, "timestamp", ms));
  }
  json_decref(data);
}

static const struct lws_protocols protocols[] = {
    {"dtd", callback_dtd, sizeof(struct pss), 0, 0, NULL, 0},
    DTD_WSC_PROTOCOL,
    {NULL, NULL, 0, 0, 0, NULL, 0}};

static void lws_log_to_stderr(int level, const char *line) {
  (void)level;
  fprintf(stderr, "telescope-dtd: lws: %s", line);
}

int dtd_daemon_start(dtd_daemon_t *d) {
  struct lws_context_creation_info info;
  void *loops[1] = {d->loop};
  lws_set_log_level(d->verbose ? (LLL_ERR | LLL_WARN | LLL_NOTICE) : LLL_ERR, lws_log_to_stderr);
  memset(&info, 0, sizeof info);
  info.options = LWS_SERVER_OPTION_LIBUV | LWS_SERVER_OPTION_EXPLICIT_VHOSTS;
  info.foreign_loops = loops;
  info.user = d;
  info.port = CONTEXT_PORT_NO_LISTEN;
  d->ctx = lws_create_context(&info);
  if (!d->ctx) {
    fprintf(stderr, "telescope-dtd: cannot create the WebSocket context\n");
    return -1;
  }
  memset(&info, 0, sizeof info);
  info.port = d->port;
  info.iface = d->host;
  info.protocols = protocols;
  info.vhost_name = "dtd";
  info.options = LWS_SERVER_OPTION_LIBUV;
  d->vhost = lws_create_vhost(d->ctx, &info);
  d->port = d->vhost ? lws_get_vhost_listen_port(d->vhost) : -1;
  if (d->port <= 0) {
    fprintf(stderr, "telescope-dtd: cannot listen on %s\n", d->host);
    return -1;
  }
  return 0;
}

void dtd_daemon_uri(const dtd_daemon_t *d, char *out, size_t n) {
  snprintf(out, n, strchr(d->host, ':') ? "ws://[%s]:%d%s%s" : "ws://%s:%d%s%s", d->host, d->port,
           d->token[0] ? "/" : "", d->token);
}

void dtd_daemon_stop(dtd_daemon_t *d) {
  if (d->on_stop) d->on_stop(d);
  if (d->ctx) {
    lws_context_destroy(d->ctx);
    d->ctx = NULL;
  }
}
