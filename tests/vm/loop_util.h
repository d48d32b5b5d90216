/* Loop helpers shared by the vm loop tests: run the loop until a condition
 * holds or a deadline passes (no fixed sleeps), collect call results, and
 * prove the loop closes clean. Header-only, static functions. */
#ifndef TELESCOPE_TEST_VM_LOOP_UTIL_H
#define TELESCOPE_TEST_VM_LOOP_UTIL_H

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "schema_embed.h"
#include "vm_isolate.h"

typedef struct {
  int n; /* callbacks so far */
  diag_code_t diag;
  int rpc;
  char detail[600];
  json_t *result; /* deep copy of the last result */
  size_t text_len; /* a reply handed over as text (result NULL): its length */
  uint64_t at_ms; /* loop time of the last callback */
  uv_loop_t *loop;
} got_t;

static void got_cb(void *arg, const vm_result_t *r) {
  got_t *g = arg;
  g->n++;
  g->diag = r->diag;
  g->rpc = r->rpc_code;
  snprintf(g->detail, sizeof g->detail, "%s", r->detail ? r->detail : "");
  json_decref(g->result);
  g->result = r->result ? json_deep_copy(r->result) : NULL;
  g->text_len = r->result ? 0 : r->records_len;
  if (g->loop) g->at_ms = uv_now(g->loop);
}

static void got_reset(got_t *g) {
  json_decref(g->result);
  uv_loop_t *loop = g->loop;
  memset(g, 0, sizeof *g);
  g->loop = loop;
}

static void guard_cb(uv_timer_t *t) {
  (void)t;
}

/* VM_TEST_SLOW=N stretches every deadline N times (for valgrind runs). */
static int test_slow(void) {
  const char *e = getenv("VM_TEST_SLOW");
  int n = e ? atoi(e) : 1;
  return n > 0 ? n : 1;
}

/* Runs the loop until *counter >= target or ms pass; returns 1 when reached. */
static int run_until(uv_loop_t *loop, const int *counter, int target, int ms) {
  uv_timer_t guard;
  uv_timer_init(loop, &guard);
  uv_timer_start(&guard, guard_cb, 5, 5);
  uv_update_time(loop);
  uint64_t deadline = uv_now(loop) + (uint64_t)ms * (uint64_t)test_slow();
  while (*counter < target && uv_now(loop) < deadline) uv_run(loop, UV_RUN_ONCE);
  uv_close((uv_handle_t *)&guard, NULL);
  uv_run(loop, UV_RUN_NOWAIT);
  return *counter >= target;
}

static void app_closed(void *arg) {
  (*(int *)arg)++;
}

/* Checks conn against the `connection` object of the output schema (the
 * embedded bytes): required keys, no unknown keys, types and enums. */
static void assert_connection_matches_schema(json_t *conn) {
  json_t *schema = json_loads(schema_telescope_frames_output, 0, NULL);
  json_t *cs = json_object_get(json_object_get(schema, "properties"), "connection");
  ck_assert_ptr_nonnull(cs);
  json_t *props = json_object_get(cs, "properties");
  size_t i;
  json_t *req;
  json_array_foreach(json_object_get(cs, "required"), i, req) {
    ck_assert_msg(json_object_get(conn, json_string_value(req)) != NULL, "missing %s",
                  json_string_value(req));
  }
  const char *k;
  json_t *v;
  json_object_foreach(conn, k, v) {
    json_t *p = json_object_get(props, k);
    ck_assert_msg(p != NULL, "connection.%s is not in the schema", k);
    const char *type = json_string_value(json_object_get(p, "type"));
    if (type && strcmp(type, "string") == 0) ck_assert_msg(json_is_string(v), "%s not a string", k);
    if (type && strcmp(type, "boolean") == 0) ck_assert_msg(json_is_boolean(v), "%s not bool", k);
    json_t *en = json_object_get(p, "enum");
    if (en) {
      int found = 0;
      size_t j;
      json_t *e;
      json_array_foreach(en, j, e) found |= json_equal(e, v);
      ck_assert_msg(found, "connection.%s = %s is not an allowed value", k, json_string_value(v));
    }
  }
  json_decref(schema);
}

/* Closes app and proves nothing is left on the loop. */
static void close_app_and_loop(vm_app_t *app, uv_loop_t *loop) {
  int closed = 0;
  vm_app_close(app, app_closed, &closed);
  ck_assert_msg(run_until(loop, &closed, 1, 3000), "vm_app_close never finished");
  /* lws closes its own handles a few turns after lws_context_destroy. */
  for (int i = 0; i < 200 && uv_run(loop, UV_RUN_NOWAIT); i++) {
  }
  int busy = uv_run(loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(busy, 0);
  ck_assert_int_eq(uv_loop_close(loop), 0);
}

#endif
