/* cursor: round trips, refusal of anything this server did not issue, and
 * the restart rule (a cursor of another run reads the new run from its start). */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cursor.h"

static void round_trip(const char *run, int64_t seq) {
  char c[CURSOR_MAX], run_out[CURSOR_RUN_ID_MAX + 1], err[128] = "";
  int64_t s = -1;
  ck_assert_int_eq(cursor_encode(run, seq, c, sizeof c), 0);
  ck_assert_uint_eq(strspn(c, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
                    strlen(c)); /* URL-safe, no padding */
  ck_assert_msg(cursor_decode(c, run_out, sizeof run_out, &s, err, sizeof err) == 0, "%s", err);
  ck_assert_str_eq(run_out, run);
  ck_assert_int_eq(s, seq);
}

START_TEST(round_trips) {
  round_trip("r-abc", 1042);
  round_trip("r", 0);
  round_trip("run:with:colons", 7); /* runId is the watcher's: any bytes but NUL */
  round_trip("ü-run", INT64_C(999999999999999999));
  char long_run[CURSOR_RUN_ID_MAX + 1];
  memset(long_run, 'x', CURSOR_RUN_ID_MAX), long_run[CURSOR_RUN_ID_MAX] = 0;
  round_trip(long_run, 123456789);
  for (int len = 1; len < 12; len++) { /* every base64 tail length */
    char r[16];
    memset(r, 'q', (size_t)len), r[len] = 0;
    round_trip(r, len);
  }
}
END_TEST

START_TEST(encode_refuses) {
  char c[CURSOR_MAX], long_run[CURSOR_RUN_ID_MAX + 2];
  ck_assert_int_eq(cursor_encode("", 1, c, sizeof c), -1);
  ck_assert_int_eq(cursor_encode("r", -1, c, sizeof c), -1);
  memset(long_run, 'x', CURSOR_RUN_ID_MAX + 1), long_run[CURSOR_RUN_ID_MAX + 1] = 0;
  ck_assert_int_eq(cursor_encode(long_run, 1, c, sizeof c), -1);
  ck_assert_int_eq(cursor_encode("r", 1, c, 8), -1); /* too small a buffer */
}
END_TEST

static void refused(const char *cursor, const char *want) {
  char run[CURSOR_RUN_ID_MAX + 1], err[128] = "";
  int64_t s;
  ck_assert_int_eq(cursor_decode(cursor, run, sizeof run, &s, err, sizeof err), -1);
  ck_assert_msg(strstr(err, want) != NULL, "want \"%s\" in \"%s\"", want, err);
  ck_assert(!strncmp(err, "cursor: ", 8));
}

START_TEST(garbage_and_tampering_refused) {
  refused("", "empty");
  refused("not a cursor", "bad character");
  refused("abcde", "bad length");
  refused("YWJj", "unknown version");                 /* "abc" */
  refused("djM6cjoxOjAwMDAwMDAw", "unknown version"); /* "v3:r:1:00000000" */
  char c[CURSOR_MAX];
  ck_assert_int_eq(cursor_encode("r-abc", 1042, c, sizeof c), 0);
  /* Flip each character in turn: every edit must be caught. */
  for (size_t i = 0; i < strlen(c); i++) {
    char t[CURSOR_MAX];
    strcpy(t, c);
    t[i] = t[i] == 'A' ? 'B' : 'A';
    char run[CURSOR_RUN_ID_MAX + 1], err[128];
    int64_t s;
    ck_assert_msg(cursor_decode(t, run, sizeof run, &s, err, sizeof err) == -1,
                  "edit at %zu accepted", i);
  }
  /* The last character of every tail length, including spare bits. */
  for (int len = 1; len < 6; len++) {
    char r[8], t[CURSOR_MAX], run[CURSOR_RUN_ID_MAX + 1], err[128];
    int64_t s;
    memset(r, 'k', (size_t)len), r[len] = 0;
    ck_assert_int_eq(cursor_encode(r, 3, t, sizeof t), 0);
    char *last = t + strlen(t) - 1;
    *last = *last == 'A' ? 'B' : *last == 'B' ? 'A' : (char)(*last ^ 1);
    ck_assert_msg(cursor_decode(t, run, sizeof run, &s, err, sizeof err) == -1,
                  "edit of the last character accepted for runId length %d", len);
  }
  /* Truncation is caught too. */
  c[strlen(c) - 4] = 0;
  refused(c, "cursor: ");
  char big[CURSOR_MAX + 8];
  memset(big, 'A', sizeof big - 1), big[sizeof big - 1] = 0;
  refused(big, "bad length");
}
END_TEST

/* The wire form, byte for byte: unpadded base64url of "v<kind>:<name>:<n>:<check>"
 * (these strings were produced by the hand-written encoder this file replaced,
 * so a library encoder must give exactly the same cursors: old cursors stay
 * valid). Every tail length (0, 2 and 3 characters past a whole quad) and
 * both URL-safe characters appear. */
static const struct {
  const char *run;
  int64_t seq;
  const char *wire;
} vectors[] = {
    {"r-abc", 1042, "djE6ci1hYmM6MTA0MjowZTQ0NDMxNg"},
    {"r", 0, "djE6cjowOmFjNjhkYzE2"},
    {"ru", 7, "djE6cnU6Nzo5NzRmZjhjYw"},
    {"run", 123456789, "djE6cnVuOjEyMzQ1Njc4OTowYzM4MjAxMg"},
    {"\xc3\xbc-run", 5, "djE6w7wtcnVuOjU6N2FjYjNhMzQ"},
    {"a?>~", 63, "djE6YT8-fjo2Mzo4ZjZhNjNlMw"},
    {"???", 1, "djE6Pz8_OjE6NTAzOWI3Yjg"},
};

START_TEST(wire_form_unchanged) {
  for (size_t i = 0; i < sizeof vectors / sizeof *vectors; i++) {
    char c[CURSOR_MAX], run[CURSOR_RUN_ID_MAX + 1], err[128] = "";
    int64_t s = -1;
    ck_assert_int_eq(cursor_encode(vectors[i].run, vectors[i].seq, c, sizeof c), 0);
    ck_assert_str_eq(c, vectors[i].wire);
    ck_assert_msg(cursor_decode(vectors[i].wire, run, sizeof run, &s, err, sizeof err) == 0, "%s",
                  err);
    ck_assert_str_eq(run, vectors[i].run);
    ck_assert_int_eq(s, vectors[i].seq);
    /* The buffer must hold the cursor and its NUL, and no more is needed. */
    size_t need = strlen(vectors[i].wire) + 1;
    ck_assert_int_eq(cursor_encode(vectors[i].run, vectors[i].seq, c, need), 0);
    ck_assert_str_eq(c, vectors[i].wire);
    ck_assert_int_eq(cursor_encode(vectors[i].run, vectors[i].seq, c, need - 1), -1);
  }
  char c[CURSOR_MAX], name[CURSOR_RUN_ID_MAX + 1], err[128] = "";
  cursor_kind_t kind = 0;
  int64_t n = -1;
  ck_assert_int_eq(cursor_encode_kind(CURSOR_SESSION, "s-1", 42, c, sizeof c), 0);
  ck_assert_str_eq(c, "djI6cy0xOjQyOjU0YzVkNzg0");
  ck_assert_int_eq(cursor_decode_kind(c, &kind, name, sizeof name, &n, err, sizeof err), 0);
  ck_assert_int_eq(kind, CURSOR_SESSION);
  ck_assert_str_eq(name, "s-1");
  ck_assert_int_eq(n, 42);
  refused(c, "a session cursor where a watcher cursor was expected");
}
END_TEST

/* What a lenient base64 decoder would let through (libwebsockets' skips
 * characters outside its alphabet, takes the standard alphabet's '+' and '/'
 * as well as '-' and '_', and ignores '=' and the spare bits of a short tail):
 * each must still be refused, with the reason named. */
START_TEST(decoder_edges_refused) {
  /* Padding: a padded form of a valid cursor (the tail "Mw" of the a?>~ vector). */
  refused("djE6YT8-fjo2Mzo4ZjZhNjNlMw==", "bad character");
  refused("djE6YT8-fjo2Mzo4ZjZhNjNlMw=", "bad character");
  refused("djE6ci1hYmM6MTA0MjowZTQ0NDMxNg==", "bad character");
  refused("djE6cnU6Nzo5NzRmZjhjYw=", "bad character");
  refused("====", "bad character");
  /* The standard alphabet's 62 and 63 in place of '-' and '_'. */
  refused("djE6YT8+fjo2Mzo4ZjZhNjNlMw", "bad character");
  refused("djE6Pz8/OjE6NTAzOWI3Yjg", "bad character");
  /* A character outside any alphabet, in place (length kept) and inserted. */
  refused("djE6ci1hYmM6MTA0Mjo.ZTQ0NDMxNg", "bad character");
  refused("djE6ci1hYmM6MTA0 MjowZTQ0NDMxNg", "bad character");
  refused("djE6ci1hYmM6MTA0MjowZTQ0NDMxN\xc3\xa7", "bad character");
  refused("djE6\tci1hYmM6MTA0MjowZTQ0NDMxNg", "bad character");
  refused("%64jE6ci1hYmM6MTA0MjowZTQ0NDMxNg", "bad character");
  /* Spare bits of a short tail set: the same bytes under another spelling.
   * Two-character tails ("Mw" -> "Mx", "Ng" -> "Nh") and a three-character
   * one ("MzQ" -> "MzR"). */
  refused("djE6YT8-fjo2Mzo4ZjZhNjNlMx", "bad padding bits");
  refused("djE6ci1hYmM6MTA0MjowZTQ0NDMxNh", "bad padding bits");
  refused("djE6w7wtcnVuOjU6N2FjYjNhMzR", "bad padding bits");
  /* Every truncation of a valid cursor is refused (with a cursor: reason). */
  const char *whole = "djE6cnVuOjEyMzQ1Njc4OTowYzM4MjAxMg";
  for (size_t k = 1; k < strlen(whole); k++) {
    char t[CURSOR_MAX];
    memcpy(t, whole, k), t[k] = 0;
    refused(t, k % 4 == 1 ? "bad length" : "cursor: ");
  }
  /* Every single-character tail is a bad length, not a lost byte. */
  refused("djE6cjowOmFjNjhkYzE2A", "bad length");
  /* Well-formed base64url, but not what we encode: a NUL inside, no
   * checksum, an empty runId, a seq that is not digits. */
  refused("djE6cgA6MTo2NzA0ZmI2Zg", "unknown version"); /* "v1:r\0:1:6704fb6f" */
  refused("djE6cjox", "unknown version");               /* "v1:r:1" (too short) */
  refused("djE6cjoxOjAwMDAwMDAw", "checksum");          /* "v1:r:1:00000000" */
}
END_TEST

START_TEST(resolve_restart_rule) {
  int restarted = -1;
  /* Same run: continue after the cursor's seq, even beyond lastSeq (nothing new). */
  ck_assert_int_eq(cursor_resolve("r1", 1042, "r1", 1000, &restarted), 1042);
  ck_assert_int_eq(restarted, 0);
  ck_assert_int_eq(cursor_resolve("r1", 99999, "r1", 1000, &restarted), 99999);
  ck_assert_int_eq(restarted, 0);
  /* Another run: from the start of what the new run's ring holds. */
  ck_assert_int_eq(cursor_resolve("r1", 1042, "r2", 1, &restarted), 0);
  ck_assert_int_eq(restarted, 1);
  ck_assert_int_eq(cursor_resolve("r1", 5, "r2", 300, &restarted), 299);
  ck_assert_int_eq(restarted, 1);
  ck_assert_int_eq(cursor_resolve("r1", 5, "r2", 0, &restarted), 0); /* empty ring */
}
END_TEST

int main(void) {
  Suite *s = suite_create("cursor");
  TCase *tc = tcase_create("cursor");
  tcase_add_test(tc, round_trips);
  tcase_add_test(tc, encode_refuses);
  tcase_add_test(tc, garbage_and_tampering_refused);
  tcase_add_test(tc, wire_form_unchanged);
  tcase_add_test(tc, decoder_edges_refused);
  tcase_add_test(tc, resolve_restart_rule);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
