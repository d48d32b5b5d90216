#include "op.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "appsrc_cpu.h"
#include "container_of.h"
#include "log.h"

static const char *const action_names[A__COUNT] = {"status", "start", "mark",   "read",
                                                   "stop",   "capture", "compare"};

/* ---- lifecycle --------------------------------------------------------- */

static char *dup_arg(json_t *args, const char *key) {
  const char *v = json_string_value(json_object_get(args, key));
  return v ? strdup(v) : NULL;
}

static void args_close(op_args_t *a) {
  free(a->uri);
  free(a->app);
  free(a->interaction_id);
  free(a->linked_by);
  free(a->cursor);
  free(a->session);
  free(a->dtd_uri);
  free(a->baseline);
  free(a->candidate);
  json_decref(a->budgets);
  json_decref(a->workload_arg);
  workload_close(&a->workload);
}

static void op_closed(uv_handle_t *h) {
  op_t *op = container_of((uv_timer_t *)h, op_t, timer);
  args_close(&op->a);
  json_decref(op->drive_cmds);
  json_decref(op->drive_json);
  for (size_t i = 0; i < op->nwarnings; i++) free(op->warnings[i]);
  free(op);
}

/* Forgets everything in flight and frees the op (its call is answered or
 * cancelled by then). */
static void op_free(op_t *op) {
  tool_ctx_t *ctx = op->ctx;
  wp_cancel(op->wpc);
  op->wpc = NULL;
  if (op->vmc) vm_call_cancel(op->vmc);
  op->vmc = NULL;
  dtd_look_cancel(op->look);
  op->look = NULL;
  json_decref(op->dtd_json);
  op->dtd_json = NULL;
  sessions_wait_cancel(op->wait);
  op->wait = NULL;
  appsrc_cpu_cancel(op->cpu);
  op->cpu = NULL;
  json_decref(op->held);
  op->held = NULL;
  uv_timer_stop(&op->timer);
  if (op->s) session_unref(op->s);
  op->s = NULL;
  store_free(op->outside);
  op->outside = NULL;
  if (op->app) op->app->ops--;
  op->app = NULL;
  if (op->prev)
    op->prev->next = op->next;
  else
    ctx->ops = op->next;
  if (op->next) op->next->prev = op->prev;
  uv_close((uv_handle_t *)&op->timer, op_closed);
}

static void op_cancelled(void *arg) {
  op_t *op = arg;
  op->call = NULL;
  /* A capture's own window closes with it; nobody waits for the answer. */
  if (op->action == A_CAPTURE && op->s && session_state(op->s) != SESSION_CLOSED) {
    sessions_wait_t *w = sessions_close(op->app->sessions, op->s, NULL, NULL);
    (void)w; /* answered on its own; NULL only when out of memory */
  } else if (op->action == A_CAPTURE && !op->s && op->wait) {
    /* Cancelled while its window was still opening. */
    sessions_open_abandon(op->wait);
    op->wait = NULL;
  }
  op_free(op);
}

static void parse_args(op_args_t *a, json_t *args) {
  json_t *v;
  a->uri = dup_arg(args, "vmServiceUri");
  a->app = dup_arg(args, "app");
  a->dtd_uri = dup_arg(args, "dtdUri");
  a->interaction_id = dup_arg(args, "interactionId");
  a->linked_by = dup_arg(args, "linkedBy");
  a->cursor = dup_arg(args, "cursor");
  a->session = dup_arg(args, "session");
  a->baseline = dup_arg(args, "baseline");
  a->candidate = dup_arg(args, "candidate");
  a->budgets = json_incref(json_object_get(args, "budgets"));
  a->workload_arg = json_incref(json_object_get(args, "workload"));
  a->has_limit = (v = json_object_get(args, "limit")) != NULL;
  a->limit = v ? (size_t)json_integer_value(v) : 20;
  const char *d = json_string_value(json_object_get(args, "detail"));
  a->has_detail = d != NULL;
  a->detail = !d || !strcmp(d, "summary") ? D_SUMMARY : !strcmp(d, "frames") ? D_FRAMES : D_BLOCKS;
  a->wait_ms = (v = json_object_get(args, "waitMs")) ? (int)json_integer_value(v) : -1;
  a->duration_ms = (v = json_object_get(args, "durationMs")) ? (int)json_integer_value(v) : -1;
  a->budget_ms = (v = json_object_get(args, "budgetMs")) ? json_number_value(v) : 0;
  if ((v = json_object_get(args, "includeStartup"))) {
    a->has_include_startup = 1;
    a->include_startup = json_is_true(v);
  }
  if ((v = json_object_get(args, "timeline"))) {
    a->has_timeline = 1;
    a->no_timeline = json_is_false(v);
  }
  static const char *const track_keys[WP_TRACK__COUNT] = {"trackWidgets", "trackLayouts",
                                                          "trackPaints", "trackRebuilds"};
  for (int t = 0; t < WP_TRACK__COUNT; t++) {
    a->track[t] = json_is_true(json_object_get(args, track_keys[t]));
    if (json_object_get(args, track_keys[t])) a->any_track = 1;
  }
  const char *chart = json_string_value(json_object_get(args, "chart"));
  a->chart = chart ? (!strcmp(chart, "svg") ? 1 : 2) : 0;
}

op_t *op_new(tool_ctx_t *ctx, tool_call_t *call, json_t *args) {
  op_t *op = calloc(1, sizeof *op);
  if (!op) {
    tool_call_finish_text_error(call, "internal error: out of memory");
    return NULL;
  }
  op->ctx = ctx;
  op->call = call;
  uv_timer_init(ctx->loop, &op->timer);
  op->next = ctx->ops;
  if (ctx->ops) ctx->ops->prev = op;
  ctx->ops = op;
  op->t0 = op->last_progress = uv_now(ctx->loop);
  tool_call_on_cancel(call, op_cancelled, op);
  const char *a = json_string_value(json_object_get(args, "action"));
  op->action = A_READ;
  for (int i = 0; a && i < A__COUNT; i++)
    if (!strcmp(a, action_names[i])) op->action = (action_t)i;
  parse_args(&op->a, args);
  return op;
}

void op_cancel_all(tool_ctx_t *ctx) {
  while (ctx->ops) {
    op_t *op = ctx->ops;
    op->call = NULL; /* mcp answers nothing for them */
    op_free(op);
  }
}

op_t *op_from_timer(uv_timer_t *t) { return container_of(t, op_t, timer); }

void op_timer(op_t *op, uint64_t ms, uv_timer_cb cb) { uv_timer_start(&op->timer, cb, ms, 0); }

/* ---- apps ------------------------------------------------------------ */

void op_bind(op_t *op, appref_t *app) {
  if (op->app) op->app->ops--;
  op->app = app;
  if (app) app->ops++;
}

const char *op_app_label(const appref_t *app, char *buf, size_t n) {
  if (app->name[0]) return app->name;
  snprintf(buf, n, "app %u", app->n);
  return buf;
}

json_t *op_apps_json(const tool_ctx_t *ctx) {
  json_t *list = json_array();
  char label[32];
  for (const appref_t *a = ctx->apps; a && list; a = a->next) {
    session_t *s = sessions_current(a->sessions);
    json_t *conn = vm_app_connection_json(a->app); /* its URI, token redacted */
    const char *uri = json_string_value(json_object_get(conn, "vmServiceUri"));
    json_t *e = json_pack("{s:s, s:s, s:s}", "app", op_app_label(a, label, sizeof label),
                          "vmServiceUri", uri ? uri : "", "state",
                          a->live ? "connected" : "not_connected");
    json_decref(conn);
    if (e && fe_in_use(a->fe)) json_object_set_new(e, "frameSource", json_string(FE_SOURCE));
    if (e && s) json_object_set_new(e, "session", json_string(session_id(s)));
    if (e && a == ctx->app) json_object_set_new(e, "latest", json_true());
    if (!e || json_array_append_new(list, e)) {
      json_decref(list);
      list = NULL;
    }
  }
  return list;
}

/* ---- answers ----------------------------------------------------------- */

/* Every text an answer carries passes the redactor: it may quote a URI. */
static void format_clean(char *clean, size_t n, const char *fmt, va_list ap) {
  char buf[512];
  vsnprintf(buf, sizeof buf, fmt, ap);
  log_redact(buf, clean, n);
}

void op_warn(op_t *op, const char *fmt, ...) {
  if (op->nwarnings == OP_MAX_WARNINGS) {
    op->warnings_dropped++;
    return;
  }
  char clean[600];
  va_list ap;
  va_start(ap, fmt);
  format_clean(clean, sizeof clean, fmt, ap);
  va_end(ap);
  char *w = strdup(clean);
  if (w) op->warnings[op->nwarnings++] = w;
}

json_t *op_result(op_t *op) {
  json_t *r = json_pack("{s:s}", "action", action_names[op->action]);
  if (!r || op->action == A_COMPARE) return r;
  json_t *conn = op->app ? vm_app_connection_json(op->app->app)
                         : json_pack("{s:s}", "state", "not_connected");
  if (conn && op->app && fe_in_use(op->app->fe))
    json_object_set_new(conn, "frameSource", json_string(FE_SOURCE));
  if (json_object_set_new(r, "connection", conn) ||
      (op->dtd_json && json_object_set(r, "dtd", op->dtd_json))) {
    json_decref(r);
    return NULL;
  }
  /* Several apps: which one this is about, and the list where it helps. */
  char label[32];
  if (op->ctx->napps > 1 && op->app &&
      json_object_set_new(r, "app", json_string(op_app_label(op->app, label, sizeof label)))) {
    json_decref(r);
    return NULL;
  }
  if (op->ctx->napps > 1 && (op->action == A_STATUS || !op->app)) {
    json_t *apps = op_apps_json(op->ctx);
    if (!apps || json_object_set_new(r, "apps", apps)) {
      json_decref(r);
      return NULL;
    }
  }
  return r;
}

/* Warnings are gathered while the call runs and put in at the end. */
static int put_warnings(op_t *op, json_t *r) {
  if (op->s) {
    const char *const *w = session_warnings(op->s);
    for (; *w; w++) op_warn(op, "%s", *w);
  }
  /* Once per answer that shows frames or the app's state, never on mark. */
  if ((op->frame_events || (op->s && session_frame_events(op->s))) && op->action != A_MARK &&
      !(op->action == A_READ && op->s))
    op_warn(op, "%s", FE_NOTE);
  if (!op->nwarnings) return 0;
  json_t *a = json_array();
  for (size_t i = 0; a && i < op->nwarnings; i++) json_array_append_new(a, json_string(op->warnings[i]));
  if (a && op->warnings_dropped) {
    char more[64];
    snprintf(more, sizeof more, "(%d more warnings)", op->warnings_dropped);
    json_array_append_new(a, json_string(more));
  }
  return !a || json_object_set_new(r, "warnings", a) ? -1 : 0;
}

void op_finish(op_t *op, json_t *res, int is_error, json_t *extra) {
  if (op->call) {
    if (!res) {
      json_decref(extra);
      tool_call_finish_text_error(op->call, "internal error: out of memory");
    } else if (put_warnings(op, res) < 0) {
      json_decref(res);
      json_decref(extra);
      tool_call_finish_text_error(op->call, "internal error: out of memory");
    } else {
      tool_call_finish(op->call, res, is_error, extra);
    }
  } else {
    json_decref(res);
    json_decref(extra);
  }
  op->call = NULL;
  op_free(op);
}

void op_fail_text(op_t *op, const char *fmt, ...) {
  char clean[600];
  va_list ap;
  va_start(ap, fmt);
  format_clean(clean, sizeof clean, fmt, ap);
  va_end(ap);
  if (op->call) tool_call_finish_text_error(op->call, clean);
  op->call = NULL;
  op_free(op);
}

static void op_finish_diag(op_t *op, json_t *r, diag_code_t code, const char *detail);

void op_fail_diag(op_t *op, diag_code_t code, const char *detail) {
  /* No watcher, and nothing says the isolate is a Flutter app's: adding the
   * watcher would not help a plain Dart program. */
  if (code == DIAG_WATCHER_MISSING && op->app &&
      diagnose_watcher_absent(vm_app_watcher_missing(op->app->app) && !vm_app_is_web(op->app->app),
                              vm_app_is_flutter(op->app->app),
                              fe_frames(op->app->fe)) == DIAG_NOT_FLUTTER) {
    code = DIAG_NOT_FLUTTER;
    detail = NULL; /* the message says it all; the watcher's absence is beside the point */
  }
  op_finish_diag(op, op_result(op), code, detail);
}

static void op_finish_diag(op_t *op, json_t *r, diag_code_t code, const char *detail) {
  diagnose_facts_t f = op->facts;
  json_t *d = diagnose_to_json(code, &f);
  if (r && d && detail && *detail) {
    char clean[600];
    log_redact(detail, clean, sizeof clean);
    json_t *ev = json_object_get(d, "evidence");
    if (!ev) json_object_set_new(d, "evidence", ev = json_object());
    json_object_set_new(ev, "detail", json_string(clean));
  }
  json_t *ev = json_object_get(d, "evidence");
  if (ev && json_object_size(ev) == 0) json_object_del(d, "evidence");
  if (r && (!d || json_object_set_new(r, "diagnosis", d))) {
    json_decref(r);
    r = NULL;
  }
  op_finish(op, r, op->action != A_STATUS && diag_is_error(code), NULL);
}

void op_fail_status(op_t *op, const wp_status_t *st) {
  diag_code_t code = st->diag;
  if (code == DIAG_NONE) code = DIAG_WATCHER_ERROR; /* out of memory in our own code */
  op_fail_diag(op, code, st->detail);
}

/* ---- watcher calls ----------------------------------------------------- */

void op_note_facts(appref_t *app, const record_reply_t *r) {
  tool_ctx_t *ctx = app->ctx;
  appfacts_note(&app->facts, uv_now(ctx->loop), r);
  /* The stand-in's version is not a watcher's: connection.frameSource says it. */
  vm_app_set_watcher_version(app->app, r->frame_events ? NULL : r->watcher_version);
}

void op_note_reply(appref_t *app, const record_reply_t *r) {
  op_note_facts(app, r);
  sessions_note_reply(app->sessions, r);
}

/* Every reply of an op's watcher call passes here first. */
static void op_wp_reply(void *arg, const wp_status_t *st, const record_reply_t *r) {
  op_t *op = arg;
  op->wpc = NULL;
  if (r) op_note_reply(op->app, r);
  if (r && r->frame_events) op->frame_events = 1;
  op->after_wp(op, st, r);
}

int op_wp_drive(op_t *op, const char *steps, int repeat, wp_reply_cb cb) {
  op->after_wp = cb;
  op->wpc = wp_call_drive(&op->app->t, steps, repeat, op_wp_reply, op);
  if (!op->wpc) {
    op_fail_text(op, "internal error: out of memory");
    return -1;
  }
  return 0;
}

int op_wp(op_t *op, const wp_request_t *req, wp_reply_cb cb) {
  op->after_wp = cb;
  op->wpc = wp_call(&op->app->t, req, op_wp_reply, op);
  if (!op->wpc) {
    op_fail_text(op, "internal error: out of memory");
    return -1;
  }
  return 0;
}
