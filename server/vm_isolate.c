#include "vm_isolate.h"
#include "container_of.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "vm_client.h"
#include "vm_uri.h"


#define MAX_SYNC_ISOLATES 16
/* ServiceExtensionResponse.extensionError (dart-lang/sdk
 * sdk/lib/developer/extension.dart); DWDS's RPCErrorKind.kServerError. */
#define DART_EXTENSION_ERROR (-32000)
/* A flutter run --machine log names the port after a few events. */
#define URI_FILE_MAX 65536


typedef enum { CALL_EXT, CALL_REFRESH, CALL_VM } call_kind_t;
typedef enum { SYNC_NONE, SYNC_RUNNING, SYNC_READY } sync_state_t;
typedef enum { WATCHER_UNKNOWN, WATCHER_PRESENT, WATCHER_MISSING_ } watcher_state_t;
typedef enum { RUNTIME_UNKNOWN, RUNTIME_NATIVE, RUNTIME_WEB } runtime_t;

struct vm_call {
  vm_app_t *app;
  uv_timer_t timer; /* the call's deadline, or a 0 ms hop to deliver a result */
  call_kind_t kind;
  char method[48];
  json_t *params; /* stringified, without isolateId */
  vm_reply_cb cb;
  void *arg;
  vm_request_t *req; /* the extension request in flight */
  char req_isolate[128];
  uint64_t deadline;
  int waiting; /* parked until the isolate is known */
  int retried; /* one re-pick after a Sentinel */
  int done, deferred;
  diag_code_t res_diag;
  int res_rpc;
  char detail[400];
  vm_call_t *prev, *next;
};

typedef struct {
  vm_app_t *app;
  int index;
  vm_request_t *req;
  json_t *isolate; /* getIsolate result, owned */
} sync_slot_t;

struct vm_app {
  uv_loop_t *loop;
  vm_client_t *client;
  char *uri_file;
  int timeout_ms, allow_remote;
  void (*on_event)(void *arg, vm_app_event_t ev);
  void *event_arg;
  void (*on_extension)(void *arg, const char *isolate_id, const char *kind, json_t *data);

  /* The URI: set explicitly (wins) or read from uri_file before each connect. */
  int uri_set;    /* vm_app_set_uri accepted one, or opt.uri parsed */
  int uri_status; /* vm_uri_status_t of opt.uri when it did not parse */
  char uri_err[256];
  char uri_ws[VM_URI_MAX]; /* the URI in use (explicit or last read from the file) */

  int connected, rejected, closing;
  int streams;      /* Isolate and Debug requested on this connection */
  int streams_live; /* ... and how many of the two the server accepted */
  int flutter;      /* the isolate registered Flutter's extensions */
  sync_state_t sync;
  int sync_again;
  vm_request_t *sync_getvm, *sync_version;
  sync_slot_t slots[MAX_SYNC_ISOLATES];
  int slots_used, slots_left;

  char vm_version[64];
  runtime_t runtime;
  char isolate_id[128], isolate_name[128], prev_isolate_id[128];
  int paused;
  char pause_kind[32];
  watcher_state_t watcher;
  char *watcher_version;

  vm_call_t *calls;
  int open_handles;
  void (*close_done)(void *arg);
  void *close_arg;
};

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

/* The handler gets Map<String,String>: send strings only (vmservice.md 3.3). */
static json_t *stringify_params(json_t *params) {
  json_t *out = json_object();
  const char *k;
  json_t *v;
  if (!out) return NULL;
  json_object_foreach(params, k, v) {
    if (strcmp(k, "isolateId") == 0) continue;
    if (json_is_string(v)) {
      json_object_set(out, k, v);
    } else if (json_is_true(v) || json_is_false(v) || json_is_null(v)) {
      json_object_set_new(out, k,
                          json_string(json_is_true(v)    ? "true"
                                      : json_is_false(v) ? "false"
                                                         : "null"));
    } else {
      char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
      json_object_set_new(out, k, json_string(t ? t : ""));
      free(t);
    }
  }
  return out;
}

static int error_mentions(json_t *error, const char *word) {
  const char *m = json_string_value(json_object_get(error, "message"));
  const char *d = json_string_value(json_object_get(json_object_get(error, "data"), "details"));
  return (m && strstr(m, word)) || (d && strstr(d, word));
}

/* DWDS wraps several distinct failures of an extension call as -32603
 * (vmservice.md 6): its WebSocket-mode 10 s timeout (a hidden tab), "No
 * clients available" (no page connected), and, in some versions, an
 * unregistered extension ("Unexpected null value"). Tell them apart by text;
 * anything else stays the app's own error. */
static diag_code_t web_internal_error_diag(json_t *error, int is_watcher) {
  if (error_mentions(error, "Timeout") || error_mentions(error, "timed out"))
    return DIAG_UNRESPONSIVE;
  if (error_mentions(error, "No clients available")) return DIAG_NOT_CONNECTED;
  if (is_watcher &&
      (error_mentions(error, "null") || error_mentions(error, "Unknown") ||
       error_mentions(error, "not registered") || error_mentions(error, "ext.telescope.frames")))
    return DIAG_WATCHER_MISSING;
  return DIAG_NONE;
}

/* DWDS's WebSocket mode has no registry check: the page's invokeExtension
 * meets no handler, DDC's null check throws "Unexpected null value", and
 * DWDS answers -32000 with that text (dart-lang/sdk
 * sdk/lib/_internal/js_dev_runtime/patch/developer_patch.dart
 * _invokeExtension; dart-lang/webdev dwds/web/client.dart
 * handleServiceExtensionRequest; web_socket_proxy_service.dart
 * _callServiceExtension). A restarter without extension support says
 * "Service extension not supported". */
static int web_unregistered_error(json_t *error) {
  return error_mentions(error, "Unexpected null value") ||
         error_mentions(error, "Service extension not supported") ||
         error_mentions(error, "Unknown service method");
}

/* A handler's ServiceExtensionResponse.error as DWDS's WebSocket mode returns
 * it: the encoded error object as the result, {code, message, data:
 * {details}} (ServiceExtensionResponse._toString in dart-lang/sdk
 * sdk/lib/developer/extension.dart; Chrome mode turns the same object into
 * an RPCError). The watcher's replies never carry code and message. */
static int result_is_error(json_t *result) {
  return json_is_integer(json_object_get(result, "code")) &&
         json_is_string(json_object_get(result, "message")) &&
         json_is_object(json_object_get(result, "data"));
}

/* ---- calls ---- */

static void on_call_closed(uv_handle_t *h);

static void call_finish(vm_call_t *call, diag_code_t diag, int rpc, const char *detail,
                        json_t *result) {
  vm_app_t *app = call->app;
  if (call->done) return;
  call->done = 1;
  if (call->prev)
    call->prev->next = call->next;
  else
    app->calls = call->next;
  if (call->next) call->next->prev = call->prev;
  uv_timer_stop(&call->timer);
  if (call->req) {
    vm_client_cancel(call->req);
    call->req = NULL;
  }
  if (call->cb) {
    vm_result_t res = {diag, rpc, detail ? detail : "", result};
    call->cb(call->arg, &res);
  }
  uv_close((uv_handle_t *)&call->timer, on_call_closed);
}

static void on_call_timer(uv_timer_t *t) {
  vm_call_t *call = container_of(t, vm_call_t, timer);
  vm_app_t *app = call->app;
  if (call->deferred) {
    if (call->kind == CALL_REFRESH && call->res_diag == DIAG_NONE && !call->res_rpc) {
      json_t *conn = vm_app_connection_json(app);
      call_finish(call, DIAG_NONE, 0, "ok", conn);
      json_decref(conn);
      return;
    }
    call_finish(call, call->res_diag, call->res_rpc, call->detail, NULL);
    return;
  }
  /* The deadline passed: say why as precisely as we know. */
  if (!app->connected) {
    snprintf(call->detail, sizeof call->detail, "could not reach the VM service within %d ms",
             app->timeout_ms);
    call_finish(call, DIAG_NOT_CONNECTED, 0, call->detail, NULL);
  } else if (app->paused) {
    snprintf(call->detail, sizeof call->detail, "isolate %s is paused (%s)", app->isolate_id,
             app->pause_kind);
    call_finish(call, DIAG_ISOLATE_PAUSED, 0, call->detail, NULL);
  } else {
    snprintf(call->detail, sizeof call->detail, "%s: no answer within %d ms", call->method,
             app->timeout_ms);
    call_finish(call, DIAG_UNRESPONSIVE, 0, call->detail, NULL);
  }
}

/* Delivers a failure on the next loop turn (never inside the caller). */
static void call_fail_soon(vm_call_t *call, diag_code_t diag, int rpc, const char *detail) {
  if (call->done || call->deferred) return;
  call->deferred = 1;
  call->waiting = 0;
  call->res_diag = diag;
  call->res_rpc = rpc;
  if (detail != call->detail) snprintf(call->detail, sizeof call->detail, "%s", detail);
  if (call->req) {
    vm_client_cancel(call->req);
    call->req = NULL;
  }
  uv_timer_start(&call->timer, on_call_timer, 0, 0);
}

static void app_maybe_free(vm_app_t *app);

static void on_call_closed(uv_handle_t *h) {
  vm_call_t *call = container_of((uv_timer_t *)h, vm_call_t, timer);
  vm_app_t *app = call->app;
  json_decref(call->params);
  free(call);
  app->open_handles--;
  app_maybe_free(app);
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

static void dispatch_waiting(vm_app_t *app);
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
  for (vm_call_t *c = app->calls; c; c = c->next)
    if (c->waiting) call_fail_soon(c, diag, 0, detail);
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
  } else {
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
  dispatch_waiting(app);
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

static void on_sync_getvm(void *arg, const vm_client_reply_t *r) {
  vm_app_t *app = arg;
  app->sync_getvm = NULL;
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

/* ---- extension calls ---- */

static void send_call(vm_call_t *call);

static void on_ext_reply(void *arg, const vm_client_reply_t *r) {
  vm_call_t *call = arg;
  vm_app_t *app = call->app;
  call->req = NULL;
  int is_watcher = strcmp(call->method, VM_APP_WATCHER_EXTENSION) == 0;
  if (r->diag != DIAG_NONE) {
    diag_code_t d = r->diag;
    if (d == DIAG_UNRESPONSIVE && app->paused) d = DIAG_ISOLATE_PAUSED;
    call_finish(call, d, 0, r->detail, NULL);
    return;
  }
  if (r->error || !r->result) {
    diag_code_t d = DIAG_NONE;
    if (r->rpc_code == RPC_METHOD_NOT_FOUND)
      d = is_watcher ? DIAG_WATCHER_MISSING : DIAG_NONE;
    else if (app->runtime == RUNTIME_WEB && r->rpc_code == RPC_INTERNAL_ERROR && r->error)
      d = web_internal_error_diag(r->error, is_watcher);
    else if (app->runtime == RUNTIME_WEB && r->rpc_code == DART_EXTENSION_ERROR && r->error &&
             is_watcher && app->watcher != WATCHER_PRESENT && web_unregistered_error(r->error))
      d = DIAG_WATCHER_MISSING;
    if (d == DIAG_WATCHER_MISSING) {
      app->watcher = WATCHER_MISSING_;
      snprintf(call->detail, sizeof call->detail,
               "isolate %s does not serve %s (the app answered %d)", app->isolate_id,
               VM_APP_WATCHER_EXTENSION, r->rpc_code);
      call_finish(call, DIAG_WATCHER_MISSING, r->rpc_code, call->detail, NULL);
      return;
    }
    if (d != DIAG_NONE) {
      call_finish(call, d, r->rpc_code, r->detail, NULL);
      return;
    }
    if (app->runtime == RUNTIME_WEB && !is_watcher && r->error &&
        (r->rpc_code == DART_EXTENSION_ERROR || r->rpc_code == RPC_INTERNAL_ERROR) &&
        web_unregistered_error(r->error)) {
      /* Another extension the page does not register (ext.ui.window.
       * scheduleFrame in a profile build, a profile switch): DWDS's WebSocket
       * mode answers -32000, some DWDS -32603 (above). Said as the VM says
       * it, -32601, so every caller tells "not there" the same way. */
      snprintf(call->detail, sizeof call->detail,
               "isolate %s does not serve %s (the app answered %d)", app->isolate_id,
               call->method, r->rpc_code);
      call_finish(call, DIAG_NONE, RPC_METHOD_NOT_FOUND, call->detail, NULL);
      return;
    }
    call_finish(call, DIAG_NONE, r->rpc_code, r->detail, NULL);
    return;
  }
  const char *type = json_string_value(json_object_get(r->result, "type"));
  if (type && strcmp(type, "Sentinel") == 0) {
    /* The isolate is gone (hot restart): re-pick once and resend. */
    if (strcmp(call->req_isolate, app->isolate_id) == 0) {
      snprintf(app->prev_isolate_id, sizeof app->prev_isolate_id, "%s", app->isolate_id);
      app->isolate_id[0] = '\0';
    }
    if (!call->retried) {
      call->retried = 1;
      call->waiting = 1;
      if (app->sync == SYNC_READY) app->sync = SYNC_NONE;
      start_sync(app);
      return;
    }
    call_finish(call, DIAG_WATCHER_MISSING, 0,
                "the app's isolate exited and no other serves the watcher", NULL);
    return;
  }
  if (app->runtime == RUNTIME_WEB && type && strcmp(type, "Response") == 0)
    json_object_del(r->result, "type"); /* added by DWDS, not by the watcher */
  if (app->runtime == RUNTIME_WEB && result_is_error(r->result)) {
    /* DWDS's WebSocket mode hands the handler's error back as a result. */
    json_t *code = json_object_get(r->result, "code");
    const char *m = json_string_value(json_object_get(r->result, "message"));
    const char *d =
        json_string_value(json_object_get(json_object_get(r->result, "data"), "details"));
    char raw[512];
    snprintf(raw, sizeof raw, "%s failed: %d %.100s%s%.300s", call->method,
             (int)json_integer_value(code), m ? m : "", d ? ": " : "", d ? d : "");
    log_redact(raw, call->detail, sizeof call->detail);
    if (is_watcher) app->watcher = WATCHER_PRESENT; /* it answered */
    call_finish(call, DIAG_NONE, (int)json_integer_value(code), call->detail, NULL);
    return;
  }
  if (is_watcher) app->watcher = WATCHER_PRESENT;
  call_finish(call, DIAG_NONE, 0, "ok", r->result);
}

/* A VM method's reply: the VM (or DDS, DWDS) answered, or it did not. */
static void on_vm_reply(void *arg, const vm_client_reply_t *r) {
  vm_call_t *call = arg;
  call->req = NULL;
  if (r->diag != DIAG_NONE)
    call_finish(call, r->diag, 0, r->detail, NULL);
  else if (r->error || !r->result)
    call_finish(call, DIAG_NONE, r->rpc_code ? r->rpc_code : RPC_INTERNAL_ERROR, r->detail, NULL);
  else
    call_finish(call, DIAG_NONE, 0, "ok", r->result);
}

static void send_call(vm_call_t *call) {
  vm_app_t *app = call->app;
  call->waiting = 0;
  if (call->kind == CALL_VM) { /* the VM itself answers: no isolate, no pause */
    uint64_t now = uv_now(app->loop);
    int left = call->deadline > now ? (int)(call->deadline - now) : 1;
    call->req = vm_client_call(app->client, call->method, json_incref(call->params), left,
                               on_vm_reply, call);
    return;
  }
  if (call->kind == CALL_REFRESH) {
    json_t *conn = vm_app_connection_json(app);
    call_finish(call, DIAG_NONE, 0, "ok", conn);
    json_decref(conn);
    return;
  }
  if (!app->isolate_id[0]) {
    call_fail_soon(call, DIAG_WATCHER_MISSING, 0, "the app has no running isolate");
    return;
  }
  if (strcmp(call->method, VM_APP_WATCHER_EXTENSION) == 0 && app->watcher != WATCHER_PRESENT &&
      app->runtime != RUNTIME_WEB) {
    snprintf(call->detail, sizeof call->detail, "no isolate serves %s", VM_APP_WATCHER_EXTENSION);
    call_fail_soon(call, DIAG_WATCHER_MISSING, 0, call->detail);
    return;
  }
  if (app->paused) {
    snprintf(call->detail, sizeof call->detail, "isolate %s is paused (%s): nothing was sent",
             app->isolate_id, app->pause_kind);
    call_fail_soon(call, DIAG_ISOLATE_PAUSED, 0, call->detail);
    return;
  }
  json_t *params = json_deep_copy(call->params);
  json_object_set_new(params, "isolateId", json_string(app->isolate_id));
  snprintf(call->req_isolate, sizeof call->req_isolate, "%s", app->isolate_id);
  uint64_t now = uv_now(app->loop);
  int left = call->deadline > now ? (int)(call->deadline - now) : 1;
  call->req = vm_client_call(app->client, call->method, params, left, on_ext_reply, call);
}

static void dispatch_waiting(vm_app_t *app) {
  for (vm_call_t *c = app->calls, *next; c; c = next) {
    next = c->next;
    if (c->waiting && !c->done && !c->deferred) send_call(c);
  }
}

/* Ready means: connected, isolate picked, and for the watcher method a fresh
 * look when it was missing (the watcher may have been registered since). */
static void call_submit(vm_call_t *call) {
  vm_app_t *app = call->app;
  char err[300];
  int d = resolve_uri(app, err, sizeof err);
  if (d) {
    call_fail_soon(call, (diag_code_t)d, 0, err);
    return;
  }
  /* The watcher may have been registered since we looked; on web a look
   * proves nothing (DWDS's WebSocket mode lists extensionRPCs only after
   * asking the page, dwds/lib/src/debugging/web_socket_inspector.dart), so
   * the call itself asks. */
  int need_sync = app->sync != SYNC_READY || !app->connected ||
                  (call->kind == CALL_EXT && strcmp(call->method, VM_APP_WATCHER_EXTENSION) == 0 &&
                   app->watcher != WATCHER_PRESENT && app->runtime != RUNTIME_WEB);
  if (call->kind == CALL_REFRESH) {
    /* Issue 11 "cheaper status": the events keep this state while both
     * streams are live, so a look costs nothing. */
    need_sync = app->sync != SYNC_READY || !app->connected || !app->isolate_id[0] ||
                app->streams_live < 2;
    if (!need_sync) {
      call_fail_soon(call, DIAG_NONE, 0, "ok"); /* delivered from the loop: the state */
      return;
    }
  }
  if (!need_sync) {
    send_call(call);
    return;
  }
  call->waiting = 1;
  if (app->sync == SYNC_READY) app->sync = SYNC_NONE;
  start_sync(app);
}

static vm_call_t *call_new(vm_app_t *app, call_kind_t kind, const char *method, vm_reply_cb cb,
                           void *arg) {
  vm_call_t *call = calloc(1, sizeof *call);
  if (!call) return NULL;
  call->app = app;
  call->kind = kind;
  call->cb = cb;
  call->arg = arg;
  snprintf(call->method, sizeof call->method, "%s", method);
  uv_timer_init(app->loop, &call->timer);
  app->open_handles++;
  call->next = app->calls;
  if (app->calls) app->calls->prev = call;
  app->calls = call;
  call->deadline = uv_now(app->loop) + (uint64_t)app->timeout_ms;
  uv_timer_start(&call->timer, on_call_timer, (uint64_t)app->timeout_ms, 0);
  return call;
}

/* An extension call (params stringified, isolateId added when sent) or a VM
 * method (params as given): both checked against the allowlist, both failed
 * from the loop when they cannot be sent. */
static vm_call_t *call_start(vm_app_t *app, call_kind_t kind, const char *method, json_t *params,
                             vm_reply_cb cb, void *arg) {
  int ext = kind == CALL_EXT;
  vm_call_t *call = call_new(app, kind, method ? method : "(null)", cb, arg);
  if (!call) {
    json_decref(params);
    return NULL;
  }
  if (ext) {
    call->params = stringify_params(params);
    json_decref(params);
  } else {
    call->params = params ? params : json_object();
  }
  if (app->closing) {
    call_fail_soon(call, DIAG_NOT_CONNECTED, 0, "telescope is shutting down");
  } else if (!method || (strncmp(method, "ext.", 4) == 0) != ext ||
             !vm_client_method_allowed(method)) {
    snprintf(call->detail, sizeof call->detail, "%.60s is not %s telescope may call; nothing was sent",
             call->method, ext ? "an extension" : "a VM method");
    call_fail_soon(call, DIAG_NOT_CONNECTED, 0, call->detail);
  } else if (!call->params) {
    call_fail_soon(call, DIAG_NOT_CONNECTED, 0, "out of memory");
  } else {
    call_submit(call);
  }
  return call;
}

vm_call_t *vm_app_call_extension(vm_app_t *app, const char *method, json_t *params, vm_reply_cb cb,
                                 void *arg) {
  return call_start(app, CALL_EXT, method, params, cb, arg);
}

vm_call_t *vm_app_call_vm(vm_app_t *app, const char *method, json_t *params, vm_reply_cb cb,
                          void *arg) {
  return call_start(app, CALL_VM, method, params, cb, arg);
}

const char *vm_app_isolate_id(const vm_app_t *app) { return app->isolate_id; }

int vm_app_watcher_missing(const vm_app_t *app) {
  return app->connected && app->sync == SYNC_READY && app->isolate_id[0] &&
         app->watcher == WATCHER_MISSING_;
}

int vm_app_is_flutter(const vm_app_t *app) { return app->flutter; }

int vm_app_is_web(const vm_app_t *app) { return app->runtime == RUNTIME_WEB; }

vm_call_t *vm_app_refresh(vm_app_t *app, vm_reply_cb cb, void *arg) {
  vm_call_t *call = call_new(app, CALL_REFRESH, "refresh", cb, arg);
  if (!call) return NULL;
  if (app->closing)
    call_fail_soon(call, DIAG_NOT_CONNECTED, 0, "telescope is shutting down");
  else
    call_submit(call);
  return call;
}

void vm_call_cancel(vm_call_t *call) {
  if (!call || call->done) return;
  call->cb = NULL;
  call_finish(call, DIAG_NONE, 0, NULL, NULL);
}

/* ---- client events ---- */

static void fail_inflight_paused(vm_app_t *app) {
  for (vm_call_t *c = app->calls; c; c = c->next) {
    if (c->done || c->deferred || !c->req) continue;
    if (strcmp(c->req_isolate, app->isolate_id) != 0) continue;
    snprintf(c->detail, sizeof c->detail,
             "isolate %s paused (%s) while %s was in flight; its answer would wait for resume",
             app->isolate_id, app->pause_kind, c->method);
    call_fail_soon(c, DIAG_ISOLATE_PAUSED, 0, c->detail);
  }
}

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
      fail_inflight_paused(app);
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
    int waiting = 0;
    for (vm_call_t *c = app->calls; c; c = c->next) waiting |= c->waiting && !c->deferred;
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
  if (opt->uri_file && !(app->uri_file = strdup(opt->uri_file))) goto fail_file;
  vm_client_options_t co = {client_get_uri, on_client_event, on_client_state,
                            app,            app->timeout_ms, app->allow_remote};
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
  while (app->calls) vm_call_cancel(app->calls);
  vm_client_close(app->client, on_client_closed, app);
}
