/* unit.lws_version: the libwebsockets loaded at run time is the one the build
 * was configured against (pkg-config's version, argv[1]) and compiled with
 * (its headers' LWS_LIBRARY_VERSION). make test-lws43 builds against another
 * libwebsockets than the system's: this says which one ran, and fails when a
 * binary would load the system's instead. */
#include <libwebsockets.h>
#include <stdio.h>
#include <string.h>

/* The length of the dotted version "4.3.5" that s starts with. */
static size_t dotted_len(const char *s) {
  return strspn(s, "0123456789.");
}

int main(int argc, char **argv) {
  const char *run = lws_get_library_version(), *built = LWS_LIBRARY_VERSION;
  const char *configured = argc > 1 ? argv[1] : "";
  size_t n = dotted_len(built);
  printf("libwebsockets %s at run time (headers %s, pkg-config %s)\n", run, built, configured);
  if (!n || dotted_len(run) != n || strncmp(run, built, n) != 0 ||
      dotted_len(configured) != n || strncmp(configured, built, n) != 0) {
    fprintf(stderr, "lws_version: the versions differ\n");
    return 1;
  }
  return 0;
}
