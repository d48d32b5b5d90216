/* store: the frames of one measurement session, pure (DESIGN 4 session,
 * docs/tool.md "Memory bounds"). It takes validated watcher replies in the
 * order they were received, drops records it already has, counts exactly the
 * records the watcher's ring overflowed away, follows hot restarts (runId
 * changes), and keeps the session summary (all frames, per interaction), the
 * clock parity evidence and the newest STORE_WINDOW frames for delivery.
 * Every frame taken gets a position, 0, 1, 2, … in the order taken (hot
 * restarts do not reset it): reads hand out ranges of positions, so each
 * frame is delivered once (docs/tool.md "Delivery"). Its memory is bounded
 * however long the session runs. */
#ifndef TELESCOPE_STORE_H
#define TELESCOPE_STORE_H

#include <jansson.h>
#include <stdint.h>

#include "record.h"
#include "summary.h"

#define STORE_WINDOW 4096 /* newest frames kept, with their positions, for delivery */

typedef struct store store_t;

typedef struct {
  uint64_t added;      /* new frames taken from this reply */
  uint64_t duplicates; /* records dropped: seq at or below the last one seen of the run */
  uint64_t lost;       /* records the ring overflowed away before this reply */
  int restarted;       /* this reply is of a new run */
} store_add_result_t;

/* A new empty store judging jank against budget_us. NULL on OOM. */
store_t *store_new(int64_t budget_us);
/* A store that keeps no summary of its own (store_summary is NULL): a read
 * outside sessions, which summarises only the range it takes. */
store_t *store_new_plain(void);
void store_free(store_t *st);

/* Takes the records of one validated reply (borrowed). A reply without
 * records still moves the run and loss bookkeeping. 0, or -1 on OOM. Loss is
 * counted only when the last seen seq of the same run is known: then
 * lost = firstSeq − lastSeen − 1 when firstSeq > lastSeen + 1. After an
 * observed restart the new run's seq starts at 1, so its gap counts too. */
int store_add_reply(store_t *st, const record_reply_t *r, store_add_result_t *res);

/* Whether a frame belongs to the app's start-up (docs/tool.md "Start-up"):
 * the engine's first frame (frameNumber 1), or the first frame of a run
 * (seq 1) when that run replaced another during the session (run_new: a hot
 * restart) or began with the engine's first frames (frameNumber at most
 * STORE_STARTUP_NUMBER_MAX). The store marks frame_t.startup as frames come
 * in. frame_events: the source (kept for the model; the rule is the same). */
#define STORE_STARTUP_NUMBER_MAX 3
int store_is_startup(const frame_t *f, int frame_events, int run_new);

/* include: 1 to judge start-up frames as any other (the session asked for
 * them with includeStartup), 0 (the default) to count them apart. */
void store_set_include_startup(store_t *st, int include);

/* Whether Flutter's profile switches were on while it was fed (1/0, -1
 * unknown): findings say to switch them on when names are missing. */
void store_set_tracking(store_t *st, int widgets, int layouts, int paints);

uint64_t store_frames_seen(const store_t *st);
uint64_t store_frames_lost(const store_t *st);
uint64_t store_restarts(const store_t *st);
/* Frame numbers skipped between frames that followed each other (seq + 1). */
uint64_t store_number_gaps(const store_t *st);
/* 1 once after a restart was observed (then 0 until the next one), so
 * app_restarted is reported once. */
int store_take_restarted(store_t *st);
const char *store_run_id(const store_t *st); /* current run, NULL before any reply */
int64_t store_last_seq(const store_t *st);   /* last seq seen of the current run, 0 if none */

/* The session summary (interactions included) or, with interaction_id, that
 * interaction's own; NULL when that interaction has no frames. Borrowed. */
const summary_t *store_summary(const store_t *st, const char *interaction_id);
const summary_clock_t *store_clock(const store_t *st);

/* The newest `limit` kept frames (of interaction_id when not NULL), oldest
 * first, as FramePerfRecord JSON per detail (with_blocks). With max_bytes > 0
 * the older of them are left out until the array's compact text fits (so a
 * call stays under its size cap); *omitted (may be NULL) says how many were.
 * New reference. */
json_t *store_frames_to_json(const store_t *st, const char *interaction_id, size_t limit,
                             int with_blocks, size_t max_bytes, size_t *omitted);
/* Kept frames, 0 = oldest; borrowed until the next store_add_reply. */
size_t store_recent_count(const store_t *st);
const frame_t *store_recent_at(const store_t *st, size_t i);

/* Positions: the frames taken so far are [0, store_frames_seen); the store
 * still holds [store_first_kept, store_frames_seen). */
uint64_t store_first_kept(const store_t *st);
const frame_t *store_at(const store_t *st, uint64_t pos); /* NULL when not held */
/* Frames held in [from, to) (of interaction_id when not NULL). */
uint64_t store_range_count(const store_t *st, uint64_t from, uint64_t to,
                           const char *interaction_id);

typedef struct {
  uint64_t from, to;          /* positions; to is capped at store_frames_seen */
  const char *interaction_id; /* NULL: every frame */
  int64_t budget_us;          /* of the summary */
  int list;                   /* list the taken frames (detail frames|blocks) */
  int with_blocks;
  size_t limit;               /* with list: take at most this many */
  size_t max_bytes;           /* with list: stop before the listing's compact text exceeds it (one frame at least) */
} store_range_t;

typedef struct {
  summary_t *summary;  /* owned: exactly the frames taken */
  json_t *frames;      /* owned, with list: exactly the frames taken, oldest first */
  uint64_t taken;      /* frames taken (summarised and, with list, listed) */
  size_t listed;
  uint64_t available;  /* frames of the range the store holds (taken or not) */
  uint64_t evicted;    /* positions of the range that fell out of the window before anyone took them */
  uint64_t next;       /* the position after the last one taken (or passed over): where the next read starts */
} store_take_t;

/* Takes the frames of a range, oldest first, until the range, the limit or
 * the byte cap ends it. 0, or -1 on OOM (out is then empty). */
int store_range_take(const store_t *st, const store_range_t *q, store_take_t *out)
    __attribute__((warn_unused_result));
void store_take_close(store_take_t *t);
/* Frees the blocks of every kept frame (a closed session kept for its
 * timings only); the summary keeps its totals. */
void store_drop_blocks(store_t *st);

#endif
