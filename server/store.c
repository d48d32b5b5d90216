#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct store {
  summary_t *summary;
  summary_clock_t clock;
  char run_id[RECORD_MAX_RUN_ID + 1]; /* "" before the first reply */
  int64_t last_seen;                  /* last seq taken of run_id */
  int last_known;                     /* last_seen is meaningful for loss counting */
  uint64_t seen, lost, restarts;
  int restart_pending;
  frame_t recent[STORE_RECENT]; /* ring: oldest at head */
  size_t head, count;
};

store_t *store_new(int64_t budget_us) {
  store_t *st = calloc(1, sizeof *st);
  if (!st) return NULL;
  if (!(st->summary = summary_new(budget_us, 1))) {
    free(st);
    return NULL;
  }
  summary_clock_init(&st->clock);
  return st;
}

void store_free(store_t *st) {
  if (!st) return;
  summary_free(st->summary);
  for (size_t i = 0; i < st->count; i++)
    record_frame_close(&st->recent[(st->head + i) % STORE_RECENT]);
  free(st);
}

static int keep_recent(store_t *st, const frame_t *f) {
  frame_t copy;
  if (record_frame_copy(&copy, f) < 0) return -1;
  if (st->count == STORE_RECENT) {
    record_frame_close(&st->recent[st->head]);
    st->recent[st->head] = copy;
    st->head = (st->head + 1) % STORE_RECENT;
  } else {
    st->recent[(st->head + st->count++) % STORE_RECENT] = copy;
  }
  return 0;
}

int store_add_reply(store_t *st, const record_reply_t *r, store_add_result_t *res) {
  store_add_result_t local;
  if (!res) res = &local;
  memset(res, 0, sizeof *res);
  if (strcmp(st->run_id, r->run_id)) {
    if (st->run_id[0]) {
      /* A new run during the store's life began after our previous look, and
       * its seq starts at 1: everything before firstSeq of it is ours to miss. */
      st->restarts++;
      st->restart_pending = 1;
      res->restarted = 1;
      st->last_known = 1;
    } else {
      st->last_known = 0; /* the first look: older frames predate the session */
    }
    snprintf(st->run_id, sizeof st->run_id, "%s", r->run_id);
    st->last_seen = 0;
  }
  if (st->last_known && r->last_seq >= r->first_seq && r->first_seq > st->last_seen + 1) {
    res->lost = (uint64_t)(r->first_seq - st->last_seen - 1);
    st->lost += res->lost;
    st->last_seen = r->first_seq - 1;
  }
  for (size_t i = 0; i < r->nrecords; i++) {
    const frame_t *f = &r->records[i];
    if (f->seq <= st->last_seen) {
      res->duplicates++;
      continue;
    }
    if (summary_add_frame(st->summary, f) < 0 || keep_recent(st, f) < 0) return -1;
    summary_clock_add(&st->clock, f->at_us, f->vsync_start_us);
    st->last_seen = f->seq;
    st->last_known = 1;
    st->seen++;
    res->added++;
  }
  if (!st->last_known) {
    /* A first reply without records still fixes where the session starts:
     * whatever the watcher numbers after its lastSeq is ours. */
    st->last_seen = r->last_seq;
    st->last_known = 1;
  }
  return 0;
}

uint64_t store_frames_seen(const store_t *st) {
  return st->seen;
}
uint64_t store_frames_lost(const store_t *st) {
  return st->lost;
}
uint64_t store_restarts(const store_t *st) {
  return st->restarts;
}
const char *store_run_id(const store_t *st) {
  return st->run_id[0] ? st->run_id : NULL;
}
int64_t store_last_seq(const store_t *st) {
  return st->last_seen;
}

int store_take_restarted(store_t *st) {
  int r = st->restart_pending;
  st->restart_pending = 0;
  return r;
}

const summary_t *store_summary(const store_t *st, const char *interaction_id) {
  return interaction_id ? summary_interaction(st->summary, interaction_id) : st->summary;
}

const summary_clock_t *store_clock(const store_t *st) {
  return &st->clock;
}

size_t store_recent_count(const store_t *st) {
  return st->count;
}

const frame_t *store_recent_at(const store_t *st, size_t i) {
  return i < st->count ? &st->recent[(st->head + i) % STORE_RECENT] : NULL;
}

static int matches(const frame_t *f, const char *interaction_id) {
  return !interaction_id || (f->interaction_id && !strcmp(f->interaction_id, interaction_id));
}

json_t *store_frames_to_json(const store_t *st, const char *interaction_id, size_t limit,
                             int with_blocks, size_t max_bytes, size_t *omitted) {
  json_t *a = json_array();
  size_t skipped = 0, used = 2; /* "[]" */
  if (!a) return NULL;
  /* Walk back from the newest, so the size cap drops the oldest. */
  for (size_t i = st->count, picked = 0; i > 0 && picked < limit;) {
    const frame_t *f = store_recent_at(st, --i);
    if (!matches(f, interaction_id)) continue;
    picked++;
    json_t *j = record_frame_to_json(f, with_blocks);
    if (!j) goto oom;
    size_t n = json_dumpb(j, NULL, 0, JSON_COMPACT) + (json_array_size(a) ? 1 : 0);
    if (max_bytes && (skipped || used + n > max_bytes)) {
      json_decref(j);
      skipped++;
      continue;
    }
    used += n;
    if (json_array_insert_new(a, 0, j) != 0) goto oom;
  }
  if (omitted) *omitted = skipped;
  return a;

oom: /* a listing with a frame missing must not pass for a whole one */
  json_decref(a);
  return NULL;
}
