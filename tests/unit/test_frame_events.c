/* frame_events: the stand-in watcher built from Flutter.Frame events. Every
 * answer it gives must pass the same validation a real watcher's does
 * (record_reply_parse), frames must be counted exactly once per run, and
 * the FrameTiming phases must come back as the watcher would report them. */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "frame_events.h"
#include "record.h"

static json_t *frame(int64_t number, int64_t start, int64_t elapsed, int64_t build, int64_t raster,
                     int64_t overhead) {
  return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "number", (json_int_t)number, "startTime",
                   (json_int_t)start, "elapsed", (json_int_t)elapsed, "build", (json_int_t)build,
                   "raster", (json_int_t)raster, "vsyncOverhead", (json_int_t)overhead);
}

static int add(fe_t *fe, const char *iso, int64_t number) {
  json_t *d = frame(number, 1000000 + number * 16667, 9000, 5000, 3000, 400);
  int rc = fe_add(fe, iso, "Flutter.Frame", d, iso);
  json_decref(d);
  return rc;
}

/* The answer to params, validated as a watcher reply. */
static void answer(fe_t *fe, json_t *params, record_reply_t *r) {
  int rpc = -1;
  char detail[128];
  json_t *o = fe_answer(fe, params, &rpc, detail, sizeof detail);
  json_decref(params);
  ck_assert_msg(o != NULL, "no answer: %d %s", rpc, detail);
  char err[RECORD_ERR_LEN];
  ck_assert_msg(record_reply_parse(r, o, err, sizeof err) == 0, "invalid reply: %s", err);
  json_decref(o);
  ck_assert(r->frame_events);
}

START_TEST(frames_come_back_as_records) {
  fe_t *fe = fe_new(NULL, NULL);
  json_t *d = frame(7, 5000400, 12000, 6000, 4000, 400);
  ck_assert_int_eq(fe_add(fe, "isolates/1", "Flutter.Frame", d, "isolates/1"), 1);
  json_decref(d);
  record_reply_t r;
  answer(fe, json_pack("{s:s, s:s, s:s}", "action", "read", "since", "0", "limit", "10"), &r);
  ck_assert_uint_eq(r.nrecords, 1);
  const frame_t *f = &r.records[0];
  ck_assert_int_eq(f->seq, 1);
  ck_assert_int_eq(f->frame_number, 7);
  /* startTime is the build start: the vsync came vsyncOverhead earlier */
  ck_assert_int_eq(f->vsync_start_us, 5000000);
  ck_assert_int_eq(f->build_us, 6000);
  ck_assert_int_eq(f->raster_us, 4000);
  ck_assert_int_eq(f->vsync_overhead_us, 400);
  ck_assert_int_eq(f->total_span_us, 12000);
  ck_assert_uint_eq(f->nblocks, 0);
  ck_assert_int_eq(r.liveness_counter, 7);
  ck_assert_int_eq(r.last_seq, 1);
  record_reply_close(&r);
  fe_free(fe);
}
END_TEST

START_TEST(each_frame_once_and_reads_page) {
  fe_t *fe = fe_new(NULL, NULL);
  for (int64_t n = 1; n <= 30; n++) ck_assert_int_eq(add(fe, "isolates/1", n), 1);
  /* a replayed history (DDS) or a second subscription repeats numbers */
  for (int64_t n = 20; n <= 30; n++) ck_assert_int_eq(add(fe, "isolates/1", n), 0);
  ck_assert_uint_eq(fe_frames(fe), 30);
  record_reply_t r;
  int64_t since = 0, got = 0, pages = 0;
  for (;;) {
    char s[24];
    snprintf(s, sizeof s, "%lld", (long long)since);
    answer(fe, json_pack("{s:s, s:s, s:s}", "action", "read", "since", s, "limit", "7"), &r);
    for (size_t i = 0; i < r.nrecords; i++) {
      ck_assert_int_eq(r.records[i].seq, since + 1); /* contiguous, nothing twice */
      since = r.records[i].seq;
      got++;
    }
    pages++;
    int more = r.more;
    record_reply_close(&r);
    if (!more) break;
  }
  ck_assert_int_eq(got, 30);
  ck_assert_int_eq(pages, 5);
  fe_free(fe);
}
END_TEST

START_TEST(web_frames_without_numbers_are_counted_in_order) {
  fe_t *fe = fe_new(NULL, NULL);
  for (int i = 0; i < 3; i++) {
    json_t *d = frame(-1, 1000 + i * 16667, 9000, 5000, 3000, 400);
    ck_assert_int_eq(fe_add(fe, "1", "Flutter.Frame", d, "1"), 1);
    json_decref(d);
  }
  record_reply_t r;
  answer(fe, json_pack("{s:s, s:s}", "action", "read", "since", "0"), &r);
  ck_assert_uint_eq(r.nrecords, 3);
  ck_assert_int_eq(r.records[2].frame_number, 2);
  record_reply_close(&r);
  fe_free(fe);
}
END_TEST

/* web_ui's FrameTiming defaults frameNumber to 1 and its older recorder never
 * sets it: every web frame carries one number. Each is a frame (told apart by
 * its start), numbered in arrival order; a replay of them is not. */
START_TEST(web_frames_with_one_constant_number_are_all_kept) {
  fe_t *fe = fe_new(NULL, NULL);
  for (int round = 0; round < 2; round++)
    for (int i = 0; i < 5; i++) {
      json_t *d = frame(1, 1000 + i * 16667, 9000, 5000, 3000, 400);
      ck_assert_int_eq(fe_add(fe, "1", "Flutter.Frame", d, "1"), round == 0);
      json_decref(d);
    }
  json_t *d = frame(1, 1000 + 5 * 16667, 9000, 5000, 3000, 400); /* the next one drawn */
  ck_assert_int_eq(fe_add(fe, "1", "Flutter.Frame", d, "1"), 1);
  json_decref(d);
  ck_assert_uint_eq(fe_frames(fe), 6);
  record_reply_t r;
  answer(fe, json_pack("{s:s, s:s}", "action", "read", "since", "0"), &r);
  ck_assert_uint_eq(r.nrecords, 6);
  for (size_t i = 0; i < r.nrecords; i++)
    ck_assert_int_eq(r.records[i].frame_number, 1 + (int64_t)i);
  ck_assert_int_eq(r.liveness_counter, 6);
  record_reply_close(&r);
  fe_free(fe);
}
END_TEST

START_TEST(ring_is_bounded_and_says_where_it_starts) {
  fe_t *fe = fe_new(NULL, NULL);
  for (int64_t n = 1; n <= FE_RING + 10; n++) add(fe, "isolates/1", n);
  record_reply_t r;
  answer(fe, json_pack("{s:s}", "action", "status"), &r);
  ck_assert_int_eq(r.first_seq, 11); /* the oldest ten fell out: the store counts them lost */
  ck_assert_int_eq(r.last_seq, FE_RING + 10);
  record_reply_close(&r);
  fe_free(fe);
}
END_TEST

/* A read whose since is the oldest frame held starts after it: that frame
 * was handed out already (issue 24, item 3: it came again on the wire, and
 * only the store's de-duplication hid it). */
START_TEST(since_the_oldest_frame_held_starts_after_it) {
  fe_t *fe = fe_new(NULL, NULL);
  for (int64_t n = 1; n <= FE_RING + 10; n++) add(fe, "isolates/1", n);
  record_reply_t r;
  answer(fe, json_pack("{s:s, s:s, s:s}", "action", "read", "since", "11", "limit", "3"), &r);
  ck_assert_int_eq(r.first_seq, 11);
  ck_assert_uint_eq(r.nrecords, 3);
  ck_assert_int_eq(r.records[0].seq, 12);
  ck_assert_int_eq(r.records[2].seq, 14);
  record_reply_close(&r);
  /* one before the oldest: from the oldest on */
  answer(fe, json_pack("{s:s, s:s, s:s}", "action", "read", "since", "10", "limit", "1"), &r);
  ck_assert_uint_eq(r.nrecords, 1);
  ck_assert_int_eq(r.records[0].seq, 11);
  record_reply_close(&r);
  fe_free(fe);
}
END_TEST

/* `more` says exactly whether frames are left: 11 frames read 10 at a
 * time say more, 10 do not. One short would end a drain early, and a stop
 * would miss its last frame. */
START_TEST(more_is_exact_at_the_page_edge) {
  for (int64_t frames = 10; frames <= 11; frames++) {
    fe_t *fe = fe_new(NULL, NULL);
    for (int64_t n = 1; n <= frames; n++) ck_assert_int_eq(add(fe, "isolates/1", n), 1);
    record_reply_t r;
    answer(fe, json_pack("{s:s, s:s, s:s}", "action", "read", "since", "0", "limit", "10"), &r);
    ck_assert_uint_eq(r.nrecords, 10);
    ck_assert_msg(r.more == (frames == 11), "%lld frames: more %d", (long long)frames, r.more);
    record_reply_close(&r);
    answer(fe, json_pack("{s:s, s:s, s:s}", "action", "read", "since", "10", "limit", "10"), &r);
    ck_assert_uint_eq(r.nrecords, (size_t)(frames - 10));
    ck_assert(!r.more);
    record_reply_close(&r);
    fe_free(fe);
  }
}
END_TEST

START_TEST(a_new_isolate_is_a_new_run) {
  fe_t *fe = fe_new(NULL, NULL);
  for (int64_t n = 1; n <= 5; n++) add(fe, "isolates/1", n);
  record_reply_t r;
  answer(fe, json_pack("{s:s}", "action", "status"), &r);
  char run1[RECORD_MAX_RUN_ID + 1];
  snprintf(run1, sizeof run1, "%s", r.run_id);
  record_reply_close(&r);
  /* an old isolate's replayed events while another is current: not ours */
  json_t *d = frame(99, 1, 1, 1, 1, 0);
  ck_assert_int_eq(fe_add(fe, "isolates/0", "Flutter.Frame", d, "isolates/1"), 0);
  json_decref(d);
  /* the hot restart's isolate: a new run, seq from 1, frame numbers go on */
  ck_assert_int_eq(add(fe, "isolates/2", 6), 1);
  answer(fe, json_pack("{s:s, s:s}", "action", "read", "since", "0"), &r);
  ck_assert_str_ne(r.run_id, run1);
  ck_assert_uint_eq(r.nrecords, 1);
  ck_assert_int_eq(r.records[0].seq, 1);
  ck_assert_int_eq(r.records[0].frame_number, 6);
  record_reply_close(&r);
  fe_free(fe);
}
END_TEST

START_TEST(a_reconnect_does_not_replay_an_old_run) {
  /* Issue 21 item 4: run of isolates/1 (frames 1-5). The socket drops; on
   * the new one DDS replays isolates/0's old events before the VM says which
   * isolate is current (current ""). They must not start a run: held. The
   * app was hot-restarted meanwhile (isolates/2, frame 6), also held until
   * the VM names isolates/2: then its frame starts the new run, and the old
   * isolate's are dropped. */
  fe_t *fe = fe_new(NULL, NULL);
  for (int64_t n = 1; n <= 5; n++) add(fe, "isolates/1", n);
  record_reply_t r;
  answer(fe, json_pack("{s:s}", "action", "status"), &r);
  char run1[RECORD_MAX_RUN_ID + 1];
  snprintf(run1, sizeof run1, "%s", r.run_id);
  record_reply_close(&r);
  json_t *old = frame(99, 1, 1, 1, 1, 0),
         *fresh = frame(6, 1000000 + 6 * 16667, 9000, 5000, 3000, 400);
  ck_assert_int_eq(fe_add(fe, "isolates/0", "Flutter.Frame", old, ""), 0);
  ck_assert_int_eq(fe_add(fe, "isolates/2", "Flutter.Frame", fresh, ""), 0);
  json_decref(old);
  json_decref(fresh);
  answer(fe, json_pack("{s:s, s:s}", "action", "read", "since", "0"), &r);
  ck_assert_str_eq(r.run_id, run1); /* still the first run, with its 5 frames */
  ck_assert_uint_eq(r.nrecords, 5);
  record_reply_close(&r);
  fe_isolate_known(fe, "isolates/2");
  answer(fe, json_pack("{s:s, s:s}", "action", "read", "since", "0"), &r);
  ck_assert_str_ne(r.run_id, run1);
  ck_assert_uint_eq(r.nrecords, 1);
  ck_assert_int_eq(r.records[0].frame_number, 6);
  record_reply_close(&r);
  /* Nothing left held: knowing it again changes nothing. */
  fe_isolate_known(fe, "isolates/0");
  answer(fe, json_pack("{s:s, s:s}", "action", "read", "since", "0"), &r);
  ck_assert_uint_eq(r.nrecords, 1);
  ck_assert_int_eq(r.records[0].frame_number, 6);
  record_reply_close(&r);
  fe_free(fe);
}
END_TEST

/* A frame of iso's, added while current is the isolate the tool talks to. */
static int add_cur(fe_t *fe, const char *iso, int64_t number, const char *current) {
  json_t *d = frame(number, 1000000 + number * 16667, 9000, 5000, 3000, 400);
  int rc = fe_add(fe, iso, "Flutter.Frame", d, current);
  json_decref(d);
  return rc;
}

/* Issue 31 item 5: the first connect after a hot restart, through DDS. The
 * replay brings the old isolate's frames, then the new one's, before the VM
 * names the current isolate; the socket's CONNECTED comes with it still ""
 * (nothing may be dropped then). Once named: the new isolate's newest
 * FE_HELD_MAX frames are the run, none of the old isolate's. */
START_TEST(first_connect_after_a_restart_through_dds) {
  fe_t *fe = fe_new(NULL, NULL);
  for (int64_t n = 1; n <= 3; n++) ck_assert_int_eq(add_cur(fe, "isolates/1", n, ""), 0);
  for (int64_t n = 1; n <= 300; n++) ck_assert_int_eq(add_cur(fe, "isolates/2", n, ""), 0);
  fe_isolate_known(fe, ""); /* connected, the isolate not picked yet: still held */
  fe_isolate_known(fe, "isolates/2");
  record_reply_t r;
  answer(fe, json_pack("{s:s, s:s, s:s}", "action", "read", "since", "0", "limit", "500"), &r);
  ck_assert_uint_eq(r.nrecords, FE_HELD_MAX);
  ck_assert_int_eq(r.records[0].frame_number, 300 - FE_HELD_MAX + 1);
  ck_assert_int_eq(r.records[r.nrecords - 1].frame_number, 300);
  ck_assert_ptr_nonnull(strstr(r.run_id, "isolates/2"));
  record_reply_close(&r);
  /* Frames are the isolate's their event names: a late replay of the old
   * isolate's is dropped, the current one's go on. */
  ck_assert_int_eq(add_cur(fe, "isolates/1", 4, "isolates/2"), 0);
  ck_assert_int_eq(add_cur(fe, "isolates/2", 301, "isolates/2"), 1);
  fe_free(fe);
}
END_TEST

/* Closed while frames are still held (the isolate never named): they are
 * let go, not kept (jansson's count of their references is back to ours). */
START_TEST(frames_still_held_are_released_on_free) {
  fe_t *fe = fe_new(NULL, NULL);
  json_t *d = frame(1, 1016667, 9000, 5000, 3000, 400);
  ck_assert_int_eq(fe_add(fe, "isolates/1", "Flutter.Frame", d, ""), 0);
  ck_assert_uint_eq(d->refcount, 2); /* held */
  fe_free(fe);
  ck_assert_uint_eq(d->refcount, 1);
  json_decref(d);
}
END_TEST

/* A fresh server whose first events come once the isolate is known: an old
 * isolate's replayed frame starts no run; held frames are released by the
 * next event, in order, before it. */
START_TEST(frames_belong_to_their_events_isolate) {
  fe_t *fe = fe_new(NULL, NULL);
  ck_assert_int_eq(add_cur(fe, "isolates/1", 50, "isolates/2"), 0);
  ck_assert_int_eq(add_cur(fe, "isolates/2", 7, ""), 0);
  ck_assert_int_eq(add_cur(fe, "isolates/2", 8, "isolates/2"), 1);
  record_reply_t r;
  answer(fe, json_pack("{s:s, s:s}", "action", "read", "since", "0"), &r);
  ck_assert_uint_eq(r.nrecords, 2);
  ck_assert_int_eq(r.records[0].frame_number, 7);
  ck_assert_int_eq(r.records[1].frame_number, 8);
  record_reply_close(&r);
  fe_free(fe);
}
END_TEST

/* A reconnect after two hot restarts: the hold fills with the middle
 * isolate's frames and the current one's; the current one's newest are
 * kept, whatever came first. */
START_TEST(a_reconnect_keeps_the_current_isolates_newest) {
  fe_t *fe = fe_new(NULL, NULL);
  for (int64_t n = 1; n <= 5; n++) add(fe, "isolates/1", n);
  for (int64_t n = 6; n <= 200; n++) add_cur(fe, "isolates/2", n, "");
  for (int64_t n = 201; n <= 400; n++) add_cur(fe, "isolates/3", n, "");
  fe_isolate_known(fe, "isolates/3");
  record_reply_t r;
  answer(fe, json_pack("{s:s, s:s, s:s}", "action", "read", "since", "0", "limit", "500"), &r);
  ck_assert_uint_eq(r.nrecords, 200);
  ck_assert_int_eq(r.records[0].frame_number, 201);
  ck_assert_int_eq(r.records[r.nrecords - 1].frame_number, 400);
  record_reply_close(&r);
  fe_free(fe);
}
END_TEST

START_TEST(interactions_mark_the_frames_that_follow) {
  fe_t *fe = fe_new(NULL, NULL);
  add(fe, "isolates/1", 1);
  record_reply_t r;
  answer(fe,
         json_pack("{s:s, s:s, s:s}", "action", "start", "interactionId", "scroll", "linkedBy",
                   "agent"),
         &r);
  ck_assert(r.collecting);
  ck_assert_str_eq(r.interaction_id, "scroll");
  record_reply_close(&r);
  add(fe, "isolates/1", 2);
  answer(fe, json_pack("{s:s}", "action", "mark"), &r); /* ends it */
  ck_assert_ptr_null(r.interaction_id);
  record_reply_close(&r);
  add(fe, "isolates/1", 3);
  answer(fe, json_pack("{s:s, s:s}", "action", "read", "since", "0"), &r);
  ck_assert_uint_eq(r.nrecords, 3);
  ck_assert_ptr_null(r.records[0].interaction_id);
  ck_assert_str_eq(r.records[1].interaction_id, "scroll");
  ck_assert_str_eq(r.records[1].linked_by, "agent");
  ck_assert_ptr_null(r.records[2].interaction_id);
  record_reply_close(&r);
  answer(fe, json_pack("{s:s}", "action", "stop"), &r);
  ck_assert(!r.collecting);
  record_reply_close(&r);
  fe_free(fe);
}
END_TEST

START_TEST(bad_events_and_params_are_refused) {
  fe_t *fe = fe_new(NULL, NULL);
  static const char *const bad[] = {
      "{\"number\":\"1\",\"startTime\":1,\"elapsed\":1,\"build\":1,\"raster\":1,\"vsyncOverhead\":"
      "0}",
      "{\"number\":1,\"startTime\":1,\"elapsed\":-5,\"build\":1,\"raster\":1,\"vsyncOverhead\":0}",
      "{\"number\":1,\"startTime\":1,\"elapsed\":1,\"build\":1,\"raster\":1}",
      "{\"number\":1.5,\"startTime\":1,\"elapsed\":1,\"build\":1,\"raster\":1,\"vsyncOverhead\":0}",
      "{\"number\":1,\"startTime\":1,\"elapsed\":1099511627777,\"build\":1,\"raster\":1,"
      "\"vsyncOverhead\":0}",
      "[]",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    json_t *d = json_loads(bad[i], JSON_DECODE_ANY, NULL);
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq(fe_add(fe, "isolates/1", "Flutter.Frame", d, "isolates/1"), 0);
    json_decref(d);
  }
  json_t *d = frame(1, 1, 1, 1, 1, 0);
  ck_assert_int_eq(fe_add(fe, "isolates/1", "Flutter.Error", d, "isolates/1"), 0); /* other kinds */
  ck_assert_int_eq(fe_add(fe, NULL, "Flutter.Frame", d, "isolates/1"), 0);
  json_decref(d);
  ck_assert_uint_eq(fe_frames(fe), 0);
  int rpc = 0;
  char detail[128];
  json_t *params = json_pack("{s:s}", "action", "explode");
  ck_assert_ptr_null(fe_answer(fe, params, &rpc, detail, sizeof detail));
  ck_assert_int_eq(rpc, -32602);
  json_decref(params);
  params = json_pack("{s:s, s:s}", "action", "read", "since", "x1");
  ck_assert_ptr_null(fe_answer(fe, params, &rpc, detail, sizeof detail));
  ck_assert_int_eq(rpc, -32602);
  json_decref(params);
  fe_free(fe);
}
END_TEST

int main(void) {
  Suite *s = suite_create("frame_events");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, frames_come_back_as_records);
  tcase_add_test(tc, each_frame_once_and_reads_page);
  tcase_add_test(tc, more_is_exact_at_the_page_edge);
  tcase_add_test(tc, ring_is_bounded_and_says_where_it_starts);
  tcase_add_test(tc, web_frames_without_numbers_are_counted_in_order);
  tcase_add_test(tc, web_frames_with_one_constant_number_are_all_kept);
  tcase_add_test(tc, since_the_oldest_frame_held_starts_after_it);
  tcase_add_test(tc, first_connect_after_a_restart_through_dds);
  tcase_add_test(tc, frames_belong_to_their_events_isolate);
  tcase_add_test(tc, frames_still_held_are_released_on_free);
  tcase_add_test(tc, a_reconnect_keeps_the_current_isolates_newest);
  tcase_add_test(tc, a_new_isolate_is_a_new_run);
  tcase_add_test(tc, a_reconnect_does_not_replay_an_old_run);
  tcase_add_test(tc, interactions_mark_the_frames_that_follow);
  tcase_add_test(tc, bad_events_and_params_are_refused);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
