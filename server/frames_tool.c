#include "frames_tool.h"

#include <stdlib.h>
#include <string.h>

#include "codes.h"
#include "log.h"
#include "schema_embed.h"
#include "validate.h"

struct frames_tool {
  uv_loop_t *loop;
  const config_t *cfg; /* borrowed, outlives the tool */
  json_t *input_schema;
};

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

json_t *frames_tool_definition(const char *v) {
  json_t *d = json_object();
  json_object_set_new(d, "name", json_string(FRAMES_TOOL_NAME));
  /* title and outputSchema arrived with 2025-06-18, annotations with 2025-03-26. */
  if (mcp_version_at_least(v, "2025-06-18"))
    json_object_set_new(d, "title", json_string("Flutter frame performance"));
  json_object_set_new(d, "description", json_string(description));
  json_object_set_new(d, "inputSchema", json_loads(schema_telescope_frames_input, 0, NULL));
  if (mcp_version_at_least(v, "2025-06-18"))
    json_object_set_new(d, "outputSchema", json_loads(schema_telescope_frames_output, 0, NULL));
  if (mcp_version_at_least(v, "2025-03-26"))
    /* start/stop switch attribution in the app, so not read-only; nothing is
     * lost by repeating a call, but a second start is not a no-op. */
    json_object_set_new(
        d, "annotations",
        json_pack("{s:s, s:b, s:b, s:b, s:b}", "title", "Flutter frame performance", "readOnlyHint",
                  0, "destructiveHint", 0, "idempotentHint", 0, "openWorldHint", 0));
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
  mcp_tool_t m = {FRAMES_TOOL_NAME, frames_tool_definition, t->input_schema, invoke_cb, t};
  return m;
}

/* The answer of every action while no app is connected: the same shape for
 * each, an error for all but status (reporting the state is status's job). */
static json_t *not_connected_result(const char *action) {
  diag_code_t d = DIAG_NOT_CONNECTED;
  return json_pack("{s:s, s:{s:s}, s:{s:s, s:s, s:s}}", "action", action, "connection", "state",
                   "not_connected", "diagnosis", "code", diag_name(d), "message", diag_message(d),
                   "hint", diag_hint(d));
}

void frames_tool_invoke(frames_tool_t *t, tool_call_t *call, json_t *args) {
  const char *action = json_string_value(json_object_get(args, "action"));
  if (!action) action = "read"; /* the schema's default */
  json_t *res = not_connected_result(action);
  if (!res) {
    tool_call_finish_text_error(call, "internal error: out of memory");
    return;
  }
  tool_call_finish(call, res, strcmp(action, "status") != 0, NULL);
}

void frames_tool_close(frames_tool_t *t, void (*done)(void *arg), void *arg) {
  if (t) {
    json_decref(t->input_schema);
    free(t);
  }
  if (done) done(arg);
}
