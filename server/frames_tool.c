#include "frames_tool.h"

#include "json_put.h"
#include "frames_tool_doc.h"

#include <stdlib.h>
#include <string.h>

#include "answer_text.h"
#include "codes.h"
#include "log.h"
#include "container_of.h"
#include "actions.h"
#include "dtd_pick.h"
#include "op.h"
#include "vm_uri.h"
#include "schema_embed.h"
#include "validate.h"

json_t *frames_tool_input_schema_new(void) {
  return json_loads(schema_telescope_frames_input, 0, NULL);
}

json_t *frames_tool_definition(const char *v) {
  int bad = 0;
  json_t *d = json_object();
  json_put(d, &bad, "name", json_string(FRAMES_TOOL_NAME));
  /* title and outputSchema arrived with 2025-06-18, annotations with 2025-03-26. */
  if (mcp_version_at_least(v, "2025-06-18"))
    json_put(d, &bad, "title", json_string("Flutter frame performance"));
  json_put(d, &bad, "description", json_string(frames_tool_description));
  json_put(d, &bad, "inputSchema", json_loads(schema_telescope_frames_input, 0, NULL));
  if (mcp_version_at_least(v, "2025-06-18"))
    json_put(d, &bad, "outputSchema", json_loads(schema_telescope_frames_output, 0, NULL));
  if (mcp_version_at_least(v, "2025-03-26"))
    /* start/stop switch attribution in the app, so not read-only; nothing is
     * lost by repeating a call, but a second start is not a no-op. */
    json_put(d, &bad, "annotations",
        json_pack("{s:s, s:b, s:b, s:b, s:b}", "title", "Flutter frame performance", "readOnlyHint",
                  0, "destructiveHint", 0, "idempotentHint", 0, "openWorldHint", 0));
  if (bad) {
    json_decref(d);
    return NULL;
  }
  return d;
}

struct frames_tool {
  tool_ctx_t ctx;
  json_t *input_schema;
  void (*close_done)(void *arg);
  void *close_arg;
  int closing; /* closes still to finish */
};

static void on_session_reply(void *arg, const record_reply_t *r) {
  tool_ctx_t *ctx = arg;
  if (ctx->app) op_note_reply(ctx, ctx->app, r);
}

static appref_t *appref_new(tool_ctx_t *ctx, const char *uri, diag_code_t *code, char *err,
                            size_t errlen);

/* With a URI given at launch, connect and subscribe now: the VM drops the
 * Extension events nobody listens to (dart-lang/sdk runtime/vm/service.cc
 * SendExtensionEvent), so on a direct connection the frames drawn before the
 * agent's first call would be lost (issue 21 item 3; docs/flutter-apis.md).
 * A failure here says nothing to anyone: the first call connects again and
 * reports it. */
static void connect_to(tool_ctx_t *ctx, const char *uri) {
  char err[256] = "";
  diag_code_t code = DIAG_NONE;
  if (!(ctx->app = appref_new(ctx, uri, &code, err, sizeof err))) {
    log_debug("connect at launch: %s", err);
    return;
  }
  sessions_set_transport(ctx->sessions, &ctx->app->t);
  vm_app_refresh(ctx->app->app, NULL, NULL);
}

/* --dtd-uri: the same, for the one app the daemon lists at launch (none or
 * several: the first call says so). */
static void launch_looked(void *arg, diag_code_t diag, const char *detail) {
  tool_ctx_t *ctx = arg;
  const json_t *apps = dtd_apps(ctx->dtd);
  ctx->launch_look = NULL;
  if (diag != DIAG_NONE) log_debug("connect at launch: %s", detail);
  if (diag == DIAG_NONE && json_array_size(apps) == 1 && !ctx->app)
    connect_to(ctx, json_string_value(json_object_get(json_array_get(apps, 0), "uri")));
}

static void connect_at_launch(tool_ctx_t *ctx) {
  const config_t *cfg = ctx->cfg;
  char err[256];
  if (cfg->dtd_uri && (ctx->dtd = dtd_new(ctx->loop, (int)cfg->call_timeout_ms, cfg->allow_remote)) &&
      dtd_set_uri(ctx->dtd, cfg->dtd_uri, err, sizeof err) == 0)
    ctx->launch_look = dtd_look(ctx->dtd, launch_looked, ctx);
  if (cfg->vm_service_uri || cfg->vm_service_uri_file) connect_to(ctx, cfg->vm_service_uri);
}

frames_tool_t *frames_tool_new(uv_loop_t *loop, const config_t *cfg) {
  frames_tool_t *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->ctx.loop = loop;
  t->ctx.cfg = cfg;
  appfacts_init(&t->ctx.facts);
  t->input_schema = frames_tool_input_schema_new();
  if (!t->input_schema) goto fail_schema;
  /* The validator knows a subset of JSON Schema: a schema change it cannot
   * enforce must stop the server, not silently pass bad arguments. */
  char err[256];
  if (validate_schema_check(t->input_schema, err, sizeof err) != 0) {
    log_error("schema/telescope_frames.input.json: %s", err);
    goto fail_check;
  }
  if (!(t->ctx.sessions = sessions_new(loop, on_session_reply, &t->ctx))) goto fail_check;
  connect_at_launch(&t->ctx);
  return t;

fail_check:
  json_decref(t->input_schema);
fail_schema:
  free(t);
  return NULL;
}

static void invoke_cb(void *arg, tool_call_t *call, json_t *args) {
  frames_tool_invoke(arg, call, args);
}

mcp_tool_t frames_tool_mcp(frames_tool_t *t) {
  mcp_tool_t m = {FRAMES_TOOL_NAME, frames_tool_definition, t->input_schema, invoke_cb, t, answer_text_render};
  return m;
}

/* ---- the app a call talks to ------------------------------------------- */

static void on_app_event(void *arg, vm_app_event_t ev) {
  appref_t *ar = arg;
  tool_ctx_t *ctx = ar->ctx;
  /* A hot restart: the sessions drain at once, which re-enables attribution. */
  if (ev == VM_APP_EV_RESTARTED) rebuilds_clear(ar->rb); /* location ids start again */
  if (ev == VM_APP_EV_RESTARTED && ar == ctx->app) sessions_kick(ctx->sessions);
  if (ev == VM_APP_EV_DISCONNECTED && ar == ctx->app) sessions_app_gone(ctx->sessions);
  /* Frames held while the isolate was unknown (a reconnect) are judged now. */
  if (ev == VM_APP_EV_CONNECTED || ev == VM_APP_EV_RESTARTED)
    fe_isolate_known(ar->fe, vm_app_isolate_id(ar->app));
}

static void on_app_extension(void *arg, const char *isolate_id, const char *kind, json_t *data) {
  appref_t *ar = arg;
  fe_add(ar->fe, isolate_id, kind, data, vm_app_isolate_id(ar->app));
  rebuilds_feed(ar->rb, isolate_id, kind, data, vm_app_isolate_id(ar->app));
}

/* The one connection, to uri (NULL: the command line's URI file). NULL
 * with err set when the URI is refused, or out of memory. */
static appref_t *appref_new(tool_ctx_t *ctx, const char *uri, diag_code_t *code, char *err,
                            size_t errlen) {
  appref_t *ar = calloc(1, sizeof *ar);
  if (!ar) goto oom;
  ar->ctx = ctx;
  vm_app_options_t o = {NULL,         ctx->cfg->vm_service_uri_file, (int)ctx->cfg->call_timeout_ms,
                        ctx->cfg->allow_remote, on_app_event, ar, on_app_extension};
  if (!(ar->app = vm_app_new(ctx->loop, &o))) goto oom;
  if (!(ar->fe = fe_new(ctx->loop, ar->app)) || !(ar->rb = rebuilds_new())) {
    fe_free(ar->fe);
    vm_app_close(ar->app, free, ar);
    goto oom_freed;
  }
  if (uri) {
    vm_uri_t u;
    int rc = vm_app_set_uri(ar->app, uri, err, errlen);
    if (rc != 0) {
      *code = (diag_code_t)rc;
      fe_free(ar->fe);
      rebuilds_free(ar->rb);
      vm_app_close(ar->app, free, ar);
      return NULL;
    }
    vm_uri_parse(uri, ctx->cfg->allow_remote, &u, NULL, 0);
    snprintf(ar->uri, sizeof ar->uri, "%s", u.ws);
  }
  ar->t = fe_transport(ar->fe);
  return ar;

oom:
  free(ar);
oom_freed:
  *code = DIAG_NOT_CONNECTED;
  snprintf(err, errlen, "out of memory");
  return NULL;
}

/* Binds the call to the app (DESIGN 4 vmServiceUri; docs/tool.md "One app
 * per server at a time"): 0, or -1 when the call was answered. */
static int bind_app(op_t *op) {
  tool_ctx_t *ctx = op->ctx;
  const config_t *cfg = ctx->cfg;
  char err[256] = "";
  diag_code_t code = DIAG_NONE;
  vm_uri_t u;
  if (op->a.uri) {
    vm_uri_status_t rc = vm_uri_parse(op->a.uri, cfg->allow_remote, &u, err, sizeof err);
    if (rc != VM_URI_OK) { /* refused before anything is touched */
      op_fail_diag(op, rc == VM_URI_REMOTE ? DIAG_CONNECTION_REJECTED : DIAG_NOT_CONNECTED, err);
      return -1;
    }
  } else if (!ctx->app && !cfg->vm_service_uri && !cfg->vm_service_uri_file) {
    op_fail_diag(op, DIAG_NOT_CONNECTED, NULL);
    return -1;
  }
  if (!ctx->app) {
    const char *first = cfg->vm_service_uri ? cfg->vm_service_uri : op->a.uri;
    if (!(ctx->app = appref_new(ctx, first, &code, err, sizeof err))) {
      op_fail_diag(op, code, err);
      return -1;
    }
    sessions_set_transport(ctx->sessions, &ctx->app->t);
  }
  if (op->a.uri && strcmp(ctx->app->uri, u.ws) != 0) {
    if (sessions_busy(ctx->sessions)) {
      op_fail_text(op, "vmServiceUri: a session is open on the app in use; stop it first, or "
                       "leave vmServiceUri out");
      return -1;
    }
    if (!(op->revert_uri = strdup(ctx->app->uri))) {
      op_fail_text(op, "internal error: out of memory");
      return -1;
    }
    op_app_point(ctx, u.ws);
  }
  op->app = ctx->app;
  return 0;
}

static void bind_and_run(op_t *op) {
  if (bind_app(op) == 0) action_run(op);
}

void frames_tool_invoke(frames_tool_t *t, tool_call_t *call, json_t *args) {
  op_t *op = op_new(&t->ctx, call, args);
  if (!op || action_check_args(op) < 0) return;
  if (op->action == A_COMPARE) { /* compare reads stopped sessions only */
    action_run(op);
    return;
  }
  if (dtd_pick(op, bind_and_run)) return; /* the DTD says which app, later */
  bind_and_run(op);
}

/* The app's connection and the DTD's close together: they share one lws
 * context, which goes (and with it each one's done) when both let it go. */
static void app_closed(void *arg) {
  frames_tool_t *t = arg;
  if (--t->closing > 0) return;
  void (*done)(void *) = t->close_done;
  void *darg = t->close_arg;
  json_decref(t->input_schema);
  appfacts_close(&t->ctx.facts);
  free(t->ctx.app);
  free(t);
  if (done) done(darg);
}

void frames_tool_close(frames_tool_t *t, void (*done)(void *arg), void *arg) {
  if (!t) {
    if (done) done(arg);
    return;
  }
  /* Shutdown must be prompt: calls in flight are dropped and an open
   * session is not switched back (attribution stays on in the app until it
   * restarts or another server stops it; see README). */
  op_cancel_all(&t->ctx);
  dtd_look_cancel(t->ctx.launch_look);
  t->ctx.launch_look = NULL;
  sessions_free(t->ctx.sessions);
  t->ctx.sessions = NULL;
  t->close_done = done;
  t->close_arg = arg;
  t->closing = 1 + (t->ctx.app != NULL) + (t->ctx.dtd != NULL);
  if (t->ctx.app) {
    fe_free(t->ctx.app->fe);
    rebuilds_free(t->ctx.app->rb);
    vm_app_close(t->ctx.app->app, app_closed, t);
  }
  if (t->ctx.dtd) dtd_close(t->ctx.dtd, app_closed, t);
  t->ctx.dtd = NULL;
  app_closed(t);
}
