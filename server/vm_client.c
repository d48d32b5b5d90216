#include "vm_client.h"
#include "container_of.h"

#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "vm_handover.h"
#include "vm_lws_ctx.h"
#include "vm_lws_log.h"
#include "vm_request.h"
#include "vm_uri.h"
#include "vm_wire.h"

/* LWS_CALLBACK_CLIENT_HTTP_REDIRECT is new in libwebsockets 4.1
 * (include/libwebsockets/lws-callbacks.h at v4.1.0; absent at v4.0.20, what
 * Ubuntu 22.04 ships). 4.0 is told not to follow a 3xx itself
 * (LCCSCF_HTTP_NO_FOLLOW_REDIRECT, there since 4.0): the upgrade then fails,
 * and the Location is read from the failed handshake's headers instead. */
#define VM_LWS_REDIRECT_CB          \
  (LWS_LIBRARY_VERSION_MAJOR > 4 || \
   (LWS_LIBRARY_VERSION_MAJOR == 4 && LWS_LIBRARY_VERSION_MINOR >= 1))


#define BACKOFF_MIN_MS 50
#define BACKOFF_MAX_MS 1000

/* ---- the client ---- */

typedef enum { CONN_IDLE, CONN_CONNECTING, CONN_OPEN } conn_state_t;


/* The lws opaque user data of each wsi a client opens: its socket, or the
 * plain GET that reads a 403's body (vm_handover.h). */
typedef struct {
  vm_client_t *c;
  int probe;
} wsi_tag_t;

struct vm_client {
  uv_loop_t *loop;
  vm_client_options_t opt;
  vm_lws_ctx_t *lctx; /* a reference to the shared context, from the first dial to close */
  wsi_tag_t tag_conn, tag_probe;
  int ctx_released;   /* closing: the shared context is gone, nothing can call back */
  struct lws *wsi;
  conn_state_t state;
  uv_timer_t connect_timer; /* connect after backoff; also the deferred destroy */
  uint64_t next_attempt;    /* loop time before which we do not dial again */
  int backoff_ms;
  vm_requests_t rq; /* pending and unwritten requests */
  vm_rxbuf_t rx;
  int closing;
  int open_handles;   /* ours: connect_timer (the requests count theirs) */
  void (*close_done)(void *arg);
  void *close_arg;

  vm_handover_t ho; /* following DDS: where to dial next, the 403 probe */
  char closed_msg[80], ended_msg[80]; /* "the <peer> closed the connection", ... */
};

static void client_maybe_free(vm_client_t *c) {
  if (!c->closing || c->open_handles > 0 || c->rq.open > 0 || !c->ctx_released) return;
  void (*done)(void *) = c->close_done;
  void *arg = c->close_arg;
  vm_rxbuf_free(&c->rx);
  free(c);
  if (done) done(arg);
}

/* A request's handle closed (vm_requests_t.released). */
static void on_request_released(void *arg) { client_maybe_free(arg); }

static void schedule_connect(vm_client_t *c);

/* A watcher's reply of CUT_MIN_BYTES or more is parsed without its records:
 * *cut then holds their text (the caller frees it), which
 * record_reply_parse_raw reads with no JSON tree built and freed around
 * them (most of a read's cost). Any other message as it came, *cut NULL. */
#define CUT_MIN_BYTES 4096
static json_t *parse_message(vm_client_t *c, char **cut, size_t *cut_len, json_error_t *jerr) {
  size_t rest = 0, len = 0;
  char id[40];
  vm_request_t *r = NULL;
  int cut_it = c->rx.len >= CUT_MIN_BYTES && vm_requests_awaiting(&c->rq, "ext.telescope.frames");
  char *b = cut_it ? vm_wire_cut_records(c->rx.buf, c->rx.len, &rest, &len) : NULL;
  json_t *msg = b ? json_loadb(b + len, rest, 0, jerr) : NULL;
  if (msg && vm_msg_classify(msg, id, sizeof id) == VM_MSG_REPLY && !json_object_get(msg, "error"))
    r = vm_requests_find(&c->rq, id);
  *cut = NULL;
  if (!r || strcmp(r->method, "ext.telescope.frames") != 0) {
    /* Nothing cut, not a watcher's reply, or not valid JSON: as it came. */
    json_decref(msg);
    free(b);
    return json_loadb(c->rx.buf, c->rx.len, 0, jerr);
  }
  *cut = b; /* the records come first: the rest after them is not read again */
  *cut_len = len;
  return msg;
}

/* The methods whose large replies (VM_CLIENT_TEXT_MIN) reach their caller
 * as text, to be parsed off the loop: a debug app's CPU profile lists tens
 * of thousands of functions, and a busy app's timeline holds megabytes of
 * events a pull. */
static int wants_text(const char *method) {
  return !strcmp(method, "getCpuSamples") || !strcmp(method, "getVMTimeline");
}

/* A large reply to one of those, found by its id alone, goes to its request
 * as text: 1 when it did. */
static int hand_text(vm_client_t *c) {
  const vm_idscan_t *s = &c->rx.scan; /* found as the reply came in */
  if (c->rx.len < VM_CLIENT_TEXT_MIN || !s->found) return 0;
  vm_request_t *r = vm_requests_find(&c->rq, s->id);
  if (!r || !wants_text(r->method)) return 0;
  vm_client_reply_t reply = {0};
  reply.detail = "ok";
  reply.text = c->rx.buf;
  reply.text_len = c->rx.len;
  vm_request_finish(r, &reply);
  return 1;
}

static void handle_message(vm_client_t *c) {
  json_error_t jerr;
  char *cut;
  size_t cut_len = 0;
  if (hand_text(c)) return;
  json_t *msg = parse_message(c, &cut, &cut_len, &jerr);
  if (!msg) {
    vm_request_t *r = c->rx.scan.found ? vm_requests_find(&c->rq, c->rx.scan.id) : NULL;
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
        if (vm_handover_follow(&c->ho, to, "Dart Development Service took the VM service over") == 0)
          c->ho.moved = 1;
        else
          log_warn("vm: %s", c->ho.follow_err);
      }
      if (c->opt.on_event) /* a DTD event has no params.event: params is the event */
        c->opt.on_event(c->opt.arg, json_string_value(json_object_get(params, "streamId")),
                        ev ? ev : params);
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
        reply.records = cut;
        reply.records_len = cut_len;
      }
      vm_request_finish(r, &reply);
      break;
    }
    case VM_MSG_OTHER:
      log_debug("vm: ignoring a message that is neither a reply nor an event");
      break;
  }
  json_decref(msg);
  free(cut);
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
  if (c->ho.moved && c->ho.follow[0]) {
    /* DDS took over: what the VM already had may or may not have run, so
     * those fail; what was never written goes to DDS, at once. */
    c->ho.moved = 0;
    vm_requests_fail_written_soon(&c->rq, "Dart Development Service took the VM service over while the call "
                         "was in flight; it may have run");
    c->next_attempt = 0;
    if (c->opt.on_state && !c->closing)
      c->opt.on_state(c->opt.arg, VM_CLIENT_MOVED, DIAG_NOT_CONNECTED,
                      "Dart Development Service took the VM service over");
    schedule_connect(c);
    return;
  }
  c->ho.moved = 0;
  if (was_open && !c->closing && !c->ho.recheck && c->ho.dial.ws[0]) {
    /* Closed with no word of why. DWDS closes its other clients when DDS
     * takes over and tells only those listening on the Service stream
     * (dart-lang/webdev dwds/lib/src/services/proxy_service.dart
     * yieldControlToDDS, debug_service.dart handleConnection), and a socket
     * can drop while the VM lives on. So the same URI is dialled once more,
     * at once: DWDS's 403 then names DDS (followed), the same VM answering
     * is a dropped socket (the app is unchanged: MOVED, not DISCONNECTED),
     * and a refusal is the VM gone. */
    c->ho.recheck = 1;
    snprintf(c->ho.recheck_why, sizeof c->ho.recheck_why, "%s", detail);
    vm_requests_fail_written_soon(&c->rq, "the connection to the VM service dropped while the call was in "
                         "flight; it may have run");
    snprintf(c->ho.follow, sizeof c->ho.follow, "%s", c->ho.dial.ws);
    c->ho.hops = 0;
    c->next_attempt = 0;
    log_info("vm: %s; dialling the same URI once more", detail);
    schedule_connect(c);
    return;
  }
  char why[400];
  if (c->ho.recheck) {
    c->ho.recheck = 0;
    snprintf(why, sizeof why, "%s; dialling it again failed: %s", c->ho.recheck_why, detail);
    detail = why;
  }
  c->ho.follow[0] = '\0';
  vm_requests_fail_all_soon(&c->rq, diag, detail);
  if (c->opt.on_state && !c->closing)
    c->opt.on_state(c->opt.arg, VM_CLIENT_DISCONNECTED, diag, detail);
}

/* A 3xx answering the upgrade: lws would follow it itself, skipping our
 * loopback check and, on 4.1, never completing a ws upgrade; vm_handover
 * checks the Location and the dial goes there once lws has let go. The VM
 * answers an upgrade with a 302 to DDS once DDS is attached (dart-lang/sdk
 * sdk/lib/_internal/vm/bin/vmservice_server.dart, Server._requestHandler:
 * request.response.redirect(_service.ddsUri!)). */
static void take_redirect(vm_client_t *c, const char *location, unsigned int status) {
  char why[64];
  snprintf(why, sizeof why, "the VM service redirected the upgrade (HTTP %u)", status);
  if (location) vm_handover_follow(&c->ho, location, why);
}

#if !VM_LWS_REDIRECT_CB
/* lws 4.0 reports the refused 3xx as a failed upgrade, its headers still
 * readable. */
static void take_refused_redirect(vm_client_t *c, struct lws *wsi) {
  unsigned int status = wsi ? lws_http_client_http_response(wsi) : 0;
  char location[VM_URI_MAX];
  if (status >= 300 && status < 400 &&
      lws_hdr_copy(wsi, location, sizeof location, WSI_TOKEN_HTTP_LOCATION) > 0)
    take_redirect(c, location, status);
}
#endif

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
  c->ho.hops = 0;
  connection_lost(c, diag, detail);
}

/* The 403's body has been read (or could not be): follow where DWDS sent
 * us, or say why the upgrade was refused (vm_handover_read_403). */
static void probe_done(vm_client_t *c) {
  char detail[400];
  if (!c->ho.probing) return;
  if (vm_handover_read_403(&c->ho, detail, sizeof detail))
    follow_now(c);
  else
    attempt_failed(c, DIAG_CONNECTION_REJECTED, detail);
}

static int callback_vm(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                       size_t len) {
  wsi_tag_t *tag = wsi ? lws_get_opaque_user_data(wsi) : NULL;
  if (!tag) return 0; /* a protocol-wide event: nobody's */
  vm_client_t *c = tag->c;
  if (log_get_level() >= LOG_TRACE)
    log_msg(LOG_TRACE, "vm: lws reason %d wsi %p ours %p state %d", (int)reason, (void *)wsi,
            (void *)c->wsi, (int)c->state);
  if (tag->probe) { /* the plain GET that reads a 403's body */
    int ended = 0, rc = vm_probe_callback(&c->ho, wsi, (int)reason, in, len, &ended);
    if (ended) probe_done(c);
    return rc;
  }
  switch (reason) {
#if VM_LWS_REDIRECT_CB
    case LWS_CALLBACK_CLIENT_HTTP_REDIRECT:
      if (wsi != c->wsi && c->wsi) return 1;
      take_redirect(c, in, (unsigned)len);
      return 1; /* refuse lws's own follow: CONNECTION_ERROR comes next */
#endif
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR: {
      /* lws may have cleared *pwsi before telling us, hence the NULL case. */
      if (c->state != CONN_CONNECTING || (c->wsi && wsi != c->wsi)) break;
      const char *why = in ? (const char *)in : "unknown error";
      char detail[300];
      diag_code_t diag;
#if !VM_LWS_REDIRECT_CB
      take_refused_redirect(c, wsi);
#endif
      if (c->ho.follow[0]) { /* a redirect we took */
        follow_now(c);
        break;
      }
      if (c->ho.follow_err[0]) { /* a redirect we refused */
        snprintf(detail, sizeof detail, "%s", c->ho.follow_err);
        c->ho.follow_err[0] = '\0';
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
          if (vm_probe_start(&c->ho, vm_lws_ctx_get(c->lctx), &c->tag_probe) == 0) break; /* probe_done decides */
        }
        if (status)
          snprintf(detail, sizeof detail,
                   "the %s refused the WebSocket upgrade (HTTP %u): wrong token or not a %s",
                   c->opt.peer, status, c->opt.peer);
        else
          snprintf(detail, sizeof detail, "the %s refused the WebSocket upgrade (%s)",
                   c->opt.peer, why);
      } else {
        diag = DIAG_NOT_CONNECTED;
        snprintf(detail, sizeof detail, "could not connect to the %s (%s)", c->opt.peer, why);
      }
      attempt_failed(c, diag, detail);
      break;
    }
    case LWS_CALLBACK_CLIENT_ESTABLISHED:
      if (wsi != c->wsi) break;
      c->state = CONN_OPEN;
      c->backoff_ms = 0;
      if (c->ho.recheck) {
        /* The app is the one we had: a hand-over DWDS did not announce (it
         * sent us on to DDS), or a dropped socket. */
        c->ho.recheck = 0;
        if (c->opt.on_state)
          c->opt.on_state(c->opt.arg, VM_CLIENT_MOVED, DIAG_NOT_CONNECTED,
                          c->ho.hops ? "Dart Development Service took the VM service over "
                                    "(the web debug service closed this connection)"
                                  : "the connection dropped and the same VM service answered "
                                    "again");
      }
      c->ho.hops = 0;
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
      connection_lost(c, DIAG_NOT_CONNECTED, c->closed_msg);
      break;
    case LWS_CALLBACK_WSI_DESTROY:
      if (wsi == c->wsi) connection_lost(c, DIAG_NOT_CONNECTED, c->ended_msg);
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
  if (!c->lctx) c->lctx = vm_lws_ctx_acquire(c->loop, protocols);
  return c->lctx ? 0 : -1;
}

static void on_connect_timer_closed(uv_handle_t *h) {
  vm_client_t *c = container_of((uv_timer_t *)h, vm_client_t, connect_timer);
  c->open_handles--;
  client_maybe_free(c);
}

static void on_ctx_released(void *arg) {
  vm_client_t *c = arg;
  c->ctx_released = 1;
  client_maybe_free(c);
}

/* Closing, on the turn after vm_client_close (lws must not be touched from
 * inside one of its callbacks): our sockets go at once, whoever else shares
 * the context; c itself stays until the context is gone (on_ctx_released). */
static void close_step(vm_client_t *c) {
  struct lws *socks[2] = {c->wsi, c->ho.probe_wsi};
  for (int i = 0; i < 2; i++)
    if (socks[i]) lws_set_timeout(socks[i], PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_ASYNC);
  if (c->lctx)
    vm_lws_ctx_release(c->lctx, on_ctx_released, c);
  else
    c->ctx_released = 1;
  uv_close((uv_handle_t *)&c->connect_timer, on_connect_timer_closed);
}

static void on_connect_timer(uv_timer_t *t) {
  vm_client_t *c = container_of(t, vm_client_t, connect_timer);
  if (c->closing) {
    close_step(c);
    return;
  }
  if (c->state != CONN_IDLE || c->ho.probing || (!c->rq.pending && !c->ho.recheck)) return;
  char err[256];
  snprintf(err, sizeof err, "no %s URI known", c->opt.peer);
  const char *uri;
  char follow[VM_URI_MAX];
  if (c->ho.follow[0]) {
    /* Used once: after a drop the given URI is dialled (and followed) again. */
    snprintf(follow, sizeof follow, "%s", c->ho.follow);
    c->ho.follow[0] = '\0';
    uri = follow;
  } else {
    c->ho.hops = 0;
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
  c->ho.dial = u;
  vm_lws_log_path(u.path);
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
  i.context = vm_lws_ctx_get(c->lctx);
  i.opaque_user_data = &c->tag_conn;
  i.address = u.host;
  i.port = u.port;
  i.path = u.path;
  i.host = hosthdr;
  i.origin = NULL;   /* the raw VM allows a missing Origin */
  i.protocol = NULL; /* DDS answers no subprotocol: never ask for one */
  i.local_protocol_name = "telescope-vm";
  i.ssl_connection = u.secure ? LCCSCF_USE_SSL : 0;
#if !VM_LWS_REDIRECT_CB
  i.ssl_connection |= LCCSCF_HTTP_NO_FOLLOW_REDIRECT;
#endif
  i.pwsi = &c->wsi;
  c->state = CONN_CONNECTING;
  if (!lws_client_connect_via_info(&i)) {
    /* lws may already have reported CONNECTION_ERROR (then state is IDLE). */
    if (c->state == CONN_CONNECTING) {
      c->wsi = NULL;
      c->state = CONN_IDLE;
      char why[120];
      snprintf(why, sizeof why, "could not start a connection to the %s", c->opt.peer);
      vm_requests_fail_all_soon(&c->rq, DIAG_NOT_CONNECTED, why);
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
  c->ho.allow_remote = opt->allow_remote;
  if (!c->opt.peer) c->opt.peer = "VM service";
  if (!c->opt.allowed) c->opt.allowed = vm_client_method_allowed;
  c->ho.peer = c->opt.peer;
  snprintf(c->closed_msg, sizeof c->closed_msg, "the %s closed the connection", c->opt.peer);
  snprintf(c->ended_msg, sizeof c->ended_msg, "the connection to the %s ended", c->opt.peer);
  c->tag_conn.c = c->tag_probe.c = c;
  c->tag_probe.probe = 1;
  uv_timer_init(loop, &c->connect_timer);
  c->open_handles = 1;
  vm_requests_init(&c->rq, loop, on_request_released, c);
  lws_set_log_level(log_get_level() >= LOG_TRACE
                        ? LLL_ERR | LLL_WARN | LLL_NOTICE | LLL_INFO | LLL_CLIENT
                        : LLL_ERR | LLL_WARN,
                    vm_lws_log_emit);
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
  if (!c->opt.allowed(method)) {
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

int vm_client_backoff_ms(const vm_client_t *c) { return c->backoff_ms; }

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
  c->ho.follow[0] = c->ho.follow_err[0] = '\0';
  c->ho.moved = c->ho.hops = c->ho.recheck = 0;
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
