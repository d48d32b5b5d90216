/* wproto: the one module that speaks ext.telescope.frames (DESIGN 5) and
 * Flutter's ext.flutter.profile* switches. It builds every request's params,
 * sends them through a transport (vm_app in the server, a fake in unit
 * tests), validates every reply whole (record.h) and reports one outcome:
 * success with a parsed reply, or a failure with its diagnosis.
 *
 * Callbacks run from the transport's callback (the loop), never from inside
 * the wp_* call that caused them. */
#ifndef TELESCOPE_WPROTO_H
#define TELESCOPE_WPROTO_H

#include <jansson.h>
#include <stdint.h>

#include "codes.h"
#include "record.h"
#include "vm_isolate.h"

#define WP_READ_LIMIT 500 /* records asked for per read */
#define WP_PROTOCOL "3"   /* offered; an older watcher answers the newest it knows */

/* The outcome of a call. Success: diag NONE and rpc_code 0. Otherwise diag
 * says why (a JSON-RPC error from the watcher is WATCHER_ERROR with its
 * rpc_code; a reply that fails validation is INVALID_REPLY); detail is
 * token-free. */
typedef struct {
  diag_code_t diag;
  int rpc_code;
  char detail[256];
} wp_status_t;

typedef enum { WP_READ = 0, WP_START, WP_STOP, WP_MARK, WP_PROBE, WP_STATUS, WP_DRIVE } wp_action_t;

typedef struct {
  wp_action_t action;
  int64_t since;              /* read: records with seq > since */
  int limit;                  /* read: <= 0 means WP_READ_LIMIT */
  const char *interaction_id; /* start/mark; NULL: none (mark: ends it) */
  const char *linked_by;      /* NULL: "agent" when interaction_id is set */
} wp_request_t;

/* REBUILDS is the inspector's trackRebuildDirtyWidgets (debug builds only):
 * Flutter.RebuiltWidgets events per frame, not blocks. */
typedef enum {
  WP_TRACK_WIDGETS = 0,
  WP_TRACK_LAYOUTS,
  WP_TRACK_PAINTS,
  WP_TRACK_REBUILDS,
  WP_TRACK__COUNT
} wp_track_t;

/* The transport: vm_app_call_extension's contract (params stolen, cb once
 * from the loop unless cancelled; the handle is the transport's own).
 * call_vm does the same for a VM method (the timeline); NULL when the
 * transport has none. batch answers (same contract, no result) once the
 * app's next batch of frame timings is in the watcher, or at once when none
 * is due; NULL: never waited for. */
typedef struct {
  void *(*call)(void *arg, const char *method, json_t *params, vm_reply_cb cb, void *cb_arg);
  void (*cancel)(void *handle);
  void *(*call_vm)(void *arg, const char *method, json_t *params, vm_reply_cb cb, void *cb_arg);
  void *arg;
  void *(*batch)(void *arg, vm_reply_cb cb, void *cb_arg);
} wp_transport_t;

typedef struct wp_call wp_call_t;

/* reply is borrowed for the callback, NULL unless st->diag is NONE. */
typedef void (*wp_reply_cb)(void *arg, const wp_status_t *st, const record_reply_t *reply);
/* value: the switch's state after the call (1/0), -1 when the reply did not say. */
typedef void (*wp_switch_cb)(void *arg, const wp_status_t *st, int value);


/* Sends one watcher request. Returns NULL only when out of memory (cb is then
 * never called). A read reply without "records" is INVALID_REPLY. */
wp_call_t *wp_call(const wp_transport_t *t, const wp_request_t *req, wp_reply_cb cb, void *arg)
    __attribute__((warn_unused_result));
/* Action drive (DRIVE 3): steps is the steps array as JSON text, repeat
 * 1..10. Same rules as wp_call; the reply's `drive` says what started. */
wp_call_t *wp_call_drive(const wp_transport_t *t, const char *steps, int repeat, wp_reply_cb cb,
                         void *arg) __attribute__((warn_unused_result));
/* Reads (value < 0) or sets a profile switch. Same rules. */
wp_call_t *wp_switch(const wp_transport_t *t, wp_track_t which, int value, wp_switch_cb cb,
                     void *arg) __attribute__((warn_unused_result));
/* cb will not be called; the handle is freed. */
void wp_cancel(wp_call_t *c);

void wp_status_set(wp_status_t *st, diag_code_t diag, int rpc_code, const char *detail);
int wp_failed(const wp_status_t *st); /* 1 unless diag NONE and rpc_code 0 */
/* 1 when the app may still run a call that failed this way (it timed out, or
 * was held by a pause): a switch it carried must be checked again later. */
int wp_maybe_ran(const wp_status_t *st);
const char *wp_track_name(wp_track_t t); /* "widgets", "layouts", "paints" */

#endif
