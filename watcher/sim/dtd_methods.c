/* telescope-dtd's methods, as dart-lang/sdk pkg/dtd_impl answers them:
 * lib/src/dtd_client.dart (streamListen, streamCancel, postEvent,
 * registerService, the fallback for unknown methods), lib/src/service/
 * connected_app_service.dart (ConnectedApp.*), and json_rpc_2 (the Peer's
 * framing and errors). Sources and the versions read: docs/flutter-apis.md,
 * "The Dart Tooling Daemon". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtd_daemon.h"
#include "dtd_methods.h"

/* pkg/dtd/lib/src/rpc_error_codes.dart. kConnectionFailed's number is not in
 * the versions read (it came later than 143): 144 is our guess, used only for
 * a registration whose VM service cannot be reached. */
#define K_METHOD_NOT_FOUND -32601
#define K_INVALID_PARAMS -32602
#define K_INVALID_REQUEST -32600
#define K_PARSE_ERROR -32700
#define K_SERVER_ERROR -32000 /* json_rpc_2 error_code.SERVER_ERROR: a handler threw */
#define K_STREAM_ALREADY_SUBSCRIBED 103
#define K_STREAM_NOT_SUBSCRIBED 104
#define K_SERVICE_ALREADY_REGISTERED 111
#define K_SERVICE_METHOD_ALREADY_REGISTERED 132
#define K_PERMISSION_DENIED 142
#define K_CONNECTION_FAILED 144

#define CONNECTED_APP "ConnectedApp"

static json_t *success(void) {
  return json_pack("{s:s}", "type", "Success");
}

/* json_rpc_2's Parameters: a missing or mistyped parameter is -32602 with
 * this message. NULL (and answered) when absent. */
static const char *need_string(dtd_conn_t *c, json_t *req, const char *name) {
  json_t *v = json_object_get(json_object_get(req, "params"), name);
  const char *method = json_string_value(json_object_get(req, "method"));
  char msg[300];
  if (json_is_string(v)) return json_string_value(v);
  if (v)
    snprintf(msg, sizeof msg, "Parameter \"%s\" for method \"%s\" must be a string, but was %s.",
             name, method, json_is_null(v) ? "null" : "not a string");
  else
    snprintf(msg, sizeof msg, "Request for method \"%s\" is missing required parameter \"%s\".",
             method, name);
  dtd_reply_error(c, req, K_INVALID_PARAMS, msg, NULL);
  return NULL;
}

static const char *opt_string(json_t *req, const char *name) {
  return json_string_value(json_object_get(json_object_get(req, "params"), name));
}

/* ---- core methods (dtd_client.dart) ---- */

static void stream_listen(dtd_conn_t *c, json_t *req) {
  const char *id = need_string(c, req, "streamId");
  char details[200];
  if (!id) return;
  if (json_object_get(c->streams, id)) {
    snprintf(details, sizeof details, "The stream '%s' is already subscribed", id);
    dtd_reply_error(c, req, K_STREAM_ALREADY_SUBSCRIBED, "Stream already subscribed",
                    json_pack("{s:s}", "details", details));
    return;
  }
  json_object_set_new(c->streams, id, json_true());
  dtd_reply(c, req, success());
}

static void stream_cancel(dtd_conn_t *c, json_t *req) {
  const char *id = need_string(c, req, "streamId");
  char details[200];
  if (!id) return;
  if (!json_object_get(c->streams, id)) {
    snprintf(details, sizeof details, "Client is not listening to '%s'", id);
    dtd_reply_error(c, req, K_STREAM_NOT_SUBSCRIBED, "Stream not subscribed",
                    json_pack("{s:s}", "details", details));
    return;
  }
  json_object_del(c->streams, id);
  dtd_reply(c, req, success());
}

static void post_event(dtd_conn_t *c, json_t *req) {
  const char *stream = need_string(c, req, "streamId"), *kind;
  json_t *data;
  if (!stream || !(kind = need_string(c, req, "eventKind"))) return;
  data = json_object_get(json_object_get(req, "params"), "eventData");
  if (!json_is_object(data)) {
    dtd_reply_error(c, req, K_INVALID_PARAMS, "Parameter \"eventData\" must be a Map.", NULL);
    return;
  }
  dtd_notify(c->d, stream, kind, json_incref(data), 0);
  dtd_reply(c, req, success());
}

static void register_service(dtd_conn_t *c, json_t *req) {
  const char *svc = need_string(c, req, "service"), *m;
  json_t *caps = json_object_get(json_object_get(req, "params"), "capabilities");
  char details[300];
  if (!svc || !(m = need_string(c, req, "method"))) return;
  int taken = !strcmp(svc, CONNECTED_APP) && !c->d->no_connected_app;
  for (dtd_conn_t *o = c->d->conns; o && !taken; o = o->next)
    if (o != c && json_object_get(o->services, svc)) taken = 2;
  if (taken) {
    snprintf(details, sizeof details,
             taken == 1 ? "Service '%s' is already registered as a DTD internal service."
                        : "Service '%s' is already registered by another client. Only 1 client at "
                          "a time may register methods to a service.",
             svc);
    dtd_reply_error(c, req, K_SERVICE_ALREADY_REGISTERED, "Service already registered",
                    json_pack("{s:s}", "details", details));
    return;
  }
  json_t *methods = json_object_get(c->services, svc);
  if (!methods) json_object_set_new(c->services, svc, methods = json_object());
  if (json_object_get(methods, m)) {
    snprintf(details, sizeof details,
             "%s has already been registered for the %s service by this client.", m, svc);
    dtd_reply_error(c, req, K_SERVICE_METHOD_ALREADY_REGISTERED,
                    "The service method has already been registered",
                    json_pack("{s:s}", "details", details));
    return;
  }
  json_object_set(methods, m, json_is_object(caps) ? caps : json_null());
  json_t *ev = json_pack("{s:s, s:s}", "service", svc, "method", m);
  if (json_is_object(caps)) json_object_set(ev, "capabilities", caps);
  dtd_notify(c->d, "Service", "ServiceRegistered", ev, 0);
  dtd_reply(c, req, success());
}

/* RegisteredServicesResponse, in the order pkg/dtd's dart_tooling_daemon_test
 * saw from a real daemon (less the FileSystem and UnifiedAnalytics
 * services, which this stand-in does not have). */
static void get_registered_services(dtd_conn_t *c, json_t *req) {
  json_t *dtd = json_pack("[s,s,s,s,s]", "streamListen", "streamCancel", "postEvent",
                          "registerService", "getRegisteredServices");
  if (!c->d->no_connected_app) {
    json_array_append_new(dtd, json_string(CONNECTED_APP ".registerVmService"));
    json_array_append_new(dtd, json_string(CONNECTED_APP ".unregisterVmService"));
    json_array_append_new(dtd, json_string(CONNECTED_APP ".getVmServices"));
  }
  json_t *clients = json_array();
  for (dtd_conn_t *o = c->d->conns; o; o = o->next) {
    const char *svc, *m;
    json_t *methods, *caps;
    json_object_foreach(o->services, svc, methods) {
      json_t *list = json_array();
      json_object_foreach(methods, m, caps) {
        json_t *e = json_pack("{s:s}", "name", m);
        if (json_is_object(caps)) json_object_set(e, "capabilities", caps);
        json_array_append_new(list, e);
      }
      json_array_append_new(clients, json_pack("{s:s, s:o}", "name", svc, "methods", list));
    }
  }
  dtd_reply(c, req,
            json_pack("{s:s, s:o, s:o}", "type", "RegisteredServicesResponse", "dtdServices", dtd,
                      "clientServices", clients));
}

/* ---- ConnectedApp (connected_app_service.dart) ---- */

static json_t *app_info(const dtd_app_t *a, int with_nulls) {
  json_t *o = json_pack("{s:s}", "uri", a->uri);
  if (a->exposed_uri || with_nulls)
    json_object_set_new(o, "exposedUri",
                        a->exposed_uri ? json_string(a->exposed_uri) : json_null());
  if (a->name || with_nulls)
    json_object_set_new(o, "name", a->name ? json_string(a->name) : json_null());
  return o;
}

/* The event payload carries exposedUri and name even when null
 * (pkg/dtd/test/connected_app_service_test.dart); it goes to every client,
 * listening or not: register() subscribes each client to the updates. */
static void announce(dtd_app_t *a, const char *kind) {
  dtd_notify(a->d, CONNECTED_APP, kind, app_info(a, 1), 1);
}

static void app_free(dtd_app_t *a) {
  if (a->watch) dtd_wsc_close(a->watch);
  json_decref(a->wait_req);
  free(a->uri);
  free(a->exposed_uri);
  free(a->name);
  free(a);
}

static void app_unlink(dtd_app_t *a) {
  for (dtd_app_t **pp = &a->d->apps; *pp; pp = &(*pp)->next)
    if (*pp == a) {
      *pp = a->next;
      return;
    }
}

static void watch_open(void *arg) {
  dtd_app_t *a = arg;
  a->ready = 1;
  if (a->d->verbose)
    fprintf(stderr, "telescope-dtd: registered %s\n", a->name ? a->name : "(no name)");
  announce(a, "VmServiceRegistered");
  dtd_reply(a->waiter, a->wait_req, success());
  a->waiter = NULL;
  json_decref(a->wait_req);
  a->wait_req = NULL;
}

/* The VM service went away (vmService.onDone), or could not be reached. */
static void watch_closed(void *arg, const char *why) {
  dtd_app_t *a = arg;
  char msg[600];
  a->watch = NULL;
  app_unlink(a);
  if (a->ready) {
    if (a->d->verbose)
      fprintf(stderr, "telescope-dtd: %s went away: unregistered\n", a->name ? a->name : "an app");
    announce(a, "VmServiceUnregistered");
  } else {
    snprintf(msg, sizeof msg, "Error connecting to VM service at %s.\n%s", a->uri, why);
    dtd_reply_error(a->waiter, a->wait_req, K_CONNECTION_FAILED, "Connection failed",
                    json_pack("{s:s}", "message", msg));
  }
  app_free(a);
}

static int secret_ok(dtd_conn_t *c, json_t *req) {
  const char *s = need_string(c, req, "secret");
  if (!s) return 0;
  if (c->d->unrestricted || !strcmp(s, c->d->secret)) return 1;
  dtd_reply_error(c, req, K_PERMISSION_DENIED, "Permission denied", NULL);
  return 0;
}

static dtd_app_t *find_app(dtd_daemon_t *d, const char *uri) {
  for (dtd_app_t *a = d->apps; a; a = a->next)
    if (!strcmp(a->uri, uri)) return a;
  return NULL;
}

static void register_vm_service(dtd_conn_t *c, json_t *req) {
  const char *uri, *e = opt_string(req, "exposedUri"), *n = opt_string(req, "name");
  char err[200];
  if (!secret_ok(c, req) || !(uri = need_string(c, req, "uri"))) return;
  if (find_app(c->d, uri)) { /* already known: nothing to do */
    dtd_reply(c, req, success());
    return;
  }
  dtd_app_t *a = calloc(1, sizeof *a);
  if (!a) return;
  a->d = c->d;
  a->uri = strdup(uri);
  a->exposed_uri = e ? strdup(e) : NULL;
  a->name = n ? strdup(n) : NULL;
  a->waiter = c;
  a->wait_req = json_incref(req);
  dtd_app_t **pp = &c->d->apps;
  while (*pp) pp = &(*pp)->next;
  *pp = a;
  dtd_wsc_cbs_t cbs = {watch_open, NULL, watch_closed, a};
  a->watch = dtd_wsc_open(c->d->ctx, c->d->vhost, uri, &cbs, err, sizeof err);
  if (!a->watch) watch_closed(a, err);
}

static void unregister_vm_service(dtd_conn_t *c, json_t *req) {
  const char *uri;
  if (!secret_ok(c, req) || !(uri = need_string(c, req, "uri"))) return;
  dtd_app_t *a = find_app(c->d, uri);
  if (a && a->ready) {
    app_unlink(a);
    announce(a, "VmServiceUnregistered");
    app_free(a);
  }
  dtd_reply(c, req, success());
}

static void get_vm_services(dtd_conn_t *c, json_t *req) {
  json_t *list = json_array();
  for (dtd_app_t *a = c->d->apps; a; a = a->next)
    if (a->ready) json_array_append_new(list, app_info(a, 0));
  dtd_reply(c, req, json_pack("{s:s, s:o}", "type", "VmServicesResponse", "vmServices", list));
}

/* ---- dispatch ---- */

static void handle_request(dtd_conn_t *c, json_t *req) {
  const char *m = json_string_value(json_object_get(req, "method"));
  char msg[300];
  if (!m) {
    /* A response to us (we send no requests) or nonsense. */
    if (!json_object_get(req, "result") && !json_object_get(req, "error"))
      dtd_reply_error(c, req, K_INVALID_REQUEST, "Request must contain a \"method\" key.", NULL);
    return;
  }
  if (!strcmp(m, "streamListen")) return stream_listen(c, req);
  if (!strcmp(m, "streamCancel")) return stream_cancel(c, req);
  if (!strcmp(m, "postEvent")) return post_event(c, req);
  if (!strcmp(m, "registerService")) return register_service(c, req);
  if (!strcmp(m, "getRegisteredServices")) return get_registered_services(c, req);
  if (!c->d->no_connected_app) {
    if (!strcmp(m, CONNECTED_APP ".registerVmService")) return register_vm_service(c, req);
    if (!strcmp(m, CONNECTED_APP ".unregisterVmService")) return unregister_vm_service(c, req);
    if (!strcmp(m, CONNECTED_APP ".getVmServices")) return get_vm_services(c, req);
  }
  /* The fallback takes every other name: a Service.method call goes to the
   * client that registered it (not forwarded by this stand-in). A newer
   * dtd_impl cuts the name at its dot first, so one without a dot (getVM)
   * makes _fallback's substring(0, indexOf('.')) throw a RangeError, which
   * json_rpc_2's Server answers as SERVER_ERROR (-32000) with data {full,
   * stack} (dtd_client.dart _fallback at 15356d57; json_rpc_2 server.dart).
   * The older one (--no-connected-app) looked the whole name up: -32601
   * (at 03f797a8). */
  if (!strchr(m, '.') && !c->d->no_connected_app) {
    snprintf(msg, sizeof msg, "RangeError (end): Invalid value: Not in inclusive range 0..%zu: -1",
             strlen(m));
    dtd_reply_error(c, req, K_SERVER_ERROR, msg,
                    json_pack("{s:s, s:s}", "full", msg, "stack",
                              "dart:core  String.substring\n"
                              "package:dtd_impl/src/dtd_client.dart  DTDClient._fallback\n"));
    return;
  }
  snprintf(msg, sizeof msg, "Unknown service method: %s", m);
  dtd_reply_error(c, req, K_METHOD_NOT_FOUND, msg, NULL);
}

/* One whole text message from c. */
static void handle_message(dtd_conn_t *c, const char *text, size_t len) {
  json_error_t jerr;
  json_t *msg = json_loadb(text, len, 0, &jerr);
  if (!msg) {
    char m[300];
    snprintf(m, sizeof m, "Invalid JSON: %s", jerr.text);
    json_t *fake = json_pack("{s:n}", "id"); /* json_rpc_2 answers a parse error with id null */
    dtd_reply_error(c, fake, K_PARSE_ERROR, m, json_pack("{s:s%}", "request", text, len));
    json_decref(fake);
    return;
  }
  if (json_is_array(msg)) { /* a batch: each element on its own */
    size_t i;
    json_t *e;
    json_array_foreach(msg, i, e) handle_request(c, e);
  } else if (json_is_object(msg)) {
    handle_request(c, msg);
  } else {
    json_t *fake = json_pack("{s:n}", "id");
    dtd_reply_error(c, fake, K_INVALID_REQUEST, "Request must be an Array or an Object.", NULL);
    json_decref(fake);
  }
  json_decref(msg);
}

/* c is going: its services are dropped, registrations it waits on forget it. */
static void conn_gone(dtd_conn_t *c) {
  const char *svc, *m;
  json_t *methods, *caps;
  for (dtd_app_t *a = c->d->apps; a; a = a->next)
    if (a->waiter == c) a->waiter = NULL;
  json_object_foreach(c->services, svc, methods) {
    json_object_foreach(methods, m, caps) {
      (void)caps;
      dtd_notify(c->d, "Service", "ServiceUnregistered",
                 json_pack("{s:s, s:s}", "service", svc, "method", m), 0);
    }
  }
}

/* Closes the watches and frees every app (shutdown). */
static void apps_free(dtd_daemon_t *d) {
  while (d->apps) {
    dtd_app_t *a = d->apps;
    d->apps = a->next;
    app_free(a);
  }
}

void dtd_methods_attach(dtd_daemon_t *d) {
  d->on_message = handle_message;
  d->on_conn_gone = conn_gone;
  d->on_stop = apps_free;
}
