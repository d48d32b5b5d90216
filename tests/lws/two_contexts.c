/* Minimal reproduction: libwebsockets 4.1 loses the client SSL_CTX of every
 * lws_context that is still alive when another one is created (each with
 * LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT, as vm_client.c makes its own).
 * Outside the server; RELIABILITY.md "Two lws contexts" has the reading.
 *
 *   cc tests/lws/two_contexts.c -lwebsockets -o /tmp/two_contexts
 *   valgrind --leak-check=full /tmp/two_contexts overlap      # A, B alive together
 *   valgrind --leak-check=full /tmp/two_contexts overlap-lifo # the same, B destroyed first
 *   valgrind --leak-check=full /tmp/two_contexts sequential   # A destroyed before B exists
 *   valgrind --leak-check=full /tmp/two_contexts one          # one context
 *   valgrind --leak-check=full /tmp/two_contexts three        # A, B, C alive together
 *
 * Seen with Debian's 4.1.6 and OpenSSL 3.0: overlap and overlap-lifo lose one
 * SSL_CTX (~700 KB with the system CA bundle), A's, made at main's first
 * make(); three loses two (A's and B's: every context but the newest);
 * sequential and one lose nothing.
 *
 * Why (lws v4.1.6 source): each lws_create_context calls
 * lws_context_init_ssl_library (lib/core/context.c:1001), which takes a new
 * SSL_CTX ex-data index into a process-global variable every time
 * (lib/tls/openssl/openssl-tls.c:148). A context's client SSL_CTX records its
 * reuse entry under the index current at its creation
 * (lib/tls/openssl/openssl-client.c:693); destroying the vhost looks it up
 * under the current index (lib/tls/openssl/openssl-ssl.c:149), finds nothing
 * once another context has been created, and returns without SSL_CTX_free
 * (openssl-ssl.c:152). Fixed upstream in v4.2 (commit ffa0a38a1, "openssl:
 * acquire ex indexes once for multicontext", issue #2178). */
#include <libwebsockets.h>
#include <stdio.h>
#include <string.h>

static int cb(struct lws *wsi, enum lws_callback_reasons r, void *user, void *in, size_t len) {
  return lws_callback_http_dummy(wsi, r, user, in, len);
}

static const struct lws_protocols protocols[] = {{"p", cb, 0, 0, 0, NULL, 0},
                                                 {NULL, NULL, 0, 0, 0, NULL, 0}};

static struct lws_context *make(void) {
  struct lws_context_creation_info info;
  memset(&info, 0, sizeof info);
  info.port = CONTEXT_PORT_NO_LISTEN; /* a client context, as vm_client.c makes */
  info.protocols = protocols;
  info.options = LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
  info.gid = -1;
  info.uid = -1;
  struct lws_context *c = lws_create_context(&info);
  if (!c) fprintf(stderr, "lws_create_context failed\n");
  return c;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "overlap";
  lws_set_log_level(LLL_ERR, NULL);
  struct lws_context *a = make(), *b = NULL;
  if (!a) return 2;
  if (!strcmp(mode, "overlap")) {
    b = make();
    lws_context_destroy(a);
    lws_context_destroy(b);
  } else if (!strcmp(mode, "overlap-lifo")) {
    b = make();
    lws_context_destroy(b);
    lws_context_destroy(a);
  } else if (!strcmp(mode, "sequential")) {
    lws_context_destroy(a);
    b = make();
    lws_context_destroy(b);
  } else if (!strcmp(mode, "three")) {
    b = make();
    struct lws_context *c = make();
    lws_context_destroy(c);
    lws_context_destroy(b);
    lws_context_destroy(a);
  } else if (!strcmp(mode, "one")) {
    lws_context_destroy(a);
  } else {
    fprintf(stderr, "usage: %s overlap|overlap-lifo|sequential|one|three\n", argv[0]);
    return 2;
  }
  return 0;
}
