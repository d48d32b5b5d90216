/* dtd_wire: the Dart Tooling Daemon's URI in every form a user pastes, its
 * getRegisteredServices / getVmServices replies and ConnectedApp events as
 * pkg/dtd_impl sends them (docs/flutter-apis.md, "The Dart Tooling Daemon"),
 * and the answer's dtd line. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtd_wire.h"

#define DTD "ws://127.0.0.1:62925/cKB5QFiAUNM="

static const struct {
  const char *input;
  const char *ws;
} forms[] = {
    {DTD, DTD},
    {"  " DTD "\n", DTD},
    /* what `flutter run --print-dtd` and `dart tooling-daemon` print */
    {"The Dart Tooling Daemon is available at: " DTD, DTD},
    {"The Dart Tooling Daemon is listening on " DTD "\nTrusted Client Secret: abc=", DTD},
    {"{\"tooling_daemon_details\":{\"uri\":\"" DTD "\",\"trusted_client_secret\":\"x\"}}", DTD},
    /* the path is dialled as printed: no "/ws" is added, one typed stays */
    {DTD "/ws", DTD "/ws"},
    {"http://127.0.0.1:62925/cKB5QFiAUNM=", DTD},
    {"wss://localhost:62925/cKB5QFiAUNM=", "wss://localhost:62925/cKB5QFiAUNM="},
    /* --disable-service-auth-codes: no auth code */
    {"ws://127.0.0.1:62925", "ws://127.0.0.1:62925"},
};

START_TEST(dtd_uri_forms) {
  vm_uri_t u;
  char err[256] = "";
  ck_assert_int_eq(dtd_wire_parse_uri(forms[_i].input, 0, &u, err, sizeof err), VM_URI_OK);
  ck_assert_str_eq(u.ws, forms[_i].ws);
  ck_assert_int_eq(u.port, 62925);
}
END_TEST

START_TEST(dtd_uri_refusals) {
  vm_uri_t u;
  char err[256] = "";
  ck_assert_int_eq(dtd_wire_parse_uri("ws://192.0.2.1:4000/cKB5QFiAUNM=", 0, &u, err, sizeof err),
                   VM_URI_REMOTE);
  ck_assert_ptr_null(strstr(err, "cKB5"));
  ck_assert_int_eq(dtd_wire_parse_uri("ws://192.0.2.1:4000/x", 1, &u, err, sizeof err), VM_URI_OK);
  ck_assert_int_eq(dtd_wire_parse_uri("not a uri", 0, &u, err, sizeof err), VM_URI_MALFORMED);
  ck_assert_int_eq(dtd_wire_parse_uri("", 0, &u, err, sizeof err), VM_URI_MALFORMED);
  ck_assert_int_eq(dtd_wire_parse_uri(NULL, 0, &u, err, sizeof err), VM_URI_MALFORMED);
}
END_TEST

/* The reply pkg/dtd's dart_tooling_daemon_test saw from a real daemon. */
START_TEST(registered_services) {
  json_t *real = json_loads(
      "{\"type\":\"RegisteredServicesResponse\",\"dtdServices\":[\"streamListen\","
      "\"streamCancel\",\"postEvent\",\"registerService\",\"getRegisteredServices\","
      "\"ConnectedApp.registerVmService\",\"ConnectedApp.unregisterVmService\","
      "\"ConnectedApp.getVmServices\",\"FileSystem.readFileAsString\"],"
      "\"clientServices\":[{\"name\":\"Editor\",\"methods\":[{\"name\":\"getDevices\"}]}]}",
      0, NULL);
  json_t *old = json_loads(
      "{\"type\":\"RegisteredServicesResponse\",\"dtdServices\":[\"streamListen\","
      "\"ConnectedApp.getVmServiceUris\"],\"clientServices\":[]}",
      0, NULL);
  json_t *client_only = json_loads(
      "{\"type\":\"RegisteredServicesResponse\",\"dtdServices\":[],\"clientServices\":"
      "[{\"name\":\"ConnectedApp\",\"methods\":[{\"name\":\"getVmServices\"}]}]}",
      0, NULL);
  ck_assert(dtd_wire_offers_connected_app(real));
  ck_assert(!dtd_wire_offers_connected_app(old));
  ck_assert(!dtd_wire_offers_connected_app(client_only));
  ck_assert(!dtd_wire_offers_connected_app(NULL));
  json_decref(real);
  json_decref(old);
  json_decref(client_only);
}
END_TEST

START_TEST(vm_services) {
  json_t *r = json_loads(
      "{\"type\":\"VmServicesResponse\",\"vmServices\":["
      "{\"uri\":\"ws://127.0.0.1:1/a=/ws\",\"name\":\"app 1\"},"
      "{\"uri\":\"ws://127.0.0.1:2/b=/ws\",\"exposedUri\":\"ws://127.0.0.1:2/b=/ws\"},"
      "{\"name\":\"no uri\"},{\"uri\":\"\"},{\"uri\":7}]}",
      0, NULL);
  json_t *apps = dtd_wire_apps(r);
  ck_assert_int_eq(json_array_size(apps), 2);
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(apps, 0), "name")), "app 1");
  ck_assert_ptr_null(json_object_get(json_array_get(apps, 1), "name"));
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(apps, 1), "exposedUri")),
                   "ws://127.0.0.1:2/b=/ws");
  json_decref(apps);
  json_decref(r);
  r = json_loads("{\"type\":\"Success\"}", 0, NULL);
  ck_assert_ptr_null(dtd_wire_apps(r));
  json_decref(r);
  r = json_loads("{\"type\":\"VmServicesResponse\",\"vmServices\":[]}", 0, NULL);
  apps = dtd_wire_apps(r);
  ck_assert_int_eq(json_array_size(apps), 0);
  ck_assert(json_is_array(apps));
  json_decref(apps);
  json_decref(r);
}
END_TEST

/* Events as connected_app_service.dart posts them: exposedUri and name may
 * be null. */
START_TEST(events) {
  json_t *app = NULL;
  json_t *p = json_loads(
      "{\"streamId\":\"ConnectedApp\",\"eventKind\":\"VmServiceUnregistered\",\"eventData\":"
      "{\"uri\":\"ws://127.0.0.1:1/a=/ws\",\"exposedUri\":null,\"name\":null},\"timestamp\":1}",
      0, NULL);
  ck_assert_int_eq(dtd_wire_event(p, &app), DTD_EV_UNREGISTERED);
  ck_assert_str_eq(json_string_value(json_object_get(app, "uri")), "ws://127.0.0.1:1/a=/ws");
  ck_assert_ptr_null(json_object_get(app, "name"));
  json_decref(app);
  json_object_set_new(p, "eventKind", json_string("VmServiceRegistered"));
  json_object_set_new(json_object_get(p, "eventData"), "name", json_string("n"));
  ck_assert_int_eq(dtd_wire_event(p, &app), DTD_EV_REGISTERED);
  ck_assert_str_eq(json_string_value(json_object_get(app, "name")), "n");
  json_decref(app);
  json_object_set_new(p, "streamId", json_string("Service"));
  ck_assert_int_eq(dtd_wire_event(p, &app), DTD_EV_OTHER);
  ck_assert_ptr_null(app);
  json_object_set_new(p, "streamId", json_string("ConnectedApp"));
  json_object_set_new(p, "eventKind", json_string("SomethingNew"));
  ck_assert_int_eq(dtd_wire_event(p, &app), DTD_EV_OTHER);
  json_object_set_new(p, "eventKind", json_string("VmServiceRegistered"));
  json_object_del(json_object_get(p, "eventData"), "uri");
  ck_assert_int_eq(dtd_wire_event(p, &app), DTD_EV_OTHER);
  json_decref(p);
}
END_TEST

START_TEST(text_line) {
  json_t *d = json_loads(
      "{\"uri\":\"ws://127.0.0.1:9/…redacted…\",\"state\":\"connected\",\"apps\":["
      "{\"name\":\"a\",\"vmServiceUri\":\"ws://127.0.0.1:1/…redacted…/ws\",\"inUse\":true},"
      "{\"vmServiceUri\":\"ws://127.0.0.1:2/…redacted…/ws\"}],"
      "\"changes\":[{\"event\":\"unregistered\",\"name\":\"old\",\"vmServiceUri\":\"x\"}]}",
      0, NULL);
  ck_assert_str_eq(
      dtd_wire_text(d),
      "dtd: ws://127.0.0.1:9/…redacted… lists 2 apps: a ws://127.0.0.1:1/…redacted…/ws "
      "(in use), (unnamed) ws://127.0.0.1:2/…redacted…/ws\n"
      "dtd: old unregistered\n");
  ck_assert_str_eq(dtd_wire_text(NULL), "");
  json_decref(d);
}
END_TEST

int main(void) {
  Suite *s = suite_create("dtd_wire");
  TCase *tc = tcase_create("wire");
  tcase_add_loop_test(tc, dtd_uri_forms, 0, (int)(sizeof forms / sizeof *forms));
  tcase_add_test(tc, dtd_uri_refusals);
  tcase_add_test(tc, registered_services);
  tcase_add_test(tc, vm_services);
  tcase_add_test(tc, events);
  tcase_add_test(tc, text_line);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
