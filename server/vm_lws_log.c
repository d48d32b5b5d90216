#include "vm_lws_log.h"

#include <stdio.h>
#include <string.h>

#include "log.h"
#include "vm_uri.h"

/* The tokens of the URIs dialled lately (the VM service's and the Dart
 * Tooling Daemon's share lws and so its log). lws's log callback has no user
 * pointer, and its client logs print the bare request path ("GET /TOKEN=/ws"),
 * which log_redact cannot recognise without a scheme: scrub them here. */
#define SECRETS 4
static char lws_log_secret[SECRETS][VM_URI_MAX];
static int next_slot;

void vm_lws_log_path(const char *path) {
  const char *b = path[0] == '/' ? path + 1 : path;
  size_t n = strlen(b);
  if (n >= 3 && strcmp(b + n - 3, "/ws") == 0) n -= 3;
  if (n >= VM_URI_MAX || (n == 2 && memcmp(b, "ws", 2) == 0)) n = 0;
  if (!n) return;
  for (int i = 0; i < SECRETS; i++)
    if (strlen(lws_log_secret[i]) == n && memcmp(lws_log_secret[i], b, n) == 0) return;
  memcpy(lws_log_secret[next_slot], b, n);
  lws_log_secret[next_slot][n] = '\0';
  next_slot = (next_slot + 1) % SECRETS;
}

/* The length of the secret line starts with, or 0. */
static size_t secret_at(const char *p) {
  for (int i = 0; i < SECRETS; i++) {
    size_t slen = strlen(lws_log_secret[i]);
    if (slen && strncmp(p, lws_log_secret[i], slen) == 0) return slen;
  }
  return 0;
}

void vm_lws_log_emit(int level, const char *line) {
  (void)level;
  char clean[2048];
  size_t o = 0, slen;
  for (const char *p = line; *p && o + 1 < sizeof clean;) {
    if ((slen = secret_at(p)) > 0) {
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
