/* What an agent reads about telescope_frames before its first call: the
 * tool's description (tools/list) and the server's instructions (initialize,
 * server/discover). Both say the same things: names need tracking, capture
 * blocks, telescope does not drive the app, profile builds give real timings,
 * a session's budget is fixed at start. Kept short: name + description +
 * input schema must stay under 900 tokens (measured as bytes / 4 by
 * tests/unit/test_answer_text.c). */
#ifndef TELESCOPE_FRAMES_TOOL_DOC_H
#define TELESCOPE_FRAMES_TOOL_DOC_H

extern const char frames_tool_description[];
extern const char frames_tool_instructions[];

#endif
