/* vm_app: the Flutter app behind a VM-service URI, as the tool layer sees
 * it. It connects on demand, finds the isolate serving ext.telescope.frames
 * (else the main one, then watches for ServiceExtensionAdded), tracks pause
 * state (Debug stream + getIsolate().pauseEvent), follows hot restart (new
 * isolate id) and hot reload (same id), and knows native from web (DWDS).
 * It never sends an extension call to a paused isolate.
 *
 * Every callback (vm_reply_cb, on_event) runs from the loop, never from
 * inside the vm_app_* function that caused it. The tracking is vm_isolate.c,
 * the calls vm_call.c (below it); their shared state is vm_app_impl.h. */
#ifndef TELESCOPE_VM_ISOLATE_H
#define TELESCOPE_VM_ISOLATE_H

#include <jansson.h>
#include <stddef.h>
#include <uv.h>

#include "codes.h"

#define VM_APP_WATCHER_EXTENSION "ext.telescope.frames"
#define VM_APP_DRIVER_EXTENSION "ext.flutter.driver" /* enableFlutterDriverExtension() */

typedef struct vm_app vm_app_t;
typedef struct vm_call vm_call_t;

/* One finished call. Success: diag DIAG_NONE, rpc_code 0, result set.
 * diag != DIAG_NONE: the call did not get an answer we can use:
 *   NOT_CONNECTED        no URI, refused, closed (also: method not allowed)
 *   CONNECTION_REJECTED  HTTP 403 / not a VM service / non-loopback host
 *   WATCHER_MISSING      no isolate serves ext.telescope.frames (-32601, or
 *                        on web a -32603 "Unexpected null value"/"Unknown
 *                        service method"; a web -32603 that names a timeout
 *                        is UNRESPONSIVE, "No clients available" is
 *                        NOT_CONNECTED; rpc_code keeps the app's code)
 *   ISOLATE_PAUSED       the isolate is paused: nothing was sent, or the call
 *                        in flight was abandoned when the pause event came
 *   UNRESPONSIVE         no answer within the call timeout
 * diag DIAG_NONE with rpc_code != 0: the app answered with that JSON-RPC
 * error (e.g. -32602, -32000), or the reply was unusable: RPC_PARSE_ERROR
 * (not JSON), RPC_INTERNAL_ERROR (over 64 MiB; see vm_client.h). The
 * connection stays up in both cases. detail never holds a token. */
typedef struct {
  diag_code_t diag;
  int rpc_code;
  const char *detail;
  json_t *result; /* borrowed for the callback; on web "type":"Response" is removed */
  /* The watcher's records cut out of result (vm_client_reply_t.records), or,
   * with result NULL, a large getCpuSamples or getVMTimeline reply's whole
   * text, unparsed (vm_client_reply_t.text). Borrowed for the callback. */
  const char *records;
  size_t records_len;
} vm_result_t;

typedef void (*vm_reply_cb)(void *arg, const vm_result_t *res);

typedef enum {
  VM_APP_EV_CONNECTED,      /* the socket came up and the isolate was picked */
  VM_APP_EV_DISCONNECTED,   /* the socket went down */
  VM_APP_EV_RESTARTED,      /* the watched isolate changed id (hot restart) */
  VM_APP_EV_RELOADED,       /* IsolateReload on the watched isolate (same id) */
  VM_APP_EV_PAUSED,         /* the watched isolate paused */
  VM_APP_EV_RESUMED,        /* ... and resumed */
  VM_APP_EV_EXTENSION_ADDED /* ext.telescope.frames appeared (watcher now present) */
} vm_app_event_t;

typedef struct {
  const char *uri;      /* as the user gave it (any form vm_uri accepts); may be NULL */
  const char *uri_file; /* --vmservice-out-file: re-read before every connect; may be NULL */
  int call_timeout_ms;  /* per call; <= 0 means 3000 */
  int allow_remote;     /* accept non-loopback hosts */
  void (*on_event)(void *arg, vm_app_event_t ev);
  void *event_arg;
  /* Every event of the Extension stream (Flutter.Frame among them), from any
   * isolate; data borrowed for the call. May be NULL. */
  void (*on_extension)(void *arg, const char *isolate_id, const char *kind, json_t *data);
} vm_app_options_t;

/* Never fails except out of memory (NULL). A bad opt->uri is reported by the
 * first call (CONNECTION_REJECTED for a remote host, NOT_CONNECTED when
 * malformed); use vm_app_set_uri to check one up front. */
vm_app_t *vm_app_new(uv_loop_t *loop, const vm_app_options_t *opt);

/* Normalises and checks user_uri. Returns 0 (accepted; a different URI drops
 * the connection, failing calls in flight with NOT_CONNECTED, and the next
 * use connects to the new one), DIAG_CONNECTION_REJECTED (non-loopback host
 * without allow_remote: nothing is dialled) or DIAG_NOT_CONNECTED (malformed);
 * on failure err says why and the previous URI stays. A URI set here wins
 * over uri_file. */
int vm_app_set_uri(vm_app_t *app, const char *user_uri, char *err, size_t errlen);

/* Drops a URI set with vm_app_set_uri: the URI file rules again (the next
 * use re-reads it and connects). */
void vm_app_forget_uri(vm_app_t *app);
/* Calls an allowlisted extension on the chosen isolate. params is stolen
 * (NULL means none); every value is sent as a JSON string (numbers and
 * booleans printed, objects/arrays as JSON text) and isolateId is added.
 * cb is called exactly once unless the call is cancelled, never from inside
 * this function. Returns NULL only when out of memory (cb not called). The
 * handle is invalid once cb has returned. */
vm_call_t *vm_app_call_extension(vm_app_t *app, const char *method, json_t *params, vm_reply_cb cb,
                                 void *arg);

/* Calls an allowlisted VM method (not an extension: no isolateId, params as
 * given, stolen). Same cb rules as vm_app_call_extension; a JSON-RPC error
 * is diag DIAG_NONE with its rpc_code. */
vm_call_t *vm_app_call_vm(vm_app_t *app, const char *method, json_t *params, vm_reply_cb cb,
                          void *arg);
/* The same with a deadline of timeout_ms (never shorter than the app's call
 * timeout): for a reply the VM builds slowly (getCpuSamples walks the whole
 * code table on the UI isolate). */
vm_call_t *vm_app_call_vm_within(vm_app_t *app, const char *method, json_t *params, int timeout_ms,
                                 vm_reply_cb cb, void *arg);

/* The loop the app's calls run on. */
uv_loop_t *vm_app_loop(const vm_app_t *app);
/* Each call's deadline, ms (--call-timeout-ms). */
int vm_app_timeout_ms(const vm_app_t *app);
/* The isolate calls go to ("" while none is known). Borrowed. */
const char *vm_app_isolate_id(const vm_app_t *app);
/* The normalised ws URI last dialled or set ("" before any). Borrowed. */
const char *vm_app_uri_ws(const vm_app_t *app);
/* 1 when connected, the isolate known and known not to serve the watcher
 * (a fresh look, or an answer that said so): frame events must stand in. */
int vm_app_watcher_missing(const vm_app_t *app);
/* 1 when the isolate is a Flutter app's (it registered Flutter's own
 * extensions, so it posts Flutter.Frame events in debug and profile). */
int vm_app_is_flutter(const vm_app_t *app);
/* 1 when the isolate lists ext.flutter.driver (the app called
 * enableFlutterDriverExtension()): a workload can be played without the
 * watcher. */
int vm_app_has_driver(const vm_app_t *app);
/* 1 when the app is a web app behind DWDS (its extension list proves nothing). */
int vm_app_is_web(const vm_app_t *app);

/* The connection object (as vm_app_connection_json) for `status`. While the
 * connection is up and the isolate known, it answers from the state the
 * Isolate and Debug stream events keep (pause, resume, exit, restart,
 * extension added) and sends nothing; otherwise it connects and re-reads
 * the isolate list, the chosen isolate, its pause state and extension
 * presence. Same cb rules. */
vm_call_t *vm_app_refresh(vm_app_t *app, vm_reply_cb cb, void *arg);

/* cb will not be called; the handle is invalid afterwards. */
void vm_call_cancel(vm_call_t *call);

/* New reference: the `connection` object of schema/telescope_frames.output.json. */
json_t *vm_app_connection_json(const vm_app_t *app);

/* The tool layer learns the version from extension replies. NULL clears. */
void vm_app_set_watcher_version(vm_app_t *app, const char *version);

/* Cancels every call silently (no cb), closes the socket and the lws
 * context; done (may be NULL) runs once vm_app's own handles are closed and
 * app is freed. Keep running the loop until it is empty (lws closes its
 * handles a turn later) before uv_loop_close. */
void vm_app_close(vm_app_t *app, void (*done)(void *arg), void *arg);

#endif
