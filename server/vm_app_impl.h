/* vm_app_impl: the state of a vm_app (vm_isolate.h), shared by the module's
 * own two files only: vm_isolate.c tracks the VM and its isolate (sync,
 * events, the URI, lifetime) and vm_call.c runs the calls to it. The calls
 * sit below the tracking and reach it through the four hooks in vm_app.
 *
 * Ownership: the vm_app owns its client, its calls (each freed in its
 * timer's close callback) and every string in it. */
#ifndef TELESCOPE_VM_APP_IMPL_H
#define TELESCOPE_VM_APP_IMPL_H

#include <jansson.h>
#include <uv.h>

#include "vm_client.h"
#include "vm_isolate.h"
#include "vm_uri.h"

#define MAX_SYNC_ISOLATES 16
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
  int timeout_ms; /* app->timeout_ms, or longer for a reply the VM builds slowly */
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
  int driver;       /* ... and ext.flutter.driver (enableFlutterDriverExtension) */
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

  vm_call_t *calls; /* vm_call.c's, newest first */
  /* The tracking side (vm_isolate.c), for the calls below it (vm_call.c). */
  int (*resolve_uri)(vm_app_t *app, char *err, size_t errlen); /* 0, or a diag (err) */
  void (*start_sync)(vm_app_t *app);                          /* look at the VM again */
  json_t *(*connection_json)(const vm_app_t *app);            /* vm_app_connection_json */
  void (*released)(vm_app_t *app);                            /* a call's handle closed */
  int open_handles;
  void (*close_done)(void *arg);
  void *close_arg;
};

#endif
