/* apps: the apps the server knows, and which one a call talks to (apps.h). */
#include "apps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cursor.h"
#include "log.h"
#include "vm_uri.h"

static void on_session_reply(void *arg, const record_reply_t *r) { op_note_facts(arg, r); }

static void on_app_event(void *arg, vm_app_event_t ev) {
  appref_t *ar = arg;
  switch (ev) {
  case VM_APP_EV_DISCONNECTED:
    ar->live = 0;
    sessions_app_gone(ar->sessions);
    return;
  case VM_APP_EV_RESTARTED:
    /* A hot restart: the sessions drain at once, which re-enables attribution. */
    rebuilds_clear(ar->rb); /* location ids start again */
    sessions_kick(ar->sessions);
    /* fall through */
  case VM_APP_EV_CONNECTED:
    ar->live = 1;
    /* Frames held while the isolate was unknown (a reconnect) are judged now. */
    fe_isolate_known(ar->fe, vm_app_isolate_id(ar->app));
    return;
  default: /* reloads, pauses, the watcher appearing: nothing kept per app */
    return;
  }
}

static void on_app_extension(void *arg, const char *isolate_id, const char *kind, json_t *data) {
  appref_t *ar = arg;
  fe_add(ar->fe, isolate_id, kind, data, vm_app_isolate_id(ar->app));
  /* A switch-on went out since the last event: the next one is its forced frame. */
  unsigned on = ar->sessions ? sessions_switched_on(ar->sessions, WP_TRACK_REBUILDS) : ar->rb_on;
  if (on != ar->rb_on) {
    ar->rb_on = on;
    rebuilds_switched_on(ar->rb);
  }
  rebuilds_feed(ar->rb, isolate_id, kind, data, vm_app_isolate_id(ar->app));
}

/* Points an idle app at uri: what was known of the one before goes (its
 * closed sessions too). */
static int repoint(appref_t *ar, const char *uri, const char *name, char *err, size_t errlen) {
  tool_ctx_t *ctx = ar->ctx;
  int rc = uri ? vm_app_set_uri(ar->app, uri, err, errlen) : 0;
  if (rc) return rc;
  if (!uri) vm_app_forget_uri(ar->app);
  vm_uri_t u;
  snprintf(ar->uri, sizeof ar->uri, "%s",
           uri && vm_uri_parse(uri, ctx->cfg->allow_remote, &u, NULL, 0) == VM_URI_OK ? u.ws : "");
  snprintf(ar->name, sizeof ar->name, "%s", name);
  appfacts_close(&ar->facts);
  appfacts_init(&ar->facts);
  ar->read_run[0] = 0;
  ar->read_seq = 0;
  ar->live = 0;
  ar->n = ++ctx->apps_seen;
  sessions_set_transport(ar->sessions, &ar->t);
  return 0;
}

appref_t *apps_add(tool_ctx_t *ctx, const char *uri, const char *name, diag_code_t *code,
                   char *err, size_t errlen) {
  if (ctx->napps >= TOOL_MAX_APPS) {
    /* Full: the app known longest that is gone, idle and unborrowed takes
     * the URI — never the launch's (its URI file brings it back). */
    appref_t *old = NULL;
    for (appref_t *a = ctx->apps; a; a = a->next)
      if (!a->launch && !a->live && !a->ops && !sessions_busy(a->sessions) && (!old || a->n < old->n))
        old = a;
    if (old) {
      int rc = repoint(old, uri, name, err, errlen);
      if (rc) *code = (diag_code_t)rc;
      return rc ? NULL : old;
    }
    *code = DIAG_APP_CHOICE;
    snprintf(err, errlen, "%d apps are known and each is connected or measured: stop one first",
             TOOL_MAX_APPS);
    return NULL;
  }
  appref_t *ar = calloc(1, sizeof *ar);
  if (!ar) goto oom;
  ar->ctx = ctx;
  vm_app_options_t o = {NULL,         ctx->cfg->vm_service_uri_file, (int)ctx->cfg->call_timeout_ms,
                        ctx->cfg->allow_remote, on_app_event, ar, on_app_extension};
  if (!(ar->app = vm_app_new(ctx->loop, &o))) goto oom;
  if (!(ar->fe = fe_new(ctx->loop, ar->app)) || !(ar->rb = rebuilds_new()) ||
      !(ar->sessions = sessions_new(ctx->loop, on_session_reply, ar, &ctx->session_ids))) {
    *code = DIAG_NOT_CONNECTED;
    snprintf(err, errlen, "out of memory");
    apps_close_one(ar, free, ar);
    return NULL;
  }
  appfacts_init(&ar->facts);
  ar->t = fe_transport(ar->fe);
  int rc = repoint(ar, uri, name, err, errlen);
  if (rc) {
    *code = (diag_code_t)rc;
    apps_close_one(ar, free, ar);
    return NULL;
  }
  appref_t **tail = &ctx->apps;
  while (*tail) tail = &(*tail)->next;
  *tail = ar;
  ctx->napps++;
  return ar;

oom:
  free(ar);
  *code = DIAG_NOT_CONNECTED;
  snprintf(err, errlen, "out of memory");
  return NULL;
}

void apps_close_one(appref_t *ar, void (*done)(void *arg), void *arg) {
  sessions_free(ar->sessions);
  ar->sessions = NULL;
  appfacts_close(&ar->facts);
  fe_free(ar->fe);
  rebuilds_free(ar->rb);
  if (ar->app)
    vm_app_close(ar->app, done, arg);
  else if (done)
    done(arg);
}

appref_t *apps_find(const tool_ctx_t *ctx, const char *label_or_ws) {
  char label[32];
  for (appref_t *a = ctx->apps; a; a = a->next) {
    /* An app on the URI file is at the URI the file gave it last. */
    const char *ws = a->uri[0] ? a->uri : vm_app_uri_ws(a->app);
    if (!strcmp(op_app_label(a, label, sizeof label), label_or_ws) ||
        (ws[0] && !strcmp(ws, label_or_ws)))
      return a;
  }
  return NULL;
}

/* How many apps are connected or measuring; *last: the last of them. */
static unsigned active(const tool_ctx_t *ctx, appref_t **last) {
  unsigned n = 0;
  for (appref_t *a = ctx->apps; a; a = a->next)
    if (a->live || sessions_busy(a->sessions)) n++, *last = a;
  return n;
}

appref_t *apps_only_active(const tool_ctx_t *ctx) {
  appref_t *one = NULL;
  return active(ctx, &one) == 1 ? one : NULL;
}

/* The name the Dart Tooling Daemon lists the app at ws by ("" : none). */
static const char *dtd_name(const tool_ctx_t *ctx, const char *ws) {
  size_t i;
  const json_t *a;
  vm_uri_t u;
  json_array_foreach(ctx->dtd ? dtd_apps(ctx->dtd) : NULL, i, a) {
    const char *uri = json_string_value(json_object_get(a, "uri"));
    const char *name = json_string_value(json_object_get(a, "name"));
    if (uri && name && vm_uri_parse(uri, 1, &u, NULL, 0) == VM_URI_OK && !strcmp(u.ws, ws))
      return name;
  }
  return "";
}

appref_t *apps_of_session(const tool_ctx_t *ctx, const char *id) {
  for (appref_t *a = ctx->apps; a; a = a->next)
    if (sessions_find(a->sessions, id)) return a;
  return NULL;
}

/* The session a read names (its cursor's, or `session`): the app that holds
 * it answers the call. (compare by ids finds its sessions itself.) */
static appref_t *named_session_app(const op_t *op) {
  char name[CURSOR_RUN_ID_MAX + 1];
  int64_t n = 0;
  cursor_kind_t kind;
  if (op->action == A_READ && op->a.cursor &&
      cursor_decode_kind(op->a.cursor, &kind, name, sizeof name, &n, NULL, 0) == 0 &&
      kind == CURSOR_SESSION)
    return apps_of_session(op->ctx, name);
  if (op->action == A_READ && op->a.session) return apps_of_session(op->ctx, op->a.session);
  return NULL;
}

/* Several apps and the call named none: the list, and which to name. */
static void ambiguous(op_t *op, unsigned n) {
  char why[200];
  snprintf(why, sizeof why, "%u apps are connected or measured; this call named none of them "
                            "(app)", n);
  op_fail_diag(op, DIAG_APP_CHOICE, why);
}

int apps_bind(op_t *op) {
  tool_ctx_t *ctx = op->ctx;
  const config_t *cfg = ctx->cfg;
  char err[256] = "";
  diag_code_t code = DIAG_NONE;
  appref_t *ar = NULL;
  const char *want = op->a.app ? op->a.app : op->a.uri;
  if (op->a.app && (ar = apps_find(ctx, op->a.app))) goto bound;
  if (want) {
    vm_uri_t u;
    vm_uri_status_t rc = vm_uri_parse(want, cfg->allow_remote, &u, err, sizeof err);
    if (rc != VM_URI_OK) { /* refused before anything is touched */
      if (op->a.app && rc == VM_URI_MALFORMED) {
        snprintf(err, sizeof err, "app: no app is called \"%s\", and it is no VM-service URI",
                 op->a.app);
        op_fail_diag(op, DIAG_APP_CHOICE, err);
      } else {
        op_fail_diag(op, rc == VM_URI_REMOTE ? DIAG_CONNECTION_REJECTED : DIAG_NOT_CONNECTED, err);
      }
      return -1;
    }
    if ((ar = apps_find(ctx, u.ws))) goto bound;
    if (!(ar = apps_add(ctx, want, dtd_name(ctx, u.ws), &code, err, sizeof err))) {
      op_fail_diag(op, code, err);
      return -1;
    }
    goto bound;
  }
  if ((ar = named_session_app(op))) goto bound;
  /* None named: the one app connected or measuring, else the latest. */
  unsigned n = active(ctx, &ar);
  if (n > 1) {
    ambiguous(op, n);
    return -1;
  }
  if (!n) ar = ctx->app;
  if (!ar) {
    if (!cfg->vm_service_uri && !cfg->vm_service_uri_file) {
      op_fail_diag(op, DIAG_NOT_CONNECTED, NULL);
      return -1;
    }
    if (!(ar = apps_add(ctx, cfg->vm_service_uri, "", &code, err, sizeof err))) {
      op_fail_diag(op, code, err);
      return -1;
    }
    ar->launch = 1;
  }
bound:
  op_bind(op, ar);
  ctx->app = ar;
  return 0;
}
