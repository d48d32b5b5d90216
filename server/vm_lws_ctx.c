#include "vm_lws_ctx.h"

#include <stdlib.h>
#include <string.h>

#include "container_of.h"
#include "log.h"

#define MAX_WAITERS 8 /* clients of one context: the VM service's and the DTD's today */

struct vm_lws_ctx {
  uv_loop_t *loop;
  struct lws_context *ctx; /* lws writes NULL here once it is really freed */
  int users;
  int destroying; /* the first lws_context_destroy call was made */
  int polls;      /* 1 ms turns spent waiting for lws to finish */
  uv_timer_t timer;
  struct {
    void (*done)(void *arg);
    void *arg;
  } waiters[MAX_WAITERS];
  int nwaiters;
};

/* The context new clients share; NULL once its last user released it (a
 * context being destroyed is nobody's to join). */
static vm_lws_ctx_t *current;

vm_lws_ctx_t *vm_lws_ctx_acquire(uv_loop_t *loop, const struct lws_protocols *protocols) {
  if (current && current->loop == loop && current->users < MAX_WAITERS) {
    current->users++;
    return current;
  }
  vm_lws_ctx_t *x = calloc(1, sizeof *x);
  if (!x) return NULL;
  struct lws_context_creation_info info;
  void *loops[1] = {loop};
  memset(&info, 0, sizeof info);
  info.port = CONTEXT_PORT_NO_LISTEN;
  info.protocols = protocols;
  info.options = LWS_SERVER_OPTION_LIBUV | LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
  info.foreign_loops = loops;
  info.gid = -1;
  info.uid = -1;
  info.pcontext = &x->ctx;
  x->loop = loop;
  x->ctx = lws_create_context(&info);
  if (!x->ctx) {
    free(x);
    return NULL;
  }
  uv_timer_init(loop, &x->timer);
  x->users = 1;
  current = x;
  return x;
}

struct lws_context *vm_lws_ctx_get(const vm_lws_ctx_t *x) {
  return x->ctx;
}

static void timer_closed(uv_handle_t *h) {
  vm_lws_ctx_t *x = container_of((uv_timer_t *)h, vm_lws_ctx_t, timer);
  for (int i = 0; i < x->nwaiters; i++)
    if (x->waiters[i].done) x->waiters[i].done(x->waiters[i].arg);
  free(x);
}

static void count_closing(uv_handle_t *h, void *arg) {
  if (uv_is_closing(h)) ++*(int *)arg;
}

/* lws 4.1 destroys a context on a foreign loop in two calls: the first
 * closes every wsi and then lws's own timer and idle handles, through libuv
 * close callbacks that still reach the protocols' callbacks; only a second
 * call, once those are done, frees the vhosts and the context (and clears
 * x->ctx through info.pcontext). Returns 1 while there is more to wait for;
 * gives up after ~5 s rather than hold the exit. */
static int destroy_step(vm_lws_ctx_t *x) {
  int closing = 0;
  if (!x->ctx) return 0;
  if (!x->destroying) {
    x->destroying = 1;
    lws_context_destroy(x->ctx);
    return x->ctx != NULL;
  }
  if (x->polls++ > 5000) {
    log_warn("vm: the WebSocket context did not finish closing; leaving it");
    return 0;
  }
  uv_walk(x->loop, count_closing, &closing);
  if (closing) return 1;
  lws_context_destroy(x->ctx);
  return x->ctx != NULL;
}

static void on_timer(uv_timer_t *t) {
  vm_lws_ctx_t *x = container_of(t, vm_lws_ctx_t, timer);
  if (destroy_step(x)) {
    uv_timer_start(&x->timer, on_timer, 1, 0);
    return;
  }
  uv_close((uv_handle_t *)&x->timer, timer_closed);
}

void vm_lws_ctx_release(vm_lws_ctx_t *x, void (*done)(void *arg), void *arg) {
  /* users never exceeds MAX_WAITERS (acquire makes a new context then), so
   * every release finds a slot. */
  x->waiters[x->nwaiters].done = done;
  x->waiters[x->nwaiters].arg = arg;
  x->nwaiters++;
  if (--x->users > 0) return;
  if (current == x) current = NULL;
  /* lws_context_destroy must not run inside an lws callback (the caller may
   * be in one): from the timer, on the next turn. */
  uv_timer_start(&x->timer, on_timer, 0, 0);
}

/* lws allocates each poll handle alone (lws_malloc, that is realloc) and
 * frees it only in its own close callback, which will never run for this
 * one: its memory is freed here instead (LeakSanitizer counts it otherwise). */
static void free_stray(uv_handle_t *h) {
  free(h);
}

static void close_stray(uv_handle_t *h, void *arg) {
  if (h->type != UV_POLL || uv_is_closing(h)) return;
  uv_close(h, free_stray);
  ++*(int *)arg;
}

int vm_lws_close_strays(uv_loop_t *loop) {
  int n = 0;
  uv_walk(loop, close_stray, &n);
  if (n) {
    log_debug("vm: closed %d poll handle(s) libwebsockets left on the loop", n);
    uv_run(loop, UV_RUN_DEFAULT);
  }
  return n;
}
