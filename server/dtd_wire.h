/* dtd_wire: the pure parts of the Dart Tooling Daemon client (dtd.c): its
 * URI, its replies and events, and the text line an answer shows. No loop,
 * no socket: tested by feeding it data (tests/unit/test_dtd_wire.c).
 * Wire facts and their sources: docs/flutter-apis.md, "The Dart Tooling
 * Daemon". */
#ifndef TELESCOPE_DTD_WIRE_H
#define TELESCOPE_DTD_WIRE_H

#include <jansson.h>
#include <stddef.h>

#include "vm_uri.h"

#define DTD_STREAM "ConnectedApp"
#define DTD_GET_VM_SERVICES "ConnectedApp.getVmServices"

/* The DTD URI from what a user pastes: the URI itself (ws://127.0.0.1:P/SECRET,
 * wss, or http(s) turned into ws(s)), the line `flutter run --print-dtd` or
 * `dart tooling-daemon` prints, or the --machine JSON
 * ({"tooling_daemon_details":{"uri":…}}). The path is kept as printed (no
 * "/ws" added). Same statuses and loopback rule as vm_uri_parse; err is
 * token-free. */
vm_uri_status_t dtd_wire_parse_uri(const char *input, int allow_remote, vm_uri_t *out, char *err,
                                   size_t errlen);

/* 1 when a getRegisteredServices result lists ConnectedApp.getVmServices
 * among dtdServices (what dart_mcp_server checks before it relies on it). */
int dtd_wire_offers_connected_app(const json_t *result);

/* The apps of a VmServicesResponse: a new array of {"uri", "name"?,
 * "exposedUri"?} with a string uri (others are skipped). NULL when result
 * is not a VmServicesResponse. */
json_t *dtd_wire_apps(const json_t *result);

typedef enum { DTD_EV_OTHER = 0, DTD_EV_REGISTERED, DTD_EV_UNREGISTERED } dtd_event_t;
/* A streamNotify's params ({streamId, eventKind, eventData, timestamp}):
 * which ConnectedApp event, and the app it names (a new {"uri","name"?}
 * object in *app). DTD_EV_OTHER for anything else (*app NULL). */
dtd_event_t dtd_wire_event(const json_t *params, json_t **app);

/* One line (or two) for the answer's text, from the `dtd` object of an
 * answer (schema/telescope_frames.output.json): where the daemon is and the
 * apps it lists, the recent registrations. "" for NULL. The buffer is
 * static: use the text before the next call. */
const char *dtd_wire_text(const json_t *dtd);

#endif
