/* vm_uri: every form a user pastes normalises to the ws URI we dial; the
 * loopback policy and redaction hold; bad input gets a clear reason. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "vm_uri.h"

#define WS "ws://127.0.0.1:53166/EMYU73JbR-A=/ws"

static const struct {
  const char *input;
  const char *ws;
} forms[] = {
    {"http://127.0.0.1:53166/EMYU73JbR-A=/", WS},
    {"http://127.0.0.1:53166/EMYU73JbR-A=", WS}, /* web: no trailing slash */
    {"ws://127.0.0.1:53166/EMYU73JbR-A=/ws", WS},
    {"ws://127.0.0.1:53166/EMYU73JbR-A=/ws/", WS},
    {"HTTP://127.0.0.1:53166/EMYU73JbR-A=//", WS},
    {"ws://127.0.0.1:53166/EMYU73JbR-A=", WS}, /* DWDS without DDS */
    {"https://127.0.0.1:53166/EMYU73JbR-A=/", "wss://127.0.0.1:53166/EMYU73JbR-A=/ws"},
    {"wss://127.0.0.1:53166/EMYU73JbR-A=/ws", "wss://127.0.0.1:53166/EMYU73JbR-A=/ws"},
    /* --vmservice-out-file contents */
    {"ws://127.0.0.1:53166/EMYU73JbR-A=/ws\n", WS},
    {"  http://127.0.0.1:53166/EMYU73JbR-A=/ \r\n\n", WS},
    /* DevTools URLs */
    {"http://127.0.0.1:9101?uri=http://127.0.0.1:53166/EMYU73JbR-A=/", WS},
    {"http://127.0.0.1:9101/?uri=http%3A%2F%2F127.0.0.1%3A53166%2FEMYU73JbR-A%3D%2F", WS},
    {"http://127.0.0.1:9101/#/"
     "?theme=dark&uri=ws%3A%2F%2F127.0.0.1%3A53166%2FEMYU73JbR-A%3D%2Fws&ide=x",
     WS},
    {"http://127.0.0.1:9101/performance?ide=VSCode&uri=ws://127.0.0.1:53166/EMYU73JbR-A=/ws", WS},
    /* whole flutter run lines, both wordings */
    {"A Dart VM Service on sdk gphone64 arm64 is available at: "
     "http://127.0.0.1:53166/EMYU73JbR-A=/",
     WS},
    {"flutter: A Dart VM Service on macOS is available at: http://127.0.0.1:53166/EMYU73JbR-A=/\n",
     WS},
    {"An Observatory debugger and profiler on Chrome is available at: "
     "http://127.0.0.1:53166/EMYU73JbR-A=",
     WS},
    {"The Flutter DevTools debugger and profiler on macOS is available at:\n"
     "http://127.0.0.1:9101?uri=http://127.0.0.1:53166/EMYU73JbR-A=/",
     WS},
    {"Debug service listening on ws://127.0.0.1:53166/EMYU73JbR-A=/ws", WS},
    /* loopback spellings */
    {"http://localhost:53166/EMYU73JbR-A=/", "ws://localhost:53166/EMYU73JbR-A=/ws"},
    {"http://LocalHost:53166/EMYU73JbR-A=/", "ws://localhost:53166/EMYU73JbR-A=/ws"},
    {"http://[::1]:53166/EMYU73JbR-A=/", "ws://[::1]:53166/EMYU73JbR-A=/ws"},
    {"ws://127.9.8.7:1/EMYU73JbR-A=/ws", "ws://127.9.8.7:1/EMYU73JbR-A=/ws"},
    {"http://::1:53166/EMYU73JbR-A=/", "ws://[::1]:53166/EMYU73JbR-A=/ws"}, /* unbracketed */
    /* no auth code (--disable-service-auth-codes) */
    {"http://127.0.0.1:8181/", "ws://127.0.0.1:8181/ws"},
    /* JSON: --write-service-info, flutter run --machine's app.debugPort */
    {"{\"uri\":\"http://127.0.0.1:53166/EMYU73JbR-A=/\"}", WS},
    {" {\"uri\": \"http://127.0.0.1:53166/EMYU73JbR-A=/\"}\n", WS},
    {"[{\"event\":\"app.debugPort\",\"params\":{\"appId\":\"a1\",\"port\":53166,"
     "\"wsUri\":\"ws://127.0.0.1:53166/EMYU73JbR-A=/ws\",\"baseUri\":\"file:///x/\"}}]",
     WS},
    {"{\"event\":\"app.debugPort\",\"params\":{\"wsUri\":\"ws://127.0.0.1:53166/EMYU73JbR-A=/ws\"}}",
     WS},
    /* a whole --machine log: other events and plain lines before the port */
    {"Launching lib/main.dart on Linux in debug mode...\n"
     "[{\"event\":\"daemon.connected\",\"params\":{\"version\":\"0.6.1\",\"pid\":7}}]\n"
     "[{\"event\":\"app.start\",\"params\":{\"appId\":\"a1\",\"deviceId\":\"linux\"}}]\n"
     "[{\"event\":\"app.debugPort\",\"params\":{\"appId\":\"a1\",\"port\":53166,"
     "\"wsUri\":\"ws://127.0.0.1:53166/EMYU73JbR-A=/ws\"}}]\n",
     WS},
    /* the token is kept verbatim, including characters a decoder would touch */
    {"http://127.0.0.1:53166/a%2Bb-_=/", "ws://127.0.0.1:53166/a%2Bb-_=/ws"},
};

START_TEST(normalises_every_form) {
  vm_uri_t u;
  char err[256];
  int rc = vm_uri_parse(forms[_i].input, 0, &u, err, sizeof err);
  ck_assert_msg(rc == VM_URI_OK, "form %d (%s): %s", _i, forms[_i].input, err);
  ck_assert_str_eq(u.ws, forms[_i].ws);
  ck_assert(u.loopback);
}
END_TEST

START_TEST(fields_for_dialling) {
  vm_uri_t u;
  char err[256];
  ck_assert_int_eq(vm_uri_parse("http://[::1]:4242/T0K=/", 0, &u, err, sizeof err), VM_URI_OK);
  ck_assert_str_eq(u.host, "::1");
  ck_assert_int_eq(u.port, 4242);
  ck_assert_str_eq(u.path, "/T0K=/ws");
  ck_assert_int_eq(u.secure, 0);
  ck_assert_int_eq(vm_uri_parse("https://localhost/T0K=/", 0, &u, err, sizeof err), VM_URI_OK);
  ck_assert_int_eq(u.port, 443);
  ck_assert_int_eq(u.secure, 1);
  ck_assert_int_eq(vm_uri_parse("http://localhost/T0K=/", 0, &u, err, sizeof err), VM_URI_OK);
  ck_assert_int_eq(u.port, 80);
}
END_TEST

START_TEST(loopback_policy) {
  ck_assert(vm_uri_host_is_loopback("127.0.0.1"));
  ck_assert(vm_uri_host_is_loopback("127.255.255.254"));
  ck_assert(vm_uri_host_is_loopback("::1"));
  ck_assert(vm_uri_host_is_loopback("0:0:0:0:0:0:0:1"));
  ck_assert(vm_uri_host_is_loopback("::ffff:127.0.0.1"));
  ck_assert(vm_uri_host_is_loopback("LOCALHOST"));
  ck_assert(!vm_uri_host_is_loopback("10.0.0.1"));
  ck_assert(!vm_uri_host_is_loopback("128.0.0.1"));
  ck_assert(!vm_uri_host_is_loopback("127.0.0.1.evil.com"));
  ck_assert(!vm_uri_host_is_loopback("localhost.evil.com"));
  ck_assert(!vm_uri_host_is_loopback("::2"));
  ck_assert(!vm_uri_host_is_loopback("0.0.0.0"));
  ck_assert(!vm_uri_host_is_loopback(""));

  vm_uri_t u;
  char err[256];
  ck_assert_int_eq(vm_uri_parse("http://10.0.0.1:53166/EMYU73JbR-A=/", 0, &u, err, sizeof err),
                   VM_URI_REMOTE);
  ck_assert_ptr_nonnull(strstr(err, "10.0.0.1"));
  ck_assert_ptr_nonnull(strstr(err, "--allow-remote"));
  ck_assert_ptr_null(strstr(err, "EMYU73JbR-A="));
  ck_assert_int_eq(vm_uri_parse("http://[fe80::1]:1/T=/", 0, &u, err, sizeof err), VM_URI_REMOTE);
  ck_assert_int_eq(vm_uri_parse("http://example.com:1/T=/", 0, &u, err, sizeof err), VM_URI_REMOTE);
  /* A DevTools page on loopback must not smuggle in a remote VM. */
  ck_assert_int_eq(
      vm_uri_parse("http://127.0.0.1:9101?uri=http://10.1.2.3:5/T=/", 0, &u, err, sizeof err),
      VM_URI_REMOTE);
  /* JSON is held to the same policy as text. */
  ck_assert_int_eq(vm_uri_parse("{\"uri\":\"http://10.0.0.1:5/T=/\"}", 0, &u, err, sizeof err),
                   VM_URI_REMOTE);
  /* allowed with allow_remote */
  ck_assert_int_eq(vm_uri_parse("http://10.0.0.1:53166/EMYU73JbR-A=/", 1, &u, err, sizeof err),
                   VM_URI_OK);
  ck_assert_str_eq(u.ws, "ws://10.0.0.1:53166/EMYU73JbR-A=/ws");
  ck_assert_int_eq(u.loopback, 0);
}
END_TEST

static const struct {
  const char *input;
  const char *reason; /* a substring of the error */
} bad[] = {
    {"", "empty"},
    {"   \n\t", "empty"},
    {"127.0.0.1:53166/EMYU73JbR-A=/", "no scheme"},
    {"ftp://127.0.0.1:53166/T=/", "scheme must be"},
    {"http:///T=/", "no host"},
    {"http://:53166/T=/", "no host"},
    {"http://127.0.0.1:/T=/", "empty port"},
    {"http://127.0.0.1:0/T=/", "bad port"},
    {"http://127.0.0.1:65536/T=/", "bad port"},
    {"http://127.0.0.1:99999999999999999999/T=/", "bad port"},
    {"http://127.0.0.1:12ab/T=/", "bad port"},
    {"http://[::1/T=/", "unclosed"},
    {"http://[zz::1]:5/T=/", "invalid IPv6"},
    {"http://fe80::zz:5/T=/", "without [brackets]"},
    {"http://a:b:c/T=/", "without [brackets]"},
    {"http://user@127.0.0.1:5/T=/", "user info"},
    {"http://127.0.0.1:5/T=\"/", "quote"},
    {"http://127.0.0.1:9101?uri=", "no scheme"},
    {"just some words", "no scheme"},
    {"{\"pid\": 7}", "JSON without a VM-service URI"},
    {"[{\"event\":\"app.start\",\"params\":{\"appId\":\"a1\"}}]\n", "JSON without"},
};

START_TEST(malformed_inputs_are_named) {
  vm_uri_t u;
  char err[256] = "";
  int rc = vm_uri_parse(bad[_i].input, 0, &u, err, sizeof err);
  ck_assert_msg(rc == VM_URI_MALFORMED, "bad %d (%s) gave %d", _i, bad[_i].input, rc);
  ck_assert_msg(strstr(err, bad[_i].reason) != NULL, "bad %d: '%s' lacks '%s'", _i, err,
                bad[_i].reason);
}
END_TEST

/* The uri= value of a DevTools URL is percent-decoded once, leniently: a '%'
 * not followed by two hex digits stays as it is, '+' stays '+' (it is not
 * form-decoded to a space), %2B gives '+', %25 gives a '%' that is not
 * decoded again, and %00 ends the value. (libwebsockets' lws_urldecode
 * differs on the first two points; see vm_uri.c.) */
#define DT "http://127.0.0.1:9101/?uri="
static const struct {
  const char *input;
  const char *ws; /* NULL: refused, with reason */
  const char *reason;
} escapes[] = {
    {DT "http%3a%2f%2f127.0.0.1%3a53166%2fEMYU73JbR-A%3d%2f", WS, NULL}, /* lower-case hex */
    {DT "http%3A%2F%2F127.0.0.1%3A53166%2FT%3", "ws://127.0.0.1:53166/T%3/ws", NULL},
    {DT "http%3A%2F%2F127.0.0.1%3A53166%2FT%", "ws://127.0.0.1:53166/T%/ws", NULL},
    {DT "http%3A%2F%2F127.0.0.1%3A53166%2FT%zz%3D%2F", "ws://127.0.0.1:53166/T%zz=/ws", NULL},
    {DT "http%3A%2F%2F127.0.0.1%3A53166%2FT%4g%3D", "ws://127.0.0.1:53166/T%4g=/ws", NULL},
    {DT "http%3A%2F%2F127.0.0.1%3A53166%2Fa+b%3D%2F", "ws://127.0.0.1:53166/a+b=/ws", NULL},
    {DT "http://127.0.0.1:53166/a+b=/", "ws://127.0.0.1:53166/a+b=/ws", NULL},
    {DT "http%3A%2F%2F127.0.0.1%3A53166%2Fa%2Bb%3D%2F", "ws://127.0.0.1:53166/a+b=/ws", NULL},
    {DT "http%3A%2F%2F127.0.0.1%3A53166%2Fa%2541%3D", "ws://127.0.0.1:53166/a%41=/ws", NULL},
    {DT "http%3A%2F%2F127.0.0.1%3A53166%2FT%3D%00junk", "ws://127.0.0.1:53166/T=/ws", NULL},
    {DT "http%3A%2F%2F127.0.0.1%3A53166%2FT%3D&x=%zz", "ws://127.0.0.1:53166/T=/ws", NULL},
    {DT "%", NULL, "no scheme"},
    {DT "http%3A%2F%2F127.0.0.1%3A53166%2FT%20U%3D", NULL, "space"},
    {DT "http%3A%2F%2F127.0.0.1%3A53166%2FT%0A%3D", NULL, "control character"},
    {DT "http%3A%2F%2F127.0.0.1%253A53166%2FT%3D", NULL, "host has invalid characters"},
};

START_TEST(devtools_uri_escapes) {
  vm_uri_t u;
  char err[256] = "";
  int rc = vm_uri_parse(escapes[_i].input, 0, &u, err, sizeof err);
  if (escapes[_i].ws) {
    ck_assert_msg(rc == VM_URI_OK, "escape %d (%s): %s", _i, escapes[_i].input, err);
    ck_assert_str_eq(u.ws, escapes[_i].ws);
  } else {
    ck_assert_msg(rc == VM_URI_MALFORMED, "escape %d (%s) gave %d (%s)", _i,
                  escapes[_i].input, rc, u.ws);
    ck_assert_msg(strstr(err, escapes[_i].reason) != NULL, "escape %d: '%s' lacks '%s'", _i, err,
                  escapes[_i].reason);
  }
}
END_TEST

START_TEST(null_and_too_long) {
  vm_uri_t u;
  char err[256];
  ck_assert_int_eq(vm_uri_parse(NULL, 0, &u, err, sizeof err), VM_URI_MALFORMED);
  size_t n = VM_URI_MAX + 100;
  char *big = malloc(n + 1);
  strcpy(big, "http://127.0.0.1:5/");
  memset(big + strlen(big), 'a', n - strlen(big));
  big[n] = '\0';
  ck_assert_int_eq(vm_uri_parse(big, 0, &u, err, sizeof err), VM_URI_MALFORMED);
  ck_assert_ptr_nonnull(strstr(err, "too long"));
  free(big);
}
END_TEST

START_TEST(redaction_never_leaves_the_token) {
  static const char *tokens[] = {"EMYU73JbR-A=", "a%2Bb-_=", "x", "ws1="};
  for (size_t t = 0; t < sizeof tokens / sizeof *tokens; t++) {
    char in[256], out[256];
    snprintf(in, sizeof in, "http://127.0.0.1:53166/%s/", tokens[t]);
    vm_uri_t u;
    char err[256];
    ck_assert_int_eq(vm_uri_parse(in, 0, &u, err, sizeof err), VM_URI_OK);
    vm_uri_redact(u.ws, out, sizeof out);
    ck_assert_str_eq(out, "ws://127.0.0.1:53166/\xe2\x80\xa6redacted\xe2\x80\xa6/ws");
    ck_assert_ptr_null(strstr(out, tokens[t]));
    /* the same text the log redactor makes of it */
    char logged[256];
    log_redact(u.ws, logged, sizeof logged);
    ck_assert_str_eq(out, logged);
  }
  char out[128];
  /* a multi-segment token is redacted whole */
  vm_uri_redact("ws://127.0.0.1:5/abc/def/ws", out, sizeof out);
  ck_assert_ptr_null(strstr(out, "abc"));
  ck_assert_ptr_null(strstr(out, "def"));
  /* no token: nothing to hide */
  vm_uri_redact("ws://127.0.0.1:5/ws", out, sizeof out);
  ck_assert_str_eq(out, "ws://127.0.0.1:5/ws");
  /* truncation still never shows the token */
  vm_uri_redact("ws://127.0.0.1:5/SECRET=/ws", out, 20);
  ck_assert_ptr_null(strstr(out, "SECRET"));
  vm_uri_redact("garbage SECRET", out, sizeof out);
  ck_assert_ptr_null(strstr(out, "SECRET"));
}
END_TEST

int main(void) {
  Suite *s = suite_create("vm_uri");
  TCase *tc = tcase_create("parse");
  tcase_add_loop_test(tc, normalises_every_form, 0, (int)(sizeof forms / sizeof *forms));
  tcase_add_test(tc, fields_for_dialling);
  tcase_add_test(tc, loopback_policy);
  tcase_add_loop_test(tc, malformed_inputs_are_named, 0, (int)(sizeof bad / sizeof *bad));
  tcase_add_loop_test(tc, devtools_uri_escapes, 0, (int)(sizeof escapes / sizeof *escapes));
  tcase_add_test(tc, null_and_too_long);
  tcase_add_test(tc, redaction_never_leaves_the_token);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
