/* vm_handover: where the VM-service client dials when the app's VM service
 * hands it over: a 302 to DDS, the DartDevelopmentServiceConnected event, or
 * DWDS's 403 naming DDS in a body that only a plain GET (the probe) reads;
 * and the once-more dial of a socket that closed silently. The client
 * (vm_client.c) decides when to dial; this file says where, and reads the
 * 403. Loopback policy (vm_uri.h) applies to every target.
 *
 * Ownership: the client embeds the vm_handover_t (zeroed, allow_remote and
 * peer set); the probe's wsi belongs to the client's lws context and carries
 * the opaque user data the client gave, so its callbacks reach the client. */
#ifndef TELESCOPE_VM_HANDOVER_H
#define TELESCOPE_VM_HANDOVER_H

#include <libwebsockets.h>
#include <stddef.h>

#include "vm_uri.h"

#define VM_HANDOVER_MAX_HOPS 4      /* hand-overs followed in a row (VM -> DDS is one) */
#define VM_HANDOVER_BODY_MAX 1024   /* enough of a 403 body to read DWDS's "can be found at <uri>." */

typedef struct {
  /* Following DDS. follow: the ws URI to dial next instead of get_uri's
   * (set by a 302, a DWDS 403 or the DartDevelopmentServiceConnected event);
   * moved: the event came, so the close that follows is a hand-over. */
  vm_uri_t dial; /* what the current attempt dialled */
  char follow[VM_URI_MAX];
  char follow_err[256]; /* a hand-over we refused (non-loopback): the reason */
  int moved;
  int hops;
  int allow_remote; /* a hand-over may lead off loopback */
  const char *peer; /* what the far end is called in messages ("VM service") */
  /* A socket that closed with no word of why is dialled once more at the
   * same URI before anyone hears "disconnected" (see connection_lost). */
  int recheck;
  char recheck_why[200]; /* how it closed, for the DISCONNECTED that may follow */
  /* After a 403 the upgrade gives no body; one plain GET of the same path
   * reads it (DWDS names the DDS URI there; the VM and DDS say why). */
  struct lws *probe_wsi;
  int probing;
  unsigned probe_status;
  char probe_body[VM_HANDOVER_BODY_MAX];
  size_t probe_len;
} vm_handover_t;

/* Takes target (a Location, an event's uri, a 403's "found at") as the next
 * URI to dial, a relative one resolved against the URI dialled. 0, or -1
 * with follow_err set (refused: not loopback, malformed, too many hops). */
int vm_handover_follow(vm_handover_t *h, const char *target, const char *why);
/* Starts the plain GET of the dialled URI that reads a 403's body, its wsi
 * marked with opaque (lws opaque user data); 0 when under way (the client's
 * lws callback hands that wsi's events to vm_probe_callback). */
int vm_probe_start(vm_handover_t *h, struct lws_context *ctx, void *opaque);
/* The probe's lws callback; *ended set when the body is in (or will not
 * come): then vm_handover_read_403. Returns what lws expects. */
int vm_probe_callback(vm_handover_t *h, struct lws *wsi, int reason, void *in, size_t len, int *ended);
/* The probe ended: 1 when DWDS named DDS (follow set, dial it), else 0 with
 * detail saying why the upgrade was refused. */
int vm_handover_read_403(vm_handover_t *h, char *detail, size_t len);

#endif
