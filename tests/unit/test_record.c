/* record: every malformed reply shape is refused with a message naming the
 * field, nothing is half-applied, and a valid record survives the trip
 * through the C structs unchanged. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "vm_wire.h"

static const char *base_reply =
    "{\"protocol\":1,\"watcherVersion\":\"0.1.0\",\"runId\":\"r-abc\",\"livenessCounter\":18342,"
    "\"nowUs\":81234999,\"collecting\":true,\"lifecycle\":\"resumed\",\"framesEnabled\":true,"
    "\"refreshRate\":60.0,\"interaction\":{\"interactionId\":\"scroll-feed\",\"linkedBy\":"
    "\"agent\"},"
    "\"firstSeq\":1000,\"lastSeq\":1043,\"pending\":0,\"droppedAttributions\":2,\"more\":false,"
    "\"records\":["
    "{\"seq\":1042,\"frameNumber\":5521,\"atUs\":81234567,\"vsyncStartUs\":81226100,"
    "\"buildUs\":4200,\"rasterUs\":3100,\"vsyncOverheadUs\":120,\"totalSpanUs\":8000,"
    "\"layerCacheCount\":3,\"pictureCacheCount\":1,"
    "\"blocks\":{\"BUILD\":{\"micros\":3000,\"selfMicros\":1200,\"count\":1},"
    "\"ProductCard\":{\"micros\":1800,\"selfMicros\":1800,\"count\":6}},"
    "\"interactionId\":\"scroll-feed\",\"linkedBy\":\"agent\"},"
    "{\"seq\":1043,\"frameNumber\":5522,\"atUs\":81250000,\"vsyncStartUs\":81242800,"
    "\"buildUs\":100,\"rasterUs\":200,\"vsyncOverheadUs\":0,\"totalSpanUs\":400,\"blocks\":{}}]}";

static void assert_same_by_text(const json_t *reply);

static json_t *load_base(void) {
  json_error_t e;
  json_t *j = json_loads(base_reply, 0, &e);
  ck_assert_msg(j != NULL, "base: %s", e.text);
  return j;
}

START_TEST(valid_reply_normalised) {
  json_t *j = load_base();
  assert_same_by_text(j);
  record_reply_t r;
  char err[RECORD_ERR_LEN] = "";
  ck_assert_int_eq(record_reply_parse(&r, j, err, sizeof err), 0);
  ck_assert_str_eq(r.run_id, "r-abc");
  ck_assert_str_eq(r.watcher_version, "0.1.0");
  ck_assert_str_eq(r.lifecycle, "resumed");
  ck_assert_str_eq(r.interaction_id, "scroll-feed");
  ck_assert_str_eq(r.linked_by, "agent");
  ck_assert_int_eq(r.liveness_counter, 18342);
  ck_assert_int_eq(r.first_seq, 1000);
  ck_assert_int_eq(r.last_seq, 1043);
  ck_assert_int_eq(r.dropped_attributions, 2);
  ck_assert(r.collecting && r.frames_enabled && r.has_records && !r.more);
  ck_assert_double_eq(r.refresh_rate, 60.0);
  ck_assert_uint_eq(r.nrecords, 2);
  const frame_t *f = &r.records[0];
  ck_assert_int_eq(f->seq, 1042);
  ck_assert_int_eq(f->build_us, 4200);
  ck_assert_int_eq(f->layer_cache_count, 3);
  ck_assert_uint_eq(f->nblocks, 2);
  ck_assert_str_eq(f->blocks[1].name, "ProductCard");
  ck_assert_int_eq(f->blocks[1].count, 6);
  ck_assert_int_eq(f->blocks[0].self_micros, 1200);
  ck_assert_str_eq(f->interaction_id, "scroll-feed");
  ck_assert_int_eq(r.records[1].layer_cache_count, -1);
  ck_assert_ptr_null(r.records[1].interaction_id);
  /* Full detail reproduces the record exactly; "frames" detail drops blocks. */
  json_t *rec0 = json_array_get(json_object_get(j, "records"), 0);
  json_t *back = record_frame_to_json(f, 1);
  ck_assert(json_equal(back, rec0));
  json_decref(back);
  back = record_frame_to_json(f, 0);
  ck_assert_ptr_null(json_object_get(back, "blocks"));
  ck_assert_int_eq(json_integer_value(json_object_get(back, "totalSpanUs")), 8000);
  ck_assert_str_eq(json_string_value(json_object_get(back, "linkedBy")), "agent");
  json_decref(back);
  /* A deep copy outlives the reply. */
  frame_t copy;
  ck_assert_int_eq(record_frame_copy(&copy, f), 0);
  record_reply_close(&r);
  ck_assert_str_eq(copy.blocks[1].name, "ProductCard");
  ck_assert_str_eq(copy.linked_by, "agent");
  record_frame_close(&copy);
  json_decref(j);
}
END_TEST

START_TEST(null_lifecycle_and_interaction_no_records) {
  json_t *j = load_base();
  json_object_set_new(j, "lifecycle", json_null());
  json_object_set_new(j, "interaction", json_null());
  json_object_del(j, "records");
  json_object_set_new(j, "type", json_string("Response")); /* web replies carry it */
  record_reply_t r;
  char err[RECORD_ERR_LEN];
  ck_assert_int_eq(record_reply_parse(&r, j, err, sizeof err), 0);
  ck_assert_ptr_null(r.lifecycle);
  ck_assert_ptr_null(r.interaction_id);
  ck_assert(!r.has_records);
  ck_assert_uint_eq(r.nrecords, 0);
  record_reply_close(&r);
  json_decref(j);
}
END_TEST

/* One malformed shape per row: where (-1 the reply, else records[i]), the
 * member to set (value NULL deletes it) and the message expected. */
typedef struct {
  int rec;
  const char *key, *value, *want;
} bad_case_t;

static const bad_case_t bad_cases[] = {
    {-1, "runId", NULL, "reply.runId: missing"},
    {-1, "runId", "\"\"", "reply.runId: must be a non-empty string"},
    {-1, "protocol", "4", "reply.protocol: unsupported (this server speaks protocols 1-3)"},
    {-1, "protocol", "0", "reply.protocol: unsupported"},
    {-1, "protocol", "\"2\"", "reply.protocol: unsupported"},
    /* Bounds that keep the server's arithmetic in int64 (issue 11 item 9). */
    {-1, "nowUs", "9007199254740993", "reply.nowUs: must be <= 9007199254740992"},
    {-1, "nowUs", "-9007199254740993", "reply.nowUs: must be >= -9007199254740992"},
    {-1, "livenessCounter", "9223372036854775807", "reply.livenessCounter: must be <= "},
    {-1, "droppedAttributions", "9007199254740993", "reply.droppedAttributions: must be <= "},
    {0, "atUs", "9007199254740993", "records[0].atUs: must be <= 9007199254740992, got"},
    {0, "vsyncStartUs", "-9223372036854775807", "records[0].vsyncStartUs: must be >= "},
    {0, "seq", "9007199254740993", "records[0].seq: must be <= 9007199254740992"},
    {0, "frameNumber", "9007199254740993", "records[0].frameNumber: must be <= "},
    {1, "buildUs", "1099511627777", "records[1].buildUs: must be <= 1099511627776"},
    {1, "totalSpanUs", "9223372036854775807", "records[1].totalSpanUs: must be <= "},
    {0, "layerCacheCount", "1099511627777", "records[0].layerCacheCount: must be <= "},
    {0, "blocks", "{\"A\":{\"micros\":1099511627777,\"selfMicros\":1,\"count\":1}}",
     "records[0].blocks[\"A\"].micros: must be <= 1099511627776"},
    {0, "blocks", "{\"A\":{\"micros\":5,\"selfMicros\":1,\"count\":1099511627777}}",
     "records[0].blocks[\"A\"].count: must be <= "},
    /* The optional diagnostics a newer watcher adds. */
    {-1, "buildMode", "\"fast\"", "reply.buildMode: must be one of debug, profile, release"},
    {-1, "buildMode", "null", "reply.buildMode: must be one of"},
    {-1, "drainError", "5", "reply.drainError: must be a string"},
    {-1, "drainError", "\"\"", "reply.drainError: must not be empty"},
    {-1, "timingsMissing", "\"yes\"", "reply.timingsMissing: must be a boolean"},
    {-1, "collectionAutoOff", "1", "reply.collectionAutoOff: must be a boolean"},
    {-1, "livenessCounter", "\"5\"", "reply.livenessCounter: must be an integer"},
    {-1, "livenessCounter", "-1", "reply.livenessCounter: must be >= 0"},
    {-1, "nowUs", "1.5", "reply.nowUs: must be an integer"},
    {-1, "collecting", "1", "reply.collecting: must be a boolean"},
    {-1, "framesEnabled", NULL, "reply.framesEnabled: missing"},
    {-1, "lifecycle", "\"sleeping\"", "reply.lifecycle: must be one of"},
    {-1, "refreshRate", "-60", "reply.refreshRate: must be a number >= 0"},
    {-1, "interaction", "{\"interactionId\":\"x\"}", "reply.interaction.linkedBy: missing"},
    {-1, "interaction", "[]", "reply.interaction: must be null or an object"},
    {-1, "interaction", "{\"interactionId\":\"\",\"linkedBy\":\"a\"}",
     "reply.interaction.interactionId: must not be empty"},
    {-1, "firstSeq", "-3", "reply.firstSeq: must be >= 0"},
    {-1, "pending", "null", "reply.pending: must be an integer"},
    {-1, "more", "\"no\"", "reply.more: must be a boolean"},
    {-1, "records", "{}", "reply.records: must be an array"},
    {-1, "lastSeq", "1042", "records[1].seq: 1043 is beyond the reply's lastSeq 1042"},
    {-1, "firstSeq", "1043", "records[0].seq: 1042 is before the reply's firstSeq 1043"},
    {0, "seq", NULL, "records[0].seq: missing"},
    {0, "seq", "0", "records[0].seq: must be >= 1"},
    {1, "seq", "1042", "records[1].seq: 1042 does not increase (previous 1042)"},
    {1, "buildUs", "-5", "records[1].buildUs: must be >= 0, got -5"},
    {1, "rasterUs", "1.5", "records[1].rasterUs: must be an integer"},
    {0, "totalSpanUs", NULL, "records[0].totalSpanUs: missing"},
    {0, "vsyncOverheadUs", "\"120\"", "records[0].vsyncOverheadUs: must be an integer"},
    {0, "frameNumber", "-2", "records[0].frameNumber: must be >= -1"},
    {0, "layerCacheCount", "-1", "records[0].layerCacheCount: must be >= 0"},
    {1, "surprise", "1", "records[1].surprise: unknown field"},
    {1, "interactionId", "\"tap\"", "records[1].linkedBy: missing (interactionId is set)"},
    {0, "interactionId", NULL, "records[0].interactionId: missing (linkedBy is set)"},
    {0, "interactionId", "7", "records[0].interactionId: must be a string"},
    {0, "linkedBy", "\"\"", "records[0].linkedBy: must not be empty"},
    {0, "blocks", "[]", "records[0].blocks: must be an object"},
    {0, "blocks", "{\"A\":5}", "records[0].blocks[\"A\"]: must be an object"},
    {0, "blocks", "{\"A\":{\"micros\":5,\"count\":1}}",
     "records[0].blocks[\"A\"].selfMicros: missing"},
    {0, "blocks", "{\"A\":{\"micros\":5,\"selfMicros\":-1,\"count\":1}}",
     "records[0].blocks[\"A\"].selfMicros: must be >= 0"},
    {0, "blocks", "{\"A\":{\"micros\":5,\"selfMicros\":1,\"count\":0}}",
     "records[0].blocks[\"A\"].count: must be >= 1"},
    {0, "blocks", "{\"A\":{\"micros\":5,\"selfMicros\":6,\"count\":1}}",
     "records[0].blocks[\"A\"].selfMicros: larger than micros"},
    {0, "blocks", "{\"A\":{\"micros\":5,\"selfMicros\":1,\"count\":1,\"x\":1}}",
     "records[0].blocks[\"A\"].x: unknown field"},
    {0, "blocks", "{\"\":{\"micros\":5,\"selfMicros\":1,\"count\":1}}",
     "records[0].blocks: a block has an empty name"},
    {1, NULL, "[]", "records[1]: must be an object"},
};

static void apply(json_t *j, const bad_case_t *c) {
  json_t *target = j;
  if (c->rec >= 0) {
    json_t *recs = json_object_get(j, "records");
    if (!c->key) {
      json_array_set_new(recs, (size_t)c->rec, json_loads(c->value, JSON_DECODE_ANY, NULL));
      return;
    }
    target = json_array_get(recs, (size_t)c->rec);
  }
  if (!c->value)
    json_object_del(target, c->key);
  else
    json_object_set_new(target, c->key, json_loads(c->value, JSON_DECODE_ANY, NULL));
}

/* The reply as telescope-mcp reads a watcher's: in its JSON-RPC envelope,
 * the records cut out of the text (vm_wire_cut_records) and read from it
 * (record_reply_parse_raw). A reply without a records array has nothing to
 * cut and is read whole, as vm_client does. */
static int parse_by_text(record_reply_t *out, const json_t *reply, char *err, size_t errlen) {
  json_t *env = json_pack("{s:s, s:s, s:O}", "jsonrpc", "2.0", "id", "1", "result", reply);
  char *text = json_dumps(env, JSON_COMPACT);
  json_decref(env);
  size_t rest, len;
  char *b = vm_wire_cut_records(text, strlen(text), &rest, &len);
  int rc;
  if (!b) {
    rc = record_reply_parse(out, reply, err, errlen);
  } else {
    json_t *msg = json_loadb(b + len, rest, 0, NULL);
    ck_assert_ptr_nonnull(msg);
    rc = record_reply_parse_raw(out, json_object_get(msg, "result"), b, len, err, errlen);
    json_decref(msg);
    free(b);
  }
  free(text);
  return rc;
}

static void assert_same_records(const record_reply_t *a, const record_reply_t *b);

/* Read from the text, the reply gives what the tree reader gives: the same
 * outcome, the same message, the same records and fields. */
static void assert_same_by_text(const json_t *reply) {
  record_reply_t a, b;
  char ea[RECORD_ERR_LEN] = "", eb[RECORD_ERR_LEN] = "";
  int ra = record_reply_parse(&a, reply, ea, sizeof ea);
  int rb = parse_by_text(&b, reply, eb, sizeof eb);
  ck_assert_int_eq(ra, rb);
  ck_assert_str_eq(ea, eb);
  if (ra == 0) {
    assert_same_records(&a, &b);
    ck_assert_int_eq(a.has_records, b.has_records);
    ck_assert_int_eq(a.protocol, b.protocol);
    ck_assert_int_eq(a.last_seq, b.last_seq);
    ck_assert_str_eq(a.run_id, b.run_id);
  } else {
    ck_assert_ptr_null(b.records);
    ck_assert_ptr_null(b.run_id);
  }
  record_reply_close(&a);
  record_reply_close(&b);
}

static void expect_refused(json_t *j, const char *want) {
  assert_same_by_text(j);
  record_reply_t r;
  memset(&r, 0x5a, sizeof r); /* garbage in: must come back zeroed */
  char err[RECORD_ERR_LEN] = "";
  ck_assert_int_eq(record_reply_parse(&r, j, err, sizeof err), -1);
  ck_assert_msg(strstr(err, want) != NULL, "want \"%s\" in \"%s\"", want, err);
  ck_assert_ptr_null(r.records); /* nothing half-applied */
  ck_assert_uint_eq(r.nrecords, 0);
  ck_assert_ptr_null(r.run_id);
}

START_TEST(malformed_shapes_named) {
  const bad_case_t *c = &bad_cases[_i];
  json_t *j = load_base();
  apply(j, c);
  expect_refused(j, c->want);
  json_decref(j);
}
END_TEST

/* The largest values in bounds still pass, and come through unchanged. */
START_TEST(bounds_inclusive) {
  json_t *j = load_base(), *rec = json_array_get(json_object_get(j, "records"), 1);
  const json_int_t T = (json_int_t)1 << 53, A = (json_int_t)1 << 40;
  json_object_set_new(rec, "atUs", json_integer(T));
  json_object_set_new(rec, "vsyncStartUs", json_integer(-T));
  json_object_set_new(rec, "buildUs", json_integer(A));
  json_object_set_new(rec, "seq", json_integer(T));
  json_object_set_new(j, "lastSeq", json_integer(T));
  json_object_set_new(j, "nowUs", json_integer(-T));
  record_reply_t r;
  char err[RECORD_ERR_LEN] = "";
  ck_assert_msg(record_reply_parse(&r, j, err, sizeof err) == 0, "%s", err);
  ck_assert_int_eq(r.records[1].at_us, T);
  ck_assert_int_eq(r.records[1].vsync_start_us, -T);
  ck_assert_int_eq(r.records[1].build_us, A);
  ck_assert_int_eq(r.now_us, -T);
  /* What the server computes from them stays exact. */
  ck_assert_int_eq(r.records[1].at_us - r.records[1].vsync_start_us, 2 * T);
  record_reply_close(&r);
  json_decref(j);
}
END_TEST

/* Old watchers omit the diagnostics; new ones report them. */
START_TEST(diagnostics_optional) {
  json_t *j = load_base();
  record_reply_t r;
  char err[RECORD_ERR_LEN] = "";
  ck_assert_int_eq(record_reply_parse(&r, j, err, sizeof err), 0);
  ck_assert_int_eq(r.protocol, 1);
  ck_assert_ptr_null(r.build_mode);
  ck_assert_ptr_null(r.drain_error);
  ck_assert_int_eq(r.timings_missing, 0);
  ck_assert_int_eq(r.collection_auto_off, 0);
  record_reply_close(&r);
  json_object_set_new(j, "buildMode", json_string("profile"));
  json_object_set_new(j, "drainError", json_string("Invalid sequence of `startSync`"));
  json_object_set_new(j, "timingsMissing", json_true());
  json_object_set_new(j, "collectionAutoOff", json_true());
  ck_assert_int_eq(record_reply_parse(&r, j, err, sizeof err), 0);
  ck_assert_str_eq(r.build_mode, "profile");
  ck_assert_str_eq(r.drain_error, "Invalid sequence of `startSync`");
  ck_assert_int_eq(r.timings_missing, 1);
  ck_assert_int_eq(r.collection_auto_off, 1);
  record_reply_close(&r);
  ck_assert_ptr_null(r.drain_error);
  json_object_set_new(j, "drainError", json_null());
  json_object_set_new(j, "buildMode", json_string("debug"));
  json_object_set_new(j, "timingsMissing", json_false());
  ck_assert_int_eq(record_reply_parse(&r, j, err, sizeof err), 0);
  ck_assert_ptr_null(r.drain_error);
  ck_assert_str_eq(r.build_mode, "debug");
  ck_assert_int_eq(r.timings_missing, 0);
  record_reply_close(&r);
  json_decref(j);
}
END_TEST

/* base_reply in protocol 2: one name table, blocks as quadruples. The
 * table holds a name no record uses, and names in another order than the
 * records list them, as a watcher's table may. */
static const char *base_reply_v2 =
    "{\"protocol\":2,\"watcherVersion\":\"0.1.0\",\"runId\":\"r-abc\",\"livenessCounter\":18342,"
    "\"nowUs\":81234999,\"collecting\":true,\"lifecycle\":\"resumed\",\"framesEnabled\":true,"
    "\"refreshRate\":60.0,\"interaction\":{\"interactionId\":\"scroll-feed\",\"linkedBy\":"
    "\"agent\"},"
    "\"firstSeq\":1000,\"lastSeq\":1043,\"pending\":0,\"droppedAttributions\":2,\"more\":false,"
    "\"blockNames\":[\"LAYOUT\",\"ProductCard\",\"BUILD\"],"
    "\"records\":["
    "{\"seq\":1042,\"frameNumber\":5521,\"atUs\":81234567,\"vsyncStartUs\":81226100,"
    "\"buildUs\":4200,\"rasterUs\":3100,\"vsyncOverheadUs\":120,\"totalSpanUs\":8000,"
    "\"layerCacheCount\":3,\"pictureCacheCount\":1,"
    "\"blocks\":[2,3000,1200,1,1,1800,1800,6],"
    "\"interactionId\":\"scroll-feed\",\"linkedBy\":\"agent\"},"
    "{\"seq\":1043,\"frameNumber\":5522,\"atUs\":81250000,\"vsyncStartUs\":81242800,"
    "\"buildUs\":100,\"rasterUs\":200,\"vsyncOverheadUs\":0,\"totalSpanUs\":400,\"blocks\":[]}]}";

static json_t *load_text(const char *text) {
  json_error_t e;
  json_t *j = json_loads(text, 0, &e);
  ck_assert_msg(j != NULL, "base: %s", e.text);
  return j;
}

static json_t *load_v2(void) {
  return load_text(base_reply_v2);
}

/* a and b hold the same records, field for field and in block order. */
static void assert_same_records(const record_reply_t *a, const record_reply_t *b) {
  ck_assert_uint_eq(a->nrecords, b->nrecords);
  for (size_t i = 0; i < a->nrecords; i++) {
    json_t *ja = record_frame_to_json(&a->records[i], 1);
    json_t *jb = record_frame_to_json(&b->records[i], 1);
    char *as = json_dumps(ja, JSON_COMPACT | JSON_PRESERVE_ORDER);
    char *bs = json_dumps(jb, JSON_COMPACT | JSON_PRESERVE_ORDER);
    ck_assert_str_eq(as, bs);
    free(as);
    free(bs);
    json_decref(ja);
    json_decref(jb);
  }
}

/* The same reply in both forms gives the same record_reply_t, so nothing
 * after record.c can tell them apart. */
START_TEST(protocol_2_same_as_1) {
  json_t *j1 = load_base(), *j2 = load_v2();
  record_reply_t r1, r2;
  char err[RECORD_ERR_LEN] = "";
  ck_assert_int_eq(record_reply_parse(&r1, j1, err, sizeof err), 0);
  ck_assert_msg(record_reply_parse(&r2, j2, err, sizeof err) == 0, "%s", err);
  ck_assert_int_eq(r2.protocol, 2);
  ck_assert_str_eq(r1.run_id, r2.run_id);
  ck_assert_int_eq(r1.last_seq, r2.last_seq);
  assert_same_records(&r1, &r2);
  ck_assert_str_eq(r2.records[0].blocks[0].name, "BUILD");
  ck_assert_int_eq(r2.records[0].blocks[1].count, 6);
  record_reply_close(&r1);
  record_reply_close(&r2);
  /* A status reply (no records) needs no table; a protocol-1 reply ignores one. */
  json_object_del(j2, "records");
  json_object_del(j2, "blockNames");
  ck_assert_int_eq(record_reply_parse(&r2, j2, err, sizeof err), 0);
  ck_assert(!r2.has_records);
  record_reply_close(&r2);
  json_object_set_new(j1, "blockNames", json_integer(7));
  ck_assert_int_eq(record_reply_parse(&r1, j1, err, sizeof err), 0);
  record_reply_close(&r1);
  json_decref(j1);
  json_decref(j2);
}
END_TEST

/* Protocol-2 shapes that must be refused: key (NULL: the record itself) of
 * records[rec] (-1: the reply) set to value (NULL deletes). */
static const bad_case_t bad_cases_v2[] = {
    {-1, "blockNames", "{}", "reply.blockNames: must be an array"},
    {-1, "blockNames", "[\"A\",3]", "reply.blockNames[1]: must be a string"},
    {-1, "blockNames", "[\"A\",\"\",\"B\"]", "reply.blockNames[1]: must be 1-256 bytes"},
    {-1, "blockNames", "[\"A\",\"B\",\"A\"]", "reply.blockNames[2]: \"A\" appears twice"},
    {-1, "blockNames", NULL, "records[0].blocks[0]: name index 2 outside blockNames (0 names)"},
    {0, "blocks", "{}", "records[0].blocks: must be an array"},
    {0, "blocks", "[2,3000,1200]", "records[0].blocks: length 3 is not a multiple of 4"},
    {0, "blocks", "[3,1,1,1]", "records[0].blocks[0]: name index 3 outside blockNames (3 names)"},
    {0, "blocks", "[-1,1,1,1]", "records[0].blocks[0]: name index must be 0-"},
    {0, "blocks", "[0,1,1,1,0,2,2,1]", "records[0].blocks[1]: \"LAYOUT\" appears twice"},
    {0, "blocks", "[0,1,2,1]", "records[0].blocks[0]: selfMicros larger than micros"},
    {0, "blocks", "[0,1,1,0]", "records[0].blocks[0]: count must be 1-"},
    {0, "blocks", "[0,-1,0,1]", "records[0].blocks[0]: micros must be 0-"},
    {0, "blocks", "[0,1099511627777,0,1]", "records[0].blocks[0]: micros must be 0-1099511627776"},
    {1, "blocks", "[0,1.5,1,1]", "records[1].blocks[0]: micros must be an integer"},
    {1, "blocks", "[\"0\",1,1,1]", "records[1].blocks[0]: name index must be an integer"},
    {1, "atUs", "9007199254740993", "records[1].atUs: must be <= "},
};

START_TEST(protocol_2_malformed_named) {
  json_t *j = load_v2();
  apply(j, &bad_cases_v2[_i]);
  expect_refused(j, bad_cases_v2[_i].want);
  json_decref(j);
}
END_TEST

/* A record names each table entry at most once, but different records may
 * name the same entries: the check must not leak from one record to the next. */
START_TEST(protocol_2_names_shared_by_records) {
  json_t *j = load_v2();
  json_t *rec = json_array_get(json_object_get(j, "records"), 1);
  json_object_set_new(rec, "blocks", json_loads("[2,10,10,1,0,5,5,2]", 0, NULL));
  record_reply_t r;
  char err[RECORD_ERR_LEN] = "";
  ck_assert_msg(record_reply_parse(&r, j, err, sizeof err) == 0, "%s", err);
  ck_assert_uint_eq(r.records[1].nblocks, 2);
  ck_assert_str_eq(r.records[1].blocks[0].name, "BUILD");
  ck_assert_str_eq(r.records[1].blocks[1].name, "LAYOUT");
  ck_assert_int_eq(r.records[1].blocks[1].count, 2);
  record_reply_close(&r);
  /* 257 blocks in one record are refused in this form too. */
  json_t *names = json_array(), *blocks = json_array();
  char name[16];
  for (int i = 0; i <= RECORD_MAX_BLOCKS; i++) {
    snprintf(name, sizeof name, "B%d", i);
    json_array_append_new(names, json_string(name));
    for (int k = 0; k < 4; k++) json_array_append_new(blocks, json_integer(k ? 1 : i));
  }
  json_object_set_new(j, "blockNames", names);
  json_object_set_new(rec, "blocks", blocks);
  json_object_set_new(json_array_get(json_object_get(j, "records"), 0), "blocks", json_array());
  expect_refused(j, "records[1].blocks: more than 256 blocks (257)");
  json_decref(j);
}
END_TEST

/* base_reply_v2 in protocol 3: records as arrays, interactions as a table.
 * The table holds a pair no record uses, before the one record 0 uses. */
static const char *base_reply_v3 =
    "{\"protocol\":3,\"watcherVersion\":\"0.1.0\",\"runId\":\"r-abc\",\"livenessCounter\":18342,"
    "\"nowUs\":81234999,\"collecting\":true,\"lifecycle\":\"resumed\",\"framesEnabled\":true,"
    "\"refreshRate\":60.0,\"interaction\":{\"interactionId\":\"scroll-feed\",\"linkedBy\":"
    "\"agent\"},"
    "\"firstSeq\":1000,\"lastSeq\":1043,\"pending\":0,\"droppedAttributions\":2,\"more\":false,"
    "\"blockNames\":[\"LAYOUT\",\"ProductCard\",\"BUILD\"],"
    "\"interactions\":[[\"tap\",\"user\"],[\"scroll-feed\",\"agent\"]],"
    "\"records\":["
    "[1042,5521,81234567,81226100,4200,3100,120,8000,3,1,[2,3000,1200,1,1,1800,1800,6],1],"
    "[1043,5522,81250000,81242800,100,200,0,400,0,0,[]]]}";

static json_t *load_v3(void) {
  return load_text(base_reply_v3);
}

/* The same reply in protocols 2 and 3 gives the same record_reply_t (in
 * protocol 3 every field is there: the cache counts too). */
START_TEST(protocol_3_same_as_2) {
  json_t *j2 = load_v2(), *j3 = load_v3();
  json_t *last = json_array_get(json_object_get(j2, "records"), 1);
  json_object_set_new(last, "layerCacheCount", json_integer(0));
  json_object_set_new(last, "pictureCacheCount", json_integer(0));
  record_reply_t r2, r3;
  char err[RECORD_ERR_LEN] = "";
  ck_assert_msg(record_reply_parse(&r2, j2, err, sizeof err) == 0, "%s", err);
  ck_assert_msg(record_reply_parse(&r3, j3, err, sizeof err) == 0, "%s", err);
  assert_same_by_text(j2);
  assert_same_by_text(j3);
  ck_assert_int_eq(r3.protocol, 3);
  assert_same_records(&r2, &r3);
  ck_assert_str_eq(r3.records[0].interaction_id, "scroll-feed");
  ck_assert_ptr_null(r3.records[1].interaction_id);
  ck_assert_int_eq(r3.records[1].layer_cache_count, 0);
  record_reply_close(&r2);
  record_reply_close(&r3);
  /* A status reply needs neither table. */
  json_object_del(j3, "records");
  json_object_del(j3, "interactions");
  json_object_del(j3, "blockNames");
  ck_assert_int_eq(record_reply_parse(&r3, j3, err, sizeof err), 0);
  record_reply_close(&r3);
  json_decref(j2);
  json_decref(j3);
}
END_TEST

/* Protocol-3 shapes that must be refused (as bad_cases_v2; a record is
 * replaced whole, key NULL). */
static const bad_case_t bad_cases_v3[] = {
    {-1, "interactions", "{}", "reply.interactions: must be an array"},
    {-1, "interactions", "[[\"a\"]]", "reply.interactions[0]: must be [interactionId, linkedBy]"},
    {-1, "interactions", "[[\"a\",\"b\"],[\"\",\"b\"]]",
     "reply.interactions[1].interactionId: must not be empty"},
    {-1, "interactions", "[[\"a\",7]]", "reply.interactions[0].linkedBy: must be a string"},
    {-1, "interactions", NULL, "records[0][11]: must index interactions (0 pairs)"},
    {0, NULL, "{\"seq\":1042}", "records[0]: must be an array of 11 or 12 values"},
    {0, NULL, "[1042,5521,81234567,81226100,4200,3100,120,8000,3,1]",
     "records[0]: must be an array of 11 or 12 values"},
    {0, NULL, "[1042,5521,81234567,81226100,4200,3100,120,8000,3,1,[],1,0]",
     "records[0]: must be an array of 11 or 12 values"},
    {0, NULL, "[1042,5521,81234567,81226100,4200,3100,120,8000,3,1,[],2]",
     "records[0][11]: must index interactions (2 pairs)"},
    {0, NULL, "[1042,5521,81234567,81226100,4200,3100,120,8000,3,1,[],-1]",
     "records[0][11]: must index interactions"},
    {0, NULL, "[1042,5521,81234567,81226100,4200,3100,120,8000,3,1,[],\"1\"]",
     "records[0][11]: must index interactions"},
    {0, NULL, "[0,5521,81234567,81226100,4200,3100,120,8000,3,1,[]]",
     "records[0].seq: must be >= 1, got 0"},
    {0, NULL, "[1042,5521,81234567,81226100,4200,3100,-1,8000,3,1,[]]",
     "records[0].vsyncOverheadUs: must be >= 0"},
    {0, NULL, "[1042,5521,81234567,null,4200,3100,120,8000,3,1,[]]",
     "records[0].vsyncStartUs: must be an integer"},
    {0, NULL, "[1042,5521,81234567,81226100,4200,3100,120,8000,null,1,[]]",
     "records[0].layerCacheCount: must be an integer"},
    {0, NULL, "[1042,5521,81234567,81226100,4200,3100,120,8000,3,1.5,[]]",
     "records[0].pictureCacheCount: must be an integer"},
    {0, NULL, "[1042,5521,81234567,81226100,4200,3100,120,8000,3,1,{}]",
     "records[0].blocks: must be an array"},
    {0, NULL, "[1042,5521,81234567,81226100,4200,3100,120,8000,3,1,[3,1,1,1]]",
     "records[0].blocks[0]: name index 3 outside blockNames (3 names)"},
    {1, NULL, "[1042,5522,81250000,81242800,100,200,0,400,0,0,[]]",
     "records[1].seq: 1042 does not increase"},
};

START_TEST(protocol_3_malformed_named) {
  json_t *j = load_v3();
  apply(j, &bad_cases_v3[_i]);
  expect_refused(j, bad_cases_v3[_i].want);
  json_decref(j);
}
END_TEST

START_TEST(not_an_object) {
  json_t *j = json_array();
  expect_refused(j, "reply: must be an object");
  json_decref(j);
}
END_TEST

START_TEST(length_limits) {
  char s[600];
  json_t *j = load_base(), *rec = json_array_get(json_object_get(j, "records"), 0);
  /* interactionId: 128 characters pass, 129 fail; multi-byte counts as one. */
  memset(s, 'a', 128), s[128] = 0;
  json_object_set_new(rec, "interactionId", json_string(s));
  record_reply_t r;
  char err[RECORD_ERR_LEN];
  ck_assert_int_eq(record_reply_parse(&r, j, err, sizeof err), 0);
  record_reply_close(&r);
  s[0] = 0;
  for (int i = 0; i < 128; i++) strcat(s, "\xc3\xa9"); /* é × 128 = 256 bytes */
  json_object_set_new(rec, "interactionId", json_string(s));
  ck_assert_int_eq(record_reply_parse(&r, j, err, sizeof err), 0);
  record_reply_close(&r);
  memset(s, 'a', 129), s[129] = 0;
  json_object_set_new(rec, "interactionId", json_string(s));
  expect_refused(j, "records[0].interactionId: longer than 128 characters");
  json_object_set_new(rec, "interactionId", json_string("ok"));
  memset(s, 'b', 65), s[65] = 0;
  json_object_set_new(rec, "linkedBy", json_string(s));
  expect_refused(j, "records[0].linkedBy: longer than 64 characters");
  json_object_set_new(rec, "linkedBy", json_string("agent"));
  /* Block names: 256 bytes pass, 257 fail. */
  json_t *blocks = json_object_get(rec, "blocks");
  memset(s, 'W', 256), s[256] = 0;
  json_object_set_new(blocks, s,
                      json_pack("{s:i,s:i,s:i}", "micros", 1, "selfMicros", 1, "count", 1));
  ck_assert_int_eq(record_reply_parse(&r, j, err, sizeof err), 0);
  record_reply_close(&r);
  memset(s, 'W', 257), s[257] = 0;
  json_object_set_new(blocks, s,
                      json_pack("{s:i,s:i,s:i}", "micros", 1, "selfMicros", 1, "count", 1));
  expect_refused(j, "records[0].blocks: block name longer than 256 bytes");
  json_decref(j);
  /* runId travels in cursors: bounded. */
  j = load_base();
  memset(s, 'r', 129), s[129] = 0;
  json_object_set_new(j, "runId", json_string(s));
  expect_refused(j, "reply.runId: longer than 128 bytes");
  json_decref(j);
}
END_TEST

START_TEST(count_limits) {
  json_t *j = load_base(), *rec = json_array_get(json_object_get(j, "records"), 1);
  json_t *blocks = json_object();
  char name[16];
  for (int i = 0; i <= RECORD_MAX_BLOCKS; i++) {
    snprintf(name, sizeof name, "B%d", i);
    json_object_set_new(blocks, name,
                        json_pack("{s:i,s:i,s:i}", "micros", 1, "selfMicros", 1, "count", 1));
  }
  json_object_set_new(rec, "blocks", blocks);
  expect_refused(j, "records[1].blocks: more than 256 blocks (257)");
  json_decref(j);

  j = load_base();
  json_t *recs = json_array();
  for (int i = 1; i <= RECORD_MAX_RECORDS + 1; i++)
    json_array_append_new(
        recs, json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "seq", i, "frameNumber", i, "atUs", 0,
                        "vsyncStartUs", 0, "buildUs", 1, "rasterUs", 1, "vsyncOverheadUs", 0,
                        "totalSpanUs", 2));
  json_object_set_new(j, "records", recs);
  json_object_set_new(j, "firstSeq", json_integer(1));
  json_object_set_new(j, "lastSeq", json_integer(RECORD_MAX_RECORDS + 1));
  expect_refused(j, "reply.records: more than 4096 records");
  json_array_remove(recs, RECORD_MAX_RECORDS);
  record_reply_t r;
  char err[RECORD_ERR_LEN];
  ck_assert_int_eq(record_reply_parse(&r, j, err, sizeof err), 0);
  ck_assert_uint_eq(r.nrecords, RECORD_MAX_RECORDS);
  record_reply_close(&r);
  json_decref(j);
}
END_TEST

START_TEST(frame_parse_alone) {
  json_t *rec = json_loads("{\"seq\":1}", 0, NULL);
  frame_t f;
  char err[RECORD_ERR_LEN];
  ck_assert_int_eq(record_frame_parse(&f, rec, NULL, err, sizeof err), -1);
  ck_assert_str_eq(err, "record.frameNumber: missing");
  json_decref(rec);
}
END_TEST

int main(void) {
  Suite *s = suite_create("record");
  TCase *tc = tcase_create("validate");
  tcase_add_test(tc, valid_reply_normalised);
  tcase_add_test(tc, null_lifecycle_and_interaction_no_records);
  tcase_add_loop_test(tc, malformed_shapes_named, 0, (int)(sizeof bad_cases / sizeof bad_cases[0]));
  tcase_add_test(tc, not_an_object);
  tcase_add_test(tc, bounds_inclusive);
  tcase_add_test(tc, diagnostics_optional);
  tcase_add_test(tc, protocol_2_same_as_1);
  tcase_add_loop_test(tc, protocol_2_malformed_named, 0,
                      (int)(sizeof bad_cases_v2 / sizeof bad_cases_v2[0]));
  tcase_add_test(tc, protocol_2_names_shared_by_records);
  tcase_add_test(tc, protocol_3_same_as_2);
  tcase_add_loop_test(tc, protocol_3_malformed_named, 0,
                      (int)(sizeof bad_cases_v3 / sizeof bad_cases_v3[0]));
  tcase_add_test(tc, length_limits);
  tcase_add_test(tc, count_limits);
  tcase_add_test(tc, frame_parse_alone);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
