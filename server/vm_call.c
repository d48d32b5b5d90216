/* vm_call: the calls to the app's isolate or VM (vm_isolate.h
 * vm_app_call_*): the allowlist, the deadline, parking until the isolate is
 * known, and what the app's answer means (a missing watcher, a paused or
 * exited isolate, DWDS's ways of saying so). */
#include "vm_call.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "container_of.h"
#include "log.h"

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

/* Ends the call with res (its detail "" when NULL) given to its callback. */
static void call_end(vm_call_t *call, vm_result_t *res) {
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
  if (!res->detail) res->detail = "";
  if (call->cb) call->cb(call->arg, res);
  uv_close((uv_handle_t *)&call->timer, on_call_closed);
}

static void call_finish(vm_call_t *call, diag_code_t diag, int rpc, const char *detail,
                        json_t *result) {
  vm_result_t res = {diag, rpc, detail, result, NULL, 0};
  call_end(call, &res);
}

static void on_call_timer(uv_timer_t *t) {
  vm_call_t *call = container_of(t, vm_call_t, timer);
  vm_app_t *app = call->app;
  if (call->deferred) {
    if (call->kind == CALL_REFRESH && call->res_diag == DIAG_NONE && !call->res_rpc) {
      json_t *conn = app->connection_json(app);
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
             call->timeout_ms);
    call_finish(call, DIAG_NOT_CONNECTED, 0, call->detail, NULL);
  } else if (app->paused) {
    snprintf(call->detail, sizeof call->detail, "isolate %s is paused (%s)", app->isolate_id,
             app->pause_kind);
    call_finish(call, DIAG_ISOLATE_PAUSED, 0, call->detail, NULL);
  } else {
    snprintf(call->detail, sizeof call->detail, "%s: no answer within %d ms", call->method,
             call->timeout_ms);
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

static void on_call_closed(uv_handle_t *h) {
  vm_call_t *call = container_of((uv_timer_t *)h, vm_call_t, timer);
  vm_app_t *app = call->app;
  json_decref(call->params);
  free(call);
  app->open_handles--;
  app->released(app);
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
    /* -32000: ServiceExtensionResponse.extensionError (dart-lang/sdk
     * sdk/lib/developer/extension.dart), DWDS's RPCErrorKind.kServerError. */
    else if (app->runtime == RUNTIME_WEB && r->rpc_code == RPC_SERVER_ERROR && r->error &&
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
        (r->rpc_code == RPC_SERVER_ERROR || r->rpc_code == RPC_INTERNAL_ERROR) &&
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
      app->start_sync(app);
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
  /* its records, cut out of the text, go with the result */
  vm_result_t res = {DIAG_NONE, 0, "ok", r->result, r->records, r->records_len};
  call_end(call, &res);
}

/* A VM method's reply: the VM (or DDS, DWDS) answered, or it did not. */
static void on_vm_reply(void *arg, const vm_client_reply_t *r) {
  vm_call_t *call = arg;
  call->req = NULL;
  vm_result_t text = {DIAG_NONE, 0, "ok", NULL, r->text, r->text_len};
  if (r->diag != DIAG_NONE)
    call_finish(call, r->diag, 0, r->detail, NULL);
  else if (r->text)
    call_end(call, &text);
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
    json_t *conn = app->connection_json(app);
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

void vm_calls_dispatch(vm_app_t *app) {
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
  int d = app->resolve_uri(app, err, sizeof err);
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
  app->start_sync(app);
}

static vm_call_t *call_new(vm_app_t *app, call_kind_t kind, const char *method, int timeout_ms,
                           vm_reply_cb cb, void *arg) {
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
  call->timeout_ms = timeout_ms > app->timeout_ms ? timeout_ms : app->timeout_ms;
  call->deadline = uv_now(app->loop) + (uint64_t)call->timeout_ms;
  uv_timer_start(&call->timer, on_call_timer, (uint64_t)call->timeout_ms, 0);
  return call;
}

/* An extension call (params stringified, isolateId added when sent) or a VM
 * method (params as given): both checked against the allowlist, both failed
 * from the loop when they cannot be sent. */
static vm_call_t *call_start(vm_app_t *app, call_kind_t kind, const char *method, json_t *params,
                             int timeout_ms, vm_reply_cb cb, void *arg) {
  int ext = kind == CALL_EXT;
  vm_call_t *call = call_new(app, kind, method ? method : "(null)", timeout_ms, cb, arg);
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
  return call_start(app, CALL_EXT, method, params, 0, cb, arg);
}

vm_call_t *vm_app_call_vm(vm_app_t *app, const char *method, json_t *params, vm_reply_cb cb,
                          void *arg) {
  return call_start(app, CALL_VM, method, params, 0, cb, arg);
}

vm_call_t *vm_app_call_vm_within(vm_app_t *app, const char *method, json_t *params, int timeout_ms,
                                 vm_reply_cb cb, void *arg) {
  return call_start(app, CALL_VM, method, params, timeout_ms, cb, arg);
}

uv_loop_t *vm_app_loop(const vm_app_t *app) { return app->loop; }
int vm_app_timeout_ms(const vm_app_t *app) { return app->timeout_ms; }
const char *vm_app_isolate_id(const vm_app_t *app) { return app->isolate_id; }
const char *vm_app_uri_ws(const vm_app_t *app) { return app->uri_ws; }

int vm_app_watcher_missing(const vm_app_t *app) {
  return app->connected && app->sync == SYNC_READY && app->isolate_id[0] &&
         app->watcher == WATCHER_MISSING_;
}

int vm_app_is_flutter(const vm_app_t *app) { return app->flutter; }
int vm_app_has_driver(const vm_app_t *app) { return app->driver; }

int vm_app_is_web(const vm_app_t *app) { return app->runtime == RUNTIME_WEB; }

vm_call_t *vm_app_refresh(vm_app_t *app, vm_reply_cb cb, void *arg) {
  vm_call_t *call = call_new(app, CALL_REFRESH, "refresh", 0, cb, arg);
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

void vm_calls_fail_paused(vm_app_t *app) {
  for (vm_call_t *c = app->calls; c; c = c->next) {
    if (c->done || c->deferred || !c->req) continue;
    if (strcmp(c->req_isolate, app->isolate_id) != 0) continue;
    snprintf(c->detail, sizeof c->detail,
             "isolate %s paused (%s) while %s was in flight; its answer would wait for resume",
             app->isolate_id, app->pause_kind, c->method);
    call_fail_soon(c, DIAG_ISOLATE_PAUSED, 0, c->detail);
  }
}

void vm_calls_fail_waiting(vm_app_t *app, diag_code_t diag, const char *detail) {
  for (vm_call_t *c = app->calls; c; c = c->next)
    if (c->waiting) call_fail_soon(c, diag, 0, detail);
}

int vm_calls_waiting(const vm_app_t *app) {
  int waiting = 0;
  for (vm_call_t *c = app->calls; c; c = c->next) waiting |= c->waiting && !c->deferred;
  return waiting;
}

void vm_calls_cancel_all(vm_app_t *app) {
  while (app->calls) vm_call_cancel(app->calls);
}
