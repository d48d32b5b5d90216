/* The VM timeline source (server/appsrc_timeline.c) on a real libuv loop,
 * against a fake VM: its control calls switch the GC and Embedder streams on,
 * and a pull's reply comes either parsed or, as vm_client hands over a reply
 * of VM_CLIENT_TEXT_MIN bytes or more, as text. A text reply is read on the
 * thread pool: the reply callback returns before the pull ends, the events
 * reach the session's slot on the loop, and the pull counts as in flight
 * until then. Freeing the source, or the timeline being set back, while a
 * reply is being read loses nothing and touches nothing freed (the valgrind
 * variant of this test checks the second half). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "appsrc_timeline.h"

/* ---- the fake VM ------------------------------------------------------- */

typedef struct fake_call {
  uv_timer_t timer;
  char method[32];
  json_t *params;
  vm_reply_cb cb;
  void *arg;
} fake_call_t;

static struct {
  uv_loop_t loop;
  char *text;          /* getVMTimeline's reply, a whole JSON-RPC message */
  int as_text;         /* handed over as text (a large reply) */
  json_t *recorded;    /* the VM's recordedStreams */
  fake_call_t *ctl;    /* a control call not yet answered (held) */
  int hold_ctl;        /* hold getVMTimelineFlags until the next pull's reply */
  int done_in_reply;   /* the pull ended inside its reply callback */
  int free_in_reply;   /* free the source right after the pull's reply callback */
  int ndone, nsettled, nwarn, in_reply;
  char warn[600];
} F;

static appsrc_timeline_t *src;
static appsrc_tl_slot_t slot;

static void call_closed(uv_handle_t *h) {
  fake_call_t *c = h->data;
  json_decref(c->params);
  free(c);
}

static void answer(fake_call_t *c) {
  vm_result_t res = {DIAG_NONE, 0, "ok", NULL, NULL, 0};
  json_t *result = NULL, *msg = NULL;
  if (!strcmp(c->method, "getVMTimelineFlags")) {
    result = json_pack("{s:s,s:s,s:[s,s,s],s:O}", "type", "TimelineFlags", "recorderName", "Ring",
                       "availableStreams", "Dart", "GC", "Embedder", "recordedStreams", F.recorded);
  } else if (!strcmp(c->method, "setVMTimelineFlags")) {
    json_decref(F.recorded);
    F.recorded = json_incref(json_object_get(c->params, "recordedStreams"));
    result = json_pack("{s:s}", "type", "Success");
  } else if (!strcmp(c->method, "getVMTimelineMicros")) {
    result = json_pack("{s:s,s:I}", "type", "Timestamp", "timestamp", (json_int_t)1000);
  } else if (F.as_text) { /* getVMTimeline, as vm_client hands a large reply over */
    res.records = F.text;
    res.records_len = strlen(F.text);
  } else {
    msg = json_loads(F.text, 0, NULL);
    json_t *error = json_object_get(msg, "error");
    res.result = json_object_get(msg, "result");
    if (error) res.rpc_code = (int)json_integer_value(json_object_get(error, "code"));
  }
  if (result) res.result = result;
  int before = F.ndone;
  F.in_reply = 1;
  c->cb(c->arg, &res);
  F.in_reply = 0;
  if (!strcmp(c->method, "getVMTimeline")) F.done_in_reply = F.ndone > before;
  json_decref(result);
  json_decref(msg);
}

static void fire(uv_timer_t *t) {
  fake_call_t *c = t->data;
  int pull = !strcmp(c->method, "getVMTimeline");
  answer(c);
  uv_close((uv_handle_t *)&c->timer, call_closed);
  if (pull && F.free_in_reply) {
    ck_assert_msg(appsrc_timeline_pulling(src), "a text reply is still being read");
    appsrc_timeline_detach(src, &slot);
    appsrc_timeline_free(src);
    src = NULL;
  }
  if (pull && F.ctl) { /* the held control call is answered while the reply is read */
    fake_call_t *ctl = F.ctl;
    F.ctl = NULL;
    uv_timer_stop(&ctl->timer);
    answer(ctl);
    uv_close((uv_handle_t *)&ctl->timer, call_closed);
  }
}

static void *fake_call_vm(void *arg, const char *method, json_t *params, vm_reply_cb cb, void *cb_arg) {
  (void)arg;
  fake_call_t *c = calloc(1, sizeof *c);
  ck_assert_ptr_nonnull(c);
  snprintf(c->method, sizeof c->method, "%s", method);
  c->params = params;
  c->cb = cb;
  c->arg = cb_arg;
  uv_timer_init(&F.loop, &c->timer);
  c->timer.data = c;
  if (F.hold_ctl && !strcmp(method, "getVMTimelineFlags")) {
    F.ctl = c; /* answered by the next pull's fire */
    F.hold_ctl = 0;
    return c;
  }
  uv_timer_start(&c->timer, fire, 1, 0);
  return c;
}

static void fake_cancel(void *handle) {
  fake_call_t *c = handle;
  if (F.ctl == c) F.ctl = NULL;
  uv_timer_stop(&c->timer);
  uv_close((uv_handle_t *)&c->timer, call_closed);
}

static void *fake_ext(void *arg, const char *method, json_t *params, vm_reply_cb cb, void *cb_arg) {
  (void)arg, (void)method, (void)cb, (void)cb_arg;
  json_decref(params);
  ck_abort_msg("the timeline calls no extension");
  return NULL;
}

static const wp_transport_t transport = {fake_ext, fake_cancel, fake_call_vm, NULL, NULL};

/* ---- replies ----------------------------------------------------------- */

#define UI_TID 100

/* A getVMTimeline reply: the UI thread's name, then n GC slices of 2 ms one
 * every 10 ms from ts0, each padded as the VM's are (isolate ids, args). */
static char *timeline_text(int n, int64_t ts0) {
  json_t *events = json_array();
  json_array_append_new(events, json_pack("{s:s,s:s,s:i,s:i,s:{s:s}}", "name", "thread_name", "ph",
                                          "M", "pid", 7, "tid", UI_TID, "args", "name",
                                          "1.ui (100)"));
  for (int i = 0; i < n; i++)
    json_array_append_new(
        events, json_pack("{s:s,s:s,s:i,s:i,s:I,s:I,s:s,s:{s:s,s:s}}", "name",
                          "CollectNewGeneration", "cat", "GC", "tid", UI_TID, "pid", 7, "ts",
                          (json_int_t)(ts0 + i * 10000), "dur", (json_int_t)2000, "ph", "X", "args",
                          "isolateGroupId", "isolateGroups/1234567890123456789",
                          "padding", "...................................................."));
  json_t *msg = json_pack("{s:s,s:{s:s,s:o,s:I,s:I},s:s}", "jsonrpc", "2.0", "result", "type",
                          "Timeline", "traceEvents", events, "timeOriginMicros", (json_int_t)1000,
                          "timeExtentMicros", (json_int_t)100000000, "id", "7");
  char *text = json_dumps(msg, JSON_COMPACT);
  json_decref(msg);
  return text;
}

/* ---- harness ----------------------------------------------------------- */

static void on_settled(void *arg) {
  (void)arg;
  F.nsettled++;
}

static void on_done(void *arg) {
  (void)arg;
  F.ndone++;
}

static void on_warn(appsrc_slot_t *s, const char *text, int once) {
  (void)s, (void)once;
  F.nwarn++;
  snprintf(F.warn, sizeof F.warn, "%s", text);
}

#define RUN_UNTIL(cond)                                                        \
  do {                                                                         \
    for (int i_ = 0; i_ < 100000 && !(cond); i_++) uv_run(&F.loop, UV_RUN_ONCE); \
    ck_assert_msg((cond), "never: %s", #cond);                                 \
  } while (0)

/* A session that wants the timeline, and the source switched on for it. */
static void setup(void) {
  memset(&F, 0, sizeof F);
  ck_assert_int_eq(uv_loop_init(&F.loop), 0);
  F.recorded = json_pack("[s]", "Dart");
  src = appsrc_timeline_new(&F.loop, &transport, on_settled, NULL);
  ck_assert_ptr_nonnull(src);
  memset(&slot, 0, sizeof slot);
  slot.base.want = slot.base.begun = 1;
  slot.base.warn = on_warn;
  appsrc_timeline_attach(src, &slot);
  for (int calls = 0; appsrc_timeline_step(src, 1); calls++) { /* flags, set, micros */
    int settled = F.nsettled;
    RUN_UNTIL(F.nsettled > settled);
    ck_assert_int_lt(calls, 5);
  }
  ck_assert_msg(slot.base.on, "the timeline is on for the session (%s)", F.warn);
}

static void teardown(void) {
  if (src) {
    appsrc_timeline_detach(src, &slot);
    appsrc_timeline_free(src);
  }
  uv_run(&F.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(uv_loop_close(&F.loop), 0);
  appsrc_tl_slot_close(&slot);
  json_decref(F.recorded);
  free(F.text);
}

static void pull_once(void) {
  int done = F.ndone;
  ck_assert_int_eq(appsrc_timeline_pull(src, 1, on_done, NULL), 1);
  ck_assert(appsrc_timeline_pulling(src));
  RUN_UNTIL(F.ndone > done);
  ck_assert(!appsrc_timeline_pulling(src));
}

/* ---- tests ------------------------------------------------------------- */

/* The same reply, parsed on the loop and read as text off it: the same
 * events reach the session; only the text's pull ends after its reply
 * callback returned, and is in flight until then. */
START_TEST(a_text_reply_is_read_off_the_loop_with_the_same_events) {
  F.text = timeline_text(3000, 2000);
  ck_assert_uint_gt(strlen(F.text), 300000);
  pull_once();
  ck_assert(F.done_in_reply); /* parsed on the loop: within its callback */
  size_t parsed = slot.n;
  ck_assert_uint_eq(parsed, 3000);
  appsrc_tl_slot_close(&slot);

  free(F.text);
  F.text = timeline_text(3000, 2000 + 3000 * 10000);
  F.as_text = 1;
  pull_once();
  ck_assert_msg(!F.done_in_reply, "a text reply is read on the thread pool, not in its callback");
  ck_assert_uint_eq(slot.n, 3000);
  ck_assert_int_eq(slot.ev[0].kind, VMTL_GC);
  ck_assert_int_eq(slot.ev[0].ts_us, 2000 + 3000 * 10000);
  ck_assert_int_eq(slot.ev[2999].ts_us, 2000 + 5999 * 10000);
  ck_assert_int_eq(slot.ev[2999].dur_us, 2000);
  ck_assert_str_eq(slot.ev[0].name, "CollectNewGeneration");
  ck_assert(!slot.base.dropped);
  /* The origin moved on with it: the next text pull reads only what is new
   * (the overlap's repeats are dropped by the parser's memory). */
  free(F.text);
  F.text = timeline_text(3010, 2000 + 3000 * 10000);
  pull_once();
  ck_assert_uint_eq(slot.n, 3010);
}
END_TEST

/* A text reply that is a JSON-RPC error (the VM's kInvalidTimelineRequest,
 * 114) is said as such; one that is not JSON ends the pull and the next one
 * still reads. */
START_TEST(a_text_reply_that_is_an_error_or_not_json_is_said_and_the_next_reads) {
  F.as_text = 1;
  F.text = strdup("{\"jsonrpc\":\"2.0\",\"error\":{\"code\":114,\"message\":\"Invalid timeline "
                  "request\"},\"id\":\"7\"}");
  pull_once();
  ck_assert_int_eq(F.nwarn, 1);
  ck_assert_msg(strstr(F.warn, "getVMTimeline answered 114 (Invalid timeline request)"), "%s", F.warn);
  ck_assert_int_eq(appsrc_timeline_pull(src, 1, on_done, NULL), 0); /* no more pulls */
  teardown();

  setup();
  F.as_text = 1;
  F.text = strdup("{\"jsonrpc\":\"2.0\",\"result\":{\"type\":\"Timeline\",\"traceEvents\":[");
  pull_once();
  ck_assert_uint_eq(slot.n, 0);
  ck_assert_int_eq(F.nwarn, 0);
  free(F.text);
  F.text = timeline_text(10, 2000);
  pull_once();
  ck_assert_uint_eq(slot.n, 10);
}
END_TEST

/* The source freed while a text reply is read: the pull never ends (its
 * owner is gone), and the loop runs until the worker has, with nothing left
 * behind (valgrind.test_appsrc_timeline). */
START_TEST(freed_while_a_text_reply_is_read) {
  F.as_text = 1;
  F.text = timeline_text(3000, 2000);
  F.free_in_reply = 1;
  ck_assert_int_eq(appsrc_timeline_pull(src, 1, on_done, NULL), 1);
  RUN_UNTIL(src == NULL);
  uv_run(&F.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(F.ndone, 0);
  ck_assert_uint_eq(slot.n, 0);
}
END_TEST

/* The timeline set back while a text reply is read: a set-back check
 * (getVMTimelineFlags) went out when the last session closed, a session
 * opened and pulled before it was answered, and the answer says none of our
 * streams is recorded any more, so the source forgets its state, parser
 * included, while the worker still reads with it. The parser is freed when
 * the worker ends, the pull's events still reach the session, and the
 * source starts afresh (it reads the flags again). */
START_TEST(set_back_while_a_text_reply_is_read) {
  slot.base.want = 0;
  F.hold_ctl = 1;
  ck_assert_int_eq(appsrc_timeline_step(src, 0), 1); /* the check, held */
  ck_assert_ptr_nonnull(F.ctl);
  json_decref(F.recorded);
  F.recorded = json_pack("[s]", "Dart"); /* another client took ours off */
  slot.base.want = 1;
  ck_assert_int_eq(appsrc_timeline_step(src, 1), 0);
  F.as_text = 1;
  F.text = timeline_text(3000, 2000);
  pull_once();
  ck_assert_ptr_null(F.ctl);
  ck_assert_int_eq(F.nsettled, 4);
  ck_assert_uint_eq(slot.n, 3000);
  ck_assert(!appsrc_timeline_pulling(src));
  ck_assert_int_eq(appsrc_timeline_pull(src, 1, on_done, NULL), 0); /* forgotten: not on */
  ck_assert_int_eq(appsrc_timeline_step(src, 1), 1);                 /* starts afresh */
  RUN_UNTIL(F.nsettled == 5);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("appsrc_timeline");
  TCase *tc = tcase_create("text");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, a_text_reply_is_read_off_the_loop_with_the_same_events);
  tcase_add_test(tc, a_text_reply_that_is_an_error_or_not_json_is_said_and_the_next_reads);
  tcase_add_test(tc, freed_while_a_text_reply_is_read);
  tcase_add_test(tc, set_back_while_a_text_reply_is_read);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
