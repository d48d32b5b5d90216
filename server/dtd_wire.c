#include "dtd_wire.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* The word of text that holds "://" (a printed line's URI), without the
 * sentence's trailing punctuation; the --machine JSON's uri. 0, or -1. */
static int candidate(const char *input, char *dst, size_t n) {
  json_t *j = json_loads(input, JSON_DECODE_ANY, NULL);
  const char *juri =
      json_string_value(json_object_get(json_object_get(j, "tooling_daemon_details"), "uri"));
  if (!juri) juri = json_string_value(json_object_get(j, "uri"));
  if (juri) {
    int ok = strlen(juri) < n;
    if (ok) snprintf(dst, n, "%s", juri);
    json_decref(j);
    return ok ? 0 : -1;
  }
  json_decref(j);
  const char *s = strstr(input, "://");
  if (!s) s = input; /* let vm_uri_parse say what is wrong */
  const char *b = s, *e = s;
  while (b > input && !isspace((unsigned char)b[-1])) b--;
  while (*e && !isspace((unsigned char)*e)) e++;
  while (e > b && (e[-1] == '.' || e[-1] == ',')) e--;
  if ((size_t)(e - b) >= n) return -1;
  memcpy(dst, b, (size_t)(e - b));
  dst[e - b] = '\0';
  return 0;
}

vm_uri_status_t dtd_wire_parse_uri(const char *input, int allow_remote, vm_uri_t *out, char *err,
                                   size_t errlen) {
  char cand[VM_URI_MAX];
  if (candidate(input ? input : "", cand, sizeof cand)) {
    snprintf(err, errlen, "the Dart Tooling Daemon URI is too long");
    return VM_URI_MALFORMED;
  }
  /* The shape of a DTD URI is a VM-service URI's without "/ws":
   * ws://127.0.0.1:PORT/SECRET (dart-lang/sdk pkg/dtd_impl
   * lib/src/dart_tooling_daemon.dart, _startService). vm_uri_parse does the
   * checks and the loopback rule; the "/ws" it appends comes off again
   * unless it was typed. */
  const char *q = cand + strcspn(cand, "?#");
  int typed_ws = q - cand >= 3 && memcmp(q - 3, "/ws", 3) == 0;
  vm_uri_status_t st = vm_uri_parse(cand, allow_remote, out, err, errlen);
  if (st == VM_URI_MALFORMED) return st;
  size_t n = strlen(out->ws), p = strlen(out->path);
  if (!typed_ws && n >= 3 && !strcmp(out->ws + n - 3, "/ws")) {
    out->ws[n - 3] = '\0';
    out->path[p - 3] = '\0';
    if (!out->path[0]) snprintf(out->path, sizeof out->path, "/");
  }
  return st;
}

int dtd_wire_offers_connected_app(const json_t *result) {
  size_t i;
  json_t *s;
  if (!json_is_object(result)) return 0;
  json_array_foreach(json_object_get(result, "dtdServices"), i, s) {
    if (json_is_string(s) && !strcmp(json_string_value(s), DTD_GET_VM_SERVICES)) return 1;
  }
  return 0;
}

/* {"uri", "name"?, "exposedUri"?} from a VmServiceInfo (nulls dropped). */
static json_t *app_of(const json_t *info) {
  const char *uri = json_string_value(json_object_get(info, "uri"));
  const char *name = json_string_value(json_object_get(info, "name"));
  const char *exp = json_string_value(json_object_get(info, "exposedUri"));
  if (!uri || !*uri) return NULL;
  json_t *a = json_pack("{s:s}", "uri", uri);
  if (a && name) json_object_set_new(a, "name", json_string(name));
  if (a && exp) json_object_set_new(a, "exposedUri", json_string(exp));
  return a;
}

json_t *dtd_wire_apps(const json_t *result) {
  const char *type = json_string_value(json_object_get(result, "type"));
  json_t *list = json_object_get(result, "vmServices");
  if (!type || strcmp(type, "VmServicesResponse") || !json_is_array(list)) return NULL;
  json_t *apps = json_array();
  size_t i;
  json_t *info;
  json_array_foreach(list, i, info) {
    json_t *a = app_of(info);
    if (a) json_array_append_new(apps, a);
  }
  return apps;
}

dtd_event_t dtd_wire_event(const json_t *params, json_t **app) {
  const char *stream = json_string_value(json_object_get(params, "streamId"));
  const char *kind = json_string_value(json_object_get(params, "eventKind"));
  *app = NULL;
  if (!stream || strcmp(stream, DTD_STREAM) || !kind) return DTD_EV_OTHER;
  dtd_event_t ev = !strcmp(kind, "VmServiceRegistered")     ? DTD_EV_REGISTERED
                   : !strcmp(kind, "VmServiceUnregistered") ? DTD_EV_UNREGISTERED
                                                            : DTD_EV_OTHER;
  if (ev == DTD_EV_OTHER) return ev;
  *app = app_of(json_object_get(params, "eventData"));
  return *app ? ev : DTD_EV_OTHER;
}

/* Appends to buf, never past its end. */
static void add(char *buf, size_t n, const char *fmt, const char *a, const char *b) {
  size_t used = strlen(buf);
  if (used + 1 < n) snprintf(buf + used, n - used, fmt, a, b);
}

const char *dtd_wire_text(const json_t *dtd) {
  static char buf[1536];
  buf[0] = '\0';
  if (!json_is_object(dtd)) return buf;
  const char *uri = json_string_value(json_object_get(dtd, "uri"));
  const json_t *apps = json_object_get(dtd, "apps"), *a;
  size_t i, n = json_array_size(apps);
  char count[48];
  snprintf(count, sizeof count, n == 1 ? "1 app" : "%zu apps", n);
  add(buf, sizeof buf, "dtd: %s lists %s", uri ? uri : "the Dart Tooling Daemon", count);
  json_array_foreach(apps, i, a) {
    if (i == 8) {
      add(buf, sizeof buf, "%s%s", ", \xe2\x80\xa6", "");
      break;
    }
    const char *name = json_string_value(json_object_get(a, "name"));
    add(buf, sizeof buf, i ? ", %s" : ": %s", name ? name : "(unnamed)", "");
    add(buf, sizeof buf, " %s%s", json_string_value(json_object_get(a, "vmServiceUri")), "");
    if (json_is_true(json_object_get(a, "inUse"))) add(buf, sizeof buf, "%s%s", " (in use)", "");
  }
  add(buf, sizeof buf, "%s%s", "\n", "");
  const json_t *changes = json_object_get(dtd, "changes"), *c;
  json_array_foreach(changes, i, c) {
    const char *name = json_string_value(json_object_get(c, "name"));
    add(buf, sizeof buf, "dtd: %s %s\n",
        name ? name : json_string_value(json_object_get(c, "vmServiceUri")),
        json_string_value(json_object_get(c, "event")));
  }
  return buf;
}
