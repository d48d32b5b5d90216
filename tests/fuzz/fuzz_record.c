/* Fuzz target: validation of ext.telescope.frames replies and their
 * FramePerfRecords (record.c), and what the server does with an accepted
 * reply: the store (dedup, loss, restarts), the summaries and the listings.
 *
 * Replies come in either wire form (protocol 1 or 2); the checks are the same.
 * The input is one reply object, or an array of up to 16 replies taken in
 * order into one store. Checked for every input: a refused reply leaves the
 * output zeroed and says why; an accepted one holds the schema's promises
 * (seq strictly increasing, interaction fields paired, bounded counts); each
 * record survives record_frame_to_json -> record_frame_parse unchanged; a
 * reply taken twice adds nothing the second time; every summary and listing
 * is produced and stays within its byte bound. The read path's reader of
 * protocol-3 records from their text agrees with all of it (check_text_path). */
#include <jansson.h>
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "record.h"
#include "vm_wire.h"
#include "store.h"
#include "summary.h"

#define MAX_REPLIES 16
#define LIST_CAP 65536

static int all_zero(const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    if (b[i]) return 0;
  return 1;
}

static void check_accepted(const record_reply_t *r) {
  FUZZ_ASSERT(r->run_id && r->watcher_version);
  FUZZ_ASSERT(strlen(r->run_id) <= RECORD_MAX_RUN_ID);
  FUZZ_ASSERT((r->interaction_id == NULL) == (r->linked_by == NULL));
  FUZZ_ASSERT(r->nrecords <= RECORD_MAX_RECORDS);
  FUZZ_ASSERT(r->has_records || r->nrecords == 0);
  /* Every wire form ends in the same structs; the diagnostics are bounded. */
  FUZZ_ASSERT(r->protocol >= 1 && r->protocol <= RECORD_PROTOCOL_MAX);
  /* Protocol 3 carries every field: the cache counts are never "absent". */
  for (size_t i = 0; r->protocol == 3 && i < r->nrecords; i++)
    FUZZ_ASSERT(r->records[i].layer_cache_count >= 0 && r->records[i].picture_cache_count >= 0);
  FUZZ_ASSERT(!r->build_mode || !strcmp(r->build_mode, "debug") ||
              !strcmp(r->build_mode, "profile") || !strcmp(r->build_mode, "release"));
  FUZZ_ASSERT(!r->drain_error || (r->drain_error[0] &&
                                  record_utf8_length(r->drain_error) <= RECORD_MAX_DRAIN_ERROR));
  FUZZ_ASSERT((r->timings_missing == 0 || r->timings_missing == 1) &&
              (r->collection_auto_off == 0 || r->collection_auto_off == 1));
  FUZZ_ASSERT(r->now_us >= -RECORD_MAX_TIME_US && r->now_us <= RECORD_MAX_TIME_US);
  for (size_t i = 0; i < r->nrecords; i++) {
    const frame_t *f = &r->records[i];
    FUZZ_ASSERT(i == 0 || f->seq > r->records[i - 1].seq);
    FUZZ_ASSERT((f->interaction_id == NULL) == (f->linked_by == NULL));
    FUZZ_ASSERT(f->nblocks <= RECORD_MAX_BLOCKS);
    FUZZ_ASSERT(f->build_us <= RECORD_MAX_AMOUNT && f->total_span_us <= RECORD_MAX_AMOUNT);
    FUZZ_ASSERT(f->at_us >= -RECORD_MAX_TIME_US && f->at_us <= RECORD_MAX_TIME_US);
    for (size_t k = 0; k < f->nblocks; k++)
      FUZZ_ASSERT(f->blocks[k].self_micros <= f->blocks[k].micros &&
                  f->blocks[k].micros <= RECORD_MAX_AMOUNT && f->blocks[k].count >= 1);
    /* The trip through JSON and back changes nothing. */
    json_t *j = record_frame_to_json(f, 1);
    FUZZ_ASSERT(j != NULL);
    frame_t back;
    char err[RECORD_ERR_LEN];
    FUZZ_ASSERT(record_frame_parse(&back, j, "again", err, sizeof err) == 0);
    json_t *j2 = record_frame_to_json(&back, 1);
    FUZZ_ASSERT(json_equal(j, j2));
    json_decref(j2);
    json_decref(j);
    /* A deep copy is the same record. */
    frame_t copy;
    FUZZ_ASSERT(record_frame_copy(&copy, &back) == 0);
    j = record_frame_to_json(&copy, 0);
    FUZZ_ASSERT(j != NULL && json_object_get(j, "blocks") == NULL);
    json_decref(j);
    record_frame_close(&copy);
    record_frame_close(&back);
  }
}

static size_t dumped_size(const json_t *j) {
  return json_dumpb(j, NULL, 0, JSON_COMPACT);
}

static void check_outputs(store_t *st, const record_reply_t *r) {
  const summary_t *sum = store_summary(st, NULL);
  FUZZ_ASSERT(sum != NULL);
  json_t *j = summary_to_json(sum, SIZE_MAX, SIZE_MAX, SIZE_MAX);
  FUZZ_ASSERT(j != NULL);
  json_decref(j);
  j = summary_to_json_bounded(sum, SUMMARY_MAX_BYTES);
  FUZZ_ASSERT(j != NULL && dumped_size(j) <= SUMMARY_MAX_BYTES);
  json_decref(j);
  for (size_t i = 0; i < r->nrecords; i++) {
    const char *id = r->records[i].interaction_id;
    if (!id) continue;
    const summary_t *one = store_summary(st, id);
    if (!one) continue; /* beyond SUMMARY_MAX_INTERACTIONS: counted under "(other)" */
    j = summary_to_json(one, 3, 3, 0);
    FUZZ_ASSERT(j != NULL);
    json_decref(j);
  }
  char *spark = summary_sparkline(sum);
  FUZZ_ASSERT(spark != NULL && record_utf8_length(spark) <= SUMMARY_SPARK_MAX);
  free(spark);
  size_t omitted = 0;
  j = store_frames_to_json(st, NULL, STORE_WINDOW, 1, LIST_CAP, &omitted);
  FUZZ_ASSERT(j != NULL && dumped_size(j) <= LIST_CAP);
  FUZZ_ASSERT(json_array_size(j) + omitted <= store_recent_count(st));
  json_decref(j);
  j = store_frames_to_json(st, r->interaction_id, 5, 0, 0, NULL);
  FUZZ_ASSERT(j != NULL && json_array_size(j) <= 5);
  json_decref(j);
  j = summary_clock_to_json(store_clock(st));
  FUZZ_ASSERT(j != NULL);
  json_decref(j);
}

static void take_reply(store_t *st, const json_t *reply) {
  record_reply_t r;
  char err[RECORD_ERR_LEN];
  err[0] = '\0';
  if (record_reply_parse(&r, reply, err, sizeof err) != 0) {
    FUZZ_ASSERT(err[0] != '\0');
    FUZZ_ASSERT(all_zero(&r, sizeof r));
    return;
  }
  check_accepted(&r);
  uint64_t seen = store_frames_seen(st);
  store_add_result_t res;
  FUZZ_ASSERT(store_add_reply(st, &r, &res) == 0);
  FUZZ_ASSERT(res.added + res.duplicates == r.nrecords);
  FUZZ_ASSERT(store_frames_seen(st) == seen + res.added);
  FUZZ_ASSERT(strcmp(store_run_id(st), r.run_id) == 0);
  /* The same reply again: every record is a duplicate now. */
  FUZZ_ASSERT(store_add_reply(st, &r, &res) == 0);
  FUZZ_ASSERT(res.added == 0 && res.lost == 0 && !res.restarted);
  check_outputs(st, &r);
  record_reply_close(&r);
  FUZZ_ASSERT(all_zero(&r, sizeof r));
}

static int same_record(const frame_t *a, const frame_t *b) {
  json_t *ja = record_frame_to_json(a, 1), *jb = record_frame_to_json(b, 1);
  int same = ja && jb && json_equal(ja, jb);
  json_decref(ja);
  json_decref(jb);
  return same;
}

/* The read path's reader: the input, as the result of a reply, with its
 * records cut out of the text as it came (vm_wire_cut_records) and read
 * from that text (record_reply_parse_raw). What jansson refuses, it refuses;
 * otherwise it gives what the tree reader gives: the same outcome, the same
 * message, the same records. */
static void check_text_path(const uint8_t *data, size_t size, const json_t *input) {
  size_t len = size + 11, rest, rl;
  char *msg = malloc(len);
  FUZZ_ASSERT(msg != NULL);
  memcpy(msg, "{\"result\":", 10);
  memcpy(msg + 10, data, size);
  msg[len - 1] = '}';
  char *b = vm_wire_cut_records(msg, len, &rest, &rl);
  json_t *env = b ? json_loadb(b + rl, rest, 0, NULL) : NULL;
  if (env) {
    record_reply_t t, r;
    char et[RECORD_ERR_LEN] = "", er[RECORD_ERR_LEN] = "";
    int rt = record_reply_parse_raw(&t, json_object_get(env, "result"), b, rl, et, sizeof et);
    if (!json_is_object(input)) {
      FUZZ_ASSERT(rt == -1); /* the records' text was not JSON */
    } else {
      int rr = record_reply_parse(&r, input, er, sizeof er);
      FUZZ_ASSERT(rt == rr && strcmp(et, er) == 0);
      FUZZ_ASSERT(t.nrecords == r.nrecords && t.has_records == r.has_records);
      for (size_t i = 0; i < t.nrecords; i++) FUZZ_ASSERT(same_record(&t.records[i], &r.records[i]));
      record_reply_close(&r);
    }
    record_reply_close(&t);
    json_decref(env);
  }
  free(b);
  free(msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  json_t *input = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
  check_text_path(data, size, input);
  if (!input) return 0;
  store_t *st = store_new(summary_budget_us(0, 60));
  FUZZ_ASSERT(st != NULL);
  if (json_is_array(input)) {
    size_t i;
    json_t *reply;
    json_array_foreach(input, i, reply) {
      if (i == MAX_REPLIES) break;
      take_reply(st, reply);
    }
  } else {
    take_reply(st, input);
  }
  store_free(st);
  json_decref(input);
  return 0;
}
