/* vm_reply: what one VM-service request ends with, shared by the client
 * (vm_client.h) and its request queue (vm_request.h), which sits below it:
 * the queue delivers replies and failures without knowing the client. */
#ifndef TELESCOPE_VM_REPLY_H
#define TELESCOPE_VM_REPLY_H

#include <jansson.h>
#include <stddef.h>

#include "codes.h"

typedef struct vm_request vm_request_t;

/* The outcome of one request. Exactly one of these holds:
 *   diag != DIAG_NONE   the request never got a usable reply: NOT_CONNECTED
 *                       (refused, closed, not allowed), CONNECTION_REJECTED
 *                       (HTTP 403 / not a WebSocket), UNRESPONSIVE (timeout);
 *   error != NULL       the app answered with a JSON-RPC error (rpc_code);
 *   result != NULL      the app answered with a result.
 * A reply we could not use gives diag NONE, no error/result objects and
 * rpc_code RPC_INTERNAL_ERROR when it was over VM_CLIENT_MAX_MESSAGE (we stop
 * keeping it at the limit and only scan the rest for its id, so memory stays
 * bounded) or RPC_PARSE_ERROR when it was not valid JSON. Either way the
 * offending message is dropped with a log line and the connection stays up.
 * Choice: a malformed message whose top-level "id" cannot be found fails
 * nothing at once (failing every pending call for one bad message would
 * punish the innocent); the call it answered ends at its timeout
 * (UNRESPONSIVE). Objects are borrowed for the callback only. */
typedef struct {
  diag_code_t diag;
  int rpc_code;
  const char *detail; /* token-free, human readable */
  json_t *result;
  json_t *error;
  /* An ext.telescope.frames result's "records" array, cut out of the text
   * before the parse (vm_wire_records_span): result holds "[]" in its place.
   * NULL when nothing was cut. Borrowed for the callback, like result. */
  const char *records;
  size_t records_len;
  /* A getCpuSamples or getVMTimeline reply of VM_CLIENT_TEXT_MIN bytes or
   * more: the whole message as it came, not parsed (result and error NULL,
   * detail "ok"), whatever it holds. Borrowed for the callback. */
  const char *text;
  size_t text_len;
} vm_client_reply_t;

typedef void (*vm_client_reply_cb)(void *arg, const vm_client_reply_t *reply);

#endif
