/* answer_text: the text block an agent reads, rendered from the structured
 * result of telescope_frames (schema/telescope_frames.output.json).
 *
 * The structured result stays complete for clients that read it; this text
 * is the short answer: the verdict first (frames, jank, what bound it), then
 * the findings, then the worst frames merged by cause, then one line each for
 * what else needs acting on (diagnosis, warnings, cursor, truncation, chart).
 * Numbers are ms with one decimal. Pure: JSON in, text out. */
#ifndef TELESCOPE_ANSWER_TEXT_H
#define TELESCOPE_ANSWER_TEXT_H

#include <jansson.h>

#define ANSWER_TEXT_WORST_LINES 3 /* worst-frame lines, after merging by cause */
#define ANSWER_TEXT_HINTS 3       /* findings that get their hint line */

/* The text for `result` (borrowed; any object, fields it lacks are left out),
 * malloc'd and NUL-terminated; NULL on OOM. is_error prefixes the verdict
 * line with "error: ". Matches mcp_tool_t.render_text. */
char *answer_text_render(const json_t *result, int is_error);

#endif
