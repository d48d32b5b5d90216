/* The MCP protocol core (pure: lines in, lines out, no loop).
 *
 * Handles both eras: the legacy handshake (initialize, protocolVersion
 * negotiation) and the stateless 2026-07-28 era (server/discover, per-request
 * _meta). Dispatches ping, tools/list, tools/call, notifications/cancelled;
 * validates tool arguments against the tool's input schema before the tool
 * sees them; runs tool calls through tool.h so they may finish later
 * (mcp_call.h). Every outgoing message goes out through the emit callback as
 * one compact JSON line (without the "\n"; mcp_out.h); the revisions are in
 * mcp_version.h. */
#ifndef TELESCOPE_MCP_H
#define TELESCOPE_MCP_H

#include <jansson.h>
#include <stddef.h>

#include "mcp_out.h"
#include "mcp_version.h"
#include "tool.h"

typedef struct mcp_session mcp_session_t;


typedef struct {
  const char *name;
  /* The tools/list entry for a protocol revision (new reference). */
  json_t *(*definition)(const char *protocol_version);
  const json_t *input_schema; /* borrowed, outlives the session: arguments are checked against it */
  /* Starts a call; args borrowed, already validated, valid only during the call. */
  void (*invoke)(void *arg, tool_call_t *call, json_t *args);
  void *arg;
  /* Optional: the first text block written for a reader (malloc'd, NUL-
   * terminated UTF-8, capped at 64 KB like any text block) from the result
   * the tool finished with (borrowed). Used only where structuredContent goes
   * out too (2025-06-18 on); NULL, or a NULL return, keeps the compact JSON. */
  char *(*render_text)(const json_t *structured, int is_error);
} mcp_tool_t;


mcp_session_t *mcp_session_new(mcp_emit_cb emit, void *emit_arg);
/* Cancels what is in flight (hooks run), then frees. */
void mcp_session_free(mcp_session_t *s);
/* Adds a tool (copied; at most MCP_MAX_TOOLS). Returns 0 or -1. */
#define MCP_MAX_TOOLS 4
int mcp_session_add_tool(mcp_session_t *s, const mcp_tool_t *tool);
/* Instructions for agents in initialize and server/discover results
 * (copied). 0, or -1 when out of memory (then there are none). */
int mcp_session_set_instructions(mcp_session_t *s, const char *text);

/* One framed line (without "\n"), any bytes. */
void mcp_session_handle_line(mcp_session_t *s, const char *line, size_t len);
/* A line over the transport's limit (limit bytes): answered with -32600, no id. */
void mcp_session_handle_oversize(mcp_session_t *s, size_t limit);
/* Cancels every call in flight, sending nothing for them (shutdown). */
void mcp_session_cancel_all(mcp_session_t *s);
size_t mcp_session_inflight(const mcp_session_t *s);
/* The revision initialize negotiated, or NULL before initialize. */
const char *mcp_session_protocol_version(const mcp_session_t *s);

#endif
