#include "validate.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define PRINTABLE_ASCII_PATTERN "^[\\x20-\\x7E]+$"

/* Code points in a valid UTF-8 string (jansson guarantees validity). */
static size_t utf8_length(const char *s) {
  size_t n = 0;
  for (; *s; s++)
    if (((unsigned char)*s & 0xC0) != 0x80) n++;
  return n;
}

static int printable_ascii(const char *s) {
  if (!*s) return 0;
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7E) return 0;
  return 1;
}

/* A short rendering of the offending value for the message. */
static void show(const json_t *v, char *out, size_t n) {
  char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
  if (!s) {
    snprintf(out, n, "?");
    return;
  }
  size_t len = strlen(s);
  if (len > 60) {
    /* Cut on a UTF-8 boundary: the message must stay valid UTF-8. */
    len = 57;
    while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80) len--;
    snprintf(out, n, "%.*s...", (int)len, s);
  } else {
    snprintf(out, n, "%s", s);
  }
  free(s);
}

static const char *type_name(const json_t *v) {
  switch (json_typeof(v)) {
    case JSON_OBJECT:
      return "an object";
    case JSON_ARRAY:
      return "an array";
    case JSON_STRING:
      return "a string";
    case JSON_INTEGER:
      return "an integer";
    case JSON_REAL:
      return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
      return "a boolean";
    default:
      return "null";
  }
}

static void fmt_num(double d, char *out, size_t n) {
  if (d == floor(d) && fabs(d) < 1e15)
    snprintf(out, n, "%.0f", d);
  else
    snprintf(out, n, "%g", d);
}

/* "one of \"a\", \"b\"" from an enum array. */
static void enum_list(const json_t *en, char *out, size_t n) {
  size_t o = 0, i;
  json_t *e;
  out[0] = '\0';
  json_array_foreach(en, i, e) {
    char one[80];
    show(e, one, sizeof one);
    int w = snprintf(out + o, n - o, "%s%s", i ? ", " : "", one);
    if (w < 0 || (size_t)w >= n - o) break;
    o += (size_t)w;
  }
}

/* The range phrase for a numeric schema, e.g. "from 0 to 1000", "above 0 and at most 10000". */
static void range_phrase(const json_t *sch, char *out, size_t n) {
  json_t *min = json_object_get(sch, "minimum"), *max = json_object_get(sch, "maximum");
  json_t *xmin = json_object_get(sch, "exclusiveMinimum"),
         *xmax = json_object_get(sch, "exclusiveMaximum");
  char a[32] = "", b[32] = "";
  const char *lo = NULL, *hi = NULL;
  if (json_is_number(min)) fmt_num(json_number_value(min), a, sizeof a), lo = "from";
  if (json_is_number(xmin)) fmt_num(json_number_value(xmin), a, sizeof a), lo = "above";
  if (json_is_number(max)) fmt_num(json_number_value(max), b, sizeof b), hi = "to";
  if (json_is_number(xmax)) fmt_num(json_number_value(xmax), b, sizeof b), hi = "below";
  if (lo && hi && strcmp(lo, "from") == 0 && strcmp(hi, "to") == 0)
    snprintf(out, n, " from %s to %s", a, b);
  else if (lo && hi)
    snprintf(out, n, " %s %s and %s %s", lo, a, strcmp(hi, "to") == 0 ? "at most" : "below", b);
  else if (lo)
    snprintf(out, n, " %s %s", strcmp(lo, "from") == 0 ? "of at least" : "above", a);
  else if (hi)
    snprintf(out, n, " %s %s", strcmp(hi, "to") == 0 ? "of at most" : "below", b);
  else
    out[0] = '\0';
}

static int check_value(const char *field, const json_t *sch, const json_t *v, char *err, size_t n) {
  const char *type = json_string_value(json_object_get(sch, "type"));
  json_t *en = json_object_get(sch, "enum");
  char got[80], range[96];
  show(v, got, sizeof got);

  if (json_is_array(en)) {
    size_t i;
    json_t *e;
    json_array_foreach(en, i, e) if (json_equal((json_t *)e, (json_t *)v)) return 0;
    char list[512];
    enum_list(en, list, sizeof list);
    snprintf(err, n, "%s: must be one of %s, got %s", field, list, got);
    return -1;
  }
  if (!type) return 0;
  if (strcmp(type, "string") == 0) {
    if (!json_is_string(v)) goto wrong_type;
    const char *s = json_string_value(v);
    size_t len = utf8_length(s);
    json_t *minl = json_object_get(sch, "minLength"), *maxl = json_object_get(sch, "maxLength");
    json_t *pat = json_object_get(sch, "pattern");
    int printable =
        json_is_string(pat) && strcmp(json_string_value(pat), PRINTABLE_ASCII_PATTERN) == 0;
    if ((json_is_integer(minl) && (json_int_t)len < json_integer_value(minl)) ||
        (json_is_integer(maxl) && (json_int_t)len > json_integer_value(maxl)) ||
        (printable && !printable_ascii(s))) {
      char lim[96] = "";
      if (json_is_integer(minl) && json_is_integer(maxl))
        snprintf(lim, sizeof lim, " of %lld to %lld characters",
                 (long long)json_integer_value(minl), (long long)json_integer_value(maxl));
      else if (json_is_integer(minl))
        snprintf(lim, sizeof lim, " of at least %lld characters",
                 (long long)json_integer_value(minl));
      else if (json_is_integer(maxl))
        snprintf(lim, sizeof lim, " of at most %lld characters",
                 (long long)json_integer_value(maxl));
      snprintf(err, n, "%s: must be a string%s%s, got %s (%zu characters)", field, lim,
               printable ? " of printable ASCII (0x20-0x7E)" : "", got, len);
      return -1;
    }
    return 0;
  }
  if (strcmp(type, "integer") == 0 || strcmp(type, "number") == 0) {
    int want_int = type[0] == 'i';
    /* 5.0 is an integer in JSON Schema; jansson parses it as a real. */
    if (!json_is_number(v) ||
        (want_int && json_is_real(v) && json_real_value(v) != floor(json_real_value(v))))
      goto wrong_type;
    double d = json_number_value(v);
    json_t *min = json_object_get(sch, "minimum"), *max = json_object_get(sch, "maximum");
    json_t *xmin = json_object_get(sch, "exclusiveMinimum"),
           *xmax = json_object_get(sch, "exclusiveMaximum");
    if ((json_is_number(min) && d < json_number_value(min)) ||
        (json_is_number(max) && d > json_number_value(max)) ||
        (json_is_number(xmin) && d <= json_number_value(xmin)) ||
        (json_is_number(xmax) && d >= json_number_value(xmax))) {
      range_phrase(sch, range, sizeof range);
      snprintf(err, n, "%s: must be %s%s, got %s", field, want_int ? "an integer" : "a number",
               range, got);
      return -1;
    }
    return 0;
  }
  if (strcmp(type, "boolean") == 0) {
    if (!json_is_boolean(v)) goto wrong_type;
    return 0;
  }
  if (strcmp(type, "object") == 0) {
    if (!json_is_object(v)) goto wrong_type;
    return 0;
  }
  return 0;

wrong_type:
  if (strcmp(type, "integer") == 0 || strcmp(type, "number") == 0) {
    range_phrase(sch, range, sizeof range);
    snprintf(err, n, "%s: must be %s%s, got %s %s", field,
             type[0] == 'i' ? "an integer" : "a number", range, type_name(v), got);
  } else {
    snprintf(err, n, "%s: must be a%s %s, got %s %s", field,
             strcmp(type, "integer") == 0 ? "n" : "", type, type_name(v), got);
  }
  return -1;
}

static void allowed_fields(const json_t *props, char *out, size_t n) {
  size_t o = 0;
  const char *k;
  json_t *v;
  out[0] = '\0';
  json_object_foreach((json_t *)props, k, v) {
    int w = snprintf(out + o, n - o, "%s%s", o ? ", " : "", k);
    if (w < 0 || (size_t)w >= n - o) break;
    o += (size_t)w;
  }
}

int validate_args(const json_t *schema, const json_t *args, char *err, size_t err_len) {
  json_t *props = json_object_get(schema, "properties");
  if (!json_is_object(args)) {
    snprintf(err, err_len, "arguments: must be an object, got %s", type_name(args));
    return -1;
  }
  json_t *req = json_object_get(schema, "required");
  size_t i;
  json_t *r;
  json_array_foreach(req, i, r) {
    if (json_is_string(r) && !json_object_get(args, json_string_value(r))) {
      snprintf(err, err_len, "%s: is required", json_string_value(r));
      return -1;
    }
  }
  const char *key;
  json_t *val;
  json_t *extra = json_object_get(schema, "additionalProperties");
  json_object_foreach((json_t *)args, key, val) {
    json_t *sch = json_object_get(props, key);
    if (!sch) {
      if (json_is_false(extra)) {
        char list[1024];
        allowed_fields(props, list, sizeof list);
        size_t klen = strlen(key);
        if (klen > 100) {
          klen = 100;
          while (klen > 0 && ((unsigned char)key[klen] & 0xC0) == 0x80) klen--;
        }
        snprintf(err, err_len, "%.*s: unknown field; allowed fields are %s", (int)klen, key, list);
        return -1;
      }
      continue;
    }
    if (check_value(key, sch, val, err, err_len) != 0) return -1;
  }
  return 0;
}

static const char *known_keywords[] = {
    "type",      "enum",        "minimum", "maximum",    "exclusiveMinimum",     "exclusiveMaximum",
    "minLength", "maxLength",   "pattern", "properties", "additionalProperties", "required",
    "default",   "description", "title",   NULL};

static int check_keywords(const char *where, const json_t *sch, char *err, size_t n) {
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)sch, k, v) {
    int ok = 0;
    for (const char **p = known_keywords; *p; p++) ok |= strcmp(*p, k) == 0;
    if (!ok) {
      snprintf(err, n, "%s: keyword %s is not supported by the validator", where, k);
      return -1;
    }
    if (strcmp(k, "pattern") == 0 &&
        (!json_is_string(v) || strcmp(json_string_value(v), PRINTABLE_ASCII_PATTERN) != 0)) {
      snprintf(err, n, "%s: only the pattern %s is supported", where, PRINTABLE_ASCII_PATTERN);
      return -1;
    }
  }
  return 0;
}

int validate_schema_check(const json_t *schema, char *err, size_t err_len) {
  if (check_keywords("(root)", schema, err, err_len) != 0) return -1;
  const char *k;
  json_t *v;
  json_object_foreach(json_object_get(schema, "properties"), k, v) {
    if (!json_is_object(v) || json_is_object(json_object_get(v, "properties"))) {
      snprintf(err, err_len, "%s: nested schemas are not supported", k);
      return -1;
    }
    if (check_keywords(k, v, err, err_len) != 0) return -1;
  }
  return 0;
}
