/* WebSocket JSON-RPC client of the Dart VM Service, on the caller's libuv
 * loop (libwebsockets with LWS_SERVER_OPTION_LIBUV and foreign_loops; one
 * thread). Many requests in flight, string ids, replies matched by id in any
 * order, a uv timer per request, streamNotify events to a callback, messages
 * reassembled up to VM_CLIENT_MAX_MESSAGE. It connects on first use and after
 * a drop reconnects on the next use, after a backoff (50 ms doubling to 1 s,
 * reset by a successful connect) so a dead app is never dialled in a loop.
 *
 * Where Dart Development Service (DDS) has taken the VM over, the client
 * follows it, under the same loopback policy as the URI it was given: the
 * VM's 302 to DDS on a WebSocket upgrade, the DartDevelopmentServiceConnected
 * event sent to direct clients before the VM closes them, and DWDS's 403
 * "… DDS instance has taken control and can be found at <uri>." Nothing is
 * remembered: after a drop the given URI is dialled again and followed again.
 * An open connection that closes without that event is dialled once more at
 * once, at the same URI: DWDS tells only its Service listeners that DDS took
 * over, and a socket can drop while the VM lives on. Answered (directly or by
 * following DWDS's 403), it is VM_CLIENT_MOVED, not DISCONNECTED.
 *
 * Only the methods of vm_client_method_allowed() (or of the client's own
 * allowlist, options.allowed) are ever sent (DESIGN 10): anything else fails
 * without touching the socket.
 *
 * Every client of the process shares one lws context (vm_lws_ctx.h).
 *
 * The connection is vm_client.c; below it: the requests (vm_request.h), where
 * a hand-over leads and the 403 probe (vm_handover.h), the pure wire parts
 * (vm_wire.h) and lws's log (vm_lws_log.h). */
#ifndef TELESCOPE_VM_CLIENT_H
#define TELESCOPE_VM_CLIENT_H

#include <jansson.h>
#include <stddef.h>
#include <uv.h>

#include "codes.h"
#include "vm_reply.h"

#define VM_CLIENT_MAX_MESSAGE (64u * 1024u * 1024u)
/* A getCpuSamples or getVMTimeline reply this large reaches its caller as
 * text (reply.text): a debug app's profile lists tens of thousands of
 * functions, tens of MB whose parse would stall the loop for a second, and a
 * busy app's timeline pull holds megabytes of events; the caller parses it
 * off the loop. */
#define VM_CLIENT_TEXT_MIN (1024u * 1024u)
#define VM_CLIENT_DEFAULT_TIMEOUT_MS 3000

typedef struct vm_client vm_client_t;

typedef enum {
  VM_CLIENT_CONNECTED,
  VM_CLIENT_DISCONNECTED, /* closed or failed; diag says NOT_CONNECTED or CONNECTION_REJECTED */
  VM_CLIENT_MOVED /* DDS took the connection over (DartDevelopmentServiceConnected): requests
                     already sent failed with NOT_CONNECTED, unsent ones go to DDS */
} vm_client_state_t;

typedef struct {
  /* Asked for the URI (normalised ws://…) before every connection attempt,
   * so a --vmservice-out-file can be re-read. Return NULL when none is known
   * (then requests fail with NOT_CONNECTED); write a reason into err. */
  const char *(*get_uri)(void *arg, char *err, size_t errlen);
  /* A streamNotify arrived: params.streamId and params.event (borrowed); a
   * Dart Tooling Daemon event, which has no params.event, is params itself
   * ({streamId, eventKind, eventData, timestamp}). */
  void (*on_event)(void *arg, const char *stream_id, json_t *event);
  /* The connection came up or went down (after pending calls were failed). */
  void (*on_state)(void *arg, vm_client_state_t state, diag_code_t diag, const char *detail);
  void *arg;
  int timeout_ms;   /* per request; <= 0 means VM_CLIENT_DEFAULT_TIMEOUT_MS */
  int allow_remote; /* a redirect or DDS hand-over to a non-loopback host is refused unless set */
  /* What the far end is called in details ("VM service" when NULL; the DTD
   * client says "Dart Tooling Daemon"). Borrowed for the client's life. */
  const char *peer;
  /* The methods this client may send (vm_client_method_allowed when NULL). */
  int (*allowed)(const char *method);
} vm_client_options_t;

vm_client_t *vm_client_new(uv_loop_t *loop, const vm_client_options_t *opt);

/* Sends method(params) — params stolen (NULL means {}), even on failure.
 * cb is called exactly once, never from inside this call, unless the request
 * is cancelled. timeout_ms <= 0 uses the client's default. Returns NULL only
 * when out of memory (then cb is never called). */
vm_request_t *vm_client_call(vm_client_t *c, const char *method, json_t *params, int timeout_ms,
                             vm_client_reply_cb cb, void *arg);

/* Forgets the request: its cb will not be called; a late reply is dropped. */
void vm_client_cancel(vm_request_t *req);

/* Drops the connection (if any), failing every pending request with
 * NOT_CONNECTED "<why>"; the next call reconnects at once (no backoff). Used
 * when the URI changes. */
void vm_client_disconnect(vm_client_t *c, const char *why);

/* How long the client waits after its last failed dial before the next
 * (ms, 50 doubling to 1 000); 0 when no dial failed since it last
 * connected, so a drop after a good connection redials at once. */
int vm_client_backoff_ms(const vm_client_t *c);

/* Cancels every request silently, closes the socket, drops the client's
 * reference to the shared lws context and frees the client once its handles
 * are closed and the context is destroyed (by the last client to close),
 * then calls done (may be NULL). lws closes its own loop handles a few
 * iterations later: keep running the loop until it is empty before
 * uv_loop_close. */
void vm_client_close(vm_client_t *c, void (*done)(void *arg), void *arg);

/* The allowlist of DESIGN 10. */
int vm_client_method_allowed(const char *method);

#endif
