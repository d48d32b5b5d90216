#include "mcp.h"

#include "json_put.h"

#include <stdlib.h>
#include <string.h>

#include "codes.h"
#include "jsonrpc.h"
#include "log.h"
#include "mcp_call.h"
#include "validate.h"

#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_SERVER_INFO "io.modelcontextprotocol/serverInfo"
#define LIST_TTL_MS 3600000 /* the tool list never changes while the binary runs */

struct mcp_session {
  mcp_out_t out;
  mcp_tool_t tools[MCP_MAX_TOOLS];
  size_t n_tools;
  const char *negotiated; /* static string, NULL before initialize */
  int initialized;        /* notifications/initialized seen */
  char *instructions;
  mcp_calls_t calls; /* in flight */
};

static void push(json_t *a, int *bad, json_t *value) {
  if (json_array_append_new(a, value) != 0) *bad = 1;
}

/* ---- session ----------------------------------------------------------- */

mcp_session_t *mcp_session_new(mcp_emit_cb emit, void *emit_arg) {
  mcp_session_t *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->out.emit = emit;
  s->out.arg = emit_arg;
  s->calls.out = &s->out;
  return s;
}

int mcp_session_add_tool(mcp_session_t *s, const mcp_tool_t *tool) {
  if (s->n_tools >= MCP_MAX_TOOLS) return -1;
  s->tools[s->n_tools++] = *tool;
  return 0;
}

int mcp_session_set_instructions(mcp_session_t *s, const char *text) {
  free(s->instructions);
  s->instructions = text ? strdup(text) : NULL;
  return text && !s->instructions ? -1 : 0;
}

void mcp_session_free(mcp_session_t *s) {
  if (!s) return;
  mcp_session_cancel_all(s);
  free(s->instructions);
  free(s);
}

size_t mcp_session_inflight(const mcp_session_t *s) {
  return s->calls.n;
}
const char *mcp_session_protocol_version(const mcp_session_t *s) {
  return s->negotiated;
}

void mcp_session_cancel_all(mcp_session_t *s) { mcp_calls_cancel_all(&s->calls); }

/* ---- methods ----------------------------------------------------------- */

typedef struct {
  mcp_session_t *s;
  batch_t *batch;
  json_t *id;          /* borrowed, NULL for a notification */
  json_t *params;      /* borrowed, may be NULL */
  const char *version; /* the revision this request is read under */
} req_t;

static json_t *server_info(void) {
  return json_pack("{s:s, s:s}", "name", "telescope-mcp", "version", TELESCOPE_VERSION);
}

static void do_initialize(req_t *r) {
  json_t *pv = json_object_get(r->params, "protocolVersion");
  if (!json_is_object(r->params) || !json_is_string(pv)) {
    mcp_out_error(&r->s->out, r->batch, r->id, RPC_INVALID_PARAMS,
               "initialize: params.protocolVersion must be a string", NULL);
    return;
  }
  const char *v = mcp_version_legacy(json_string_value(pv));
  r->s->negotiated = v ? v : MCP_LATEST_LEGACY_VERSION;
  int bad = 0;
  json_t *res = json_object();
  json_put(res, &bad, "protocolVersion", json_string(r->s->negotiated));
  json_put(res, &bad, "capabilities", json_pack("{s:{s:b}}", "tools", "listChanged", 0));
  json_put(res, &bad, "serverInfo", server_info());
  if (r->s->instructions) json_put(res, &bad, "instructions", json_string(r->s->instructions));
  mcp_out_result(&r->s->out, r->batch, r->id, r->s->negotiated, res, bad);
}

static void do_discover(req_t *r) {
  int bad = 0;
  json_t *versions = json_array();
  push(versions, &bad, json_string(MCP_MODERN_VERSION));
  for (size_t i = 0; mcp_version_legacy_nth(i); i++) push(versions, &bad, json_string(mcp_version_legacy_nth(i)));
  json_t *res = json_object();
  json_put(res, &bad, "supportedVersions", versions);
  json_put(res, &bad, "capabilities", json_pack("{s:{}}", "tools"));
  json_put(res, &bad, "_meta", json_pack("{s:o}", META_SERVER_INFO, server_info()));
  if (r->s->instructions) json_put(res, &bad, "instructions", json_string(r->s->instructions));
  json_put(res, &bad, "ttlMs", json_integer(LIST_TTL_MS));
  json_put(res, &bad, "cacheScope", json_string("public"));
  /* server/discover is a 2026-07-28 method: its result always has resultType. */
  mcp_out_result(&r->s->out, r->batch, r->id, MCP_MODERN_VERSION, res, bad);
}

static void do_ping(req_t *r) {
  mcp_out_result(&r->s->out, r->batch, r->id, r->version, json_object(), 0);
}

static void do_tools_list(req_t *r) {
  json_t *cursor = json_object_get(r->params, "cursor");
  if (cursor) {
    /* We never hand out a cursor: one page holds every tool. */
    mcp_out_error(&r->s->out, r->batch, r->id, RPC_INVALID_PARAMS, "tools/list: unknown cursor", NULL);
    return;
  }
  int bad = 0;
  json_t *tools = json_array();
  for (size_t i = 0; i < r->s->n_tools; i++)
    push(tools, &bad, r->s->tools[i].definition(r->version));
  json_t *res = json_object();
  json_put(res, &bad, "tools", tools);
  if (mcp_version_modern(r->version)) {
    json_put(res, &bad, "ttlMs", json_integer(LIST_TTL_MS));
    json_put(res, &bad, "cacheScope", json_string("public"));
  }
  mcp_out_result(&r->s->out, r->batch, r->id, r->version, res, bad);
}

static void do_tools_call(req_t *r) {
  mcp_session_t *s = r->s;
  char msg[512];
  if (!json_is_object(r->params)) {
    mcp_out_error(&s->out, r->batch, r->id, RPC_INVALID_PARAMS, "tools/call: params must be an object",
               NULL);
    return;
  }
  json_t *name = json_object_get(r->params, "name");
  if (!json_is_string(name)) {
    mcp_out_error(&s->out, r->batch, r->id, RPC_INVALID_PARAMS, "tools/call: params.name must be a string",
               NULL);
    return;
  }
  const mcp_tool_t *tool = NULL;
  for (size_t i = 0; i < s->n_tools; i++)
    if (strcmp(s->tools[i].name, json_string_value(name)) == 0) tool = &s->tools[i];
  if (!tool) {
    snprintf(msg, sizeof msg, "Unknown tool: %.200s", json_string_value(name));
    mcp_out_error(&s->out, r->batch, r->id, RPC_INVALID_PARAMS, msg, NULL);
    return;
  }
  json_t *args = json_object_get(r->params, "arguments");
  if (args && !json_is_object(args)) {
    mcp_out_error(&s->out, r->batch, r->id, RPC_INVALID_PARAMS,
               "tools/call: params.arguments must be an object", NULL);
    return;
  }
  json_t *meta = json_object_get(r->params, "_meta");
  json_t *token = json_object_get(meta, "progressToken");
  if (token && !json_is_string(token) && !json_is_integer(token)) {
    mcp_out_error(&s->out, r->batch, r->id, RPC_INVALID_PARAMS,
               "tools/call: _meta.progressToken must be a string or an integer", NULL);
    return;
  }
  if (mcp_calls_find(&s->calls, r->id)) {
    mcp_out_error(&s->out, r->batch, r->id, RPC_INVALID_REQUEST, "a request with this id is still running",
               NULL);
    return;
  }

  tool_call_t *c = mcp_call_new(&s->calls, r->batch, r->id, token, r->version, tool->render_text);
  if (!c) return;

  json_t *empty = args ? NULL : json_object();
  if (validate_args(tool->input_schema, args ? args : empty, msg, sizeof msg) != 0) {
    tool_call_finish_text_error(c, msg);
  } else {
    tool->invoke(tool->arg, c, args ? args : empty);
  }
  json_decref(empty);
}

static void do_cancelled(mcp_session_t *s, json_t *params) {
  json_t *rid = json_object_get(params, "requestId");
  if (!jsonrpc_id_valid(rid)) return; /* invalid cancellations are ignored (spec) */
  tool_call_t *c = mcp_calls_find(&s->calls, rid);
  if (c) {
    log_debug("request cancelled by the client");
    mcp_call_cancel(c);
  }
}

/* Decides the revision a request is read under. A request whose params._meta
 * carries the 2026-07-28 keys is handled statelessly in that era; any other
 * takes the revision initialize negotiated (the latest legacy one before it).
 * Returns 0, or -1 after answering an error. */
static int request_version(req_t *r) {
  json_t *meta = json_object_get(r->params, "_meta");
  json_t *v = json_object_get(meta, META_VERSION), *caps = json_object_get(meta, META_CAPS);
  if (!v && !caps) {
    r->version = r->s->negotiated ? r->s->negotiated : MCP_LATEST_LEGACY_VERSION;
    return 0;
  }
  if (!json_is_string(v) || !json_is_object(caps)) {
    mcp_out_error(&r->s->out, r->batch, r->id, RPC_INVALID_PARAMS,
               "_meta: " META_VERSION " must be a string and " META_CAPS " an object", NULL);
    return -1;
  }
  if (!mcp_version_modern(json_string_value(v))) {
    json_t *data = json_pack("{s:[s], s:s}", "supported", MCP_MODERN_VERSION, "requested",
                             json_string_value(v));
    if (data)
      mcp_out_error(&r->s->out, r->batch, r->id, RPC_UNSUPPORTED_PROTOCOL_VERSION, NULL, data);
    else
      mcp_out_msg(&r->s->out, r->batch, NULL, r->id);
    return -1;
  }
  r->version = MCP_MODERN_VERSION;
  return 0;
}

static void handle_request(mcp_session_t *s, batch_t *b, jsonrpc_msg_t *m) {
  req_t r = {s, b, m->id, m->params, NULL};
  log_debug("request %s", m->method);
  if (strcmp(m->method, "initialize") == 0) {
    do_initialize(&r);
    return;
  }
  if (request_version(&r) != 0) return;
  if (strcmp(m->method, "server/discover") == 0)
    do_discover(&r);
  else if (strcmp(m->method, "ping") == 0)
    do_ping(&r);
  else if (strcmp(m->method, "tools/list") == 0)
    do_tools_list(&r);
  else if (strcmp(m->method, "tools/call") == 0)
    do_tools_call(&r);
  else {
    char msg[256];
    snprintf(msg, sizeof msg, "Method not found: %.200s", m->method);
    mcp_out_error(&s->out, b, m->id, RPC_METHOD_NOT_FOUND, msg, NULL);
  }
}

static void handle_message(mcp_session_t *s, batch_t *b, json_t *msg) {
  jsonrpc_msg_t m;
  jsonrpc_classify(msg, &m);
  switch (m.kind) {
    case JSONRPC_INVALID:
      mcp_out_error(&s->out, b, m.id, m.error, m.why, NULL);
      break;
    case JSONRPC_RESPONSE:
      break; /* we never send requests, so there is nothing to match */
    case JSONRPC_NOTIFICATION:
      log_debug("notification %s", m.method);
      if (strcmp(m.method, "notifications/initialized") == 0)
        s->initialized = 1;
      else if (strcmp(m.method, "notifications/cancelled") == 0)
        do_cancelled(s, m.params);
      break; /* unknown notifications are ignored: they never get an answer */
    case JSONRPC_REQUEST:
      handle_request(s, b, &m);
      break;
  }
}

void mcp_session_handle_line(mcp_session_t *s, const char *line, size_t len) {
  char why[160];
  json_t *msg = jsonrpc_parse(line, len, why, sizeof why);
  if (!msg) {
    log_info("unparsable line: %s", why);
    char text[200];
    snprintf(text, sizeof text, "Parse error: %s", why);
    mcp_out_error(&s->out, NULL, NULL, RPC_PARSE_ERROR, text, NULL);
    return;
  }
  if (!json_is_array(msg)) {
    handle_message(s, NULL, msg);
  } else if (json_array_size(msg) == 0) {
    mcp_out_error(&s->out, NULL, NULL, RPC_INVALID_REQUEST, "an empty batch is invalid", NULL);
  } else if (!s->negotiated || strcmp(s->negotiated, "2025-03-26") != 0) {
    mcp_out_error(&s->out, NULL, NULL, RPC_INVALID_REQUEST,
               "batches are only accepted when protocol 2025-03-26 was negotiated", NULL);
  } else {
    batch_t *b = calloc(1, sizeof *b);
    if (!b) {
      mcp_out_error(&s->out, NULL, NULL, RPC_INTERNAL_ERROR, NULL, NULL);
    } else {
      b->responses = json_array();
      b->failed = !b->responses;
      b->pending = 1;
      size_t i;
      json_t *el;
      json_array_foreach(msg, i, el) handle_message(s, b, el);
      mcp_out_batch_release(&s->out, b);
    }
  }
  json_decref(msg);
}

void mcp_session_handle_oversize(mcp_session_t *s, size_t limit) {
  char text[160];
  snprintf(text, sizeof text, "Invalid Request: line longer than the limit of %zu bytes; skipped",
           limit);
  mcp_out_error(&s->out, NULL, NULL, RPC_INVALID_REQUEST, text, NULL);
}
