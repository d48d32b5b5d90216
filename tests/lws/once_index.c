/* The upstream fix, applied from outside, to confirm the cause of the loss
 * two_contexts.c shows: an LD_PRELOAD shim under which the SSL and SSL_CTX
 * ex-data indexes are taken once per process, as lws does since ffa0a38a1
 * ("openssl: acquire ex indexes once for multicontext"); lws 4.1 takes new
 * ones with every context (lib/tls/openssl/openssl-tls.c:145-149). Not built
 * by CMake (it needs OpenSSL's headers); by hand:
 *
 *   cc -shared -fPIC tests/lws/once_index.c -o /tmp/once_index.so -ldl
 *   cc tests/lws/two_contexts.c -lwebsockets -o /tmp/two_contexts
 *   LD_PRELOAD=/tmp/once_index.so valgrind --leak-check=full /tmp/two_contexts three
 *
 * With it every mode loses nothing (and the shim says when it handed an index
 * out again); without it, two_contexts.c's counts. */
#ifdef __linux__
#define _GNU_SOURCE /* RTLD_NEXT */
#endif
#include <dlfcn.h>
#include <openssl/crypto.h>
#include <stdio.h>

typedef int get_index_fn(int, long, void *, CRYPTO_EX_new *, CRYPTO_EX_dup *, CRYPTO_EX_free *);

int CRYPTO_get_ex_new_index(int class_index, long argl, void *argp, CRYPTO_EX_new *new_func,
                            CRYPTO_EX_dup *dup_func, CRYPTO_EX_free *free_func) {
  static get_index_fn *real;
  static int taken[CRYPTO_EX_INDEX__COUNT], index[CRYPTO_EX_INDEX__COUNT];
  int once = class_index == CRYPTO_EX_INDEX_SSL || class_index == CRYPTO_EX_INDEX_SSL_CTX;
  if (!real) real = (get_index_fn *)dlsym(RTLD_NEXT, "CRYPTO_get_ex_new_index");
  if (once && taken[class_index]) {
    fprintf(stderr, "once_index: class %d, index %d again\n", class_index, index[class_index]);
    return index[class_index];
  }
  int r = real(class_index, argl, argp, new_func, dup_func, free_func);
  if (once) taken[class_index] = 1, index[class_index] = r;
  return r;
}
