/* The C model of FramePerfWatcher (DESIGN 5-7): the same join, ring,
 * self-time and interaction rules as the Dart package, checked against the
 * same vectors (tests/vectors/watcher/). Pure: no loop, no socket, no clock;
 * the caller passes time in. telescope-sim drives it from its frame
 * generator and serves wm_handle() as ext.telescope.frames. */
#ifndef TELESCOPE_SIM_MODEL_H
#define TELESCOPE_SIM_MODEL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* One finished timeline block as FlutterTimeline.debugCollect() returns it:
 * in finish order (children before their parents). */
typedef struct {
  const char *name;
  int64_t start_us;
  int64_t dur_us;
} wm_event_t;

/* One FrameTiming, as the engine reports it (all in µs on the engine clock). */
typedef struct {
  int64_t frame_number; /* -1 when the engine does not report one */
  int64_t vsync_start_us;
  int64_t build_start_us;
  int64_t build_finish_us;
  int64_t raster_start_us;
  int64_t raster_finish_us;
  int64_t layer_cache_count;
  int64_t picture_cache_count;
} wm_timing_t;

/* Zero (or NULL) in any field means its default. */
typedef struct {
  size_t ring_capacity;    /* records kept (default 4096) */
  size_t pending_capacity; /* drained block maps awaiting their timing (default 256) */
  size_t read_limit_cap;   /* most records in one read reply (default 500) */
  const char *watcher_version; /* default "0.1.0" (copied) */
  double refresh_rate;     /* Hz, reported in every reply (default 60) */
  const char *build_mode;  /* "debug", "profile" or "release" (default "profile"; copied) */
  size_t ring_bytes;       /* estimated bytes the ring may hold (default 4 MiB; wm_record_cost) */
  size_t read_bytes_cap;   /* estimated bytes in one read reply (default 256 KiB) */
  int64_t auto_off_us;     /* no call for this long: collection goes off (default 30 s) */
  uint64_t timings_missing_frames; /* frames without any FrameTiming ... (default 120) */
  int64_t timings_missing_us;      /* ... over at least this long: timingsMissing (default 2 s) */
  size_t pending_blocks;   /* raw blocks the pending drains may hold (default 65536) */
  int join_by_time;        /* web: every drain is joined by time, numbers ignored */
  int attribute_in_frame;  /* 0.1.0's placement: attribute inside the frame (the benchmark's
                              baseline; records are the same either way) */
} wm_config_t;

/* The newest wire form the model speaks: a call with param protocol 2 gets
 * the block-name-table form, 3 (or more) positional records with name and
 * interaction tables, every other call protocol 1 (DESIGN 5). */
#define WM_PROTOCOL_MAX 3

typedef struct wm wm_t;

/* A model with cfg (NULL: defaults) and run id run_id (copied). It starts
 * with collection off, lifecycle "resumed", framesEnabled true, no
 * interaction. Returns NULL when out of memory. */
wm_t *wm_new(const wm_config_t *cfg, const char *run_id);
void wm_free(wm_t *wm);

/* Hot restart: new run id, seq from 1, ring/pending cleared, collection off,
 * interaction cleared, liveness counter back to 0 (Dart statics reset). */
void wm_restart(wm_t *wm, const char *run_id);

/* The persistent frame callback of frame frame_number at now_us: liveness +1;
 * first, collection goes off (collectionAutoOff) when no call came for
 * auto_off_us; then, when collecting and draining works, the events drained
 * since the previous drain are this frame's blocks (else, and for the first
 * drain after a start that took another tool's collection over, they are
 * ignored). The frame only parks them, raw (copied), with the current
 * interaction; they are attributed when a timing takes them (wm_timings),
 * outside the frame. Not parked (counted in droppedAttributions): a number
 * >= 0 already parked (a warm-up frame's stale number: the first stays) or
 * at or below the newest reported one. The pending map is bounded by
 * entries and by raw blocks: the oldest go first. With join_by_time (web)
 * or frame_number -1 the drain is parked unnumbered. */
void wm_frame_drawn(wm_t *wm, int64_t frame_number, int64_t now_us,
                    const wm_event_t *events, size_t n_events);

/* The timings callback with a batch of n FrameTimings: the only writer of
 * records, one per timing, and where blocks are attributed. A numbered
 * timing takes the map parked under its number; otherwise unnumbered maps
 * join by time: those drained before the timing's vsyncStart are dropped
 * (their frame got no timing), and the oldest left is taken if it drained
 * before the next timing's vsyncStart. No match: blocks {} and atUs =
 * build_finish_us. Afterwards numbered maps at or below the newest reported
 * number are pruned. Every drop counts in droppedAttributions. */
void wm_timings(wm_t *wm, const wm_timing_t *timings, size_t n);

/* Lifecycle ("resumed", ..., or NULL for null; copied) and framesEnabled,
 * reported in replies. */
void wm_set_lifecycle(wm_t *wm, const char *lifecycle);
void wm_set_frames_enabled(wm_t *wm, int enabled);

/* What the binding sees before a call: FlutterTimeline collection on while
 * this watcher did not switch it (another tool collects). A start that
 * switches collection on then reports collectionTakenOver (until the next
 * such start) and ignores the first drain. */
void wm_set_foreign_collection(wm_t *wm, int on);
/* Another tool switches FlutterTimeline collection off (it is one flag for
 * the whole isolate): frames from now on have no blocks, and replies say
 * collectionLost until the next start that switches collection on. */
void wm_collection_switched_off(wm_t *wm);

/* ext.telescope.frames: params as the VM hands them (every value a JSON
 * string; integers, booleans and null are read as the VM's toString() would
 * give them; isolateId and unknown keys are ignored; params may be NULL),
 * now_us the watcher's clock. Returns the reply (new reference) or NULL with
 * *err_detail set to a malloc'd message naming the parameter (the extension
 * answers -32602 with it; the caller frees it). A failed call changes
 * nothing. stop also clears the current interaction. */
json_t *wm_handle(wm_t *wm, json_t *params, int64_t now_us, char **err_detail);

/* Draining FlutterTimeline failed with error (copied; the first one is
 * kept): from now on frames get no blocks, and replies carry drainError. */
void wm_drain_failed(wm_t *wm, const char *error);

/* The estimated encoded size of a record, the unit of ring_bytes and
 * read_bytes_cap (the same formula as the Dart RecordRing):
 * 160 + per block (40 + name length) + with an interaction (32 + id length +
 * linkedBy length), lengths in UTF-16 code units as Dart counts them. */
size_t wm_record_cost(const json_t *record);

/* The current interaction, as the watcher's drive sets it for each step
 * (DRIVE.md §3): frames drawn from now on carry it. id NULL clears it;
 * both are copied (on OOM nothing changes). */
void wm_set_interaction(wm_t *wm, const char *id, const char *linked_by);
const char *wm_interaction_id(const wm_t *wm); /* NULL: none */
const char *wm_interaction_linked_by(const wm_t *wm);

/* 1 once after a probe action asked for a frame (the generator then draws
 * one even when idle), else 0. */
int wm_take_probe(wm_t *wm);

/* Introspection for tests and the simulator. */
int wm_collecting(const wm_t *wm);
uint64_t wm_liveness(const wm_t *wm);
uint64_t wm_last_seq(const wm_t *wm);
uint64_t wm_first_seq(const wm_t *wm);  /* 0 when the ring is empty */
uint64_t wm_dropped_attributions(const wm_t *wm); /* pending-map evictions */
uint64_t wm_more_followed(const wm_t *wm); /* reads that went on after a reply with more */
uint64_t wm_starts(const wm_t *wm); /* start calls taken (a start while collecting too) */
uint64_t wm_stops(const wm_t *wm);  /* stop calls taken */
size_t wm_pending(const wm_t *wm);
size_t wm_ring_bytes(const wm_t *wm); /* sum of wm_record_cost over the ring */
int wm_timings_missing(const wm_t *wm);
int wm_collection_auto_off(const wm_t *wm);
int wm_collection_taken_over(const wm_t *wm);
const char *wm_drain_error(const wm_t *wm); /* NULL while draining works */
const char *wm_run_id(const wm_t *wm);

#endif
