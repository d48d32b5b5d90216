/* record_reply: a whole ext.telescope.frames reply, validated before
 * anything is returned (record.h); its records through record.c. */
#include "errbuf.h"
#include "record_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const lifecycles[] = {"resumed", "inactive", "hidden",
                                         "paused",  "detached", NULL};

static const char *const reply_required[] = {
    "protocol",   "watcherVersion", "runId",         "livenessCounter",     "nowUs",
    "collecting", "lifecycle",      "framesEnabled", "refreshRate",         "interaction",
    "firstSeq",   "lastSeq",        "pending",       "droppedAttributions", NULL};

static const char *const build_modes[] = {"debug", "profile", "release", NULL};

/* The optional fields a watcher reports about itself (older watchers omit
 * them all): checked here, copied by the caller once everything passed. */
static int diagnostics_parse(record_reply_t *r, const json_t *reply, char *err, size_t errlen) {
  json_t *v = json_object_get(reply, "buildMode");
  if (v) {
    if (json_is_string(v))
      for (const char *const *m = build_modes; *m; m++)
        if (!strcmp(*m, json_string_value(v))) r->build_mode = *m;
    if (!r->build_mode)
      return errbuf_fail(err, errlen, "reply.buildMode: must be one of debug, profile, release");
  }
  v = json_object_get(reply, "drainError");
  if (v && !json_is_null(v) &&
      record_check_string(v, "reply", "drainError", RECORD_MAX_DRAIN_ERROR, err, errlen) < 0)
    return -1;
  v = json_object_get(reply, "timingsMissing");
  if (v && !json_is_boolean(v)) return errbuf_fail(err, errlen, "reply.timingsMissing: must be a boolean");
  r->timings_missing = json_is_true(v);
  v = json_object_get(reply, "collectionAutoOff");
  if (v && !json_is_boolean(v))
    return errbuf_fail(err, errlen, "reply.collectionAutoOff: must be a boolean");
  r->collection_auto_off = json_is_true(v);
  v = json_object_get(reply, "collectionTakenOver");
  if (v && !json_is_boolean(v))
    return errbuf_fail(err, errlen, "reply.collectionTakenOver: must be a boolean");
  r->collection_taken_over = json_is_true(v);
  v = json_object_get(reply, "collectionLost");
  if (v && !json_is_boolean(v)) return errbuf_fail(err, errlen, "reply.collectionLost: must be a boolean");
  r->collection_lost = json_is_true(v);
  /* Set by the server's own stand-in (frame_events.c), never by a watcher. */
  v = json_object_get(reply, "source");
  if (v && (!json_is_string(v) || strcmp(json_string_value(v), "frameEvents") != 0))
    return errbuf_fail(err, errlen, "reply.source: must be \"frameEvents\" when present");
  r->frame_events = v != NULL;
  return 0;
}

/* The drive's array of strings key, when present: each checked, the first
 * cap kept in the rows of out (each width bytes) and counted in *n. */
static int strings_parse(const json_t *o, const char *key, char *out, size_t width, int cap,
                         int *n, char *err, size_t errlen) {
  const json_t *v = json_object_get(o, key), *c;
  size_t i;
  if (v && !json_is_array(v))
    return errbuf_fail(err, errlen, "reply.drive.%s: must be an array", key);
  json_array_foreach(v, i, c) {
    if (!json_is_string(c))
      return errbuf_fail(err, errlen, "reply.drive.%s[%zu]: must be a string", key, i);
    if (*n < cap) snprintf(out + (size_t)(*n)++ * width, width, "%s", json_string_value(c));
  }
  return 0;
}

/* The `drive` object (DRIVE 3), when present: every field checked. */
static int drive_parse(record_drive_t *d, const json_t *reply, char *err, size_t errlen) {
  static const char *const states[] = {"running", "done", "failed", NULL};
  const json_t *o = json_object_get(reply, "drive"), *v;
  if (!o || json_is_null(o)) return 0;
  if (!json_is_object(o)) return errbuf_fail(err, errlen, "reply.drive: must be an object");
  v = json_object_get(o, "id");
  if (!json_is_string(v) || !json_string_length(v) || json_string_length(v) >= sizeof d->id ||
      strlen(json_string_value(v)) != json_string_length(v))
    return errbuf_fail(err, errlen, "reply.drive.id: must be a string of 1 to %zu bytes",
                       sizeof d->id - 1);
  snprintf(d->id, sizeof d->id, "%s", json_string_value(v));
  v = json_object_get(o, "state");
  for (const char *const *s = states; *s && json_is_string(v); s++)
    if (!strcmp(*s, json_string_value(v))) snprintf(d->state, sizeof d->state, "%s", *s);
  if (!d->state[0])
    return errbuf_fail(err, errlen, "reply.drive.state: must be one of running, done, failed");
  static const char *const ints[] = {"run", "runs", "step", "of"};
  int *dst[] = {&d->run, &d->runs, &d->step, &d->of};
  for (int i = 0; i < 4; i++) {
    int64_t x;
    if (record_get_int(o, ints[i], 1, 0, 10000, &x, "reply.drive", err, errlen) < 0) return -1;
    *dst[i] = (int)x;
  }
  v = json_object_get(o, "error");
  if (v && !json_is_null(v)) {
    if (!json_is_string(v)) return errbuf_fail(err, errlen, "reply.drive.error: must be a string");
    snprintf(d->error, sizeof d->error, "%s", json_string_value(v));
  }
  if (strings_parse(o, "candidates", d->candidates[0], sizeof d->candidates[0],
                    RECORD_DRIVE_CANDIDATES, &d->ncandidates, err, errlen) < 0 ||
      strings_parse(o, "cut", d->cut[0], sizeof d->cut[0], RECORD_DRIVE_CUT, &d->ncut, err,
                    errlen) < 0)
    return -1;
  d->present = 1;
  return 0;
}

/* Checks a protocol-2 "blockNames" table (absent reads as empty): every
 * entry a non-empty string of at most RECORD_MAX_NAME bytes, no two alike
 * (a record naming both would hold one name twice). */
static int name_table_init(record_tables_t *t, const json_t *names, char *err, size_t errlen) {
  memset(t, 0, sizeof *t);
  if (!names) return 0;
  if (!json_is_array(names)) return errbuf_fail(err, errlen, "reply.blockNames: must be an array");
  size_t n = json_array_size(names);
  if (n > RECORD_MAX_BLOCK_NAMES)
    return errbuf_fail(err, errlen, "reply.blockNames: more than %d names (%zu)", RECORD_MAX_BLOCK_NAMES,
                n);
  if (n == 0) return 0;
  json_t *set = json_object();
  t->names = calloc(n, sizeof *t->names);
  t->shared = calloc(n, sizeof *t->shared);
  t->seen = calloc(n, sizeof *t->seen);
  if (!set || !t->names || !t->shared || !t->seen) {
    errbuf_fail(err, errlen, "reply.blockNames: out of memory");
    goto fail;
  }
  for (size_t i = 0; i < n; i++) {
    json_t *name = json_array_get(names, i);
    if (!json_is_string(name)) {
      errbuf_fail(err, errlen, "reply.blockNames[%zu]: must be a string", i);
      goto fail;
    }
    const char *s = json_string_value(name);
    size_t len = json_string_length(name);
    if (len == 0 || len > RECORD_MAX_NAME || strlen(s) != len) {
      errbuf_fail(err, errlen, "reply.blockNames[%zu]: must be 1-%d bytes without NUL", i,
           RECORD_MAX_NAME);
      goto fail;
    }
    if (json_object_get(set, s)) {
      errbuf_fail(err, errlen, "reply.blockNames[%zu]: \"%.60s\" appears twice", i, s);
      goto fail;
    }
    if (json_object_set_new(set, s, json_true()) != 0) {
      errbuf_fail(err, errlen, "reply.blockNames: out of memory");
      goto fail;
    }
    t->names[i] = s;
  }
  t->n = n;
  json_decref(set);
  return 0;
fail:
  json_decref(set);
  free(t->names);
  free(t->shared);
  free(t->seen);
  memset(t, 0, sizeof *t);
  return -1;
}

/* Checks a protocol-3 "interactions" table (absent reads as empty): each
 * entry an [interactionId, linkedBy] pair of valid strings. */
static int pairs_check(const json_t *pairs, char *err, size_t errlen) {
  if (!pairs) return 0;
  if (!json_is_array(pairs)) return errbuf_fail(err, errlen, "reply.interactions: must be an array");
  if (json_array_size(pairs) > RECORD_MAX_RECORDS)
    return errbuf_fail(err, errlen, "reply.interactions: more than %d pairs", RECORD_MAX_RECORDS);
  char where[48];
  size_t i;
  json_t *pair;
  json_array_foreach(pairs, i, pair) {
    snprintf(where, sizeof where, "reply.interactions[%zu]", i);
    if (!json_is_array(pair) || json_array_size(pair) != 2)
      return errbuf_fail(err, errlen, "%s: must be [interactionId, linkedBy]", where);
    if (record_check_string(json_array_get(pair, 0), where, "interactionId", RECORD_MAX_INTERACTION, err,
                     errlen) < 0 ||
        record_check_string(json_array_get(pair, 1), where, "linkedBy", RECORD_MAX_LINKED_BY, err,
                     errlen) < 0)
      return -1;
  }
  return 0;
}

static void name_table_close(record_tables_t *t) {
  record_tables_drop_names(t);
  free(t->names);
  free(t->seen);
  memset(t, 0, sizeof *t);
}

/* The records from the reply's tree (recs, NULL when absent); on failure
 * r's records are closed and err says why. */
static int records_from_tree(record_reply_t *r, const json_t *reply, const json_t *recs, char *err,
                             size_t errlen) {
  if (recs && !json_is_array(recs)) return errbuf_fail(err, errlen, "reply.records: must be an array");
  size_t n = json_array_size(recs); /* 0 when absent */
  if (n > RECORD_MAX_RECORDS)
    return errbuf_fail(err, errlen, "reply.records: more than %d records (%zu)", RECORD_MAX_RECORDS, n);
  record_tables_t table;
  memset(&table, 0, sizeof table);
  record_tables_t *names = NULL;
  if (r->protocol >= 2 && recs) {
    if (name_table_init(&table, json_object_get(reply, "blockNames"), err, errlen) < 0) return -1;
    names = &table;
  }
  if (r->protocol >= 3 && recs) {
    table.positional = 1;
    table.pairs = json_object_get(reply, "interactions");
    if (pairs_check(table.pairs, err, errlen) < 0) {
      name_table_close(&table);
      return -1;
    }
  }
  if (recs) {
    r->has_records = 1;
    if (n && !(r->records = calloc(n, sizeof *r->records))) {
      errbuf_fail(err, errlen, "reply.records: out of memory");
      goto fail_records;
    }
    char where[32];
    for (size_t i = 0; i < n; i++) {
      snprintf(where, sizeof where, "records[%zu]", i);
      if (record_frame_parse_in(&r->records[i], json_array_get(recs, i), where, names, err, errlen) < 0)
        goto fail_records;
      r->nrecords++;
      if (record_seq_check(r, i, where, err, errlen) < 0) goto fail_records;
    }
  }
  name_table_close(&table);
  return 0;
fail_records:
  name_table_close(&table);
  for (size_t i = 0; i < r->nrecords; i++) record_frame_close(&r->records[i]);
  free(r->records);
  r->records = NULL;
  r->nrecords = 0;
  r->has_records = 0;
  return -1;
}

/* Protocol 3's records from their text (record_frames_from_text): 0, or -1
 * with nothing kept when anything is unexpected, the tables included. */
static int records_from_text(record_reply_t *r, const json_t *reply, const char *raw, size_t rawlen) {
  char err[RECORD_ERR_LEN];
  record_tables_t table;
  if (name_table_init(&table, json_object_get(reply, "blockNames"), err, sizeof err) < 0) return -1;
  table.positional = 1;
  table.pairs = json_object_get(reply, "interactions");
  int rc = pairs_check(table.pairs, err, sizeof err) < 0
               ? -1
               : record_frames_from_text(r, raw, rawlen, &table);
  name_table_close(&table);
  return rc;
}

int record_reply_parse_raw(record_reply_t *out, const json_t *reply, const char *raw,
                          size_t rawlen, char *err, size_t errlen) {
  record_reply_t r;
  memset(&r, 0, sizeof r);
  memset(out, 0, sizeof *out);
  if (!json_is_object(reply)) return errbuf_fail(err, errlen, "reply: must be an object");
  for (const char *const *k = reply_required; *k; k++)
    if (!json_object_get(reply, *k)) return errbuf_fail(err, errlen, "reply.%s: missing", *k);
  json_t *v = json_object_get(reply, "protocol");
  if (!json_is_integer(v) || json_integer_value(v) < 1 ||
      json_integer_value(v) > RECORD_PROTOCOL_MAX)
    return errbuf_fail(err, errlen, "reply.protocol: unsupported (this server speaks protocols 1-%d)",
                RECORD_PROTOCOL_MAX);
  r.protocol = (int)json_integer_value(v);
  v = json_object_get(reply, "watcherVersion");
  if (!json_is_string(v)) return errbuf_fail(err, errlen, "reply.watcherVersion: must be a string");
  v = json_object_get(reply, "runId");
  if (!json_is_string(v) || json_string_length(v) == 0)
    return errbuf_fail(err, errlen, "reply.runId: must be a non-empty string");
  if (json_string_length(v) > RECORD_MAX_RUN_ID ||
      strlen(json_string_value(v)) != json_string_length(v))
    return errbuf_fail(err, errlen, "reply.runId: longer than %d bytes or contains NUL",
                RECORD_MAX_RUN_ID);
  const int64_t C = RECORD_MAX_COUNTER;
  if (record_get_int(reply, "livenessCounter", 1, 0, C, &r.liveness_counter, "reply", err, errlen) < 0 ||
      record_get_int(reply, "nowUs", 1, -RECORD_MAX_TIME_US, RECORD_MAX_TIME_US, &r.now_us, "reply", err,
              errlen) < 0 ||
      record_get_int(reply, "firstSeq", 1, 0, C, &r.first_seq, "reply", err, errlen) < 0 ||
      record_get_int(reply, "lastSeq", 1, 0, C, &r.last_seq, "reply", err, errlen) < 0 ||
      record_get_int(reply, "pending", 1, 0, C, &r.pending, "reply", err, errlen) < 0 ||
      record_get_int(reply, "droppedAttributions", 1, 0, C, &r.dropped_attributions, "reply", err,
              errlen) < 0)
    return -1;
  v = json_object_get(reply, "collecting");
  if (!json_is_boolean(v)) return errbuf_fail(err, errlen, "reply.collecting: must be a boolean");
  r.collecting = json_is_true(v);
  v = json_object_get(reply, "framesEnabled");
  if (!json_is_boolean(v)) return errbuf_fail(err, errlen, "reply.framesEnabled: must be a boolean");
  r.frames_enabled = json_is_true(v);
  v = json_object_get(reply, "lifecycle");
  if (!json_is_null(v)) {
    if (json_is_string(v))
      for (const char *const *l = lifecycles; *l; l++)
        if (!strcmp(*l, json_string_value(v))) r.lifecycle = *l;
    if (!r.lifecycle)
      return errbuf_fail(
          err, errlen,
          "reply.lifecycle: must be one of resumed, inactive, hidden, paused, detached, null");
  }
  v = json_object_get(reply, "refreshRate");
  if (!json_is_number(v) || json_number_value(v) < 0)
    return errbuf_fail(err, errlen, "reply.refreshRate: must be a number >= 0");
  r.refresh_rate = json_number_value(v);
  json_t *inter = json_object_get(reply, "interaction");
  if (!json_is_null(inter)) {
    if (!json_is_object(inter))
      return errbuf_fail(err, errlen, "reply.interaction: must be null or an object");
    json_t *iid = json_object_get(inter, "interactionId"),
           *lby = json_object_get(inter, "linkedBy");
    if (!iid) return errbuf_fail(err, errlen, "reply.interaction.interactionId: missing");
    if (!lby) return errbuf_fail(err, errlen, "reply.interaction.linkedBy: missing");
    if (record_check_string(iid, "reply.interaction", "interactionId", RECORD_MAX_INTERACTION, err,
                     errlen) < 0 ||
        record_check_string(lby, "reply.interaction", "linkedBy", RECORD_MAX_LINKED_BY, err, errlen) < 0)
      return -1;
  }
  v = json_object_get(reply, "more");
  if (v && !json_is_boolean(v)) return errbuf_fail(err, errlen, "reply.more: must be a boolean");
  r.more = json_is_true(v);
  v = json_object_get(reply, "type");
  if (v && !json_is_string(v)) return errbuf_fail(err, errlen, "reply.type: must be a string");
  if (diagnostics_parse(&r, reply, err, errlen) < 0 || drive_parse(&r.drive, reply, err, errlen) < 0)
    return -1;

  int rc = -1;
  if (raw && r.protocol >= 3)
    rc = records_from_text(&r, reply, raw, rawlen);
  if (rc < 0) {
    const json_t *recs = json_object_get(reply, "records");
    json_t *whole = NULL;
    if (raw) {
      json_error_t jerr;
      if (!(whole = json_loadb(raw, rawlen, 0, &jerr)))
        return errbuf_fail(err, errlen, "reply.records: not valid JSON: %.120s", jerr.text);
      recs = whole;
    }
    rc = records_from_tree(&r, reply, recs, err, errlen);
    json_decref(whole);
    if (rc < 0) return -1;
  }
  r.watcher_version = record_dup(json_string_value(json_object_get(reply, "watcherVersion")));
  r.run_id = record_dup(json_string_value(json_object_get(reply, "runId")));
  if (!json_is_null(inter)) {
    r.interaction_id = record_dup(json_string_value(json_object_get(inter, "interactionId")));
    r.linked_by = record_dup(json_string_value(json_object_get(inter, "linkedBy")));
    if (!r.interaction_id || !r.linked_by) goto fail_oom;
  }
  v = json_object_get(reply, "drainError");
  if (json_is_string(v) && !(r.drain_error = record_dup(json_string_value(v)))) goto fail_oom;
  if (!r.watcher_version || !r.run_id) goto fail_oom;
  *out = r;
  return 0;

fail_oom:
  errbuf_fail(err, errlen, "reply: out of memory");
  record_reply_close(&r);
  return -1;
}

int record_reply_parse(record_reply_t *out, const json_t *reply, char *err, size_t errlen) {
  return record_reply_parse_raw(out, reply, NULL, 0, err, errlen);
}

void record_reply_close(record_reply_t *r) {
  for (size_t i = 0; i < r->nrecords; i++) record_frame_close(&r->records[i]);
  free(r->records);
  free(r->watcher_version);
  free(r->run_id);
  free(r->interaction_id);
  free(r->linked_by);
  free(r->drain_error);
  memset(r, 0, sizeof *r);
}
