/* Line framing fed bytes directly: chunks split anywhere, "\r\n", empty lines,
 * oversize lines dropped with bounded memory, a last line without "\n". */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "framing.h"

typedef struct {
  char lines[16][256];
  int n;
  int oversize;
  size_t oversize_len;
} sink_t;

static void on_line(void *arg, const char *line, size_t len, int oversize) {
  sink_t *s = arg;
  if (oversize) {
    ck_assert_ptr_null(line);
    s->oversize++;
    s->oversize_len = len;
    return;
  }
  ck_assert_int_lt(s->n, 16);
  ck_assert_uint_lt(len, 256);
  memcpy(s->lines[s->n], line, len);
  s->lines[s->n][len] = '\0';
  s->n++;
}

static const char three[] = "{\"a\":1}\n{\"b\":22}\r\n\n\r\n{\"c\":333}\n";

START_TEST(split_anywhere) {
  size_t n = strlen(three);
  for (size_t cut = 0; cut <= n; cut++) {
    framing_t f;
    sink_t s = {0};
    framing_init(&f, 1024);
    ck_assert_int_eq(framing_feed(&f, three, cut, on_line, &s), 0);
    ck_assert_int_eq(framing_feed(&f, three + cut, n - cut, on_line, &s), 0);
    framing_finish(&f, on_line, &s);
    framing_close(&f);
    ck_assert_int_eq(s.n, 3);
    ck_assert_str_eq(s.lines[0], "{\"a\":1}");
    ck_assert_str_eq(s.lines[1], "{\"b\":22}"); /* the "\r" is gone */
    ck_assert_str_eq(s.lines[2], "{\"c\":333}");
    ck_assert_int_eq(s.oversize, 0);
  }
}
END_TEST

START_TEST(byte_by_byte) {
  framing_t f;
  sink_t s = {0};
  framing_init(&f, 1024);
  for (size_t i = 0; three[i]; i++) framing_feed(&f, three + i, 1, on_line, &s);
  framing_close(&f);
  ck_assert_int_eq(s.n, 3);
  ck_assert_str_eq(s.lines[2], "{\"c\":333}");
}
END_TEST

START_TEST(inner_cr_kept_only_trailing_stripped) {
  framing_t f;
  sink_t s = {0};
  framing_init(&f, 1024);
  framing_feed(&f, "a\rb\r\r\n", 6, on_line, &s);
  framing_close(&f);
  ck_assert_int_eq(s.n, 1);
  ck_assert_str_eq(s.lines[0], "a\rb\r"); /* exactly one "\r" belongs to the terminator */
}
END_TEST

START_TEST(oversize_in_one_chunk) {
  framing_t f;
  sink_t s = {0};
  framing_init(&f, 16);
  const char *in = "0123456789abcdefX\nok\n";
  framing_feed(&f, in, strlen(in), on_line, &s);
  ck_assert_int_eq(s.oversize, 1);
  ck_assert_uint_eq(s.oversize_len, 17);
  ck_assert_int_eq(s.n, 1);
  ck_assert_str_eq(s.lines[0], "ok");
  framing_close(&f);
}
END_TEST

START_TEST(oversize_trickled_is_bounded) {
  framing_t f;
  sink_t s = {0};
  framing_init(&f, 64);
  /* 100 000 bytes of one line, 7 bytes at a time, then a good line. */
  char chunk[7];
  memset(chunk, 'x', sizeof chunk);
  for (int i = 0; i < 100000 / 7; i++) {
    framing_feed(&f, chunk, sizeof chunk, on_line, &s);
    ck_assert_uint_le(f.cap, 64); /* never more than the limit is held */
    ck_assert_uint_le(f.len, 64);
  }
  ck_assert_ptr_null(f.buf); /* the partial line's memory was given back */
  framing_feed(&f, "tail\nnext\n", 10, on_line, &s);
  ck_assert_int_eq(s.oversize, 1); /* reported once, not once per chunk */
  ck_assert_int_eq(s.n, 1);
  ck_assert_str_eq(s.lines[0], "next");
  framing_close(&f);
}
END_TEST

START_TEST(exactly_the_limit_is_accepted) {
  framing_t f;
  sink_t s = {0};
  framing_init(&f, 8);
  framing_feed(&f, "12345678\n123456789\n", 19, on_line, &s);
  ck_assert_int_eq(s.n, 1);
  ck_assert_str_eq(s.lines[0], "12345678");
  ck_assert_int_eq(s.oversize, 1);
  framing_close(&f);
}
END_TEST

START_TEST(empty_lines_ignored) {
  framing_t f;
  sink_t s = {0};
  framing_init(&f, 8);
  framing_feed(&f, "\n\r\n\n\r\n", 6, on_line, &s);
  framing_finish(&f, on_line, &s);
  ck_assert_int_eq(s.n, 0);
  ck_assert_int_eq(s.oversize, 0);
  framing_close(&f);
}
END_TEST

START_TEST(finish_delivers_last_line_but_not_an_oversize_tail) {
  framing_t f;
  sink_t s = {0};
  framing_init(&f, 8);
  framing_feed(&f, "a\nlast", 6, on_line, &s);
  ck_assert_int_eq(s.n, 1);
  framing_finish(&f, on_line, &s);
  ck_assert_int_eq(s.n, 2);
  ck_assert_str_eq(s.lines[1], "last");
  framing_feed(&f, "0123456789", 10, on_line, &s);
  framing_finish(&f, on_line, &s);
  ck_assert_int_eq(s.n, 2);
  ck_assert_int_eq(s.oversize, 1);
  framing_close(&f);
}
END_TEST

int main(void) {
  Suite *su = suite_create("framing");
  TCase *tc = tcase_create("framing");
  tcase_add_test(tc, split_anywhere);
  tcase_add_test(tc, byte_by_byte);
  tcase_add_test(tc, inner_cr_kept_only_trailing_stripped);
  tcase_add_test(tc, oversize_in_one_chunk);
  tcase_add_test(tc, oversize_trickled_is_bounded);
  tcase_add_test(tc, exactly_the_limit_is_accepted);
  tcase_add_test(tc, empty_lines_ignored);
  tcase_add_test(tc, finish_delivers_last_line_but_not_an_oversize_tail);
  suite_add_tcase(su, tc);
  SRunner *sr = srunner_create(su);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
