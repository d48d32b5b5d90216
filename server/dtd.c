#include "dtd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtd_wire.h"
#include "log.h"
#include "vm_client.h"
#include "vm_uri.h"

struct dtd_look {
  dtd_t *d;
  dtd_look_cb cb;
  void *arg;
  vm_request_t *req; /* the one call in flight */
  dtd_look_t *next, *prev;
};

struct dtd {
  vm_client_t *client;
  int allow_remote;
  vm_uri_t uri;
  int has_uri;
  int verified;      /* this connection was checked: a DTD with ConnectedApp, subscribed */
  const char *state; /* the `dtd.state` of answers */
  json_t *apps;      /* [{"uri","name"?,"exposedUri"?}] */
  json_t *changes;   /* [{"event","name"?,"uri"}], oldest first */
  dtd_look_t *looks;
  void (*close_done)(void *arg);
  void *close_arg;
};

/* What this client may send (DESIGN 10): the check, the list, the stream. */
static int dtd_method_allowed(const char *m) {
  static const char *const ok[] = {"getVM", "getRegisteredServices", "streamListen",
                                   DTD_GET_VM_SERVICES};
  for (size_t i = 0; m && i < sizeof ok / sizeof *ok; i++)
    if (!strcmp(m, ok[i])) return 1;
  return 0;
}

static const char *get_uri(void *arg, char *err, size_t errlen) {
  dtd_t *d = arg;
  if (d->has_uri) return d->uri.ws;
  snprintf(err, errlen, "no Dart Tooling Daemon URI known");
  return NULL;
}

static void note_change(dtd_t *d, const char *event, const json_t *app) {
  json_t *c = json_pack("{s:s, s:O}", "event", event, "uri", json_object_get(app, "uri"));
  if (!c) return;
  if (json_object_get(app, "name")) json_object_set(c, "name", json_object_get(app, "name"));
  json_array_append_new(d->changes, c);
  while (json_array_size(d->changes) > DTD_MAX_CHANGES) json_array_remove(d->changes, 0);
}

static long find_app(const json_t *apps, const char *uri) {
  size_t i;
  json_t *a;
  json_array_foreach(apps, i, a) {
    if (!strcmp(json_string_value(json_object_get(a, "uri")), uri)) return (long)i;
  }
  return -1;
}

/* The ConnectedApp stream: dart-lang/sdk pkg/dtd_impl
 * lib/src/service/connected_app_service.dart sends both kinds to every
 * client, with {uri, exposedUri, name}. */
static void on_event(void *arg, const char *stream, json_t *params) {
  dtd_t *d = arg;
  json_t *app = NULL;
  (void)stream;
  dtd_event_t ev = dtd_wire_event(params, &app);
  if (ev == DTD_EV_OTHER) return;
  const char *uri = json_string_value(json_object_get(app, "uri"));
  long at = find_app(d->apps, uri);
  if (ev == DTD_EV_REGISTERED && at < 0) json_array_append(d->apps, app);
  if (ev == DTD_EV_UNREGISTERED && at >= 0) json_array_remove(d->apps, (size_t)at);
  note_change(d, ev == DTD_EV_REGISTERED ? "registered" : "unregistered", app);
  log_info("dtd: an app %s", ev == DTD_EV_REGISTERED ? "registered" : "unregistered");
  json_decref(app);
}

static void on_state(void *arg, vm_client_state_t st, diag_code_t diag, const char *detail) {
  dtd_t *d = arg;
  (void)diag;
  (void)detail;
  /* A new connection is checked and subscribed again. */
  if (st != VM_CLIENT_CONNECTED) d->verified = 0;
}

dtd_t *dtd_new(uv_loop_t *loop, int call_timeout_ms, int allow_remote) {
  dtd_t *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  d->allow_remote = allow_remote;
  d->state = "unknown";
  d->apps = json_array();
  d->changes = json_array();
  vm_client_options_t o = {get_uri,
                           on_event,
                           on_state,
                           d,
                           call_timeout_ms,
                           allow_remote,
                           "Dart Tooling Daemon",
                           dtd_method_allowed};
  if (d->apps && d->changes) d->client = vm_client_new(loop, &o);
  if (!d->client) {
    json_decref(d->apps);
    json_decref(d->changes);
    free(d);
    return NULL;
  }
  return d;
}

int dtd_set_uri(dtd_t *d, const char *input, char *err, size_t errlen) {
  vm_uri_t u;
  if (dtd_wire_parse_uri(input, d->allow_remote, &u, err, errlen) != VM_URI_OK)
    return DIAG_DTD_UNUSABLE;
  if (d->has_uri && !strcmp(u.ws, d->uri.ws)) return 0;
  int had = d->has_uri;
  d->uri = u;
  d->has_uri = 1;
  d->verified = 0;
  d->state = "unknown";
  json_array_clear(d->apps);
  json_array_clear(d->changes);
  if (had) vm_client_disconnect(d->client, "the Dart Tooling Daemon URI changed");
  return 0;
}

int dtd_has_uri(const dtd_t *d) {
  return d->has_uri;
}
const json_t *dtd_apps(const dtd_t *d) {
  return d->apps;
}

/* ---- looks ---- */

static void look_unlink(dtd_look_t *l) {
  if (l->prev)
    l->prev->next = l->next;
  else
    l->d->looks = l->next;
  if (l->next) l->next->prev = l->prev;
}

static void look_end(dtd_look_t *l, diag_code_t diag, const char *detail) {
  look_unlink(l);
  if (diag != DIAG_NONE) log_info("dtd: %s", detail);
  l->cb(l->arg, diag, detail);
  free(l);
}

static void look_fail(dtd_look_t *l, const char *state, const char *detail) {
  l->d->state = state;
  look_end(l, DIAG_DTD_UNUSABLE, detail);
}

/* A reply that never came is about reaching the daemon. */
static int failed_to_reach(dtd_look_t *l, const vm_client_reply_t *r) {
  if (r->diag == DIAG_NONE) return 0;
  look_fail(l, r->diag == DIAG_CONNECTION_REJECTED ? "refused" : "unreachable", r->detail);
  return 1;
}

static void on_apps(void *arg, const vm_client_reply_t *r) {
  dtd_look_t *l = arg;
  dtd_t *d = l->d;
  l->req = NULL;
  if (failed_to_reach(l, r)) return;
  json_t *apps = r->result ? dtd_wire_apps(r->result) : NULL;
  if (!apps) {
    look_fail(l, "unusable",
              r->error ? r->detail : "ConnectedApp.getVmServices answered no VmServicesResponse");
    return;
  }
  json_decref(d->apps);
  d->apps = apps;
  d->state = "connected";
  look_end(l, DIAG_NONE, NULL);
}

static void list_apps(dtd_look_t *l) {
  l->req = vm_client_call(l->d->client, DTD_GET_VM_SERVICES, NULL, 0, on_apps, l);
  if (!l->req) look_fail(l, "unusable", "out of memory");
}

static void on_services(void *arg, const vm_client_reply_t *r) {
  dtd_look_t *l = arg;
  dtd_t *d = l->d;
  l->req = NULL;
  if (failed_to_reach(l, r)) return;
  if (!r->result || !dtd_wire_offers_connected_app(r->result)) {
    /* dart_mcp_server checks the same before it relies on the service. */
    look_fail(l, "no_connected_app",
              r->result ? "the Dart Tooling Daemon does not offer the ConnectedApp service "
                          "(getRegisteredServices lists no ConnectedApp.getVmServices): its Dart "
                          "SDK is too old to list the running apps"
                        : "the far end answered getVM with an error but does not know "
                          "getRegisteredServices: not a Dart Tooling Daemon that lists apps");
    return;
  }
  d->verified = 1;
  /* Events flow from now on; 103 (already subscribed) is fine too. */
  vm_client_call(d->client, "streamListen", json_pack("{s:s}", "streamId", DTD_STREAM), 0, NULL,
                 NULL);
  list_apps(l);
}

static void on_getvm(void *arg, const vm_client_reply_t *r) {
  dtd_look_t *l = arg;
  l->req = NULL;
  if (failed_to_reach(l, r)) return;
  if (r->result) {
    /* A VM service always answers getVM; the daemon answers with an error:
     * -32601 (what dart_mcp_server's connect checks), or -32000 from a newer
     * dtd_impl (vm_isolate.c maybe_dtd). */
    look_fail(l, "not_dtd",
              "this URI is a Dart VM service, not the Dart Tooling Daemon: pass it as "
              "vmServiceUri (or --vm-service-uri), and a DTD URI (from `flutter run "
              "--print-dtd`, the IDE or `dart tooling-daemon`) as dtdUri");
    return;
  }
  l->req = vm_client_call(l->d->client, "getRegisteredServices", NULL, 0, on_services, l);
  if (!l->req) look_fail(l, "unusable", "out of memory");
}

dtd_look_t *dtd_look(dtd_t *d, dtd_look_cb cb, void *arg) {
  dtd_look_t *l = calloc(1, sizeof *l);
  if (!l) return NULL;
  l->d = d;
  l->cb = cb;
  l->arg = arg;
  l->next = d->looks;
  if (d->looks) d->looks->prev = l;
  d->looks = l;
  if (d->verified)
    list_apps(l);
  else if (!(l->req = vm_client_call(d->client, "getVM", NULL, 0, on_getvm, l)))
    look_fail(l, "unusable", "out of memory");
  return l;
}

void dtd_look_cancel(dtd_look_t *l) {
  if (!l) return;
  if (l->req) vm_client_cancel(l->req);
  look_unlink(l);
  free(l);
}

/* ---- answers ---- */

/* An app's URI as answers show it: normalised, token redacted. */
static void redact_app(const char *uri, char *out, size_t n) {
  vm_uri_t u;
  if (!uri || vm_uri_parse(uri, 1, &u, NULL, 0) != VM_URI_OK)
    snprintf(out, n, "\xe2\x80\xa6redacted\xe2\x80\xa6");
  else
    vm_uri_redact(u.ws, out, n);
}

static json_t *redacted(const char *uri) {
  char out[VM_URI_MAX];
  redact_app(uri, out, sizeof out);
  return json_string(out);
}

const char *dtd_find_app(const dtd_t *d, const char *shown) {
  char out[VM_URI_MAX];
  size_t i;
  json_t *a;
  json_array_foreach(d->apps, i, a) {
    const char *uri = json_string_value(json_object_get(a, "uri"));
    redact_app(uri, out, sizeof out);
    if (shown && !strcmp(out, shown)) return uri;
  }
  return NULL;
}

json_t *dtd_to_json(const dtd_t *d, const char *in_use) {
  char where[VM_URI_MAX];
  vm_uri_redact(d->uri.ws, where, sizeof where);
  json_t *o = json_pack("{s:s, s:s, s:[], s:[]}", "uri", d->has_uri ? where : "", "state", d->state,
                        "apps", "changes");
  json_t *apps = json_object_get(o, "apps"), *changes = json_object_get(o, "changes"), *a;
  size_t i;
  json_array_foreach(d->apps, i, a) {
    const char *uri = json_string_value(json_object_get(a, "uri"));
    json_t *e = json_pack("{s:o}", "vmServiceUri", redacted(uri));
    if (json_object_get(a, "name")) json_object_set(e, "name", json_object_get(a, "name"));
    vm_uri_t u;
    if (in_use && *in_use && vm_uri_parse(uri, 1, &u, NULL, 0) == VM_URI_OK &&
        !strcmp(u.ws, in_use))
      json_object_set_new(e, "inUse", json_true());
    json_array_append_new(apps, e);
  }
  json_array_foreach(d->changes, i, a) {
    json_t *e = json_pack("{s:O, s:o}", "event", json_object_get(a, "event"), "vmServiceUri",
                          redacted(json_string_value(json_object_get(a, "uri"))));
    if (json_object_get(a, "name")) json_object_set(e, "name", json_object_get(a, "name"));
    json_array_append_new(changes, e);
  }
  return o;
}

static void client_closed(void *arg) {
  dtd_t *d = arg;
  void (*done)(void *) = d->close_done;
  void *darg = d->close_arg;
  json_decref(d->apps);
  json_decref(d->changes);
  free(d);
  if (done) done(darg);
}

void dtd_close(dtd_t *d, void (*done)(void *arg), void *arg) {
  if (!d) {
    if (done) done(arg);
    return;
  }
  while (d->looks) dtd_look_cancel(d->looks);
  d->close_done = done;
  d->close_arg = arg;
  vm_client_close(d->client, client_closed, d);
}
