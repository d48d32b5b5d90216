/* vm_lws_ctx: the one libwebsockets context of the process, shared by every
 * WebSocket client on the loop (the app's VM service, the Dart Tooling
 * Daemon). libwebsockets 4.1 loses the client SSL_CTX of every context but
 * the newest while two are alive at once (RELIABILITY.md, "Two lws contexts
 * alive at once"), so there is one: the first acquire creates it, the last
 * release destroys it (lws 4.1's two-step destroy on a foreign loop).
 *
 * Ownership: this module owns the context and its timer. A client holds a
 * reference from acquire to release and marks every wsi it opens with its
 * own lws opaque user data (the context's user pointer is nobody's). done
 * runs once the context is gone, so no lws callback can reach a client
 * freed in done; a client released early waits for the last one. */
#ifndef TELESCOPE_VM_LWS_CTX_H
#define TELESCOPE_VM_LWS_CTX_H

#include <libwebsockets.h>
#include <uv.h>

typedef struct vm_lws_ctx vm_lws_ctx_t;

/* A reference to the context on loop, created with protocols (borrowed for
 * the context's life) if there is none yet. NULL when lws cannot make one. */
vm_lws_ctx_t *vm_lws_ctx_acquire(uv_loop_t *loop, const struct lws_protocols *protocols);
/* The context itself (borrowed). */
struct lws_context *vm_lws_ctx_get(const vm_lws_ctx_t *x);
/* Drops the reference; done(arg) runs from the loop once the context is
 * destroyed (never from inside this call). Never call from inside an lws
 * callback of the last reference: the destroy starts on the next turn. */
void vm_lws_ctx_release(vm_lws_ctx_t *x, void (*done)(void *arg), void *arg);

/* For the end of a program whose own handles are all closed: closes the
 * uv_poll handles left on loop (none is ours: they can only be what lws 4.1
 * leaves behind for a client connection that failed while connecting, which
 * it never closes; warmcat/libwebsockets#2434), frees them as lws would
 * have in its close callback, and runs loop until they are gone, so that
 * uv_loop_close succeeds. Returns how many it closed. */
int vm_lws_close_strays(uv_loop_t *loop);

#endif
