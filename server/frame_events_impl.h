/* frame_events' state, shared by frame_events.c (adding frames, the
 * transport, the lifetime) and frame_events_ring.c (the ring and the
 * watcher's replies from it). Other files use frame_events.h. The fe_t owns
 * every frame, call and held event in it. */
#ifndef TELESCOPE_FRAME_EVENTS_IMPL_H
#define TELESCOPE_FRAME_EVENTS_IMPL_H

#include "frame_events.h"
#include "record.h"

typedef struct {
  int64_t seq, number, vsync_start_us, build_us, raster_us, vsync_overhead_us, total_span_us;
  char *iid, *lb; /* the interaction when it arrived; both NULL or both set */
} fe_frame_t;

/* FC_NUDGE: a web close's read for the watcher, sent after a frame is drawn.
 * FC_BATCH: the transport's batch wait (a native close with the watcher). */
typedef enum {
  FC_FORWARD = 0,
  FC_LOCAL,
  FC_PROBE,
  FC_VM,
  FC_SYNC,
  FC_SETTLE,
  FC_NUDGE,
  FC_BATCH
} fc_kind_t;

typedef struct fe_call {
  fe_t *fe;
  fc_kind_t kind;
  json_t *params; /* ext.telescope.frames params (local answers) */
  vm_call_t *fwd; /* the call forwarded to the app, in flight */
  vm_reply_cb cb;
  void *arg;
  int ready;
  uint64_t adds_at, settle_until; /* FC_SETTLE, FC_BATCH: fe->adds when it began, its deadline */
  enum { WEB_NONE, WEB_WAIT, WEB_NUDGING, WEB_FORWARD } web; /* a web stop's stage */
  struct fe_call *next, *prev;
} fe_call_t;

struct fe {
  uv_loop_t *loop;
  vm_app_t *app;

  /* The run: one isolate's frames. */
  char isolate[128];
  char run_id[RECORD_MAX_RUN_ID + 1];
  unsigned runs;
  fe_frame_t *ring; /* FE_RING slots */
  size_t head, len;
  int64_t next_seq;    /* the seq the next frame gets (first: 1) */
  int64_t last_number; /* highest frame number kept (-1: none) */
  int64_t last_raw;    /* the newest kept frame's number as the event gave it */
  int64_t last_start;  /* ... and its startTime (INT64_MIN: none) */
  int64_t last_end_us; /* raster end of the newest frame */
  uint64_t frames;

  int collecting;
  char *iid, *lb;

  fe_call_t *calls; /* every call in flight, local or forwarded */
  uv_idle_t idle;
  uv_timer_t settle;    /* the deadline of the FC_SETTLE calls */
  uint64_t adds;        /* frames kept, every run (FC_SETTLE waits for it to move) */
  uint64_t last_add_ms; /* loop time of the newest frame kept (0: none) */
  int closing;          /* fe_closing: the next local read is a close's */
  int handles;          /* open libuv handles; fe is freed when the last closes */
  int freeing;

  /* Frames seen while the current isolate was unknown: a ring, oldest first. */
  struct {
    char isolate[128];
    json_t *data; /* a reference */
  } held[FE_HELD_MAX];
  size_t held_head, nheld;
  uint64_t held_lost; /* held frames pushed out by newer ones */
  uint64_t foreign;   /* frames of an isolate that was not the current one: dropped */
};

/* Frees what a frame slot owns. */
void fe_frame_clear(fe_frame_t *f);
/* Starts a new run for isolate: the ring emptied, a new run id. */
void fe_run_reset(fe_t *fe, const char *isolate);

#endif
