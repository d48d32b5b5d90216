/* Fuzz target: VM-service URI normalisation (vm_uri.c), the text a user
 * pastes: any bytes, up to the first NUL.
 *
 * Checked for every input: a result is a ws/wss URI ending in "/ws" whose
 * parts agree with the struct; normalising the result again gives the same
 * URI (idempotence); the loopback flag matches vm_uri_host_is_loopback and
 * the policy (allow_remote 0 refuses exactly the non-loopback hosts);
 * redaction fits any buffer and NUL-terminates; an error says why in one
 * line. */
#include <string.h>

#include "fuzz.h"
#include "vm_uri.h"

static void check_err(const char *err) {
  FUZZ_ASSERT(err[0] != '\0');
  FUZZ_ASSERT(strchr(err, '\n') == NULL);
}

static void check_redact(const char *ws) {
  char dst[VM_URI_MAX + 64];
  static const size_t sizes[] = {1, 2, 7, 16, 40, sizeof dst};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    memset(dst, 'x', sizeof dst);
    vm_uri_redact(ws, dst, sizes[i]);
    FUZZ_ASSERT(memchr(dst, '\0', sizes[i]) != NULL);
  }
}

static void check_ok(const vm_uri_t *u) {
  size_t n = strlen(u->ws);
  FUZZ_ASSERT(n < VM_URI_MAX);
  FUZZ_ASSERT(strncmp(u->ws, u->secure ? "wss://" : "ws://", u->secure ? 6 : 5) == 0);
  FUZZ_ASSERT(n >= 3 && strcmp(u->ws + n - 3, "/ws") == 0);
  size_t pl = strlen(u->path);
  FUZZ_ASSERT(pl >= 3 && pl <= n && strcmp(u->ws + n - pl, u->path) == 0);
  FUZZ_ASSERT(u->port >= 0 && u->port <= 65535);
  FUZZ_ASSERT(u->loopback == vm_uri_host_is_loopback(u->host));
  /* Normalising the normal form changes nothing. */
  vm_uri_t again;
  char err[256];
  vm_uri_status_t st = vm_uri_parse(u->ws, 1, &again, err, sizeof err);
  FUZZ_ASSERT(st == VM_URI_OK);
  FUZZ_ASSERT(strcmp(again.ws, u->ws) == 0);
  FUZZ_ASSERT(strcmp(again.host, u->host) == 0 && again.port == u->port);
  check_redact(u->ws);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  FUZZ_ASSERT(text != NULL);
  memcpy(text, data, size);
  text[size] = '\0';

  vm_uri_t u;
  char err[256];
  err[0] = '\0';
  vm_uri_status_t remote_ok = vm_uri_parse(text, 1, &u, err, sizeof err);
  FUZZ_ASSERT(remote_ok == VM_URI_OK || remote_ok == VM_URI_MALFORMED);
  int loopback = 0;
  if (remote_ok == VM_URI_OK) {
    check_ok(&u);
    loopback = u.loopback;
  } else {
    check_err(err);
  }

  err[0] = '\0';
  vm_uri_status_t local = vm_uri_parse(text, 0, &u, err, sizeof err);
  if (remote_ok == VM_URI_MALFORMED) {
    FUZZ_ASSERT(local == VM_URI_MALFORMED);
  } else if (loopback) {
    FUZZ_ASSERT(local == VM_URI_OK);
  } else {
    FUZZ_ASSERT(local == VM_URI_REMOTE);
    FUZZ_ASSERT(!u.loopback && u.host[0] != '\0'); /* filled, so the host can be named */
    check_err(err);
  }
  (void)vm_uri_host_is_loopback(text);
  check_redact(text);
  free(text);
  return 0;
}
