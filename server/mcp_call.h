/* mcp_call: the tool calls in flight (tool.h is the tools' side): each
 * answers its request once, through mcp_out, or is cancelled (the client's
 * notifications/cancelled, or shutdown) and then answers nothing; progress
 * notifications go out at once, even inside a batch.
 *
 * Ownership: the list owns its calls until they finish; a cancelled call
 * with a cancel hook is freed after the hook, one without stays the tool's
 * until it finishes (tool.h). A call holds a pending count of its batch. */
#ifndef TELESCOPE_MCP_CALL_H
#define TELESCOPE_MCP_CALL_H

#include <jansson.h>
#include <stddef.h>

#include "mcp_out.h"
#include "tool.h"

typedef struct {
  tool_call_t *head; /* in flight, newest first */
  size_t n;
  const mcp_out_t *out; /* the session's emitter */
} mcp_calls_t;

/* A call of request id (copied) in batch b (NULL outside one), with its
 * progress token (copied, may be NULL), read under version (static); NULL
 * when out of memory, after answering the request with an internal error. */
tool_call_t *mcp_call_new(mcp_calls_t *s, batch_t *b, const json_t *id, const json_t *token,
                          const char *version, char *(*render_text)(const json_t *, int));
/* The call in flight for request id, or NULL. */
tool_call_t *mcp_calls_find(const mcp_calls_t *s, const json_t *id);
/* Detaches c (it answers nothing), releases its batch slot, runs its hook. */
void mcp_call_cancel(tool_call_t *c);
void mcp_calls_cancel_all(mcp_calls_t *s);

#endif
