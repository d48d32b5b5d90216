#include "vm_request.h"

#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "container_of.h"

static void out_unlink(vm_requests_t *c, vm_request_t *r) {
  if (!r->frame) return;
  if (r->out_prev)
    r->out_prev->out_next = r->out_next;
  else if (c->out_head == r)
    c->out_head = r->out_next;
  if (r->out_next)
    r->out_next->out_prev = r->out_prev;
  else if (c->out_tail == r)
    c->out_tail = r->out_prev;
  r->out_prev = r->out_next = NULL;
  free(r->frame);
  r->frame = NULL;
}

static void on_request_closed(uv_handle_t *h) {
  vm_request_t *r = container_of((uv_timer_t *)h, vm_request_t, timer);
  vm_requests_t *q = r->q;
  free(r);
  q->open--;
  q->released(q->arg);
}

/* Takes r off the lists and releases it; cb (if given) runs first. */
void vm_request_finish(vm_request_t *r, const vm_client_reply_t *reply) {
  vm_requests_t *c = r->q;
  if (r->done) return;
  r->done = 1;
  out_unlink(c, r);
  if (r->prev)
    r->prev->next = r->next;
  else
    c->pending = r->next;
  if (r->next) r->next->prev = r->prev;
  uv_timer_stop(&r->timer);
  if (reply && r->cb) r->cb(r->arg, reply);
  uv_close((uv_handle_t *)&r->timer, on_request_closed);
}

static void on_request_timer(uv_timer_t *t) {
  vm_request_t *r = container_of(t, vm_request_t, timer);
  vm_client_reply_t reply = {0};
  if (r->deferred) {
    reply.diag = r->fail_diag;
    reply.rpc_code = r->fail_rpc;
    reply.detail = r->fail_detail;
  } else {
    snprintf(r->fail_detail, sizeof r->fail_detail, "no reply to %s within %d ms", r->method,
             r->timeout_ms);
    reply.diag = DIAG_UNRESPONSIVE;
    reply.detail = r->fail_detail;
  }
  vm_request_finish(r, &reply);
}

/* Still waiting for its reply: not answered, not failing. */
static int awaits_reply(const vm_request_t *r) { return !r->done && !r->deferred; }

/* Fails r on the next loop turn: callers never see their cb re-entered, and
 * lws callbacks never run user code that might tear the socket down. */
void vm_request_fail_soon(vm_request_t *r, diag_code_t diag, int rpc, const char *detail) {
  if (!awaits_reply(r)) return;
  r->deferred = 1;
  r->fail_diag = diag;
  r->fail_rpc = rpc;
  snprintf(r->fail_detail, sizeof r->fail_detail, "%s", detail);
  out_unlink(r->q, r);
  uv_timer_start(&r->timer, on_request_timer, 0, 0);
}

void vm_requests_fail_all_soon(vm_requests_t *c, diag_code_t diag, const char *detail) {
  for (vm_request_t *r = c->pending; r; r = r->next) vm_request_fail_soon(r, diag, 0, detail);
}

vm_request_t *vm_requests_find(vm_requests_t *c, const char *id) {
  for (vm_request_t *r = c->pending; r; r = r->next)
    if (awaits_reply(r) && strcmp(r->id, id) == 0) return r;
  return NULL;
}

int vm_requests_awaiting(const vm_requests_t *c, const char *method) {
  for (const vm_request_t *r = c->pending; r; r = r->next)
    if (awaits_reply(r) && strcmp(r->method, method) == 0) return 1;
  return 0;
}

void vm_requests_fail_written_soon(vm_requests_t *c, const char *detail) {
  for (vm_request_t *r = c->pending; r; r = r->next)
    if (!r->frame) vm_request_fail_soon(r, DIAG_NOT_CONNECTED, 0, detail);
}

void vm_request_written(vm_request_t *r) { out_unlink(r->q, r); }

vm_request_t *vm_requests_add(vm_requests_t *q, const char *method, int timeout_ms,
                              vm_client_reply_cb cb, void *arg) {
  vm_request_t *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->q = q;
  r->cb = cb;
  r->arg = arg;
  r->timeout_ms = timeout_ms;
  snprintf(r->method, sizeof r->method, "%s", method ? method : "(null)");
  snprintf(r->id, sizeof r->id, "%lu", ++q->next_id);
  uv_timer_init(q->loop, &r->timer);
  q->open++;
  r->next = q->pending;
  if (q->pending) q->pending->prev = r;
  q->pending = r;
  return r;
}

int vm_request_queue(vm_request_t *r, json_t *params) {
  vm_requests_t *q = r->q;
  json_t *msg = json_pack("{s:s, s:s, s:o, s:s}", "jsonrpc", "2.0", "method", r->method, "params",
                          params ? params : json_object(), "id", r->id);
  char *text = msg ? json_dumps(msg, JSON_COMPACT) : NULL;
  json_decref(msg);
  size_t tlen = text ? strlen(text) : 0;
  r->frame = text ? malloc(LWS_PRE + tlen) : NULL;
  if (!r->frame) {
    free(text);
    vm_request_fail_soon(r, DIAG_NOT_CONNECTED, 0, "out of memory building the request");
    return -1;
  }
  memcpy(r->frame + LWS_PRE, text, tlen);
  r->frame_len = tlen;
  free(text);
  r->out_prev = q->out_tail;
  if (q->out_tail)
    q->out_tail->out_next = r;
  else
    q->out_head = r;
  q->out_tail = r;
  uv_timer_start(&r->timer, on_request_timer, (uint64_t)r->timeout_ms, 0);
  return 0;
}

void vm_requests_init(vm_requests_t *q, uv_loop_t *loop, void (*released)(void *arg), void *arg) {
  *q = (vm_requests_t){.loop = loop, .released = released, .arg = arg};
}
