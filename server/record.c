#include "record.h"
#include "errbuf.h"

#include "json_put.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


size_t record_utf8_length(const char *s) {
  size_t n = 0;
  for (; *s; s++)
    if (((unsigned char)*s & 0xC0) != 0x80) n++;
  return n;
}

static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* Reads an integer member within [min, max]. Reals are refused: the schema
 * says integer, and a watcher sending 1.5 µs has a bug worth seeing. The
 * upper bounds keep the server's own arithmetic on these values in range
 * (RECORD_MAX_TIME_US and friends in record.h). */
static int get_int(const json_t *obj, const char *key, int required, int64_t min, int64_t max,
                   int64_t *out, const char *where, char *err, size_t errlen) {
  json_t *v = json_object_get(obj, key);
  if (!v) {
    if (!required) return 0;
    return errbuf_fail(err, errlen, "%s%s%s: missing", where, *where ? "." : "", key);
  }
  if (!json_is_integer(v))
    return errbuf_fail(err, errlen, "%s%s%s: must be an integer", where, *where ? "." : "", key);
  json_int_t x = json_integer_value(v);
  if (x < min)
    return errbuf_fail(err, errlen, "%s%s%s: must be >= %lld, got %lld", where, *where ? "." : "", key,
                (long long)min, (long long)x);
  if (x > max)
    return errbuf_fail(err, errlen, "%s%s%s: must be <= %lld, got %lld", where, *where ? "." : "", key,
                (long long)max, (long long)x);
  *out = (int64_t)x;
  return 1;
}

static int check_string(const json_t *v, const char *where, const char *key, size_t maxchars,
                        char *err, size_t errlen) {
  const char *dot = *where ? "." : "";
  if (!json_is_string(v)) return errbuf_fail(err, errlen, "%s%s%s: must be a string", where, dot, key);
  size_t n = record_utf8_length(json_string_value(v));
  if (json_string_length(v) != strlen(json_string_value(v)))
    return errbuf_fail(err, errlen, "%s%s%s: contains a NUL character", where, dot, key);
  if (n < 1) return errbuf_fail(err, errlen, "%s%s%s: must not be empty", where, dot, key);
  if (n > maxchars)
    return errbuf_fail(err, errlen, "%s%s%s: longer than %zu characters", where, dot, key, maxchars);
  return 0;
}

static const char *const record_keys[] = {"seq",
                                          "frameNumber",
                                          "atUs",
                                          "vsyncStartUs",
                                          "buildUs",
                                          "rasterUs",
                                          "vsyncOverheadUs",
                                          "totalSpanUs",
                                          "layerCacheCount",
                                          "pictureCacheCount",
                                          "blocks",
                                          "interactionId",
                                          "linkedBy",
                                          NULL};

static int parse_blocks(frame_t *f, const json_t *blocks, const char *where, char *err,
                        size_t errlen) {
  char path[RECORD_ERR_LEN];
  if (!json_is_object(blocks)) return errbuf_fail(err, errlen, "%s.blocks: must be an object", where);
  size_t n = json_object_size(blocks);
  if (n > RECORD_MAX_BLOCKS)
    return errbuf_fail(err, errlen, "%s.blocks: more than %d blocks (%zu)", where, RECORD_MAX_BLOCKS, n);
  if (n == 0) return 0;
  f->blocks = calloc(n, sizeof *f->blocks);
  if (!f->blocks) return errbuf_fail(err, errlen, "%s.blocks: out of memory", where);
  const char *name;
  json_t *b;
  json_object_foreach((json_t *)blocks, name, b) {
    size_t len = strlen(name);
    if (len == 0) return errbuf_fail(err, errlen, "%s.blocks: a block has an empty name", where);
    if (len > RECORD_MAX_NAME)
      return errbuf_fail(err, errlen, "%s.blocks: block name longer than %d bytes (\"%.40s…\")", where,
                  RECORD_MAX_NAME, name);
    snprintf(path, sizeof path, "%s.blocks[\"%.60s\"]", where, name);
    if (!json_is_object(b)) return errbuf_fail(err, errlen, "%s: must be an object", path);
    if (json_object_size(b) != 3 || !json_object_get(b, "micros") ||
        !json_object_get(b, "selfMicros") || !json_object_get(b, "count")) {
      const char *k;
      json_t *ignored;
      json_object_foreach(b, k, ignored) {
        if (strcmp(k, "micros") && strcmp(k, "selfMicros") && strcmp(k, "count"))
          return errbuf_fail(err, errlen, "%s.%.40s: unknown field", path, k);
      }
    }
    record_block_t *rb = &f->blocks[f->nblocks];
    if (get_int(b, "micros", 1, 0, RECORD_MAX_AMOUNT, &rb->micros, path, err, errlen) < 0 ||
        get_int(b, "selfMicros", 1, 0, RECORD_MAX_AMOUNT, &rb->self_micros, path, err, errlen) <
            0 ||
        get_int(b, "count", 1, 1, RECORD_MAX_AMOUNT, &rb->count, path, err, errlen) < 0)
      return -1;
    if (rb->self_micros > rb->micros)
      return errbuf_fail(err, errlen, "%s.selfMicros: larger than micros", path);
    if (!(rb->name = dup_str(name))) return errbuf_fail(err, errlen, "%s: out of memory", path);
    f->nblocks++;
  }
  return 0;
}

/* A protocol-2 reply's block-name table, shared by its records. seen[i]
 * holds the mark of the last record that named entry i, so a record naming
 * one entry twice is caught in O(1) per block without clearing anything. */
typedef struct {
  const char **names; /* borrowed from the reply */
  size_t n;
  uint32_t *seen;
  uint32_t mark;
} name_table_t;

/* Protocol 2: blocks as a flat array of [nameIndex, micros, selfMicros,
 * count] quadruples, names from the reply's table. The same checks as the
 * object form, and the result is the same record_block_t list. */
static int parse_blocks_v2(frame_t *f, const json_t *blocks, name_table_t *t, const char *where,
                           char *err, size_t errlen) {
  if (!json_is_array(blocks)) return errbuf_fail(err, errlen, "%s.blocks: must be an array", where);
  size_t len = json_array_size(blocks);
  if (len % 4)
    return errbuf_fail(err, errlen, "%s.blocks: length %zu is not a multiple of 4", where, len);
  size_t n = len / 4;
  if (n > RECORD_MAX_BLOCKS)
    return errbuf_fail(err, errlen, "%s.blocks: more than %d blocks (%zu)", where, RECORD_MAX_BLOCKS, n);
  if (n == 0) return 0;
  f->blocks = calloc(n, sizeof *f->blocks);
  if (!f->blocks) return errbuf_fail(err, errlen, "%s.blocks: out of memory", where);
  t->mark++;
  for (size_t i = 0; i < n; i++) {
    int64_t v[4];
    static const char *const what[4] = {"name index", "micros", "selfMicros", "count"};
    static const int64_t min[4] = {0, 0, 0, 1};
    for (int k = 0; k < 4; k++) {
      json_t *x = json_array_get(blocks, i * 4 + (size_t)k);
      if (!json_is_integer(x))
        return errbuf_fail(err, errlen, "%s.blocks[%zu]: %s must be an integer", where, i, what[k]);
      v[k] = json_integer_value(x);
      if (v[k] < min[k] || v[k] > RECORD_MAX_AMOUNT)
        return errbuf_fail(err, errlen, "%s.blocks[%zu]: %s must be %lld-%lld, got %lld", where, i,
                    what[k], (long long)min[k], (long long)RECORD_MAX_AMOUNT, (long long)v[k]);
    }
    if ((uint64_t)v[0] >= t->n)
      return errbuf_fail(err, errlen, "%s.blocks[%zu]: name index %lld outside blockNames (%zu names)",
                  where, i, (long long)v[0], t->n);
    if (t->seen[v[0]] == t->mark)
      return errbuf_fail(err, errlen, "%s.blocks[%zu]: \"%.60s\" appears twice", where, i,
                  t->names[v[0]]);
    t->seen[v[0]] = t->mark;
    if (v[2] > v[1])
      return errbuf_fail(err, errlen, "%s.blocks[%zu]: selfMicros larger than micros", where, i);
    record_block_t *rb = &f->blocks[f->nblocks];
    rb->micros = v[1];
    rb->self_micros = v[2];
    rb->count = v[3];
    if (!(rb->name = dup_str(t->names[v[0]])))
      return errbuf_fail(err, errlen, "%s.blocks[%zu]: out of memory", where, i);
    f->nblocks++;
  }
  return 0;
}

/* One record of either form: names is NULL for protocol 1 (blocks an
 * object), the reply's table for protocol 2 (blocks an array). */
static int frame_parse(frame_t *out, const json_t *rec, const char *where, name_table_t *names,
                       char *err, size_t errlen) {
  frame_t f;
  memset(&f, 0, sizeof f);
  memset(out, 0, sizeof *out);
  if (!where) where = "";
  const char *wh = *where ? where : "record";
  if (!json_is_object(rec)) return errbuf_fail(err, errlen, "%s: must be an object", wh);
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)rec, key, v) {
    int known = 0;
    for (const char *const *k = record_keys; *k; k++)
      if (!strcmp(*k, key)) known = 1;
    if (!known) return errbuf_fail(err, errlen, "%s.%.60s: unknown field", wh, key);
  }
  f.layer_cache_count = f.picture_cache_count = -1;
  const int64_t T = RECORD_MAX_TIME_US, A = RECORD_MAX_AMOUNT;
  if (get_int(rec, "seq", 1, 1, RECORD_MAX_COUNTER, &f.seq, wh, err, errlen) < 0 ||
      get_int(rec, "frameNumber", 1, -1, RECORD_MAX_COUNTER, &f.frame_number, wh, err, errlen) <
          0 ||
      get_int(rec, "atUs", 1, -T, T, &f.at_us, wh, err, errlen) < 0 ||
      get_int(rec, "vsyncStartUs", 1, -T, T, &f.vsync_start_us, wh, err, errlen) < 0 ||
      get_int(rec, "buildUs", 1, 0, A, &f.build_us, wh, err, errlen) < 0 ||
      get_int(rec, "rasterUs", 1, 0, A, &f.raster_us, wh, err, errlen) < 0 ||
      get_int(rec, "vsyncOverheadUs", 1, 0, A, &f.vsync_overhead_us, wh, err, errlen) < 0 ||
      get_int(rec, "totalSpanUs", 1, 0, A, &f.total_span_us, wh, err, errlen) < 0 ||
      get_int(rec, "layerCacheCount", 0, 0, A, &f.layer_cache_count, wh, err, errlen) < 0 ||
      get_int(rec, "pictureCacheCount", 0, 0, A, &f.picture_cache_count, wh, err, errlen) < 0)
    return -1;
  json_t *iid = json_object_get(rec, "interactionId");
  json_t *lby = json_object_get(rec, "linkedBy");
  if (iid && !lby) return errbuf_fail(err, errlen, "%s.linkedBy: missing (interactionId is set)", wh);
  if (lby && !iid) return errbuf_fail(err, errlen, "%s.interactionId: missing (linkedBy is set)", wh);
  if (iid && (check_string(iid, wh, "interactionId", RECORD_MAX_INTERACTION, err, errlen) < 0 ||
              check_string(lby, wh, "linkedBy", RECORD_MAX_LINKED_BY, err, errlen) < 0))
    return -1;
  json_t *blocks = json_object_get(rec, "blocks");
  if (blocks && (names ? parse_blocks_v2(&f, blocks, names, wh, err, errlen)
                       : parse_blocks(&f, blocks, wh, err, errlen)) < 0)
    goto fail_blocks;
  if (iid) {
    f.interaction_id = dup_str(json_string_value(iid));
    f.linked_by = dup_str(json_string_value(lby));
    if (!f.interaction_id || !f.linked_by) {
      errbuf_fail(err, errlen, "%s: out of memory", wh);
      goto fail_blocks;
    }
  }
  *out = f;
  return 0;

fail_blocks:
  record_frame_close(&f);
  return -1;
}

int record_frame_parse(frame_t *out, const json_t *rec, const char *where, char *err,
                       size_t errlen) {
  return frame_parse(out, rec, where, NULL, err, errlen);
}

void record_frame_close(frame_t *f) {
  for (size_t i = 0; i < f->nblocks; i++) free(f->blocks[i].name);
  free(f->blocks);
  free(f->interaction_id);
  free(f->linked_by);
  memset(f, 0, sizeof *f);
}

int record_frame_copy(frame_t *dst, const frame_t *src) {
  *dst = *src;
  dst->blocks = NULL;
  dst->nblocks = 0;
  dst->interaction_id = dst->linked_by = NULL;
  if (src->interaction_id && (!(dst->interaction_id = dup_str(src->interaction_id)) ||
                              !(dst->linked_by = dup_str(src->linked_by))))
    goto fail;
  if (src->nblocks) {
    if (!(dst->blocks = calloc(src->nblocks, sizeof *dst->blocks))) goto fail;
    for (size_t i = 0; i < src->nblocks; i++) {
      dst->blocks[i] = src->blocks[i];
      if (!(dst->blocks[i].name = dup_str(src->blocks[i].name))) goto fail;
      dst->nblocks++;
    }
  }
  return 0;
fail:
  record_frame_close(dst);
  return -1;
}

json_t *record_frame_to_json(const frame_t *f, int with_blocks) {
  int bad = 0;
  json_t *o = json_object();
  if (!o) return NULL;
  json_put(o, &bad, "seq", json_integer(f->seq));
  json_put(o, &bad, "frameNumber", json_integer(f->frame_number));
  json_put(o, &bad, "atUs", json_integer(f->at_us));
  json_put(o, &bad, "vsyncStartUs", json_integer(f->vsync_start_us));
  json_put(o, &bad, "buildUs", json_integer(f->build_us));
  json_put(o, &bad, "rasterUs", json_integer(f->raster_us));
  json_put(o, &bad, "vsyncOverheadUs", json_integer(f->vsync_overhead_us));
  json_put(o, &bad, "totalSpanUs", json_integer(f->total_span_us));
  if (f->layer_cache_count >= 0)
    json_put(o, &bad, "layerCacheCount", json_integer(f->layer_cache_count));
  if (f->picture_cache_count >= 0)
    json_put(o, &bad, "pictureCacheCount", json_integer(f->picture_cache_count));
  if (with_blocks) {
    json_t *bs = json_object();
    for (size_t i = 0; bs && i < f->nblocks; i++) {
      json_t *b = json_object();
      if (!b) {
        bad = 1;
        break;
      }
      json_put(b, &bad, "micros", json_integer(f->blocks[i].micros));
      json_put(b, &bad, "selfMicros", json_integer(f->blocks[i].self_micros));
      json_put(b, &bad, "count", json_integer(f->blocks[i].count));
      json_put(bs, &bad, f->blocks[i].name, b);
    }
    json_put(o, &bad, "blocks", bs);
  }
  if (f->interaction_id) {
    json_put(o, &bad, "interactionId", json_string(f->interaction_id));
    json_put(o, &bad, "linkedBy", json_string(f->linked_by));
  }
  if (bad) {
    json_decref(o);
    return NULL;
  }
  return o;
}

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
      check_string(v, "reply", "drainError", RECORD_MAX_DRAIN_ERROR, err, errlen) < 0)
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
  /* Set by the server's own stand-in (frame_events.c), never by a watcher. */
  v = json_object_get(reply, "source");
  if (v && (!json_is_string(v) || strcmp(json_string_value(v), "frameEvents") != 0))
    return errbuf_fail(err, errlen, "reply.source: must be \"frameEvents\" when present");
  r->frame_events = v != NULL;
  return 0;
}

/* Checks a protocol-2 "blockNames" table (absent reads as empty): every
 * entry a non-empty string of at most RECORD_MAX_NAME bytes, no two alike
 * (a record naming both would hold one name twice). */
static int name_table_init(name_table_t *t, const json_t *names, char *err, size_t errlen) {
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
  t->seen = calloc(n, sizeof *t->seen);
  if (!set || !t->names || !t->seen) {
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
  free(t->seen);
  memset(t, 0, sizeof *t);
  return -1;
}

static void name_table_close(name_table_t *t) {
  free(t->names);
  free(t->seen);
  memset(t, 0, sizeof *t);
}

int record_reply_parse(record_reply_t *out, const json_t *reply, char *err, size_t errlen) {
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
  if (get_int(reply, "livenessCounter", 1, 0, C, &r.liveness_counter, "reply", err, errlen) < 0 ||
      get_int(reply, "nowUs", 1, -RECORD_MAX_TIME_US, RECORD_MAX_TIME_US, &r.now_us, "reply", err,
              errlen) < 0 ||
      get_int(reply, "firstSeq", 1, 0, C, &r.first_seq, "reply", err, errlen) < 0 ||
      get_int(reply, "lastSeq", 1, 0, C, &r.last_seq, "reply", err, errlen) < 0 ||
      get_int(reply, "pending", 1, 0, C, &r.pending, "reply", err, errlen) < 0 ||
      get_int(reply, "droppedAttributions", 1, 0, C, &r.dropped_attributions, "reply", err,
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
    if (check_string(iid, "reply.interaction", "interactionId", RECORD_MAX_INTERACTION, err,
                     errlen) < 0 ||
        check_string(lby, "reply.interaction", "linkedBy", RECORD_MAX_LINKED_BY, err, errlen) < 0)
      return -1;
  }
  v = json_object_get(reply, "more");
  if (v && !json_is_boolean(v)) return errbuf_fail(err, errlen, "reply.more: must be a boolean");
  r.more = json_is_true(v);
  v = json_object_get(reply, "type");
  if (v && !json_is_string(v)) return errbuf_fail(err, errlen, "reply.type: must be a string");
  if (diagnostics_parse(&r, reply, err, errlen) < 0) return -1;

  json_t *recs = json_object_get(reply, "records");
  if (recs && !json_is_array(recs)) return errbuf_fail(err, errlen, "reply.records: must be an array");
  size_t n = json_array_size(recs); /* 0 when absent */
  if (n > RECORD_MAX_RECORDS)
    return errbuf_fail(err, errlen, "reply.records: more than %d records (%zu)", RECORD_MAX_RECORDS, n);
  name_table_t table = {NULL, 0, NULL, 0};
  name_table_t *names = NULL;
  if (r.protocol == 2 && recs) {
    if (name_table_init(&table, json_object_get(reply, "blockNames"), err, errlen) < 0) return -1;
    names = &table;
  }
  if (recs) {
    r.has_records = 1;
    if (n && !(r.records = calloc(n, sizeof *r.records))) {
      errbuf_fail(err, errlen, "reply.records: out of memory");
      goto fail_records;
    }
    char where[32];
    for (size_t i = 0; i < n; i++) {
      snprintf(where, sizeof where, "records[%zu]", i);
      if (frame_parse(&r.records[i], json_array_get(recs, i), where, names, err, errlen) < 0)
        goto fail_records;
      r.nrecords++;
      if (i > 0 && r.records[i].seq <= r.records[i - 1].seq) {
        errbuf_fail(err, errlen, "%s.seq: %lld does not increase (previous %lld)", where,
             (long long)r.records[i].seq, (long long)r.records[i - 1].seq);
        goto fail_records;
      }
      /* firstSeq is the oldest record the watcher still holds: a record older
       * than it would make a second look at the same reply count losses. */
      if (r.records[i].seq < r.first_seq) {
        errbuf_fail(err, errlen, "%s.seq: %lld is before the reply's firstSeq %lld", where,
                    (long long)r.records[i].seq, (long long)r.first_seq);
        goto fail_records;
      }
      if (r.records[i].seq > r.last_seq) {
        errbuf_fail(err, errlen, "%s.seq: %lld is beyond the reply's lastSeq %lld", where,
             (long long)r.records[i].seq, (long long)r.last_seq);
        goto fail_records;
      }
    }
  }
  name_table_close(&table);
  r.watcher_version = dup_str(json_string_value(json_object_get(reply, "watcherVersion")));
  r.run_id = dup_str(json_string_value(json_object_get(reply, "runId")));
  if (!json_is_null(inter)) {
    r.interaction_id = dup_str(json_string_value(json_object_get(inter, "interactionId")));
    r.linked_by = dup_str(json_string_value(json_object_get(inter, "linkedBy")));
    if (!r.interaction_id || !r.linked_by) goto fail_oom;
  }
  v = json_object_get(reply, "drainError");
  if (json_is_string(v) && !(r.drain_error = dup_str(json_string_value(v)))) goto fail_oom;
  if (!r.watcher_version || !r.run_id) goto fail_oom;
  *out = r;
  return 0;

fail_oom:
  errbuf_fail(err, errlen, "reply: out of memory");
  record_reply_close(&r);
  return -1;
fail_records:
  name_table_close(&table);
  record_reply_close(&r);
  return -1;
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
