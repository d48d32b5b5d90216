/* vm_client's pure parts, reached by including the .c (h2o style): the
 * allowlist, the streaming id scanner, the bounded reassembly buffer and the
 * reply/event classification. No loop, no socket. */
#include "../../server/vm_client.c"

#include <check.h>

START_TEST(allowlist_is_exact) {
  static const char *ok[] = {"getVersion",
                             "getVM",
                             "getIsolate",
                             "streamListen",
                             "streamCancel",
                             "_flutter.listViews",
                             "ext.telescope.frames",
                             "ext.flutter.profileWidgetBuilds",
                             "ext.flutter.profileRenderObjectLayouts",
                             "ext.flutter.profileRenderObjectPaints",
                             "ext.flutter.inspector.trackRebuildDirtyWidgets",
                             "ext.flutter.inspector.widgetLocationIdMap",
                             "ext.ui.window.scheduleFrame",
                             "getVMTimelineFlags",
                             "setVMTimelineFlags",
                             "getVMTimeline",
                             "getVMTimelineMicros",
                             "getCpuSamples",
                             "getRegisteredServices"};
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) ck_assert(vm_client_method_allowed(ok[i]));
  static const char *no[] = {"evaluate",
                             "invoke",
                             "kill",
                             "reloadSources",
                             "resume",
                             "ext.flutter.reassemble",
                             "ext.telescope.framesX",
                             "getVersio",
                             "",
                             "_flutter.runInView",
                             "ext.telescope",
                             "clearVMTimeline",
                             "getPerfettoVMTimeline",
                             "ext.ui.window.reinitializeShader",
                             "ConnectedApp.getVmServices",
                             "ConnectedApp.registerVmService",
                             "ConnectedApp.unregisterVmService",
                             "postEvent"};
  for (size_t i = 0; i < sizeof no / sizeof *no; i++) ck_assert(!vm_client_method_allowed(no[i]));
  ck_assert(!vm_client_method_allowed(NULL));
}
END_TEST

static const char *scan_all(const char *text, size_t chunk, vm_idscan_t *s) {
  memset(s, 0, sizeof *s);
  size_t n = strlen(text);
  for (size_t i = 0; i < n; i += chunk) vm_idscan_feed(s, text + i, n - i < chunk ? n - i : chunk);
  return s->found ? s->id : NULL;
}

START_TEST(idscan_finds_top_level_id_in_any_chunking) {
  static const struct {
    const char *text, *id;
  } cases[] = {
      {"{\"jsonrpc\":\"2.0\",\"result\":{\"id\":\"inner\",\"x\":[1,{\"id\":\"deep\"}]},\"id\":"
       "\"17\"}",
       "17"},
      {"{\"id\":\"5\",\"result\":{}}", "5"},
      {"{\"jsonrpc\":\"2.0\", \"result\":{\"s\":\"a \\\"id\\\":\\\"9\\\" b\"},\"id\" : 42}", "42"},
      {"{\"error\":{\"code\":-32000},\"id\":\"x\\\"y\"}", "x\"y"},
      {"{\"jsonrpc\":\"2.0\",\"result\":{\"records\":[\"", NULL}, /* truncated, id never came */
      {"{\"idx\":\"1\",\"di\":\"2\"}", NULL},
      {"[{\"id\":\"1\"}]", NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    for (size_t chunk = 1; chunk <= 7; chunk += 3) {
      vm_idscan_t s;
      const char *id = scan_all(cases[i].text, chunk, &s);
      if (cases[i].id)
        ck_assert_msg(id && strcmp(id, cases[i].id) == 0, "case %zu chunk %zu got %s", i, chunk,
                      id ? id : "(none)");
      else
        ck_assert_msg(id == NULL, "case %zu chunk %zu found %s", i, chunk, id);
    }
}
END_TEST

/* An id as long as the scanner keeps (sizeof id - 1 characters) is kept
 * whole, written as a string or as a number alike; a longer one is cut to
 * that length in both forms. */
START_TEST(idscan_keeps_the_longest_id_whole_as_string_or_number) {
  vm_idscan_t s;
  char digits[sizeof s.id + 2], text[128];
  for (size_t len = sizeof s.id - 2; len <= sizeof s.id; len++) {
    for (size_t k = 0; k < len; k++) digits[k] = (char)('1' + k % 9);
    digits[len] = '\0';
    size_t kept = len < sizeof s.id - 1 ? len : sizeof s.id - 1;
    for (int quoted = 0; quoted < 2; quoted++) {
      snprintf(text, sizeof text, "{\"result\":{},\"id\":%s%s%s}", quoted ? "\"" : "", digits,
               quoted ? "\"" : "");
      const char *id = scan_all(text, 3, &s);
      ck_assert_msg(id != NULL, "%s: no id", text);
      ck_assert_uint_eq(strlen(id), kept);
      ck_assert_int_eq(strncmp(id, digits, kept), 0);
    }
  }
}
END_TEST

START_TEST(rxbuf_reassembles_fragments) {
  vm_rxbuf_t rx = {0};
  rx.limit = 1024;
  ck_assert_int_eq(vm_rxbuf_feed(&rx, "{\"id\":", 6, 0), VM_RX_MORE);
  ck_assert_int_eq(vm_rxbuf_feed(&rx, "\"1\",", 4, 0), VM_RX_MORE);
  ck_assert_int_eq(vm_rxbuf_feed(&rx, "\"result\":{}}", 12, 1), VM_RX_MESSAGE);
  ck_assert_str_eq(rx.buf, "{\"id\":\"1\",\"result\":{}}");
  ck_assert_uint_eq(rx.len, 22);
  vm_rxbuf_reset(&rx);
  /* the next message starts clean */
  ck_assert_int_eq(vm_rxbuf_feed(&rx, "{}", 2, 1), VM_RX_MESSAGE);
  ck_assert_str_eq(rx.buf, "{}");
  vm_rxbuf_reset(&rx);
  vm_rxbuf_free(&rx);
}
END_TEST

/* A whole message's id is known when it ends, found fragment by fragment as
 * it came: the client never scans a large reply again at its end. With the
 * id last (as the VM sends it), after a nested "id" that is not the
 * message's, and with the next message's id found afresh. */
START_TEST(rxbuf_finds_the_id_as_fragments_come) {
  vm_rxbuf_t rx = {0};
  rx.limit = 1 << 20;
  ck_assert_int_eq(vm_rxbuf_feed(&rx, "{\"jsonrpc\":\"2.0\",\"result\":{\"id\":\"x\",", 36, 0),
                   VM_RX_MORE);
  ck_assert(!rx.scan.found);
  ck_assert_int_eq(vm_rxbuf_feed(&rx, "\"functions\":[]},\"i", 18, 0), VM_RX_MORE);
  ck_assert_int_eq(vm_rxbuf_feed(&rx, "d\":\"4", 5, 0), VM_RX_MORE);
  ck_assert(!rx.scan.found);
  ck_assert_int_eq(vm_rxbuf_feed(&rx, "2\"}", 3, 1), VM_RX_MESSAGE);
  ck_assert(rx.scan.found);
  ck_assert_str_eq(rx.scan.id, "42");
  vm_rxbuf_reset(&rx);
  ck_assert_int_eq(vm_rxbuf_feed(&rx, "{\"id\":7,\"result\":{}}", 20, 1), VM_RX_MESSAGE);
  ck_assert(rx.scan.found);
  ck_assert_str_eq(rx.scan.id, "7");
  vm_rxbuf_reset(&rx);
  ck_assert_int_eq(vm_rxbuf_feed(&rx, "{\"method\":\"streamNotify\"}", 25, 1), VM_RX_MESSAGE);
  ck_assert(!rx.scan.found); /* an event: no id */
  vm_rxbuf_reset(&rx);
  vm_rxbuf_free(&rx);
}
END_TEST

/* A reply handed over as text, read off the loop: its result, or why not. */
START_TEST(text_replies_read_to_their_result_or_why_not) {
  const json_t *result;
  int rpc = -1;
  char err[200];
  json_t *msg = vm_wire_read_text(strdup("{\"jsonrpc\":\"2.0\",\"result\":{\"type\":\"Timeline\"},"
                                         "\"id\":\"3\"}"),
                                  55, &result, &rpc, err, sizeof err);
  ck_assert_ptr_nonnull(result);
  ck_assert_str_eq(json_string_value(json_object_get(result, "type")), "Timeline");
  ck_assert_int_eq(rpc, 0);
  ck_assert_str_eq(err, "");
  json_decref(msg);
  msg = vm_wire_read_text(strdup("{\"error\":{\"code\":114,\"message\":\"Invalid timeline request\"},"
                                 "\"id\":\"3\"}"),
                          68, &result, &rpc, err, sizeof err);
  ck_assert_ptr_null(result);
  ck_assert_int_eq(rpc, 114);
  ck_assert_str_eq(err, "Invalid timeline request");
  json_decref(msg);
  msg = vm_wire_read_text(strdup("{\"result\":{"), 11, &result, &rpc, err, sizeof err);
  ck_assert_ptr_null(msg);
  ck_assert_ptr_null(result);
  ck_assert_int_eq(rpc, 0);
  ck_assert_msg(strstr(err, "not valid JSON") != NULL, "%s", err);
  msg = vm_wire_read_text(strdup("{\"id\":\"3\"}"), 10, &result, &rpc, err, sizeof err);
  ck_assert_ptr_null(result);
  ck_assert_str_eq(err, "the reply had no result");
  json_decref(msg);
}
END_TEST

START_TEST(rxbuf_over_limit_drops_and_stays_bounded) {
  vm_rxbuf_t rx = {0};
  rx.limit = 100;
  char chunk[64];
  memset(chunk, 'a', sizeof chunk);
  ck_assert_int_eq(vm_rxbuf_feed(&rx, "{\"result\":\"", 11, 0), VM_RX_MORE);
  for (int i = 0; i < 1000; i++) {
    ck_assert_int_eq(vm_rxbuf_feed(&rx, chunk, sizeof chunk, 0), VM_RX_MORE);
    ck_assert(rx.cap <= rx.limit + 1); /* never holds more than the limit */
  }
  ck_assert_ptr_null(rx.buf);
  ck_assert_int_eq(vm_rxbuf_feed(&rx, "\",\"id\":\"77\"}", 12, 1), VM_RX_OVERSIZE);
  ck_assert(rx.scan.found);
  ck_assert_str_eq(rx.scan.id, "77");
  ck_assert_uint_eq(rx.total, 11 + 64 * 1000 + 12);
  vm_rxbuf_reset(&rx);
  /* a message just at the limit still passes */
  char exact[101];
  memset(exact, ' ', 100);
  exact[0] = '{';
  exact[99] = '}';
  exact[100] = '\0';
  ck_assert_int_eq(vm_rxbuf_feed(&rx, exact, 100, 1), VM_RX_MESSAGE);
  vm_rxbuf_reset(&rx);
  ck_assert_int_eq(vm_rxbuf_feed(&rx, exact, 100, 0), VM_RX_MORE);
  ck_assert_int_eq(vm_rxbuf_feed(&rx, " ", 1, 1), VM_RX_OVERSIZE);
  vm_rxbuf_reset(&rx);
  vm_rxbuf_free(&rx);
}
END_TEST

START_TEST(classify_replies_and_events) {
  char id[40];
  json_t *m =
      json_loads("{\"jsonrpc\":\"2.0\",\"result\":{\"type\":\"Version\"},\"id\":\"3\"}", 0, NULL);
  ck_assert_int_eq(vm_msg_classify(m, id, sizeof id), VM_MSG_REPLY);
  ck_assert_str_eq(id, "3");
  json_decref(m);
  m = json_loads("{\"error\":{\"code\":-32601,\"message\":\"x\"},\"id\":12}", 0, NULL);
  ck_assert_int_eq(vm_msg_classify(m, id, sizeof id), VM_MSG_REPLY);
  ck_assert_str_eq(id, "12");
  json_decref(m);
  m = json_loads(
      "{\"jsonrpc\":\"2.0\",\"method\":\"streamNotify\",\"params\":{\"streamId\":\"Debug\","
      "\"event\":{\"kind\":\"Resume\"}}}",
      0, NULL);
  ck_assert_int_eq(vm_msg_classify(m, id, sizeof id), VM_MSG_EVENT);
  json_decref(m);
  static const char *other[] = {
      "[]",
      "{\"id\":\"1\"}",
      "{\"result\":{},\"id\":[1]}",
      "{\"result\":{},\"id\":null}",
      "{\"method\":\"streamNotify\",\"params\":{\"streamId\":1,\"event\":{}}}",
      "{\"method\":\"streamNotify\"}"};
  for (size_t i = 0; i < sizeof other / sizeof *other; i++) {
    m = json_loads(other[i], 0, NULL);
    ck_assert_ptr_nonnull(m);
    ck_assert_msg(vm_msg_classify(m, id, sizeof id) == VM_MSG_OTHER, "%s", other[i]);
    json_decref(m);
  }
}
END_TEST

/* Where a hand-over sends us: a relative Location is resolved against the
 * URI dialled, an http DDS URI is normalised to its ws form, a
 * non-loopback one is refused unless allowed, and hops are bounded. */
/* Where a reply's result.records array lies, or 0: only at that place,
 * only once, only an array, never behind a member name with an escape. */
START_TEST(records_span_found_only_at_result_records) {
  static const struct {
    const char *text;
    const char *want; /* the span's text, NULL: not found */
  } cases[] = {
      {"{\"jsonrpc\":\"2.0\",\"result\":{\"a\":1,\"records\":[[1,[2]],[3]],\"b\":\"]\"},\"id\":\"7\"}",
       "[[1,[2]],[3]]"},
      {" { \"result\" : { \"records\" :\n [ ] } , \"id\" : 1 } ", "[ ]"},
      /* brackets and quotes inside strings do not count */
      {"{\"result\":{\"x\":\"[\\\"{\",\"records\":[\"]\",\"\\\"]\"]},\"id\":1}",
       "[\"]\",\"\\\"]\"]"},
      {"{\"result\":{\"records\":{}},\"id\":1}", NULL},          /* not an array */
      {"{\"result\":{\"records\":[1],\"records\":[2]},\"id\":1}", NULL}, /* twice */
      {"{\"result\":{\"records\":[1]},\"result\":{},\"id\":1}", NULL},   /* result twice */
      {"{\"result\":{\"rec\\u006frds\":[1]},\"id\":1}", NULL},   /* an escape in a name */
      {"{\"result\":{\"inner\":{\"records\":[1]}},\"id\":1}", NULL}, /* too deep */
      {"{\"params\":{\"records\":[1]},\"id\":1}", NULL},          /* not the result */
      {"{\"result\":[{\"records\":[1]}],\"id\":1}", NULL},        /* result not an object */
      {"[{\"result\":{\"records\":[1]}}]", NULL},                  /* a batch */
      {"{\"result\":{\"records\":[1,2}", NULL},                    /* cut short */
      {"{\"result\":{\"records\":[1]}}}", NULL},                   /* one close too many */
      {"{\"result\":{\"records\":[\"]}}", NULL},                  /* ends inside a string */
      {"{\"result\":{\"note\":\"records\",\"x\":[1]},\"id\":1}", NULL}, /* a value */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    size_t at = 99, len = 99, n = strlen(cases[i].text);
    int got = vm_wire_records_span(cases[i].text, n, &at, &len);
    ck_assert_msg(got == (cases[i].want != NULL), "case %zu: %d", i, got);
    if (!cases[i].want) continue;
    ck_assert_msg(len == strlen(cases[i].want) && !memcmp(cases[i].text + at, cases[i].want, len),
                  "case %zu: %.*s", i, (int)len, cases[i].text + at);
    /* The cut: the records, then the message with "[]" in their place. */
    size_t rest, rl;
    char *b = vm_wire_cut_records(cases[i].text, n, &rest, &rl);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(rl, len);
    ck_assert_uint_eq(rest, n - len + 2);
    const char *m = b + len;
    ck_assert(!memcmp(b, cases[i].want, len) && !memcmp(m, cases[i].text, at) &&
              !memcmp(m + at, "[]", 2) && !memcmp(m + at + 2, cases[i].text + at + len, n - at - len));
    free(b);
  }
}
END_TEST

START_TEST(follow_targets_are_resolved_and_policed) {
  vm_handover_t c;
  memset(&c, 0, sizeof c);
  char err[256];
  ck_assert_int_eq(vm_uri_parse("ws://127.0.0.1:5000/AAAAAAAAAAA=/ws", 0, &c.dial, err, sizeof err),
                   VM_URI_OK);
  ck_assert_int_eq(vm_handover_follow(&c, "/AAAAAAAAAAA=/", "test"), 0);
  ck_assert_str_eq(c.follow, "ws://127.0.0.1:5000/AAAAAAAAAAA=/ws");
  ck_assert_int_eq(vm_handover_follow(&c, "http://127.0.0.1:6000/BBBBBBBBBBB=/", "test"), 0);
  ck_assert_str_eq(c.follow, "ws://127.0.0.1:6000/BBBBBBBBBBB=/ws");
  c.follow[0] = '\0';
  c.hops = 0;
  ck_assert_int_eq(vm_handover_follow(&c, "http://192.0.2.1:6000/BBBBBBBBBBB=/", "redirected"), -1);
  ck_assert_str_eq(c.follow, "");
  ck_assert_ptr_nonnull(strstr(c.follow_err, "not loopback"));
  ck_assert_ptr_null(strstr(c.follow_err, "BBBBBBBBBBB="));
  c.allow_remote = 1;
  c.hops = 0;
  ck_assert_int_eq(vm_handover_follow(&c, "http://192.0.2.1:6000/BBBBBBBBBBB=/", "redirected"), 0);
  /* a loop of redirects ends */
  c.hops = 0;
  int rc = 0;
  for (int i = 0; i <= VM_HANDOVER_MAX_HOPS && rc == 0; i++) rc = vm_handover_follow(&c, "/AAAAAAAAAAA=/", "loop");
  ck_assert_int_eq(rc, -1);
  ck_assert_ptr_nonnull(strstr(c.follow_err, "hand-overs"));
}
END_TEST

int main(void) {
  Suite *s = suite_create("vm_client_pure");
  TCase *tc = tcase_create("pure");
  tcase_add_test(tc, allowlist_is_exact);
  tcase_add_test(tc, idscan_finds_top_level_id_in_any_chunking);
  tcase_add_test(tc, idscan_keeps_the_longest_id_whole_as_string_or_number);
  tcase_add_test(tc, rxbuf_reassembles_fragments);
  tcase_add_test(tc, rxbuf_finds_the_id_as_fragments_come);
  tcase_add_test(tc, text_replies_read_to_their_result_or_why_not);
  tcase_add_test(tc, rxbuf_over_limit_drops_and_stays_bounded);
  tcase_add_test(tc, classify_replies_and_events);
  tcase_add_test(tc, follow_targets_are_resolved_and_policed);
  tcase_add_test(tc, records_span_found_only_at_result_records);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
