#include "mcp.h"

#include "json_put.h"

#include <stdlib.h>
#include <string.h>

#include "codes.h"
#include "jsonrpc.h"
#include "log.h"
#include "validate.h"

#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_SERVER_INFO "io.modelcontextprotocol/serverInfo"
#define TEXT_CAP (64 * 1024)
#define LIST_TTL_MS 3600000 /* the tool list never changes while the binary runs */

static const char *legacy_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
#define N_LEGACY (sizeof legacy_versions / sizeof *legacy_versions)

/* Responses of one JSON-RPC batch, sent as one array once every request in it
 * is answered (tool calls may finish later). */
typedef struct {
  json_t *responses;
  int pending; /* calls still running + 1 while the batch is being read */
  int failed;  /* a response could not be kept: the batch answers out of memory */
} batch_t;

struct tool_call {
  mcp_session_t *s;       /* NULL once cancelled: the call is detached */
  json_t *id;             /* request id, owned */
  json_t *progress_token; /* owned, NULL without one */
  double last_progress;
  int sent_progress;
  const char *version; /* static string: the revision of the request */
  batch_t *batch;      /* NULL outside a batch */
  void (*cancel_cb)(void *arg);
  void *cancel_arg;
  /* The tool's text renderer (a static function, so a detached call may keep
   * it); NULL: the text block is the compact JSON. */
  char *(*render_text)(const json_t *structured, int is_error);
  int cancelled;
  int in_hook;
  tool_call_t *prev, *next; /* the session's in-flight list */
};

struct mcp_session {
  mcp_emit_cb emit;
  void *emit_arg;
  mcp_tool_t tools[MCP_MAX_TOOLS];
  size_t n_tools;
  const char *negotiated; /* static string, NULL before initialize */
  int initialized;        /* notifications/initialized seen */
  char *instructions;
  tool_call_t *inflight;
  size_t n_inflight;
};

/* ---- versions ---------------------------------------------------------- */

int mcp_version_supported(const char *v) {
  if (!v) return 0;
  for (size_t i = 0; i < N_LEGACY; i++)
    if (strcmp(v, legacy_versions[i]) == 0) return 1;
  return strcmp(v, MCP_MODERN_VERSION) == 0;
}

int mcp_version_at_least(const char *v, const char *since) {
  return v && strcmp(v, since) >= 0;
}

static const char *legacy_match(const char *v) {
  for (size_t i = 0; i < N_LEGACY; i++)
    if (v && strcmp(v, legacy_versions[i]) == 0) return legacy_versions[i];
  return NULL;
}

static int is_modern(const char *v) {
  return strcmp(v, MCP_MODERN_VERSION) == 0;
}

/* ---- output ------------------------------------------------------------ */

/* Compact text of j (the caller frees it), or NULL. Not json_dumps: jansson
 * 2.14 ignores a failed append of an object key's closing quote and goes on,
 * so one failed realloc can yield invalid JSON (found by test_alloc_fail).
 * Dumping into a buffer (json_dumpb) leaves a single allocation
 * whose failure is plain. */
static char *dump_compact(const json_t *j, size_t flags) {
  /* Most messages fit the scratch buffer: one pass. Only larger ones are
   * dumped a second time, into their exact size. (One thread: static is
   * safe, and keeps 64 KiB off the stack.) */
  static char scratch[65536];
  size_t n = json_dumpb(j, scratch, sizeof scratch, flags);
  if (n == 0) return NULL;
  char *text = malloc(n + 1);
  if (!text) return NULL;
  if (n <= sizeof scratch) {
    memcpy(text, scratch, n);
  } else if (json_dumpb(j, text, n, flags) != n) {
    free(text);
    return NULL;
  }
  text[n] = '\0';
  return text;
}

#define OOM_MESSAGE "Internal error: out of memory"

static void push(json_t *a, int *bad, json_t *value) {
  if (json_array_append_new(a, value) != 0) *bad = 1;
}

/* The last resort when an answer cannot be built or serialised: an internal
 * error written without allocating, so the request is still answered (a
 * string id too long for the buffer is left out). */
static void emit_oom(mcp_session_t *s, const json_t *id) {
  char idtext[160], line[320];
  size_t n = 0;
  if (id && jsonrpc_id_valid(id)) n = json_dumpb(id, idtext, sizeof idtext, JSON_ENCODE_ANY);
  if (n >= sizeof idtext) n = 0;
  idtext[n] = '\0';
  int len = snprintf(line, sizeof line,
                     "{\"jsonrpc\":\"2.0\",%s%s%s\"error\":{\"code\":%d,\"message\":\"%s\"}}",
                     n ? "\"id\":" : "", idtext, n ? "," : "", RPC_INTERNAL_ERROR, OOM_MESSAGE);
  if (len > 0 && (size_t)len < sizeof line) s->emit(s->emit_arg, line, (size_t)len);
}

/* Sends msg (stolen; NULL is ignored). A response or batch that cannot be
 * serialised is answered with emit_oom; a notification is dropped. */
static void emit_json(mcp_session_t *s, json_t *msg) {
  if (!msg) return;
  char *line = dump_compact(msg, JSON_COMPACT | JSON_REAL_PRECISION(15) | JSON_ENCODE_ANY);
  if (!line) {
    log_error("could not serialise a message");
    if (!json_object_get(msg, "method")) emit_oom(s, json_object_get(msg, "id"));
    json_decref(msg);
    return;
  }
  json_decref(msg);
  s->emit(s->emit_arg, line, strlen(line));
  free(line);
}

static void batch_release(mcp_session_t *s, batch_t *b) {
  if (--b->pending > 0) return;
  if (s && b->failed) {
    json_decref(b->responses);
    emit_oom(s, NULL);
  } else if (json_array_size(b->responses) > 0 && s) {
    emit_json(s, b->responses);
  } else {
    json_decref(b->responses);
  }
  free(b);
}

/* Sends the answer msg (stolen) to request id, or keeps it for its batch;
 * msg NULL (it could not be built) answers with an internal error. */
static void send_msg(mcp_session_t *s, batch_t *b, json_t *msg, const json_t *id) {
  if (!msg && !(msg = jsonrpc_error_new(id, RPC_INTERNAL_ERROR, OOM_MESSAGE, NULL))) {
    if (b)
      b->failed = 1;
    else
      emit_oom(s, id);
    return;
  }
  if (b) {
    if (json_array_append_new(b->responses, msg) != 0) b->failed = 1;
  } else {
    emit_json(s, msg);
  }
}

static void send_error(mcp_session_t *s, batch_t *b, const json_t *id, int code,
                       const char *message, json_t *data) {
  send_msg(s, b, jsonrpc_error_new(id, code, message, data), id);
}

/* Adds resultType for the 2026-07-28 era, where every result carries it.
 * result is stolen; bad (or result NULL) means it lost a member: then an
 * internal error answers instead. */
static void send_result(mcp_session_t *s, batch_t *b, const json_t *id, const char *version,
                        json_t *result, int bad) {
  if (result && is_modern(version)) json_put(result, &bad, "resultType", json_string("complete"));
  if (!result || bad) {
    json_decref(result);
    send_msg(s, b, NULL, id);
    return;
  }
  send_msg(s, b, jsonrpc_result_new(id, result), id);
}

/* ---- session ----------------------------------------------------------- */

mcp_session_t *mcp_session_new(mcp_emit_cb emit, void *emit_arg) {
  mcp_session_t *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->emit = emit;
  s->emit_arg = emit_arg;
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
  return s->n_inflight;
}
const char *mcp_session_protocol_version(const mcp_session_t *s) {
  return s->negotiated;
}

/* ---- tool calls -------------------------------------------------------- */

static void call_unlink(tool_call_t *c) {
  mcp_session_t *s = c->s;
  if (!s) return;
  if (c->prev)
    c->prev->next = c->next;
  else
    s->inflight = c->next;
  if (c->next) c->next->prev = c->prev;
  c->prev = c->next = NULL;
  s->n_inflight--;
}

static void call_free(tool_call_t *c) {
  json_decref(c->id);
  json_decref(c->progress_token);
  free(c);
}

/* Runs the cancel path: detach, release the batch slot, run the hook. */
static void call_cancel(tool_call_t *c) {
  mcp_session_t *s = c->s;
  call_unlink(c);
  c->s = NULL;
  c->cancelled = 1;
  if (c->batch) batch_release(s, c->batch), c->batch = NULL;
  if (c->cancel_cb) {
    c->in_hook = 1;
    c->cancel_cb(c->cancel_arg);
    call_free(c);
  }
}

void mcp_session_cancel_all(mcp_session_t *s) {
  while (s->inflight) call_cancel(s->inflight);
}

void tool_call_on_cancel(tool_call_t *c, void (*cb)(void *arg), void *arg) {
  c->cancel_cb = cb;
  c->cancel_arg = arg;
}

const char *tool_call_protocol_version(const tool_call_t *c) {
  return c->version;
}
int tool_call_cancelled(const tool_call_t *c) {
  return c->cancelled;
}

void tool_call_progress(tool_call_t *c, double progress, double total, const char *message) {
  if (!c->progress_token || c->cancelled) return;
  if (c->sent_progress && progress <= c->last_progress) return;
  c->sent_progress = 1;
  c->last_progress = progress;
  int bad = 0;
  json_t *p = json_object();
  json_put(p, &bad, "progressToken", json_deep_copy(c->progress_token));
  json_put(p, &bad, "progress", json_real(progress));
  if (total > 0) json_put(p, &bad, "total", json_real(total));
  /* `message` arrived with 2025-03-26. */
  if (message && mcp_version_at_least(c->version, "2025-03-26"))
    json_put(p, &bad, "message", json_string(message));
  if (bad) { /* a notification that lost a member is not sent */
    json_decref(p);
    return;
  }
  /* Progress goes out at once even inside a batch: it is a notification. */
  emit_json(c->s, jsonrpc_notification_new("notifications/progress", p));
}

/* Cuts text to at most TEXT_CAP bytes on a UTF-8 boundary, marking the cut. */
/* 1 when s is UTF-8 jansson accepts (no overlong forms, surrogates or code
 * points above U+10FFFF), so a failed json_string can be told apart: bad
 * text, or out of memory. */
static int utf8_valid(const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    unsigned c = *p++, n, cp;
    if (c < 0x80) continue;
    if (c >= 0xC2 && c <= 0xDF)
      n = 1, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
      n = 2, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
      n = 3, cp = c & 0x07;
    else
      return 0;
    for (unsigned k = 0; k < n; k++, p++) {
      if ((*p & 0xC0) != 0x80) return 0;
      cp = (cp << 6) | (*p & 0x3F);
    }
    if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return 0;
  }
  return 1;
}

/* One text block; NULL when it could not be built. Text over TEXT_CAP bytes
 * is cut on a UTF-8 boundary, the cut marked. */
static json_t *text_block(const char *text) {
  static const char mark[] = "\xe2\x80\xa6 (truncated)";
  size_t len = strlen(text);
  int bad = 0;
  json_t *b = json_object();
  json_put(b, &bad, "type", json_string("text"));
  if (len <= TEXT_CAP) {
    json_t *t = json_string(text);
    /* Never send a block without text: invalid UTF-8 would be our bug. */
    if (!t && !utf8_valid(text)) t = json_string("(text was not valid UTF-8)");
    json_put(b, &bad, "text", t);
  } else {
    size_t keep = TEXT_CAP - sizeof mark + 1;
    while (keep > 0 && ((unsigned char)text[keep] & 0xC0) == 0x80) keep--;
    char *cut = malloc(keep + sizeof mark);
    if (cut) {
      memcpy(cut, text, keep);
      memcpy(cut + keep, mark, sizeof mark);
    }
    json_put(b, &bad, "text", cut ? json_string(cut) : NULL);
    free(cut);
  }
  if (bad) {
    json_decref(b);
    return NULL;
  }
  return b;
}

static void call_answer(tool_call_t *c, json_t *result, int bad) {
  mcp_session_t *s = c->s;
  batch_t *b = c->batch;
  call_unlink(c);
  send_result(s, b, c->id, c->version, result, bad);
  if (b) batch_release(s, b);
  call_free(c);
}

void tool_call_finish(tool_call_t *c, json_t *structured, int is_error, json_t *extra_content) {
  if (c->cancelled) {
    json_decref(structured);
    json_decref(extra_content);
    if (!c->in_hook) call_free(c);
    return;
  }
  int bad = 0;
  json_t *content = json_array();
  /* structuredContent arrived with 2025-06-18; earlier clients get the data
   * only as JSON text, so the renderer is for clients that have both. */
  int with_structured =
      structured && json_is_object(structured) && mcp_version_at_least(c->version, "2025-06-18");
  if (structured) {
    char *text = NULL;
    if (with_structured && c->render_text) text = c->render_text(structured, is_error);
    if (!text) text = dump_compact(structured, JSON_COMPACT | JSON_REAL_PRECISION(15));
    push(content, &bad, text ? text_block(text) : NULL);
    free(text);
  }
  if (json_is_array(extra_content) && json_array_extend(content, extra_content) != 0) bad = 1;
  json_decref(extra_content);
  json_t *result = json_object();
  json_put(result, &bad, "content", content);
  if (with_structured)
    json_put(result, &bad, "structuredContent", structured);
  else
    json_decref(structured);
  if (is_error) json_put(result, &bad, "isError", json_true());
  call_answer(c, result, bad);
}

void tool_call_finish_text_error(tool_call_t *c, const char *text) {
  if (c->cancelled) {
    if (!c->in_hook) call_free(c);
    return;
  }
  int bad = 0;
  json_t *content = json_array();
  push(content, &bad, text_block(text));
  json_t *result = json_object();
  json_put(result, &bad, "content", content);
  json_put(result, &bad, "isError", json_true());
  call_answer(c, result, bad);
}

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
    send_error(r->s, r->batch, r->id, RPC_INVALID_PARAMS,
               "initialize: params.protocolVersion must be a string", NULL);
    return;
  }
  const char *v = legacy_match(json_string_value(pv));
  r->s->negotiated = v ? v : MCP_LATEST_LEGACY_VERSION;
  int bad = 0;
  json_t *res = json_object();
  json_put(res, &bad, "protocolVersion", json_string(r->s->negotiated));
  json_put(res, &bad, "capabilities", json_pack("{s:{s:b}}", "tools", "listChanged", 0));
  json_put(res, &bad, "serverInfo", server_info());
  if (r->s->instructions) json_put(res, &bad, "instructions", json_string(r->s->instructions));
  send_result(r->s, r->batch, r->id, r->s->negotiated, res, bad);
}

static void do_discover(req_t *r) {
  int bad = 0;
  json_t *versions = json_array();
  push(versions, &bad, json_string(MCP_MODERN_VERSION));
  for (size_t i = 0; i < N_LEGACY; i++) push(versions, &bad, json_string(legacy_versions[i]));
  json_t *res = json_object();
  json_put(res, &bad, "supportedVersions", versions);
  json_put(res, &bad, "capabilities", json_pack("{s:{}}", "tools"));
  json_put(res, &bad, "_meta", json_pack("{s:o}", META_SERVER_INFO, server_info()));
  if (r->s->instructions) json_put(res, &bad, "instructions", json_string(r->s->instructions));
  json_put(res, &bad, "ttlMs", json_integer(LIST_TTL_MS));
  json_put(res, &bad, "cacheScope", json_string("public"));
  /* server/discover is a 2026-07-28 method: its result always has resultType. */
  send_result(r->s, r->batch, r->id, MCP_MODERN_VERSION, res, bad);
}

static void do_ping(req_t *r) {
  send_result(r->s, r->batch, r->id, r->version, json_object(), 0);
}

static void do_tools_list(req_t *r) {
  json_t *cursor = json_object_get(r->params, "cursor");
  if (cursor) {
    /* We never hand out a cursor: one page holds every tool. */
    send_error(r->s, r->batch, r->id, RPC_INVALID_PARAMS, "tools/list: unknown cursor", NULL);
    return;
  }
  int bad = 0;
  json_t *tools = json_array();
  for (size_t i = 0; i < r->s->n_tools; i++)
    push(tools, &bad, r->s->tools[i].definition(r->version));
  json_t *res = json_object();
  json_put(res, &bad, "tools", tools);
  if (is_modern(r->version)) {
    json_put(res, &bad, "ttlMs", json_integer(LIST_TTL_MS));
    json_put(res, &bad, "cacheScope", json_string("public"));
  }
  send_result(r->s, r->batch, r->id, r->version, res, bad);
}

static tool_call_t *find_inflight(mcp_session_t *s, const json_t *id) {
  for (tool_call_t *c = s->inflight; c; c = c->next)
    if (json_equal(c->id, (json_t *)id)) return c;
  return NULL;
}

static void do_tools_call(req_t *r) {
  mcp_session_t *s = r->s;
  char msg[512];
  if (!json_is_object(r->params)) {
    send_error(s, r->batch, r->id, RPC_INVALID_PARAMS, "tools/call: params must be an object",
               NULL);
    return;
  }
  json_t *name = json_object_get(r->params, "name");
  if (!json_is_string(name)) {
    send_error(s, r->batch, r->id, RPC_INVALID_PARAMS, "tools/call: params.name must be a string",
               NULL);
    return;
  }
  const mcp_tool_t *tool = NULL;
  for (size_t i = 0; i < s->n_tools; i++)
    if (strcmp(s->tools[i].name, json_string_value(name)) == 0) tool = &s->tools[i];
  if (!tool) {
    snprintf(msg, sizeof msg, "Unknown tool: %.200s", json_string_value(name));
    send_error(s, r->batch, r->id, RPC_INVALID_PARAMS, msg, NULL);
    return;
  }
  json_t *args = json_object_get(r->params, "arguments");
  if (args && !json_is_object(args)) {
    send_error(s, r->batch, r->id, RPC_INVALID_PARAMS,
               "tools/call: params.arguments must be an object", NULL);
    return;
  }
  json_t *meta = json_object_get(r->params, "_meta");
  json_t *token = json_object_get(meta, "progressToken");
  if (token && !json_is_string(token) && !json_is_integer(token)) {
    send_error(s, r->batch, r->id, RPC_INVALID_PARAMS,
               "tools/call: _meta.progressToken must be a string or an integer", NULL);
    return;
  }
  if (find_inflight(s, r->id)) {
    send_error(s, r->batch, r->id, RPC_INVALID_REQUEST, "a request with this id is still running",
               NULL);
    return;
  }

  tool_call_t *c = calloc(1, sizeof *c);
  if (!c) {
    send_error(s, r->batch, r->id, RPC_INTERNAL_ERROR, NULL, NULL);
    return;
  }
  c->id = json_deep_copy(r->id);
  c->progress_token = token ? json_deep_copy(token) : NULL;
  if (!c->id || (token && !c->progress_token)) {
    call_free(c);
    send_error(s, r->batch, r->id, RPC_INTERNAL_ERROR, OOM_MESSAGE, NULL);
    return;
  }
  c->s = s;
  c->version = r->version;
  c->render_text = tool->render_text;
  c->batch = r->batch;
  if (c->batch) c->batch->pending++;
  c->next = s->inflight;
  if (s->inflight) s->inflight->prev = c;
  s->inflight = c;
  s->n_inflight++;

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
  tool_call_t *c = find_inflight(s, rid);
  if (c) {
    log_debug("request cancelled by the client");
    call_cancel(c);
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
    send_error(r->s, r->batch, r->id, RPC_INVALID_PARAMS,
               "_meta: " META_VERSION " must be a string and " META_CAPS " an object", NULL);
    return -1;
  }
  if (!is_modern(json_string_value(v))) {
    json_t *data = json_pack("{s:[s], s:s}", "supported", MCP_MODERN_VERSION, "requested",
                             json_string_value(v));
    if (data)
      send_error(r->s, r->batch, r->id, RPC_UNSUPPORTED_PROTOCOL_VERSION, NULL, data);
    else
      send_msg(r->s, r->batch, NULL, r->id);
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
    send_error(s, b, m->id, RPC_METHOD_NOT_FOUND, msg, NULL);
  }
}

static void handle_message(mcp_session_t *s, batch_t *b, json_t *msg) {
  jsonrpc_msg_t m;
  jsonrpc_classify(msg, &m);
  switch (m.kind) {
    case JSONRPC_INVALID:
      send_error(s, b, m.id, m.error, m.why, NULL);
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
    send_error(s, NULL, NULL, RPC_PARSE_ERROR, text, NULL);
    return;
  }
  if (!json_is_array(msg)) {
    handle_message(s, NULL, msg);
  } else if (json_array_size(msg) == 0) {
    send_error(s, NULL, NULL, RPC_INVALID_REQUEST, "an empty batch is invalid", NULL);
  } else if (!s->negotiated || strcmp(s->negotiated, "2025-03-26") != 0) {
    send_error(s, NULL, NULL, RPC_INVALID_REQUEST,
               "batches are only accepted when protocol 2025-03-26 was negotiated", NULL);
  } else {
    batch_t *b = calloc(1, sizeof *b);
    if (!b) {
      send_error(s, NULL, NULL, RPC_INTERNAL_ERROR, NULL, NULL);
    } else {
      b->responses = json_array();
      b->failed = !b->responses;
      b->pending = 1;
      size_t i;
      json_t *el;
      json_array_foreach(msg, i, el) handle_message(s, b, el);
      batch_release(s, b);
    }
  }
  json_decref(msg);
}

void mcp_session_handle_oversize(mcp_session_t *s, size_t limit) {
  char text[160];
  snprintf(text, sizeof text, "Invalid Request: line longer than the limit of %zu bytes; skipped",
           limit);
  send_error(s, NULL, NULL, RPC_INVALID_REQUEST, text, NULL);
}
