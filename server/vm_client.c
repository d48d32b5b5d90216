#include "vm_client.h"
#include "container_of.h"

#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "vm_uri.h"


#define BACKOFF_MIN_MS 50
#define BACKOFF_MAX_MS 1000
/* Hand-overs followed in a row before giving up (VM -> DDS is one). */
#define MAX_HOPS 4
/* Enough of a 403 body to read DWDS's "can be found at <uri>." */
#define PROBE_BODY_MAX 1024
/* After a big reply, give the memory back rather than keep it as capacity. */
#define RX_KEEP_CAP (1u << 20)

/* ---- pure parts: the allowlist, the id scanner, the reassembly buffer ---- */

static const char *const allowed_methods[] = {
    "getVersion",
    "getVM",
    "getIsolate",
    "streamListen",
    "streamCancel",
    "_flutter.listViews",
    "ext.telescope.frames",
    "ext.flutter.profileWidgetBuilds",
    "ext.flutter.profileRenderObjectLayouts",
    "ext.flutter.profileRenderObjectPaints",
    /* Without the watcher: the probe asks Flutter's own frame request. */
    "ext.ui.window.scheduleFrame",
    /* The VM timeline, read-only but for the recorded streams, which a
     * session sets and restores exactly; never clearVMTimeline (shared). */
    "getVMTimelineFlags",
    "setVMTimelineFlags",
    "getVMTimeline",
    "getVMTimelineMicros",
    /* Where to edit: the UI isolate's CPU samples over janky frames (read only). */
    "getCpuSamples",
};

int vm_client_method_allowed(const char *method) {
  if (!method) return 0;
  for (size_t i = 0; i < sizeof allowed_methods / sizeof *allowed_methods; i++)
    if (strcmp(method, allowed_methods[i]) == 0) return 1;
  return 0;
}

/* Finds the top-level "id" of a JSON text fed in pieces, keeping a few bytes
 * of state only. It lets us fail the right call when a reply is too large to
 * keep (the VM puts "id" last) or is not valid JSON. Not a validator. */
typedef struct {
  int depth, in_str, esc;
  int expect_key; /* at depth 1, the next string is a member name */
  int str_role;   /* 0 other, 1 member name, 2 the id's string value */
  int after_key;  /* a member name ended; ':' comes next */
  int want_value; /* the member name was "id" and ':' was seen */
  int in_num;     /* reading a numeric id */
  char key[4];
  size_t klen;
  int key_long;
  char id[32];
  size_t idlen;
  int found;
} idscan_t;

static void idscan_feed(idscan_t *s, const char *p, size_t n) {
  for (size_t i = 0; i < n && !s->found; i++) {
    char c = p[i];
    if (s->in_str) {
      if (s->esc) {
        s->esc = 0;
      } else if (c == '\\') {
        s->esc = 1;
        continue;
      } else if (c == '"') {
        s->in_str = 0;
        if (s->str_role == 1) s->after_key = 1;
        if (s->str_role == 2) s->found = 1;
        continue;
      }
      if (s->str_role == 1) {
        if (s->klen < sizeof s->key - 1)
          s->key[s->klen++] = c;
        else
          s->key_long = 1;
      } else if (s->str_role == 2 && s->idlen < sizeof s->id - 1) {
        s->id[s->idlen++] = c;
      }
      continue;
    }
    if (s->in_num) {
      if ((c >= '0' && c <= '9') || c == '-') {
        if (s->idlen < sizeof s->id - 1) s->id[s->idlen++] = c;
        continue;
      }
      s->in_num = 0;
      s->found = 1;
      break;
    }
    switch (c) {
      case '"':
        s->in_str = 1;
        s->str_role = 0;
        if (s->depth == 1 && s->expect_key) {
          s->str_role = 1;
          s->klen = 0;
          s->key_long = 0;
          s->expect_key = 0;
        } else if (s->depth == 1 && s->want_value) {
          s->str_role = 2;
          s->idlen = 0;
        }
        s->want_value = 0;
        break;
      case '{':
      case '[':
        s->depth++;
        if (s->depth == 1 && c == '{') s->expect_key = 1;
        s->want_value = 0;
        break;
      case '}':
      case ']':
        s->depth--;
        break;
      case ':':
        if (s->depth == 1 && s->after_key) {
          s->key[s->klen] = '\0';
          s->want_value = !s->key_long && strcmp(s->key, "id") == 0;
          s->after_key = 0;
        }
        break;
      case ',':
        if (s->depth == 1) s->expect_key = 1;
        break;
      case ' ':
      case '\t':
      case '\r':
      case '\n':
        break;
      default:
        if (s->want_value && ((c >= '0' && c <= '9') || c == '-')) {
          s->in_num = 1;
          s->idlen = 0;
          s->id[s->idlen++] = c;
        }
        s->want_value = 0;
        break;
    }
  }
  s->id[s->idlen] = '\0';
}

/* Reassembles one WebSocket message from fragments up to limit bytes. Past
 * the limit it frees what it holds and only scans the rest for the id, so
 * memory stays bounded whatever the app sends. */
typedef struct {
  char *buf;
  size_t len, cap, limit;
  int active;   /* a message is in progress */
  int overflow; /* this message went over the limit */
  size_t total; /* bytes of this message so far */
  idscan_t scan;
} rxbuf_t;

typedef enum { RX_MORE, RX_MESSAGE, RX_OVERSIZE, RX_NOMEM } rx_status_t;

static void rxbuf_reset(rxbuf_t *rx) {
  if (rx->cap > RX_KEEP_CAP) {
    free(rx->buf);
    rx->buf = NULL;
    rx->cap = 0;
  }
  rx->len = 0;
  rx->active = 0;
  rx->overflow = 0;
  rx->total = 0;
}

static void rxbuf_free(rxbuf_t *rx) {
  free(rx->buf);
  memset(rx, 0, sizeof *rx);
}

/* Feeds one fragment; final says it ends the message. RX_MESSAGE: rx->buf
 * holds rx->len bytes plus a NUL. RX_OVERSIZE: rx->scan.id names the reply's
 * id if it was found. Call rxbuf_reset after either. */
static rx_status_t rxbuf_feed(rxbuf_t *rx, const char *data, size_t n, int final) {
  if (!rx->active) {
    rx->active = 1;
    rx->len = 0;
    rx->total = 0;
    rx->overflow = 0;
    memset(&rx->scan, 0, sizeof rx->scan);
  }
  rx->total += n;
  if (!rx->overflow && rx->len + n > rx->limit) {
    rx->overflow = 1;
    idscan_feed(&rx->scan, rx->buf, rx->len);
    free(rx->buf);
    rx->buf = NULL;
    rx->cap = 0;
    rx->len = 0;
  }
  if (rx->overflow) {
    idscan_feed(&rx->scan, data, n);
  } else {
    if (rx->len + n + 1 > rx->cap) {
      size_t cap = rx->cap ? rx->cap : 4096;
      while (cap < rx->len + n + 1) cap *= 2;
      if (cap > rx->limit + 1) cap = rx->limit + 1;
      char *nb = realloc(rx->buf, cap);
      if (!nb) {
        rx->overflow = 1; /* treat as too large: drop the rest */
        idscan_feed(&rx->scan, rx->buf, rx->len);
        free(rx->buf);
        rx->buf = NULL;
        rx->cap = rx->len = 0;
        idscan_feed(&rx->scan, data, n);
        if (final) return RX_NOMEM;
        return RX_MORE;
      }
      rx->buf = nb;
      rx->cap = cap;
    }
    memcpy(rx->buf + rx->len, data, n);
    rx->len += n;
    rx->buf[rx->len] = '\0';
  }
  if (!final) return RX_MORE;
  return rx->overflow ? RX_OVERSIZE : RX_MESSAGE;
}

/* What a parsed message is. */
typedef enum { MSG_OTHER, MSG_REPLY, MSG_EVENT } msg_kind_t;

/* Classifies msg; for a reply writes its id (string, or integer printed) to
 * id. Pure. */
static msg_kind_t msg_classify(json_t *msg, char *id, size_t idlen) {
  if (!json_is_object(msg)) return MSG_OTHER;
  json_t *jid = json_object_get(msg, "id");
  const char *method = json_string_value(json_object_get(msg, "method"));
  if ((!jid || json_is_null(jid)) && method && strcmp(method, "streamNotify") == 0) {
    json_t *params = json_object_get(msg, "params");
    if (json_is_string(json_object_get(params, "streamId")) &&
        json_is_object(json_object_get(params, "event")))
      return MSG_EVENT;
    return MSG_OTHER;
  }
  if (!json_object_get(msg, "result") && !json_object_get(msg, "error")) return MSG_OTHER;
  if (json_is_string(jid))
    snprintf(id, idlen, "%s", json_string_value(jid));
  else if (json_is_integer(jid))
    snprintf(id, idlen, "%" JSON_INTEGER_FORMAT, json_integer_value(jid));
  else
    return MSG_OTHER;
  return MSG_REPLY;
}

/* ---- the client ---- */

typedef enum { CONN_IDLE, CONN_CONNECTING, CONN_OPEN } conn_state_t;

struct vm_request {
  vm_client_t *client;
  uv_timer_t timer; /* the timeout, or a 0 ms hop to deliver a failure */
  char id[24];
  char method[48];
  unsigned char *frame; /* LWS_PRE + payload while waiting to be written */
  size_t frame_len;
  vm_client_reply_cb cb;
  void *arg;
  int timeout_ms;
  int done; /* answered, failed or cancelled: off both lists */
  int deferred;
  diag_code_t fail_diag;
  int fail_rpc;
  char fail_detail[200];
  vm_request_t *prev, *next;         /* pending list: every request not done */
  vm_request_t *out_prev, *out_next; /* write queue: not yet written */
};

struct vm_client {
  uv_loop_t *loop;
  vm_client_options_t opt;
  struct lws_context *ctx;
  struct lws *wsi;
  conn_state_t state;
  uv_timer_t connect_timer; /* connect after backoff; also the deferred destroy */
  uint64_t next_attempt;    /* loop time before which we do not dial again */
  int backoff_ms;
  unsigned long next_id;
  vm_request_t *pending;
  vm_request_t *out_head, *out_tail;
  rxbuf_t rx;
  int closing;
  int ctx_destroying; /* the first lws_context_destroy call was made */
  int destroy_polls;  /* 1 ms turns spent waiting for lws to finish */
  int open_handles;   /* ours: connect_timer + live request timers */
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

static void out_unlink(vm_client_t *c, vm_request_t *r) {
  if (!r->frame) return;
  if (r->out_prev)
    r->out_prev->out_next = r->out_next;
  else if (c->out_head == r)
    c->out_head = r->out_next;
  if (r->out_next)
    r->out_next->out_prev = r->out_prev;
  else if (c->out_tail == r)
    c->out_tail = r->out_prev;
  r->out_prev = r->out_next = NULL;
  free(r->frame);
  r->frame = NULL;
}

static void client_maybe_free(vm_client_t *c) {
  if (!c->closing || c->open_handles > 0) return;
  void (*done)(void *) = c->close_done;
  void *arg = c->close_arg;
  rxbuf_free(&c->rx);
  free(c);
  if (done) done(arg);
}

static void on_request_closed(uv_handle_t *h) {
  vm_request_t *r = container_of((uv_timer_t *)h, vm_request_t, timer);
  vm_client_t *c = r->client;
  free(r);
  c->open_handles--;
  client_maybe_free(c);
}

/* Takes r off the lists and releases it; cb (if given) runs first. */
static void request_finish(vm_request_t *r, const vm_client_reply_t *reply) {
  vm_client_t *c = r->client;
  if (r->done) return;
  r->done = 1;
  out_unlink(c, r);
  if (r->prev)
    r->prev->next = r->next;
  else
    c->pending = r->next;
  if (r->next) r->next->prev = r->prev;
  uv_timer_stop(&r->timer);
  if (reply && r->cb) r->cb(r->arg, reply);
  uv_close((uv_handle_t *)&r->timer, on_request_closed);
}

static void on_request_timer(uv_timer_t *t) {
  vm_request_t *r = container_of(t, vm_request_t, timer);
  vm_client_reply_t reply = {0};
  if (r->deferred) {
    reply.diag = r->fail_diag;
    reply.rpc_code = r->fail_rpc;
    reply.detail = r->fail_detail;
  } else {
    snprintf(r->fail_detail, sizeof r->fail_detail, "no reply to %s within %d ms", r->method,
             r->timeout_ms);
    reply.diag = DIAG_UNRESPONSIVE;
    reply.detail = r->fail_detail;
  }
  request_finish(r, &reply);
}

/* Fails r on the next loop turn: callers never see their cb re-entered, and
 * lws callbacks never run user code that might tear the socket down. */
static void request_fail_soon(vm_request_t *r, diag_code_t diag, int rpc, const char *detail) {
  if (r->done || r->deferred) return;
  r->deferred = 1;
  r->fail_diag = diag;
  r->fail_rpc = rpc;
  snprintf(r->fail_detail, sizeof r->fail_detail, "%s", detail);
  out_unlink(r->client, r);
  uv_timer_start(&r->timer, on_request_timer, 0, 0);
}

static void fail_all_soon(vm_client_t *c, diag_code_t diag, const char *detail) {
  for (vm_request_t *r = c->pending; r; r = r->next) request_fail_soon(r, diag, 0, detail);
}

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

static vm_request_t *find_pending(vm_client_t *c, const char *id) {
  for (vm_request_t *r = c->pending; r; r = r->next)
    if (!r->done && !r->deferred && strcmp(r->id, id) == 0) return r;
  return NULL;
}

static void handle_message(vm_client_t *c) {
  json_error_t jerr;
  json_t *msg = json_loadb(c->rx.buf, c->rx.len, 0, &jerr);
  if (!msg) {
    idscan_t s = {0};
    idscan_feed(&s, c->rx.buf, c->rx.len);
    vm_request_t *r = s.found ? find_pending(c, s.id) : NULL;
    log_warn("vm: ignoring a malformed message from the app (%zu bytes): %s", c->rx.len, jerr.text);
    if (r) {
      char detail[200];
      snprintf(detail, sizeof detail, "the app's reply to %s was not valid JSON: %.100s", r->method,
               jerr.text);
      request_fail_soon(r, DIAG_NONE, RPC_PARSE_ERROR, detail);
    }
    return;
  }
  char id[40];
  switch (msg_classify(msg, id, sizeof id)) {
    case MSG_EVENT: {
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
    case MSG_REPLY: {
      vm_request_t *r = find_pending(c, id);
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
      request_finish(r, &reply);
      break;
    }
    case MSG_OTHER:
      log_debug("vm: ignoring a message that is neither a reply nor an event");
      break;
  }
  json_decref(msg);
}

static void handle_oversize(vm_client_t *c) {
  vm_request_t *r = c->rx.scan.found ? find_pending(c, c->rx.scan.id) : NULL;
  log_warn("vm: dropped a %zu-byte message from the app (limit %u bytes)", c->rx.total,
           VM_CLIENT_MAX_MESSAGE);
  if (r) {
    char detail[200];
    snprintf(detail, sizeof detail,
             "the app's reply to %s was %zu bytes, over the %u MiB limit; discarded", r->method,
             c->rx.total, VM_CLIENT_MAX_MESSAGE >> 20);
    request_fail_soon(r, DIAG_NONE, RPC_INTERNAL_ERROR, detail);
  }
}

/* Requests already written may or may not have run: they fail; the rest
 * wait for the next connection. */
static void fail_written_soon(vm_client_t *c, const char *detail) {
  for (vm_request_t *r = c->pending; r; r = r->next)
    if (!r->frame) request_fail_soon(r, DIAG_NOT_CONNECTED, 0, detail);
}

static void connection_lost(vm_client_t *c, diag_code_t diag, const char *detail) {
  int was_open = c->state == CONN_OPEN;
  c->wsi = NULL;
  c->state = CONN_IDLE;
  rxbuf_reset(&c->rx);
  if (c->moved && c->follow[0]) {
    /* DDS took over: what the VM already had may or may not have run, so
     * those fail; what was never written goes to DDS, at once. */
    c->moved = 0;
    fail_written_soon(c, "Dart Development Service took the VM service over while the call "
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
    fail_written_soon(c, "the connection to the VM service dropped while the call was in "
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
  fail_all_soon(c, diag, detail);
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
      rxbuf_reset(&c->rx);
      if (c->opt.on_state) c->opt.on_state(c->opt.arg, VM_CLIENT_CONNECTED, DIAG_NONE, "connected");
      if (c->out_head && c->wsi) lws_callback_on_writable(c->wsi);
      break;
    case LWS_CALLBACK_CLIENT_WRITEABLE: {
      if (wsi != c->wsi || c->state != CONN_OPEN) break;
      vm_request_t *r = c->out_head;
      if (!r) break;
      int n = lws_write(wsi, r->frame + LWS_PRE, r->frame_len, LWS_WRITE_TEXT);
      if (n < (int)r->frame_len) {
        log_warn("vm: write of %s failed", r->method);
        return -1; /* closes the connection; CLIENT_CLOSED fails the rest */
      }
      out_unlink(c, r);
      if (c->out_head) lws_callback_on_writable(wsi);
      break;
    }
    case LWS_CALLBACK_CLIENT_RECEIVE: {
      if (wsi != c->wsi) break;
      if (lws_frame_is_binary(wsi)) {
        /* Binary frames carry only heap snapshots, which we never ask for. */
        break;
      }
      int final = lws_is_final_fragment(wsi) && lws_remaining_packet_payload(wsi) == 0;
      switch (rxbuf_feed(&c->rx, in, len, final)) {
        case RX_MORE:
          break;
        case RX_MESSAGE:
          handle_message(c);
          rxbuf_reset(&c->rx);
          break;
        case RX_OVERSIZE:
        case RX_NOMEM:
          handle_oversize(c);
          rxbuf_reset(&c->rx);
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
  if (c->state != CONN_IDLE || c->probing || (!c->pending && !c->recheck)) return;
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
    fail_all_soon(c, DIAG_NOT_CONNECTED, err);
    return;
  }
  vm_uri_t u;
  if (vm_uri_parse(uri, 1, &u, err, sizeof err) != VM_URI_OK) {
    fail_all_soon(c, DIAG_NOT_CONNECTED, err);
    return;
  }
  c->dial = u;
  lws_log_remember_path(u.path);
  if (ensure_context(c) != 0) {
    fail_all_soon(c, DIAG_NOT_CONNECTED, "could not create the WebSocket context");
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
      fail_all_soon(c, DIAG_NOT_CONNECTED, "could not start a connection to the VM service");
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
  lws_set_log_level(log_get_level() >= LOG_TRACE
                        ? LLL_ERR | LLL_WARN | LLL_NOTICE | LLL_INFO | LLL_CLIENT
                        : LLL_ERR | LLL_WARN,
                    lws_log_emit);
  return c;
}

vm_request_t *vm_client_call(vm_client_t *c, const char *method, json_t *params, int timeout_ms,
                             vm_client_reply_cb cb, void *arg) {
  vm_request_t *r = calloc(1, sizeof *r);
  if (!r) {
    json_decref(params);
    return NULL;
  }
  r->client = c;
  r->cb = cb;
  r->arg = arg;
  r->timeout_ms = timeout_ms > 0 ? timeout_ms : c->opt.timeout_ms;
  snprintf(r->method, sizeof r->method, "%s", method ? method : "(null)");
  snprintf(r->id, sizeof r->id, "%lu", ++c->next_id);
  uv_timer_init(c->loop, &r->timer);
  c->open_handles++;
  r->next = c->pending;
  if (c->pending) c->pending->prev = r;
  c->pending = r;

  if (c->closing) {
    json_decref(params);
    request_fail_soon(r, DIAG_NOT_CONNECTED, 0, "the VM-service client is closing");
    return r;
  }
  if (!vm_client_method_allowed(method)) {
    json_decref(params);
    char detail[200];
    snprintf(detail, sizeof detail, "method %.60s is not on telescope's allowlist; not sent",
             r->method);
    request_fail_soon(r, DIAG_NOT_CONNECTED, 0, detail);
    return r;
  }
  json_t *msg = json_pack("{s:s, s:s, s:o, s:s}", "jsonrpc", "2.0", "method", method, "params",
                          params ? params : json_object(), "id", r->id);
  char *text = msg ? json_dumps(msg, JSON_COMPACT) : NULL;
  json_decref(msg);
  size_t tlen = text ? strlen(text) : 0;
  r->frame = text ? malloc(LWS_PRE + tlen) : NULL;
  if (!r->frame) {
    free(text);
    request_fail_soon(r, DIAG_NOT_CONNECTED, 0, "out of memory building the request");
    return r;
  }
  memcpy(r->frame + LWS_PRE, text, tlen);
  r->frame_len = tlen;
  free(text);
  r->out_prev = c->out_tail;
  if (c->out_tail)
    c->out_tail->out_next = r;
  else
    c->out_head = r;
  c->out_tail = r;
  uv_timer_start(&r->timer, on_request_timer, (uint64_t)r->timeout_ms, 0);
  if (c->state == CONN_OPEN && c->wsi)
    lws_callback_on_writable(c->wsi);
  else
    schedule_connect(c);
  return r;
}

void vm_client_cancel(vm_request_t *r) {
  if (r) request_finish(r, NULL);
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
  rxbuf_reset(&c->rx);
  fail_all_soon(c, DIAG_NOT_CONNECTED, why);
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
  while (c->pending) request_finish(c->pending, NULL);
  /* lws_context_destroy must not run inside an lws callback (we may be in
   * one): do it from the connect timer on the next turn. */
  uv_timer_stop(&c->connect_timer);
  uv_timer_start(&c->connect_timer, on_connect_timer, 0, 0);
}
