#include "frames_tool.h"

#include <stdlib.h>
#include <string.h>

#include "answer_text.h"
#include "codes.h"
#include "log.h"
#include "frames_tool_int.h"
#include "schema_embed.h"
#include "session.h"
#include "validate.h"

const char frames_tool_instructions[] =
    "telescope measures a running Flutter app's frame performance through the tool "
    "telescope_frames. Typical use: call action=status to check the app is connected "
    "(pass vmServiceUri, the URI `flutter run` prints, if it is not); call action=start, "
    "then drive the app (scroll, tap, navigate) so it draws the frames you want measured; "
    "then call action=stop for the summary (jank, build/raster percentiles, worst frames, "
    "the widgets that cost most). action=capture with durationMs does start/wait/stop in one "
    "call. When frames are empty or a call fails, read `diagnosis` (code, message, hint) and "
    "do what its hint says.";

static const char description[] =
    "Frame performance of a running Flutter app (debug or profile build with the telescope "
    "watcher). Actions: status (connection, watcher, liveness; always safe), start (open a "
    "measurement session with per-widget attribution), mark (tag following frames with "
    "interactionId), read (frames since the last read, with a summary), stop (close the "
    "session, full summary), capture (start, wait durationMs, stop). Workflow: start -> drive "
    "the app -> stop, then look at summary.jank, summary.worstFrames and summary.topBlocks. "
    "Results are JSON (structuredContent and the text block). When frames are empty or "
    "isError is set, read diagnosis.code and follow diagnosis.hint.";

json_t *frames_tool_input_schema_new(void) {
  return json_loads(schema_telescope_frames_input, 0, NULL);
}

/* json_object_set_new that remembers a failure: a definition with a member
 * missing is returned as NULL instead (test_alloc_fail). */
static void put(json_t *o, int *bad, const char *key, json_t *value) {
  if (json_object_set_new(o, key, value) != 0) *bad = 1;
}

json_t *frames_tool_definition(const char *v) {
  int bad = 0;
  json_t *d = json_object();
  put(d, &bad, "name", json_string(FRAMES_TOOL_NAME));
  /* title and outputSchema arrived with 2025-06-18, annotations with 2025-03-26. */
  if (mcp_version_at_least(v, "2025-06-18"))
    put(d, &bad, "title", json_string("Flutter frame performance"));
  put(d, &bad, "description", json_string(description));
  put(d, &bad, "inputSchema", json_loads(schema_telescope_frames_input, 0, NULL));
  if (mcp_version_at_least(v, "2025-06-18"))
    put(d, &bad, "outputSchema", json_loads(schema_telescope_frames_output, 0, NULL));
  if (mcp_version_at_least(v, "2025-03-26"))
    /* start/stop switch attribution in the app, so not read-only; nothing is
     * lost by repeating a call, but a second start is not a no-op. */
    put(d, &bad, "annotations",
        json_pack("{s:s, s:b, s:b, s:b, s:b}", "title", "Flutter frame performance", "readOnlyHint",
                  0, "destructiveHint", 0, "idempotentHint", 0, "openWorldHint", 0));
  if (bad) {
    json_decref(d);
    return NULL;
  }
  return d;
}

frames_tool_t *frames_tool_new(uv_loop_t *loop, const config_t *cfg) {
  frames_tool_t *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->loop = loop;
  t->cfg = cfg;
  t->input_schema = frames_tool_input_schema_new();
  if (!t->input_schema) goto fail_schema;
  /* The validator knows a subset of JSON Schema: a schema change it cannot
   * enforce must stop the server, not silently pass bad arguments. */
  char err[256];
  if (validate_schema_check(t->input_schema, err, sizeof err) != 0) {
    log_error("schema/telescope_frames.input.json: %s", err);
    goto fail_check;
  }
  summary_clock_init(&t->clock);
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

void frames_tool_invoke(frames_tool_t *t, tool_call_t *call, json_t *args) {
  frames_tool_run(t, call, args);
}

static void on_app_event(void *arg, vm_app_event_t ev) {
  frames_tool_t *ft = arg;
  /* A hot restart: the session drains at once, re-enabling attribution. */
  if (ev == VM_APP_EV_RESTARTED && ft->session) session_kick(ft->session);
}

diag_code_t frames_tool_ensure_app(frames_tool_t *ft, const char *uri, char *err, size_t errlen) {
  if (!ft->app) {
    const char *u = uri ? uri : ft->cfg->vm_service_uri;
    if (!u && !ft->cfg->vm_service_uri_file) {
      snprintf(err, errlen,
               "no VM-service URI: pass vmServiceUri, --vm-service-uri or "
               "--vm-service-uri-file");
      return DIAG_NOT_CONNECTED;
    }
    vm_app_options_t o = {NULL,
                          ft->cfg->vm_service_uri_file,
                          (int)ft->cfg->call_timeout_ms,
                          ft->cfg->allow_remote,
                          on_app_event,
                          ft};
    if (!(ft->app = vm_app_new(ft->loop, &o))) {
      snprintf(err, errlen, "out of memory");
      return DIAG_NOT_CONNECTED;
    }
    if (u) {
      int rc = vm_app_set_uri(ft->app, u, err, errlen);
      if (rc != 0) return (diag_code_t)rc;
    }
    return DIAG_NONE;
  }
  if (uri) {
    int rc = vm_app_set_uri(ft->app, uri, err, errlen);
    if (rc != 0) return (diag_code_t)rc;
  }
  return DIAG_NONE;
}

void frames_tool_note_reply(frames_tool_t *ft, const record_reply_t *r) {
  ft->w.known = 1;
  snprintf(ft->w.run_id, sizeof ft->w.run_id, "%s", r->run_id);
  ft->w.liveness = r->liveness_counter;
  ft->w.at_ms = uv_now(ft->loop);
  snprintf(ft->w.lifecycle, sizeof ft->w.lifecycle, "%s", r->lifecycle ? r->lifecycle : "");
  ft->w.frames_enabled = r->frames_enabled;
  ft->w.refresh_rate = r->refresh_rate;
  if (ft->app) vm_app_set_watcher_version(ft->app, r->watcher_version);
  for (size_t i = 0; i < r->nrecords; i++)
    summary_clock_add(&ft->clock, r->records[i].at_us, r->records[i].vsync_start_us);
}

void frames_tool_on_session_reply(void *arg, const record_reply_t *r) {
  frames_tool_note_reply(arg, r);
}

void frames_tool_new_read_tap(frames_tool_t *ft) {
  if (!ft->session || ft->read_tap) return;
  ft->read_tap = store_new(session_budget_us(ft->session));
  if (ft->read_tap && session_tap_attach(ft->session, ft->read_tap) < 0) {
    store_free(ft->read_tap);
    ft->read_tap = NULL;
  }
}

void frames_tool_drop_read_tap(frames_tool_t *ft, session_t *s) {
  if (!ft->read_tap) return;
  if (s) session_tap_detach(s, ft->read_tap);
  store_free(ft->read_tap);
  ft->read_tap = NULL;
}

static void app_closed(void *arg) {
  frames_tool_t *ft = arg;
  void (*done)(void *) = ft->close_done;
  void *darg = ft->close_arg;
  json_decref(ft->input_schema);
  json_decref(ft->last_watcher);
  free(ft);
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
  frames_tool_cancel_all(t);
  frames_tool_drop_read_tap(t, t->session);
  t->session = t->closing_session = NULL;
  session_free_all();
  t->close_done = done;
  t->close_arg = arg;
  if (t->app) {
    vm_app_t *app = t->app;
    t->app = NULL;
    vm_app_close(app, app_closed, t);
  } else {
    app_closed(t);
  }
}
