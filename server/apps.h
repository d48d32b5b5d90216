/* apps: the apps the server knows (docs/tool.md "Several apps") and the
 * choice of the one a call talks to. Each app (appref_t, op.h) has its own
 * connection, sessions, cursors and facts; frames_tool.c owns the list (in
 * tool_ctx_t) and closes it; a call borrows its app while it runs (op_bind),
 * and an app is only ever pointed at another URI once it is gone, idle and
 * unborrowed, when the list is full — never the app given at launch. Every
 * callback comes from the loop. */
#ifndef TELESCOPE_APPS_H
#define TELESCOPE_APPS_H

#include "op.h"

/* A new app at uri (NULL: the command line's URI file), named name ("" for
 * none), appended to the list. NULL with *code and err set when the URI is
 * refused, the list is full of apps in use, or out of memory. */
appref_t *apps_add(tool_ctx_t *ctx, const char *uri, const char *name, diag_code_t *code,
                   char *err, size_t errlen);
/* The app labelled so ("phone", "app 2"), or at this normalised ws URI. */
appref_t *apps_find(const tool_ctx_t *ctx, const char *label_or_ws);
/* The one app connected or measuring (NULL: none, or several). */
appref_t *apps_only_active(const tool_ctx_t *ctx);
/* The app holding session id (open or in its history), or NULL. */
appref_t *apps_of_session(const tool_ctx_t *ctx, const char *id);

/* Binds the call to its app: `app` (a label, or a VM-service URI),
 * `vmServiceUri`, the session a read's cursor or `session` names, or, with
 * none of them, the one app that is connected or has a session open —
 * never a guess among several (app_choice, listing them). 0, or -1 when the
 * call was answered. */
int apps_bind(op_t *op);

/* Frees an app's parts; its vm_app closes and calls done(arg) then. */
void apps_close_one(appref_t *ar, void (*done)(void *arg), void *arg);

#endif
