/* The tool telescope_frames: its definition (built from the embedded schemas,
 * one source of truth) and its actions, on the apps the server knows
 * (apps.h): frames_tool_invoke binds each call to its app and runs it. */
#ifndef TELESCOPE_FRAMES_TOOL_H
#define TELESCOPE_FRAMES_TOOL_H

#include <jansson.h>
#include <uv.h>

#include "config.h"
#include "mcp.h"
#include "tool.h"

#define FRAMES_TOOL_NAME "telescope_frames"

typedef struct frames_tool frames_tool_t;

frames_tool_t *frames_tool_new(uv_loop_t *loop, const config_t *cfg);
/* Starts one call; args borrowed, already validated against the input schema. */
void frames_tool_invoke(frames_tool_t *t, tool_call_t *call, json_t *args);
/* Closes the app connection, then calls done (from the loop or at once) and
 * frees t. */
void frames_tool_close(frames_tool_t *t, void (*done)(void *arg), void *arg);
/* The mcp_tool_t that registers this tool with a session. */
mcp_tool_t frames_tool_mcp(frames_tool_t *t);

/* The tools/list entry for a protocol revision (new reference): later-revision
 * fields (title, outputSchema, annotations) left out for earlier ones. */
json_t *frames_tool_definition(const char *protocol_version);
/* The input schema parsed from the embedded text (new reference). */
json_t *frames_tool_input_schema_new(void);
/* The instructions an agent reads in initialize / server/discover. */
extern const char frames_tool_instructions[];

#endif
