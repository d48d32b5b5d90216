#include "wproto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const action_name[] = {"read",  "start",  "stop", "mark",
                                              "probe", "status", "drive"};

static const char *const track_ext[WP_TRACK__COUNT] = {
    "ext.flutter.profileWidgetBuilds",
    "ext.flutter.profileRenderObjectLayouts",
    "ext.flutter.profileRenderObjectPaints",
    /* widget_inspector.dart _registerBoolServiceExtension: the same
     * enabled "true"/"false" form (docs/flutter-apis.md, Rebuilt widgets). */
    "ext.flutter.inspector.trackRebuildDirtyWidgets",
};
static const char *const track_name[WP_TRACK__COUNT] = {"widgets", "layouts", "paints", "rebuilds"};

struct wp_call {
  const wp_transport_t *t;
  void *vmc;
  int is_read;
  wp_reply_cb reply_cb;
  wp_switch_cb switch_cb;
  void *arg;
};

void wp_status_set(wp_status_t *st, diag_code_t diag, int rpc_code, const char *detail) {
  st->diag = diag;
  st->rpc_code = rpc_code;
  snprintf(st->detail, sizeof st->detail, "%s", detail ? detail : "");
}

int wp_failed(const wp_status_t *st) { return st->diag != DIAG_NONE || st->rpc_code != 0; }

int wp_maybe_ran(const wp_status_t *st) {
  return st->diag == DIAG_UNRESPONSIVE || st->diag == DIAG_ISOLATE_PAUSED;
}

const char *wp_track_name(wp_track_t t) { return track_name[t]; }

/* The transport's outcome as a status; 0 when the call got a result. A
 * JSON-RPC error from the app is the watcher's (or Flutter's) handler
 * failing; an unusable message is an invalid reply. */
static int status_from(wp_status_t *st, const vm_result_t *res) {
  if (res->diag != DIAG_NONE) {
    wp_status_set(st, res->diag, res->rpc_code, res->detail);
    return -1;
  }
  if (res->rpc_code == RPC_PARSE_ERROR || res->rpc_code == RPC_INTERNAL_ERROR) {
    wp_status_set(st, DIAG_INVALID_REPLY, res->rpc_code, res->detail);
    return -1;
  }
  if (res->rpc_code != 0) {
    char d[sizeof st->detail];
    snprintf(d, sizeof d, "the app's handler answered with error %d: %s", res->rpc_code,
             res->detail ? res->detail : "");
    wp_status_set(st, DIAG_WATCHER_ERROR, res->rpc_code, d);
    return -1;
  }
  wp_status_set(st, DIAG_NONE, 0, NULL);
  return 0;
}

static void on_reply(void *arg, const vm_result_t *res) {
  wp_call_t *c = arg;
  wp_status_t st;
  c->vmc = NULL;
  if (c->switch_cb) {
    int value = -1;
    if (status_from(&st, res) == 0) {
      const json_t *v = json_object_get(res->result, "enabled");
      if (json_is_string(v)) value = strcmp(json_string_value(v), "true") == 0;
      if (json_is_boolean(v)) value = json_is_true(v);
    }
    wp_switch_cb cb = c->switch_cb;
    void *cb_arg = c->arg;
    free(c);
    cb(cb_arg, &st, value);
    return;
  }
  record_reply_t r;
  const record_reply_t *rp = NULL;
  memset(&r, 0, sizeof r);
  if (status_from(&st, res) == 0) {
    char err[RECORD_ERR_LEN];
    if (record_reply_parse_raw(&r, res->result, res->records, res->records_len, err, sizeof err) < 0)
      wp_status_set(&st, DIAG_INVALID_REPLY, 0, err);
    else if (c->is_read && !r.has_records)
      wp_status_set(&st, DIAG_INVALID_REPLY, 0, "reply.records: missing in a read reply");
    else
      rp = &r;
  }
  wp_reply_cb cb = c->reply_cb;
  void *cb_arg = c->arg;
  free(c);
  cb(cb_arg, &st, rp);
  record_reply_close(&r);
}

static wp_call_t *call_send(const wp_transport_t *t, const char *method, json_t *params, wp_call_t *c) {
  if (!c || !params) {
    free(c);
    json_decref(params);
    return NULL;
  }
  c->t = t;
  c->vmc = t->call(t->arg, method, params, on_reply, c);
  if (!c->vmc) {
    free(c);
    return NULL;
  }
  return c;
}

wp_call_t *wp_call(const wp_transport_t *t, const wp_request_t *req, wp_reply_cb cb, void *arg) {
  json_t *p = json_pack("{s:s, s:s}", "action", action_name[req->action], "protocol", WP_PROTOCOL);
  if (p && req->action == WP_READ) {
    int limit = req->limit > 0 ? req->limit : WP_READ_LIMIT;
    if (json_object_set_new(p, "since", json_integer(req->since)) ||
        json_object_set_new(p, "limit", json_integer(limit))) {
      json_decref(p);
      p = NULL;
    }
  }
  if (p && req->interaction_id && (req->action == WP_START || req->action == WP_MARK)) {
    if (json_object_set_new(p, "interactionId", json_string(req->interaction_id)) ||
        json_object_set_new(p, "linkedBy", json_string(req->linked_by ? req->linked_by : "agent"))) {
      json_decref(p);
      p = NULL;
    }
  }
  wp_call_t *c = calloc(1, sizeof *c);
  if (c) {
    c->is_read = req->action == WP_READ;
    c->reply_cb = cb;
    c->arg = arg;
  }
  return call_send(t, VM_APP_WATCHER_EXTENSION, p, c);
}

wp_call_t *wp_call_drive(const wp_transport_t *t, const char *steps, int repeat, wp_reply_cb cb,
                         void *arg) {
  char rep[16];
  snprintf(rep, sizeof rep, "%d", repeat);
  json_t *p = json_pack("{s:s, s:s, s:s, s:s}", "action", action_name[WP_DRIVE], "protocol",
                        WP_PROTOCOL, "steps", steps, "repeat", rep);
  wp_call_t *c = calloc(1, sizeof *c);
  if (c) {
    c->reply_cb = cb;
    c->arg = arg;
  }
  return call_send(t, VM_APP_WATCHER_EXTENSION, p, c);
}

wp_call_t *wp_switch(const wp_transport_t *t, wp_track_t which, int value, wp_switch_cb cb,
                     void *arg) {
  /* Flutter's registerBoolServiceExtension: no "enabled" reads the switch. */
  json_t *p = value < 0 ? json_object() : json_pack("{s:s}", "enabled", value ? "true" : "false");
  wp_call_t *c = calloc(1, sizeof *c);
  if (c) {
    c->switch_cb = cb;
    c->arg = arg;
  }
  return call_send(t, track_ext[which], p, c);
}

void wp_cancel(wp_call_t *c) {
  if (!c) return;
  if (c->vmc) c->t->cancel(c->vmc);
  free(c);
}
