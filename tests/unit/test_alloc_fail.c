/* Allocation failure at the Nth allocation, swept over the pure cores (as
 * jansson's test_chaos does): for N = 1, 2, ... the Nth allocation of a
 * scripted run fails, until a run completes without reaching N. Every run
 * must end without a crash, with every allocation it made freed again, and
 * with a clean error or the correct result.
 *
 * How allocations are failed: the test executable is linked with
 * -Wl,--wrap=malloc,calloc,realloc,strdup,free (tests/alloc_fail.cmake), so
 * every call of those in our own code (the core and model libraries, this
 * file) goes through the counting wrappers below; jansson's allocations are
 * routed there with json_set_alloc_funcs. A live-allocation counter (wrapped
 * free included) proves nothing leaked.
 *
 * What "clean" means per core, and what the sweep tolerates:
 *  - strict (the call fails with its error, or the result equals the
 *    reference run's): record_reply_parse; record -> store -> summary_to_json
 *    and store_frames_to_json; validate_args (same verdict; the message may
 *    render a value as "?"); cursor; vm_uri; diagnose_to_json.
 *  - the MCP session: no crash, no leak, every emitted line valid JSON, and
 *    strict for the initialize line. mcp.c, jsonrpc.c and the tool
 *    definition check every jansson setter and answer -32603 instead of an
 *    incomplete message. The later lines are not swept strictly: jansson
 *    2.14's parser ignores a failed append while it reads a string (load.c,
 *    lex_save), so a string parsed at the moment an allocation fails can lose
 *    a character; the tool definition re-parses the embedded schema and came
 *    out with "additionalProprties". Those runs are counted as "partial".
 *  - the watcher model (wm_frame_drawn / wm_timings return nothing): no
 *    crash, no leak; wm_handle answers a reply or NULL with its message. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "cpuprof.h"
#include "cursor.h"
#include "diagnose.h"
#include "frames_tool.h"
#include "mcp.h"
#include "model.h"
#include "record.h"
#include "session.h"
#include "store.h"
#include "summary.h"
#include "validate.h"
#include "vm_uri.h"
#include "workload.h"

/* ---- the counting allocator ------------------------------------------- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
void __wrap_free(void *p);

static long live;     /* blocks handed out and not yet freed */
static long counted;  /* allocation attempts while armed */
static long fail_at;  /* the attempt that fails; 0 = none */
static int armed, hit;

static int should_fail(void) {
  if (!armed) return 0;
  if (++counted != fail_at) return 0;
  hit = 1;
  return 1;
}

void *__wrap_malloc(size_t n) {
  if (should_fail()) return NULL;
  void *p = __real_malloc(n);
  if (p) live++;
  return p;
}

void *__wrap_calloc(size_t n, size_t size) {
  if (should_fail()) return NULL;
  void *p = __real_calloc(n, size);
  if (p) live++;
  return p;
}

void *__wrap_realloc(void *p, size_t n) {
  if (!p) return __wrap_malloc(n);
  if (should_fail()) return NULL; /* p stays valid, as with a real failure */
  return __real_realloc(p, n);
}

char *__wrap_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = __wrap_malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

void __wrap_free(void *p) {
  if (p) live--;
  __real_free(p);
}

static void chaos_on(void) {
  armed = 1;
}
static void chaos_off(void) {
  armed = 0;
}

/* ---- the sweep ---------------------------------------------------------- */

enum { RESULT_OK = 0, RESULT_CLEAN_ERROR = 1, RESULT_PARTIAL = 2 };

/* One scripted run: arms the allocator around the code under test
 * (chaos_on/off) and returns RESULT_*; asserts on anything else. */
typedef int (*scenario_fn)(void);

static long partial_results;

static void sweep(const char *name, scenario_fn run, int strict) {
  long n;
  long partial = 0, errors = 0;
  for (n = 1;; n++) {
    long live0 = live;
    counted = 0;
    fail_at = n;
    hit = 0;
    int rc = run();
    chaos_off();
    ck_assert_msg(live == live0, "%s: failing allocation %ld: %ld block(s) leaked", name, n,
                  live - live0);
    if (!hit) {
      ck_assert_msg(rc == RESULT_OK, "%s: the run without a failure did not succeed", name);
      break;
    }
    if (rc == RESULT_PARTIAL) {
      ck_assert_msg(!strict, "%s: failing allocation %ld gave a wrong result, not an error", name,
                    n);
      partial++;
    }
    errors += rc == RESULT_CLEAN_ERROR;
    ck_assert_msg(n < 1000000, "%s: no end to the allocations", name);
  }
  partial_results += partial;
  fprintf(stderr, "alloc_fail %-22s %5ld allocations; %ld clean errors, %ld ok, %ld partial\n",
          name, n - 1, errors, n - 1 - errors - partial, partial);
}

/* ---- record + store + summary ------------------------------------------- */

static const char *reply_text =
    "{\"protocol\":1,\"watcherVersion\":\"0.1.0\",\"runId\":\"r-abc\",\"livenessCounter\":18342,"
    "\"nowUs\":81234999,\"collecting\":true,\"lifecycle\":\"resumed\",\"framesEnabled\":true,"
    "\"refreshRate\":60.0,\"interaction\":{\"interactionId\":\"scroll-feed\",\"linkedBy\":"
    "\"agent\"},\"firstSeq\":1000,\"lastSeq\":1044,\"pending\":0,\"droppedAttributions\":2,"
    "\"more\":false,\"records\":["
    "{\"seq\":1042,\"frameNumber\":5521,\"atUs\":81234567,\"vsyncStartUs\":81226100,"
    "\"buildUs\":4200,\"rasterUs\":3100,\"vsyncOverheadUs\":120,\"totalSpanUs\":8000,"
    "\"layerCacheCount\":3,\"pictureCacheCount\":1,"
    "\"blocks\":{\"BUILD\":{\"micros\":3000,\"selfMicros\":1200,\"count\":1},"
    "\"ProductCard\":{\"micros\":1800,\"selfMicros\":1800,\"count\":6}},"
    "\"interactionId\":\"scroll-feed\",\"linkedBy\":\"agent\"},"
    "{\"seq\":1043,\"frameNumber\":5522,\"atUs\":81250000,\"vsyncStartUs\":81242800,"
    "\"buildUs\":19000,\"rasterUs\":2000,\"vsyncOverheadUs\":0,\"totalSpanUs\":22000,"
    "\"blocks\":{\"LAYOUT\":{\"micros\":9000,\"selfMicros\":9000,\"count\":2}}},"
    "{\"seq\":1044,\"frameNumber\":5523,\"atUs\":81270000,\"vsyncStartUs\":81259000,"
    "\"buildUs\":800,\"rasterUs\":700,\"vsyncOverheadUs\":5,\"totalSpanUs\":1600,\"blocks\":{},"
    "\"interactionId\":\"tap\",\"linkedBy\":\"agent\"}]}";

/* reply_text in protocol 3 (records as arrays, both tables). */
static const char *reply_text_v3 =
    "{\"protocol\":3,\"watcherVersion\":\"0.1.0\",\"runId\":\"r-abc\",\"livenessCounter\":18342,"
    "\"nowUs\":81234999,\"collecting\":true,\"lifecycle\":\"resumed\",\"framesEnabled\":true,"
    "\"refreshRate\":60.0,\"interaction\":{\"interactionId\":\"scroll-feed\",\"linkedBy\":"
    "\"agent\"},\"firstSeq\":1000,\"lastSeq\":1044,\"pending\":0,\"droppedAttributions\":2,"
    "\"more\":false,\"blockNames\":[\"BUILD\",\"ProductCard\",\"LAYOUT\"],"
    "\"interactions\":[[\"scroll-feed\",\"agent\"],[\"tap\",\"agent\"]],\"records\":["
    "[1042,5521,81234567,81226100,4200,3100,120,8000,3,1,[0,3000,1200,1,1,1800,1800,6],0],"
    "[1043,5522,81250000,81242800,19000,2000,0,22000,0,0,[2,9000,9000,2]],"
    "[1044,5523,81270000,81259000,800,700,5,1600,0,0,[],1]]}";

static json_t *reply_json, *reply_json_v3;
static json_t *ref_summary, *ref_frames;
static record_reply_t ref_reply_parsed, ref_reply_v3;

/* Parses, stores and summarises; outputs the summary and the listing (new
 * references) or returns an error. */
static int pipeline(json_t **summary, json_t **frames, record_reply_t *parsed_copy) {
  record_reply_t r;
  char err[RECORD_ERR_LEN] = "";
  if (summary) *summary = *frames = NULL;
  chaos_on();
  int rc = record_reply_parse(&r, reply_json, err, sizeof err);
  chaos_off();
  if (rc != 0) {
    ck_assert_msg(strstr(err, "out of memory") != NULL, "record: unexpected error %s", err);
    record_reply_t zero;
    memset(&zero, 0, sizeof zero);
    ck_assert(memcmp(&r, &zero, sizeof r) == 0);
    return RESULT_CLEAN_ERROR;
  }
  if (parsed_copy) {
    *parsed_copy = r;
    return RESULT_OK;
  }
  int result = RESULT_CLEAN_ERROR;
  chaos_on();
  store_t *st = store_new(summary_budget_us(0, 60));
  if (!st) goto done;
  store_add_result_t res;
  if (store_add_reply(st, &r, &res) != 0) goto done;
  *summary = summary_to_json_bounded(store_summary(st, NULL), SUMMARY_MAX_BYTES);
  *frames = store_frames_to_json(st, NULL, 100, 1, 0, NULL);
  if (*summary && *frames) result = RESULT_OK;
done:
  chaos_off();
  store_free(st);
  record_reply_close(&r);
  return result;
}

static int scenario_record(void) {
  json_t *summary, *frames;
  int rc = pipeline(&summary, &frames, NULL);
  if (rc == RESULT_OK && (!json_equal(summary, ref_summary) || !json_equal(frames, ref_frames)))
    rc = RESULT_PARTIAL;
  json_decref(summary);
  json_decref(frames);
  return rc;
}

/* record_reply_parse alone, strict: the parse equals the reference one. */
static int scenario_record_parse(void) {
  record_reply_t r;
  int rc = pipeline(NULL, NULL, &r);
  if (rc != RESULT_OK) return rc;
  ck_assert_uint_eq(r.nrecords, ref_reply_parsed.nrecords);
  for (size_t i = 0; i < r.nrecords; i++) {
    chaos_off();
    json_t *a = record_frame_to_json(&r.records[i], 1);
    json_t *b = record_frame_to_json(&ref_reply_parsed.records[i], 1);
    ck_assert(json_equal(a, b));
    json_decref(a);
    json_decref(b);
  }
  ck_assert_str_eq(r.run_id, ref_reply_parsed.run_id);
  ck_assert_str_eq(r.interaction_id, ref_reply_parsed.interaction_id);
  record_reply_close(&r);
  return RESULT_OK;
}

/* The same in protocol 3: its parse under failures equals the reference. */
static int scenario_record_parse_v3(void) {
  record_reply_t r;
  char err[RECORD_ERR_LEN] = "";
  chaos_on();
  int rc = record_reply_parse(&r, reply_json_v3, err, sizeof err);
  chaos_off();
  if (rc != 0) {
    ck_assert_msg(strstr(err, "out of memory") != NULL, "record v3: unexpected error %s", err);
    ck_assert_ptr_null(r.records);
    return RESULT_CLEAN_ERROR;
  }
  ck_assert_uint_eq(r.nrecords, ref_reply_v3.nrecords);
  for (size_t i = 0; i < r.nrecords; i++) {
    json_t *a = record_frame_to_json(&r.records[i], 1);
    json_t *b = record_frame_to_json(&ref_reply_v3.records[i], 1);
    ck_assert(json_equal(a, b));
    json_decref(a);
    json_decref(b);
  }
  record_reply_close(&r);
  return RESULT_OK;
}

static void record_setup(void) {
  reply_json = json_loads(reply_text, 0, NULL);
  ck_assert_ptr_nonnull(reply_json);
  reply_json_v3 = json_loads(reply_text_v3, 0, NULL);
  ck_assert_ptr_nonnull(reply_json_v3);
  char err[RECORD_ERR_LEN] = "";
  ck_assert_msg(record_reply_parse(&ref_reply_v3, reply_json_v3, err, sizeof err) == 0, "%s", err);
  ck_assert_str_eq(ref_reply_v3.records[2].interaction_id, "tap");
  fail_at = 0;
  ck_assert_int_eq(pipeline(&ref_summary, &ref_frames, NULL), RESULT_OK);
  ck_assert_int_eq(pipeline(NULL, NULL, &ref_reply_parsed), RESULT_OK);
}

static void record_teardown(void) {
  json_decref(reply_json);
  json_decref(reply_json_v3);
  record_reply_close(&ref_reply_v3);
  json_decref(ref_summary);
  json_decref(ref_frames);
  record_reply_close(&ref_reply_parsed);
}

START_TEST(record_parse_sweep) {
  sweep("record_reply_parse", scenario_record_parse, 1);
}
END_TEST

START_TEST(record_parse_v3_sweep) {
  sweep("record_reply_parse v3", scenario_record_parse_v3, 1);
}
END_TEST

START_TEST(record_store_summary_sweep) {
  sweep("record+store+summary", scenario_record, 1);
}
END_TEST

/* ---- validate ------------------------------------------------------------ */

static const char *const args_texts[] = {
    "{}",
    "{\"action\":\"read\",\"limit\":20,\"detail\":\"blocks\",\"cursor\":\"abc\"}",
    "{\"limit\":5000}",
    "{\"budgetMs\":true}",
    "{\"detail\":\"everything\"}",
    "{\"interactionId\":\"\\u0001\"}",
    "{\"nope\":1}",
    "{\"action\":[1,2,{\"a\":\"long value that is cut in the message because it is long\"}]}",
};

static json_t *schema;

static int scenario_validate(void) {
  int result = RESULT_OK;
  for (size_t i = 0; i < sizeof args_texts / sizeof *args_texts; i++) {
    json_t *args = json_loads(args_texts[i], 0, NULL);
    ck_assert_ptr_nonnull(args);
    char ref[512] = "", err[512] = "";
    int ref_rc = validate_args(schema, args, ref, sizeof ref);
    chaos_on();
    int rc = validate_args(schema, args, err, sizeof err);
    chaos_off();
    /* The verdict never changes; the message may say "?" for a value it
     * could not render. */
    ck_assert_int_eq(rc, ref_rc);
    ck_assert_int_eq(err[0] != '\0', ref[0] != '\0');
    json_decref(args);
  }
  return result;
}

START_TEST(validate_sweep) {
  schema = frames_tool_input_schema_new();
  sweep("validate_args", scenario_validate, 1);
  json_decref(schema);
}
END_TEST

/* ---- vm_uri and cursor: no allocation at all ---------------------------- */

static int scenario_uri_cursor(void) {
  vm_uri_t u;
  char err[256], cur[CURSOR_MAX], run[CURSOR_RUN_ID_MAX + 1];
  int64_t seq;
  chaos_on();
  int a = vm_uri_parse("A Dart VM Service on macOS is available at: http://127.0.0.1:53166/t=/",
                       0, &u, err, sizeof err);
  int b = vm_uri_parse("http://127.0.0.1:9101/?uri=http%3A%2F%2F127.0.0.1%3A1%2Ft%3D%2F", 0, &u,
                       err, sizeof err);
  int c = cursor_encode("run-1", 42, cur, sizeof cur);
  int d = cursor_decode(cur, run, sizeof run, &seq, err, sizeof err);
  chaos_off();
  ck_assert(a == VM_URI_OK && b == VM_URI_OK && c == 0 && d == 0 && seq == 42);
  return RESULT_OK;
}

START_TEST(uri_cursor_sweep) {
  sweep("vm_uri+cursor", scenario_uri_cursor, 1);
}
END_TEST

/* ---- diagnose -------------------------------------------------------------- */

static int scenario_diagnose(void) {
  static const diag_code_t codes[] = {DIAG_NOT_CONNECTED, DIAG_ISOLATE_PAUSED,
                                      DIAG_APP_RESTARTED, DIAG_FRAMES_LOST,
                                      DIAG_FRAMES_PENDING, DIAG_APP_IDLE,
                                      DIAG_ENGINE_STALLED};
  diagnose_facts_t f;
  memset(&f, 0, sizeof f);
  f.connected = 1;
  f.watcher_present = 1;
  f.pause_kind = "PauseBreakpoint";
  f.frames_lost = 3;
  f.new_frames = 2;
  f.liveness_before_known = 1;
  f.liveness_before = 10;
  f.liveness_now = 20;
  f.probe = DIAGNOSE_PROBE_NOT_MOVED;
  f.lifecycle = "resumed";
  f.frames_enabled = 1;
  f.elapsed_ms = 500;
  int result = RESULT_OK;
  for (size_t i = 0; i < sizeof codes / sizeof *codes; i++) {
    json_t *ref = diagnose_to_json(codes[i], &f);
    json_t *live_ref = diagnose_liveness_to_json(20, 1, 10, 500);
    chaos_on();
    json_t *j = diagnose_to_json(codes[i], &f);
    json_t *l = diagnose_liveness_to_json(20, 1, 10, 500);
    chaos_off();
    if (!j || !l) {
      if (result == RESULT_OK) result = RESULT_CLEAN_ERROR;
    } else if (!json_equal(j, ref) || !json_equal(l, live_ref)) {
      result = RESULT_PARTIAL;
    }
    json_decref(j);
    json_decref(l);
    json_decref(ref);
    json_decref(live_ref);
  }
  return result;
}

START_TEST(diagnose_sweep) {
  sweep("diagnose_to_json", scenario_diagnose, 1);
}
END_TEST

/* ---- compare ------------------------------------------------------------------ */

/* Two 40-frame sides, the second half of each in interaction "scroll", the
 * candidate's builds slower: every part of the comparison is built,
 * interactions included. No leak on any failure; not strict, as
 * compare_sessions is not yet: time_metric packs its stats objects with
 * "o*", so one that failed leaves a metric without its "baseline" (and
 * "delta") instead of failing the whole. */
static frame_t cmp_a[40], cmp_b[40];
static json_t *cmp_ref;
static json_t *cmp_workload; /* both sides played it (summary.workload), or NULL */

static int scenario_compare(void) {
  static char scroll[] = "scroll";
  for (int i = 0; i < 40; i++) {
    frame_t *fr[2] = {&cmp_a[i], &cmp_b[i]};
    for (int k = 0; k < 2; k++) {
      fr[k]->seq = i + 1;
      fr[k]->build_us = 4000 + (i * 37) % 900 + k * 3000;
      fr[k]->raster_us = 3000 + (i * 53) % 700;
      fr[k]->total_span_us = fr[k]->build_us + fr[k]->raster_us + 500;
      fr[k]->interaction_id = i >= 20 ? scroll : NULL;
    }
  }
  compare_side_t a = {"s1", cmp_a, 40, 16667, 60.0, "profile", {0, 0, 0, 0}, NULL, 40, cmp_workload};
  compare_side_t b = {"s2", cmp_b, 40, 16667, 60.0, "profile", {0, 0, 0, 0}, NULL, 40, cmp_workload};
  chaos_on();
  json_t *c = compare_sessions(&a, &b);
  chaos_off();
  int rc = !c ? RESULT_CLEAN_ERROR : !cmp_ref || json_equal(c, cmp_ref) ? RESULT_OK : RESULT_PARTIAL;
  if (!cmp_ref && c) cmp_ref = json_incref(c);
  json_decref(c);
  return rc;
}

static void compare_sweep_with(const char *name, const char *workload) {
  cmp_workload = workload ? json_loads(workload, 0, NULL) : NULL;
  fail_at = 0;
  ck_assert_int_eq(scenario_compare(), RESULT_OK); /* the reference */
  ck_assert_int_gt(json_array_size(json_object_get(cmp_ref, "interactions")), 0);
  ck_assert(!workload || json_is_true(json_object_get(json_object_get(cmp_ref, "workload"), "byRuns")));
  sweep(name, scenario_compare, 0);
  json_decref(cmp_ref);
  cmp_ref = NULL;
  json_decref(cmp_workload);
  cmp_workload = NULL;
}

START_TEST(compare_sweep) {
  compare_sweep_with("compare_sessions", NULL);
}
END_TEST

/* The same with a workload of two runs on both sides: judged by its runs,
 * and summary.workload's comparison added. */
START_TEST(compare_workload_sweep) {
  compare_sweep_with("compare_sessions runs",
                     "{\"label\":\"fling key:feed\",\"steps\":[{\"fling\":{\"dy\":-3000,\"in\":"
                     "\"key:feed\"}}],\"repeat\":2,\"runs\":["
                     "{\"run\":1,\"frames\":20,\"jankFrames\":1,\"jankRatio\":0.05,"
                     "\"buildP90Us\":5000,\"rasterP90Us\":3400},"
                     "{\"run\":2,\"frames\":20,\"jankFrames\":2,\"jankRatio\":0.1,"
                     "\"buildP90Us\":5100,\"rasterP90Us\":3500}]}");
}
END_TEST

/* ---- CPU samples ---------------------------------------------------------- */

/* Two getCpuSamples replies naming the same functions (the second reply's
 * are held from the first; the first lists HeavyTile.build twice), so both
 * the new-function and the held-function paths run; then closed. Read as
 * the samples name them: memmove first, then HeavyTile.build. */
static const char *cpu_reply_text =
    "{\"type\":\"CpuSamples\",\"samplePeriod\":1000,\"functions\":["
    "{\"type\":\"ProfileFunction\",\"kind\":\"Dart\",\"function\":{\"name\":\"build\","
    "\"owner\":{\"type\":\"@Class\",\"name\":\"HeavyTile\"},\"location\":{\"script\":{\"uri\":"
    "\"package:sim_app/heavy_tile.dart\"},\"line\":42}}},"
    "{\"type\":\"ProfileFunction\",\"kind\":\"Native\",\"function\":{\"name\":\"memmove\"}},"
    "{\"type\":\"ProfileFunction\",\"kind\":\"Dart\",\"function\":{\"name\":\"build\","
    "\"owner\":{\"type\":\"@Class\",\"name\":\"HeavyTile\"},\"location\":{\"script\":{\"uri\":"
    "\"package:sim_app/heavy_tile.dart\"},\"line\":42}}}],"
    "\"samples\":[{\"timestamp\":%d,\"stack\":[1,0]},{\"timestamp\":%d,\"stack\":[2]},"
    "{\"timestamp\":%d,\"stack\":[1]}]}";

static int scenario_cpuprof(void) {
  char text[2048];
  json_t *r[2];
  for (int k = 0; k < 2; k++) {
    snprintf(text, sizeof text, cpu_reply_text, 10 + k * 10, 11 + k * 10, 12 + k * 10);
    r[k] = json_loads(text, 0, NULL);
    ck_assert_ptr_nonnull(r[k]);
  }
  cpuprof_t p = {0};
  char err[128];
  chaos_on();
  int rc = cpuprof_add(&p, r[0], "sim_app", err, sizeof err) || cpuprof_add(&p, r[1], "sim_app", err, sizeof err);
  chaos_off();
  int res = rc ? RESULT_CLEAN_ERROR
               : p.nfns == 2 && p.nsamples == 6 && !strcmp(p.fns[1].name, "HeavyTile.build") &&
                         !strcmp(p.fns[1].file, "lib/heavy_tile.dart") && p.samples[1].charge == 1 &&
                         p.samples[5].charge == 0
                     ? RESULT_OK
                     : RESULT_PARTIAL;
  cpuprof_close(&p);
  json_decref(r[0]);
  json_decref(r[1]);
  return res;
}

/* The run without a failure must succeed (the reference), then the sweep. */
static void sweep_after_reference(const char *name, scenario_fn run, int strict) {
  fail_at = 0;
  ck_assert_msg(run() == RESULT_OK, "%s: the reference run failed", name);
  sweep(name, run, strict);
}

START_TEST(cpuprof_sweep) {
  /* Not strict: fn_parse keeps a function whose file failed to allocate
   * (the file NULL), a wrong place rather than an error. */
  sweep_after_reference("cpuprof_add", scenario_cpuprof, 0);
}
END_TEST

/* ---- a session that plays a workload ----------------------------------------- */

/* session_new copies the workload: each failure gives NULL with nothing
 * held, and never frees the copy twice. */
static int scenario_session_workload(void) {
  json_t *v = json_loads("{\"steps\":[{\"fling\":{\"dy\":-3000,\"in\":\"key:feed\"}},{\"wait\":200}],"
                         "\"repeat\":2}",
                         0, NULL);
  workload_t w;
  char err[200];
  ck_assert_int_eq(workload_parse(&w, v, err, sizeof err), 0);
  session_options_t opt = {.interaction_id = "scroll", .workload = &w};
  chaos_on();
  session_t *s = session_new(1, &opt, 0);
  chaos_off();
  const workload_t *copy = s ? session_workload(s) : NULL;
  int rc = !s ? RESULT_CLEAN_ERROR
           : copy && copy->repeat == 2 && json_equal(copy->steps_json, w.steps_json) ? RESULT_OK
                                                                                    : RESULT_PARTIAL;
  if (s) session_unref(s);
  workload_close(&w);
  json_decref(v);
  return rc;
}

START_TEST(session_workload_sweep) {
  sweep_after_reference("session_new workload", scenario_session_workload, 1);
}
END_TEST

/* ---- a workload's summary ---------------------------------------------------- */

/* Two runs of 10 frames, so every part is built (runs, driveId, spread).
 * Strict: a failure anywhere gives NULL, never a summary with a run or the
 * spread missing. */
static frame_t wl_frames[20];
static workload_t wl_w;
static json_t *wl_ref;

static int scenario_workload_summary(void) {
  chaos_on();
  json_t *s = workload_summary(&wl_w, wl_frames, 20, 16667, NULL);
  chaos_off();
  int rc = !s ? RESULT_CLEAN_ERROR : !wl_ref || json_equal(s, wl_ref) ? RESULT_OK : RESULT_PARTIAL;
  if (!wl_ref && s) wl_ref = json_incref(s);
  json_decref(s);
  return rc;
}

START_TEST(workload_summary_sweep) {
  json_t *v = json_loads("{\"steps\":[{\"fling\":{\"dy\":-3000,\"in\":\"key:feed\"}}],\"repeat\":2}", 0,
                         NULL);
  char err[200], iid[32];
  ck_assert_int_eq(workload_parse(&wl_w, v, err, sizeof err), 0);
  for (int i = 0; i < 20; i++) {
    frame_t *f = &wl_frames[i];
    memset(f, 0, sizeof *f);
    f->seq = i + 1;
    f->build_us = i % 7 ? 5000 + i : 30000;
    f->raster_us = 4000 + i;
    workload_interaction(iid, sizeof iid, "d1", 1 + i / 10, 1);
    f->interaction_id = strdup(iid);
    f->linked_by = strdup(WORKLOAD_LINKED_BY);
  }
  sweep_after_reference("workload_summary", scenario_workload_summary, 1);
  ck_assert_uint_eq(json_array_size(json_object_get(wl_ref, "runs")), 2);
  ck_assert_ptr_nonnull(json_object_get(wl_ref, "spread"));
  json_decref(wl_ref);
  wl_ref = NULL;
  for (int i = 0; i < 20; i++) {
    free(wl_frames[i].interaction_id);
    free(wl_frames[i].linked_by);
  }
  workload_close(&wl_w);
  json_decref(v);
}
END_TEST

/* ---- the MCP session --------------------------------------------------------- */

static json_t *emitted;
static tool_call_t *parked;

static void emit(void *arg, const char *line, size_t len) {
  int was = armed;
  chaos_off(); /* the checks below are the test's, not the code's */
  ck_assert_uint_eq(strlen(line), len);
  ck_assert_ptr_null(memchr(line, '\n', len));
  json_error_t e;
  json_t *m = json_loadb(line, len, 0, &e);
  ck_assert_msg(m != NULL, "failing allocation %ld: emitted invalid JSON: %s in %s", fail_at,
                e.text, line);
  json_array_append_new(emitted, m);
  armed = was;
}

static void invoke(void *arg, tool_call_t *call, json_t *args) {
  const char *action = json_string_value(json_object_get(args, "action"));
  if (action && strcmp(action, "start") == 0 && !parked) {
    parked = call; /* stays in flight: cancelled below */
    tool_call_progress(call, 1, 2, "started");
    return;
  }
  if (action && strcmp(action, "read") == 0) {
    /* A result over the 64 KB text cap: the text block is cut. */
    int was = armed;
    chaos_off();
    char *big = malloc(70001);
    ck_assert_ptr_nonnull(big);
    memset(big, 'x', 70000);
    big[70000] = '\0';
    armed = was;
    tool_call_finish(call, json_pack("{s:s}", "blob", big), 0, NULL);
    chaos_off();
    free(big);
    armed = was;
    return;
  }
  tool_call_finish(call, json_deep_copy(args), 0, NULL);
}

static const char *const script[] = {
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
    "\"2025-03-26\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"0\"}}}",
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
    "\"telescope_frames\",\"arguments\":{\"action\":\"status\",\"limit\":3}}}",
    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
    "\"telescope_frames\",\"arguments\":{\"limit\":5000}}}",
    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
    "\"telescope_frames\",\"arguments\":{\"action\":\"start\"},\"_meta\":{\"progressToken\":7}}}",
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":4}}",
    "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":"
    "\"telescope_frames\",\"arguments\":{\"action\":\"read\"}}}",
    "[{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"id\":6,"
    "\"method\":\"nope\"}]",
    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"server/discover\",\"params\":{\"_meta\":{"
    "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
    "\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
    "not json",
};

static json_t *mcp_ref;

static int in_reference(json_t *m) {
  size_t i;
  json_t *r;
  json_array_foreach(mcp_ref, i, r) if (json_equal(m, r)) return 1;
  return 0;
}

/* An error response, alone or in a batch with reference messages. Mostly
 * -32603 (mcp answers with it when it cannot build an answer), but an
 * allocation failing inside jansson's parser comes out as a parse error
 * (-32700): jansson reports it as a syntax error. Either way the request
 * fails with an error, nothing half-made. */
static int is_oom_error(json_t *m) {
  if (json_is_array(m)) {
    size_t i;
    json_t *e;
    json_array_foreach(m, i, e) if (!in_reference(e) && !is_oom_error(e)) return 0;
    return 1;
  }
  return json_is_integer(json_object_get(json_object_get(m, "error"), "code"));
}

/* The scripted session. The initialize line changes the session for every
 * later line, so it is swept on its own (with_init: armed from
 * mcp_session_new through initialize); the rest is swept on an initialized
 * session (armed from the second line through mcp_session_free). */
static int run_mcp(int init_armed) {
  emitted = json_array();
  parked = NULL;
  mcp_tool_t tool = {FRAMES_TOOL_NAME, frames_tool_definition, schema, invoke, NULL, NULL};
  int result = RESULT_OK;
  if (init_armed) chaos_on();
  mcp_session_t *s = mcp_session_new(emit, NULL);
  if (!s || mcp_session_set_instructions(s, "measure frames") != 0) {
    result = RESULT_CLEAN_ERROR; /* a server would stop here */
  } else {
    mcp_session_add_tool(s, &tool);
    mcp_session_handle_line(s, script[0], strlen(script[0]));
    if (!init_armed) {
      chaos_on();
      for (size_t i = 1; i < sizeof script / sizeof *script; i++)
        mcp_session_handle_line(s, script[i], strlen(script[i]));
    }
  }
  mcp_session_free(s);
  chaos_off();
  /* A cancelled call without a hook is the tool's to finish. */
  if (parked) tool_call_finish(parked, NULL, 0, NULL);
  int whole = mcp_ref && (init_armed ? json_array_size(emitted) == 1 &&
                                           json_equal(json_array_get(emitted, 0),
                                                      json_array_get(mcp_ref, 0))
                                     : json_equal(emitted, mcp_ref));
  if (result == RESULT_OK && mcp_ref && !whole) {
    /* Clean: every message is one the reference run sent, or an internal
     * error answering in its place (a dropped progress note is fine). */
    result = RESULT_CLEAN_ERROR;
    size_t i;
    json_t *m;
    json_array_foreach(emitted, i, m) {
      if (in_reference(m) || is_oom_error(m)) continue;
      result = RESULT_PARTIAL;
    }
  }
  if (!mcp_ref)
    mcp_ref = emitted;
  else
    json_decref(emitted);
  emitted = NULL;
  return result;
}

static int scenario_mcp_init(void) {
  return run_mcp(1);
}
static int scenario_mcp(void) {
  return run_mcp(0);
}

START_TEST(mcp_session_sweep) {
  schema = frames_tool_input_schema_new();
  fail_at = 0;
  ck_assert_int_eq(run_mcp(0), RESULT_OK); /* the reference transcript */
  ck_assert_uint_eq(json_array_size(mcp_ref), 9);
  sweep("mcp initialize", scenario_mcp_init, 1);
  /* Not strict: see the header (jansson's lexer). */
  sweep("mcp_session_handle_line", scenario_mcp, 0);
  json_decref(mcp_ref);
  mcp_ref = NULL;
  json_decref(schema);
}
END_TEST

/* ---- the watcher model ----------------------------------------------------------- */

static int scenario_watcher(void) {
  int result = RESULT_OK;
  chaos_on();
  wm_t *wm = wm_new(NULL, "run-1");
  if (!wm) {
    chaos_off();
    return RESULT_CLEAN_ERROR;
  }
  json_t *params = json_pack("{s:s,s:s}", "action", "start", "interactionId", "scroll");
  char *detail = NULL;
  json_t *reply = wm_handle(wm, params, 10, &detail);
  if (!reply) result = RESULT_CLEAN_ERROR;
  json_decref(reply);
  free(detail);
  detail = NULL;
  json_decref(params);
  for (int64_t fn = 1; fn <= 6; fn++) {
    wm_event_t ev[] = {{"Text", 1000 * fn + 10, 50}, {"ProductCard", 1000 * fn, 200},
                       {"BUILD", 1000 * fn - 5, 400}};
    wm_frame_drawn(wm, fn, 1000 * fn + 500, ev, 3);
  }
  wm_timing_t t[3];
  for (int i = 0; i < 3; i++) {
    int64_t b = 1000 * (i + 1);
    wm_timing_t one = {i + 1, b - 100, b, b + 400, b + 450, b + 900, 1, 0};
    t[i] = one;
  }
  wm_timings(wm, t, 3);
  params = json_pack("{s:s,s:s}", "action", "read", "since", "0");
  reply = wm_handle(wm, params, 5000, &detail);
  if (!reply) result = RESULT_CLEAN_ERROR;
  json_decref(reply);
  free(detail);
  detail = NULL;
  json_decref(params);
  /* The same read in protocol 2 (block-name table, quadruples) and 3
   * (records as arrays, an interactions table). */
  for (int p = 2; p <= 3; p++) {
    params = json_pack("{s:s,s:s,s:s}", "action", "read", "since", "0", "protocol", p == 2 ? "2" : "3");
    reply = wm_handle(wm, params, 5000 + p, &detail);
    if (!reply) result = RESULT_CLEAN_ERROR;
    json_decref(reply);
    free(detail);
    detail = NULL;
    json_decref(params);
  }
  wm_drain_failed(wm, "Invalid sequence of `startSync` and `finishSync`.");
  wm_restart(wm, "run-2");
  wm_free(wm);
  chaos_off();
  return result;
}

START_TEST(watcher_model_sweep) {
  sweep("watcher model", scenario_watcher, 0);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("alloc_fail");
  TCase *tc = tcase_create("record");
  tcase_add_checked_fixture(tc, record_setup, record_teardown);
  tcase_add_test(tc, record_parse_sweep);
  tcase_add_test(tc, record_parse_v3_sweep);
  tcase_add_test(tc, record_store_summary_sweep);
  tcase_set_timeout(tc, 120);
  suite_add_tcase(s, tc);
  tc = tcase_create("others");
  tcase_add_test(tc, validate_sweep);
  tcase_add_test(tc, uri_cursor_sweep);
  tcase_add_test(tc, diagnose_sweep);
  tcase_add_test(tc, compare_sweep);
  tcase_add_test(tc, compare_workload_sweep);
  tcase_add_test(tc, cpuprof_sweep);
  tcase_add_test(tc, session_workload_sweep);
  tcase_add_test(tc, workload_summary_sweep);
  tcase_add_test(tc, mcp_session_sweep);
  tcase_add_test(tc, watcher_model_sweep);
  tcase_set_timeout(tc, 120);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  /* jansson allocates through the same counters. */
  json_set_alloc_funcs(__wrap_malloc, __wrap_free);
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
