/* record: one FramePerfRecord, in any wire form, into a frame_t (record.h);
 * the helpers record_reply.c shares, and protocol-3 records read straight
 * from their text (record_impl.h). */
#include "errbuf.h"
#include "json_put.h"
#include "record_impl.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t record_utf8_length(const char *s) {
  size_t n = 0;
  for (; *s; s++)
    if (((unsigned char)*s & 0xC0) != 0x80) n++;
  return n;
}

typedef struct {
  size_t refs;
  char text[];
} name_t;

static name_t *name_of(char *text) { return (name_t *)(text - offsetof(name_t, text)); }

char *record_name_new(const char *s) {
  size_t n = strlen(s) + 1;
  name_t *m = malloc(sizeof *m + n);
  if (!m) return NULL;
  m->refs = 1;
  memcpy(m->text, s, n);
  return m->text;
}

char *record_name_ref(char *name) {
  name_of(name)->refs++;
  return name;
}

void record_name_unref(char *name) {
  if (name && --name_of(name)->refs == 0) free(name_of(name));
}

void record_tables_drop_names(record_tables_t *t) {
  if (t->shared)
    for (size_t i = 0; i < t->n; i++) record_name_unref(t->shared[i]);
  free(t->shared);
  t->shared = NULL;
}

char *record_dup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* Reads an integer member within [min, max]. Reals are refused: the schema
 * says integer, and a watcher sending 1.5 µs has a bug worth seeing. The
 * upper bounds keep the server's own arithmetic on these values in range
 * (RECORD_MAX_TIME_US and friends in record.h). */
int record_get_value(const json_t *v, const char *key, int required, int64_t min, int64_t max,
                     int64_t *out, const char *where, char *err, size_t errlen) {
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

int record_get_int(const json_t *obj, const char *key, int required, int64_t min, int64_t max,
                   int64_t *out, const char *where, char *err, size_t errlen) {
  return record_get_value(json_object_get(obj, key), key, required, min, max, out, where, err, errlen);
}

int record_check_string(const json_t *v, const char *where, const char *key, size_t maxchars,
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

/* A record's fields; protocol 3 sends the first 11 as an array in this
 * order (F_BLOCKS last), then an index into the reply's interactions. */
enum { F_SEQ, F_FRAME, F_AT, F_VSYNC, F_BUILD, F_RASTER, F_OVERHEAD, F_SPAN, F_LAYER, F_PICTURE,
       F_BLOCKS, F_POSITIONAL };
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
    if (record_get_int(b, "micros", 1, 0, RECORD_MAX_AMOUNT, &rb->micros, path, err, errlen) < 0 ||
        record_get_int(b, "selfMicros", 1, 0, RECORD_MAX_AMOUNT, &rb->self_micros, path, err, errlen) <
            0 ||
        record_get_int(b, "count", 1, 1, RECORD_MAX_AMOUNT, &rb->count, path, err, errlen) < 0)
      return -1;
    if (rb->self_micros > rb->micros)
      return errbuf_fail(err, errlen, "%s.selfMicros: larger than micros", path);
    if (!(rb->name = record_name_new(name))) return errbuf_fail(err, errlen, "%s: out of memory", path);
    f->nblocks++;
  }
  return 0;
}


/* One [nameIndex, micros, selfMicros, count] quadruple, the i-th of the
 * record's blocks, checked and appended to f->blocks (room made by the
 * caller). Both readers of protocols 2 and 3 share it. */
static const char *const quad_what[4] = {"name index", "micros", "selfMicros", "count"};

static int quad_range(const int64_t v[4], int k, size_t i, const char *where, char *err,
                      size_t errlen) {
  static const int64_t min[4] = {0, 0, 0, 1};
  if (v[k] < min[k] || v[k] > RECORD_MAX_AMOUNT)
    return errbuf_fail(err, errlen, "%s.blocks[%zu]: %s must be %lld-%lld, got %lld", where, i,
                       quad_what[k], (long long)min[k], (long long)RECORD_MAX_AMOUNT, (long long)v[k]);
  return 0;
}

static int quad_put(frame_t *f, record_tables_t *t, size_t i, const int64_t v[4], const char *where,
                    char *err, size_t errlen) {
  for (int k = 0; k < 4; k++)
    if (quad_range(v, k, i, where, err, errlen) < 0) return -1;
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
  char **shared = &t->shared[v[0]];
  if (!*shared && !(*shared = record_name_new(t->names[v[0]])))
    return errbuf_fail(err, errlen, "%s.blocks[%zu]: out of memory", where, i);
  rb->name = record_name_ref(*shared);
  f->nblocks++;
  return 0;
}

/* Protocol 2: blocks as a flat array of [nameIndex, micros, selfMicros,
 * count] quadruples, names from the reply's table. The same checks as the
 * object form, and the result is the same record_block_t list. */
static int parse_blocks_v2(frame_t *f, const json_t *blocks, record_tables_t *t, const char *where,
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
    for (int k = 0; k < 4; k++) {
      json_t *x = json_array_get(blocks, i * 4 + (size_t)k);
      if (!json_is_integer(x))
        return errbuf_fail(err, errlen, "%s.blocks[%zu]: %s must be an integer", where, i,
                           quad_what[k]);
      v[k] = json_integer_value(x);
      if (quad_range(v, k, i, where, err, errlen) < 0) return -1;
    }
    if (quad_put(f, t, i, v, where, err, errlen) < 0) return -1;
  }
  return 0;
}

#define T_ RECORD_MAX_TIME_US
#define A_ RECORD_MAX_AMOUNT
#define C_ RECORD_MAX_COUNTER
/* Each integer field's rule, in record_keys order (the cache counts are
 * optional in protocols 1 and 2: older watchers omit them). */
static const struct {
  int required;
  int64_t min, max;
} field_rule[F_BLOCKS] = {{1, 1, C_},  {1, -1, C_}, {1, -T_, T_}, {1, -T_, T_}, {1, 0, A_},
                          {1, 0, A_},  {1, 0, A_},  {1, 0, A_},   {0, 0, A_},   {0, 0, A_}};
#undef T_
#undef A_
#undef C_

/* The record's integer fields, in record_keys order. */
static void frame_fields(frame_t *f, int64_t *dst[F_BLOCKS]) {
  int64_t *const all[F_BLOCKS] = {&f->seq,           &f->frame_number,      &f->at_us,
                                  &f->vsync_start_us, &f->build_us,          &f->raster_us,
                                  &f->vsync_overhead_us, &f->total_span_us, &f->layer_cache_count,
                                  &f->picture_cache_count};
  memcpy(dst, all, sizeof all);
}

/* The interaction of a protocol-3 record: its 12th element, an index
 * into the reply's interactions table (pairs checked when it was read). */
static int pair_at(const json_t *pairs, int64_t at, const char *wh, json_t **iid, json_t **lby,
                   char *err, size_t errlen) {
  size_t n = json_array_size(pairs); /* 0 when absent */
  if (at < 0 || (uint64_t)at >= n)
    return errbuf_fail(err, errlen, "%s[%d]: must index interactions (%zu pairs)", wh,
                       F_POSITIONAL, n);
  json_t *pair = json_array_get(pairs, (size_t)at);
  *iid = json_array_get(pair, 0);
  *lby = json_array_get(pair, 1);
  return 0;
}

static int pair_get(const json_t *pairs, const json_t *v, const char *wh, json_t **iid,
                    json_t **lby, char *err, size_t errlen) {
  return pair_at(pairs, json_is_integer(v) ? json_integer_value(v) : -1, wh, iid, lby, err, errlen);
}

/* One record of any form: names is NULL for protocol 1 (blocks an object),
 * the reply's tables for protocols 2 and 3 (blocks an array); in protocol 3
 * (names->positional) the record is an array of F_POSITIONAL fields, then
 * maybe an index into the interactions. */
int record_frame_parse_in(frame_t *out, const json_t *rec, const char *where, record_tables_t *names,
                       char *err, size_t errlen) {
  frame_t f;
  memset(&f, 0, sizeof f);
  memset(out, 0, sizeof *out);
  if (!where) where = "";
  const char *wh = *where ? where : "record";
  const json_t *field[F_POSITIONAL];
  json_t *iid = NULL, *lby = NULL;
  int positional = names && names->positional;
  if (positional) {
    size_t n = json_array_size(rec);
    if (!json_is_array(rec) || n < F_POSITIONAL || n > F_POSITIONAL + 1)
      return errbuf_fail(err, errlen, "%s: must be an array of %d or %d values", wh, F_POSITIONAL,
                         F_POSITIONAL + 1);
    for (int k = 0; k < F_POSITIONAL; k++) field[k] = json_array_get(rec, (size_t)k);
    if (n > F_POSITIONAL &&
        pair_get(names->pairs, json_array_get(rec, F_POSITIONAL), wh, &iid, &lby, err, errlen) < 0)
      return -1;
  } else {
    if (!json_is_object(rec)) return errbuf_fail(err, errlen, "%s: must be an object", wh);
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)rec, key, v) {
      int known = 0;
      for (const char *const *k = record_keys; *k; k++)
        if (!strcmp(*k, key)) known = 1;
      if (!known) return errbuf_fail(err, errlen, "%s.%.60s: unknown field", wh, key);
    }
    for (int k = 0; k < F_POSITIONAL; k++) field[k] = json_object_get(rec, record_keys[k]);
    iid = json_object_get(rec, "interactionId");
    lby = json_object_get(rec, "linkedBy");
    if (iid && !lby)
      return errbuf_fail(err, errlen, "%s.linkedBy: missing (interactionId is set)", wh);
    if (lby && !iid)
      return errbuf_fail(err, errlen, "%s.interactionId: missing (linkedBy is set)", wh);
    if (iid && (record_check_string(iid, wh, "interactionId", RECORD_MAX_INTERACTION, err, errlen) < 0 ||
                record_check_string(lby, wh, "linkedBy", RECORD_MAX_LINKED_BY, err, errlen) < 0))
      return -1;
  }
  f.layer_cache_count = f.picture_cache_count = -1;
  int64_t *dst[F_BLOCKS];
  frame_fields(&f, dst);
  for (int k = 0; k < F_BLOCKS; k++)
    if (record_get_value(field[k], record_keys[k], field_rule[k].required || positional, field_rule[k].min,
                  field_rule[k].max, dst[k], wh, err, errlen) < 0)
      return -1;
  const json_t *blocks = field[F_BLOCKS];
  if (blocks && (names ? parse_blocks_v2(&f, blocks, names, wh, err, errlen)
                       : parse_blocks(&f, blocks, wh, err, errlen)) < 0)
    goto fail_blocks;
  if (iid) {
    f.interaction_id = record_dup(json_string_value(iid));
    f.linked_by = record_dup(json_string_value(lby));
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

int record_seq_check(const record_reply_t *r, size_t i, const char *where, char *err,
                     size_t errlen) {
  int64_t seq = r->records[i].seq;
  if (i > 0 && seq <= r->records[i - 1].seq)
    return errbuf_fail(err, errlen, "%s.seq: %lld does not increase (previous %lld)", where,
                       (long long)seq, (long long)r->records[i - 1].seq);
  /* firstSeq is the oldest record the watcher still holds: a record older
   * than it would make a second look at the same reply count losses. */
  if (seq < r->first_seq)
    return errbuf_fail(err, errlen, "%s.seq: %lld is before the reply's firstSeq %lld", where,
                       (long long)seq, (long long)r->first_seq);
  if (seq > r->last_seq)
    return errbuf_fail(err, errlen, "%s.seq: %lld is beyond the reply's lastSeq %lld", where,
                       (long long)seq, (long long)r->last_seq);
  return 0;
}

/* ---- protocol 3 read from its text ------------------------------------
 * The records of a protocol-3 reply hold nothing but integers and arrays:
 * read straight from the bytes, with the checks above (field_rule, quad_put,
 * pair_at), they need no JSON tree built and freed around them. Anything
 * this reader does not expect (a string, a real, an error of any kind)
 * makes it give up; the caller then parses the text with jansson and runs
 * the tree reader, which says precisely what is wrong. */

typedef struct {
  const char *p, *e;
} text_t;

static void skip_ws(text_t *x) {
  while (x->p < x->e && (*x->p == ' ' || *x->p == '\n' || *x->p == '\r' || *x->p == '\t')) x->p++;
}

static int take(text_t *x, char c) {
  skip_ws(x);
  if (x->p == x->e || *x->p != c) return 0;
  x->p++;
  return 1;
}

/* A JSON integer as jansson reads one: -?(0|[1-9][0-9]*), no fraction, no
 * exponent; up to 18 digits (longer ones are beyond every bound anyway). */
static int take_int(text_t *x, int64_t *out) {
  skip_ws(x);
  const char *q = x->p, *e = x->e;
  int neg = q < e && *q == '-';
  q += neg;
  const char *d = q, *lim = e - q > 18 ? q + 18 : e;
  int64_t v = 0;
  for (; q < lim && (unsigned)(*q - '0') < 10; q++) v = v * 10 + (*q - '0');
  if (q == d || (*d == '0' && q - d > 1)) return 0; /* no digit, or a leading zero */
  if (q < e && ((unsigned)(*q - '0') < 10 || *q == '.' || *q == 'e' || *q == 'E')) return 0;
  *out = neg ? -v : v;
  x->p = q;
  return 1;
}

static int frame_from_text(frame_t *out, text_t *x, record_tables_t *t) {
  char err[RECORD_ERR_LEN];
  frame_t f;
  memset(&f, 0, sizeof f);
  int64_t *dst[F_BLOCKS];
  frame_fields(&f, dst);
  if (!take(x, '[')) return -1;
  for (int k = 0; k < F_BLOCKS; k++)
    if (!take_int(x, dst[k]) || !take(x, ',') || *dst[k] < field_rule[k].min ||
        *dst[k] > field_rule[k].max)
      return -1;
  if (!take(x, '[')) return -1;
  if (!take(x, ']')) {
    size_t cap = 0;
    t->mark++;
    do {
      int64_t q[4];
      for (int k = 0; k < 4; k++)
        if ((k && !take(x, ',')) || !take_int(x, &q[k])) goto fail;
      if (f.nblocks == RECORD_MAX_BLOCKS) goto fail;
      if (f.nblocks == cap) {
        cap = cap ? cap * 2 : 32;
        record_block_t *nb = realloc(f.blocks, cap * sizeof *nb);
        if (!nb) goto fail;
        f.blocks = nb;
      }
      if (quad_put(&f, t, f.nblocks, q, "", err, sizeof err) < 0) goto fail;
    } while (take(x, ','));
    if (!take(x, ']')) goto fail;
  }
  if (take(x, ',')) {
    int64_t at;
    json_t *iid, *lby;
    if (!take_int(x, &at) || pair_at(t->pairs, at, "", &iid, &lby, err, sizeof err) < 0) goto fail;
    f.interaction_id = record_dup(json_string_value(iid));
    f.linked_by = record_dup(json_string_value(lby));
    if (!f.interaction_id || !f.linked_by) goto fail;
  }
  if (!take(x, ']')) goto fail;
  *out = f;
  return 0;
fail:
  record_frame_close(&f);
  return -1;
}

int record_frames_from_text(record_reply_t *r, const char *p, size_t n, record_tables_t *t) {
  text_t x = {p, p + n};
  size_t cap = 0;
  if (!take(&x, '[')) return -1;
  if (!take(&x, ']')) {
    do {
      if (r->nrecords == RECORD_MAX_RECORDS) goto fail;
      if (r->nrecords == cap) {
        cap = cap ? cap * 2 : 64;
        frame_t *nr = realloc(r->records, cap * sizeof *nr);
        if (!nr) goto fail;
        r->records = nr;
      }
      char err[RECORD_ERR_LEN];
      if (frame_from_text(&r->records[r->nrecords], &x, t) < 0) goto fail;
      r->nrecords++;
      if (record_seq_check(r, r->nrecords - 1, "", err, sizeof err) < 0) goto fail;
    } while (take(&x, ','));
    if (!take(&x, ']')) goto fail;
  }
  skip_ws(&x);
  if (x.p != x.e) goto fail; /* nothing after the array */
  r->has_records = 1;
  return 0;
fail:
  for (size_t i = 0; i < r->nrecords; i++) record_frame_close(&r->records[i]);
  free(r->records);
  r->records = NULL;
  r->nrecords = 0;
  return -1;
}

int record_frame_parse(frame_t *out, const json_t *rec, const char *where, char *err,
                       size_t errlen) {
  return record_frame_parse_in(out, rec, where, NULL, err, errlen);
}

void record_frame_close(frame_t *f) {
  for (size_t i = 0; i < f->nblocks; i++) record_name_unref(f->blocks[i].name);
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
  if (src->interaction_id && (!(dst->interaction_id = record_dup(src->interaction_id)) ||
                              !(dst->linked_by = record_dup(src->linked_by))))
    goto fail;
  if (src->nblocks) {
    if (!(dst->blocks = calloc(src->nblocks, sizeof *dst->blocks))) goto fail;
    for (size_t i = 0; i < src->nblocks; i++) {
      dst->blocks[i] = src->blocks[i];
      record_name_ref(dst->blocks[i].name);
    }
    dst->nblocks = src->nblocks;
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
