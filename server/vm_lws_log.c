#include "vm_lws_log.h"

#include <stdio.h>
#include <string.h>

#include "log.h"
#include "vm_uri.h"

/* The token of the URI last dialled. lws's log callback has no user
 * pointer, and its client logs print the bare request path ("GET /TOKEN=/ws"),
 * which log_redact cannot recognise without a scheme: scrub it here. */
static char lws_log_secret[VM_URI_MAX];

void vm_lws_log_path(const char *path) {
  const char *b = path[0] == '/' ? path + 1 : path;
  size_t n = strlen(b);
  if (n >= 3 && strcmp(b + n - 3, "/ws") == 0) n -= 3;
  if (n >= sizeof lws_log_secret || (n == 2 && memcmp(b, "ws", 2) == 0)) n = 0;
  memcpy(lws_log_secret, b, n);
  lws_log_secret[n] = '\0';
}

void vm_lws_log_emit(int level, const char *line) {
  char clean[2048];
  size_t o = 0, slen = strlen(lws_log_secret);
  for (const char *p = line; *p && o + 1 < sizeof clean;) {
    if (slen && strncmp(p, lws_log_secret, slen) == 0) {
      o += (size_t)snprintf(clean + o, sizeof clean - o, "\xe2\x80\xa6redacted\xe2\x80\xa6");
      if (o >= sizeof clean) o = sizeof clean - 1;
      p += slen;
    } else {
      clean[o++] = *p++;
    }
  }
  while (o && (clean[o - 1] == '\n' || clean[o - 1] == '\r')) o--;
  clean[o] = '\0';
  log_debug("lws: %s", clean); /* log_msg redacts any full URI as well */
}
