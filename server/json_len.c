#include "json_len.h"

#include <stdint.h>

/* A string as dump_string writes it without JSON_ENSURE_ASCII or
 * JSON_ESCAPE_SLASH: its bytes, quoted, with '"' and '\\' and the control
 * characters escaped (\b \f \n \r \t in two bytes, the rest as \u00XX). */
static size_t string_len(const char *s, size_t n) {
  size_t len = n + 2;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t')
      len += 1;
    else if (c < 0x20)
      len += 5;
  }
  return len;
}

static size_t integer_len(json_int_t v) {
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  size_t len = v < 0 ? 2 : 1;
  while (u >= 10) {
    u /= 10;
    len++;
  }
  return len;
}

size_t json_compact_len(const json_t *j) {
  if (!j) return 0;
  switch (json_typeof(j)) {
    case JSON_OBJECT: {
      size_t len = 2, n = 0, klen;
      const char *key;
      const json_t *v;
      json_object_keylen_foreach((json_t *)j, key, klen, v) {
        len += string_len(key, klen) + 1 + json_compact_len(v);
        n++;
      }
      return len + (n ? n - 1 : 0);
    }
    case JSON_ARRAY: {
      size_t len = 2, n = json_array_size(j);
      for (size_t i = 0; i < n; i++) len += json_compact_len(json_array_get(j, i));
      return len + (n ? n - 1 : 0);
    }
    case JSON_STRING:
      return string_len(json_string_value(j), json_string_length(j));
    case JSON_INTEGER:
      return integer_len(json_integer_value(j));
    case JSON_REAL: /* "%.17g" and jansson's own touches: let it say */
      return json_dumpb(j, NULL, 0, JSON_COMPACT | JSON_ENCODE_ANY);
    case JSON_TRUE:
    case JSON_NULL:
      return 4;
    case JSON_FALSE:
      return 5;
  }
  return 0;
}
