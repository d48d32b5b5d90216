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
#include "apps.h"
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

/* With a URI given at launch, connect and subscribe now: the VM drops the
 * Extension events nobody listens to (dart-lang/sdk runtime/vm/service.cc
 * SendExtensionEvent), so on a direct connection the frames drawn before the
 * agent's first call would be lost (issue 21 item 3; docs/flutter-apis.md).
 * A failure here says nothing to anyone: the first call connects again and
 * reports it. */
static void connect_to(tool_ctx_t *ctx, const char *uri, const char *name) {
  char err[256] = "";
  diag_code_t code = DIAG_NONE;
  appref_t *ar = apps_add(ctx, uri, name, &code, err, sizeof err);
  if (!ar) {
    log_debug("connect at launch: %s", err);
    return;
  }
  ar->launch = 1;
  ctx->app = ar;
  vm_app_refresh(ar->app, NULL, NULL);
}

/* --dtd-uri: the same, for the one app the daemon lists at launch (none or
 * several: the first call says so). */
static void launch_looked(void *arg, diag_code_t diag, const char *detail) {
  tool_ctx_t *ctx = arg;
  const json_t *apps = dtd_apps(ctx->dtd);
  ctx->launch_look = NULL;
  if (diag != DIAG_NONE) log_debug("connect at launch: %s", detail);
  const json_t *one = json_array_get(apps, 0);
  const char *name = json_string_value(json_object_get(one, "name"));
  if (diag == DIAG_NONE && json_array_size(apps) == 1 && !ctx->app)
    connect_to(ctx, json_string_value(json_object_get(one, "uri")), name ? name : "");
}

static void connect_at_launch(tool_ctx_t *ctx) {
  const config_t *cfg = ctx->cfg;
  char err[256];
  if (cfg->dtd_uri && (ctx->dtd = dtd_new(ctx->loop, (int)cfg->call_timeout_ms, cfg->allow_remote)) &&
      dtd_set_uri(ctx->dtd, cfg->dtd_uri, err, sizeof err) == 0)
    ctx->launch_look = dtd_look(ctx->dtd, launch_looked, ctx);
  if (cfg->vm_service_uri || cfg->vm_service_uri_file) connect_to(ctx, cfg->vm_service_uri, "");
}

frames_tool_t *frames_tool_new(uv_loop_t *loop, const config_t *cfg) {
  frames_tool_t *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->ctx.loop = loop;
  t->ctx.cfg = cfg;
  t->input_schema = frames_tool_input_schema_new();
  if (!t->input_schema) goto fail_schema;
  /* The validator knows a subset of JSON Schema: a schema change it cannot
   * enforce must stop the server, not silently pass bad arguments. */
  char err[256];
  if (validate_schema_check(t->input_schema, err, sizeof err) != 0) {
    log_error("schema/telescope_frames.input.json: %s", err);
    goto fail_check;
  }
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

static void bind_and_run(op_t *op) {
  if (apps_bind(op) == 0) action_run(op);
}

void frames_tool_invoke(frames_tool_t *t, tool_call_t *call, json_t *args) {
  op_t *op = op_new(&t->ctx, call, args);
  if (!op || action_check_args(op) < 0) return;
  if (op->action == A_COMPARE) { /* compare reads stopped sessions only */
    if (!op->a.app || apps_bind(op) == 0) action_run(op);
    return;
  }
  if (dtd_pick(op, bind_and_run)) return; /* the DTD says which app, later */
  bind_and_run(op);
}

/* The apps' connections and the DTD's close together: they share one lws
 * context, which goes (and with it each one's done) when all let it go. */
static void app_closed(void *arg) {
  frames_tool_t *t = arg;
  if (--t->closing > 0) return;
  void (*done)(void *) = t->close_done;
  void *darg = t->close_arg;
  json_decref(t->input_schema);
  while (t->ctx.apps) {
    appref_t *ar = t->ctx.apps;
    t->ctx.apps = ar->next;
    free(ar);
  }
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
  t->close_done = done;
  t->close_arg = arg;
  t->closing = 1 + (int)t->ctx.napps + (t->ctx.dtd != NULL);
  for (appref_t *ar = t->ctx.apps; ar; ar = ar->next) apps_close_one(ar, app_closed, t);
  if (t->ctx.dtd) dtd_close(t->ctx.dtd, app_closed, t);
  t->ctx.dtd = NULL;
  app_closed(t);
}
