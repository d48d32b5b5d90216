/* mcp_out: how the MCP core's messages leave: one compact JSON line each
 * through the emit callback, the answers of a JSON-RPC batch held until the
 * batch is complete, and an internal error written without allocating when
 * an answer cannot be built. Pure (no loop).
 *
 * Ownership: every json_t * message or result passed in is stolen (also on
 * failure); a batch_t is freed by the mcp_out_batch_release that drops its
 * last pending count. The emitter (mcp_out_t) is the session's. */
#ifndef TELESCOPE_MCP_OUT_H
#define TELESCOPE_MCP_OUT_H

#include <jansson.h>
#include <stddef.h>

#define MCP_OUT_OOM_MESSAGE "Internal error: out of memory"

/* One compact JSON message; line is NUL-terminated, without "\n". */
typedef void (*mcp_emit_cb)(void *arg, const char *line, size_t len);

typedef struct {
  mcp_emit_cb emit;
  void *arg;
} mcp_out_t;

/* Responses of one JSON-RPC batch, sent as one array once every request in it
 * is answered (tool calls may finish later). */
typedef struct {
  json_t *responses;
  int pending; /* calls still running + 1 while the batch is being read */
  int failed;  /* a response could not be kept: the batch answers out of memory */
} batch_t;

/* Compact text of j (the caller frees it), or NULL. */
char *mcp_out_dump(const json_t *j, size_t flags);
/* An internal error for request id, written without allocating. */
void mcp_out_oom(const mcp_out_t *s, const json_t *id);
/* Sends msg (stolen; NULL is ignored). */
void mcp_out_json(const mcp_out_t *s, json_t *msg);
/* Drops one pending count of b; the last sends its answers (s NULL: drops them). */
void mcp_out_batch_release(const mcp_out_t *s, batch_t *b);
/* The answer msg to request id, now or into b (msg NULL: an internal error). */
void mcp_out_msg(const mcp_out_t *s, batch_t *b, json_t *msg, const json_t *id);
void mcp_out_error(const mcp_out_t *s, batch_t *b, const json_t *id, int code,
                   const char *message, json_t *data);
/* A result (stolen) for a request read under version; bad: it lost a member. */
void mcp_out_result(const mcp_out_t *s, batch_t *b, const json_t *id, const char *version,
                    json_t *result, int bad);

#endif
