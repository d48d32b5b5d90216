/* VM-service URIs: every form a user pastes, turned into the one WebSocket
 * URI we dial, plus the loopback policy and redaction. Pure: no I/O, no loop.
 *
 * Accepted input (surrounding whitespace and newlines ignored):
 *   http://127.0.0.1:P/TOKEN=/      what `flutter run` prints (native)
 *   http://127.0.0.1:P/TOKEN=       web form, no trailing slash
 *   ws://127.0.0.1:P/TOKEN=/ws      --vmservice-out-file content; wss/https too
 *   http://127.0.0.1:9101?uri=…     a DevTools URL (the uri= value raw or
 *                                   percent-encoded, among other query params)
 *   A Dart VM Service on X is available at: http://…   the whole log line
 *   An Observatory debugger and profiler on X is available at: http://…
 * Rule (vmservice.md 1.2): scheme → ws (wss for https/wss), strip trailing
 * '/', append "/ws" unless the path already ends in "/ws"; the token segment
 * is kept verbatim; query and fragment are dropped. */
#ifndef TELESCOPE_VM_URI_H
#define TELESCOPE_VM_URI_H

#include <stddef.h>

#define VM_URI_MAX 2048

typedef enum {
  VM_URI_OK = 0,
  VM_URI_MALFORMED = -1, /* not a URI we can use; err says why */
  VM_URI_REMOTE = -2     /* well-formed, but the host is not loopback */
} vm_uri_status_t;

typedef struct {
  char ws[VM_URI_MAX];   /* normalised: ws://host:port/TOKEN=/ws */
  char host[256];        /* lower-case; IPv6 without brackets */
  char path[VM_URI_MAX]; /* "/TOKEN=/ws" */
  int port;              /* explicit, or 80 / 443 by scheme */
  int secure;            /* wss */
  int loopback;          /* 127.0.0.0/8, ::1 or localhost */
} vm_uri_t;

/* Normalises user input into out. With allow_remote == 0 a non-loopback host
 * gives VM_URI_REMOTE (out is still filled, so the caller can name the host).
 * On failure err holds a one-line, token-free reason. */
vm_uri_status_t vm_uri_parse(const char *input, int allow_remote, vm_uri_t *out, char *err,
                             size_t errlen);

/* 1 when host (no brackets) is 127.0.0.0/8, ::1 (any spelling, also
 * ::ffff:127.x) or "localhost" (any case). */
int vm_uri_host_is_loopback(const char *host);

/* Writes the normalised ws URI with everything between host:port and the
 * final "/ws" replaced by "…redacted…" (the same text log_redact produces for
 * a one-segment token). Always NUL-terminates. */
void vm_uri_redact(const char *ws_uri, char *dst, size_t n);

#endif
