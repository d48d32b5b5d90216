/* JSON-RPC 2.0 message classification and response building (pure).
 *
 * Classification reads a parsed message and says what it is; it never
 * answers. Builders make the response objects the MCP layer sends. Codes come
 * from codes.h (RPC_ERROR_MAP) only. */
#ifndef TELESCOPE_JSONRPC_H
#define TELESCOPE_JSONRPC_H

#include <jansson.h>
#include <stddef.h>

typedef enum {
  JSONRPC_REQUEST,      /* method + valid id: must be answered */
  JSONRPC_NOTIFICATION, /* method, no id: never answered */
  JSONRPC_RESPONSE,     /* result or error from the peer: we send no requests, so ignored */
  JSONRPC_INVALID       /* answered with `error` (-32600), with id when `id` is set */
} jsonrpc_kind_t;

typedef struct {
  jsonrpc_kind_t kind;
  const char *method; /* borrowed from the message; NULL unless request/notification */
  json_t *id;         /* borrowed; a string or integer id, or NULL when none is usable */
  json_t *params;     /* borrowed; NULL when absent */
  int error;          /* for JSONRPC_INVALID: the RPC_* code to answer */
  const char *why;    /* for JSONRPC_INVALID: short reason for the error message */
} jsonrpc_msg_t;

/* Parses one line. Returns the message (new reference), or NULL with a short
 * reason in why (a parse error: invalid JSON, invalid UTF-8, integer out of
 * range). Any JSON value is returned; classification rejects non-objects. */
json_t *jsonrpc_parse(const char *line, size_t len, char *why, size_t why_len);

/* Classifies one message (an element of a batch, or a whole line). */
void jsonrpc_classify(json_t *msg, jsonrpc_msg_t *out);

/* 1 when id may be echoed: a string or an integer (MCP forbids null ids). */
int jsonrpc_id_valid(const json_t *id);

/* {"jsonrpc":"2.0","id":id,"result":result}; steals result, copies id. */
json_t *jsonrpc_result_new(const json_t *id, json_t *result);
/* {"jsonrpc":"2.0","id"?:id,"error":{code,message,data?}}; id may be NULL (then
 * omitted, never null); steals data (may be NULL). message NULL → the table's. */
json_t *jsonrpc_error_new(const json_t *id, int code, const char *message, json_t *data);
/* {"jsonrpc":"2.0","method":method,"params":params}; steals params. */
json_t *jsonrpc_notification_new(const char *method, json_t *params);

#endif
