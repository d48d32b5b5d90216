/* Fuzz target: tool-argument validation, and the cursor a `read` call hands
 * back (an argument too, and opaque text an agent may damage).
 *
 * The input is read three ways: as the arguments object checked against the
 * real input schema; as a schema (when validate_schema_check accepts it, it
 * must then validate a fixed set of arguments without trouble); and as a
 * cursor string. Checked for every input: the verdict and the message agree,
 * the message is valid UTF-8 (it is cut on character boundaries), accepted
 * arguments hold only the schema's properties, and a decoded cursor encodes
 * back to the same runId and seq. */
#include <jansson.h>
#include <string.h>

#include "cursor.h"
#include "frames_tool.h"
#include "fuzz.h"
#include "validate.h"

static const char *const sample_args[] = {
    "{}",
    "{\"action\":\"read\",\"limit\":20,\"detail\":\"blocks\"}",
    "{\"limit\":-1}",
    "{\"interactionId\":\"\\u00e9t\\u00e9\"}",
    "{\"x\":null,\"y\":[1,2,{\"z\":1e308}]}",
    "[1,2,3]",
    "\"text\"",
    "-9223372036854775808",
};

static void check_message(int rc, const char *err) {
  FUZZ_ASSERT((rc == 0) == (err[0] == '\0'));
  if (rc == 0) return;
  /* No one-line rule: an unknown key is quoted as sent, control characters
   * and all (the message travels JSON-escaped). */
  json_t *s = json_string(err); /* NULL for invalid UTF-8 */
  FUZZ_ASSERT(s != NULL);
  json_decref(s);
}

static void validate_against_real_schema(const json_t *schema, const json_t *args) {
  char err[512];
  err[0] = '\0';
  int rc = validate_args(schema, args, err, sizeof err);
  check_message(rc, err);
  if (rc != 0) return;
  FUZZ_ASSERT(json_is_object(args));
  const json_t *props = json_object_get(schema, "properties");
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)args, key, v) FUZZ_ASSERT(json_object_get(props, key) != NULL);
}

static void validate_with_input_as_schema(const json_t *input) {
  char err[512];
  err[0] = '\0';
  int rc = validate_schema_check(input, err, sizeof err);
  FUZZ_ASSERT((rc == 0) == (err[0] == '\0'));
  if (rc != 0) return;
  for (size_t i = 0; i < sizeof sample_args / sizeof *sample_args; i++) {
    json_t *args = json_loads(sample_args[i], JSON_DECODE_ANY, NULL);
    FUZZ_ASSERT(args != NULL);
    err[0] = '\0';
    check_message(validate_args(input, args, err, sizeof err), err);
    json_decref(args);
  }
}

static void decode_cursor(const char *text) {
  char run_id[CURSOR_RUN_ID_MAX + 1], err[256];
  int64_t seq = -1;
  err[0] = '\0';
  if (cursor_decode(text, run_id, sizeof run_id, &seq, err, sizeof err) != 0) {
    FUZZ_ASSERT(strncmp(err, "cursor: ", 8) == 0);
    return;
  }
  FUZZ_ASSERT(seq >= 0 && run_id[0] != '\0');
  /* Accepted only in the form we issue: unpadded base64url (libwebsockets'
   * decoder alone would also take '+', '/', '=' and skip other bytes). */
  size_t len = strlen(text);
  FUZZ_ASSERT(len % 4 != 1 &&
              strspn(text, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") ==
                  len);
  char again[CURSOR_MAX], run2[CURSOR_RUN_ID_MAX + 1];
  int64_t seq2 = -1;
  FUZZ_ASSERT(cursor_encode(run_id, seq, again, sizeof again) == 0);
  FUZZ_ASSERT(cursor_decode(again, run2, sizeof run2, &seq2, err, sizeof err) == 0);
  FUZZ_ASSERT(strcmp(run_id, run2) == 0 && seq == seq2);
  int restarted = -1;
  int64_t since = cursor_resolve(run_id, seq, "current-run", 5, &restarted);
  FUZZ_ASSERT(restarted == (strcmp(run_id, "current-run") != 0));
  FUZZ_ASSERT(restarted ? since == 4 : since == seq);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static json_t *schema;
  if (!schema) schema = frames_tool_input_schema_new();
  FUZZ_ASSERT(schema != NULL);

  json_t *input = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
  if (input) {
    validate_against_real_schema(schema, input);
    validate_with_input_as_schema(input);
    const char *cursor = json_string_value(json_object_get(input, "cursor"));
    if (cursor) decode_cursor(cursor);
    json_decref(input);
  }
  /* The raw bytes as a cursor string (up to the first NUL). */
  char *text = malloc(size + 1);
  FUZZ_ASSERT(text != NULL);
  memcpy(text, data, size);
  text[size] = '\0';
  decode_cursor(text);
  free(text);
  return 0;
}
