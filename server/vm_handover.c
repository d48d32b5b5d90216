#include "vm_handover.h"

#include <stdio.h>
#include <string.h>

#include "log.h"

int vm_handover_follow(vm_handover_t *c, const char *target, const char *why) {
  char abs[VM_URI_MAX], err[200];
  vm_uri_t u;
  if (target[0] == '/')
    snprintf(abs, sizeof abs, "%s://%s%s%s:%d%s", c->dial.secure ? "wss" : "ws",
             strchr(c->dial.host, ':') ? "[" : "", c->dial.host,
             strchr(c->dial.host, ':') ? "]" : "", c->dial.port, target);
  else
    snprintf(abs, sizeof abs, "%s", target);
  if (++c->hops > VM_HANDOVER_MAX_HOPS) {
    snprintf(c->follow_err, sizeof c->follow_err,
             "%s: more than %d hand-overs in a row; giving up", why, VM_HANDOVER_MAX_HOPS);
    return -1;
  }
  vm_uri_status_t st = vm_uri_parse(abs, c->allow_remote, &u, err, sizeof err);
  if (st != VM_URI_OK) {
    snprintf(c->follow_err, sizeof c->follow_err, "%s, but refused: %s", why, err);
    return -1;
  }
  snprintf(c->follow, sizeof c->follow, "%s", u.ws);
  c->follow_err[0] = '\0';
  log_info("vm: %s; following it", why);
  return 0;
}

static const char DWDS_FOUND_AT[] = "can be found at ";

/* The 403's body has been read (or could not be). DWDS's names DDS
 * (dart-lang/webdev dwds/lib/src/services/debug_service.dart, _wrapHandler:
 * "Cannot connect directly to the VM service as a Dart Development Service
 * (DDS) instance has taken control and can be found at $_ddsUri."); the VM
 * and DDS say "missing or invalid authentication code", DWDS "Incorrect auth
 * token" for a wrong token. */
int vm_handover_read_403(vm_handover_t *c, char *detail, size_t len) {
  char said[200];
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
    if (vm_handover_follow(c, target,
                           "the web debug service (DWDS) answered 403: a Dart Development Service "
                           "has taken control") == 0)
      return 1;
    snprintf(detail, len, "%s", c->follow_err);
    return 0;
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
    snprintf(detail, len,
             "the %s refused the WebSocket upgrade (HTTP 403: %s): the token in the URI "
             "is wrong or stale (the app restarted?)",
             c->peer, said);
  else if (said[0])
    snprintf(detail, len, "the %s refused the WebSocket upgrade (HTTP 403: %s)", c->peer,
             said);
  else
    snprintf(detail, len, "the %s refused the WebSocket upgrade (HTTP 403): wrong token or not a %s",
             c->peer, c->peer);
  return 0;
}

/* Reads the body of the 403 with a plain GET of the same URI. 0 when the
 * probe is under way (state stays CONNECTING; pending requests wait). */
int vm_probe_start(vm_handover_t *c, struct lws_context *ctx, void *opaque) {
  char hosthdr[300];
  struct lws_client_connect_info i;
  if (strchr(c->dial.host, ':'))
    snprintf(hosthdr, sizeof hosthdr, "[%s]:%d", c->dial.host, c->dial.port);
  else
    snprintf(hosthdr, sizeof hosthdr, "%s:%d", c->dial.host, c->dial.port);
  memset(&i, 0, sizeof i);
  i.context = ctx;
  i.address = c->dial.host;
  i.port = c->dial.port;
  i.path = c->dial.path;
  i.host = hosthdr;
  i.method = "GET";
  i.local_protocol_name = "telescope-vm";
  i.ssl_connection = c->dial.secure ? LCCSCF_USE_SSL : 0;
  i.opaque_user_data = opaque;
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

int vm_probe_callback(vm_handover_t *c, struct lws *wsi, int reason, void *in, size_t len, int *ended) {
  switch ((enum lws_callback_reasons)reason) {
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
      *ended = 1;
      return -1; /* one request: hang up */
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
    case LWS_CALLBACK_CLOSED_CLIENT_HTTP:
    case LWS_CALLBACK_WSI_DESTROY:
      *ended = 1;
      break;
    default:
      break;
  }
  return 0;
}
