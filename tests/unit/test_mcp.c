/* The MCP core fed lines directly, no loop: era negotiation, per-request
 * _meta, the async tool contract (deferred finish, progress, cancellation with
 * and without a hook, shutdown), batches holding async answers, text caps. A
 * fake tool stands in for frames_tool so calls can stay in flight; the real
 * tool is exercised by the transcript and client tests. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "frames_tool.h"
#include "mcp.h"

static json_t *out; /* every emitted message, parsed */
static mcp_session_t *s;
static json_t *schema;

/* The fake tool: answers at once or keeps the call for the test. */
static enum { FINISH_NOW, DEFER, DEFER_WITH_HOOK, HUGE_TEXT } mode;
static tool_call_t *held;
static int invoked, hook_calls;
static char seen_version[32];

static void emit(void *arg, const char *line, size_t len) {
  ck_assert_uint_eq(strlen(line), len);
  ck_assert_ptr_null(memchr(line, '\n', len)); /* one line per message */
  json_error_t e;
  json_t *m = json_loadb(line, len, 0, &e);
  ck_assert_msg(m != NULL, "emitted invalid JSON: %s", e.text);
  json_array_append_new(out, m);
}

static void hook(void *arg) {
  hook_calls++;
  ck_assert_ptr_eq(arg, held);
  tool_call_finish(held, json_object(), 0, NULL); /* a harmless no-op inside the hook */
  held = NULL;
}

static void fake_invoke(void *arg, tool_call_t *call, json_t *args) {
  invoked++;
  snprintf(seen_version, sizeof seen_version, "%s", tool_call_protocol_version(call));
  if (mode == FINISH_NOW) {
    tool_call_finish(call, json_pack("{s:s}", "action", "status"), 0, NULL);
  } else if (mode == HUGE_TEXT) {
    size_t n = 100000;
    char *big = malloc(n + 1);
    for (size_t i = 0; i < n; i += 2) big[i] = (char)0xc3, big[i + 1] = (char)0xa9; /* é × 50000 */
    big[n] = '\0';
    tool_call_finish(call, json_pack("{s:s}", "action", big), 0, NULL);
    free(big);
  } else {
    held = call;
    if (mode == DEFER_WITH_HOOK) tool_call_on_cancel(call, hook, call);
  }
}

static void setup(void) {
  out = json_array();
  s = mcp_session_new(emit, NULL);
  schema = frames_tool_input_schema_new();
  mcp_tool_t t = {FRAMES_TOOL_NAME, frames_tool_definition, schema, fake_invoke, NULL, NULL};
  ck_assert_int_eq(mcp_session_add_tool(s, &t), 0);
  mcp_session_set_instructions(s, "do the thing");
  mode = FINISH_NOW;
  held = NULL;
  invoked = hook_calls = 0;
}

static void teardown(void) {
  mcp_session_free(s);
  json_decref(out);
  json_decref(schema);
}

static void feed(const char *line) {
  mcp_session_handle_line(s, line, strlen(line));
}
static json_t *msg(size_t i) {
  return json_array_get(out, i);
}
static json_t *get(json_t *m, const char *path) { /* "a.b.c" */
  char buf[256];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *k = strtok(buf, "."); k && m; k = strtok(NULL, ".")) m = json_object_get(m, k);
  return m;
}
static void init(const char *version) {
  char line[256];
  snprintf(line, sizeof line,
           "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
           "\"protocolVersion\":\"%s\","
           "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"0\"}}}",
           version);
  feed(line);
}
#define CALL(id, args, meta)                                              \
  "{\"jsonrpc\":\"2.0\",\"id\":" id                                       \
  ",\"method\":\"tools/call\",\"params\":{\"name\":\"telescope_frames\"," \
  "\"arguments\":" args meta "}}"
#define MODERN_META                                                        \
  "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"," \
  "\"io.modelcontextprotocol/clientCapabilities\":{}}"

START_TEST(version_negotiation) {
  static const struct {
    const char *asked, *answered;
  } v[] = {{"2024-11-05", "2024-11-05"}, {"2025-03-26", "2025-03-26"}, {"2025-06-18", "2025-06-18"},
           {"2025-11-25", "2025-11-25"}, {"2026-07-28", "2025-11-25"}, {"1.0", "2025-11-25"}};
  for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
    init(v[i].asked);
    json_t *r = msg(json_array_size(out) - 1);
    ck_assert_str_eq(json_string_value(get(r, "result.protocolVersion")), v[i].answered);
    ck_assert_str_eq(mcp_session_protocol_version(s), v[i].answered);
    ck_assert_str_eq(json_string_value(get(r, "result.instructions")), "do the thing");
    ck_assert_ptr_null(get(r, "result.resultType"));
  }
}
END_TEST

START_TEST(fields_follow_the_era) {
  init("2024-11-05");
  feed("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
  json_t *tool = json_array_get(get(msg(1), "result.tools"), 0);
  ck_assert_ptr_nonnull(get(tool, "inputSchema"));
  ck_assert_ptr_null(get(tool, "annotations"));
  ck_assert_ptr_null(get(tool, "title"));
  ck_assert_ptr_null(get(tool, "outputSchema"));
  feed(CALL("2", "{}", ""));
  ck_assert_str_eq(seen_version, "2024-11-05");
  ck_assert_ptr_null(get(msg(2), "result.structuredContent"));
  ck_assert_str_eq(json_string_value(get(json_array_get(get(msg(2), "result.content"), 0), "text")),
                   "{\"action\":\"status\"}");
  init("2025-03-26");
  feed("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
  tool = json_array_get(get(msg(4), "result.tools"), 0);
  ck_assert_ptr_nonnull(get(tool, "annotations"));
  ck_assert_ptr_null(get(tool, "outputSchema"));
  init("2025-06-18");
  feed("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\"}");
  tool = json_array_get(get(msg(6), "result.tools"), 0);
  ck_assert_ptr_nonnull(get(tool, "outputSchema"));
  ck_assert_ptr_nonnull(get(tool, "title"));
  ck_assert(json_is_false(get(tool, "annotations.readOnlyHint")));
}
END_TEST

START_TEST(modern_request_is_stateless) {
  init("2024-11-05"); /* a legacy session does not change a modern request */
  feed("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{" MODERN_META "}}");
  json_t *r = msg(1);
  ck_assert_str_eq(json_string_value(get(r, "result.resultType")), "complete");
  ck_assert(json_is_integer(get(r, "result.ttlMs")));
  ck_assert_str_eq(json_string_value(get(r, "result.cacheScope")), "public");
  ck_assert_ptr_nonnull(get(json_array_get(get(r, "result.tools"), 0), "outputSchema"));
  feed(CALL("2", "{}", "," MODERN_META));
  ck_assert_str_eq(seen_version, "2026-07-28");
  ck_assert_str_eq(json_string_value(get(msg(2), "result.resultType")), "complete");
  ck_assert_ptr_nonnull(get(msg(2), "result.structuredContent"));
  /* -32022 for a version the modern path does not speak */
  feed(
      "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"params\":{\"_meta\":{"
      "\"io.modelcontextprotocol/protocolVersion\":\"2030-01-01\",\"io.modelcontextprotocol/"
      "clientCapabilities\":{}}}}");
  ck_assert_int_eq(json_integer_value(get(msg(3), "error.code")), -32022);
  ck_assert_str_eq(json_string_value(get(msg(3), "error.data.requested")), "2030-01-01");
  ck_assert_str_eq(json_string_value(json_array_get(get(msg(3), "error.data.supported"), 0)),
                   "2026-07-28");
  /* -32602 for a malformed _meta */
  feed(
      "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\",\"params\":{\"_meta\":{"
      "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}");
  ck_assert_int_eq(json_integer_value(get(msg(4), "error.code")), -32602);
  feed("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"server/discover\"}");
  ck_assert_str_eq(json_string_value(get(msg(5), "result.resultType")), "complete");
  json_t *info = json_object_get(get(msg(5), "result._meta"), "io.modelcontextprotocol/serverInfo");
  ck_assert_str_eq(json_string_value(json_object_get(info, "name")), "telescope-mcp");
  ck_assert_uint_eq(json_array_size(out), 6);
}
END_TEST

START_TEST(arguments_validated_before_the_tool) {
  init("2025-11-25");
  feed(CALL("1", "{\"limit\":5000}", ""));
  ck_assert_int_eq(invoked, 0);
  ck_assert(json_is_true(get(msg(1), "result.isError")));
  ck_assert_ptr_null(get(msg(1), "result.structuredContent"));
  ck_assert_str_eq(json_string_value(get(json_array_get(get(msg(1), "result.content"), 0), "text")),
                   "limit: must be an integer from 0 to 1000, got 5000");
  feed(
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/"
      "call\",\"params\":{\"name\":\"telescope_frames\"}}");
  ck_assert_int_eq(invoked, 1); /* absent arguments are {} */
}
END_TEST

START_TEST(deferred_finish_and_progress) {
  init("2025-11-25");
  mode = DEFER;
  feed(CALL("7", "{}", ",\"_meta\":{\"progressToken\":\"tok\"}"));
  ck_assert_ptr_nonnull(held);
  ck_assert_uint_eq(mcp_session_inflight(s), 1);
  ck_assert_uint_eq(json_array_size(out), 1); /* nothing yet */
  tool_call_progress(held, 1, 10, "one");
  tool_call_progress(held, 1, 10, "same again: dropped");
  tool_call_progress(held, 0.5, 10, "backwards: dropped");
  tool_call_progress(held, 2, 0, NULL);
  ck_assert_uint_eq(json_array_size(out), 3);
  ck_assert_str_eq(json_string_value(get(msg(1), "method")), "notifications/progress");
  ck_assert_str_eq(json_string_value(get(msg(1), "params.progressToken")), "tok");
  ck_assert(json_number_value(get(msg(1), "params.progress")) == 1);
  ck_assert_str_eq(json_string_value(get(msg(1), "params.message")), "one");
  ck_assert_ptr_null(get(msg(2), "params.total"));
  ck_assert_ptr_null(get(msg(2), "params.message"));
  tool_call_finish(held, json_pack("{s:s}", "action", "read"), 1,
                   json_pack("[{s:s,s:s}]", "type", "text", "text", "more"));
  held = NULL;
  ck_assert_uint_eq(mcp_session_inflight(s), 0);
  json_t *r = msg(3);
  ck_assert_int_eq(json_integer_value(get(r, "id")), 7);
  ck_assert(json_is_true(get(r, "result.isError")));
  ck_assert_uint_eq(json_array_size(get(r, "result.content")), 2);
  ck_assert_str_eq(json_string_value(get(json_array_get(get(r, "result.content"), 1), "text")),
                   "more");
  /* An integer token is echoed as an integer; no token → no progress. */
  feed(CALL("8", "{}", ",\"_meta\":{\"progressToken\":42}"));
  tool_call_progress(held, 1, 0, NULL);
  ck_assert(json_is_integer(get(msg(4), "params.progressToken")));
  tool_call_finish(held, NULL, 0, NULL);
  feed(CALL("9", "{}", ""));
  tool_call_progress(held, 1, 0, NULL);
  ck_assert_uint_eq(json_array_size(out), 6);
  tool_call_finish(held, NULL, 0, NULL);
  held = NULL;
  ck_assert_uint_eq(json_array_size(out), 7);
}
END_TEST

START_TEST(cancel_with_hook_sends_nothing) {
  init("2025-11-25");
  mode = DEFER_WITH_HOOK;
  feed(CALL("\"c1\"", "{}", ""));
  ck_assert_ptr_nonnull(held);
  feed(
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}"); /* other id */
  ck_assert_int_eq(hook_calls, 0);
  feed(
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
      "cancelled\",\"params\":{\"requestId\":\"c1\"}}");
  ck_assert_int_eq(hook_calls, 1);
  ck_assert_ptr_null(held);
  ck_assert_uint_eq(mcp_session_inflight(s), 0);
  ck_assert_uint_eq(json_array_size(out), 1); /* only the initialize answer */
}
END_TEST

START_TEST(cancel_without_hook_then_late_finish_is_silent) {
  init("2025-11-25");
  mode = DEFER;
  feed(CALL("3", "{}", ",\"_meta\":{\"progressToken\":3}"));
  tool_call_t *c = held;
  feed("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":3}}");
  ck_assert(tool_call_cancelled(c));
  tool_call_progress(c, 5, 0, NULL);
  tool_call_finish(c, json_object(), 0, NULL); /* frees; valgrind proves no leak */
  ck_assert_uint_eq(json_array_size(out), 1);
  /* The id is free again. */
  mode = FINISH_NOW;
  feed(CALL("3", "{}", ""));
  ck_assert_uint_eq(json_array_size(out), 2);
}
END_TEST

START_TEST(duplicate_inflight_id_rejected) {
  init("2025-11-25");
  mode = DEFER;
  feed(CALL("5", "{}", ""));
  tool_call_t *c = held;
  feed(CALL("5", "{}", ""));
  ck_assert_int_eq(json_integer_value(get(msg(1), "error.code")), -32600);
  ck_assert_int_eq(invoked, 1);
  tool_call_finish(c, NULL, 0, NULL);
  ck_assert_uint_eq(json_array_size(out), 3);
}
END_TEST

START_TEST(shutdown_cancels_everything) {
  init("2025-11-25");
  mode = DEFER_WITH_HOOK;
  feed(CALL("1", "{}", ""));
  mcp_session_cancel_all(s);
  ck_assert_int_eq(hook_calls, 1);
  ck_assert_uint_eq(mcp_session_inflight(s), 0);
  ck_assert_uint_eq(json_array_size(out), 1);
}
END_TEST

START_TEST(batch_waits_for_async_answers) {
  init("2025-03-26");
  mode = DEFER;
  feed("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}," CALL(
      "2", "{}",
      "") ","
          "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}]");
  ck_assert_uint_eq(json_array_size(out), 1); /* held until the call finishes */
  tool_call_finish(held, json_object(), 0, NULL);
  held = NULL;
  json_t *b = msg(1);
  ck_assert(json_is_array(b));
  ck_assert_uint_eq(json_array_size(b), 2);
  ck_assert_int_eq(json_integer_value(get(json_array_get(b, 1), "id")), 2);
  /* A batch of notifications only: nothing at all. */
  feed("[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}]");
  ck_assert_uint_eq(json_array_size(out), 2);
  /* Batches under any other revision: one -32600 without id. */
  init("2025-06-18");
  feed("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]");
  ck_assert_int_eq(json_integer_value(get(msg(3), "error.code")), -32600);
  ck_assert_ptr_null(get(msg(3), "id"));
}
END_TEST

START_TEST(text_is_capped_on_a_character_boundary) {
  init("2025-11-25");
  mode = HUGE_TEXT;
  feed(CALL("1", "{}", ""));
  const char *text =
      json_string_value(get(json_array_get(get(msg(1), "result.content"), 0), "text"));
  ck_assert_ptr_nonnull(text);
  ck_assert_uint_le(strlen(text), 64 * 1024);
  ck_assert_ptr_nonnull(strstr(text, "(truncated)"));
  /* structuredContent is not cut: it is the schema-checked value */
  ck_assert_uint_eq(strlen(json_string_value(get(msg(1), "result.structuredContent.action"))),
                    100000);
}
END_TEST

/* render_text: what the fake renderer saw, and what it returns. */
static enum { RENDER_SHORT, RENDER_NULL, RENDER_HUGE } render_mode;
static int render_calls, render_saw_error;
static char *fake_render(const json_t *structured, int is_error) {
  render_calls++;
  render_saw_error = is_error;
  if (render_mode == RENDER_NULL) return NULL; /* e.g. out of memory */
  if (render_mode == RENDER_HUGE) {
    char *big = malloc(70000 + 1);
    memset(big, 'x', 70000);
    big[70000] = 0;
    return big;
  }
  char buf[64];
  snprintf(buf, sizeof buf, "rendered %s",
           json_string_value(json_object_get(structured, "action")));
  return strdup(buf);
}
static void use_renderer(void) {
  mcp_session_free(s);
  json_array_clear(out);
  s = mcp_session_new(emit, NULL);
  mcp_tool_t t = {FRAMES_TOOL_NAME, frames_tool_definition, schema, fake_invoke, NULL, fake_render};
  ck_assert_int_eq(mcp_session_add_tool(s, &t), 0);
  render_calls = render_saw_error = 0;
  render_mode = RENDER_SHORT;
}
static const char *first_text(size_t i) {
  return json_string_value(get(json_array_get(get(msg(i), "result.content"), 0), "text"));
}

START_TEST(render_text_replaces_the_json_copy) {
  use_renderer();
  init("2025-06-18");
  feed(CALL("1", "{}", ""));
  ck_assert_int_eq(render_calls, 1);
  ck_assert_str_eq(first_text(1), "rendered status");
  ck_assert_uint_eq(json_array_size(get(msg(1), "result.content")), 1);
  ck_assert_str_eq(json_string_value(get(msg(1), "result.structuredContent.action")), "status");
  /* is_error reaches the renderer. */
  mode = DEFER;
  feed(CALL("2", "{}", ""));
  tool_call_finish(held, json_pack("{s:s}", "action", "read"), 1, NULL);
  ck_assert_int_eq(render_saw_error, 1);
  ck_assert_str_eq(first_text(2), "rendered read");
  ck_assert(json_is_true(get(msg(2), "result.isError")));
  /* A NULL from the renderer falls back to the compact JSON. */
  mode = FINISH_NOW;
  render_mode = RENDER_NULL;
  feed(CALL("3", "{}", ""));
  ck_assert_str_eq(first_text(3), "{\"action\":\"status\"}");
  /* The 64 KB cap holds for rendered text too. */
  render_mode = RENDER_HUGE;
  feed(CALL("4", "{}", ""));
  ck_assert_uint_le(strlen(first_text(4)), 64 * 1024);
  ck_assert_ptr_nonnull(strstr(first_text(4), "(truncated)"));
}
END_TEST

/* Before 2025-06-18 there is no structuredContent: the JSON text is the only
 * copy of the data, so the renderer is not used. */
START_TEST(render_text_not_used_without_structured_content) {
  use_renderer();
  init("2025-03-26");
  feed(CALL("1", "{}", ""));
  ck_assert_int_eq(render_calls, 0);
  ck_assert_str_eq(first_text(1), "{\"action\":\"status\"}");
  ck_assert_ptr_null(get(msg(1), "result.structuredContent"));
}
END_TEST

START_TEST(errors_and_oversize) {
  feed("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nope\"}");
  ck_assert_int_eq(json_integer_value(get(msg(0), "error.code")), -32601);
  feed("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}");
  ck_assert_int_eq(json_integer_value(get(msg(1), "error.code")), -32602);
  mcp_session_handle_oversize(s, 4096);
  ck_assert_int_eq(json_integer_value(get(msg(2), "error.code")), -32600);
  ck_assert_ptr_null(get(msg(2), "id"));
  mcp_session_handle_line(s, "{\"a\":\xff}", 7);
  ck_assert_int_eq(json_integer_value(get(msg(3), "error.code")), -32700);
  ck_assert_ptr_null(get(msg(3), "id"));
  feed("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/unknown\"}");
  ck_assert_uint_eq(json_array_size(out), 4);
}
END_TEST

int main(void) {
  Suite *su = suite_create("mcp");
  TCase *tc = tcase_create("mcp");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, version_negotiation);
  tcase_add_test(tc, fields_follow_the_era);
  tcase_add_test(tc, modern_request_is_stateless);
  tcase_add_test(tc, arguments_validated_before_the_tool);
  tcase_add_test(tc, deferred_finish_and_progress);
  tcase_add_test(tc, cancel_with_hook_sends_nothing);
  tcase_add_test(tc, cancel_without_hook_then_late_finish_is_silent);
  tcase_add_test(tc, duplicate_inflight_id_rejected);
  tcase_add_test(tc, shutdown_cancels_everything);
  tcase_add_test(tc, batch_waits_for_async_answers);
  tcase_add_test(tc, text_is_capped_on_a_character_boundary);
  tcase_add_test(tc, render_text_replaces_the_json_copy);
  tcase_add_test(tc, render_text_not_used_without_structured_content);
  tcase_add_test(tc, errors_and_oversize);
  suite_add_tcase(su, tc);
  SRunner *sr = srunner_create(su);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
