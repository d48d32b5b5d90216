#include "sim_vm.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_clock.h"
#include "sim_log.h"
#include "sim_replay.h"
#include "sim_server.h"
#include "sim_timings.h"

/* The VM-service error codes the simulator speaks, with the message the raw
 * VM uses for each (vmservice.md §4). Nothing else spells a code number. */
#define SIM_RPC_ERRORS(X)                                        \
  X(PARSE_ERROR, -32700, "Parse error")                          \
  X(INVALID_REQUEST, -32600, "Invalid Request")                  \
  X(METHOD_NOT_FOUND, -32601, "Method not found")                \
  X(INVALID_PARAMS, -32602, "Invalid params")                    \
  X(INTERNAL_ERROR, -32603, "Internal error")                    \
  X(SERVER_ERROR, -32000, "Server error")                        \
  X(FEATURE_DISABLED, 100, "Feature is disabled")                \
  X(STREAM_ALREADY_SUBSCRIBED, 103, "Stream already subscribed") \
  X(STREAM_NOT_SUBSCRIBED, 104, "Stream not subscribed")         \
  X(ISOLATE_MUST_BE_PAUSED, 106, "Isolate must be paused")       \
  X(INVALID_TIMELINE_REQUEST, 114, "Invalid timeline request for the current timeline configuration")

enum {
#define X(name, code, msg) RPC_##name = code,
  SIM_RPC_ERRORS(X)
#undef X
};

static const char *rpc_message(int code) {
  switch (code) {
#define X(name, c, msg) \
  case c:               \
    return msg;
    SIM_RPC_ERRORS(X)
#undef X
  }
  return "Extension error";
}

/* The raw VM closes the socket on bad frames with these codes (§1.4). */
enum { CLOSE_PARSE_ERROR = 4000, CLOSE_BINARY = 4001, CLOSE_NOT_OBJECT = 4002 };

/* One request. Answered at once, or parked in the held list (paused
 * isolate, slow or hung extension) and answered by pump(). */
struct sim_call {
  sim_call_t *next;
  sim_conn_t *conn;
  json_t *request;    /* the whole request as received (DDS error data) */
  json_t *id;         /* borrowed from request; NULL for a notification */
  int reply;          /* 0: a notification, nothing is sent */
  const char *method; /* borrowed from request */
  json_t *params;     /* as the handler sees them (ext: stringified) */
  char isolate_id[48];
  uint64_t due_ms;
  uint64_t deadline_ms; /* web: DWDS gives up on the call then (0: never) */
  int hang;
  int driver;          /* ext.flutter.driver: a driver_phase_t */
  json_t *driver_reply; /* its reply once known ({isError, response}) */
};

/* Flutter's own extensions, registered by the framework in every debug or
 * profile isolate (and ext.dart.io.* only where dart:io exists). */
typedef enum { EXT_GENERIC, EXT_BOOL, EXT_SCHEDULE_FRAME, EXT_REASSEMBLE, EXT_LOCATION_MAP } ext_kind_t;
static const struct {
  const char *name;
  ext_kind_t kind;
  int bool_index;
  int native_only;
  int debug_only; /* registered inside an assert (setup_hooks.dart, foundation binding.dart) */
} flutter_exts[] = {
    {"ext.ui.window.scheduleFrame", EXT_SCHEDULE_FRAME, -1, 0, 1},
    {"ext.ui.window.reinitializeShader", EXT_GENERIC, -1, 0, 1},
    {"ext.ui.window.impellerEnabled", EXT_GENERIC, -1, 0, 0},
    {"ext.dart.io.getVersion", EXT_GENERIC, -1, 1, 0},
    {"ext.dart.io.httpEnableTimelineLogging", EXT_GENERIC, -1, 1, 0},
    {"ext.flutter.reassemble", EXT_REASSEMBLE, -1, 0, 1},
    {"ext.flutter.exit", EXT_GENERIC, -1, 0, 0},
    {"ext.flutter.timeDilation", EXT_GENERIC, -1, 0, 0},
    {"ext.flutter.debugPaint", EXT_BOOL, SIM_EXT_DEBUG_PAINT, 0, 1},
    {"ext.flutter.showPerformanceOverlay", EXT_BOOL, SIM_EXT_PERF_OVERLAY, 0, 0},
    {"ext.flutter.profileWidgetBuilds", EXT_BOOL, SIM_EXT_PROFILE_WIDGETS, 0, 0},
    {"ext.flutter.profileUserWidgetBuilds", EXT_BOOL, SIM_EXT_PROFILE_USER_WIDGETS, 0, 0},
    {"ext.flutter.profileRenderObjectLayouts", EXT_BOOL, SIM_EXT_PROFILE_LAYOUTS, 0, 0},
    {"ext.flutter.profileRenderObjectPaints", EXT_BOOL, SIM_EXT_PROFILE_PAINTS, 0, 0},
    /* The inspector's, registered inside WidgetsBinding.initServiceExtensions'
     * assert (debug only), and only when widget creation is tracked
     * (flutter run's default in debug): widget_inspector.dart. */
    {"ext.flutter.inspector.trackRebuildDirtyWidgets", EXT_BOOL, SIM_EXT_TRACK_REBUILDS, 0, 1},
    {"ext.flutter.inspector.widgetLocationIdMap", EXT_LOCATION_MAP, -1, 0, 1},
};
#define N_FLUTTER_EXTS (sizeof flutter_exts / sizeof flutter_exts[0])
static const char TELESCOPE_EXT[] = "ext.telescope.frames";
/* enableFlutterDriverExtension() registers it (flutter_driver
 * lib/src/extension/extension.dart: registerServiceExtension name 'driver'). */
static const char DRIVER_EXT[] = "ext.flutter.driver";

/* The rules a connection's wire follows: DDS's for a client that came in
 * through the simulated DDS endpoint, else the server's own. What the app
 * is (isolates, web or native, handed params) stays s->cfg.mode. */
static sim_mode_t wire(const sim_t *s, const sim_conn_t *c) {
  return c && c->dds ? SIM_MODE_DDS : s->cfg.mode;
}

/* ---- small string buffer for Dart's toString() ------------------------- */

typedef struct {
  char *p;
  size_t len, cap;
} sb_t;

static void sb_add(sb_t *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 64;
    char *p;
    while (cap < b->len + n + 1) cap *= 2;
    p = realloc(b->p, cap);
    if (!p) return;
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

static void sb_puts(sb_t *b, const char *s) {
  sb_add(b, s, strlen(s));
}

/* Dart's double.toString(), as in JavaScript: the shortest digits that read
 * back to the same double; fixed notation for exponents -6..20 (always with
 * a point: "10.0"), else "1.5e+21" / "1e-7". */
static void dart_double(sb_t *b, double d) {
  char tmp[64], digits[32], out[64];
  const char *p;
  int prec, exp, nd = 0, i, o = 0;

  if (isnan(d)) {
    sb_puts(b, "NaN");
    return;
  }
  if (isinf(d)) {
    sb_puts(b, d < 0 ? "-Infinity" : "Infinity");
    return;
  }
  if (d == 0) {
    sb_puts(b, signbit(d) ? "-0.0" : "0.0");
    return;
  }
  for (prec = 0; prec < 17; prec++) {
    snprintf(tmp, sizeof tmp, "%.*e", prec, d);
    if (strtod(tmp, NULL) == d) break;
  }
  p = tmp;
  if (*p == '-') out[o++] = *p++;
  for (; *p && *p != 'e'; p++)
    if (*p >= '0' && *p <= '9' && nd < (int)sizeof digits) digits[nd++] = *p;
  exp = atoi(p + 1);
  while (nd > 1 && digits[nd - 1] == '0') nd--;
  if (exp >= 21 || exp <= -7) {
    out[o++] = digits[0];
    if (nd > 1) {
      out[o++] = '.';
      for (i = 1; i < nd; i++) out[o++] = digits[i];
    }
    snprintf(out + o, sizeof out - (size_t)o, "e%c%d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  } else if (exp >= 0) {
    for (i = 0; i <= exp; i++) out[o++] = i < nd ? digits[i] : '0';
    out[o++] = '.';
    if (nd > exp + 1)
      for (i = exp + 1; i < nd; i++) out[o++] = digits[i];
    else
      out[o++] = '0';
    out[o] = '\0';
  } else {
    out[o++] = '0';
    out[o++] = '.';
    for (i = 0; i < -exp - 1; i++) out[o++] = '0';
    for (i = 0; i < nd; i++) out[o++] = digits[i];
    out[o] = '\0';
  }
  sb_puts(b, out);
}

/* The VM hands extension handlers Map<String,String> built with toString()
 * (vmservice.md §3.3): strings as they are, maps as "{a: 1, b: [1, 2]}". */
static void dart_string(sb_t *b, json_t *v) {
  char num[32];
  size_t i;
  const char *k;
  json_t *x;
  int first = 1;

  switch (json_typeof(v)) {
    case JSON_STRING:
      sb_add(b, json_string_value(v), json_string_length(v));
      break;
    case JSON_INTEGER:
      snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
      sb_puts(b, num);
      break;
    case JSON_REAL:
      dart_double(b, json_real_value(v));
      break;
    case JSON_TRUE:
      sb_puts(b, "true");
      break;
    case JSON_FALSE:
      sb_puts(b, "false");
      break;
    case JSON_NULL:
      sb_puts(b, "null");
      break;
    case JSON_ARRAY:
      sb_puts(b, "[");
      json_array_foreach(v, i, x) {
        if (i) sb_puts(b, ", ");
        dart_string(b, x);
      }
      sb_puts(b, "]");
      break;
    case JSON_OBJECT:
      sb_puts(b, "{");
      json_object_foreach(v, k, x) {
        if (!first) sb_puts(b, ", ");
        first = 0;
        sb_puts(b, k);
        sb_puts(b, ": ");
        dart_string(b, x);
      }
      sb_puts(b, "}");
      break;
  }
}

/* The params an extension handler receives: every value a string. Native:
 * toString(), isolateId kept; web (DWDS): jsonEncode, isolateId removed. */
static json_t *handed_params(const sim_t *s, json_t *params) {
  json_t *out = json_object(), *v;
  const char *k;

  json_object_foreach(params, k, v) {
    if (s->cfg.mode == SIM_MODE_WEB && !strcmp(k, "isolateId")) continue;
    if (json_is_string(v)) {
      json_object_set(out, k, v);
    } else if (s->cfg.mode == SIM_MODE_WEB) {
      char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
      json_object_set_new(out, k, json_string(t ? t : ""));
      free(t);
    } else {
      sb_t b = {NULL, 0, 0};
      dart_string(&b, v);
      json_object_set_new(out, k, json_string(b.p ? b.p : ""));
      free(b.p);
    }
  }
  return out;
}

/* ---- replies ------------------------------------------------------------ */

static void send_result(sim_call_t *k, json_t *result) {
  if (!k->reply || !k->conn) {
    json_decref(result);
    return;
  }
  sim_server_send_json(
      k->conn, json_pack("{s:s, s:o, s:O}", "jsonrpc", "2.0", "result", result, "id", k->id));
}

/* Error reply; steals data (may be NULL). Via DDS every error carries the
 * whole original request in data.request (json_rpc_2). */
static void send_error(const sim_t *s, sim_call_t *k, int code, const char *message, json_t *data) {
  json_t *err;

  if (!k->reply || !k->conn) {
    json_decref(data);
    return;
  }
  if (wire(s, k->conn) == SIM_MODE_DDS && k->request) {
    if (!data) data = json_object();
    if (json_is_object(data) && !json_object_get(data, "request"))
      json_object_set(data, "request", k->request);
  }
  err = json_pack("{s:i, s:s}", "code", code, "message", message ? message : rpc_message(code));
  if (data) json_object_set_new(err, "data", data);
  sim_server_send_json(k->conn, json_pack("{s:s, s:o, s:O}", "jsonrpc", "2.0", "error", err, "id",
                                          k->id ? k->id : json_null()));
}

/* The raw VM's C++ errors carry data.request {method, params as strings}. */
static json_t *vm_error_data(const sim_t *s, sim_call_t *k, const char *details) {
  json_t *data = json_object();
  if (s->cfg.mode == SIM_MODE_VM) {
    json_t *p = handed_params(s, k->params);
    json_object_set_new(data, "request", json_pack("{s:s, s:o}", "method", k->method, "params", p));
  }
  if (details) json_object_set_new(data, "details", json_string(details));
  if (s->cfg.mode == SIM_MODE_WEB && !details) {
    json_decref(data);
    return NULL;
  }
  return data;
}

static void send_method_not_found(const sim_t *s, sim_call_t *k) {
  char msg[256];
  if (s->cfg.mode == SIM_MODE_WEB && s->cfg.dwds_websocket && !strncmp(k->method, "ext.", 4)) {
    /* WebSocket mode has no registry check: the page finds no handler, DDC's
     * null check throws, and DWDS wraps the text as -32000 (dart-lang/webdev
     * dwds/web/client.dart handleServiceExtensionRequest,
     * web_socket_proxy_service.dart _callServiceExtension; dart-lang/sdk
     * sdk/lib/_internal/js_dev_runtime/patch/developer_patch.dart). */
    send_error(s, k, RPC_SERVER_ERROR, "Unexpected null value.", NULL);
    return;
  }
  switch (wire(s, k->conn)) {
    case SIM_MODE_VM:
      send_error(s, k, RPC_METHOD_NOT_FOUND, NULL, vm_error_data(s, k, NULL));
      break;
    case SIM_MODE_DDS: /* json_rpc_2's methodNotFound after the VM fallback */
      snprintf(msg, sizeof msg, "Unknown method \"%s\".", k->method);
      send_error(s, k, RPC_METHOD_NOT_FOUND, msg, NULL);
      break;
    case SIM_MODE_WEB: /* DWDS checks its extension registry first */
      if (!strncmp(k->method, "ext.", 4) && s->vm.web_unregistered == RPC_INTERNAL_ERROR) {
        send_error(s, k, RPC_INTERNAL_ERROR, "Unexpected null value", NULL); /* flutter#186896 */
      } else if (!strncmp(k->method, "ext.", 4)) {
        snprintf(msg, sizeof msg, "Unknown service method: %s", k->method);
        send_error(s, k, RPC_METHOD_NOT_FOUND, msg, NULL);
      } else {
        send_error(s, k, RPC_METHOD_NOT_FOUND, NULL, NULL);
      }
      break;
  }
}

static void send_invalid_params(const sim_t *s, sim_call_t *k, const char *details) {
  send_error(s, k, RPC_INVALID_PARAMS, NULL, vm_error_data(s, k, details));
}

static json_t *sentinel_collected(void) {
  return json_pack("{s:s, s:s, s:s}", "type", "Sentinel", "kind", "Collected", "valueAsString",
                   "<collected>");
}

/* A message we cannot attribute to a request: answer with id null. */
static void send_bare_error(sim_t *s, sim_conn_t *c, int code, const char *details) {
  sim_call_t k;
  memset(&k, 0, sizeof k);
  k.conn = c;
  k.reply = 1;
  send_error(s, &k, code, NULL, details ? json_pack("{s:s}", "details", details) : NULL);
}

/* ---- isolate, events ---------------------------------------------------- */

static json_t *isolate_ref(const sim_t *s, const char *id, const char *number) {
  if (s->cfg.mode == SIM_MODE_WEB)
    return json_pack("{s:s, s:s, s:s, s:s, s:b}", "type", "@Isolate", "id", id, "name", "main()",
                     "number", number, "isSystemIsolate", 0);
  return json_pack("{s:s, s:s, s:s, s:s, s:b, s:s}", "type", "@Isolate", "id", id, "name", "main",
                   "number", number, "isSystemIsolate", 0, "isolateGroupId", s->vm.group_id);
}

static json_t *current_ref(const sim_t *s) {
  return isolate_ref(s, s->vm.isolate_id, s->vm.isolate_number);
}

static json_t *event_new(const sim_t *s, const char *kind, json_t *isolate) {
  return json_pack("{s:s, s:s, s:o, s:I}", "type", "Event", "kind", kind, "isolate", isolate,
                   "timestamp", (json_int_t)sim_clock_wall_ms());
}

/* Sends event (stolen) to every connection listening on stream. */
static void broadcast(sim_t *s, const char *stream, json_t *event) {
  json_t *msg = json_pack("{s:s, s:s, s:{s:s, s:O}}", "jsonrpc", "2.0", "method", "streamNotify",
                          "params", "streamId", stream, "event", event);
  char *text = json_dumps(msg, JSON_COMPACT);
  sim_conn_t *c;

  if (text) {
    for (c = s->srv.conns; c; c = c->next)
      if (json_object_get(c->streams, stream)) sim_server_send(c, text, strlen(text));
    free(text);
  }
  if ((s->cfg.mode == SIM_MODE_DDS || s->dds.attached) && !strcmp(stream, "Extension")) {
    /* DDS replays the Extension stream's history to new listeners. */
    if (json_array_size(s->vm.ext_history) >= 1000) json_array_remove(s->vm.ext_history, 0);
    json_array_append(s->vm.ext_history, msg);
  }
  json_decref(msg);
  json_decref(event);
}

/* The Extension event a VM-service client gets, stamped now and with the
 * current isolate: for DWDS that is when it parses the page's DebugEvent
 * (proxy_service.dart parseDebugEvent). Steals data. */
static void emit_extension(sim_t *s, const char *extension_kind, json_t *data) {
  json_t *ev = event_new(s, "Extension", current_ref(s));
  json_object_set_new(ev, "extensionKind", json_string(extension_kind));
  json_object_set_new(ev, "extensionData", data);
  broadcast(s, "Extension", ev);
}

/* DWDS received a BatchedDebugEvents: one Extension event each, in order
 * (dev_handler.dart, proxy_service.dart parseBatchedDebugEvents). */
static void on_dwds_batch(sim_dwds_t *d, json_t *batch) {
  sim_t *s = (sim_t *)((char *)d - offsetof(sim_t, dwds));
  size_t i;
  json_t *e;

  json_array_foreach(batch, i, e) {
    emit_extension(s, json_string_value(json_object_get(e, "kind")),
                   json_incref(json_object_get(e, "data")));
  }
  json_decref(batch);
}

void sim_vm_post_event(sim_t *s, const char *extension_kind, json_t *data) {
  /* --web-frame-number: web_ui's FrameTiming defaults frameNumber to 1 and
   * its recorder before flutter#171592 never set it (docs/flutter-apis.md). */
  if (s->cfg.web_frame_number != -2 && !strcmp(extension_kind, "Flutter.Frame"))
    json_object_set_new(data, "number", json_integer(s->cfg.web_frame_number));
  /* ... and the inspector's _onFrameStart reads frameData.frameNumber, which
   * web_ui's FrameData.webOnly() gave as -1 in that era (flutter/engine
   * lib/web_ui/lib/window.dart at 12ce4480: `int get frameNumber => -1`). */
  if (s->cfg.web_frame_number != -2 && !strcmp(extension_kind, "Flutter.RebuiltWidgets"))
    json_object_set_new(data, "frameNumber", json_integer(-1));
  if (s->dwds.on) /* web: the page's postEvent goes through emitDebugEvent */
    sim_dwds_post(&s->dwds, extension_kind, data);
  else
    emit_extension(s, extension_kind, data);
}

static void new_isolate(sim_t *s) {
  if (s->cfg.mode == SIM_MODE_WEB) {
    /* DWDS ids come from a global counter shared with other objects: the
     * first isolate is "1", a restarted one jumps further. */
    s->vm.web_counter += s->vm.web_counter ? 2 + (unsigned)(sim_rand_next(&s->rng) % 3) : 1;
    snprintf(s->vm.isolate_number, sizeof s->vm.isolate_number, "%u", s->vm.web_counter);
    snprintf(s->vm.isolate_id, sizeof s->vm.isolate_id, "%u", s->vm.web_counter);
  } else {
    uint64_t n = 1000000000000000ull + sim_rand_next(&s->rng) % 8000000000000000ull;
    snprintf(s->vm.isolate_number, sizeof s->vm.isolate_number, "%llu", (unsigned long long)n);
    snprintf(s->vm.isolate_id, sizeof s->vm.isolate_id, "isolates/%llu", (unsigned long long)n);
  }
  s->vm.isolate_start_ms = sim_clock_wall_ms();
}

static int ext_available(const sim_t *s, size_t i) {
  /* A plain Dart program has dart:io's extensions and none of Flutter's. */
  if (s->cfg.plain_dart && strncmp(flutter_exts[i].name, "ext.dart.io.", 12)) return 0;
  return !(flutter_exts[i].native_only && s->cfg.mode == SIM_MODE_WEB) &&
         !(flutter_exts[i].debug_only && s->cfg.profile);
}

/* Ticks every 10 ms and posts what the rate owes for the time that really
 * passed, so a late tick catches up rather than lowering the rate. */
static void on_flood_tick(uv_timer_t *t) {
  sim_t *s = t->data;
  uint64_t now = uv_now(s->loop);
  double owed =
      s->vm.flood_carry + (double)s->vm.flood_rate * (double)(now - s->vm.flood_last_ms) / 1000.0;
  uint64_t n = (uint64_t)owed;

  s->vm.flood_carry = owed - (double)n;
  s->vm.flood_last_ms = now;
  for (; n > 0; n--) {
    s->vm.flood_sent++;
    if (s->vm.flood_extension) {
      sim_vm_post_event(s, "Sim.Flood", json_pack("{s:I}", "n", (json_int_t)s->vm.flood_sent));
    } else {
      json_t *ev = event_new(s, "ServiceExtensionAdded", current_ref(s));
      json_object_set_new(ev, "extensionRPC", json_string("ext.sim.flood"));
      broadcast(s, "Isolate", ev);
    }
  }
}

void sim_vm_set_flood(sim_t *s, int per_second, int extension_stream) {
  s->vm.flood_rate = per_second;
  s->vm.flood_extension = extension_stream;
  s->vm.flood_carry = 0;
  s->vm.flood_last_ms = uv_now(s->loop);
  if (per_second > 0)
    uv_timer_start(&s->vm.flood_timer, on_flood_tick, 10, 10);
  else
    uv_timer_stop(&s->vm.flood_timer);
}

static json_t *extension_rpcs(const sim_t *s) {
  json_t *a = json_array();
  size_t i;
  if (s->vm.web_not_started) return a;
  for (i = 0; i < N_FLUTTER_EXTS; i++)
    if (ext_available(s, i)) json_array_append_new(a, json_string(flutter_exts[i].name));
  if (s->vm.watcher) json_array_append_new(a, json_string(TELESCOPE_EXT));
  if (s->cfg.flutter_driver) json_array_append_new(a, json_string(DRIVER_EXT));
  return a;
}

static void announce_extension(sim_t *s, const char *name) {
  json_t *ev = event_new(s, "ServiceExtensionAdded", current_ref(s));
  json_object_set_new(ev, "extensionRPC", json_string(name));
  broadcast(s, "Isolate", ev);
}

/* ---- held calls ---------------------------------------------------------- */

static void call_free(sim_call_t *k) {
  if (!k) return;
  json_decref(k->request);
  json_decref(k->params);
  json_decref(k->driver_reply);
  free(k);
}

static void run_call(sim_t *s, sim_call_t *k);
static int driver_hold(sim_t *s, sim_call_t *k);

static void on_call_timer(uv_timer_t *t);

/* DWDS's WebSocket mode relays extension calls to the page with a timeout;
 * a TimeoutException becomes -32603. */
static void send_web_timeout(const sim_t *s, sim_call_t *k) {
  char msg[160];
  uint64_t ms = (uint64_t)s->vm.web_timeout_ms;
  snprintf(msg, sizeof msg,
           "Unexpected DWDS error for callServiceExtension: TimeoutException after "
           "%llu:%02llu:%02llu.%03llu000: Future not completed",
           (unsigned long long)(ms / 3600000), (unsigned long long)(ms / 60000 % 60),
           (unsigned long long)(ms / 1000 % 60), (unsigned long long)(ms % 1000));
  send_error(s, k, RPC_INTERNAL_ERROR, msg, NULL);
}

/* Answers every held call that may go now, in arrival order; replies may
 * therefore leave out of order. Re-arms the timer for the next delayed one.
 *
 * A watcher call never overtakes an earlier one: the isolate invokes its
 * pending extension calls in arrival order (Isolate::AppendServiceExtensionCall
 * and InvokePendingServiceExtensionCalls, dart-lang/sdk runtime/vm/isolate.cc),
 * and the watcher acts after one zero-length timer (handleExtension), so a
 * start held behind a slow read cannot run after a stop sent later. */
static void pump(sim_t *s) {
  uint64_t now = uv_now(s->loop), next = 0;
  sim_call_t **pp = &s->vm.calls_head, *k;
  int watcher_held = 0;

  s->vm.calls_tail = NULL;
  while ((k = *pp)) {
    int dead = strcmp(k->isolate_id, s->vm.isolate_id) != 0;
    if (!dead) {
      int wait = 0, watcher = !strcmp(k->method, TELESCOPE_EXT);
      if (s->vm.paused || (k->hang && (watcher ? s->vm.ext_hang : s->vm.flutter_ext_hang)) ||
          (watcher && watcher_held))
        wait = 1;
      else if (k->due_ms > now) {
        wait = 1;
        if (!next || k->due_ms < next) next = k->due_ms;
      } else if (k->driver)
        wait = driver_hold(s, k);
      watcher_held |= wait && watcher;
      if (wait && k->deadline_ms && k->deadline_ms <= now) {
        *pp = k->next;
        k->next = NULL;
        send_web_timeout(s, k);
        call_free(k);
        continue;
      }
      if (wait) {
        if (k->deadline_ms && (!next || k->deadline_ms < next)) next = k->deadline_ms;
        s->vm.calls_tail = k;
        pp = &k->next;
        continue;
      }
    }
    *pp = k->next;
    k->next = NULL;
    run_call(s, k);
    call_free(k);
  }
  if (next && !s->stopping) uv_timer_start(&s->vm.call_timer, on_call_timer, next - now, 0);
}

static void on_call_timer(uv_timer_t *t) {
  sim_t *s = (sim_t *)((char *)t - offsetof(sim_t, vm.call_timer));
  pump(s);
}

static void hold(sim_t *s, sim_call_t *k) {
  k->next = NULL;
  if (s->vm.calls_tail)
    s->vm.calls_tail->next = k;
  else
    s->vm.calls_head = k;
  s->vm.calls_tail = k;
}

size_t sim_vm_held_calls(const sim_t *s) {
  size_t n = 0;
  const sim_call_t *k;
  for (k = s->vm.calls_head; k; k = k->next) n++;
  return n;
}

/* ---- extensions ----------------------------------------------------------- */

static void set_type_response(const sim_t *s, json_t *result) {
  /* DWDS returns extension results through Response.toJson(). */
  if (s->cfg.mode == SIM_MODE_WEB && json_is_object(result))
    json_object_set_new(result, "type", json_string("Response"));
}

/* The reply with a "padding" member of n bytes, spliced in as text: making
 * jansson escape-check 64 MiB took a second, longer than a client timeout. */
static void send_padded(sim_call_t *k, json_t *result, size_t n) {
  static const char head[] = "{\"jsonrpc\":\"2.0\",\"result\":";
  static const char pad[] = ",\"padding\":\"";
  char *body, *id, *text, *p;
  size_t blen, ilen, len;

  if (!k->reply || !k->conn) return;
  body = json_dumps(result, JSON_COMPACT);
  id = json_dumps(k->id, JSON_COMPACT | JSON_ENCODE_ANY);
  if (!body || !id) goto done;
  blen = strlen(body) - 1; /* without the closing brace */
  ilen = strlen(id);
  len = sizeof head - 1 + blen + sizeof pad - 1 + n + 2 + 6 + ilen + 1;
  text = malloc(len);
  if (!text) goto done;
  p = text;
  memcpy(p, head, sizeof head - 1), p += sizeof head - 1;
  memcpy(p, body, blen), p += blen;
  memcpy(p, pad, sizeof pad - 1), p += sizeof pad - 1;
  memset(p, 'x', n), p += n;
  memcpy(p, "\"}", 2), p += 2;
  memcpy(p, ",\"id\":", 6), p += 6;
  memcpy(p, id, ilen), p += ilen;
  *p++ = '}';
  sim_server_send(k->conn, text, (size_t)(p - text));
  free(text);
done:
  free(body);
  free(id);
}

/* The watcher model's reply to params, or to them as a status. */
static json_t *model_reply(sim_t *s, json_t *params, int as_status, char **detail) {
  json_t *p = as_status ? json_copy(params) : json_incref(params), *r;
  if (as_status) json_object_set_new(p, "action", json_string("status"));
  r = s->model ? wm_handle(s->model, p, sim_clock_now_us(), detail) : NULL;
  json_decref(p);
  return r;
}

static void frames_reply(sim_t *s, sim_call_t *k) {
  char *detail = NULL;
  json_t *r;

  if (s->vm.ext_error && s->cfg.mode == SIM_MODE_WEB && s->cfg.dwds_websocket) {
    /* WebSocket mode returns the handler's error object as the result
     * (ServiceExtensionResponse._toString, dart-lang/sdk
     * sdk/lib/developer/extension.dart; Response.toJson adds the type). */
    r = json_pack("{s:i, s:s, s:{s:s}}", "code", RPC_SERVER_ERROR, "message", "Server error",
                  "data", "details", "Exception: simulated watcher failure (telescope-sim ext-error on)");
    set_type_response(s, r);
    send_result(k, r);
    return;
  }
  if (s->vm.ext_error) {
    send_error(s, k, RPC_SERVER_ERROR, "Server error",
               json_pack("{s:s}", "details",
                         "Exception: simulated watcher failure (telescope-sim "
                         "ext-error on)\n#0      FramePerfWatcher.handle "
                         "(package:telescope/src/frame_perf_watcher.dart)"));
    return;
  }
  /* drive (issue 32) is the watcher's own action: the model answers it as
   * a status, and the drive goes on in sim_drive. */
  const char *action = json_string_value(json_object_get(k->params, "action"));
  int drive = action && !strcmp(action, "drive");
  r = model_reply(s, k->params, drive, &detail);
  if (!r) {
    send_error(s, k, RPC_INVALID_PARAMS, "Invalid params",
               json_pack("{s:s}", "details", detail ? detail : "bad params"));
    free(detail);
    return;
  }
  if (drive) {
    int code = sim_drive_start(s, k->params, sim_clock_now_us(), &detail);
    if (code) { /* ServiceExtensionResponse.error(code, detail) */
      send_error(s, k, code, NULL, json_pack("{s:s}", "details", detail ? detail : "?"));
      free(detail);
      json_decref(r);
      return;
    }
    /* The reply shows the first step's interaction, set just now. */
    json_decref(r);
    if (!(r = model_reply(s, k->params, 1, &detail))) {
      send_error(s, k, RPC_INTERNAL_ERROR, NULL, NULL);
      free(detail);
      return;
    }
  } else if (action && !strcmp(action, "stop")) {
    sim_drive_cancel(s);
  }
  sim_drive_reply_add(s, r, drive);
  switch (s->vm.reply) {
    case SIM_REPLY_NORMAL:
      break;
    case SIM_REPLY_WRONGTYPES: {
      const char *keys[] = {"livenessCounter", "lastSeq", "firstSeq"};
      size_t i;
      for (i = 0; i < 3; i++) {
        json_t *v = json_object_get(r, keys[i]);
        if (json_is_integer(v)) {
          char num[32];
          snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
          json_object_set_new(r, keys[i], json_string(num));
        }
      }
      json_object_set_new(r, "collecting", json_string("true"));
      break;
    }
    case SIM_REPLY_HUGE:
      set_type_response(s, r);
      send_padded(k, r, s->vm.huge_mb << 20);
      json_decref(r);
      return;
    case SIM_REPLY_MALFORMED:
      if (k->reply && k->conn) {
        char *id = json_dumps(k->id, JSON_ENCODE_ANY | JSON_COMPACT);
        char text[256];
        int n = snprintf(text, sizeof text,
                         "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"protocol\":1,"
                         "\"records\":[{\"seq\":",
                         id ? id : "null");
        free(id);
        if (n > 0 && (size_t)n < sizeof text) sim_server_send(k->conn, text, (size_t)n);
      }
      json_decref(r);
      return;
  }
  set_type_response(s, r);
  send_result(k, r);
}

static void flutter_ext_reply(sim_t *s, sim_call_t *k, size_t i) {
  json_t *r;

  switch (flutter_exts[i].kind) {
    case EXT_BOOL: {
      int *state = &s->vm.bool_ext[flutter_exts[i].bool_index];
      json_t *v = json_object_get(k->params, "enabled");
      if (v) {
        int was = *state;
        *state = json_is_string(v) && !strcmp(json_string_value(v), "true");
        /* Switching rebuild tracking on forces a rebuild (forceRebuild):
         * a frame is drawn even by an idle app. */
        if (flutter_exts[i].bool_index == SIM_EXT_TRACK_REBUILDS && *state && !was)
          s->gen.probe_requested = s->gen.force_rebuild = 1;
        /* The binding's registerBoolServiceExtension posts the value as a
         * string, the inspector's _registerBoolServiceExtension as a bool
         * (foundation/binding.dart, widgets/widget_inspector.dart). */
        sim_vm_post_event(s, "Flutter.ServiceExtensionStateChanged",
                          json_pack("{s:s, s:o}", "extension", k->method, "value",
                                    strncmp(k->method, "ext.flutter.inspector.", 22)
                                        ? json_string(*state ? "true" : "false")
                                        : json_boolean(*state)));
      }
      r = json_pack("{s:s, s:s, s:s}", "enabled", *state ? "true" : "false", "type",
                    "_extensionType", "method", k->method);
      break;
    }
    case EXT_SCHEDULE_FRAME:
      s->gen.probe_requested = 1;
      r = json_pack("{s:s}", "type", "Success");
      break;
    case EXT_LOCATION_MAP:
      /* _registerSignalServiceExtension answers {'result': await callback()}
       * (widget_inspector.dart): the map of _locationIdMapToJson() is under
       * "result", beside the binding's type/method. */
      r = json_pack("{s:o, s:s, s:s}", "result", sim_rebuild_location_map(&s->rebuild), "type",
                    "_extensionType", "method", k->method);
      break;
    case EXT_REASSEMBLE:
      s->gen.probe_requested = 1;
      /* fall through */
    default:
      r = json_pack("{s:s, s:s}", "type", "_extensionType", "method", k->method);
      break;
  }
  set_type_response(s, r);
  send_result(k, r);
}

/* ---- ext.flutter.driver (issue 32, DRIVE.md §4) -------------------------- */

/* A command's life: parsed and started when the isolate first runs it, then
 * held until its gesture (scroll, tap) or the scroll's animation
 * (waitUntilNoTransientCallbacks) has ended, as flutter_driver's handlers
 * await them (handler_factory.dart _scroll, _tap, _waitUntilNoTransientCallbacks). */
typedef enum { DRIVER_NONE = 0, DRIVER_NEW, DRIVER_GESTURE, DRIVER_ANIMATION, DRIVER_ANSWERED } driver_phase_t;

/* One line per call on stderr, the params (isolateId aside) as compact JSON
 * with sorted keys: a test reads the exact commands. */
static void driver_log(json_t *params) {
  json_t *p = json_copy(params);
  json_object_del(p, "isolateId");
  char *text = json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS);
  sim_log_always("%s %s", DRIVER_EXT, text ? text : "{}");
  free(text);
  json_decref(p);
}

/* FlutterDriverExtension._makeResponse: an error's response is its message. */
static json_t *driver_response(int is_error, json_t *response) {
  return json_pack("{s:b, s:o}", "isError", is_error, "response", response);
}

static json_t *driver_error(const char *command, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static json_t *driver_error(const char *command, const char *fmt, ...) {
  char what[512], msg[700];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  snprintf(msg, sizeof msg, "Uncaught extension error while executing %s: %s", command, what);
  return driver_response(1, json_string(msg));
}

/* The finder fields of a CommandWithTarget (flutter_driver find.dart,
 * SerializableFinder.deserialize) as a drive finder in out; step->kind
 * becomes DP_BACK for PageBack. NULL, or the error's text. */
static const char *driver_finder(json_t *p, dp_step_t *step) {
  const char *type = json_string_value(json_object_get(p, "finderType"));
  const char *value = NULL, *prefix = NULL;
  if (!type) return "Unsupported search specification type null";
  if (!strcmp(type, "ByValueKey")) {
    const char *kt = json_string_value(json_object_get(p, "keyValueType"));
    if (!kt || (strcmp(kt, "String") && strcmp(kt, "int")))
      return "Unsupported key value type (String, int)";
    /* The feed's keys are all ValueKey<String>: an int key matches none. */
    prefix = strcmp(kt, "String") ? "key:#int " : "key:";
    value = json_string_value(json_object_get(p, "keyValueString"));
  } else if (!strcmp(type, "ByText")) {
    prefix = "text:";
    value = json_string_value(json_object_get(p, "text"));
  } else if (!strcmp(type, "ByType")) {
    prefix = "type:";
    value = json_string_value(json_object_get(p, "type"));
  } else if (!strcmp(type, "PageBack")) {
    step->kind = DP_BACK;
    return NULL;
  } else {
    return "Unsupported search specification type (ByValueKey, ByText, ByType, PageBack)";
  }
  if (!value || strlen(prefix) + strlen(value) > DP_FINDER_MAX) return "bad finder fields";
  strcpy(step->finder, prefix);
  strcat(step->finder, value); /* fits: checked above */
  return NULL;
}

/* Starts a command (DRIVER_NEW) or says whether it must still wait. Sets
 * k->driver_reply when the answer is known. Returns 1 to keep holding. */
static int driver_hold(sim_t *s, sim_call_t *k) {
  json_t *p = k->params;
  const char *command = json_string_value(json_object_get(p, "command"));
  if (k->driver == DRIVER_GESTURE && sim_drive_busy(s)) return 1;
  if (k->driver == DRIVER_ANIMATION && sim_drive_animating(s)) return 1;
  if (k->driver == DRIVER_GESTURE || k->driver == DRIVER_ANIMATION) {
    k->driver = DRIVER_ANSWERED;
    k->driver_reply = driver_response(0, json_object()); /* Result.empty */
    return 0;
  }
  if (k->driver == DRIVER_ANSWERED) return 0;
  k->driver = DRIVER_ANSWERED;
  if (!command) {
    k->driver_reply = driver_error("null", "Null check operator used on a null value");
  } else if (!strcmp(command, "get_health")) {
    k->driver_reply = driver_response(0, json_pack("{s:s}", "status", "ok"));
  } else if (!strcmp(command, "waitUntilNoTransientCallbacks")) {
    k->driver = DRIVER_ANIMATION;
    return driver_hold(s, k);
  } else if (!strcmp(command, "scroll") || !strcmp(command, "tap")) {
    dp_step_t step;
    memset(&step, 0, sizeof step);
    step.kind = !strcmp(command, "tap") ? DP_TAP : DP_SCROLL;
    const char *bad = driver_finder(p, &step);
    double hz = 0;
    int64_t duration_us = 0;
    if (!bad && step.kind == DP_SCROLL) {
      /* Scroll.deserialize: double.parse(dx, dy), int.parse(duration,
       * frequency) (gesture.dart). */
      const char *v[4];
      const char *names[4] = {"dx", "dy", "duration", "frequency"};
      char *end;
      double n[4];
      for (int i = 0; i < 4 && !bad; i++) {
        v[i] = json_string_value(json_object_get(p, names[i]));
        n[i] = v[i] && *v[i] ? strtod(v[i], &end) : 0;
        if (!v[i] || !*v[i] || *end) bad = "FormatException: dx, dy, duration, frequency";
      }
      if (!bad && (n[2] < 1 || n[3] < 1 || n[2] * n[3] < 1e6))
        bad = "IntegerDivisionByZeroException (duration x frequency under one move)";
      step.dx = n[0], step.dy = n[1], duration_us = (int64_t)n[2], hz = n[3];
    } else if (!bad && step.kind == DP_BACK) {
      bad = "no back button on screen (a Material or Cupertino back button)";
    }
    char *message = NULL;
    if (bad) {
      k->driver_reply = driver_error(command, "%s", bad);
    } else if (sim_drive_driver_step(s, &step, duration_us, hz, sim_clock_now_us(), &message)) {
      k->driver_reply = driver_error(command, "%s", message ? message : "failed");
    } else {
      k->driver = DRIVER_GESTURE;
      free(message);
      return driver_hold(s, k);
    }
    free(message);
  } else {
    k->driver_reply = driver_error(command, "DriverError: Unsupported command kind %s", command);
  }
  return 0;
}

void sim_vm_driver_pump(sim_t *s) {
  for (sim_call_t *k = s->vm.calls_head; k; k = k->next)
    if (k->driver) {
      pump(s);
      return;
    }
}

static void run_call(sim_t *s, sim_call_t *k) {
  size_t i;

  if (strcmp(k->isolate_id, s->vm.isolate_id) != 0) {
    /* The isolate exited while the call was queued in it. */
    send_result(k, sentinel_collected());
    return;
  }
  if (!strcmp(k->method, TELESCOPE_EXT)) {
    if (!s->vm.watcher)
      send_method_not_found(s, k);
    else
      frames_reply(s, k);
    return;
  }
  if (!strcmp(k->method, DRIVER_EXT) && s->cfg.flutter_driver) {
    if (!k->driver_reply) driver_hold(s, k); /* a command that never waited */
    set_type_response(s, k->driver_reply);
    send_result(k, json_incref(k->driver_reply));
    return;
  }
  for (i = 0; i < N_FLUTTER_EXTS; i++)
    if (ext_available(s, i) && !strcmp(k->method, flutter_exts[i].name)) {
      flutter_ext_reply(s, k, i);
      return;
    }
  send_method_not_found(s, k);
}

static int isolate_id_valid(const char *id) {
  const char *p;
  if (strncmp(id, "isolates/", 9) != 0) return 0;
  p = id + 9;
  if (!strcmp(p, "root")) return 1;
  if (!*p) return 0;
  for (; *p; p++)
    if (*p < '0' || *p > '9') return 0;
  return 1;
}

/* ext.*: routed to the isolate named by isolateId, queued there, answered
 * when the isolate runs it (not while paused; later when slow or hung). */
static int do_extension(sim_t *s, sim_call_t *k) {
  json_t *iso = json_object_get(k->params, "isolateId");
  const char *id = json_is_string(iso) ? json_string_value(iso) : NULL;
  json_t *handed;
  int frames = !strcmp(k->method, TELESCOPE_EXT);

  if (s->cfg.mode == SIM_MODE_WEB) {
    /* DWDS: isolateId optional; any other id is the Collected Sentinel. */
    if (iso && (!id || strcmp(id, s->vm.isolate_id) != 0)) {
      send_result(k, sentinel_collected());
      return 0;
    }
    if (s->vm.web_not_started) {
      /* Started paused: main() has registered nothing, and DWDS answers from
       * its registry at once (chrome_proxy_service.dart, "Unknown service
       * method"), paused or not. */
      send_method_not_found(s, k);
      return 0;
    }
  } else {
    if (!iso) { /* routed to the VM isolate, which has no extensions */
      send_method_not_found(s, k);
      return 0;
    }
    if (!id || !isolate_id_valid(id)) {
      char d[256];
      char *v = json_dumps(iso, JSON_ENCODE_ANY);
      snprintf(d, sizeof d, "%s: invalid 'isolateId' parameter: %s", k->method,
               id ? id : (v ? v : "?"));
      free(v);
      send_invalid_params(s, k, d);
      return 0;
    }
    if (strcmp(id, s->vm.isolate_id) != 0) {
      int w;
      for (w = 0; w < s->vm.n_workers; w++)
        if (!strcmp(id, s->vm.worker_ids[w])) {
          /* A worker isolate registered no extensions. */
          send_method_not_found(s, k);
          return 0;
        }
      send_result(k, sentinel_collected());
      return 0;
    }
  }
  handed = handed_params(s, k->params);
  if (frames) {
    json_decref(s->vm.last_raw_params);
    json_decref(s->vm.last_handed_params);
    s->vm.last_raw_params = json_deep_copy(k->params);
    s->vm.last_handed_params = json_deep_copy(handed);
  }
  json_decref(k->params);
  k->params = handed;
  snprintf(k->isolate_id, sizeof k->isolate_id, "%s", s->vm.isolate_id);
  k->due_ms = frames && s->vm.ext_delay_ms > 0 ? uv_now(s->loop) + (uint64_t)s->vm.ext_delay_ms : 0;
  k->hang = frames ? s->vm.ext_hang : s->vm.flutter_ext_hang;
  if (!strcmp(k->method, DRIVER_EXT) && s->cfg.flutter_driver) {
    k->driver = DRIVER_NEW;
    driver_log(k->params);
  }
  k->deadline_ms = s->cfg.mode == SIM_MODE_WEB && s->vm.web_timeout_ms > 0
                       ? uv_now(s->loop) + (uint64_t)s->vm.web_timeout_ms
                       : 0;
  hold(s, k);
  pump(s);
  return 1;
}

/* ---- core RPCs ------------------------------------------------------------ */

/* Resolves params.isolateId for isolate RPCs; 0 when the reply was sent. */
static int check_isolate(sim_t *s, sim_call_t *k) {
  json_t *iso = json_object_get(k->params, "isolateId");
  char d[160];

  if (!json_is_string(iso)) {
    snprintf(d, sizeof d, "%s: expects the 'isolateId' parameter", k->method);
    send_invalid_params(s, k, d);
    return 0;
  }
  for (int w = 0; w < s->vm.n_workers; w++)
    if (!strcmp(json_string_value(iso), s->vm.worker_ids[w])) return 2 + w;
  if (strcmp(json_string_value(iso), s->vm.isolate_id) != 0) {
    if (s->cfg.mode != SIM_MODE_WEB && !isolate_id_valid(json_string_value(iso))) {
      snprintf(d, sizeof d, "%s: invalid 'isolateId' parameter: %.64s", k->method,
               json_string_value(iso));
      send_invalid_params(s, k, d);
      return 0;
    }
    send_result(k, sentinel_collected());
    return 0;
  }
  return 1;
}

static void do_get_version(sim_t *s, sim_call_t *k) {
  (void)s;
  send_result(k, json_pack("{s:s, s:i, s:i}", "type", "Version", "major", 4, "minor", 16));
}

static void do_get_supported_protocols(sim_t *s, sim_call_t *k) {
  json_t *p = json_pack("[{s:s, s:i, s:i}]", "protocolName", "VM Service", "major", 4, "minor", 16);
  if (wire(s, k->conn) == SIM_MODE_DDS)
    json_array_append_new(
        p, json_pack("{s:s, s:i, s:i}", "protocolName", "DDS", "major", 2, "minor", 0));
  send_result(k, json_pack("{s:s, s:o}", "type", "ProtocolList", "protocols", p));
}

static json_t *worker_ref(const sim_t *s, int w);

static void do_get_vm(sim_t *s, sim_call_t *k) {
  json_t *vm;

  if (s->cfg.mode == SIM_MODE_WEB) {
    vm = json_pack(
        "{s:s, s:s, s:i, s:s, s:s, s:s, s:s, s:i, s:I, s:[o], s:[], "
        "s:[], s:[]}",
        "type", "VM", "name", "ChromeDebugProxy", "architectureBits", -1, "hostCPU", "DWDS",
        "operatingSystem", "linux", "targetCPU", "Web", "version",
        "3.8.0 (simulated by telescope-sim)", "pid", -1, "startTime",
        (json_int_t)s->vm.isolate_start_ms, "isolates", current_ref(s), "isolateGroups",
        "systemIsolates", "systemIsolateGroups");
  } else {
    const char *group_num = strchr(s->vm.group_id, '/') + 1;
    vm = json_pack(
        "{s:s, s:s, s:i, s:s, s:s, s:s, s:s, s:i, s:I, s:[o], "
        "s:[{s:s, s:s, s:s, s:s, s:b}], s:[], s:[]}",
        "type", "VM", "name", "vm", "architectureBits", 64, "hostCPU", "telescope-sim",
        "operatingSystem", "linux", "targetCPU", "x64", "version",
        "3.8.0 (simulated by telescope-sim) on \"linux_x64\"", "pid", (int)getpid(), "startTime",
        (json_int_t)s->vm.isolate_start_ms, "isolates", current_ref(s), "isolateGroups", "type",
        "@IsolateGroup", "id", s->vm.group_id, "name", "main.dart", "number", group_num,
        "isSystemIsolateGroup", 0, "systemIsolates", "systemIsolateGroups");
    /* Workers first: a client must pick the isolate that serves the
     * extension, not the first one listed. */
    for (int w = s->vm.n_workers - 1; w >= 0; w--)
      json_array_insert_new(json_object_get(vm, "isolates"), 0, worker_ref(s, w));
  }
  send_result(k, vm);
}

static json_t *worker_ref(const sim_t *s, int w) {
  char name[32];
  snprintf(name, sizeof name, "worker-%d", w + 1);
  return json_pack("{s:s, s:s, s:s, s:s, s:b, s:s}", "type", "@Isolate", "id", s->vm.worker_ids[w],
                   "name", name, "number", s->vm.worker_numbers[w], "isSystemIsolate", 0,
                   "isolateGroupId", s->vm.group_id);
}

static void do_get_isolate(sim_t *s, sim_call_t *k) {
  json_t *iso, *lib, *rpcs, *pause;
  int which = check_isolate(s, k);

  if (!which) return;
  if (which >= 2) {
    /* A worker (Isolate.spawn, compute): running, no extensions, so the VM
     * leaves extensionRPCs out. */
    iso = worker_ref(s, which - 2);
    json_object_set_new(iso, "type", json_string("Isolate"));
    json_object_set_new(iso, "startTime", json_integer(s->vm.isolate_start_ms));
    json_object_set_new(iso, "runnable", json_true());
    json_object_set_new(iso, "livePorts", json_integer(1));
    json_object_set_new(iso, "pauseOnExit", json_false());
    json_object_set_new(iso, "pauseEvent", event_new(s, "Resume", worker_ref(s, which - 2)));
    json_object_set_new(iso, "breakpoints", json_array());
    json_object_set_new(iso, "exceptionPauseMode", json_string("Unhandled"));
    send_result(k, iso);
    return;
  }
  iso = current_ref(s);
  json_object_set_new(iso, "type", json_string("Isolate"));
  json_object_set_new(iso, "startTime", json_integer(s->vm.isolate_start_ms));
  json_object_set_new(iso, "runnable", json_true());
  json_object_set_new(iso, "livePorts", json_integer(4));
  json_object_set_new(iso, "pauseOnExit", json_false());
  pause = event_new(s, s->vm.pause_kind, current_ref(s));
  if (s->vm.paused) json_object_set_new(pause, "timestamp", json_integer(s->vm.pause_ms));
  json_object_set_new(iso, "pauseEvent", pause);
  /* The app's own package, as its CPU samples' scripts name it (sim_cpu.c). */
  lib = json_pack("{s:s, s:s, s:s, s:s}", "type", "@Library", "id", "libraries/@1", "name", "",
                  "uri", "package:sim_app/main.dart");
  json_object_set(iso, "rootLib", lib);
  json_object_set_new(iso, "libraries", json_pack("[o]", lib));
  json_object_set_new(iso, "breakpoints", json_array());
  json_object_set_new(iso, "exceptionPauseMode", json_string("Unhandled"));
  json_object_set_new(iso, "isolateFlags", json_array());
  rpcs = extension_rpcs(s);
  if (s->cfg.mode == SIM_MODE_WEB && s->cfg.dwds_websocket) {
    /* WebSocket mode fills extensionRPCs only when something asks the page
     * (dwds/lib/src/debugging/web_socket_inspector.dart): an empty list. */
    json_decref(rpcs);
    json_object_set_new(iso, "extensionRPCs", json_array());
  } else if (json_array_size(rpcs))
    /* The VM omits extensionRPCs when no extension was ever registered. */
    json_object_set_new(iso, "extensionRPCs", rpcs);
  else
    json_decref(rpcs);
  send_result(k, iso);
}

static const char *const core_streams[] = {
    "VM",      "Isolate", "Debug",        "Profiler", "GC",     "Extension", "Timeline",
    "Logging", "Service", "HeapSnapshot", "Stdout",   "Stderr", "Timer"};
static const char *const web_streams[] = {"Isolate", "Extension", "Debug",   "Logging", "VM",
                                          "GC",      "Timeline",  "Service", "Stdout",  "Stderr"};

static int in_list(const char *const *list, size_t n, const char *x) {
  size_t i;
  for (i = 0; i < n; i++)
    if (!strcmp(list[i], x)) return 1;
  return 0;
}

static void do_stream_listen(sim_t *s, sim_call_t *k) {
  json_t *sid = json_object_get(k->params, "streamId");
  const char *name = json_string_value(sid);
  char d[256];

  if (!name) {
    send_invalid_params(s, k, "streamListen: expects the 'streamId' parameter");
    return;
  }
  sim_mode_t w = wire(s, k->conn);
  if (w == SIM_MODE_VM &&
      !in_list(core_streams, sizeof core_streams / sizeof *core_streams, name)) {
    snprintf(d, sizeof d, "streamListen: invalid 'streamId' parameter: %.128s", name);
    send_error(s, k, RPC_INVALID_PARAMS, NULL, json_pack("{s:s}", "details", d));
    return;
  }
  if (w == SIM_MODE_WEB &&
      !in_list(web_streams, sizeof web_streams / sizeof *web_streams, name)) {
    snprintf(d, sizeof d, "The stream `%.128s` is not supported on web devices", name);
    send_error(s, k, RPC_INVALID_PARAMS, d, NULL);
    return;
  }
  /* DWDS answers a repeat with Success ("TODO: This should return an error
   * if the stream is already being listened to", dart-lang/webdev
   * dwds/lib/src/services/proxy_service.dart _streamListen). */
  if (json_object_get(k->conn->streams, name) && w != SIM_MODE_WEB) {
    send_error(s, k, RPC_STREAM_ALREADY_SUBSCRIBED, NULL, NULL);
    return;
  }
  json_object_set_new(k->conn->streams, name, json_true());
  send_result(k, json_pack("{s:s}", "type", "Success"));
  if (w == SIM_MODE_DDS && !strcmp(name, "Extension")) {
    size_t i;
    json_t *m;
    json_array_foreach(s->vm.ext_history, i, m) sim_server_send_json(k->conn, json_incref(m));
  }
}

static void do_stream_cancel(sim_t *s, sim_call_t *k) {
  const char *name = json_string_value(json_object_get(k->params, "streamId"));

  if (wire(s, k->conn) == SIM_MODE_WEB) {
    /* DWDS implements no streamCancel (proxy_service.dart: "TODO: We should
     * implement this"; _rpcNotSupportedFuture). */
    char msg[128];
    snprintf(msg, sizeof msg, "%s: Not supported on web devices", k->method);
    send_error(s, k, RPC_METHOD_NOT_FOUND, msg, NULL);
    return;
  }
  if (!name) {
    send_invalid_params(s, k, "streamCancel: expects the 'streamId' parameter");
    return;
  }
  if (!json_object_get(k->conn->streams, name)) {
    send_error(s, k, RPC_STREAM_NOT_SUBSCRIBED, NULL, NULL);
    return;
  }
  json_object_del(k->conn->streams, name);
  send_result(k, json_pack("{s:s}", "type", "Success"));
}

static void do_list_views(sim_t *s, sim_call_t *k) {
  char name[64];

  if (s->cfg.mode == SIM_MODE_WEB) {
    char msg[128];
    snprintf(msg, sizeof msg, "%s: Not supported on web devices", k->method);
    send_error(s, k, RPC_METHOD_NOT_FOUND, msg, NULL);
    return;
  }
  snprintf(name, sizeof name, "main.dart$main-%s", s->vm.isolate_number);
  send_result(
      k, json_pack("{s:s, s:[{s:s, s:s, s:{s:s, s:b, s:s, s:s, s:I}}]}", "type", "FlutterViewList",
                   "views", "type", "FlutterView", "id", "_flutterView/0x7f2a3c00d8a0", "isolate",
                   "type", "@Isolate", "fixedId", 1, "id", s->vm.isolate_id, "name", name, "number",
                   (json_int_t)strtoll(s->vm.isolate_number, NULL, 10)));
}

static void do_resume(sim_t *s, sim_call_t *k) {
  int which = check_isolate(s, k);
  if (!which) return;
  if (!s->vm.paused || which >= 2) {
    send_error(s, k, RPC_ISOLATE_MUST_BE_PAUSED, NULL, NULL);
    return;
  }
  send_result(k, json_pack("{s:s}", "type", "Success"));
  sim_vm_resume(s);
}

static void do_pause(sim_t *s, sim_call_t *k) {
  int which = check_isolate(s, k);
  if (!which) return;
  send_result(k, json_pack("{s:s}", "type", "Success"));
  if (which == 1) sim_vm_pause(s, NULL);
}

/* ---- the VM timeline (sim_timeline.c) ---------------------------------- */

/* DWDS has no VM timeline: proxy_service.dart answers the timeline methods
 * with _rpcNotSupportedFuture (-32601 "<method>: Not supported on web
 * devices"), as it does streamCancel. DDS forwards them to the VM. */
static int web_unsupported(sim_t *s, sim_call_t *k) {
  if (wire(s, k->conn) != SIM_MODE_WEB) return 0;
  char msg[128];
  snprintf(msg, sizeof msg, "%s: Not supported on web devices", k->method);
  send_error(s, k, RPC_METHOD_NOT_FOUND, msg, NULL);
  return 1;
}

/* --replay: a session's start touches the timeline flags and asks for the
 * timeline's clock (server/sessions.c); playback waits for it. */
static void replay_arm(sim_t *s, int origin) {
  if (s->replay) sim_replay_arm(s->replay, origin);
}

static void do_get_vm_timeline_flags(sim_t *s, sim_call_t *k) {
  replay_arm(s, 0);
  if (web_unsupported(s, k)) return;
  send_result(k, sim_tl_flags_json(&s->tl));
}

static void do_set_vm_timeline_flags(sim_t *s, sim_call_t *k) {
  replay_arm(s, 0);
  if (web_unsupported(s, k)) return;
  const json_t *streams = json_object_get(k->params, "recordedStreams");
  const char *bad = NULL;
  if (!json_is_array(streams)) {
    send_invalid_params(s, k, "setVMTimelineFlags: expects the 'recordedStreams' parameter");
    return;
  }
  if (sim_vm_set_streams(s, streams, &bad) < 0) {
    char d[160];
    snprintf(d, sizeof d, "setVMTimelineFlags: invalid 'recordedStreams' parameter: %.100s", bad);
    send_invalid_params(s, k, d);
    return;
  }
  send_result(k, json_pack("{s:s}", "type", "Success"));
}

int sim_vm_set_streams(sim_t *s, const json_t *streams, const char **bad) {
  if (sim_tl_set(&s->tl, streams, bad) < 0) return -1;
  /* Listeners of the Timeline stream learn the new set, before the setter's
   * answer (docs/flutter-apis.md, setVMTimelineFlags). */
  json_t *ev = json_pack("{s:s, s:s, s:I}", "type", "Event", "kind",
                         "TimelineStreamSubscriptionsUpdate", "timestamp", (json_int_t)sim_clock_wall_ms());
  json_object_set_new(ev, "updatedStreams", sim_tl_recorded_json(&s->tl));
  broadcast(s, "Timeline", ev);
  return 0;
}

static int int_param(const json_t *params, const char *key, int64_t *out) {
  const json_t *v = json_object_get(params, key);
  if (!v) return 0;
  if (!json_is_integer(v) || json_integer_value(v) < 0) return -1;
  *out = json_integer_value(v);
  return 1;
}

static void do_get_vm_timeline(sim_t *s, sim_call_t *k) {
  if (web_unsupported(s, k)) return;
  int64_t origin = -1, extent = -1;
  if (int_param(k->params, "timeOriginMicros", &origin) < 0 ||
      int_param(k->params, "timeExtentMicros", &extent) < 0) {
    send_invalid_params(s, k, "getVMTimeline: timeOriginMicros and timeExtentMicros are integers");
    return;
  }
  const char *why = sim_tl_recorder_elsewhere(s->tl.recorder);
  if (why) { /* --timeline-recorder: the events went elsewhere (service.cc GetVMTimelineCommon) */
    char details[320];
    snprintf(details, sizeof details,
             "A recorder of type \"%s\" is currently in use. As a result, %s", s->tl.recorder, why);
    send_error(s, k, RPC_INVALID_TIMELINE_REQUEST, NULL, vm_error_data(s, k, details));
    return;
  }
  send_result(k, sim_tl_timeline_json(&s->tl, origin, extent));
}

static void do_get_vm_timeline_micros(sim_t *s, sim_call_t *k) {
  replay_arm(s, 1);
  if (web_unsupported(s, k)) return;
  send_result(k, json_pack("{s:s, s:I}", "type", "Timestamp", "timestamp", (json_int_t)sim_clock_now_us()));
}

static void do_clear_vm_timeline(sim_t *s, sim_call_t *k) {
  if (web_unsupported(s, k)) return;
  sim_tl_clear(&s->tl);
  send_result(k, json_pack("{s:s}", "type", "Success"));
}

/* ---- the CPU profiler (sim_cpu.c) and the VM's flags --------------------- */

/* An Int64Parameter: a JSON integer, or its decimal text (the VM reads every
 * parameter as a string). 1, 0 when absent, -1 when not an integer. */
static int int64_param(const json_t *params, const char *key, int64_t *out) {
  const json_t *v = json_object_get(params, key);
  char *end;
  if (!v) return 0;
  if (json_is_integer(v)) {
    *out = json_integer_value(v);
    return 1;
  }
  if (!json_is_string(v) || !*json_string_value(v)) return -1;
  *out = strtoll(json_string_value(v), &end, 10);
  return *end ? -1 : 1;
}

/* getCpuSamples (service.cc GetCpuSamples, profiler_service.cc): the UI
 * isolate's samples in [timeOriginMicros, timeOriginMicros +
 * timeExtentMicros]; 100 "Feature is disabled" with details "Profiler is
 * disabled." while the profiler flag is off (CheckProfilerDisabled). DWDS
 * has no profiler: -32601 (proxy_service.dart _rpcNotSupportedFuture). */
static void do_get_cpu_samples(sim_t *s, sim_call_t *k) {
  static const char *const keys[2] = {"timeOriginMicros", "timeExtentMicros"};
  int64_t v[2];
  int which, i;
  char d[160];

  if (web_unsupported(s, k)) return;
  which = check_isolate(s, k);
  if (!which) return;
  for (i = 0; i < 2; i++) {
    int r = int64_param(k->params, keys[i], &v[i]);
    if (r <= 0) {
      if (r == 0)
        snprintf(d, sizeof d, "getCpuSamples: expects the '%s' parameter", keys[i]);
      else
        snprintf(d, sizeof d, "getCpuSamples: invalid '%s' parameter", keys[i]);
      send_invalid_params(s, k, d);
      return;
    }
  }
  if (!s->cpu.enabled) {
    send_error(s, k, RPC_FEATURE_DISABLED, NULL, vm_error_data(s, k, "Profiler is disabled."));
    return;
  }
  /* A worker isolate's thread draws nothing: its answer has no samples. */
  send_result(k, sim_cpu_samples_json(&s->cpu, v[0], v[1],
                                      which == 1 ? sim_clock_now_us() : INT64_MIN, (long)getpid(),
                                      SIM_TID_UI));
}

/* The flags getFlagList shows and setFlag may change (service.cc SetFlag's
 * kAllowedFlags; the rest answer "cannot change at runtime"). */
enum { FLAG_PROFILER, FLAG_PERIOD, FLAG_DEPTH, FLAG_PROFILE_VM, FLAG_PAUSE_START, FLAG_PAUSE_EXIT,
       FLAG_PAUSE_UNHANDLED, N_FLAGS };
static const struct {
  const char *name, *comment, *type;
  int settable;
} vm_flags[N_FLAGS] = {
    {"profiler", "Enable the profiler.", "Bool", 1},
    {"profile_period", "Time between profiler samples in microseconds. Minimum 50.", "Int", 1},
    {"max_profile_depth", "Maximum number stack frames walked. Minimum 1. Maximum 255.", "Int", 0},
    {"profile_vm", "Always collect native stack traces.", "Bool", 0},
    {"pause_isolates_on_start", "Pause isolates before starting.", "Bool", 1},
    {"pause_isolates_on_exit", "Pause isolates exiting.", "Bool", 1},
    {"pause_isolates_on_unhandled_exceptions", "Pause isolates on unhandled exceptions.", "Bool", 1},
};

static void flag_value(const sim_t *s, int f, char *out, size_t n, int *modified) {
  switch (f) {
    case FLAG_PROFILER:
      snprintf(out, n, "%s", s->cpu.enabled ? "true" : "false");
      *modified = !s->cpu.enabled; /* the VM's default is true */
      break;
    case FLAG_PERIOD:
      snprintf(out, n, "%d", s->cpu.period_us);
      *modified = s->cpu.period_us != SIM_CPU_DEFAULT_PERIOD_US;
      break;
    case FLAG_DEPTH:
      snprintf(out, n, "%d", s->cpu.max_depth);
      *modified = s->cpu.max_depth != SIM_CPU_DEFAULT_MAX_DEPTH;
      break;
    case FLAG_PROFILE_VM: /* the engine passes --profile-vm (dart_vm.cc ProfilingFlags) */
      snprintf(out, n, "%s", s->cpu.enabled ? "true" : "false");
      *modified = s->cpu.enabled;
      break;
    default:
      snprintf(out, n, "%s", s->vm.pause_flags[f - FLAG_PAUSE_START] ? "true" : "false");
      *modified = s->vm.pause_flags[f - FLAG_PAUSE_START];
      break;
  }
}

static void do_get_flag_list(sim_t *s, sim_call_t *k) {
  json_t *flags = json_array();
  char value[32];
  int f, modified;

  if (wire(s, k->conn) == SIM_MODE_WEB) {
    /* DWDS knows one flag (proxy_service.dart _currentVmServiceFlags). */
    json_array_append_new(flags, json_pack("{s:s, s:s, s:b, s:s}", "name",
                                           "pause_isolates_on_start", "comment",
                                           s->cfg.dwds_websocket
                                               ? "If enabled, isolates are paused on start"
                                               : "",
                                           "modified", 0, "valueAsString", "false"));
  } else {
    for (f = 0; f < N_FLAGS; f++) {
      flag_value(s, f, value, sizeof value, &modified);
      json_array_append_new(flags, json_pack("{s:s, s:s, s:b, s:s, s:s}", "name", vm_flags[f].name,
                                             "comment", vm_flags[f].comment, "modified", modified,
                                             "_flagType", vm_flags[f].type, "valueAsString", value));
    }
  }
  send_result(k, json_pack("{s:s, s:o}", "type", "FlagList", "flags", flags));
}

/* VMFlagUpdate on the VM stream after a flag changed (service.cc SetFlag). */
static void announce_flag(sim_t *s, const char *name, const char *value) {
  json_t *ev = json_pack("{s:s, s:s, s:{s:s, s:s}, s:s, s:s, s:I}", "type", "Event", "kind",
                         "VMFlagUpdate", "vm", "type", "@VM", "name", "vm", "flag", name,
                         "newValue", value, "timestamp", (json_int_t)sim_clock_wall_ms());
  broadcast(s, "VM", ev);
}

void sim_vm_set_profiler(sim_t *s, int on) {
  s->cpu.enabled = on;
  announce_flag(s, "profiler", on ? "true" : "false");
}

/* setFlag's refusals are results of type Error, not RPC errors. */
static void flag_error(sim_call_t *k, const char *message) {
  send_result(k, json_pack("{s:s, s:s}", "type", "Error", "message", message));
}

static void do_set_flag(sim_t *s, sim_call_t *k) {
  const json_t *jn = json_object_get(k->params, "name"), *jv = json_object_get(k->params, "value");
  const char *name = json_is_string(jn) ? json_string_value(jn) : NULL;
  char value[64], d[128];
  int f;

  if (!name || !jv) {
    snprintf(d, sizeof d, "setFlag: expects the '%s' parameter", name ? "value" : "name");
    send_invalid_params(s, k, d);
    return;
  }
  if (json_is_string(jv))
    snprintf(value, sizeof value, "%s", json_string_value(jv));
  else if (json_is_integer(jv))
    snprintf(value, sizeof value, "%" JSON_INTEGER_FORMAT, json_integer_value(jv));
  else if (json_is_boolean(jv))
    snprintf(value, sizeof value, "%s", json_is_true(jv) ? "true" : "false");
  else
    value[0] = '\0';
  if (wire(s, k->conn) == SIM_MODE_WEB) {
    /* DWDS: only pause_isolates_on_start; Chrome mode refuses others with
     * -32600, WebSocket mode with its not-supported -32601. */
    if (!strcmp(name, "pause_isolates_on_start")) {
      send_result(k, json_pack("{s:s}", "type", "Success"));
    } else if (s->cfg.dwds_websocket) {
      send_error(s, k, RPC_METHOD_NOT_FOUND, "setFlag: Not supported on web devices", NULL);
    } else {
      snprintf(d, sizeof d, "Cannot set flag \"%.64s\" (invalid flag)", name);
      send_error(s, k, RPC_INVALID_REQUEST, d, NULL);
    }
    return;
  }
  for (f = 0; f < N_FLAGS && strcmp(vm_flags[f].name, name); f++) continue;
  if (f == N_FLAGS) return flag_error(k, "Cannot set flag: flag not found");
  if (!vm_flags[f].settable) return flag_error(k, "Cannot set flag: cannot change at runtime");
  if (!strcmp(vm_flags[f].type, "Bool")) {
    int on = !strcmp(value, "true");
    if (!on && strcmp(value, "false")) return flag_error(k, "Cannot set flag: invalid value");
    if (f == FLAG_PROFILER)
      s->cpu.enabled = on;
    else
      s->vm.pause_flags[f - FLAG_PAUSE_START] = on;
  } else {
    char *end;
    long long p = strtoll(value, &end, 10);
    if (!*value || *end || p < 0 || p > 1000000)
      return flag_error(k, "Cannot set flag: invalid value");
    s->cpu.period_us = p < 50 ? 50 : (int)p; /* Profiler::SetSamplePeriod's minimum */
  }
  send_result(k, json_pack("{s:s}", "type", "Success"));
  announce_flag(s, name, value);
}

#define SIM_METHODS(X)                                   \
  X("getVersion", do_get_version)                        \
  X("getSupportedProtocols", do_get_supported_protocols) \
  X("getVM", do_get_vm)                                  \
  X("getIsolate", do_get_isolate)                        \
  X("streamListen", do_stream_listen)                    \
  X("streamCancel", do_stream_cancel)                    \
  X("_flutter.listViews", do_list_views)                 \
  X("resume", do_resume)                                 \
  X("pause", do_pause)                                   \
  X("getVMTimelineFlags", do_get_vm_timeline_flags)      \
  X("setVMTimelineFlags", do_set_vm_timeline_flags)      \
  X("getVMTimeline", do_get_vm_timeline)                 \
  X("getVMTimelineMicros", do_get_vm_timeline_micros)    \
  X("clearVMTimeline", do_clear_vm_timeline)           \
  X("getCpuSamples", do_get_cpu_samples)                 \
  X("getFlagList", do_get_flag_list)                     \
  X("setFlag", do_set_flag)

static const struct {
  const char *name;
  void (*fn)(sim_t *, sim_call_t *);
} methods[] = {
#define X(n, f) {n, f},
    SIM_METHODS(X)
#undef X
};

static void record_method(sim_t *s, const char *method) {
  json_t *n = json_object_get(s->vm.method_counts, method);
  json_object_set_new(s->vm.method_counts, method, json_integer(n ? json_integer_value(n) + 1 : 1));
  if (json_array_size(s->vm.method_list) < 100000)
    json_array_append_new(s->vm.method_list, json_string(method));
  if (s->vm.method_log) {
    fprintf(s->vm.method_log, "%s\n", method);
    fflush(s->vm.method_log);
  }
}

void sim_vm_handle_message(sim_t *s, sim_conn_t *c, const char *text, size_t len, int binary) {
  json_error_t jerr;
  json_t *req, *id, *method, *params, *jv;
  sim_call_t *k;
  size_t i;

  if (binary) {
    if (wire(s, c) == SIM_MODE_VM)
      sim_server_close_conn(c, CLOSE_BINARY);
    else
      send_bare_error(s, c, RPC_INVALID_REQUEST, "binary frames are not accepted");
    return;
  }
  req = json_loadb(text, len, JSON_DECODE_ANY, &jerr);
  if (!req) {
    if (wire(s, c) == SIM_MODE_VM)
      sim_server_close_conn(c, CLOSE_PARSE_ERROR);
    else
      send_bare_error(s, c, RPC_PARSE_ERROR, jerr.text);
    return;
  }
  if (!json_is_object(req)) {
    if (wire(s, c) == SIM_MODE_VM)
      sim_server_close_conn(c, CLOSE_NOT_OBJECT);
    else
      send_bare_error(s, c, RPC_INVALID_REQUEST, "a request must be a JSON object");
    json_decref(req);
    return;
  }
  k = calloc(1, sizeof *k);
  if (!k) {
    json_decref(req);
    return;
  }
  k->conn = c;
  k->request = req;
  id = json_object_get(req, "id");
  method = json_object_get(req, "method");
  params = json_object_get(req, "params");
  jv = json_object_get(req, "jsonrpc");
  k->reply = 1;
  if (id && !(json_is_string(id) || json_is_number(id) || json_is_null(id))) {
    send_error(s, k, RPC_INVALID_REQUEST, NULL,
               json_pack("{s:s}", "details", "id must be a string, number or null"));
    goto done;
  }
  k->id = id;
  if (!json_is_string(method)) {
    send_error(s, k, RPC_INVALID_REQUEST, NULL,
               json_pack("{s:s}", "details", "method must be a string"));
    goto done;
  }
  k->method = json_string_value(method);
  if (wire(s, c) != SIM_MODE_VM && jv &&
      !(json_is_string(jv) && !strcmp(json_string_value(jv), "2.0"))) {
    send_error(s, k, RPC_INVALID_REQUEST, NULL,
               json_pack("{s:s}", "details", "jsonrpc must be \"2.0\""));
    goto done;
  }
  /* A request without id is a notification; the raw VM also sends nothing
   * for "id": null. Notifications are still carried out. */
  k->reply = id && !(wire(s, c) == SIM_MODE_VM && json_is_null(id));
  record_method(s, k->method);
  if (params && !json_is_object(params)) {
    send_invalid_params(s, k, "params must be an object (named parameters)");
    goto done;
  }
  k->params = params ? json_incref(params) : json_object();
  if (!strncmp(k->method, "ext.", 4)) {
    if (do_extension(s, k)) return; /* held: pump() answers and frees it */
    goto done;
  }
  for (i = 0; i < sizeof methods / sizeof methods[0]; i++)
    if (!strcmp(methods[i].name, k->method)) {
      if (!strcmp(s->vm.hang_method, k->method)) { /* `vm-hang`: never answered */
        if (!s->vm.hang_spared) goto done;
        s->vm.hang_spared--;
      }
      methods[i].fn(s, k);
      goto done;
    }
  send_method_not_found(s, k);
done:
  call_free(k);
}

void sim_vm_conn_closed(sim_t *s, sim_conn_t *c) {
  sim_call_t **pp = &s->vm.calls_head, *k;

  s->vm.calls_tail = NULL;
  while ((k = *pp)) {
    if (k->conn == c) {
      *pp = k->next;
      call_free(k);
    } else {
      s->vm.calls_tail = k;
      pp = &k->next;
    }
  }
}

/* ---- scripted app events ------------------------------------------------- */

int sim_vm_pause(sim_t *s, const char *kind) {
  static const char *const kinds[] = {"PauseInterrupted", "PauseBreakpoint",  "PauseException",
                                      "PauseStart",       "PausePostRequest", "PauseExit"};
  size_t i;
  json_t *ev;

  if (!kind) kind = kinds[0];
  for (i = 0; i < sizeof kinds / sizeof *kinds; i++)
    if (!strcmp(kind, kinds[i])) break;
  if (i == sizeof kinds / sizeof *kinds) return -1;
  if (s->vm.paused) return 0;
  s->vm.paused = 1;
  s->vm.pause_kind = kinds[i]; /* static storage: getIsolate reports it */
  s->vm.pause_ms = sim_clock_wall_ms();
  ev = event_new(s, kinds[i], current_ref(s));
  json_object_set_new(ev, "timestamp", json_integer(s->vm.pause_ms));
  broadcast(s, "Debug", ev);
  return 0;
}

void sim_vm_resume(sim_t *s) {
  size_t i;
  if (!s->vm.paused) return;
  s->vm.paused = 0;
  s->vm.pause_kind = "Resume";
  broadcast(s, "Debug", event_new(s, "Resume", current_ref(s)));
  if (s->vm.web_not_started) {
    /* main() runs now: the framework registers its extensions, then the
     * app its watcher, each a ServiceExtensionAdded (the page's
     * RegisterEvent, dwds/web/client.dart). */
    s->vm.web_not_started = 0;
    for (i = 0; i < N_FLUTTER_EXTS; i++)
      if (ext_available(s, i)) announce_extension(s, flutter_exts[i].name);
    if (s->vm.watcher) announce_extension(s, TELESCOPE_EXT);
  }
  pump(s);
}

int sim_vm_dds_attach(sim_t *s) {
  sim_conn_t *c;
  char msg[512];
  int n = 0;
  json_t *ev;

  if (s->cfg.mode == SIM_MODE_DDS || s->dds.attached) return -1;
  s->dds.attached = 1;
  snprintf(msg, sizeof msg,
           "A Dart Developer Service instance has connected and this direct connection to the VM "
           "service will now be closed. Please reconnect to the Dart Development Service at %s.",
           s->dds.http_uri);
  /* Every direct client of the VM gets the Service event, subscribed or
   * not, and is then closed (dart-lang/sdk sdk/lib/vmservice/vmservice.dart,
   * _sendDdsConnectedEvent and _yieldControlToDDS); DWDS closes them all too
   * (dwds/lib/src/services/debug_service.dart handleConnection). */
  ev = json_pack("{s:s, s:s, s:s, s:s, s:I}", "type", "Event", "kind",
                 "DartDevelopmentServiceConnected", "message", msg, "uri", s->dds.http_uri,
                 "timestamp", (json_int_t)sim_clock_wall_ms());
  for (c = s->srv.conns; c; c = c->next) {
    if (c->dds) continue;
    /* DWDS posts it through its Service stream controller: only a client
     * that listens to Service hears it; the others are just closed
     * (dwds/lib/src/services/proxy_service.dart yieldControlToDDS,
     * streamNotify). */
    if (s->cfg.mode != SIM_MODE_WEB || json_object_get(c->streams, "Service"))
      sim_server_send_json(c, json_pack("{s:s, s:s, s:{s:s, s:O}}", "jsonrpc", "2.0", "method",
                                        "streamNotify", "params", "streamId", "Service", "event",
                                        ev));
    sim_server_close_conn(c, 1000);
    n++;
  }
  json_decref(ev);
  return n;
}

void sim_vm_restart(sim_t *s) {
  char old_id[48], old_num[32];
  size_t i;

  /* flutter_tools resumes a paused UI isolate before runInView. */
  sim_vm_resume(s);
  memcpy(old_id, s->vm.isolate_id, sizeof old_id);
  memcpy(old_num, s->vm.isolate_number, sizeof old_num);
  broadcast(s, "Isolate", event_new(s, "IsolateExit", isolate_ref(s, old_id, old_num)));
  new_isolate(s);
  memset(s->vm.bool_ext, 0, sizeof s->vm.bool_ext); /* Dart statics reset */
  s->gen.have_post = 0; /* the new isolate's timeline buffer starts empty */
  if (s->cfg.mode == SIM_MODE_WEB) sim_timings_web_restart(s);
  sim_cpu_clear(&s->cpu); /* its samples are the old isolate's */
  sim_rebuild_reset(&s->rebuild); /* location ids are Dart statics */
  if (s->model) {
    sim_new_run_id(s);
    wm_restart(s->model, s->run_id);
  }
  broadcast(s, "Isolate", event_new(s, "IsolateStart", current_ref(s)));
  broadcast(s, "Isolate", event_new(s, "IsolateRunnable", current_ref(s)));
  for (i = 0; i < N_FLUTTER_EXTS; i++)
    if (ext_available(s, i)) announce_extension(s, flutter_exts[i].name);
  if (s->vm.watcher) announce_extension(s, TELESCOPE_EXT);
  if (s->cfg.flutter_driver) announce_extension(s, DRIVER_EXT);
  sim_drive_reset(s); /* the watcher's and the driver's state are Dart statics */
  pump(s); /* calls held in the old isolate: Collected */
}

void sim_vm_reload(sim_t *s) {
  json_t *ev = event_new(s, "IsolateReload", current_ref(s));
  json_object_set_new(ev, "status", json_string("success"));
  broadcast(s, "Isolate", ev);
  s->gen.probe_requested = 1; /* reassemble rebuilds and draws a frame */
}

void sim_vm_set_watcher(sim_t *s, int on) {
  if (on == s->vm.watcher) return;
  s->vm.watcher = on;
  if (on) announce_extension(s, TELESCOPE_EXT);
}

void sim_vm_set_hang(sim_t *s, int flutter, int on) {
  *(flutter ? &s->vm.flutter_ext_hang : &s->vm.ext_hang) = on;
  if (!on) pump(s);
}

int sim_vm_init(sim_t *s) {
  s->up.post_event = sim_vm_post_event;
  s->up.message = sim_vm_handle_message;
  s->up.conn_closed = sim_vm_conn_closed;
  s->up.after_tick = sim_vm_driver_pump;
  uint64_t g = 1000000000000000ull + sim_rand_next(&s->rng) % 8000000000000000ull;

  snprintf(s->vm.group_id, sizeof s->vm.group_id, "isolateGroups/%llu", (unsigned long long)g);
  s->vm.pause_kind = "Resume";
  s->vm.web_unregistered = RPC_METHOD_NOT_FOUND;
  s->vm.watcher = !s->cfg.no_watcher;
  if (s->cfg.mode == SIM_MODE_WEB && s->cfg.dwds_websocket)
    s->vm.web_timeout_ms = 10000; /* web_socket_proxy_service.dart: Duration(seconds: 10) */
  if (s->cfg.mode == SIM_MODE_WEB && s->cfg.start_paused) s->vm.web_not_started = 1;
  if (s->cfg.mode != SIM_MODE_WEB) {
    s->vm.n_workers = s->cfg.workers;
    for (int w = 0; w < s->vm.n_workers; w++) {
      uint64_t n = 1000000000000000ull + sim_rand_next(&s->rng) % 8000000000000000ull;
      snprintf(s->vm.worker_numbers[w], sizeof s->vm.worker_numbers[w], "%llu",
               (unsigned long long)n);
      snprintf(s->vm.worker_ids[w], sizeof s->vm.worker_ids[w], "isolates/%llu",
               (unsigned long long)n);
    }
  }
  sim_rebuild_reset(&s->rebuild);
  s->vm.method_counts = json_object();
  s->vm.method_list = json_array();
  s->vm.ext_history = json_array();
  new_isolate(s);
  if (uv_timer_init(s->loop, &s->vm.call_timer)) return -1;
  if (uv_timer_init(s->loop, &s->vm.flood_timer)) return -1;
  s->vm.flood_timer.data = s;
  if (s->cfg.method_log) {
    s->vm.method_log = fopen(s->cfg.method_log, "a");
    if (!s->vm.method_log) {
      fprintf(stderr, "telescope-sim: cannot open --method-log %s\n", s->cfg.method_log);
      return -1;
    }
  }
  /* Last: its timer runs from now on, and a failure above must leave the
   * loop with nothing active. */
  return sim_dwds_init(&s->dwds, s->loop, s->cfg.mode == SIM_MODE_WEB ? s->cfg.dwds_batch_ms : 0,
                       on_dwds_batch);
}

void sim_vm_close(sim_t *s) {
  sim_call_t *k, *next;

  for (k = s->vm.calls_head; k; k = next) {
    next = k->next;
    call_free(k);
  }
  s->vm.calls_head = s->vm.calls_tail = NULL;
  uv_close((uv_handle_t *)&s->vm.call_timer, NULL);
  uv_close((uv_handle_t *)&s->vm.flood_timer, NULL);
  sim_dwds_close(&s->dwds);
  if (s->vm.method_log) fclose(s->vm.method_log);
  s->vm.method_log = NULL;
  json_decref(s->vm.method_counts);
  json_decref(s->vm.method_list);
  json_decref(s->vm.ext_history);
  json_decref(s->vm.last_raw_params);
  json_decref(s->vm.last_handed_params);
}
