/* Fuzz target: the MCP line handler — newline framing, JSON-RPC
 * classification and MCP dispatch — fed one input as a stdin stream, no loop.
 *
 * The session carries the real tool definition and input schema (so tools/list
 * and argument validation are the product's), with a stand-in invoke whose
 * behaviour the arguments pick, so calls finish at once, send progress, fail,
 * or stay in flight to be cancelled by notifications/cancelled or by the
 * session's end. Every emitted message is checked: one line, valid JSON, an
 * object or a batch array of objects, "jsonrpc":"2.0", never a null id. */
#include <jansson.h>
#include <string.h>

#include "frames_tool.h"
#include "framing.h"
#include "fuzz.h"
#include "mcp.h"

#define MAX_LINE 8192 /* small, so oversize lines are reachable */
#define MAX_HELD 8

typedef struct {
  tool_call_t *call;
  int hooked;
} held_t;

static held_t held[MAX_HELD];
static mcp_session_t *session;

static void check_message(const json_t *m) {
  FUZZ_ASSERT(json_is_object(m));
  const char *version = json_string_value(json_object_get(m, "jsonrpc"));
  FUZZ_ASSERT(version && strcmp(version, "2.0") == 0);
  json_t *id = json_object_get(m, "id");
  FUZZ_ASSERT(!id || json_is_string(id) || json_is_integer(id));
  FUZZ_ASSERT((json_object_get(m, "result") != NULL) + (json_object_get(m, "error") != NULL) +
                  (json_object_get(m, "method") != NULL) ==
              1);
}

static void emit(void *arg, const char *line, size_t len) {
  FUZZ_ASSERT(strlen(line) == len);
  FUZZ_ASSERT(memchr(line, '\n', len) == NULL);
  json_error_t e;
  json_t *m = json_loadb(line, len, JSON_DECODE_ANY, &e);
  FUZZ_ASSERT(m != NULL);
  if (json_is_array(m)) {
    FUZZ_ASSERT(json_array_size(m) > 0);
    size_t i;
    json_t *el;
    json_array_foreach(m, i, el) check_message(el);
  } else {
    check_message(m);
  }
  json_decref(m);
}

static void hook(void *arg) {
  held_t *h = arg;
  /* Finishing inside the hook is allowed and must be a no-op. */
  tool_call_finish(h->call, json_object(), 0, NULL);
  h->call = NULL;
}

static void invoke(void *arg, tool_call_t *call, json_t *args) {
  const char *action = json_string_value(json_object_get(args, "action"));
  if (!action) action = "status";
  if (strcmp(action, "start") == 0 || strcmp(action, "capture") == 0) {
    /* Stays in flight; capture without a hook, start with one. */
    for (size_t i = 0; i < MAX_HELD; i++) {
      if (held[i].call) continue;
      held[i].call = call;
      held[i].hooked = strcmp(action, "start") == 0;
      if (held[i].hooked) tool_call_on_cancel(call, hook, &held[i]);
      tool_call_progress(call, 0, 1, "waiting");
      return;
    }
    tool_call_finish_text_error(call, "too many calls in flight");
  } else if (strcmp(action, "read") == 0) {
    tool_call_progress(call, 1, 3, "reading");
    tool_call_progress(call, 1, 3, "not increasing: dropped");
    tool_call_progress(call, 2, 0, NULL);
    tool_call_finish(call, json_deep_copy(args), 0, json_pack("[{s:s,s:s}]", "type", "text",
                                                              "text", "extra"));
  } else if (strcmp(action, "stop") == 0) {
    const char *why = json_string_value(json_object_get(args, "interactionId"));
    tool_call_finish_text_error(call, why ? why : "stopped");
  } else {
    /* Echo: whatever the arguments hold travels back out as text and
     * structuredContent. */
    tool_call_finish(call, json_deep_copy(args), strcmp(action, "mark") == 0, NULL);
  }
}

/* The real definition, built once per revision: parsing the 19 KB output
 * schema for every tools/list would take most of each run. mcp appends the
 * returned reference and never changes it, so a shared one is safe. */
static json_t *definition_cached(const char *version) {
  static const char *versions[8];
  static json_t *defs[8];
  size_t i;
  for (i = 0; i < 8 && versions[i]; i++)
    if (strcmp(versions[i], version) == 0) return json_incref(defs[i]);
  if (i == 8) return frames_tool_definition(version);
  versions[i] = version; /* static strings of mcp.c */
  defs[i] = frames_tool_definition(version);
  return json_incref(defs[i]);
}

static void on_line(void *arg, const char *line, size_t len, int oversize) {
  if (oversize)
    mcp_session_handle_oversize(session, MAX_LINE);
  else
    mcp_session_handle_line(session, line, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static json_t *schema;
  if (!schema) schema = frames_tool_input_schema_new();
  FUZZ_ASSERT(schema != NULL);

  memset(held, 0, sizeof held);
  session = mcp_session_new(emit, NULL);
  FUZZ_ASSERT(session != NULL);
  mcp_tool_t tool = {FRAMES_TOOL_NAME, definition_cached, schema, invoke, NULL, NULL};
  FUZZ_ASSERT(mcp_session_add_tool(session, &tool) == 0);
  mcp_session_set_instructions(session, frames_tool_instructions);

  /* The stream arrives in chunks; their size varies with the input so chunk
   * boundaries fall everywhere, including inside "\r\n". */
  framing_t fr;
  framing_init(&fr, MAX_LINE);
  size_t chunk = 1 + size % 61;
  for (size_t off = 0; off < size; off += chunk) {
    size_t n = size - off < chunk ? size - off : chunk;
    FUZZ_ASSERT(framing_feed(&fr, (const char *)data + off, n, on_line, NULL) == 0);
  }
  framing_finish(&fr, on_line, NULL);
  framing_close(&fr);

  /* Half the parked calls finish normally (skipping ones a hook ended);
   * the session's end cancels the rest. */
  for (size_t i = 0; i < MAX_HELD; i += 2)
    if (held[i].call && !tool_call_cancelled(held[i].call)) {
      tool_call_finish(held[i].call, json_pack("{s:b}", "late", 1), 0, NULL);
      held[i].call = NULL;
    }
  size_t inflight = mcp_session_inflight(session);
  size_t parked = 0;
  for (size_t i = 0; i < MAX_HELD; i++) parked += held[i].call && !tool_call_cancelled(held[i].call);
  FUZZ_ASSERT(inflight == parked);
  mcp_session_free(session);
  session = NULL;
  /* Cancelled calls without a hook stay alive until the tool finishes them. */
  for (size_t i = 0; i < MAX_HELD; i++) {
    if (!held[i].call) continue;
    FUZZ_ASSERT(!held[i].hooked);
    FUZZ_ASSERT(tool_call_cancelled(held[i].call));
    tool_call_finish(held[i].call, json_object(), 0, NULL);
    held[i].call = NULL;
  }
  return 0;
}
