/* The stdio shell on a real loop: lines from a pipe and from a regular file,
 * EOF once, writes flushed before close, and every test ends by proving
 * uv_loop_close succeeds (nothing left open). Callbacks are counted. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "stdio_transport.h"

typedef struct {
  int lines, oversize, eof, closed;
  char last[128];
  stdio_t *io;
  int echo; /* write every line back */
} counts_t;

static void on_line(void *arg, const char *line, size_t len, int oversize) {
  counts_t *c = arg;
  if (oversize) {
    c->oversize++;
    return;
  }
  c->lines++;
  snprintf(c->last, sizeof c->last, "%.*s", (int)len, line);
  if (c->echo) stdio_write_line(c->io, line, len);
}

static void on_closed(void *arg) {
  ((counts_t *)arg)->closed++;
}

static void on_eof(void *arg) {
  counts_t *c = arg;
  c->eof++;
  stdio_close(c->io, on_closed, c);
}

static void run(int in_fd, int out_fd, size_t max_line, counts_t *c) {
  uv_loop_t loop;
  ck_assert_int_eq(uv_loop_init(&loop), 0);
  stdio_callbacks_t cbs = {on_line, on_eof, c};
  ck_assert_int_eq(stdio_new(&loop, in_fd, out_fd, max_line, &cbs, &c->io), 0);
  ck_assert_int_eq(stdio_start(c->io), 0);
  ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
  ck_assert_int_eq(uv_loop_close(&loop), 0);
}

START_TEST(pipe_in_pipe_out_echo) {
  int in[2], out[2];
  ck_assert_int_eq(pipe(in), 0);
  ck_assert_int_eq(pipe(out), 0);
  const char *text = "one\r\n\ntwo\n0123456789012345678901234567890123456789\nthree";
  ck_assert_int_eq(write(in[1], text, strlen(text)), (ssize_t)strlen(text));
  close(in[1]);
  counts_t c = {.echo = 1};
  run(in[0], out[1], 32, &c);
  close(in[0]);
  close(out[1]);
  ck_assert_int_eq(c.lines, 3);
  ck_assert_int_eq(c.oversize, 1);
  ck_assert_int_eq(c.eof, 1);
  ck_assert_int_eq(c.closed, 1);
  ck_assert_str_eq(c.last, "three"); /* no final newline, still a line */
  char buf[64] = {0};
  ssize_t n = read(out[0], buf, sizeof buf - 1);
  close(out[0]);
  ck_assert_int_eq(n, 14);
  ck_assert_str_eq(buf, "one\ntwo\nthree\n"); /* every write flushed before close */
}
END_TEST

START_TEST(regular_file_in_and_out) {
  char in_path[] = "/tmp/telescope-stdio-in-XXXXXX", out_path[] = "/tmp/telescope-stdio-out-XXXXXX";
  int in_fd = mkstemp(in_path), out_fd = mkstemp(out_path);
  ck_assert_int_ge(in_fd, 0);
  ck_assert_int_ge(out_fd, 0);
  /* 200 000 lines: many reads of the 64 KiB buffer, lines split across them */
  FILE *f = fdopen(dup(in_fd), "w");
  for (int i = 0; i < 200000; i++) fprintf(f, "line %d\n", i);
  fclose(f);
  lseek(in_fd, 0, SEEK_SET);
  counts_t c = {.echo = 1};
  run(in_fd, out_fd, 1024, &c);
  ck_assert_int_eq(c.lines, 200000);
  ck_assert_str_eq(c.last, "line 199999");
  ck_assert_int_eq(c.eof, 1);
  ck_assert_int_eq(c.closed, 1);
  ck_assert_int_eq(lseek(out_fd, 0, SEEK_END), lseek(in_fd, 0, SEEK_END));
  close(in_fd);
  close(out_fd);
  unlink(in_path);
  unlink(out_path);
}
END_TEST

static void stop_now(void *arg) {
  counts_t *c = arg;
  c->lines++;
}

START_TEST(close_before_eof_reports_no_eof) {
  int in[2], out[2];
  ck_assert_int_eq(pipe(in), 0);
  ck_assert_int_eq(pipe(out), 0);
  uv_loop_t loop;
  ck_assert_int_eq(uv_loop_init(&loop), 0);
  counts_t c = {0};
  stdio_callbacks_t cbs = {on_line, on_eof, &c};
  ck_assert_int_eq(stdio_new(&loop, in[0], out[1], 64, &cbs, &c.io), 0);
  ck_assert_int_eq(stdio_start(c.io), 0);
  stdio_write_line(c.io, "bye", 3);
  stdio_close(c.io, stop_now, &c); /* as on SIGTERM: the writer never closed */
  ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
  ck_assert_int_eq(uv_loop_close(&loop), 0);
  ck_assert_int_eq(c.eof, 0);
  ck_assert_int_eq(c.lines, 1); /* stop_now ran once */
  char buf[8] = {0};
  ck_assert_int_eq(read(out[0], buf, sizeof buf - 1), 4);
  ck_assert_str_eq(buf, "bye\n");
  close(in[0]), close(in[1]), close(out[0]), close(out[1]);
}
END_TEST

int main(void) {
  Suite *su = suite_create("stdio");
  TCase *tc = tcase_create("stdio");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, pipe_in_pipe_out_echo);
  tcase_add_test(tc, regular_file_in_and_out);
  tcase_add_test(tc, close_before_eof_reports_no_eof);
  suite_add_tcase(su, tc);
  SRunner *sr = srunner_create(su);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
