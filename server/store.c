#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_len.h"

struct store {
  summary_t *summary;
  summary_clock_t clock;
  char run_id[RECORD_MAX_RUN_ID + 1]; /* "" before the first reply */
  int64_t last_seen;                  /* last seq taken of run_id */
  int last_known;                     /* last_seen is meaningful for loss counting */
  uint64_t seen, lost, restarts;
  uint64_t number_gaps;   /* frame numbers skipped between frames with adjacent seqs */
  int64_t last_number;    /* frameNumber of the last frame taken of run_id (-1: none) */
  int64_t last_taken;     /* ... and its seq */
  int restart_pending;
  int run_new;     /* run_id began while the store was fed (a restart observed) */
  int include_startup; /* start-up frames judged as any other (store_set_include_startup) */
  int tracking[3]; /* the profile switches while it was fed (-1 unknown): judges findings */
  frame_t *recent; /* ring of cap slots (grown up to STORE_WINDOW): oldest at head */
  size_t cap, head, count;
};

store_t *store_new_plain(void) {
  store_t *st = calloc(1, sizeof *st);
  if (!st) return NULL;
  summary_clock_init(&st->clock);
  st->tracking[0] = st->tracking[1] = st->tracking[2] = -1;
  return st;
}

store_t *store_new(int64_t budget_us) {
  store_t *st = store_new_plain();
  if (st && !(st->summary = summary_new(budget_us, 1))) {
    free(st);
    return NULL;
  }
  return st;
}

void store_set_include_startup(store_t *st, int include) { st->include_startup = include != 0; }

void store_set_tracking(store_t *st, int widgets, int layouts, int paints) {
  st->tracking[0] = widgets;
  st->tracking[1] = layouts;
  st->tracking[2] = paints;
  if (st->summary) summary_set_tracking(st->summary, widgets, layouts, paints);
}

void store_free(store_t *st) {
  if (!st) return;
  summary_free(st->summary);
  for (size_t i = 0; i < st->count; i++)
    record_frame_close(&st->recent[(st->head + i) % st->cap]);
  free(st->recent);
  free(st);
}

/* The ring starts small (a read outside sessions keeps a handful of frames)
 * and doubles up to STORE_WINDOW; growing unrolls it so head is 0. */
static int ring_grow(store_t *st) {
  size_t cap = st->cap ? st->cap * 2 : 64;
  if (cap > STORE_WINDOW) cap = STORE_WINDOW;
  frame_t *ring = malloc(cap * sizeof *ring);
  if (!ring) return -1;
  for (size_t i = 0; i < st->count; i++) ring[i] = st->recent[(st->head + i) % st->cap];
  free(st->recent);
  st->recent = ring;
  st->cap = cap;
  st->head = 0;
  return 0;
}

static int keep_recent(store_t *st, const frame_t *f) {
  if (st->count == st->cap && st->cap < STORE_WINDOW && ring_grow(st) < 0) return -1;
  frame_t copy;
  if (record_frame_copy(&copy, f) < 0) return -1;
  if (st->count == st->cap) {
    record_frame_close(&st->recent[st->head]);
    st->recent[st->head] = copy;
    st->head = (st->head + 1) % st->cap;
  } else {
    st->recent[(st->head + st->count++) % st->cap] = copy;
  }
  return 0;
}

int store_is_startup(const frame_t *f, int frame_events, int run_new) {
  (void)frame_events;
  /* The engine numbers frames from 1 per process (flutter/engine
   * flow/frame_timings.cc, frame_number_gen_ = {1}). */
  if (f->frame_number == 1) return 1;
  if (f->seq != 1) return 0;
  /* Both sources number from 1 per run (the watcher from its install, frame
   * events per isolate): the first frame of a run is the app starting when
   * the run replaced another under our eyes (a hot restart), or when the
   * engine had drawn hardly anything before it (the warm-up frame is among
   * its first recorders: frame 2 in DevTools' Flutter 3.20 iOS recording). */
  return run_new || (f->frame_number > 0 && f->frame_number <= STORE_STARTUP_NUMBER_MAX);
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
      st->run_new = 1;
      res->restarted = 1;
      st->last_known = 1;
    } else {
      st->last_known = 0; /* the first look: older frames predate the session */
    }
    snprintf(st->run_id, sizeof st->run_id, "%s", r->run_id);
    st->last_seen = 0;
    st->last_number = -1;
  }
  if (st->last_known && r->last_seq >= r->first_seq && r->first_seq > st->last_seen + 1) {
    res->lost = (uint64_t)(r->first_seq - st->last_seen - 1);
    st->lost += res->lost;
    st->last_seen = r->first_seq - 1;
  }
  for (size_t i = 0; i < r->nrecords; i++) {
    frame_t g = r->records[i], *f = &g; /* a shallow copy: only `startup` is ours to set */
    if (f->seq <= st->last_seen) {
      res->duplicates++;
      continue;
    }
    f->startup = !st->include_startup && store_is_startup(f, r->frame_events, st->run_new);
    if ((st->summary && summary_add_frame(st->summary, f) < 0) || keep_recent(st, f) < 0) return -1;
    /* Adjacent seqs with a jump in frameNumber: frames the engine numbered
     * but never reported (begun and not drawn, or an event lost). */
    if (st->last_number >= 0 && f->seq == st->last_taken + 1 && f->frame_number > st->last_number + 1)
      st->number_gaps += (uint64_t)(f->frame_number - st->last_number - 1);
    st->last_number = f->frame_number;
    st->last_taken = f->seq;
    summary_clock_add_frame(&st->clock, f->at_us, f->vsync_start_us,
                            f->vsync_overhead_us + f->build_us + f->raster_us);
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
uint64_t store_number_gaps(const store_t *st) { return st->number_gaps; }

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
  if (!st->summary) return NULL;
  return interaction_id ? summary_interaction(st->summary, interaction_id) : st->summary;
}

const summary_clock_t *store_clock(const store_t *st) {
  return &st->clock;
}

size_t store_recent_count(const store_t *st) {
  return st->count;
}

const frame_t *store_recent_at(const store_t *st, size_t i) {
  return i < st->count ? &st->recent[(st->head + i) % st->cap] : NULL;
}

uint64_t store_first_kept(const store_t *st) {
  return st->seen - st->count;
}

const frame_t *store_at(const store_t *st, uint64_t pos) {
  if (pos >= st->seen || pos < st->seen - st->count) return NULL;
  return store_recent_at(st, (size_t)(pos - (st->seen - st->count)));
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
    size_t n = json_compact_len(j) + (json_array_size(a) ? 1 : 0);
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

uint64_t store_range_count(const store_t *st, uint64_t from, uint64_t to,
                           const char *interaction_id) {
  uint64_t n = 0, first = store_first_kept(st);
  if (from < first) from = first;
  for (uint64_t p = from; p < to && p < st->seen; p++)
    if (matches(store_at(st, p), interaction_id)) n++;
  return n;
}

int store_range_take(const store_t *st, const store_range_t *q, store_take_t *out) {
  memset(out, 0, sizeof *out);
  uint64_t first = store_first_kept(st), to = q->to < st->seen ? q->to : st->seen;
  uint64_t from = q->from;
  if (from < first) {
    out->evicted = first - from;
    from = first;
  }
  out->next = from > to ? q->from : from;
  out->available = store_range_count(st, from, to, q->interaction_id);
  if (!(out->summary = summary_new(q->budget_us, q->interaction_id == NULL))) return -1;
  summary_set_tracking(out->summary, st->tracking[0], st->tracking[1], st->tracking[2]);
  if (q->list && !(out->frames = json_array())) goto oom;
  size_t used = 2; /* "[]" */
  for (uint64_t p = from; p < to; p++) {
    const frame_t *f = store_at(st, p);
    if (!matches(f, q->interaction_id)) {
      out->next = p + 1;
      continue;
    }
    if (q->list) {
      if (out->listed == q->limit) break;
      json_t *j = record_frame_to_json(f, q->with_blocks);
      if (!j) goto oom;
      size_t n = json_compact_len(j) + (out->listed ? 1 : 0);
      if (q->max_bytes && used + n > q->max_bytes && out->listed) {
        json_decref(j);
        break;
      }
      used += n;
      if (json_array_append_new(out->frames, j) != 0) goto oom;
      out->listed++;
    }
    if (summary_add_frame(out->summary, f) < 0) goto oom;
    out->taken++;
    out->next = p + 1;
  }
  return 0;

oom: /* a part-taken range must not pass for a whole one */
  store_take_close(out);
  return -1;
}

void store_take_close(store_take_t *t) {
  summary_free(t->summary);
  json_decref(t->frames);
  memset(t, 0, sizeof *t);
}

void store_drop_blocks(store_t *st) {
  for (size_t i = 0; i < st->count; i++) {
    frame_t *f = &st->recent[(st->head + i) % st->cap];
    for (size_t b = 0; b < f->nblocks; b++) record_name_unref(f->blocks[b].name);
    free(f->blocks);
    f->blocks = NULL;
    f->nblocks = 0;
  }
}
