/* store: replies fed in order as the watcher would send them (parsed by the
 * real record module): duplicates dropped, loss counted exactly, restarts
 * counted and reported once, newest frames kept for listing, bounded. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

/* A validated reply of run `run` whose ring holds first..last and which
 * carries records from..to (from > to: an empty records array; from < 0: no
 * records member at all). Odd seqs carry interaction "a". */
static record_reply_t reply(const char *run, int64_t first, int64_t last, int64_t from,
                            int64_t to) {
  json_t *j = json_pack("{s:i,s:s,s:s,s:i,s:i,s:b,s:s,s:b,s:f,s:n,s:I,s:I,s:i,s:i}", "protocol", 1,
                        "watcherVersion", "0.1.0", "runId", run, "livenessCounter", 10, "nowUs", 0,
                        "collecting", 1, "lifecycle", "resumed", "framesEnabled", 1, "refreshRate",
                        60.0, "interaction", "firstSeq", (json_int_t)first, "lastSeq",
                        (json_int_t)last, "pending", 0, "droppedAttributions", 0);
  if (from >= 0) {
    json_t *recs = json_array();
    for (int64_t s = from; s <= to; s++) {
      json_t *r = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:i,s:I,s:{s:{s:i,s:i,s:i}}}", "seq",
                            (json_int_t)s, "frameNumber", (json_int_t)s + 100, "atUs",
                            (json_int_t)(s * 16667 + 9000), "vsyncStartUs", (json_int_t)(s * 16667),
                            "buildUs", (json_int_t)(s % 7) * 1000, "rasterUs", (json_int_t)1000,
                            "vsyncOverheadUs", 10, "totalSpanUs", (json_int_t)3000, "blocks",
                            "BUILD", "micros", 900, "selfMicros", 400, "count", 1);
      if (s % 2) {
        json_object_set_new(r, "interactionId", json_string("a"));
        json_object_set_new(r, "linkedBy", json_string("agent"));
      }
      json_array_append_new(recs, r);
    }
    json_object_set_new(j, "records", recs);
  }
  record_reply_t out;
  char err[RECORD_ERR_LEN] = "";
  ck_assert_msg(record_reply_parse(&out, j, err, sizeof err) == 0, "%s", err);
  json_decref(j);
  return out;
}

static store_add_result_t feed(store_t *st, const char *run, int64_t first, int64_t last,
                               int64_t from, int64_t to) {
  record_reply_t r = reply(run, first, last, from, to);
  store_add_result_t res;
  ck_assert_int_eq(store_add_reply(st, &r, &res), 0);
  record_reply_close(&r);
  return res;
}

/* Frames with adjacent seqs whose numbers jump: the engine numbered frames
 * that never came (counted in number gaps); a jump across lost seqs is loss,
 * counted there and not twice. */
static void feed_numbers(store_t *st, const int64_t *seq, const int64_t *num, size_t n, int64_t first) {
  json_t *recs = json_array();
  for (size_t i = 0; i < n; i++)
    json_array_append_new(recs, json_pack("{s:I,s:I,s:I,s:I,s:i,s:i,s:i,s:i,s:{}}", "seq",
                                          (json_int_t)seq[i], "frameNumber", (json_int_t)num[i],
                                          "atUs", (json_int_t)(seq[i] * 16667 + 9000), "vsyncStartUs",
                                          (json_int_t)(seq[i] * 16667), "buildUs", 1000, "rasterUs",
                                          1000, "vsyncOverheadUs", 10, "totalSpanUs", 3000, "blocks"));
  json_t *j = json_pack("{s:i,s:s,s:s,s:i,s:i,s:b,s:n,s:b,s:f,s:n,s:I,s:I,s:i,s:i,s:o}", "protocol", 1,
                        "watcherVersion", "x", "runId", "R", "livenessCounter", 1, "nowUs", 0,
                        "collecting", 1, "lifecycle", "framesEnabled", 1, "refreshRate", 60.0,
                        "interaction", "firstSeq", (json_int_t)first, "lastSeq",
                        (json_int_t)seq[n - 1], "pending", 0, "droppedAttributions", 0, "records", recs);
  record_reply_t r;
  char err[RECORD_ERR_LEN];
  ck_assert_msg(record_reply_parse(&r, j, err, sizeof err) == 0, "%s", err);
  json_decref(j);
  ck_assert_int_eq(store_add_reply(st, &r, NULL), 0);
  record_reply_close(&r);
}

/* Start-up frames (docs/tool.md "Start-up"): the engine's frame 1; a run's
 * first frame (seq 1) when the engine had just begun (frame number ≤ 3) or a
 * restart replaced the run; nothing else. */
START_TEST(startup_frames_marked) {
  frame_t f;
  memset(&f, 0, sizeof f);
  f.seq = 50, f.frame_number = 1;
  ck_assert_int_eq(store_is_startup(&f, 0, 0), 1);
  f.seq = 1, f.frame_number = 2; /* the 3.20 recording's warm-up frame */
  ck_assert_int_eq(store_is_startup(&f, 0, 0), 1);
  ck_assert_int_eq(store_is_startup(&f, 1, 0), 1);
  f.frame_number = 3; /* the bound: the engine had hardly begun */
  ck_assert_int_eq(store_is_startup(&f, 0, 0), 1);
  f.frame_number = 4; /* one past it: a frame like any other */
  ck_assert_int_eq(store_is_startup(&f, 0, 0), 0);
  f.frame_number = 827; /* the watcher's first record, long after the app began */
  ck_assert_int_eq(store_is_startup(&f, 0, 0), 0);
  ck_assert_int_eq(store_is_startup(&f, 0, 1), 1); /* ... of a run a hot restart began */
  f.seq = 2, f.frame_number = 2;
  ck_assert_int_eq(store_is_startup(&f, 0, 0), 0);
  f.frame_number = -1; /* unnumbered (web) */
  f.seq = 1;
  ck_assert_int_eq(store_is_startup(&f, 1, 0), 0);

  /* Through the store: frames 1–3 of one run (numbers 101–103) are steady;
   * after a restart the new run's seq 1 is start-up, its seq 2 is not. */
  store_t *st = store_new(16667);
  feed(st, "A", 1, 3, 1, 3);
  feed(st, "B", 1, 2, 1, 2);
  json_t *j = summary_to_json(store_summary(st, NULL), 0, 0, 0);
  json_t *su = json_object_get(j, "startup");
  ck_assert_ptr_nonnull(su);
  ck_assert_int_eq(json_integer_value(json_object_get(su, "frames")), 1);
  ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(su, "frameNumbers"), 0)), 101);
  ck_assert_int_eq(json_integer_value(json_object_get(j, "frames")), 5);
  json_decref(j);
  store_free(st);

  /* includeStartup: the same frames, none set apart. */
  st = store_new(16667);
  store_set_include_startup(st, 1);
  feed(st, "A", 1, 3, 1, 3);
  feed(st, "B", 1, 2, 1, 2);
  j = summary_to_json(store_summary(st, NULL), 0, 0, 0);
  ck_assert_ptr_null(json_object_get(j, "startup"));
  ck_assert_int_eq(json_integer_value(json_object_get(j, "frames")), 5);
  json_decref(j);
  store_free(st);
}
END_TEST

START_TEST(frame_number_gaps_counted_apart_from_loss) {
  store_t *st = store_new(16667);
  int64_t seq1[] = {1, 2, 3, 4}, num1[] = {10, 11, 14, 15};
  feed_numbers(st, seq1, num1, 4, 1);
  ck_assert_uint_eq(store_number_gaps(st), 2); /* 12 and 13 */
  int64_t seq2[] = {7, 8}, num2[] = {30, 31}; /* 5 and 6 lost in between */
  feed_numbers(st, seq2, num2, 2, 7);
  ck_assert_uint_eq(store_frames_lost(st), 2);
  ck_assert_uint_eq(store_number_gaps(st), 2);
  store_free(st);
}
END_TEST

START_TEST(duplicates_dropped) {
  store_t *st = store_new(16667);
  store_add_result_t r = feed(st, "A", 1, 5, 1, 5);
  ck_assert_uint_eq(r.added, 5);
  r = feed(st, "A", 1, 8, 4, 8); /* 4 and 5 again */
  ck_assert_uint_eq(r.added, 3);
  ck_assert_uint_eq(r.duplicates, 2);
  r = feed(st, "A", 1, 8, 1, 8); /* the whole ring again */
  ck_assert_uint_eq(r.added, 0);
  ck_assert_uint_eq(r.duplicates, 8);
  ck_assert_uint_eq(store_frames_seen(st), 8);
  ck_assert_uint_eq(summary_frames(store_summary(st, NULL)), 8);
  ck_assert_uint_eq(store_frames_lost(st), 0);
  ck_assert_int_eq(store_last_seq(st), 8);
  ck_assert_str_eq(store_run_id(st), "A");
  store_free(st);
}
END_TEST

START_TEST(loss_counted_exactly) {
  store_t *st = store_new(16667);
  /* The first look: a ring starting at 50 is history, not loss. */
  store_add_result_t r = feed(st, "A", 50, 52, 50, 52);
  ck_assert_uint_eq(r.lost, 0);
  /* The ring overflowed past 53..59. */
  r = feed(st, "A", 60, 64, 60, 64);
  ck_assert_uint_eq(r.lost, 7);
  ck_assert_uint_eq(r.added, 5);
  /* No new loss next time, even with the same firstSeq. */
  r = feed(st, "A", 60, 66, 65, 66);
  ck_assert_uint_eq(r.lost, 0);
  /* An empty ring (firstSeq > lastSeq) says nothing about loss. */
  r = feed(st, "A", 67, 66, 1, 0);
  ck_assert_uint_eq(r.lost, 0);
  /* A reply with no records can still reveal loss. */
  r = feed(st, "A", 70, 75, -1, -1);
  ck_assert_uint_eq(r.lost, 3);
  r = feed(st, "A", 70, 75, 70, 75); /* those frames now arrive: nothing counted twice */
  ck_assert_uint_eq(r.lost, 0);
  ck_assert_uint_eq(r.added, 6);
  ck_assert_uint_eq(store_frames_lost(st), 10);
  ck_assert_uint_eq(store_frames_seen(st), 3 + 5 + 2 + 6);
  store_free(st);
}
END_TEST

START_TEST(empty_first_read_fixes_start) {
  store_t *st = store_new(16667);
  store_add_result_t r = feed(st, "A", 1, 20, 1, 0); /* records: [] */
  ck_assert_uint_eq(r.added, 0);
  r = feed(st, "A", 25, 30, 25, 30);
  ck_assert_uint_eq(r.lost, 4);      /* 21..24 */
  r = feed(st, "A", 21, 31, 21, 31); /* records below lastSeen are duplicates */
  ck_assert_uint_eq(r.added, 1);
  ck_assert_uint_eq(r.duplicates, 10);
  store_free(st);
}
END_TEST

START_TEST(restart_counted_once) {
  store_t *st = store_new(16667);
  feed(st, "A", 1, 500, 495, 500);
  ck_assert_int_eq(store_take_restarted(st), 0);
  store_add_result_t r = feed(st, "B", 1, 3, 1, 3); /* seq restarts: not duplicates */
  ck_assert(r.restarted);
  ck_assert_uint_eq(r.added, 3);
  ck_assert_uint_eq(r.lost, 0);
  ck_assert_uint_eq(store_restarts(st), 1);
  ck_assert_int_eq(store_take_restarted(st), 1);
  ck_assert_int_eq(store_take_restarted(st), 0); /* reported once */
  r = feed(st, "B", 1, 4, 3, 4);
  ck_assert(!r.restarted);
  ck_assert_uint_eq(r.duplicates, 1);
  ck_assert_uint_eq(store_restarts(st), 1);
  /* A second restart whose ring already overflowed: 1..9 of run C are lost. */
  r = feed(st, "C", 10, 12, 10, 12);
  ck_assert(r.restarted);
  ck_assert_uint_eq(r.lost, 9);
  ck_assert_uint_eq(store_restarts(st), 2);
  ck_assert_int_eq(store_take_restarted(st), 1);
  ck_assert_uint_eq(store_frames_seen(st), 6 + 3 + 1 + 3);
  store_free(st);
}
END_TEST

static int64_t seq_at(json_t *a, size_t i) {
  return json_integer_value(json_object_get(json_array_get(a, i), "seq"));
}

START_TEST(recent_frames_listed_and_filtered) {
  store_t *st = store_new(16667);
  feed(st, "A", 1, 1500, 1, 1500);
  ck_assert_uint_eq(store_recent_count(st), 1500); /* within the window: all kept */
  ck_assert_int_eq(store_recent_at(st, 0)->seq, 1);
  ck_assert_int_eq(store_recent_at(st, 1499)->seq, 1500);
  ck_assert_ptr_null(store_recent_at(st, 1500));
  json_t *a = store_frames_to_json(st, NULL, 20, 0, 0, NULL);
  ck_assert_uint_eq(json_array_size(a), 20);
  ck_assert_int_eq(seq_at(a, 0), 1481); /* oldest first, newest last */
  ck_assert_int_eq(seq_at(a, 19), 1500);
  ck_assert_ptr_null(json_object_get(json_array_get(a, 0), "blocks")); /* detail frames */
  json_decref(a);
  a = store_frames_to_json(st, "a", 3, 1, 0, NULL);
  ck_assert_uint_eq(json_array_size(a), 3);
  ck_assert_int_eq(seq_at(a, 0), 1495);
  ck_assert_int_eq(seq_at(a, 2), 1499);
  ck_assert_ptr_nonnull(json_object_get(json_object_get(json_array_get(a, 0), "blocks"), "BUILD"));
  json_decref(a);
  a = store_frames_to_json(st, "nobody", 10, 0, 0, NULL);
  ck_assert_uint_eq(json_array_size(a), 0);
  json_decref(a);
  a = store_frames_to_json(st, NULL, 0, 0, 0, NULL);
  ck_assert_uint_eq(json_array_size(a), 0);
  json_decref(a);
  /* The size cap keeps the newest frames that fit, and says how many it left out. */
  size_t omitted = 0;
  a = store_frames_to_json(st, NULL, 1000, 1, 0, &omitted);
  char *t = json_dumps(a, JSON_COMPACT);
  ck_assert_uint_gt(strlen(t), 64 * 1024);
  ck_assert_uint_eq(omitted, 0);
  free(t);
  json_decref(a);
  a = store_frames_to_json(st, NULL, 1000, 1, 64 * 1024, &omitted);
  t = json_dumps(a, JSON_COMPACT);
  ck_assert_uint_le(strlen(t), 64 * 1024);
  ck_assert_uint_gt(strlen(t), 60 * 1024); /* not needlessly short */
  ck_assert_uint_eq(json_array_size(a) + omitted, 1000);
  ck_assert_int_eq(seq_at(a, json_array_size(a) - 1), 1500);
  ck_assert_int_eq(seq_at(a, 0), 1500 - (int64_t)json_array_size(a) + 1);
  free(t);
  json_decref(a);
  /* Summaries cover every frame, per interaction too. */
  ck_assert_uint_eq(summary_frames(store_summary(st, NULL)), 1500);
  ck_assert_uint_eq(summary_frames(store_summary(st, "a")), 750);
  ck_assert_ptr_null(store_summary(st, "nobody"));
  json_t *clock = summary_clock_to_json(store_clock(st));
  ck_assert_str_eq(json_string_value(json_object_get(clock, "parity")), "consistent");
  ck_assert_int_eq(json_integer_value(json_object_get(clock, "medianUs")), 9000);
  json_decref(clock);
  store_free(st);
}
END_TEST

START_TEST(long_session_stays_bounded) {
  store_t *st = store_new(16667);
  for (int64_t i = 0; i < 40; i++)
    feed(st, "A", 1 + i * 500, 500 + i * 500, 1 + i * 500, 500 + i * 500);
  ck_assert_uint_eq(store_frames_seen(st), 20000);
  ck_assert_uint_eq(store_recent_count(st), STORE_WINDOW);
  ck_assert_uint_eq(store_frames_lost(st), 0);
  json_t *j = summary_to_json_bounded(store_summary(st, NULL), SUMMARY_MAX_BYTES);
  char *t = json_dumps(j, JSON_COMPACT);
  ck_assert_uint_le(strlen(t), SUMMARY_MAX_BYTES);
  free(t);
  json_decref(j);
  store_free(st);
}
END_TEST


/* The delivery model (docs/tool.md "Delivery"): ranges of positions, taken
 * oldest first, each frame once, cuts and evictions counted. */
static uint64_t take(store_t *st, uint64_t from, const char *iid, int list, size_t limit,
                     size_t max_bytes, store_take_t *t) {
  store_range_t q = {from, UINT64_MAX, iid, 16667, list, 0, limit, max_bytes};
  ck_assert_int_eq(store_range_take(st, &q, t), 0);
  ck_assert_uint_eq(summary_frames(t->summary), t->taken); /* the summary is of exactly the taken frames */
  if (list) ck_assert_uint_eq(json_array_size(t->frames), t->listed);
  if (list) ck_assert_uint_eq(t->listed, t->taken);
  return t->next;
}

START_TEST(delivery_every_frame_once) {
  store_t *st = store_new(16667);
  feed(st, "A", 1, 100, 1, 100);
  store_take_t t;
  /* Pages of 30: 30, 30, 30, 10, then nothing; seqs contiguous across pages. */
  uint64_t pos = 0;
  int64_t want = 1;
  size_t pages[] = {30, 30, 30, 10, 0};
  for (size_t i = 0; i < 5; i++) {
    uint64_t before = pos;
    pos = take(st, pos, NULL, 1, 30, 0, &t);
    ck_assert_uint_eq(t.taken, pages[i]);
    ck_assert_uint_eq(t.available, 100 - before);
    for (size_t k = 0; k < t.listed; k++) ck_assert_int_eq(seq_at(t.frames, k), want++);
    store_take_close(&t);
  }
  ck_assert_uint_eq(pos, 100);
  /* New frames continue the stream at position 100. */
  feed(st, "A", 101, 105, 101, 105);
  pos = take(st, pos, NULL, 0, 0, 0, &t); /* detail summary: everything */
  ck_assert_uint_eq(t.taken, 5);
  ck_assert_uint_eq(pos, 105);
  store_take_close(&t);
  /* A hot restart does not reset positions. */
  feed(st, "B", 1, 3, 1, 3);
  pos = take(st, pos, NULL, 1, 1000, 0, &t);
  ck_assert_uint_eq(t.taken, 3);
  ck_assert_uint_eq(pos, 108);
  ck_assert_int_eq(seq_at(t.frames, 0), 1);
  store_take_close(&t);
  store_free(st);
}
END_TEST

START_TEST(delivery_cut_by_bytes_and_evicted) {
  store_t *st = store_new(16667);
  feed(st, "A", 1, 200, 1, 200);
  store_take_t t;
  /* The byte cap ends the listing early, and the take with it: what was not
   * listed is not taken, so the next read gets it. */
  uint64_t pos = take(st, 0, NULL, 1, 1000, 2000, &t);
  ck_assert_uint_gt(t.listed, 0);
  ck_assert_uint_lt(t.listed, 200);
  ck_assert_uint_eq(t.available, 200);
  ck_assert_uint_eq(pos, t.listed);
  char *text = json_dumps(t.frames, JSON_COMPACT);
  ck_assert_uint_le(strlen(text), 2000);
  free(text);
  store_take_close(&t);
  /* One frame at least, however small the cap. */
  take(st, pos, NULL, 1, 1000, 1, &t);
  ck_assert_uint_eq(t.taken, 1);
  store_take_close(&t);
  /* Beyond the window: the frames that fell out are counted, not listed. */
  feed(st, "A", 201, 2200, 201, 2200); /* (a reply holds at most 4 096 records) */
  feed(st, "A", 2201, STORE_WINDOW + 300, 2201, STORE_WINDOW + 300);
  pos = take(st, 10, NULL, 0, 0, 0, &t);
  ck_assert_uint_eq(t.evicted, 300 - 10);
  ck_assert_uint_eq(t.taken, STORE_WINDOW);
  ck_assert_uint_eq(pos, STORE_WINDOW + 300);
  store_take_close(&t);
  /* A position past the end finds nothing and stays where it is. */
  pos = take(st, STORE_WINDOW + 1000, NULL, 1, 10, 0, &t);
  ck_assert_uint_eq(t.taken, 0);
  ck_assert_uint_eq(pos, STORE_WINDOW + 1000);
  store_take_close(&t);
  store_free(st);
}
END_TEST

START_TEST(delivery_filtered_by_interaction) {
  store_t *st = store_new(16667);
  feed(st, "A", 1, 20, 1, 20); /* every other frame is of interaction "a" */
  store_take_t t;
  uint64_t pos = take(st, 0, "a", 1, 4, 0, &t);
  ck_assert_uint_eq(t.taken, 4);
  ck_assert_uint_eq(t.available, 10);
  for (size_t k = 0; k < 4; k++) {
    const char *iid = json_string_value(json_object_get(json_array_get(t.frames, k), "interactionId"));
    ck_assert_str_eq(iid, "a");
  }
  store_take_close(&t);
  take(st, pos, "a", 1, 100, 0, &t);
  ck_assert_uint_eq(t.taken, 6);
  store_take_close(&t);
  take(st, 0, "nobody", 1, 100, 0, &t);
  ck_assert_uint_eq(t.taken, 0);
  ck_assert_uint_eq(t.available, 0);
  store_take_close(&t);
  store_free(st);
}
END_TEST

/* A store without its own summary (a read outside sessions): it keeps,
 * delivers and drops duplicates as any, and the range it hands out is
 * summarised as with a session's store. */
START_TEST(plain_store_keeps_frames_without_a_summary) {
  store_t *plain = store_new_plain(), *full = store_new(16667);
  for (int k = 0; k < 2; k++) { /* the second feed is all duplicates */
    feed(plain, "A", 1, 40, 1, 40);
    feed(full, "A", 1, 40, 1, 40);
  }
  ck_assert_ptr_null(store_summary(plain, NULL));
  ck_assert_uint_eq(store_frames_seen(plain), 40);
  store_take_t a, b;
  take(plain, 0, NULL, 0, 0, 0, &a);
  take(full, 0, NULL, 0, 0, 0, &b);
  ck_assert_uint_eq(a.taken, 40);
  json_t *ja = summary_to_json(a.summary, 0, 0, 0), *jb = summary_to_json(b.summary, 0, 0, 0);
  size_t flags = JSON_SORT_KEYS | JSON_COMPACT;
  char *ta = json_dumps(ja, flags), *tb = json_dumps(jb, flags);
  ck_assert_str_eq(ta, tb);
  ck_assert_ptr_nonnull(strstr(ta, "\"frames\":40"));
  free(ta);
  free(tb);
  json_decref(ja);
  json_decref(jb);
  store_take_close(&a);
  store_take_close(&b);
  store_free(plain);
  store_free(full);
}
END_TEST

/* Block names are shared (record.h): the records of a protocol-2 reply and
 * the store's copies of them hold one name, which outlives the reply. */
START_TEST(block_names_shared_and_outlive_the_reply) {
  json_t *j = json_loads(
      "{\"protocol\":2,\"watcherVersion\":\"x\",\"runId\":\"R\",\"livenessCounter\":1,"
      "\"nowUs\":0,\"collecting\":true,\"lifecycle\":null,\"framesEnabled\":true,"
      "\"refreshRate\":60.0,\"interaction\":null,\"firstSeq\":1,\"lastSeq\":2,\"pending\":0,"
      "\"droppedAttributions\":0,\"blockNames\":[\"BUILD\",\"Card\"],\"records\":["
      "{\"seq\":1,\"frameNumber\":10,\"atUs\":9000,\"vsyncStartUs\":1000,\"buildUs\":900,"
      "\"rasterUs\":800,\"vsyncOverheadUs\":10,\"totalSpanUs\":2000,\"blocks\":[1,500,500,1,0,900,400,1]},"
      "{\"seq\":2,\"frameNumber\":11,\"atUs\":26000,\"vsyncStartUs\":18000,\"buildUs\":900,"
      "\"rasterUs\":800,\"vsyncOverheadUs\":10,\"totalSpanUs\":2000,\"blocks\":[0,900,400,1]}]}",
      0, NULL);
  ck_assert_ptr_nonnull(j);
  record_reply_t r;
  char err[RECORD_ERR_LEN] = "";
  ck_assert_msg(record_reply_parse(&r, j, err, sizeof err) == 0, "%s", err);
  json_decref(j);
  ck_assert_ptr_eq(r.records[0].blocks[1].name, r.records[1].blocks[0].name);
  store_t *st = store_new(16667);
  ck_assert_int_eq(store_add_reply(st, &r, NULL), 0);
  char *build = r.records[1].blocks[0].name;
  record_reply_close(&r);
  ck_assert_ptr_eq(store_at(st, 0)->blocks[1].name, build);
  ck_assert_ptr_eq(store_at(st, 1)->blocks[0].name, build);
  ck_assert_str_eq(store_at(st, 1)->blocks[0].name, "BUILD");
  ck_assert_str_eq(store_at(st, 0)->blocks[0].name, "Card");
  store_drop_blocks(st);
  ck_assert_uint_eq(store_at(st, 0)->nblocks, 0);
  store_free(st);
}
END_TEST

int main(void) {
  Suite *s = suite_create("store");
  TCase *tc = tcase_create("store");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, duplicates_dropped);
  tcase_add_test(tc, startup_frames_marked);
  tcase_add_test(tc, frame_number_gaps_counted_apart_from_loss);
  tcase_add_test(tc, loss_counted_exactly);
  tcase_add_test(tc, empty_first_read_fixes_start);
  tcase_add_test(tc, restart_counted_once);
  tcase_add_test(tc, recent_frames_listed_and_filtered);
  tcase_add_test(tc, long_session_stays_bounded);
  tcase_add_test(tc, delivery_every_frame_once);
  tcase_add_test(tc, delivery_cut_by_bytes_and_evicted);
  tcase_add_test(tc, delivery_filtered_by_interaction);
  tcase_add_test(tc, plain_store_keeps_frames_without_a_summary);
  tcase_add_test(tc, block_names_shared_and_outlive_the_reply);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
