/* frame_events' ring of frames (a run: one isolate's frames) and the
 * answers the watcher would give from it (frame_events.h fe_answer). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame_events_impl.h"

/* ---- the ring ----------------------------------------------------------- */

void fe_frame_clear(fe_frame_t *f) {
  free(f->iid);
  free(f->lb);
  f->iid = f->lb = NULL;
}

void fe_run_reset(fe_t *fe, const char *isolate) {
  for (size_t i = 0; i < fe->len; i++) fe_frame_clear(&fe->ring[(fe->head + i) % FE_RING]);
  fe->head = fe->len = 0;
  fe->next_seq = 1;
  fe->last_number = -1;
  fe->last_raw = -1;
  fe->last_start = INT64_MIN;
  fe->last_end_us = 0;
  fe->frames = 0;
  fe->runs++;
  snprintf(fe->isolate, sizeof fe->isolate, "%s", isolate);
  /* The isolate id names the run (a hot restart makes a new isolate); the
   * counter tells apart two runs of one id after a reconnect. */
  snprintf(fe->run_id, sizeof fe->run_id, "fe%u:%.100s", fe->runs, isolate);
}

/* A Flutter.Frame field: an integer within the watcher protocol's bounds
 * (record.h), so the reply built from it always validates. */
static int64_t first_seq(const fe_t *fe) {
  return fe->len ? fe->ring[fe->head].seq : 0;
}

/* ---- answers ------------------------------------------------------------ */

/* A param as the handler sees it: a string (or, from our own wproto, a
 * number). */
static int param_int(const json_t *params, const char *key, int64_t *out) {
  const json_t *v = json_object_get(params, key);
  if (!v) return 0;
  if (json_is_integer(v)) {
    *out = json_integer_value(v);
    return 1;
  }
  if (!json_is_string(v)) return -1;
  char *end;
  long long n = strtoll(json_string_value(v), &end, 10);
  if (end == json_string_value(v) || *end) return -1;
  *out = n;
  return 1;
}

static json_t *record_json(const fe_frame_t *f) {
  json_t *r = json_pack(
      "{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:{}}", "seq", (json_int_t)f->seq, "frameNumber",
      (json_int_t)f->number, "atUs", (json_int_t)(f->vsync_start_us + f->total_span_us),
      "vsyncStartUs", (json_int_t)f->vsync_start_us, "buildUs", (json_int_t)f->build_us, "rasterUs",
      (json_int_t)f->raster_us, "vsyncOverheadUs", (json_int_t)f->vsync_overhead_us, "totalSpanUs",
      (json_int_t)f->total_span_us, "blocks");
  if (r && f->iid &&
      (json_object_set_new(r, "interactionId", json_string(f->iid)) ||
       json_object_set_new(r, "linkedBy", json_string(f->lb)))) {
    json_decref(r);
    return NULL;
  }
  return r;
}

json_t *fe_answer(fe_t *fe, const json_t *params, int *rpc_code, char *detail, size_t detail_len) {
  const char *action = json_string_value(json_object_get(params, "action"));
  if (!action) action = "read";
  *rpc_code = 0;
  int read = !strcmp(action, "read");
  if (!read && strcmp(action, "start") && strcmp(action, "stop") && strcmp(action, "mark") &&
      strcmp(action, "status") && strcmp(action, "probe")) {
    *rpc_code = RPC_INVALID_PARAMS;
    snprintf(detail, detail_len, "action: unknown value");
    return NULL;
  }
  const char *iid = json_string_value(json_object_get(params, "interactionId"));
  const char *lb = json_string_value(json_object_get(params, "linkedBy"));
  if (!strcmp(action, "start") || !strcmp(action, "mark") || !strcmp(action, "stop")) {
    char *ni = NULL, *nl = NULL;
    if (iid && strcmp(action, "stop")) {
      ni = strdup(iid);
      nl = strdup(lb ? lb : "agent");
      if (!ni || !nl) {
        free(ni);
        free(nl);
        return NULL;
      }
    }
    /* start keeps the interaction unless it names one; mark and stop set it. */
    if (strcmp(action, "start") || ni) {
      free(fe->iid);
      free(fe->lb);
      fe->iid = ni;
      fe->lb = nl;
    }
    if (!strcmp(action, "start")) fe->collecting = 1;
    if (!strcmp(action, "stop")) fe->collecting = 0;
  }
  /* The run is the isolate the tool talks to: once the VM service has named
   * a new one (a hot restart), the old isolate's frames are no longer
   * served, even before the new one posts its first frame, as a restarted
   * watcher's ring starts empty. Serving them would hand out frames of a
   * dead isolate under its run id and show the restart only later. */
  const char *cur = fe->app ? vm_app_isolate_id(fe->app) : "";
  if (!fe->run_id[0])
    fe_run_reset(fe, fe->app ? cur : "app");
  else if (cur[0] && strcmp(cur, fe->isolate) != 0)
    fe_run_reset(fe, cur);
  json_t *inter =
      fe->iid ? json_pack("{s:s, s:s}", "interactionId", fe->iid, "linkedBy", fe->lb) : json_null();
  json_t *o = json_pack(
      "{s:i, s:s, s:s, s:s, s:I, s:I, s:b, s:n, s:b, s:f, s:o, s:I, s:I, s:i, s:i}", "protocol", 1,
      "watcherVersion", FE_WATCHER_VERSION, "source", FE_SOURCE, "runId", fe->run_id,
      "livenessCounter", (json_int_t)(fe->last_number < 0 ? 0 : fe->last_number), "nowUs",
      (json_int_t)fe->last_end_us, "collecting", fe->collecting, "lifecycle", "framesEnabled", 1,
      "refreshRate", 0.0, "interaction", inter, "firstSeq", (json_int_t)first_seq(fe), "lastSeq",
      (json_int_t)(fe->next_seq - 1), "pending", 0, "droppedAttributions", 0);
  if (!o || !read) return o;
  int64_t since = 0, limit = WP_READ_LIMIT;
  if (param_int(params, "since", &since) < 0 || param_int(params, "limit", &limit) < 0 ||
      limit < 1) {
    json_decref(o);
    *rpc_code = RPC_INVALID_PARAMS;
    snprintf(detail, detail_len, "since/limit: must be integers (limit >= 1)");
    return NULL;
  }
  if (limit > RECORD_MAX_RECORDS) limit = RECORD_MAX_RECORDS;
  json_t *recs = json_array();
  size_t skip = 0;
  int64_t first = first_seq(fe);
  if (fe->len && since >= first) skip = (size_t)(since - first + 1);
  size_t i = skip;
  for (; recs && i < fe->len && (int64_t)(i - skip) < limit; i++) {
    json_t *r = record_json(&fe->ring[(fe->head + i) % FE_RING]);
    if (!r || json_array_append_new(recs, r)) {
      json_decref(recs);
      recs = NULL;
    }
  }
  if (!recs || json_object_set_new(o, "records", recs) ||
      json_object_set_new(o, "more", json_boolean(i < fe->len))) {
    json_decref(o);
    return NULL;
  }
  return o;
}
