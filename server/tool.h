/* The contract between the MCP layer and a tool implementation.
 *
 * mcp hands a validated call to the tool and gets the answer later: the tool
 * may finish inside invoke or from any later loop callback. Exactly one of
 * these ends a call: tool_call_finish*, or the cancel hook (client sent
 * notifications/cancelled, or the server is shutting down). */
#ifndef TELESCOPE_TOOL_H
#define TELESCOPE_TOOL_H

#include <jansson.h>

typedef struct tool_call tool_call_t; /* owned by mcp; valid until finished or cancelled */

/* Sends notifications/progress when the request carried _meta.progressToken;
 * otherwise a no-op. Drops a progress value not above the previous one (the
 * spec wants it increasing). total <= 0 is omitted, message may be NULL. */
void tool_call_progress(tool_call_t *c, double progress, double total, const char *message);

/* Answers the call and frees it. structured (stolen, may be NULL) becomes
 * structuredContent (from 2025-06-18 on) and the first text block, capped at
 * 64 KB: the tool's render_text of it when the tool has one and
 * structuredContent goes out, else its compact JSON; extra_content (stolen
 * array, may be NULL) is appended after it. On a cancelled call it only
 * frees. */
void tool_call_finish(tool_call_t *c, json_t *structured, int is_error, json_t *extra_content);

/* Answers with isError and one text block, no structuredContent. */
void tool_call_finish_text_error(tool_call_t *c, const char *text);

/* Registers the hook run at most once if the call is cancelled. If a hook is
 * registered, mcp frees the call right after the hook returns: the tool must
 * forget the pointer there (finishing inside the hook is a harmless no-op).
 * Without a hook, a cancelled call stays alive, silent, until the tool
 * finishes it. */
void tool_call_on_cancel(tool_call_t *c, void (*cb)(void *arg), void *arg);

/* The protocol revision the call was made under (e.g. "2025-11-25",
 * "2026-07-28"), to leave out fields later revisions added. */
const char *tool_call_protocol_version(const tool_call_t *c);

/* 1 when the call was cancelled (a tool without a hook may poll this). */
int tool_call_cancelled(const tool_call_t *c);

#endif
