/* json_compact_len: the length json_dumpb gives with JSON_COMPACT, to the
 * byte, on every kind of value and on random trees, since the answers' byte
 * caps are judged by it. */
#include <check.h>
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "json_len.h"

static void same(const json_t *j) {
  size_t want = json_dumpb(j, NULL, 0, JSON_COMPACT | JSON_ENCODE_ANY);
  char *text = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
  ck_assert_msg(json_compact_len(j) == want, "%zu for %zu: %s", json_compact_len(j), want, text);
  free(text);
}

START_TEST(every_kind_of_value) {
  static const char *texts[] = {
      "{}", "[]", "[[],{},[[]]]", "null", "true", "false", "0", "-1", "9223372036854775807",
      "-9223372036854775808", "10", "-10", "99999", "100000", "\"\"",
      "\"quote\\\" back\\\\ slash/ \\b\\f\\n\\r\\t\"", "\"\\u0001\\u001f\\u007f \"",
      "\"caf\\u00e9 \\u2028 \\ud83d\\ude00\"", "{\"a\":1,\"b\":[true,null],\"\\n\":{\"\":\"\"}}",
      "1.0", "-0.0", "0.1", "1e300", "-2.5e-300", "123456789.125", "[1.5,{\"x\":2.0}]"};
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
    json_error_t e;
    json_t *j = json_loads(texts[i], JSON_DECODE_ANY, &e);
    ck_assert_msg(j != NULL, "%s: %s", texts[i], e.text);
    same(j);
    json_decref(j);
  }
  /* a NUL inside a string and inside a key: \u0000, six bytes each */
  json_t *o = json_object();
  json_object_setn_new(o, "k\0ey", 4, json_stringn("a\0b", 3));
  same(o);
  json_decref(o);
  json_t *r = json_real(DBL_MAX);
  same(r);
  json_decref(r);
  ck_assert_uint_eq(json_compact_len(NULL), 0);
}
END_TEST

static json_t *random_value(unsigned *seed, int depth) {
  static const char alphabet[] = "ab\"\\/\n\t\x01\x1f \xc3\xa9z";
  switch (rand_r(seed) % (depth < 4 ? 7 : 5)) {
    case 0:
      return json_integer((json_int_t)((int64_t)rand_r(seed) * rand_r(seed) - RAND_MAX));
    case 1:
      return json_real((rand_r(seed) - RAND_MAX / 2) / (double)(rand_r(seed) % 1000 + 1));
    case 2: {
      char s[16];
      size_t n = (size_t)rand_r(seed) % sizeof s;
      for (size_t i = 0; i < n; i++) s[i] = alphabet[rand_r(seed) % (sizeof alphabet - 3)];
      json_t *v = json_stringn(s, n);
      return v ? v : json_string("?"); /* a cut UTF-8 sequence is refused */
    }
    case 3:
      return rand_r(seed) % 2 ? json_true() : json_null();
    case 4:
      return json_false();
    case 5: {
      json_t *a = json_array();
      for (int i = rand_r(seed) % 5; i > 0; i--) json_array_append_new(a, random_value(seed, depth + 1));
      return a;
    }
    default: {
      json_t *o = json_object();
      char key[8];
      for (int i = rand_r(seed) % 5; i > 0; i--) {
        snprintf(key, sizeof key, "k%c%d", alphabet[rand_r(seed) % 10], i);
        json_object_set_new(o, key, random_value(seed, depth + 1));
      }
      return o;
    }
  }
}

START_TEST(random_trees) {
  for (unsigned i = 0; i < 3000; i++) {
    unsigned seed = i;
    json_t *j = random_value(&seed, 0);
    same(j);
    json_decref(j);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("json_len");
  TCase *tc = tcase_create("json_len");
  tcase_add_test(tc, every_kind_of_value);
  tcase_add_test(tc, random_trees);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
