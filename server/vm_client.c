#include "vm_client.h"
#include "container_of.h"

#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "vm_request.h"
#include "vm_uri.h"
#include "vm_wire.h"


#define BACKOFF_MIN_MS 50
#define BACKOFF_MAX_MS 1000
/* Hand-overs followed in a row before giving up (VM -> DDS is one). */
#define MAX_HOPS 4
/* Enough of a 403 body to read DWDS's "can be found at <uri>." */
#define PROBE_BODY_MAX 1024

/* ---- the client ---- */

typedef enum { CONN_IDLE, CONN_CONNECTING, CONN_OPEN } conn_state_t;


struct vm_client {
  uv_loop_t *loop;
  vm_client_options_t opt;
  struct lws_context *ctx;
  struct lws *wsi;
  conn_state_t state;
  uv_timer_t connect_timer; /* connect after backoff; also the deferred destroy */
  uint64_t next_attempt;    /* loop time before which we do not dial again */
  int backoff_ms;
  vm_requests_t rq; /* pending and unwritten requests */
  vm_rxbuf_t rx;
  int closing;
  int ctx_destroying; /* the first lws_context_destroy call was made */
  int destroy_polls;  /* 1 ms turns spent waiting for lws to finish */
  int open_handles;   /* ours: connect_timer (the requests count theirs) */
  void (*close_done)(void *arg);
  void *close_arg;

  /* Following DDS. follow: the ws URI to dial next instead of get_uri's
   * (set by a 302, a DWDS 403 or the DartDevelopmentServiceConnected event);
   * moved: the event came, so the close that follows is a hand-over. */
  vm_uri_t dial; /* what the current attempt dialled */
  char follow[VM_URI_MAX];
  char follow_err[256]; /* a hand-over we refused (non-loopback): the reason */
  int moved;
  int hops;
  /* A socket that closed with no word of why is dialled once more at the
   * same URI before anyone hears "disconnected" (see connection_lost). */
  int recheck;
  char recheck_why[200]; /* how it closed, for the DISCONNECTED that may follow */
  /* After a 403 the upgrade gives no body; one plain GET of the same path
   * reads it (DWDS names the DDS URI there; the VM and DDS say why). */
  struct lws *probe_wsi;
  int probing;
  unsigned probe_status;
  char probe_body[PROBE_BODY_MAX];
  size_t probe_len;
};

/* lws_get_opaque_user_data of the probe's wsi. */
static char probe_tag;

static void client_maybe_free(vm_client_t *c) {
  if (!c->closing || c->open_handles > 0 || c->rq.open > 0) return;
  void (*done)(void *) = c->close_done;
  void *arg = c->close_arg;
  vm_rxbuf_free(&c->rx);
  free(c);
  if (done) done(arg);
}

/* A request's handle closed (vm_requests_t.released). */
static void on_request_released(void *arg) { client_maybe_free(arg); }

static void schedule_connect(vm_client_t *c);
static int follow_set(vm_client_t *c, const char *target, const char *why);

/* The token of the URI last dialled. lws's log callback has no user
 * pointer, and its client logs print the bare request path ("GET /TOKEN=/ws"),
 * which log_redact cannot recognise without a scheme: scrub it here. */
static char lws_log_secret[VM_URI_MAX];

static void lws_log_remember_path(const char *path) {
  const char *b = path[0] == '/' ? path + 1 : path;
  size_t n = strlen(b);
  if (n >= 3 && strcmp(b + n - 3, "/ws") == 0) n -= 3;
  if (n >= sizeof lws_log_secret || (n == 2 && memcmp(b, "ws", 2) == 0)) n = 0;
  memcpy(lws_log_secret, b, n);
  lws_log_secret[n] = '\0';
}

static void lws_log_emit(int level, const char *line) {
  char clean[2048];
  size_t o = 0, slen = strlen(lws_log_secret);
  for (const char *p = line; *p && o + 1 < sizeof clean;) {
    if (slen && strncmp(p, lws_log_secret, slen) == 0) {
      o += (size_t)snprintf(clean + o, sizeof clean - o, "\xe2\x80\xa6redacted\xe2\x80\xa6");
      if (o >= sizeof clean) o = sizeof clean - 1;
      p += slen;
    } else {
      clean[o++] = *p++;
    }
  }
  while (o && (clean[o - 1] == '\n' || clean[o - 1] == '\r')) o--;
  clean[o] = '\0';
  log_debug("lws: %s", clean); /* log_msg redacts any full URI as well */
}

static void handle_message(vm_client_t *c) {
  json_error_t jerr;
  json_t *msg = json_loadb(c->rx.buf, c->rx.len, 0, &jerr);
  if (!msg) {
    vm_idscan_t s = {0};
    vm_idscan_feed(&s, c->rx.buf, c->rx.len);
    vm_request_t *r = s.found ? vm_requests_find(&c->rq, s.id) : NULL;
    log_warn("vm: ignoring a malformed message from the app (%zu bytes): %s", c->rx.len, jerr.text);
    if (r) {
      char detail[200];
      snprintf(detail, sizeof detail, "the app's reply to %s was not valid JSON: %.100s", r->method,
               jerr.text);
      vm_request_fail_soon(r, DIAG_NONE, RPC_PARSE_ERROR, detail);
    }
    return;
  }
  char id[40];
  switch (vm_msg_classify(msg, id, sizeof id)) {
    case VM_MSG_EVENT: {
      json_t *params = json_object_get(msg, "params");
      json_t *ev = json_object_get(params, "event");
      const char *kind = json_string_value(json_object_get(ev, "kind"));
      const char *to = json_string_value(json_object_get(ev, "uri"));
      if (kind && to && strcmp(kind, "DartDevelopmentServiceConnected") == 0) {
        /* Sent to every direct client, subscribed or not, right before the VM
         * closes it (dart-lang/sdk sdk/lib/vmservice/vmservice.dart,
         * _sendDdsConnectedEvent); DWDS sends it only to Service listeners
         * (dwds/lib/src/services/proxy_service.dart), so there a silent close
         * is checked by connection_lost. The close that follows is a
         * hand-over. */
        if (follow_set(c, to, "Dart Development Service took the VM service over") == 0)
          c->moved = 1;
        else
          log_warn("vm: %s", c->follow_err);
      }
      if (c->opt.on_event)
        c->opt.on_event(c->opt.arg, json_string_value(json_object_get(params, "streamId")),
                        json_object_get(params, "event"));
      break;
    }
    case VM_MSG_REPLY: {
      vm_request_t *r = vm_requests_find(&c->rq, id);
      if (!r) {
        log_debug("vm: reply for unknown or expired id %s dropped", id);
        break;
      }
      vm_client_reply_t reply = {0};
      json_t *error = json_object_get(msg, "error");
      char detail[640];
      if (error) {
        json_t *code = json_object_get(error, "code");
        const char *m = json_string_value(json_object_get(error, "message"));
        const char *d =
            json_string_value(json_object_get(json_object_get(error, "data"), "details"));
        reply.rpc_code = json_is_integer(code) ? (int)json_integer_value(code) : RPC_INTERNAL_ERROR;
        reply.error = error;
        char raw[512];
        snprintf(raw, sizeof raw, "%s failed: %d %.100s%s%.300s", r->method, reply.rpc_code,
                 m ? m : "(no message)", d ? ": " : "", d ? d : "");
        /* The app's own text may quote a VM-service URI (DDS does): details
         * reach the agent, so they pass the same redactor as logs. */
        log_redact(raw, detail, sizeof detail);
        reply.detail = detail;
      } else {
        reply.result = json_object_get(msg, "result");
        reply.detail = "ok";
      }
      vm_request_finish(r, &reply);
      break;
    }
    case VM_MSG_OTHER:
      log_debug("vm: ignoring a message that is neither a reply nor an event");
      break;
  }
  json_decref(msg);
}

static void handle_oversize(vm_client_t *c) {
  vm_request_t *r = c->rx.scan.found ? vm_requests_find(&c->rq, c->rx.scan.id) : NULL;
  log_warn("vm: dropped a %zu-byte message from the app (limit %u bytes)", c->rx.total,
           VM_CLIENT_MAX_MESSAGE);
  if (r) {
    char detail[200];
    snprintf(detail, sizeof detail,
             "the app's reply to %s was %zu bytes, over the %u MiB limit; discarded", r->method,
             c->rx.total, VM_CLIENT_MAX_MESSAGE >> 20);
    vm_request_fail_soon(r, DIAG_NONE, RPC_INTERNAL_ERROR, detail);
  }
}

static void connection_lost(vm_client_t *c, diag_code_t diag, const char *detail) {
  int was_open = c->state == CONN_OPEN;
  c->wsi = NULL;
  c->state = CONN_IDLE;
  vm_rxbuf_reset(&c->rx);
  if (c->moved && c->follow[0]) {
    /* DDS took over: what the VM already had may or may not have run, so
     * those fail; what was never written goes to DDS, at once. */
    c->moved = 0;
    vm_requests_fail_written_soon(&c->rq, "Dart Development Service took the VM service over while the call "
                         "was in flight; it may have run");
    c->next_attempt = 0;
    if (c->opt.on_state && !c->closing)
      c->opt.on_state(c->opt.arg, VM_CLIENT_MOVED, DIAG_NOT_CONNECTED,
                      "Dart Development Service took the VM service over");
    schedule_connect(c);
    return;
  }
  c->moved = 0;
  if (was_open && !c->closing && !c->recheck && c->dial.ws[0]) {
    /* Closed with no word of why. DWDS closes its other clients when DDS
     * takes over and tells only those listening on the Service stream
     * (dart-lang/webdev dwds/lib/src/services/proxy_service.dart
     * yieldControlToDDS, debug_service.dart handleConnection), and a socket
     * can drop while the VM lives on. So the same URI is dialled once more,
     * at once: DWDS's 403 then names DDS (followed), the same VM answering
     * is a dropped socket (the app is unchanged: MOVED, not DISCONNECTED),
     * and a refusal is the VM gone. */
    c->recheck = 1;
    snprintf(c->recheck_why, sizeof c->recheck_why, "%s", detail);
    vm_requests_fail_written_soon(&c->rq, "the connection to the VM service dropped while the call was in "
                         "flight; it may have run");
    snprintf(c->follow, sizeof c->follow, "%s", c->dial.ws);
    c->hops = 0;
    c->next_attempt = 0;
    log_info("vm: %s; dialling the same URI once more", detail);
    schedule_connect(c);
    return;
  }
  char why[400];
  if (c->recheck) {
    c->recheck = 0;
    snprintf(why, sizeof why, "%s; dialling it again failed: %s", c->recheck_why, detail);
    detail = why;
  }
  c->follow[0] = '\0';
  vm_requests_fail_all_soon(&c->rq, diag, detail);
  if (c->opt.on_state && !c->closing)
    c->opt.on_state(c->opt.arg, VM_CLIENT_DISCONNECTED, diag, detail);
}

/* Takes target (a Location, an event's uri, a 403's "found at") as the next
 * URI to dial. A relative Location is resolved against the URI dialled.
 * Returns 0, or -1 with c->follow_err set (refused: not loopback, malformed,
 * or too many hops). */
static int follow_set(vm_client_t *c, const char *target, const char *why) {
  char abs[VM_URI_MAX], err[200];
  vm_uri_t u;
  if (target[0] == '/')
    snprintf(abs, sizeof abs, "%s://%s%s%s:%d%s", c->dial.secure ? "wss" : "ws",
             strchr(c->dial.host, ':') ? "[" : "", c->dial.host,
             strchr(c->dial.host, ':') ? "]" : "", c->dial.port, target);
  else
    snprintf(abs, sizeof abs, "%s", target);
  if (++c->hops > MAX_HOPS) {
    snprintf(c->follow_err, sizeof c->follow_err,
             "%s: more than %d hand-overs in a row; giving up", why, MAX_HOPS);
    return -1;
  }
  vm_uri_status_t st = vm_uri_parse(abs, c->opt.allow_remote, &u, err, sizeof err);
  if (st != VM_URI_OK) {
    snprintf(c->follow_err, sizeof c->follow_err, "%s, but refused: %s", why, err);
    return -1;
  }
  snprintf(c->follow, sizeof c->follow, "%s", u.ws);
  c->follow_err[0] = '\0';
  log_info("vm: %s; following it", why);
  return 0;
}

/* After a failed attempt that named where to go: dial there at once, keeping
 * every request. */
static void follow_now(vm_client_t *c) {
  c->wsi = NULL;
  c->state = CONN_IDLE;
  c->next_attempt = 0;
  schedule_connect(c);
}

static void attempt_failed(vm_client_t *c, diag_code_t diag, const char *detail) {
  c->backoff_ms = c->backoff_ms ? c->backoff_ms * 2 : BACKOFF_MIN_MS;
  if (c->backoff_ms > BACKOFF_MAX_MS) c->backoff_ms = BACKOFF_MAX_MS;
  c->next_attempt = uv_now(c->loop) + (uint64_t)c->backoff_ms;
  c->hops = 0;
  connection_lost(c, diag, detail);
}

static const char DWDS_FOUND_AT[] = "can be found at ";

/* The 403's body has been read (or could not be). DWDS's names DDS
 * (dart-lang/webdev dwds/lib/src/services/debug_service.dart, _wrapHandler:
 * "Cannot connect directly to the VM service as a Dart Development Service
 * (DDS) instance has taken control and can be found at $_ddsUri."); the VM
 * and DDS say "missing or invalid authentication code", DWDS "Incorrect auth
 * token" for a wrong token. */
static void probe_done(vm_client_t *c) {
  char detail[400], said[200];
  if (!c->probing) return;
  c->probing = 0;
  c->probe_wsi = NULL;
  c->probe_body[c->probe_len] = '\0';
  const char *at = strstr(c->probe_body, DWDS_FOUND_AT);
  if (at && strstr(c->probe_body, "(DDS)")) {
    char target[VM_URI_MAX];
    at += sizeof DWDS_FOUND_AT - 1;
    size_t n = strcspn(at, " \t\r\n");
    if (n >= sizeof target) n = sizeof target - 1;
    memcpy(target, at, n);
    target[n] = '\0';
    while (n && (target[n - 1] == '.')) target[--n] = '\0'; /* the sentence's full stop */
    if (follow_set(c, target,
                   "the web debug service (DWDS) answered 403: a Dart Development Service "
                   "has taken control") == 0) {
      follow_now(c);
      return;
    }
    attempt_failed(c, DIAG_CONNECTION_REJECTED, c->follow_err);
    return;
  }
  /* One line of what the server said, through the redactor (a URI in it
   * could carry a token). */
  size_t n = strcspn(c->probe_body, "\r\n");
  if (n > 150) n = 150;
  char raw[200];
  snprintf(raw, sizeof raw, "%.*s", (int)n, c->probe_body);
  log_redact(raw, said, sizeof said);
  int token = strstr(said, "authentication code") || strstr(said, "auth token");
  if (token)
    snprintf(detail, sizeof detail,
             "the VM service refused the WebSocket upgrade (HTTP 403: %s): the token in the URI "
             "is wrong or stale (the app restarted?)",
             said);
  else if (said[0])
    snprintf(detail, sizeof detail, "the VM service refused the WebSocket upgrade (HTTP 403: %s)",
             said);
  else
    snprintf(detail, sizeof detail,
             "the VM service refused the WebSocket upgrade (HTTP 403): wrong token or not a VM "
             "service");
  attempt_failed(c, DIAG_CONNECTION_REJECTED, detail);
}

/* Reads the body of the 403 with a plain GET of the same URI. 0 when the
 * probe is under way (state stays CONNECTING; pending requests wait). */
static int probe_start(vm_client_t *c) {
  char hosthdr[300];
  struct lws_client_connect_info i;
  if (strchr(c->dial.host, ':'))
    snprintf(hosthdr, sizeof hosthdr, "[%s]:%d", c->dial.host, c->dial.port);
  else
    snprintf(hosthdr, sizeof hosthdr, "%s:%d", c->dial.host, c->dial.port);
  memset(&i, 0, sizeof i);
  i.context = c->ctx;
  i.address = c->dial.host;
  i.port = c->dial.port;
  i.path = c->dial.path;
  i.host = hosthdr;
  i.method = "GET";
  i.local_protocol_name = "telescope-vm";
  i.ssl_connection = c->dial.secure ? LCCSCF_USE_SSL : 0;
  i.opaque_user_data = &probe_tag;
  i.pwsi = &c->probe_wsi;
  c->probing = 1;
  c->probe_len = 0;
  c->probe_status = 0;
  if (!lws_client_connect_via_info(&i)) {
    if (c->probing) {
      c->probing = 0;
      c->probe_wsi = NULL;
    }
    return -1;
  }
  return 0;
}

static int callback_vm(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                       size_t len) {
  struct lws_context *ctx = lws_get_context(wsi);
  vm_client_t *c = ctx ? lws_context_user(ctx) : NULL;
  if (!c) return 0;
  if (log_get_level() >= LOG_TRACE)
    log_msg(LOG_TRACE, "vm: lws reason %d wsi %p ours %p state %d", (int)reason, (void *)wsi,
            (void *)c->wsi, (int)c->state);
  if (lws_get_opaque_user_data(wsi) == &probe_tag) {
    /* The plain GET that reads a 403's body (probe_start). */
    switch (reason) {
      case LWS_CALLBACK_ESTABLISHED_CLIENT_HTTP:
        c->probe_status = lws_http_client_http_response(wsi);
        break;
      case LWS_CALLBACK_RECEIVE_CLIENT_HTTP: {
        char buf[LWS_PRE + 1024], *px = buf + LWS_PRE;
        int n = (int)sizeof buf - LWS_PRE;
        if (lws_http_client_read(wsi, &px, &n) < 0) return -1;
        break;
      }
      case LWS_CALLBACK_RECEIVE_CLIENT_HTTP_READ: {
        size_t room = sizeof c->probe_body - 1 - c->probe_len;
        if (len > room) len = room;
        memcpy(c->probe_body + c->probe_len, in, len);
        c->probe_len += len;
        break;
      }
      case LWS_CALLBACK_COMPLETED_CLIENT_HTTP:
        probe_done(c);
        return -1; /* one request: hang up */
      case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
      case LWS_CALLBACK_CLOSED_CLIENT_HTTP:
      case LWS_CALLBACK_WSI_DESTROY:
        probe_done(c);
        break;
      default:
        break;
    }
    return 0;
  }
  switch (reason) {
    case LWS_CALLBACK_CLIENT_HTTP_REDIRECT: {
      /* lws would follow a 3xx itself, skipping our loopback check and, on
       * 4.1, never completing a ws upgrade: take the Location and dial it
       * ourselves. The VM answers an upgrade with a 302 to DDS once DDS is
       * attached (dart-lang/sdk sdk/lib/_internal/vm/bin/vmservice_server.dart,
       * Server._requestHandler: request.response.redirect(_service.ddsUri!)). */
      if (wsi != c->wsi && c->wsi) return 1;
      char why[64];
      snprintf(why, sizeof why, "the VM service redirected the upgrade (HTTP %u)",
               (unsigned)len);
      if (in) follow_set(c, (const char *)in, why);
      return 1; /* refuse lws's own follow: CONNECTION_ERROR comes next */
    }
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR: {
      /* lws may have cleared *pwsi before telling us, hence the NULL case. */
      if (c->state != CONN_CONNECTING || (c->wsi && wsi != c->wsi)) break;
      const char *why = in ? (const char *)in : "unknown error";
      char detail[300];
      diag_code_t diag;
      if (c->follow[0]) { /* a redirect we took */
        follow_now(c);
        break;
      }
      if (c->follow_err[0]) { /* a redirect we refused */
        snprintf(detail, sizeof detail, "%s", c->follow_err);
        c->follow_err[0] = '\0';
        attempt_failed(c, DIAG_CONNECTION_REJECTED, detail);
        break;
      }
      if (strncmp(why, "HS:", 3) == 0) {
        /* The TCP connection worked and an HTTP server answered, but not with
         * a WebSocket upgrade: a wrong token (403) or not a VM service. */
        unsigned int status = lws_http_client_http_response(wsi);
        diag = DIAG_CONNECTION_REJECTED;
        if (status == 403) {
          c->wsi = NULL;
          if (probe_start(c) == 0) break; /* probe_done decides */
        }
        if (status)
          snprintf(detail, sizeof detail,
                   "the VM service refused the WebSocket upgrade (HTTP %u): wrong token or not a "
                   "VM service",
                   status);
        else
          snprintf(detail, sizeof detail, "the VM service refused the WebSocket upgrade (%s)", why);
      } else {
        diag = DIAG_NOT_CONNECTED;
        snprintf(detail, sizeof detail, "could not connect to the VM service (%s)", why);
      }
      attempt_failed(c, diag, detail);
      break;
    }
    case LWS_CALLBACK_CLIENT_ESTABLISHED:
      if (wsi != c->wsi) break;
      c->state = CONN_OPEN;
      c->backoff_ms = 0;
      if (c->recheck) {
        /* The app is the one we had: a hand-over DWDS did not announce (it
         * sent us on to DDS), or a dropped socket. */
        c->recheck = 0;
        if (c->opt.on_state)
          c->opt.on_state(c->opt.arg, VM_CLIENT_MOVED, DIAG_NOT_CONNECTED,
                          c->hops ? "Dart Development Service took the VM service over "
                                    "(the web debug service closed this connection)"
                                  : "the connection dropped and the same VM service answered "
                                    "again");
      }
      c->hops = 0;
      vm_rxbuf_reset(&c->rx);
      if (c->opt.on_state) c->opt.on_state(c->opt.arg, VM_CLIENT_CONNECTED, DIAG_NONE, "connected");
      if (c->rq.out_head && c->wsi) lws_callback_on_writable(c->wsi);
      break;
    case LWS_CALLBACK_CLIENT_WRITEABLE: {
      if (wsi != c->wsi || c->state != CONN_OPEN) break;
      vm_request_t *r = c->rq.out_head;
      if (!r) break;
      int n = lws_write(wsi, r->frame + LWS_PRE, r->frame_len, LWS_WRITE_TEXT);
      if (n < (int)r->frame_len) {
        log_warn("vm: write of %s failed", r->method);
        return -1; /* closes the connection; CLIENT_CLOSED fails the rest */
      }
      vm_request_written(r);
      if (c->rq.out_head) lws_callback_on_writable(wsi);
      break;
    }
    case LWS_CALLBACK_CLIENT_RECEIVE: {
      if (wsi != c->wsi) break;
      if (lws_frame_is_binary(wsi)) {
        /* Binary frames carry only heap snapshots, which we never ask for. */
        break;
      }
      int final = lws_is_final_fragment(wsi) && lws_remaining_packet_payload(wsi) == 0;
      switch (vm_rxbuf_feed(&c->rx, in, len, final)) {
        case VM_RX_MORE:
          break;
        case VM_RX_MESSAGE:
          handle_message(c);
          vm_rxbuf_reset(&c->rx);
          break;
        case VM_RX_OVERSIZE:
        case VM_RX_NOMEM:
          handle_oversize(c);
          vm_rxbuf_reset(&c->rx);
          break;
      }
      break;
    }
    case LWS_CALLBACK_CLIENT_CLOSED:
      if (wsi != c->wsi) break;
      connection_lost(c, DIAG_NOT_CONNECTED, "the VM service closed the connection");
      break;
    case LWS_CALLBACK_WSI_DESTROY:
      if (wsi == c->wsi)
        connection_lost(c, DIAG_NOT_CONNECTED, "the connection to the VM service ended");
      break;
    default:
      break;
  }
  return 0;
}

static const struct lws_protocols protocols[] = {
    {"telescope-vm", callback_vm, 0, 65536, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0}, /* 4.1.6 has no LWS_PROTOCOL_LIST_TERM */
};

static int ensure_context(vm_client_t *c) {
  if (c->ctx) return 0;
  struct lws_context_creation_info info;
  void *loops[1] = {c->loop};
  memset(&info, 0, sizeof info);
  info.port = CONTEXT_PORT_NO_LISTEN;
  info.protocols = protocols;
  info.options = LWS_SERVER_OPTION_LIBUV | LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
  info.foreign_loops = loops;
  info.user = c;
  info.gid = -1;
  info.uid = -1;
  /* lws writes NULL here once the context is really freed (see
   * client_destroy_step). */
  info.pcontext = &c->ctx;
  c->ctx = lws_create_context(&info);
  return c->ctx ? 0 : -1;
}

static void on_connect_timer_closed(uv_handle_t *h) {
  vm_client_t *c = container_of((uv_timer_t *)h, vm_client_t, connect_timer);
  c->open_handles--;
  client_maybe_free(c);
}

static void count_closing(uv_handle_t *h, void *arg) {
  if (uv_is_closing(h)) ++*(int *)arg;
}

/* lws 4.1 destroys a context on a foreign loop in two calls: the first
 * closes every wsi and then lws's own timer and idle handles, through
 * libuv close callbacks that still reach callback_vm; only a second call,
 * once those are done, frees the vhosts and the context (and clears c->ctx
 * through info.pcontext). Until then c must stay alive. Returns 1 while
 * there is more to wait for; gives up after ~5 s rather than hold the exit. */
static int client_destroy_step(vm_client_t *c) {
  int closing = 0;
  if (!c->ctx) return 0;
  if (!c->ctx_destroying) {
    c->ctx_destroying = 1;
    lws_context_destroy(c->ctx);
    return c->ctx != NULL;
  }
  if (c->destroy_polls++ > 5000) {
    log_warn("vm: the WebSocket context did not finish closing; leaving it");
    return 0;
  }
  uv_walk(c->loop, count_closing, &closing);
  if (closing) return 1;
  lws_context_destroy(c->ctx);
  return c->ctx != NULL;
}

static void on_connect_timer(uv_timer_t *t) {
  vm_client_t *c = container_of(t, vm_client_t, connect_timer);
  if (c->closing) {
    if (client_destroy_step(c)) {
      uv_timer_start(&c->connect_timer, on_connect_timer, 1, 0);
      return;
    }
    uv_close((uv_handle_t *)&c->connect_timer, on_connect_timer_closed);
    return;
  }
  if (c->state != CONN_IDLE || c->probing || (!c->rq.pending && !c->recheck)) return;
  char err[256] = "no VM-service URI known";
  const char *uri;
  char follow[VM_URI_MAX];
  if (c->follow[0]) {
    /* Used once: after a drop the given URI is dialled (and followed) again. */
    snprintf(follow, sizeof follow, "%s", c->follow);
    c->follow[0] = '\0';
    uri = follow;
  } else {
    c->hops = 0;
    uri = c->opt.get_uri ? c->opt.get_uri(c->opt.arg, err, sizeof err) : NULL;
  }
  if (!uri) {
    vm_requests_fail_all_soon(&c->rq, DIAG_NOT_CONNECTED, err);
    return;
  }
  vm_uri_t u;
  if (vm_uri_parse(uri, 1, &u, err, sizeof err) != VM_URI_OK) {
    vm_requests_fail_all_soon(&c->rq, DIAG_NOT_CONNECTED, err);
    return;
  }
  c->dial = u;
  lws_log_remember_path(u.path);
  if (ensure_context(c) != 0) {
    vm_requests_fail_all_soon(&c->rq, DIAG_NOT_CONNECTED, "could not create the WebSocket context");
    return;
  }
  char hosthdr[300];
  if (strchr(u.host, ':'))
    snprintf(hosthdr, sizeof hosthdr, "[%s]:%d", u.host, u.port);
  else
    snprintf(hosthdr, sizeof hosthdr, "%s:%d", u.host, u.port);
  struct lws_client_connect_info i;
  memset(&i, 0, sizeof i);
  i.context = c->ctx;
  i.address = u.host;
  i.port = u.port;
  i.path = u.path;
  i.host = hosthdr;
  i.origin = NULL;   /* the raw VM allows a missing Origin */
  i.protocol = NULL; /* DDS answers no subprotocol: never ask for one */
  i.local_protocol_name = "telescope-vm";
  i.ssl_connection = u.secure ? LCCSCF_USE_SSL : 0;
  i.pwsi = &c->wsi;
  c->state = CONN_CONNECTING;
  if (!lws_client_connect_via_info(&i)) {
    /* lws may already have reported CONNECTION_ERROR (then state is IDLE). */
    if (c->state == CONN_CONNECTING) {
      c->wsi = NULL;
      c->state = CONN_IDLE;
      vm_requests_fail_all_soon(&c->rq, DIAG_NOT_CONNECTED, "could not start a connection to the VM service");
    }
  }
}

static void schedule_connect(vm_client_t *c) {
  if (c->closing || c->state != CONN_IDLE) return;
  if (uv_is_active((uv_handle_t *)&c->connect_timer)) return;
  uint64_t now = uv_now(c->loop);
  uint64_t delay = c->next_attempt > now ? c->next_attempt - now : 0;
  uv_timer_start(&c->connect_timer, on_connect_timer, delay, 0);
}

vm_client_t *vm_client_new(uv_loop_t *loop, const vm_client_options_t *opt) {
  vm_client_t *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->loop = loop;
  c->opt = *opt;
  if (c->opt.timeout_ms <= 0) c->opt.timeout_ms = VM_CLIENT_DEFAULT_TIMEOUT_MS;
  c->rx.limit = VM_CLIENT_MAX_MESSAGE;
  uv_timer_init(loop, &c->connect_timer);
  c->open_handles = 1;
  vm_requests_init(&c->rq, loop, on_request_released, c);
  lws_set_log_level(log_get_level() >= LOG_TRACE
                        ? LLL_ERR | LLL_WARN | LLL_NOTICE | LLL_INFO | LLL_CLIENT
                        : LLL_ERR | LLL_WARN,
                    lws_log_emit);
  return c;
}

vm_request_t *vm_client_call(vm_client_t *c, const char *method, json_t *params, int timeout_ms,
                             vm_client_reply_cb cb, void *arg) {
  vm_request_t *r =
      vm_requests_add(&c->rq, method, timeout_ms > 0 ? timeout_ms : c->opt.timeout_ms, cb, arg);
  if (!r) {
    json_decref(params);
    return NULL;
  }
  if (c->closing) {
    json_decref(params);
    vm_request_fail_soon(r, DIAG_NOT_CONNECTED, 0, "the VM-service client is closing");
    return r;
  }
  if (!vm_client_method_allowed(method)) {
    json_decref(params);
    char detail[200];
    snprintf(detail, sizeof detail, "method %.60s is not on telescope's allowlist; not sent",
             r->method);
    vm_request_fail_soon(r, DIAG_NOT_CONNECTED, 0, detail);
    return r;
  }
  if (vm_request_queue(r, params) < 0) return r;
  if (c->state == CONN_OPEN && c->wsi)
    lws_callback_on_writable(c->wsi);
  else
    schedule_connect(c);
  return r;
}

void vm_client_cancel(vm_request_t *r) {
  if (r) vm_request_finish(r, NULL);
}

void vm_client_disconnect(vm_client_t *c, const char *why) {
  struct lws *old = c->wsi;
  int was = c->state != CONN_IDLE;
  c->wsi = NULL;
  c->state = CONN_IDLE;
  c->backoff_ms = 0;
  c->next_attempt = 0;
  c->follow[0] = c->follow_err[0] = '\0';
  c->moved = c->hops = c->recheck = 0;
  vm_rxbuf_reset(&c->rx);
  vm_requests_fail_all_soon(&c->rq, DIAG_NOT_CONNECTED, why);
  /* Killing from inside one of its own callbacks is unsafe: ask lws to do it
   * on its next turn. Its callbacks for old no longer match c->wsi. */
  if (old) lws_set_timeout(old, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_ASYNC);
  if (was && c->opt.on_state && !c->closing)
    c->opt.on_state(c->opt.arg, VM_CLIENT_DISCONNECTED, DIAG_NOT_CONNECTED, why);
}

void vm_client_close(vm_client_t *c, void (*done)(void *arg), void *arg) {
  if (c->closing) return;
  c->closing = 1;
  c->close_done = done;
  c->close_arg = arg;
  while (c->rq.pending) vm_request_finish(c->rq.pending, NULL);
  /* lws_context_destroy must not run inside an lws callback (we may be in
   * one): do it from the connect timer on the next turn. */
  uv_timer_stop(&c->connect_timer);
  uv_timer_start(&c->connect_timer, on_connect_timer, 0, 0);
}
