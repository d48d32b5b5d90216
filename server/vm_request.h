/* vm_request: the requests of a VM-service client (vm_client.h): the ones
 * pending an answer, the queue of frames not yet written, each one's
 * deadline, and failures delivered from the loop (never inside the caller,
 * never inside an lws callback). No socket: the client writes the frames.
 *
 * Ownership: the queue owns its requests; each is freed in its timer's close
 * callback, after which released(arg) tells the owner (the client waits for
 * open to reach 0 before it frees itself). A request's callback runs at most
 * once; vm_request_finish with no reply (a cancel) runs none. */
#ifndef TELESCOPE_VM_REQUEST_H
#define TELESCOPE_VM_REQUEST_H

#include <jansson.h>
#include <uv.h>

#include "vm_reply.h"

typedef struct vm_requests vm_requests_t;

struct vm_requests {
  uv_loop_t *loop;
  vm_request_t *pending;             /* every request not done, newest first */
  vm_request_t *out_head, *out_tail; /* not yet written, oldest first */
  unsigned long next_id;
  int open; /* request timers not yet closed */
  void (*released)(void *arg);
  void *arg;
};

struct vm_request {
  vm_requests_t *q;
  uv_timer_t timer; /* the timeout, or a 0 ms hop to deliver a failure */
  char id[24];
  char method[48];
  unsigned char *frame; /* LWS_PRE + payload while waiting to be written */
  size_t frame_len;
  vm_client_reply_cb cb;
  void *arg;
  int timeout_ms;
  int done; /* answered, failed or cancelled: off both lists */
  int deferred;
  diag_code_t fail_diag;
  int fail_rpc;
  char fail_detail[200];
  vm_request_t *prev, *next;         /* pending list: every request not done */
  vm_request_t *out_prev, *out_next; /* write queue: not yet written */
};

void vm_requests_init(vm_requests_t *q, uv_loop_t *loop, void (*released)(void *arg), void *arg);
/* A pending request with a fresh id and no frame yet; NULL: out of memory. */
vm_request_t *vm_requests_add(vm_requests_t *q, const char *method, int timeout_ms,
                              vm_client_reply_cb cb, void *arg);
/* Builds r's frame from params (stolen) and queues it to be written, its
 * deadline running; -1 (r failed soon) when out of memory. */
int vm_request_queue(vm_request_t *r, json_t *params);
/* r's frame went out: off the write queue. */
void vm_request_written(vm_request_t *r);
/* Takes r off the lists and releases it; the callback (if reply) runs first. */
void vm_request_finish(vm_request_t *r, const vm_client_reply_t *reply);
/* Fails r on the next loop turn. */
void vm_request_fail_soon(vm_request_t *r, diag_code_t diag, int rpc, const char *detail);
void vm_requests_fail_all_soon(vm_requests_t *q, diag_code_t diag, const char *detail);
/* Requests already written may or may not have run: they fail soon; the
 * rest wait for the next connection. */
void vm_requests_fail_written_soon(vm_requests_t *q, const char *detail);
/* The pending request with this id (not answered, not failing), or NULL. */
vm_request_t *vm_requests_find(vm_requests_t *q, const char *id);
/* Whether a request for method is waiting for its reply. */
int vm_requests_awaiting(const vm_requests_t *q, const char *method);

#endif
