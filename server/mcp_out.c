#include "mcp_out.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codes.h"
#include "json_put.h"
#include "jsonrpc.h"
#include "log.h"
#include "mcp_version.h"

/* Compact text of j (the caller frees it), or NULL. Not json_dumps: jansson
 * 2.14 ignores a failed append of an object key's closing quote and goes on,
 * so one failed realloc can yield invalid JSON (found by test_alloc_fail).
 * Dumping into a buffer (json_dumpb) leaves a single allocation
 * whose failure is plain. */
char *mcp_out_dump(const json_t *j, size_t flags) {
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

/* The last resort when an answer cannot be built or serialised: an internal
 * error written without allocating, so the request is still answered (a
 * string id too long for the buffer is left out). */
void mcp_out_oom(const mcp_out_t *s, const json_t *id) {
  char idtext[160], line[320];
  size_t n = 0;
  if (id && jsonrpc_id_valid(id)) n = json_dumpb(id, idtext, sizeof idtext, JSON_ENCODE_ANY);
  if (n >= sizeof idtext) n = 0;
  idtext[n] = '\0';
  int len = snprintf(line, sizeof line,
                     "{\"jsonrpc\":\"2.0\",%s%s%s\"error\":{\"code\":%d,\"message\":\"%s\"}}",
                     n ? "\"id\":" : "", idtext, n ? "," : "", RPC_INTERNAL_ERROR, MCP_OUT_OOM_MESSAGE);
  if (len > 0 && (size_t)len < sizeof line) s->emit(s->arg, line, (size_t)len);
}

/* Sends msg (stolen; NULL is ignored). A response or batch that cannot be
 * serialised is answered with emit_oom; a notification is dropped. */
void mcp_out_json(const mcp_out_t *s, json_t *msg) {
  if (!msg) return;
  char *line = mcp_out_dump(msg, JSON_COMPACT | JSON_REAL_PRECISION(15) | JSON_ENCODE_ANY);
  if (!line) {
    log_error("could not serialise a message");
    if (!json_object_get(msg, "method")) mcp_out_oom(s, json_object_get(msg, "id"));
    json_decref(msg);
    return;
  }
  json_decref(msg);
  s->emit(s->arg, line, strlen(line));
  free(line);
}

void mcp_out_batch_release(const mcp_out_t *s, batch_t *b) {
  if (--b->pending > 0) return;
  if (s && b->failed) {
    json_decref(b->responses);
    mcp_out_oom(s, NULL);
  } else if (json_array_size(b->responses) > 0 && s) {
    mcp_out_json(s, b->responses);
  } else {
    json_decref(b->responses);
  }
  free(b);
}

/* Sends the answer msg (stolen) to request id, or keeps it for its batch;
 * msg NULL (it could not be built) answers with an internal error. */
void mcp_out_msg(const mcp_out_t *s, batch_t *b, json_t *msg, const json_t *id) {
  if (!msg && !(msg = jsonrpc_error_new(id, RPC_INTERNAL_ERROR, MCP_OUT_OOM_MESSAGE, NULL))) {
    if (b)
      b->failed = 1;
    else
      mcp_out_oom(s, id);
    return;
  }
  if (b) {
    if (json_array_append_new(b->responses, msg) != 0) b->failed = 1;
  } else {
    mcp_out_json(s, msg);
  }
}

void mcp_out_error(const mcp_out_t *s, batch_t *b, const json_t *id, int code,
                       const char *message, json_t *data) {
  mcp_out_msg(s, b, jsonrpc_error_new(id, code, message, data), id);
}

/* Adds resultType for the 2026-07-28 era, where every result carries it.
 * result is stolen; bad (or result NULL) means it lost a member: then an
 * internal error answers instead. */
void mcp_out_result(const mcp_out_t *s, batch_t *b, const json_t *id, const char *version,
                        json_t *result, int bad) {
  if (result && mcp_version_modern(version)) json_put(result, &bad, "resultType", json_string("complete"));
  if (!result || bad) {
    json_decref(result);
    mcp_out_msg(s, b, NULL, id);
    return;
  }
  mcp_out_msg(s, b, jsonrpc_result_new(id, result), id);
}
