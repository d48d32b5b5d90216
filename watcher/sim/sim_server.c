#include "sim_server.h"

#include <libwebsockets.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "sim_log.h"

/* A queued outgoing text frame, with lws's LWS_PRE headroom in front. */
struct sim_msg {
  struct sim_msg *next;
  size_t len;
  unsigned char buf[];
};

/* Per-wsi user space; lws zeroes it. Only WebSocket wsis get a conn. */
struct pss {
  sim_conn_t *conn;
};

/* Messages bigger than this close the connection (1009, too big). */
#define SIM_RX_MAX ((size_t)64 << 20)

static const char *auth_body(const sim_t *s) {
  return s->cfg.mode == SIM_MODE_WEB ? "Incorrect auth token"
                                     : "missing or invalid authentication code";
}

/* Writes a complete small HTTP response: status, text body, optional
 * Location. Returns 0 or -1. */
static int send_http(struct lws *wsi, unsigned status, const char *body, const char *location) {
  unsigned char buf[LWS_PRE + 2048];
  unsigned char *start = buf + LWS_PRE, *p = start, *end = buf + sizeof buf - 1;
  size_t blen = strlen(body);

  if (lws_add_http_common_headers(wsi, status, "text/plain; charset=utf-8", blen, &p, end))
    return -1;
  if (location &&
      lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_LOCATION, (const unsigned char *)location,
                                   (int)strlen(location), &p, end))
    return -1;
  if (lws_finalize_write_http_header(wsi, start, &p, end)) return -1;
  if (blen) {
    unsigned char body_buf[LWS_PRE + 512];
    if (blen > sizeof body_buf - LWS_PRE) blen = sizeof body_buf - LWS_PRE;
    memcpy(body_buf + LWS_PRE, body, blen);
    if (lws_write(wsi, body_buf + LWS_PRE, blen, LWS_WRITE_HTTP_FINAL) < 0) return -1;
  }
  return 0;
}

/* The raw VM accepts no Origin, or a loopback one, or its own host:port. */
static int origin_allowed(const sim_t *s, const char *origin) {
  const char *h = strstr(origin, "://");
  char host[256];
  size_t n;

  if (!*origin) return 1;
  h = h ? h + 3 : origin;
  if (*h == '[') {
    const char *e = strchr(h, ']');
    if (!e) return 0;
    n = (size_t)(e - h + 1);
  } else {
    n = strcspn(h, ":/");
  }
  if (n >= sizeof host) return 0;
  memcpy(host, h, n);
  host[n] = '\0';
  if (!strcasecmp(host, "localhost") || !strcmp(host, "127.0.0.1") || !strcmp(host, "[::1]") ||
      !strcmp(host, s->cfg.host))
    return 1;
  return 0;
}

/* 1 when uri's first path segment is token. */
static int token_matches(const char *uri, const char *token) {
  size_t tlen = strlen(token);
  return uri[0] == '/' && strncmp(uri + 1, token, tlen) == 0 &&
         (uri[1 + tlen] == '\0' || uri[1 + tlen] == '/' || uri[1 + tlen] == '?');
}

/* DWDS's answer to every request once DDS has control (dart-lang/webdev
 * dwds/lib/src/services/debug_service.dart, _wrapHandler). */
static char dwds_taken[512];

/* Decides what a request gets, in the order the real servers check:
 * (vm) Origin, method, token, path. Returns 0 to go ahead (an upgrade), or
 * an HTTP status with *body and maybe *location set. *dds says the request
 * came in through the simulated DDS endpoint (its own token). */
static unsigned check_request(sim_t *s, struct lws *wsi, int upgrade, const char **body,
                              char *location, size_t loc_size, int *dds) {
  char uri[1024], origin[512];
  size_t tlen = strlen(s->token);
  const char *rest;

  *body = "";
  *dds = 0;
  if (lws_hdr_copy(wsi, uri, sizeof uri, WSI_TOKEN_GET_URI) <= 0) {
    *body = "method not allowed";
    return 405;
  }
  if (s->dds.attached && token_matches(uri, s->dds.token)) {
    /* DDS: no Origin check, any path after the token upgrades (dart-lang/sdk
     * pkg/dds/lib/src/dds_impl.dart, _authCodeMiddleware then the shelf
     * websocket handler). */
    *dds = 1;
    if (upgrade) return 0;
    *body = "telescope-sim: simulated Dart Development Service\n";
    return 200;
  }
  if (s->dds.attached && s->cfg.mode == SIM_MODE_WEB) {
    snprintf(dwds_taken, sizeof dwds_taken,
             "Cannot connect directly to the VM service as a Dart Development Service (DDS) "
             "instance has taken control and can be found at %s.",
             s->dds.http_uri);
    *body = dwds_taken;
    return 403;
  }
  if (s->cfg.mode == SIM_MODE_VM &&
      lws_hdr_copy(wsi, origin, sizeof origin, WSI_TOKEN_ORIGIN) > 0 &&
      !origin_allowed(s, origin)) {
    *body = "forbidden origin";
    return 403;
  }
  if (uri[0] != '/' || strncmp(uri + 1, s->token, tlen) != 0 ||
      (uri[1 + tlen] != '\0' && uri[1 + tlen] != '/' && uri[1 + tlen] != '?')) {
    *body = auth_body(s);
    return 403;
  }
  rest = uri + 1 + tlen;
  if (upgrade) {
    /* The raw VM redirects /<token> to /<token>/ and upgrades only on
     * exactly /<token>/ws, or, once DDS is attached, redirects the upgrade to
     * DDS (dart-lang/sdk sdk/lib/_internal/vm/bin/vmservice_server.dart,
     * _checkAuthTokenAndGetPath and _requestHandler). DDS's and DWDS's
     * handlers take any path after the token. */
    if (s->cfg.mode == SIM_MODE_VM && (rest[0] == '\0' || rest[0] == '?')) {
      snprintf(location, loc_size, "/%s/", s->token);
      return 302;
    }
    if (s->cfg.mode == SIM_MODE_VM && strcmp(rest, "/ws") != 0) {
      *body = "not found";
      return 404;
    }
    if (s->cfg.mode == SIM_MODE_VM && s->dds.attached) {
      snprintf(location, loc_size, "%s", s->dds.http_uri);
      return 302;
    }
    return 0;
  }
  if (rest[0] == '\0' && s->cfg.mode != SIM_MODE_WEB) {
    snprintf(location, loc_size, "/%s/", s->token);
    *body = "";
    return 302;
  }
  if (rest[0] == '\0' || !strcmp(rest, "/")) {
    *body =
        "telescope-sim: a simulated Dart VM service; connect a WebSocket "
        "to the ws URI\n";
    return 200;
  }
  *body = "not found";
  return 404;
}

static sim_conn_t *conn_new(sim_t *s, struct lws *wsi) {
  sim_conn_t *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->wsi = wsi;
  c->serial = ++s->srv.next_serial;
  c->streams = json_object();
  c->next = s->srv.conns;
  s->srv.conns = c;
  s->srv.n_conns++;
  return c;
}

static void conn_free(sim_t *s, sim_conn_t *c) {
  sim_conn_t **pp;
  struct sim_msg *m, *next;

  for (pp = &s->srv.conns; *pp; pp = &(*pp)->next)
    if (*pp == c) {
      *pp = c->next;
      s->srv.n_conns--;
      break;
    }
  for (m = c->out_head; m; m = next) {
    next = m->next;
    free(m);
  }
  json_decref(c->streams);
  free(c->rx);
  free(c);
}

static int rx_append(sim_conn_t *c, const void *in, size_t len) {
  if (c->rx_len + len > SIM_RX_MAX) return -1;
  if (c->rx_len + len + 1 > c->rx_cap) {
    size_t cap = c->rx_cap ? c->rx_cap : 4096;
    unsigned char *p;
    while (cap < c->rx_len + len + 1) cap *= 2;
    p = realloc(c->rx, cap);
    if (!p) return -1;
    c->rx = p;
    c->rx_cap = cap;
  }
  memcpy(c->rx + c->rx_len, in, len);
  c->rx_len += len;
  c->rx[c->rx_len] = '\0';
  return 0;
}

/* write-gap: a relay that passes one message on at a time, gap_ms apart
 * (a loaded VM service or DDS). The messages keep their order; only the
 * time between them grows. */
static void on_gap_end(uv_timer_t *t) {
  sim_t *s = (sim_t *)((char *)t - offsetof(sim_t, srv.gap_timer));
  sim_conn_t *c;

  for (c = s->srv.conns; c; c = c->next)
    if (c->out_head || c->close_code) lws_callback_on_writable(c->wsi);
}

static void gap_begin(sim_t *s) {
  if (!uv_is_active((uv_handle_t *)&s->srv.gap_timer))
    uv_timer_start(&s->srv.gap_timer, on_gap_end, (uint64_t)s->srv.gap_ms, 0);
}

void sim_server_set_gap(sim_t *s, int ms) {
  s->srv.gap_ms = ms;
  if (ms <= 0 && uv_is_active((uv_handle_t *)&s->srv.gap_timer)) {
    uv_timer_stop(&s->srv.gap_timer);
    on_gap_end(&s->srv.gap_timer);
  }
}

static int on_writeable(sim_t *s, sim_conn_t *c) {
  struct sim_msg *m = c->out_head;

  if (c->dropping) return -1;
  if (m) {
    int n;
    c->out_head = m->next;
    if (!c->out_head) c->out_tail = NULL;
    c->out_bytes -= m->len;
    n = lws_write(c->wsi, m->buf + LWS_PRE, m->len, LWS_WRITE_TEXT);
    free(m);
    if (n < 0) return -1;
    if (!c->out_head && !c->close_code) return 0;
    if (s->srv.gap_ms > 0)
      gap_begin(s);
    else
      lws_callback_on_writable(c->wsi);
    return 0;
  }
  if (c->close_code) {
    lws_close_reason(c->wsi, (enum lws_close_status)c->close_code, NULL, 0);
    return -1;
  }
  return 0;
}

static int callback_vmservice(struct lws *wsi, enum lws_callback_reasons reason, void *user,
                              void *in, size_t len) {
  struct lws_context *ctx = lws_get_context(wsi);
  sim_t *s = ctx ? lws_context_user(ctx) : NULL;
  struct pss *pss = user;
  const char *body;
  char location[256];
  unsigned status;
  int dds;

  switch (reason) {
    case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
      status = check_request(s, wsi, 1, &body, location, sizeof location, &dds);
      if (!status) return 0;
      sim_log("upgrade refused: HTTP %u %s", status, body);
      if (send_http(wsi, status, body, status == 302 ? location : NULL)) return -1;
      return 1;

    case LWS_CALLBACK_HTTP:
      status = check_request(s, wsi, 0, &body, location, sizeof location, &dds);
      if (send_http(wsi, status, body, status == 302 ? location : NULL)) return -1;
      if (lws_http_transaction_completed(wsi)) return -1;
      return 0;

    case LWS_CALLBACK_ESTABLISHED:
      pss->conn = conn_new(s, wsi);
      if (!pss->conn) return -1;
      {
        /* The headers are still there: the token says which endpoint. */
        char uri[1024];
        pss->conn->dds = s->dds.attached &&
                         lws_hdr_copy(wsi, uri, sizeof uri, WSI_TOKEN_GET_URI) > 0 &&
                         token_matches(uri, s->dds.token);
      }
      sim_log("connection %llu open", (unsigned long long)pss->conn->serial);
      return 0;

    case LWS_CALLBACK_RECEIVE: {
      sim_conn_t *c = pss->conn;
      if (!c || c->dropping) return 0;
      if (rx_append(c, in, len)) {
        sim_server_close_conn(c, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE);
        return 0;
      }
      if (lws_is_final_fragment(wsi) && !lws_remaining_packet_payload(wsi)) {
        int binary = lws_frame_is_binary(wsi);
        size_t n = c->rx_len;
        c->rx_len = 0;
        if (!c->close_code) s->up.message(s, c, (const char *)c->rx, n, binary);
        if (c->close_code && !c->out_head) {
          lws_close_reason(wsi, (enum lws_close_status)c->close_code, NULL, 0);
          return -1;
        }
      }
      return 0;
    }

    case LWS_CALLBACK_SERVER_WRITEABLE:
      if (!pss->conn) return 0;
      return on_writeable(s, pss->conn);

    case LWS_CALLBACK_CLOSED:
      if (pss->conn) {
        sim_log("connection %llu closed", (unsigned long long)pss->conn->serial);
        s->up.conn_closed(s, pss->conn);
        conn_free(s, pss->conn);
        pss->conn = NULL;
      }
      return 0;

    default:
      break;
  }
  return lws_callback_http_dummy(wsi, reason, user, in, len);
}

/* One protocol serves HTTP and WebSocket alike: lws gives a request without
 * Sec-WebSocket-Protocol to protocols[0]. The raw VM selects the subprotocol
 * implicit-redirect when a client offers one; DDS and DWDS have none (lws
 * then hangs up where they would answer 101 without one: the client fails
 * either way). */
static const struct lws_protocols protocols[] = {
    {"vmservice", callback_vmservice, sizeof(struct pss), 0, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0}};
static const struct lws_protocols protocols_vm[] = {
    {"vmservice", callback_vmservice, sizeof(struct pss), 0, 0, NULL, 0},
    {"implicit-redirect", callback_vmservice, sizeof(struct pss), 0, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0}};

static void lws_log_to_sim(int level, const char *line) {
  (void)level;
  fprintf(stderr, "telescope-sim: lws: %s", line);
}

int sim_server_init(sim_t *s) {
  struct lws_context_creation_info info;
  void *loops[1];

  lws_set_log_level(s->cfg.verbose ? (LLL_ERR | LLL_WARN | LLL_NOTICE) : LLL_ERR, lws_log_to_sim);
  memset(&info, 0, sizeof info);
  loops[0] = s->loop;
  info.options = LWS_SERVER_OPTION_LIBUV | LWS_SERVER_OPTION_EXPLICIT_VHOSTS;
  info.foreign_loops = loops;
  info.user = s;
  info.port = CONTEXT_PORT_NO_LISTEN;
  /* lws drains a partly sent message from its buffer at most this much per
   * writable event; at the 4 KiB default a 64 MiB reply took seconds. */
  info.pt_serv_buf_size = 1 << 20;
  if (uv_timer_init(s->loop, &s->srv.gap_timer)) return -1;
  s->srv.ctx = lws_create_context(&info);
  if (!s->srv.ctx) {
    fprintf(stderr,
            "telescope-sim: cannot create the WebSocket context "
            "(is libwebsockets-evlib-uv installed?)\n");
    return -1;
  }
  memset(&info, 0, sizeof info);
  info.port = s->cfg.port;
  info.iface = s->cfg.host;
  info.protocols = s->cfg.mode == SIM_MODE_VM ? protocols_vm : protocols;
  info.vhost_name = "vmservice";
  info.options = LWS_SERVER_OPTION_LIBUV;
  s->srv.vhost = lws_create_vhost(s->srv.ctx, &info);
  if (!s->srv.vhost) {
    fprintf(stderr, "telescope-sim: cannot listen on %s:%d\n", s->cfg.host, s->cfg.port);
    return -1;
  }
  s->srv.port = lws_get_vhost_listen_port(s->srv.vhost);
  if (s->srv.port <= 0) { /* lws may make a vhost that listens nowhere */
    fprintf(stderr, "telescope-sim: cannot listen on %s:%d\n", s->cfg.host, s->cfg.port);
    return -1;
  }
  return 0;
}

void sim_server_close(sim_t *s) {
  if (s->srv.gap_timer.loop && !uv_is_closing((uv_handle_t *)&s->srv.gap_timer))
    uv_close((uv_handle_t *)&s->srv.gap_timer, NULL);
  if (s->srv.ctx) {
    lws_context_destroy(s->srv.ctx);
    s->srv.ctx = NULL;
  }
}

void sim_server_send(sim_conn_t *c, const char *text, size_t len) {
  struct sim_msg *m;

  if (c->close_code || c->dropping) return;
  m = malloc(sizeof *m + LWS_PRE + len);
  if (!m) return;
  m->next = NULL;
  m->len = len;
  memcpy(m->buf + LWS_PRE, text, len);
  if (c->out_tail)
    c->out_tail->next = m;
  else
    c->out_head = m;
  c->out_tail = m;
  c->out_bytes += len;
  sim_t *s = lws_context_user(lws_get_context(c->wsi));
  if (!uv_is_active((uv_handle_t *)&s->srv.gap_timer)) lws_callback_on_writable(c->wsi);
}

void sim_server_send_json(sim_conn_t *c, json_t *msg) {
  char *text;

  if (!msg) return;
  text = json_dumps(msg, JSON_COMPACT);
  json_decref(msg);
  if (!text) return;
  sim_server_send(c, text, strlen(text));
  free(text);
}

void sim_server_close_conn(sim_conn_t *c, int code) {
  if (c->close_code) return;
  c->close_code = code;
  lws_callback_on_writable(c->wsi);
}

void sim_server_drop_all(sim_t *s) {
  sim_conn_t *c;

  for (c = s->srv.conns; c; c = c->next) {
    int fd = (int)lws_get_socket_fd(c->wsi);
    c->dropping = 1;
    /* No close frame: the peer sees the TCP stream end, as when an app dies. */
    if (fd >= 0) shutdown(fd, SHUT_RDWR);
    lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
  }
}
