#include "vm_isolate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "vm_app_impl.h"
#include "vm_call.h"

static void app_maybe_free(vm_app_t *app);

static void emit(vm_app_t *app, vm_app_event_t ev) {
  if (app->on_event && !app->closing) app->on_event(app->event_arg, ev);
}

/* ---- pure helpers ---- */

/* Which pauseEvent kinds stop extension calls. Every Pause* kind queues
 * calls on the native VM (vmservice.md 3.7). DWDS reports PauseStart for a
 * page that is in fact running, and runs extensions through
 * Runtime.evaluate, so on web PauseStart does not count. */
static int kind_is_paused(const char *kind, runtime_t rt) {
  if (!kind || strncmp(kind, "Pause", 5) != 0) return 0;
  if (rt == RUNTIME_WEB && strcmp(kind, "PauseStart") == 0) return 0;
  return strcmp(kind, "PauseStart") == 0 || strcmp(kind, "PauseExit") == 0 ||
         strcmp(kind, "PauseBreakpoint") == 0 || strcmp(kind, "PauseInterrupted") == 0 ||
         strcmp(kind, "PauseException") == 0 || strcmp(kind, "PausePostRequest") == 0;
}

static const char *str_or(const char *s) {
  return s ? s : "";
}

static int lists_extension(json_t *isolate, const char *ext) {
  size_t i;
  json_t *v;
  json_array_foreach(json_object_get(isolate, "extensionRPCs"), i, v) {
    if (json_is_string(v) && strcmp(json_string_value(v), ext) == 0) return 1;
  }
  return 0;
}

/* A Flutter isolate registers the framework's and dart:ui's extensions in
 * debug and profile (ext.flutter.*, ext.ui.window.*; only some of them in
 * debug only): a plain Dart isolate registers none. */
static int lists_flutter(json_t *isolate) {
  size_t i;
  json_t *v;
  json_array_foreach(json_object_get(isolate, "extensionRPCs"), i, v) {
    const char *e = json_string_value(v);
    if (e && (!strncmp(e, "ext.flutter.", 12) || !strncmp(e, "ext.ui.", 7))) return 1;
  }
  return 0;
}

/* ---- the URI ---- */

/* Fills app->uri_ws from the explicit URI or the file. Returns 0, or the
 * diag to fail with (err filled). */
static int resolve_uri(vm_app_t *app, char *err, size_t errlen) {
  if (app->uri_status != VM_URI_OK) {
    snprintf(err, errlen, "%s", app->uri_err);
    return app->uri_status == VM_URI_REMOTE ? DIAG_CONNECTION_REJECTED : DIAG_NOT_CONNECTED;
  }
  if (app->uri_set) return 0;
  if (!app->uri_file) {
    snprintf(err, errlen,
             "no VM-service URI: pass vmServiceUri (the URI `flutter run` prints) or "
             "--vmservice-out-file");
    return DIAG_NOT_CONNECTED;
  }
  FILE *f = fopen(app->uri_file, "r");
  if (!f) {
    snprintf(err, errlen, "cannot read the VM-service URI file (is the app running?)");
    return DIAG_NOT_CONNECTED;
  }
  char *buf = malloc(URI_FILE_MAX + 1);
  if (!buf) {
    fclose(f);
    snprintf(err, errlen, "out of memory reading the VM-service URI file");
    return DIAG_NOT_CONNECTED;
  }
  size_t n = fread(buf, 1, URI_FILE_MAX, f);
  fclose(f);
  buf[n] = '\0';
  vm_uri_t u;
  char perr[256];
  int st = vm_uri_parse(buf, app->allow_remote, &u, perr, sizeof perr);
  free(buf);
  if (st != VM_URI_OK) {
    snprintf(err, errlen, "VM-service URI file: %s", perr);
    return st == VM_URI_REMOTE ? DIAG_CONNECTION_REJECTED : DIAG_NOT_CONNECTED;
  }
  if (strcmp(u.ws, app->uri_ws) != 0) {
    snprintf(app->uri_ws, sizeof app->uri_ws, "%s", u.ws);
    app->vm_version[0] = '\0';
    app->runtime = RUNTIME_UNKNOWN;
  }
  return 0;
}

static const char *client_get_uri(void *arg, char *err, size_t errlen) {
  vm_app_t *app = arg;
  return resolve_uri(app, err, errlen) == 0 ? app->uri_ws : NULL;
}

/* ---- sync: learn the VM, pick the isolate ---- */

static void start_sync(vm_app_t *app);

static void sync_cancel_requests(vm_app_t *app) {
  if (app->sync_getvm) vm_client_cancel(app->sync_getvm);
  if (app->sync_version) vm_client_cancel(app->sync_version);
  app->sync_getvm = app->sync_version = NULL;
  for (int i = 0; i < app->slots_used; i++) {
    if (app->slots[i].req) vm_client_cancel(app->slots[i].req);
    json_decref(app->slots[i].isolate);
    app->slots[i].req = NULL;
    app->slots[i].isolate = NULL;
  }
  app->slots_used = app->slots_left = 0;
}

static void sync_fail(vm_app_t *app, diag_code_t diag, const char *detail) {
  sync_cancel_requests(app);
  app->sync = SYNC_NONE;
  app->sync_again = 0;
  vm_calls_fail_waiting(app, diag, detail);
}

static void set_pause(vm_app_t *app, const char *kind) {
  snprintf(app->pause_kind, sizeof app->pause_kind, "%s", kind ? kind : "");
  app->paused = kind_is_paused(kind, app->runtime);
}

static void sync_pick(vm_app_t *app) {
  json_t *pick = NULL, *main_iso = NULL, *first = NULL;
  for (int i = 0; i < app->slots_used; i++) {
    json_t *iso = app->slots[i].isolate;
    const char *type = json_string_value(json_object_get(iso, "type"));
    if (!iso || !type || strcmp(type, "Isolate") != 0) continue; /* Sentinel: gone */
    if (!first) first = iso;
    const char *name = json_string_value(json_object_get(iso, "name"));
    if (!main_iso && name && (strcmp(name, "main") == 0 || strcmp(name, "main()") == 0))
      main_iso = iso;
    if (!pick && lists_extension(iso, VM_APP_WATCHER_EXTENSION)) pick = iso;
  }
  /* DWDS lists extensionRPCs from what it last asked the page (in
   * WebSocket mode nothing until asked), so on web absence proves nothing. */
  app->watcher = pick                         ? WATCHER_PRESENT
                 : app->runtime == RUNTIME_WEB ? WATCHER_UNKNOWN
                                               : WATCHER_MISSING_;
  if (!pick) pick = main_iso ? main_iso : first;
  char old[128];
  snprintf(old, sizeof old, "%s", app->isolate_id[0] ? app->isolate_id : app->prev_isolate_id);
  if (pick) {
    snprintf(app->isolate_id, sizeof app->isolate_id, "%s",
             str_or(json_string_value(json_object_get(pick, "id"))));
    snprintf(app->isolate_name, sizeof app->isolate_name, "%s",
             str_or(json_string_value(json_object_get(pick, "name"))));
    set_pause(app, json_string_value(json_object_get(json_object_get(pick, "pauseEvent"), "kind")));
    app->flutter = lists_flutter(pick);
    app->driver = lists_extension(pick, VM_APP_DRIVER_EXTENSION);
  } else {
    app->driver = 0;
    app->isolate_id[0] = app->isolate_name[0] = '\0';
    app->flutter = 0;
    set_pause(app, NULL);
  }
  sync_cancel_requests(app);
  int restarted = old[0] && app->isolate_id[0] && strcmp(old, app->isolate_id) != 0;
  if (app->isolate_id[0]) app->prev_isolate_id[0] = '\0';
  app->sync = SYNC_READY;
  log_debug("vm: isolate %s (%s), watcher %s, %s", app->isolate_id, app->isolate_name,
            app->watcher == WATCHER_PRESENT ? "present" : "missing",
            app->paused ? app->pause_kind : "running");
  if (restarted) emit(app, VM_APP_EV_RESTARTED);
  if (app->sync_again) {
    app->sync_again = 0;
    start_sync(app);
    return;
  }
  vm_calls_dispatch(app);
}

static void on_sync_isolate(void *arg, const vm_client_reply_t *r) {
  sync_slot_t *slot = arg;
  vm_app_t *app = slot->app;
  slot->req = NULL;
  if (r->diag != DIAG_NONE) {
    sync_fail(app, r->diag, r->detail);
    return;
  }
  if (r->result) slot->isolate = json_incref(r->result);
  if (--app->slots_left == 0) sync_pick(app);
}

/* getVM failed there: a Dart Tooling Daemon answers getRegisteredServices
 * (dart-lang/sdk pkg/dtd), so a DTD URI passed as vmServiceUri is named. */
static void on_not_vm(void *arg, const vm_client_reply_t *r) {
  vm_app_t *app = arg;
  const char *type = json_string_value(json_object_get(r->result, "type"));
  app->sync_getvm = NULL;
  sync_fail(app, DIAG_CONNECTION_REJECTED,
            type && !strcmp(type, "RegisteredServicesResponse")
                ? "this URI is the Dart Tooling Daemon's, not a VM service's: pass it as dtdUri "
                  "(or --dtd-uri) and telescope finds the app it lists"
                : "the far end is not a Dart VM service: getVM is unknown or failed there");
}

/* A Dart Tooling Daemon's answers to getVM: -32601 from an older dtd_impl,
 * -32000 from a newer one, whose fallback handler cuts the name at its dot
 * and throws a RangeError on a name without one (dart-lang/sdk
 * pkg/dtd_impl/lib/src/dtd_client.dart `_fallback`), which json_rpc_2
 * answers as SERVER_ERROR. A VM service never answers getVM either way. */
static int maybe_dtd(const vm_client_reply_t *r) {
  return r->diag == DIAG_NONE && !r->result &&
         (r->rpc_code == RPC_METHOD_NOT_FOUND || r->rpc_code == RPC_SERVER_ERROR);
}

static void on_sync_getvm(void *arg, const vm_client_reply_t *r) {
  vm_app_t *app = arg;
  app->sync_getvm = NULL;
  if (maybe_dtd(r)) {
    app->sync_getvm = vm_client_call(app->client, "getRegisteredServices", NULL, 0, on_not_vm, app);
    return;
  }
  if (r->diag != DIAG_NONE || !r->result) {
    sync_fail(app, r->diag != DIAG_NONE ? r->diag : DIAG_NOT_CONNECTED, r->detail);
    return;
  }
  const char *name = json_string_value(json_object_get(r->result, "name"));
  const char *cpu = json_string_value(json_object_get(r->result, "targetCPU"));
  app->runtime = (name && strcmp(name, "ChromeDebugProxy") == 0) || (cpu && strcmp(cpu, "Web") == 0)
                     ? RUNTIME_WEB
                     : RUNTIME_NATIVE;
  size_t i;
  json_t *iso;
  app->slots_used = 0;
  json_array_foreach(json_object_get(r->result, "isolates"), i, iso) {
    const char *id = json_string_value(json_object_get(iso, "id"));
    if (!id || json_is_true(json_object_get(iso, "isSystemIsolate"))) continue;
    if (app->slots_used == MAX_SYNC_ISOLATES) break;
    sync_slot_t *s = &app->slots[app->slots_used++];
    s->app = app;
    s->index = app->slots_used - 1;
    s->isolate = NULL;
    s->req = NULL;
  }
  app->slots_left = app->slots_used;
  if (app->slots_used == 0) {
    sync_pick(app);
    return;
  }
  int k = 0;
  json_array_foreach(json_object_get(r->result, "isolates"), i, iso) {
    const char *id = json_string_value(json_object_get(iso, "id"));
    if (!id || json_is_true(json_object_get(iso, "isSystemIsolate"))) continue;
    if (k == app->slots_used) break;
    sync_slot_t *s = &app->slots[k++];
    s->req = vm_client_call(app->client, "getIsolate", json_pack("{s:s}", "isolateId", id), 0,
                            on_sync_isolate, s);
  }
}

static void on_sync_version(void *arg, const vm_client_reply_t *r) {
  vm_app_t *app = arg;
  app->sync_version = NULL;
  if (r->result) {
    json_t *ma = json_object_get(r->result, "major"), *mi = json_object_get(r->result, "minor");
    if (json_is_integer(ma) && json_is_integer(mi))
      snprintf(app->vm_version, sizeof app->vm_version,
               "%" JSON_INTEGER_FORMAT ".%" JSON_INTEGER_FORMAT, json_integer_value(ma),
               json_integer_value(mi));
  }
}

static void on_stream_listen(void *arg, const vm_client_reply_t *r) {
  vm_app_t *app = arg;
  /* 103 (already subscribed) is fine; anything else only costs us events,
   * and with them the right to answer `status` from what they told us. */
  if (r->diag == DIAG_NONE && (r->rpc_code == 0 || r->rpc_code == 103))
    app->streams_live++;
  else if (r->rpc_code)
    log_info("vm: streamListen: %s", r->detail);
}

static void start_sync(vm_app_t *app) {
  if (app->closing) return;
  if (app->sync == SYNC_RUNNING) {
    app->sync_again = 1;
    return;
  }
  app->sync = SYNC_RUNNING;
  if (!app->streams) {
    /* Subscribe first so no Isolate/Debug event slips between getVM and them. */
    app->streams = 1;
    app->streams_live = 0;
    vm_client_call(app->client, "streamListen", json_pack("{s:s}", "streamId", "Isolate"), 0,
                   on_stream_listen, app);
    vm_client_call(app->client, "streamListen", json_pack("{s:s}", "streamId", "Debug"), 0,
                   on_stream_listen, app);
    /* Flutter.Frame events: frames of an app without the watcher. Not
     * counted as live: status answers from the other two. */
    if (app->on_extension)
      vm_client_call(app->client, "streamListen", json_pack("{s:s}", "streamId", "Extension"), 0,
                     NULL, NULL);
  }
  if (!app->vm_version[0] && !app->sync_version)
    app->sync_version = vm_client_call(app->client, "getVersion", NULL, 0, on_sync_version, app);
  app->sync_getvm = vm_client_call(app->client, "getVM", NULL, 0, on_sync_getvm, app);
}

/* ---- client events ---- */

static void on_client_event(void *arg, const char *stream, json_t *event) {
  vm_app_t *app = arg;
  const char *kind = json_string_value(json_object_get(event, "kind"));
  const char *iso = json_string_value(json_object_get(json_object_get(event, "isolate"), "id"));
  if (!kind) return;
  int bound = iso && app->isolate_id[0] && strcmp(iso, app->isolate_id) == 0;
  if (strcmp(stream, "Debug") == 0) {
    if (!bound) return;
    if (strcmp(kind, "Resume") == 0) {
      int was = app->paused;
      set_pause(app, kind);
      if (was) emit(app, VM_APP_EV_RESUMED);
    } else if (kind_is_paused(kind, app->runtime)) {
      int was = app->paused;
      set_pause(app, kind);
      vm_calls_fail_paused(app);
      if (!was) emit(app, VM_APP_EV_PAUSED);
    }
    return;
  }
  if (strcmp(stream, "Extension") == 0) {
    const char *ek = json_string_value(json_object_get(event, "extensionKind"));
    if (iso && ek && app->on_extension && !app->closing)
      app->on_extension(app->event_arg, iso, ek, json_object_get(event, "extensionData"));
    return;
  }
  if (strcmp(stream, "Isolate") != 0) return;
  if (strcmp(kind, "ServiceExtensionAdded") == 0) {
    const char *ext = json_string_value(json_object_get(event, "extensionRPC"));
    if (ext && bound && (!strncmp(ext, "ext.flutter.", 12) || !strncmp(ext, "ext.ui.", 7)))
      app->flutter = 1;
    if (ext && bound && !strcmp(ext, VM_APP_DRIVER_EXTENSION)) app->driver = 1;
    if (!ext || strcmp(ext, VM_APP_WATCHER_EXTENSION) != 0) return;
    if (bound) {
      int was = app->watcher == WATCHER_PRESENT;
      app->watcher = WATCHER_PRESENT;
      if (!was) emit(app, VM_APP_EV_EXTENSION_ADDED);
    } else {
      if (app->sync == SYNC_READY) app->sync = SYNC_NONE;
      start_sync(app); /* another isolate serves it now: re-pick */
      emit(app, VM_APP_EV_EXTENSION_ADDED);
    }
  } else if (strcmp(kind, "IsolateExit") == 0) {
    if (!bound) return;
    snprintf(app->prev_isolate_id, sizeof app->prev_isolate_id, "%s", app->isolate_id);
    app->isolate_id[0] = '\0';
    app->watcher = WATCHER_UNKNOWN;
    set_pause(app, NULL);
    if (app->sync == SYNC_READY) app->sync = SYNC_NONE;
    /* a sync under way may already hold the dead isolate: look again after it */
    if (app->sync == SYNC_RUNNING) app->sync_again = 1;
  } else if (strcmp(kind, "IsolateRunnable") == 0 || strcmp(kind, "IsolateStart") == 0) {
    if (!app->isolate_id[0] || app->watcher != WATCHER_PRESENT) {
      if (app->sync == SYNC_READY) app->sync = SYNC_NONE;
      if (app->sync == SYNC_RUNNING || app->calls) start_sync(app);
    }
  } else if (strcmp(kind, "IsolateReload") == 0) {
    if (bound) emit(app, VM_APP_EV_RELOADED);
  }
}

static void on_client_state(void *arg, vm_client_state_t st, diag_code_t diag, const char *detail) {
  vm_app_t *app = arg;
  if (st == VM_CLIENT_CONNECTED) {
    app->connected = 1;
    app->rejected = 0;
    emit(app, VM_APP_EV_CONNECTED);
    return;
  }
  if (st == VM_CLIENT_MOVED) {
    /* The same app, now behind DDS: subscribe and look again there, and
     * keep parked calls parked (unsent requests already wait for DDS). The
     * tool sees no DISCONNECTED: nothing about the app changed. */
    app->connected = 0;
    /* Streams we had are subscribed again at once, so the frames the app
     * draws meanwhile are not lost to a connection nobody listens on. */
    int had = app->streams_live || app->streams;
    app->streams = app->streams_live = 0;
    int again = app->sync == SYNC_RUNNING || had;
    sync_cancel_requests(app);
    app->sync = SYNC_NONE;
    app->sync_again = 0;
    int waiting = vm_calls_waiting(app);
    log_info("vm: %s", detail);
    if (again || waiting) start_sync(app);
    return;
  }
  int was = app->connected;
  app->connected = 0;
  app->rejected = diag == DIAG_CONNECTION_REJECTED;
  app->streams = app->streams_live = 0;
  if (app->isolate_id[0])
    snprintf(app->prev_isolate_id, sizeof app->prev_isolate_id, "%s", app->isolate_id);
  app->isolate_id[0] = '\0';
  app->watcher = WATCHER_UNKNOWN;
  set_pause(app, NULL);
  /* In-flight requests fail through their own callbacks; parked calls here. */
  sync_fail(app, diag, detail);
  if (was) emit(app, VM_APP_EV_DISCONNECTED);
}

/* ---- lifetime ---- */

vm_app_t *vm_app_new(uv_loop_t *loop, const vm_app_options_t *opt) {
  vm_app_t *app = calloc(1, sizeof *app);
  if (!app) return NULL;
  app->loop = loop;
  app->timeout_ms = opt->call_timeout_ms > 0 ? opt->call_timeout_ms : VM_CLIENT_DEFAULT_TIMEOUT_MS;
  app->allow_remote = opt->allow_remote;
  app->on_event = opt->on_event;
  app->event_arg = opt->event_arg;
  app->on_extension = opt->on_extension;
  app->resolve_uri = resolve_uri;
  app->start_sync = start_sync;
  app->connection_json = vm_app_connection_json;
  app->released = app_maybe_free;
  if (opt->uri_file && !(app->uri_file = strdup(opt->uri_file))) goto fail_file;
  vm_client_options_t co = {client_get_uri, on_client_event, on_client_state, app,
                            app->timeout_ms, app->allow_remote, NULL,           NULL};
  app->client = vm_client_new(loop, &co);
  if (!app->client) goto fail_client;
  app->open_handles = 1; /* the client */
  if (opt->uri) {
    char err[256];
    int d = vm_app_set_uri(app, opt->uri, err, sizeof err);
    if (d != 0) {
      app->uri_status = d == DIAG_CONNECTION_REJECTED ? VM_URI_REMOTE : VM_URI_MALFORMED;
      snprintf(app->uri_err, sizeof app->uri_err, "%s", err);
    }
  }
  return app;
fail_client:
  free(app->uri_file);
fail_file:
  free(app);
  return NULL;
}

int vm_app_set_uri(vm_app_t *app, const char *user_uri, char *err, size_t errlen) {
  vm_uri_t u;
  int st = vm_uri_parse(user_uri, app->allow_remote, &u, err, errlen);
  if (st == VM_URI_REMOTE) return DIAG_CONNECTION_REJECTED;
  if (st != VM_URI_OK) return DIAG_NOT_CONNECTED;
  app->uri_status = VM_URI_OK;
  app->uri_err[0] = '\0';
  if (strcmp(u.ws, app->uri_ws) == 0) { /* same app (maybe read from the file): keep the socket */
    app->uri_set = 1;
    return 0;
  }
  int had = app->uri_ws[0] != '\0';
  app->uri_set = 1;
  snprintf(app->uri_ws, sizeof app->uri_ws, "%s", u.ws);
  app->vm_version[0] = '\0';
  app->runtime = RUNTIME_UNKNOWN;
  app->rejected = 0;
  if (had) vm_client_disconnect(app->client, "the VM-service URI changed");
  return 0;
}

void vm_app_forget_uri(vm_app_t *app) {
  if (!app->uri_set) return;
  app->uri_set = 0;
  app->uri_ws[0] = '\0';
  app->vm_version[0] = '\0';
  app->runtime = RUNTIME_UNKNOWN;
  app->rejected = 0;
  vm_client_disconnect(app->client, "the VM-service URI changed");
}

json_t *vm_app_connection_json(const vm_app_t *app) {
  const char *state = "not_connected";
  if (app->uri_status == VM_URI_REMOTE || app->rejected)
    state = "rejected";
  else if (app->connected)
    state = "connected";
  else if (app->sync == SYNC_RUNNING)
    state = "connecting";
  json_t *o = json_pack("{s:s}", "state", state);
  if (app->uri_ws[0]) {
    char red[VM_URI_MAX];
    vm_uri_redact(app->uri_ws, red, sizeof red);
    json_object_set_new(o, "vmServiceUri", json_string(red));
  }
  if (app->connected && app->isolate_id[0]) {
    json_object_set_new(o, "isolateId", json_string(app->isolate_id));
    json_object_set_new(o, "isolateName", json_string(app->isolate_name));
    json_object_set_new(o, "paused", json_boolean(app->paused));
    if (app->pause_kind[0]) json_object_set_new(o, "pauseKind", json_string(app->pause_kind));
  }
  const char *w = !app->connected                    ? "unknown"
                  : app->watcher == WATCHER_PRESENT  ? "present"
                  : app->watcher == WATCHER_MISSING_ ? "missing"
                                                     : "unknown";
  json_object_set_new(o, "watcher", json_string(w));
  if (app->watcher_version)
    json_object_set_new(o, "watcherVersion", json_string(app->watcher_version));
  json_object_set_new(o, "runtime",
                      json_string(app->runtime == RUNTIME_WEB      ? "web"
                                  : app->runtime == RUNTIME_NATIVE ? "native"
                                                                   : "unknown"));
  if (app->vm_version[0]) json_object_set_new(o, "vmVersion", json_string(app->vm_version));
  return o;
}

void vm_app_set_watcher_version(vm_app_t *app, const char *version) {
  free(app->watcher_version);
  app->watcher_version = version ? strdup(version) : NULL;
}

static void app_maybe_free(vm_app_t *app) {
  if (!app->closing || app->open_handles > 0) return;
  void (*done)(void *) = app->close_done;
  void *arg = app->close_arg;
  free(app->uri_file);
  free(app->watcher_version);
  free(app);
  if (done) done(arg);
}

static void on_client_closed(void *arg) {
  vm_app_t *app = arg;
  app->open_handles--;
  app_maybe_free(app);
}

void vm_app_close(vm_app_t *app, void (*done)(void *arg), void *arg) {
  if (app->closing) return;
  app->closing = 1;
  app->close_done = done;
  app->close_arg = arg;
  sync_cancel_requests(app);
  vm_calls_cancel_all(app);
  vm_client_close(app->client, on_client_closed, app);
}
