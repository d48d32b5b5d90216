#include "jsonrpc.h"

#include "json_put.h"

#include <stdio.h>
#include <string.h>

#include "codes.h"

json_t *jsonrpc_parse(const char *line, size_t len, char *why, size_t why_len) {
  json_error_t err;
  /* JSON_DECODE_ANY: `42` is valid JSON but not a request, which is -32600,
   * not -32700. Invalid UTF-8 and integers beyond long long fail here. */
  json_t *msg = json_loadb(line, len, JSON_DECODE_ANY, &err);
  if (!msg && why && why_len) {
    /* jansson quotes the input near the error; keep only printable ASCII so
     * the message itself is valid UTF-8. */
    size_t o = 0;
    for (const char *p = err.text; *p && o + 1 < why_len; p++)
      why[o++] = (*p >= 0x20 && *p < 0x7F) ? *p : '?';
    why[o] = '\0';
  }
  return msg;
}

int jsonrpc_id_valid(const json_t *id) {
  return json_is_string(id) || json_is_integer(id);
}

static void invalid(jsonrpc_msg_t *out, json_t *id, const char *why) {
  out->kind = JSONRPC_INVALID;
  out->error = RPC_INVALID_REQUEST;
  out->id = jsonrpc_id_valid(id) ? id : NULL;
  out->why = why;
}

void jsonrpc_classify(json_t *msg, jsonrpc_msg_t *out) {
  memset(out, 0, sizeof *out);
  if (!json_is_object(msg)) {
    invalid(out, NULL, "a message must be a JSON object");
    return;
  }
  json_t *id = json_object_get(msg, "id");
  json_t *method = json_object_get(msg, "method");
  json_t *version = json_object_get(msg, "jsonrpc");
  json_t *params = json_object_get(msg, "params");
  if (!json_is_string(version) || strcmp(json_string_value(version), "2.0") != 0) {
    invalid(out, id, "jsonrpc must be \"2.0\"");
    return;
  }
  if (!method) {
    if (json_object_get(msg, "result") || json_object_get(msg, "error")) {
      out->kind = JSONRPC_RESPONSE;
      out->id = jsonrpc_id_valid(id) ? id : NULL;
      return;
    }
    invalid(out, id, "method is missing");
    return;
  }
  if (!json_is_string(method)) {
    invalid(out, id, "method must be a string");
    return;
  }
  if (id && !jsonrpc_id_valid(id)) {
    invalid(out, NULL, "id must be a string or an integer");
    return;
  }
  if (params && !json_is_object(params) && !json_is_array(params)) {
    invalid(out, id, "params must be an object");
    return;
  }
  out->kind = id ? JSONRPC_REQUEST : JSONRPC_NOTIFICATION;
  out->method = json_string_value(method);
  out->id = id;
  out->params = params;
}

static json_t *complete(json_t *o, int bad) {
  if (!bad) return o;
  json_decref(o);
  return NULL;
}

json_t *jsonrpc_result_new(const json_t *id, json_t *result) {
  int bad = 0;
  json_t *r = json_object();
  json_put(r, &bad, "jsonrpc", json_string("2.0"));
  if (id) json_put(r, &bad, "id", json_deep_copy(id));
  json_put(r, &bad, "result", result ? result : json_object());
  return complete(r, bad);
}

json_t *jsonrpc_error_new(const json_t *id, int code, const char *message, json_t *data) {
  int bad = 0;
  json_t *e = json_object();
  json_put(e, &bad, "code", json_integer(code));
  json_put(e, &bad, "message", json_string(message ? message : rpc_error_message(code)));
  if (data) json_put(e, &bad, "data", data);
  json_t *r = json_object();
  json_put(r, &bad, "jsonrpc", json_string("2.0"));
  if (id && jsonrpc_id_valid(id)) json_put(r, &bad, "id", json_deep_copy(id));
  json_put(r, &bad, "error", e);
  return complete(r, bad);
}

json_t *jsonrpc_notification_new(const char *method, json_t *params) {
  int bad = 0;
  json_t *n = json_object();
  json_put(n, &bad, "jsonrpc", json_string("2.0"));
  json_put(n, &bad, "method", json_string(method));
  if (params) json_put(n, &bad, "params", params);
  return complete(n, bad);
}
