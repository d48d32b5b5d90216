/* dtd: the Dart Tooling Daemon as telescope uses it, to find the app to
 * measure. One daemon at a time (--dtd-uri, or the dtdUri argument; a
 * different URI drops the connection), reached through a vm_client (the
 * shared lws context, the loopback rule, the timeouts). A look connects when
 * needed, checks once per connection that the far end is a DTD offering
 * ConnectedApp (getVM must fail: a VM service answers it;
 * getRegisteredServices must list ConnectedApp.getVmServices), subscribes
 * to the ConnectedApp stream, and lists the apps (getVmServices); between
 * looks the stream's VmServiceRegistered / VmServiceUnregistered events keep
 * the list current and are remembered as changes.
 *
 * Ownership: the caller owns the dtd_t (dtd_new / dtd_close); a look's cb
 * runs once from the loop unless cancelled; JSON returned is new. */
#ifndef TELESCOPE_DTD_H
#define TELESCOPE_DTD_H

#include <jansson.h>
#include <stddef.h>
#include <uv.h>

#include "codes.h"

#define DTD_MAX_CHANGES 8 /* registrations and unregistrations remembered */

typedef struct dtd dtd_t;
typedef struct dtd_look dtd_look_t;

/* diag DIAG_NONE: the app list is current. Else DIAG_DTD_UNUSABLE with
 * detail (token-free) saying why: unreachable, refused, a VM service, no
 * ConnectedApp service. */
typedef void (*dtd_look_cb)(void *arg, diag_code_t diag, const char *detail);

dtd_t *dtd_new(uv_loop_t *loop, int call_timeout_ms, int allow_remote);
/* Takes the daemon's URI (any form dtd_wire_parse_uri accepts). 0, or
 * DIAG_DTD_UNUSABLE with err set (malformed, or not loopback without
 * --allow-remote): then nothing changes. */
int dtd_set_uri(dtd_t *d, const char *input, char *err, size_t errlen);
/* 1 once a URI was set. */
int dtd_has_uri(const dtd_t *d);

/* Connects and checks as needed, then lists the apps. NULL only when out of
 * memory (cb not called). */
dtd_look_t *dtd_look(dtd_t *d, dtd_look_cb cb, void *arg);
void dtd_look_cancel(dtd_look_t *l);

/* The apps the daemon lists: [{"uri", "name"?, "exposedUri"?}] (borrowed,
 * valid until the next event or look). */
const json_t *dtd_apps(const dtd_t *d);
/* The full URI of the listed app an answer showed as shown (its redacted
 * vmServiceUri), or NULL: an agent can pick an app without ever seeing its
 * token. Borrowed, like dtd_apps. */
const char *dtd_find_app(const dtd_t *d, const char *shown);
/* The `dtd` object of an answer (tokens redacted): uri, state, apps (name,
 * vmServiceUri, inUse when it is in_use, a normalised ws URI or NULL),
 * changes. New reference. */
json_t *dtd_to_json(const dtd_t *d, const char *in_use);

/* Cancels the looks silently, closes the connection; done (may be NULL)
 * runs once d is freed. */
void dtd_close(dtd_t *d, void (*done)(void *arg), void *arg);

#endif
