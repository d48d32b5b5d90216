/* dtd_pick: which app a call talks to when the Dart Tooling Daemon says
 * (DESIGN 4 dtdUri; docs/tool.md "Finding the app through the Dart Tooling
 * Daemon"). Before a call binds its app (frames_tool.c), a DTD in play
 * (--dtd-uri, or the call's dtdUri) is looked at: with exactly one app
 * listed, the call goes on as if that app's URI had been its vmServiceUri;
 * with none or several, or a daemon that cannot be used, the call is
 * answered with the no_app, app_choice or dtd_unusable diagnosis and the
 * `dtd` object listing the apps. A vmServiceUri of the call wins: status
 * still lists the DTD's apps, the other actions leave the DTD alone.
 *
 * Ownership: the DTD connection is the tool's (tool_ctx_t.dtd, created
 * here on first use, closed by frames_tool_close); the look in flight is
 * the op's (op_free cancels it). */
#ifndef TELESCOPE_DTD_PICK_H
#define TELESCOPE_DTD_PICK_H

#include "op.h"

/* 0 when no DTD is in play for op (go on at once); 1 when op continues in
 * then(op) from the loop, or was answered. */
int dtd_pick(op_t *op, void (*then)(op_t *op));

#endif
