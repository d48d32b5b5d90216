/* record_frames_from_text: protocol-3 records read straight from their text
 * (the read path's fast reader). It takes what a watcher sends, with any
 * white space, and gives up, keeping nothing, on every shape it was not
 * written for, so that the tree reader can name the fault. That both
 * readers agree on every case of test_record.c is checked there. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record_impl.h"

static const char *names[] = {"LAYOUT", "ProductCard", "BUILD"};

typedef struct {
  record_tables_t t;
  uint32_t seen[3];
  char *shared[3];
  json_t *pairs;
  record_reply_t r;
} fixture_t;

static void setup(fixture_t *x) {
  memset(x, 0, sizeof *x);
  x->pairs = json_loads("[[\"tap\",\"user\"],[\"scroll-feed\",\"agent\"]]", 0, NULL);
  x->t.names = names;
  x->t.n = 3;
  x->t.seen = x->seen;
  x->t.shared = x->shared;
  x->t.positional = 1;
  x->t.pairs = x->pairs;
  x->r.first_seq = 1000;
  x->r.last_seq = 1043;
}

static int read_text(fixture_t *x, const char *text) {
  return record_frames_from_text(&x->r, text, strlen(text), &x->t);
}

static void teardown(fixture_t *x) {
  record_reply_close(&x->r);
  for (size_t i = 0; i < 3; i++) record_name_unref(x->shared[i]);
  json_decref(x->pairs);
}

START_TEST(reads_records_with_any_white_space) {
  static const char *texts[] = {
      "[[1042,5521,81234567,81226100,4200,3100,120,8000,3,1,[2,3000,1200,1,1,1800,1800,6],1],"
      "[1043,5522,81250000,81242800,100,200,0,-0,0,0,[]]]",
      " [ [ 1042 ,5521,\n81234567,81226100,4200,3100,120,8000,3,1,\t[ 2,3000,1200,1 , 1,1800,1800,6 ]"
      " , 1 ] ,\r\n [1043,5522,81250000,81242800,100,200,0,0,0,0,[ ] ] ] ",
  };
  for (size_t i = 0; i < 2; i++) {
    fixture_t x;
    setup(&x);
    ck_assert_int_eq(read_text(&x, texts[i]), 0);
    ck_assert(x.r.has_records);
    ck_assert_uint_eq(x.r.nrecords, 2);
    const frame_t *f = &x.r.records[0];
    ck_assert_int_eq(f->seq, 1042);
    ck_assert_int_eq(f->vsync_start_us, 81226100);
    ck_assert_int_eq(f->picture_cache_count, 1);
    ck_assert_uint_eq(f->nblocks, 2);
    ck_assert_str_eq(f->blocks[0].name, "BUILD");
    ck_assert_int_eq(f->blocks[0].self_micros, 1200);
    ck_assert_str_eq(f->blocks[1].name, "ProductCard");
    ck_assert_int_eq(f->blocks[1].count, 6);
    ck_assert_str_eq(f->interaction_id, "scroll-feed");
    ck_assert_str_eq(f->linked_by, "agent");
    ck_assert_int_eq(x.r.records[1].total_span_us, 0);
    ck_assert_uint_eq(x.r.records[1].nblocks, 0);
    ck_assert_ptr_null(x.r.records[1].interaction_id);
    teardown(&x);
  }
  fixture_t x;
  setup(&x);
  ck_assert_int_eq(read_text(&x, "[]"), 0);
  ck_assert(x.r.has_records);
  ck_assert_uint_eq(x.r.nrecords, 0);
  teardown(&x);
}
END_TEST

/* Each left to the tree reader: -1, nothing kept. */
START_TEST(gives_up_on_what_it_was_not_written_for) {
#define R0 "1042,5521,81234567,81226100,4200,3100,120,8000,3,1"
  static const char *texts[] = {
      "",
      "[",
      "[[" R0 ",[]]",                     /* the list not closed */
      "[[" R0 ",[]]] x",                  /* something after it */
      "[[" R0 ",[]],]",                   /* a trailing comma */
      "[[" R0 ",[]]]\0",                  /* (a NUL is not white space: see below) */
      "[[" R0 "]]",                       /* no blocks */
      "[[" R0 ",[],1,0]]",                /* 13 values */
      "[[" R0 ",{}]]",                    /* blocks not an array */
      "[[" R0 ",[2,3000,1200]]]",         /* not a multiple of 4 */
      "[[" R0 ",[3,1,1,1]]]",             /* name index outside the table */
      "[[" R0 ",[2,1,1,1,2,1,1,1]]]",     /* one name twice */
      "[[" R0 ",[2,1,2,1]]]",             /* selfMicros over micros */
      "[[" R0 ",[2,1,1,0]]]",             /* count 0 */
      "[[" R0 ",[],2]]",                  /* no such interaction */
      "[[" R0 ",[],\"1\"]]",              /* an index as a string */
      "[[1042,5521,81234567,81226100,4200,3100,120,8000,3,1.0,[]]]",   /* a real */
      "[[1042,5521,81234567,81226100,4200,3100,120,8000,3,1e0,[]]]",   /* an exponent */
      "[[1042,5521,81234567,81226100,4200,3100,120,8000,3,01,[]]]",    /* a leading zero */
      "[[1042,5521,81234567,81226100,4200,3100,120,8000,3,+1,[]]]",    /* a plus */
      "[[1042,5521,81234567,81226100,4200,3100,120,8000,3,null,[]]]",  /* null */
      "[[1042,5521,81234567,81226100,4200,3100,120,8000,3,-,[]]]",     /* a sign alone */
      "[[1042,5521,81234567,1234567890123456789,4200,3100,120,8000,3,1,[]]]", /* 19 digits */
      "[[0,5521,81234567,81226100,4200,3100,120,8000,3,1,[]]]",        /* seq 0 */
      "[[999,5521,81234567,81226100,4200,3100,120,8000,3,1,[]]]",      /* before firstSeq */
      "[[1044,5521,81234567,81226100,4200,3100,120,8000,3,1,[]]]",     /* beyond lastSeq */
      "[[" R0 ",[]],[" R0 ",[]]]",        /* seq does not increase */
      "[[1042,5521,81234567,81226100,4200,3100,-1,8000,3,1,[]]]",      /* below its bound */
  };
#undef R0
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
    fixture_t x;
    setup(&x);
    size_t n = strlen(texts[i]) + (i == 5); /* case 5 keeps its NUL */
    ck_assert_msg(record_frames_from_text(&x.r, texts[i], n, &x.t) == -1, "case %zu taken", i);
    ck_assert_ptr_null(x.r.records);
    ck_assert_uint_eq(x.r.nrecords, 0);
    ck_assert(!x.r.has_records);
    teardown(&x);
  }
}
END_TEST

/* The most records a reply may hold, and one more. */
START_TEST(bounded_like_the_tree_reader) {
  size_t cap = (RECORD_MAX_RECORDS + 1) * 40 + 8;
  char *text = malloc(cap);
  for (int extra = 0; extra < 2; extra++) {
    size_t len = 0;
    text[len++] = '[';
    for (int i = 0; i < RECORD_MAX_RECORDS + extra; i++)
      len += (size_t)snprintf(text + len, cap - len, "%s[%d,1,1,1,1,1,1,1,1,1,[]]", i ? "," : "",
                              1000 + i);
    text[len++] = ']';
    fixture_t x;
    setup(&x);
    x.r.last_seq = 1000 + RECORD_MAX_RECORDS;
    int rc = record_frames_from_text(&x.r, text, len, &x.t);
    ck_assert_int_eq(rc, extra ? -1 : 0);
    ck_assert_uint_eq(x.r.nrecords, extra ? 0 : RECORD_MAX_RECORDS);
    teardown(&x);
  }
  free(text);
}
END_TEST

/* The most blocks a record may name, and one more, as the tree reader
 * (test_record.c count_limits): 256 read, 257 refused. */
START_TEST(block_cap_like_the_tree_reader) {
  enum { NN = RECORD_MAX_BLOCKS + 1 };
  static char namebuf[NN][8];
  static const char *many[NN];
  static uint32_t seen[NN];
  static char *shared[NN];
  for (int i = 0; i < NN; i++) {
    snprintf(namebuf[i], sizeof namebuf[i], "B%d", i);
    many[i] = namebuf[i];
  }
  size_t cap = 64 + (size_t)NN * 24;
  char *text = malloc(cap);
  for (int extra = 0; extra < 2; extra++) {
    size_t len = (size_t)snprintf(text, cap, "[[1042,5521,81234567,81226100,4200,3100,120,8000,3,1,[");
    for (int i = 0; i < RECORD_MAX_BLOCKS + extra; i++)
      len += (size_t)snprintf(text + len, cap - len, "%s%d,1,1,1", i ? "," : "", i);
    len += (size_t)snprintf(text + len, cap - len, "]]]");
    record_reply_t r;
    record_tables_t t;
    memset(&r, 0, sizeof r);
    memset(&t, 0, sizeof t);
    memset(seen, 0, sizeof seen);
    memset(shared, 0, sizeof shared);
    t.names = many;
    t.n = NN;
    t.seen = seen;
    t.shared = shared;
    t.positional = 1;
    r.first_seq = 1000;
    r.last_seq = 1043;
    int rc = record_frames_from_text(&r, text, len, &t);
    ck_assert_msg(rc == (extra ? -1 : 0), "%d blocks: %d", RECORD_MAX_BLOCKS + extra, rc);
    ck_assert_uint_eq(r.nrecords, extra ? 0 : 1);
    if (!extra) ck_assert_uint_eq(r.records[0].nblocks, RECORD_MAX_BLOCKS);
    record_reply_close(&r);
    for (int i = 0; i < NN; i++) record_name_unref(shared[i]);
  }
  free(text);
}
END_TEST

int main(void) {
  Suite *s = suite_create("record_text");
  TCase *tc = tcase_create("read");
  tcase_add_test(tc, reads_records_with_any_white_space);
  tcase_add_test(tc, gives_up_on_what_it_was_not_written_for);
  tcase_add_test(tc, bounded_like_the_tree_reader);
  tcase_add_test(tc, block_cap_like_the_tree_reader);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
