/* The C model of FramePerfWatcher: block attribution, the frame-number join,
 * the record ring, interactions and the ext.telescope.frames handler. It is
 * the twin of watcher/flutter/lib/src/core/ (same algorithm, same rules) and
 * both are checked against tests/vectors/watcher/. The rules that are
 * decisions rather than facts are written down in tests/vectors/watcher/README.md. */
#include "model.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WM_DEFAULT_RING 4096
#define WM_DEFAULT_PENDING 256
#define WM_DEFAULT_PENDING_BLOCKS 65536
#define WM_DEFAULT_READ_CAP 500
#define WM_DEFAULT_VERSION "0.1.0"
#define WM_DEFAULT_REFRESH 60.0
#define WM_DEFAULT_BUILD_MODE "profile"
#define WM_DEFAULT_RING_BYTES (4u << 20)
#define WM_DEFAULT_READ_BYTES (256u << 10)
#define WM_DEFAULT_AUTO_OFF_US 30000000
#define WM_DEFAULT_MISSING_FRAMES 120
#define WM_DEFAULT_MISSING_US 2000000
#define WM_DRAIN_ERROR_MAX 256 /* characters kept of a drain error (the server takes 1024) */
#define WM_LIMIT_MAX 1000000 /* a larger read limit is a caller bug, not a wish */
#define WM_INTERACTION_MAX 128
#define WM_LINKED_BY_MAX 64

/* One frame's drain waiting for its FrameTiming. The frame keeps only what
 * the drain collected (events, raw); they are attributed when a timing
 * takes the entry, in the timings callback, outside any frame. */
typedef struct {
  int64_t frame_number; /* -1: unnumbered, joined by time */
  int64_t at_us;
  wm_event_t *events;   /* owned, names in the same allocation; NULL when none */
  size_t n_events;      /* blocks the drain returned (counted even when the copy failed) */
  json_t *blocks;       /* owned; set only when attributed in the frame (attribute_in_frame) */
  char *interaction_id; /* owned; NULL when no interaction was current */
  char *linked_by;      /* owned; set exactly when interaction_id is */
} pending_t;

struct wm {
  size_t ring_capacity;
  size_t pending_capacity;
  size_t pending_blocks_cap;
  int join_by_time;
  int attribute_in_frame;
  size_t read_limit_cap;
  char *watcher_version;
  double refresh_rate;
  const char *build_mode; /* one of the static names */
  size_t ring_bytes_cap;
  size_t read_bytes_cap;
  int64_t auto_off_us;
  uint64_t missing_frames;
  int64_t missing_us;

  char *run_id;
  uint64_t liveness;
  int collecting;
  char *lifecycle; /* NULL reports as null */
  int frames_enabled;
  char *interaction_id; /* current interaction, both or neither */
  char *linked_by;
  int probe;
  uint64_t starts, stops; /* start and stop calls taken */
  char *drain_error;      /* NULL while draining works */
  int auto_off;           /* collection went off because no call came */
  int64_t last_call_us;   /* now_us of the newest successful call */
  uint64_t untimed;       /* frames drawn since the last FrameTiming */
  int64_t untimed_from_us, last_frame_us;
  int foreign_collection; /* the binding sees collection on that it did not switch */
  int taken_over;         /* the current session's start took another tool's buffer */
  int collection_lost;    /* another tool switched collection off while this one collected */
  /* The vsyncStart of the last unnumbered timing that took a drain, and that
   * drain's at_us: each view's timing of a multi-view web frame repeats them. */
  int64_t taken_vsync_us, taken_at_us;

  /* Pending map, oldest first (park order). Small (256), so a linear scan
   * and memmove are cheaper to read than a hash and fast enough. */
  pending_t *pending;
  size_t n_pending;
  size_t n_pending_blocks; /* sum of n_events over the pending entries */
  uint64_t dropped;
  /* A read that continued a reply with more=true from its last seq: a
   * caller draining past one page (the model test's coverage). */
  int64_t more_at; /* last seq of the latest reply with more (-1: none) */
  uint64_t more_followed;
  int64_t max_reported; /* newest frame number a timing carried, -1: none */

  /* Record ring: records[(head + i) % cap] has seq first_seq + i. */
  json_t **ring;
  size_t *ring_cost; /* wm_record_cost of ring[i] */
  size_t ring_bytes; /* their sum */
  size_t ring_head;
  size_t ring_len;
  uint64_t next_seq;
};

static char *dup_or_null(const char *s) {
  return s ? strdup(s) : NULL;
}

static void pending_clear(pending_t *p) {
  free(p->events);
  json_decref(p->blocks);
  free(p->interaction_id);
  free(p->linked_by);
  memset(p, 0, sizeof *p);
}

static void pending_remove_at(wm_t *wm, size_t i) {
  wm->n_pending_blocks -= wm->pending[i].n_events;
  pending_clear(&wm->pending[i]);
  memmove(&wm->pending[i], &wm->pending[i + 1], (wm->n_pending - i - 1) * sizeof *wm->pending);
  wm->n_pending--;
}

static void state_reset(wm_t *wm) {
  while (wm->n_pending > 0) pending_remove_at(wm, wm->n_pending - 1);
  for (size_t i = 0; i < wm->ring_len; i++)
    json_decref(wm->ring[(wm->ring_head + i) % wm->ring_capacity]);
  wm->ring_head = 0;
  wm->ring_len = 0;
  wm->ring_bytes = 0;
  wm->next_seq = 1;
  wm->liveness = 0;
  wm->collecting = 0;
  free(wm->interaction_id);
  free(wm->linked_by);
  wm->interaction_id = NULL;
  wm->linked_by = NULL;
  wm->probe = 0;
  wm->dropped = 0;
  wm->max_reported = -1;
  wm->taken_vsync_us = wm->taken_at_us = -1;
  wm->more_at = -1; /* more_followed counts across runs */
  free(wm->drain_error);
  wm->drain_error = NULL;
  wm->auto_off = 0;
  wm->last_call_us = 0;
  wm->untimed = 0;
  wm->untimed_from_us = wm->last_frame_us = 0;
  wm->foreign_collection = 0;
  wm->taken_over = 0;
  wm->collection_lost = 0;
}

static const char *const build_modes[] = {"debug", "profile", "release", NULL};

wm_t *wm_new(const wm_config_t *cfg, const char *run_id) {
  wm_t *wm = calloc(1, sizeof *wm);
  if (!wm) return NULL;
  wm->ring_capacity = cfg && cfg->ring_capacity ? cfg->ring_capacity : WM_DEFAULT_RING;
  wm->pending_capacity = cfg && cfg->pending_capacity ? cfg->pending_capacity : WM_DEFAULT_PENDING;
  wm->pending_blocks_cap =
      cfg && cfg->pending_blocks ? cfg->pending_blocks : WM_DEFAULT_PENDING_BLOCKS;
  wm->join_by_time = cfg && cfg->join_by_time;
  wm->attribute_in_frame = cfg && cfg->attribute_in_frame;
  wm->read_limit_cap = cfg && cfg->read_limit_cap ? cfg->read_limit_cap : WM_DEFAULT_READ_CAP;
  wm->refresh_rate = cfg && cfg->refresh_rate > 0 ? cfg->refresh_rate : WM_DEFAULT_REFRESH;
  wm->build_mode = WM_DEFAULT_BUILD_MODE;
  for (const char *const *m = build_modes; cfg && cfg->build_mode && *m; m++)
    if (!strcmp(*m, cfg->build_mode)) wm->build_mode = *m;
  wm->ring_bytes_cap = cfg && cfg->ring_bytes ? cfg->ring_bytes : WM_DEFAULT_RING_BYTES;
  wm->read_bytes_cap = cfg && cfg->read_bytes_cap ? cfg->read_bytes_cap : WM_DEFAULT_READ_BYTES;
  wm->auto_off_us = cfg && cfg->auto_off_us > 0 ? cfg->auto_off_us : WM_DEFAULT_AUTO_OFF_US;
  wm->missing_frames = cfg && cfg->timings_missing_frames ? cfg->timings_missing_frames
                                                          : WM_DEFAULT_MISSING_FRAMES;
  wm->missing_us =
      cfg && cfg->timings_missing_us > 0 ? cfg->timings_missing_us : WM_DEFAULT_MISSING_US;
  wm->watcher_version =
      strdup(cfg && cfg->watcher_version ? cfg->watcher_version : WM_DEFAULT_VERSION);
  wm->run_id = strdup(run_id ? run_id : "run-1");
  wm->lifecycle = strdup("resumed");
  wm->frames_enabled = 1;
  wm->pending = calloc(wm->pending_capacity, sizeof *wm->pending);
  wm->ring = calloc(wm->ring_capacity, sizeof *wm->ring);
  wm->ring_cost = calloc(wm->ring_capacity, sizeof *wm->ring_cost);
  if (!wm->watcher_version || !wm->run_id || !wm->lifecycle || !wm->pending || !wm->ring ||
      !wm->ring_cost) {
    wm_free(wm);
    return NULL;
  }
  state_reset(wm);
  return wm;
}

void wm_free(wm_t *wm) {
  if (!wm) return;
  if (wm->pending && wm->ring) state_reset(wm);
  free(wm->pending);
  free(wm->ring);
  free(wm->ring_cost);
  free(wm->watcher_version);
  free(wm->run_id);
  free(wm->lifecycle);
  free(wm);
}

void wm_restart(wm_t *wm, const char *run_id) {
  state_reset(wm);
  char *id = strdup(run_id ? run_id : "run-restarted");
  if (id) { /* on OOM the old id stays: still a valid reply */
    free(wm->run_id);
    wm->run_id = id;
  }
}

/* ---- BlockAttribution ------------------------------------------------- */

typedef struct {
  int64_t start, end;
} span_t;

/* Adds one block to the per-name aggregate in map. */
static void blocks_add(json_t *map, const char *name, int64_t micros, int64_t self) {
  json_t *agg = json_object_get(map, name);
  if (!agg) {
    json_object_set_new(map, name,
                        json_pack("{s:I,s:I,s:I}", "micros", (json_int_t)micros, "selfMicros",
                                  (json_int_t)self, "count", (json_int_t)1));
    return;
  }
  json_t *m = json_object_get(agg, "micros");
  json_t *s = json_object_get(agg, "selfMicros");
  json_t *c = json_object_get(agg, "count");
  json_integer_set(m, json_integer_value(m) + micros);
  json_integer_set(s, json_integer_value(s) + self);
  json_integer_set(c, json_integer_value(c) + 1);
}

/* Events arrive in finish order, so every direct child of a block finished
 * before it and sits on top of the stack of finished subtrees. A stack entry
 * is a child when it lies within the block: start >= block start and end <=
 * block end. Ties (equal timestamps) count as nesting, so the later-finishing
 * block is the parent; that is the only reading finish order allows for two
 * identical intervals. Inclusive micros of same-name nesting are summed as
 * DevTools does (LAYOUT (root) ⊃ LAYOUT counts both). */
static json_t *blocks_attribute(const wm_event_t *events, size_t n) {
  json_t *map = json_object();
  if (!map || n == 0) return map;
  span_t *stack = malloc(n * sizeof *stack);
  if (!stack) return map; /* OOM: no attribution for this frame, never a crash */
  size_t top = 0;
  for (size_t i = 0; i < n; i++) {
    int64_t dur = events[i].dur_us > 0 ? events[i].dur_us : 0;
    span_t me = {events[i].start_us, events[i].start_us + dur};
    int64_t children = 0;
    while (top > 0 && stack[top - 1].start >= me.start && stack[top - 1].end <= me.end) {
      children += stack[top - 1].end - stack[top - 1].start;
      top--;
    }
    int64_t self = dur - children > 0 ? dur - children : 0;
    blocks_add(map, events[i].name ? events[i].name : "", dur, self);
    stack[top++] = me;
  }
  free(stack);
  return map;
}

/* ---- FrameJoiner ------------------------------------------------------ */

static size_t pending_find(const wm_t *wm, int64_t frame_number) {
  for (size_t i = 0; i < wm->n_pending; i++)
    if (wm->pending[i].frame_number == frame_number) return i;
  return (size_t)-1;
}

static void interaction_set(wm_t *wm, const char *id, const char *linked_by);

/* A copy of n events, the names in the same allocation (one malloc, the
 * C stand-in for the TimedBlocks debugCollect() builds); NULL when out of
 * memory (that frame then gets no blocks, never a crash). */
static wm_event_t *events_copy(const wm_event_t *events, size_t n) {
  size_t names = 0;
  for (size_t i = 0; i < n; i++) names += strlen(events[i].name ? events[i].name : "") + 1;
  wm_event_t *copy = malloc(n * sizeof *copy + names);
  if (!copy) return NULL;
  char *at = (char *)(copy + n);
  for (size_t i = 0; i < n; i++) {
    const char *name = events[i].name ? events[i].name : "";
    size_t len = strlen(name) + 1;
    memcpy(at, name, len);
    copy[i] = (wm_event_t){at, events[i].start_us, events[i].dur_us};
    at += len;
  }
  return copy;
}

/* The block map of a pending entry (new reference; NULL when out of
 * memory): attributed now, out of the frame, unless the frame did it. A
 * copy that failed (events NULL) gives no blocks. */
static json_t *pending_blocks_take(pending_t *p) {
  json_t *blocks =
      p->blocks ? p->blocks : blocks_attribute(p->events, p->events ? p->n_events : 0);
  p->blocks = NULL;
  return blocks;
}

void wm_frame_drawn(wm_t *wm, int64_t frame_number, int64_t now_us, const wm_event_t *events,
                    size_t n_events) {
  wm->liveness++;
  if (wm->untimed++ == 0) wm->untimed_from_us = now_us;
  wm->last_frame_us = now_us;
  /* A server that exits without stop would leave collection on for the
   * isolate's life; one that is alive reads every 200 ms (SESSION_DRAIN_MS). */
  if (wm->collecting && now_us - wm->last_call_us >= wm->auto_off_us) {
    wm->collecting = 0;
    wm->auto_off = 1;
    interaction_set(wm, NULL, NULL); /* as stop: the session is over */
  }
  /* While collection is off FlutterTimeline records nothing, so whatever the
   * caller passes would not exist in the app: it is ignored. So is it once a
   * drain failed: the binding stopped draining. (A start that took another
   * tool's collection over emptied the buffer in its handler, so the next
   * drain is the frame's own.) */
  int draining = wm->collecting && !wm->drain_error;
  if (!draining) n_events = 0;
  /* On the web frame numbers say nothing (-1, a constant, or a warm-up's
   * stale one): every drain is joined by time. */
  if (wm->join_by_time || frame_number < 0) frame_number = -1;
  /* A number the engine already reported can never be matched again
   * (numbers only grow), and a number already parked is a warm-up frame
   * whose frameData is stale: the first parked map is the real frame's, so
   * it stays and the repeat is dropped. */
  if (frame_number >= 0 &&
      (frame_number <= wm->max_reported || pending_find(wm, frame_number) != (size_t)-1)) {
    wm->dropped++;
    return;
  }
  /* Bounded by entries and by the blocks they hold (the newest is kept,
   * however large): with trackWidgets a frame holds hundreds of blocks,
   * and without timings (timingsMissing) nothing would take them. */
  while (wm->n_pending > 0 && (wm->n_pending == wm->pending_capacity ||
                               wm->n_pending_blocks + n_events > wm->pending_blocks_cap)) {
    pending_remove_at(wm, 0);
    wm->dropped++;
  }
  pending_t *p = &wm->pending[wm->n_pending];
  memset(p, 0, sizeof *p);
  p->frame_number = frame_number;
  p->at_us = now_us;
  p->n_events = n_events;
  /* The frame does only the copy (in Dart not even that: the binding parks
   * the list debugCollect() returned); attribution waits for the timing. */
  if (wm->attribute_in_frame)
    p->blocks = blocks_attribute(events, n_events);
  else if (n_events > 0)
    p->events = events_copy(events, n_events);
  p->interaction_id = dup_or_null(wm->interaction_id);
  p->linked_by = dup_or_null(wm->linked_by);
  wm->n_pending++;
  wm->n_pending_blocks += n_events;
}

static int64_t nonneg(int64_t v) {
  return v > 0 ? v : 0;
}

/* Dart's String.length of a UTF-8 string: UTF-16 code units, two for a
 * code point beyond the BMP (a 4-byte sequence). */
static size_t utf16_length(const char *s) {
  size_t n = 0;
  /* NULL: a member that out of memory left unset (test_alloc_fail). */
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    if ((*p & 0xC0) != 0x80) n++;
    if ((*p & 0xF8) == 0xF0) n++;
  }
  return n;
}

size_t wm_record_cost(const json_t *record) {
  size_t cost = 160;
  const char *name;
  json_t *b;
  json_object_foreach((json_t *)json_object_get(record, "blocks"), name, b) {
    cost += 40 + utf16_length(name);
  }
  json_t *id = json_object_get(record, "interactionId");
  if (id)
    cost += 32 + utf16_length(json_string_value(id)) +
            utf16_length(json_string_value(json_object_get(record, "linkedBy")));
  return cost;
}

/* Appends record; the oldest records go while the ring is full by count or
 * the new one would take it over its byte budget (it always keeps the new
 * one, however large). */
static void ring_push(wm_t *wm, json_t *record) {
  size_t cost = wm_record_cost(record);
  while (wm->ring_len > 0 &&
         (wm->ring_len == wm->ring_capacity || wm->ring_bytes + cost > wm->ring_bytes_cap)) {
    json_decref(wm->ring[wm->ring_head]);
    wm->ring_bytes -= wm->ring_cost[wm->ring_head];
    wm->ring_head = (wm->ring_head + 1) % wm->ring_capacity;
    wm->ring_len--;
  }
  size_t at = (wm->ring_head + wm->ring_len) % wm->ring_capacity;
  wm->ring[at] = record;
  wm->ring_cost[at] = cost;
  wm->ring_bytes += cost;
  wm->ring_len++;
}

/* Writes the record of timing t, stealing the pending entry p (may be NULL:
 * no drain matched, so blocks are {} and atUs is the timing's buildFinish,
 * the engine's moment closest to where the drain would have run). */
static void record_write(wm_t *wm, const wm_timing_t *t, pending_t *p) {
  json_t *rec = json_object();
  if (!rec) return;
  json_object_set_new(rec, "seq", json_integer((json_int_t)wm->next_seq));
  json_object_set_new(rec, "frameNumber", json_integer(t->frame_number));
  json_object_set_new(rec, "atUs", json_integer(p ? p->at_us : t->build_finish_us));
  json_object_set_new(rec, "vsyncStartUs", json_integer(t->vsync_start_us));
  json_object_set_new(rec, "buildUs", json_integer(nonneg(t->build_finish_us - t->build_start_us)));
  json_object_set_new(rec, "rasterUs",
                      json_integer(nonneg(t->raster_finish_us - t->raster_start_us)));
  json_object_set_new(rec, "vsyncOverheadUs",
                      json_integer(nonneg(t->build_start_us - t->vsync_start_us)));
  json_object_set_new(rec, "totalSpanUs",
                      json_integer(nonneg(t->raster_finish_us - t->vsync_start_us)));
  json_object_set_new(rec, "layerCacheCount", json_integer(nonneg(t->layer_cache_count)));
  json_object_set_new(rec, "pictureCacheCount", json_integer(nonneg(t->picture_cache_count)));
  if (p) {
    json_t *blocks = pending_blocks_take(p);
    json_object_set_new(rec, "blocks", blocks ? blocks : json_object());
    if (p->interaction_id && p->linked_by) {
      json_object_set_new(rec, "interactionId", json_string(p->interaction_id));
      json_object_set_new(rec, "linkedBy", json_string(p->linked_by));
    }
  } else {
    json_object_set_new(rec, "blocks", json_object());
  }
  wm->next_seq++;
  ring_push(wm, rec);
}

/* The entry timing t takes, or (size_t)-1. next_vsync_us is the vsyncStart
 * of the next timing of the batch when it is later than t's, else -1.
 *
 * Unnumbered entries (web, or -1) are joined by time: the drain runs inside
 * its frame, after that frame's vsyncStart and before the next frame's, on
 * the same clock (performance.now() on the web; the engine's clock source is
 * the Dart timeline's on native). So an unnumbered entry older than t's
 * vsyncStart belongs to a frame that got no timing (a scene the web engine
 * dropped while another rasterized): it is dropped and counted, never handed
 * to a later frame. t then takes the oldest one left if it drained before
 * the next frame began; else t's own drain is missing and t gets none. */
#define WM_CLOCK_TOLERANCE_US 1000 /* one tick of Firefox's performance.now() */

static size_t pending_match(wm_t *wm, const wm_timing_t *t, int64_t next_vsync_us) {
  for (size_t i = 0; i < wm->n_pending;) {
    if (wm->pending[i].frame_number < 0 && wm->pending[i].at_us < t->vsync_start_us) {
      pending_remove_at(wm, i);
      wm->dropped++;
    } else {
      i++;
    }
  }
  if (t->frame_number >= 0) {
    size_t at = pending_find(wm, t->frame_number);
    if (at != (size_t)-1) return at;
  }
  /* Another view's timing of the frame whose drain was just taken (its views
   * render before the frame's one drain); a warm-up repeating the vsync
   * builds after that drain. A coarse clock (1 ms in Firefox) may stamp a
   * slow frame's drain with the next vsync: a tick of tolerance. */
  if (t->vsync_start_us == wm->taken_vsync_us && t->build_finish_us <= wm->taken_at_us)
    return (size_t)-1;
  for (size_t i = 0; i < wm->n_pending; i++) {
    if (wm->pending[i].frame_number >= 0) continue;
    if (next_vsync_us >= 0 && wm->pending[i].at_us >= next_vsync_us + WM_CLOCK_TOLERANCE_US)
      return (size_t)-1;
    wm->taken_vsync_us = t->vsync_start_us;
    wm->taken_at_us = wm->pending[i].at_us;
    return i;
  }
  return (size_t)-1;
}

void wm_timings(wm_t *wm, const wm_timing_t *timings, size_t n) {
  if (n > 0) wm->untimed = 0;
  for (size_t i = 0; i < n; i++) {
    const wm_timing_t *t = &timings[i];
    /* A web warm-up frame's timing repeats the previous frame's vsyncStart:
     * no bound between two timings of one vsync. */
    int64_t next_vsync = i + 1 < n && timings[i + 1].vsync_start_us > t->vsync_start_us
                             ? timings[i + 1].vsync_start_us
                             : -1;
    size_t at = pending_match(wm, t, next_vsync);
    if (at == (size_t)-1) {
      record_write(wm, t, NULL);
    } else {
      record_write(wm, t, &wm->pending[at]);
      pending_remove_at(wm, at);
    }
    if (t->frame_number > wm->max_reported) wm->max_reported = t->frame_number;
  }
  /* Frame numbers only grow, so a numbered entry at or below the newest
   * reported number will never be matched: it was a frame without a
   * FrameTiming. Unnumbered entries go by time (pending_match). */
  if (wm->max_reported < 0) return;
  for (size_t i = 0; i < wm->n_pending;) {
    if (wm->pending[i].frame_number >= 0 && wm->pending[i].frame_number <= wm->max_reported) {
      pending_remove_at(wm, i);
      wm->dropped++;
    } else {
      i++;
    }
  }
}

void wm_set_lifecycle(wm_t *wm, const char *lifecycle) {
  char *copy = dup_or_null(lifecycle);
  if (lifecycle && !copy) return;
  free(wm->lifecycle);
  wm->lifecycle = copy;
}

void wm_set_frames_enabled(wm_t *wm, int enabled) {
  wm->frames_enabled = enabled != 0;
}

void wm_set_foreign_collection(wm_t *wm, int on) {
  wm->foreign_collection = on != 0;
}

void wm_collection_switched_off(wm_t *wm) {
  if (wm->collecting) wm->collection_lost = 1;
  wm->collecting = 0;
  wm->foreign_collection = 0;
}

/* ---- ext.telescope.frames --------------------------------------------- */

static char *detail_new(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int len = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (len < 0) return NULL;
  char *s = malloc((size_t)len + 1);
  if (!s) return NULL;
  va_start(ap, fmt);
  vsnprintf(s, (size_t)len + 1, fmt, ap);
  va_end(ap);
  return s;
}

/* The value of param key as the VM would hand it to Dart: strings as they
 * are, integers, booleans and null through toString(). Returns NULL when
 * absent; *bad is set for values the VM would turn into Dart's Map/List
 * toString (never sent by telescope-mcp). buf holds converted numbers. */
static const char *param_get(json_t *params, const char *key, char *buf, size_t bufsz, int *bad) {
  json_t *v = params ? json_object_get(params, key) : NULL;
  if (!v) return NULL;
  switch (json_typeof(v)) {
    case JSON_STRING:
      return json_string_value(v);
    case JSON_INTEGER:
      snprintf(buf, bufsz, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
      return buf;
    case JSON_TRUE:
      return "true";
    case JSON_FALSE:
      return "false";
    case JSON_NULL:
      return "null";
    default:
      *bad = 1;
      return NULL;
  }
}

/* A decimal integer 0..INT64_MAX: digits only, no sign, no blanks. */
static int parse_decimal(const char *s, int64_t *out) {
  if (!s || !*s || strlen(s) > 19) return -1;
  for (const char *c = s; *c; c++)
    if (*c < '0' || *c > '9') return -1;
  errno = 0;
  long long v = strtoll(s, NULL, 10);
  if (errno) return -1;
  *out = v;
  return 0;
}

/* Length in code points, or -1 when s holds a control character (C0, DEL
 * or C1). jansson strings are valid UTF-8, so decoding can be brief. */
static long printable_length(const char *s) {
  long n = 0;
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    unsigned cp;
    int len;
    if (*p < 0x80) {
      cp = *p;
      len = 1;
    } else if ((*p & 0xE0) == 0xC0) {
      cp = *p & 0x1F;
      len = 2;
    } else if ((*p & 0xF0) == 0xE0) {
      cp = *p & 0x0F;
      len = 3;
    } else {
      cp = *p & 0x07;
      len = 4;
    }
    for (int k = 1; k < len; k++) {
      if ((p[k] & 0xC0) != 0x80) return -1;
      cp = (cp << 6) | (p[k] & 0x3F);
    }
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) return -1;
    p += len;
    n++;
  }
  return n;
}

static char *check_text(const char *key, const char *v, long max) {
  long n = printable_length(v);
  if (n < 1 || n > max) return detail_new("%s must be 1-%ld printable characters", key, max);
  return NULL;
}

/* Sets the current interaction; copies both. */
static void interaction_set(wm_t *wm, const char *id, const char *linked_by) {
  char *i = id ? strdup(id) : NULL;
  char *l = id ? strdup(linked_by) : NULL;
  if (id && (!i || !l)) {
    free(i);
    free(l);
    return;
  }
  free(wm->interaction_id);
  free(wm->linked_by);
  wm->interaction_id = i;
  wm->linked_by = l;
}

void wm_drain_failed(wm_t *wm, const char *error) {
  if (wm->drain_error) return;
  char buf[WM_DRAIN_ERROR_MAX * 4 + 1];
  const char *e = error && *error ? error : "drain failed";
  /* Keep at most WM_DRAIN_ERROR_MAX characters, cut before a lead byte, so
   * a character is never split (a lead byte is copied only with room for
   * the longest sequence after it). */
  size_t n = 0, chars = 0;
  for (; e[n]; n++) {
    int lead = ((unsigned char)e[n] & 0xC0) != 0x80;
    if (lead && (chars == WM_DRAIN_ERROR_MAX || n + 4 > sizeof buf - 1)) break;
    chars += lead;
    buf[n] = e[n];
  }
  buf[n] = '\0';
  /* Replies carry it as a JSON string: bytes that are not UTF-8 become '?'. */
  json_t *probe = json_string(buf);
  if (!probe)
    for (size_t i = 0; i < n; i++)
      if ((unsigned char)buf[i] >= 0x80) buf[i] = '?';
  json_decref(probe);
  wm->drain_error = strdup(buf);
}

static int timings_missing(const wm_t *wm) {
  return wm->untimed >= wm->missing_frames &&
         wm->last_frame_us - wm->untimed_from_us >= wm->missing_us;
}

static json_t *reply_base(const wm_t *wm, int64_t now_us, int protocol) {
  json_t *interaction =
      wm->interaction_id
          ? json_pack("{s:s,s:s}", "interactionId", wm->interaction_id, "linkedBy", wm->linked_by)
          : json_null();
  return json_pack(
      "{s:i,s:s,s:s,s:I,s:I,s:b,s:o,s:b,s:f,s:o,s:I,s:I,s:I,s:I,s:s,s:o,s:b,s:b,s:b}", "protocol",
      protocol, "watcherVersion",
      wm->watcher_version, "runId", wm->run_id, "livenessCounter", (json_int_t)wm->liveness,
      "nowUs", (json_int_t)now_us, "collecting", wm->collecting, "lifecycle",
      wm->lifecycle ? json_string(wm->lifecycle) : json_null(), "framesEnabled", wm->frames_enabled,
      "refreshRate", wm->refresh_rate, "interaction", interaction, "firstSeq",
      (json_int_t)wm_first_seq(wm), "lastSeq", (json_int_t)wm_last_seq(wm), "pending",
      (json_int_t)wm->n_pending, "droppedAttributions", (json_int_t)wm->dropped, "buildMode",
      wm->build_mode, "drainError", wm->drain_error ? json_string(wm->drain_error) : json_null(),
      "timingsMissing", timings_missing(wm), "collectionAutoOff", wm->auto_off,
      "collectionTakenOver", wm->taken_over);
}

/* The reply's fields that are sent only when true. */
static json_t *reply_new(wm_t *wm, int64_t now_us, int protocol) {
  json_t *r = reply_base(wm, now_us, protocol);
  if (r && wm->collection_lost && json_object_set_new(r, "collectionLost", json_true())) {
    json_decref(r);
    return NULL;
  }
  return r;
}

/* A protocol-1 record's blocks as protocol 2's flat [index, micros,
 * selfMicros, count] quadruples (new reference), the index into names,
 * which collects each new name (index maps name -> position). */
static json_t *blocks_v2(json_t *rec, json_t *names, json_t *index) {
  json_t *flat = json_array();
  if (!flat) return NULL;
  const char *name;
  json_t *b;
  json_object_foreach(json_object_get(rec, "blocks"), name, b) {
    json_t *at = json_object_get(index, name);
    if (!at) {
      /* The name goes into the table first: an index entry never points
       * past the table, even when memory runs out in between. */
      if (json_array_append_new(names, json_string(name))) goto fail;
      at = json_integer((json_int_t)json_array_size(names) - 1);
      if (json_object_set_new(index, name, at)) goto fail;
    }
    if (json_array_append(flat, at) ||
        json_array_append(flat, json_object_get(b, "micros")) ||
        json_array_append(flat, json_object_get(b, "selfMicros")) ||
        json_array_append(flat, json_object_get(b, "count")))
      goto fail;
  }
  return flat;
fail:
  json_decref(flat);
  return NULL;
}

/* Protocol 2 form of a protocol-1 record (new reference): the same object
 * with blocks_v2's blocks. */
static json_t *record_v2(json_t *rec, json_t *names, json_t *index) {
  json_t *copy = json_copy(rec), *flat = blocks_v2(rec, names, index);
  if (copy && flat && json_object_set_new(copy, "blocks", flat) == 0) return copy;
  if (copy && flat) flat = NULL; /* set_new took it, even on failure */
  json_decref(flat);
  json_decref(copy);
  return NULL;
}

/* The protocol-3 fields of a record, in their order on the wire. */
static const char *const v3_fields[] = {
    "seq",         "frameNumber",     "atUs",        "vsyncStartUs",    "buildUs", "rasterUs",
    "vsyncOverheadUs", "totalSpanUs", "layerCacheCount", "pictureCacheCount", NULL};

/* Protocol 3 form of a protocol-1 record (new reference): an array of
 * v3_fields, the protocol-2 blocks, and, when the record has an
 * interaction, its index into the reply's interactions table, which pairs
 * collects ([interactionId, linkedBy], first use first; pair_index maps
 * "id\nlinkedBy" -> position: neither may hold a control character). */
static json_t *record_v3(json_t *rec, json_t *names, json_t *index, json_t *pairs,
                         json_t *pair_index) {
  json_t *arr = json_array();
  if (!arr) return NULL;
  for (const char *const *f = v3_fields; *f; f++)
    if (json_array_append(arr, json_object_get(rec, *f))) goto fail;
  if (json_array_append_new(arr, blocks_v2(rec, names, index))) goto fail;
  const char *id = json_string_value(json_object_get(rec, "interactionId"));
  const char *by = json_string_value(json_object_get(rec, "linkedBy"));
  if (id && by) {
    char key[WM_INTERACTION_MAX * 4 + WM_LINKED_BY_MAX * 4 + 2];
    snprintf(key, sizeof key, "%s\n%s", id, by);
    json_t *at = json_object_get(pair_index, key);
    if (!at) {
      if (json_array_append_new(pairs, json_pack("[s,s]", id, by))) goto fail;
      at = json_integer((json_int_t)json_array_size(pairs) - 1);
      if (json_object_set_new(pair_index, key, at)) goto fail;
    }
    if (json_array_append(arr, at)) goto fail;
  }
  return arr;
fail:
  json_decref(arr);
  return NULL;
}

/* Adds records with seq > since (oldest first, at most limit, and no more
 * than read_bytes_cap by wm_record_cost though always one when any is
 * held) and more; from protocol 2 also the blockNames table, in protocol
 * 3 the interactions table too. */
static void reply_add_records(const wm_t *wm, json_t *reply, int64_t since, size_t limit,
                              int protocol) {
  json_t *records = json_array();
  json_t *names = protocol >= 2 ? json_array() : NULL;
  json_t *index = protocol >= 2 ? json_object() : NULL;
  json_t *pairs = protocol >= 3 ? json_array() : NULL;
  json_t *pair_index = protocol >= 3 ? json_object() : NULL;
  uint64_t first = wm_first_seq(wm);
  size_t skip = 0;
  if (first > 0 && (uint64_t)since >= first) skip = (size_t)((uint64_t)since - first + 1);
  size_t avail = skip < wm->ring_len ? wm->ring_len - skip : 0;
  size_t take = 0, bytes = 0;
  while (take < avail && take < limit) {
    size_t at = (wm->ring_head + skip + take) % wm->ring_capacity;
    if (take > 0 && bytes + wm->ring_cost[at] > wm->read_bytes_cap) break;
    bytes += wm->ring_cost[at];
    if (pairs)
      json_array_append_new(records, record_v3(wm->ring[at], names, index, pairs, pair_index));
    else if (names)
      json_array_append_new(records, record_v2(wm->ring[at], names, index));
    else
      json_array_append(records, wm->ring[at]);
    take++;
  }
  if (names) json_object_set_new(reply, "blockNames", names);
  if (pairs) json_object_set_new(reply, "interactions", pairs);
  json_decref(index);
  json_decref(pair_index);
  json_object_set_new(reply, "records", records);
  json_object_set_new(reply, "more", json_boolean(take < avail));
}

json_t *wm_handle(wm_t *wm, json_t *params, int64_t now_us, char **err_detail) {
  char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
  int bad = 0;
  const char *action = param_get(params, "action", b1, sizeof b1, &bad);
  const char *since_s = param_get(params, "since", b2, sizeof b2, &bad);
  const char *limit_s = param_get(params, "limit", b3, sizeof b3, &bad);
  const char *id = param_get(params, "interactionId", b4, sizeof b4, &bad);
  const char *linked_by = param_get(params, "linkedBy", b5, sizeof b5, &bad);
  const char *protocol_s = param_get(params, "protocol", b6, sizeof b6, &bad);
  char *detail = NULL;
  *err_detail = NULL;
  if (bad) {
    detail = detail_new("parameter values must be strings");
    goto fail;
  }
  if (!action) action = "read";
  /* The server asks for the newest form it reads; the answer is the newest
   * both know (an older watcher ignores the param and answers 1). */
  int64_t protocol = 1;
  if (protocol_s && (parse_decimal(protocol_s, &protocol) < 0 || protocol < 1)) {
    detail = detail_new("protocol must be a decimal integer >= 1, got \"%s\"", protocol_s);
    goto fail;
  }
  if (protocol > WM_PROTOCOL_MAX) protocol = WM_PROTOCOL_MAX;

  int64_t since = 0, limit = (int64_t)wm->read_limit_cap;
  if (!strcmp(action, "read")) {
    if (since_s && parse_decimal(since_s, &since) < 0) {
      detail = detail_new("since must be a decimal integer >= 0, got \"%s\"", since_s);
      goto fail;
    }
    if (limit_s && (parse_decimal(limit_s, &limit) < 0 || limit > WM_LIMIT_MAX)) {
      detail =
          detail_new("limit must be a decimal integer 0-%d, got \"%s\"", WM_LIMIT_MAX, limit_s);
      goto fail;
    }
    if ((size_t)limit > wm->read_limit_cap) limit = (int64_t)wm->read_limit_cap;
  } else if (!strcmp(action, "start") || !strcmp(action, "mark")) {
    if (id && (detail = check_text("interactionId", id, WM_INTERACTION_MAX))) goto fail;
    if (id && linked_by && (detail = check_text("linkedBy", linked_by, WM_LINKED_BY_MAX)))
      goto fail;
    if (!strcmp(action, "start")) {
      /* Collection on that this watcher did not switch means another tool
       * (DevTools, a benchmark harness) is collecting: the buffer holds its
       * blocks since it switched on, which the first drain would hand to
       * one frame. A start while already collecting changes nothing. */
      if (!wm->collecting) {
        wm->taken_over = wm->foreign_collection;
        wm->collection_lost = 0;
      }
      wm->collecting = 1;
      wm->auto_off = 0;
      wm->starts++;
    }
    if (id)
      interaction_set(wm, id, linked_by ? linked_by : "agent");
    else if (!strcmp(action, "mark"))
      interaction_set(wm, NULL, NULL);
  } else if (!strcmp(action, "stop")) {
    /* The session is over: its interaction ends with it. */
    wm->collecting = 0;
    wm->stops++;
    interaction_set(wm, NULL, NULL);
  } else if (!strcmp(action, "probe")) {
    wm->probe = 1;
  } else if (strcmp(action, "status") != 0) {
    detail = detail_new("action must be one of read, start, stop, mark, probe, status; got \"%s\"",
                        action);
    goto fail;
  }

  wm->last_call_us = now_us;
  json_t *reply = reply_new(wm, now_us, (int)protocol);
  if (reply && !strcmp(action, "read")) {
    if (wm->more_at >= 0 && since == wm->more_at) wm->more_followed++;
    reply_add_records(wm, reply, since, (size_t)limit, (int)protocol);
    json_t *recs = json_object_get(reply, "records");
    json_t *last = json_array_get(recs, json_array_size(recs) - 1);
    json_t *seq = json_is_array(last) ? json_array_get(last, 0) : json_object_get(last, "seq");
    wm->more_at = json_is_true(json_object_get(reply, "more")) && last
                      ? (int64_t)json_integer_value(seq)
                      : -1;
  }
  if (!reply)
    detail = detail_new("out of memory");
  else
    return reply;

fail:
  *err_detail = detail ? detail : strdup("bad params");
  return NULL;
}

void wm_set_interaction(wm_t *wm, const char *id, const char *linked_by) {
  interaction_set(wm, id, linked_by);
}

const char *wm_interaction_id(const wm_t *wm) {
  return wm->interaction_id;
}

const char *wm_interaction_linked_by(const wm_t *wm) {
  return wm->linked_by;
}

int wm_take_probe(wm_t *wm) {
  int p = wm->probe;
  wm->probe = 0;
  return p;
}

int wm_collecting(const wm_t *wm) {
  return wm->collecting;
}
uint64_t wm_liveness(const wm_t *wm) {
  return wm->liveness;
}
uint64_t wm_last_seq(const wm_t *wm) {
  return wm->next_seq - 1;
}
uint64_t wm_first_seq(const wm_t *wm) {
  return wm->ring_len ? wm->next_seq - wm->ring_len : 0;
}
uint64_t wm_dropped_attributions(const wm_t *wm) {
  return wm->dropped;
}
uint64_t wm_more_followed(const wm_t *wm) { return wm->more_followed; }
uint64_t wm_starts(const wm_t *wm) { return wm->starts; }
uint64_t wm_stops(const wm_t *wm) { return wm->stops; }
size_t wm_pending(const wm_t *wm) {
  return wm->n_pending;
}
size_t wm_ring_bytes(const wm_t *wm) {
  return wm->ring_bytes;
}
int wm_timings_missing(const wm_t *wm) {
  return timings_missing(wm);
}
int wm_collection_auto_off(const wm_t *wm) {
  return wm->auto_off;
}
int wm_collection_taken_over(const wm_t *wm) {
  return wm->taken_over;
}
const char *wm_drain_error(const wm_t *wm) {
  return wm->drain_error;
}
const char *wm_run_id(const wm_t *wm) {
  return wm->run_id;
}
