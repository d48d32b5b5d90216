/* diagnose: the pure decision behind `diagnosis` (DESIGN 4 table). The tool
 * layer gathers facts, calls diagnose_step, and either reports the code or
 * does what `next` asks (re-read, probe) and calls again with the outcome.
 * No loop, no clock: elapsed times are facts like any other. */
#ifndef TELESCOPE_DIAGNOSE_H
#define TELESCOPE_DIAGNOSE_H

#include <jansson.h>
#include <stdint.h>

#include "codes.h"

#define DIAGNOSE_REREAD_DELAY_MS 150 /* timings are batched ~100 ms */
#define DIAGNOSE_PROBE_WAIT_MS 500   /* poll the liveness counter this long after a probe */
#define DIAGNOSE_WATCH_MS 200        /* watch the counter this long, untouched, before probing */

typedef enum {
  DIAGNOSE_WATCH_NOT_DONE = 0,
  DIAGNOSE_WATCH_MOVED, /* the counter moved by itself while we only watched */
  DIAGNOSE_WATCH_STILL, /* it did not, within DIAGNOSE_WATCH_MS */
} diagnose_watch_t;

typedef enum {
  DIAGNOSE_PROBE_NOT_DONE = 0,
  DIAGNOSE_PROBE_MOVED,     /* the counter advanced after the probe frame was requested */
  DIAGNOSE_PROBE_NOT_MOVED, /* it did not within DIAGNOSE_PROBE_WAIT_MS */
  DIAGNOSE_PROBE_UNAVAILABLE, /* nothing can request a frame (a profile build without the watcher) */
} diagnose_probe_t;

typedef struct {
  int connected;              /* a VM service answers (no URI, refused or closed: 0) */
  int rejected;               /* 403 / not a VM service / remote host refused */
  int watcher_present;        /* some isolate lists ext.telescope.frames */
  int paused;                 /* pauseEvent.kind is Pause* */
  const char *pause_kind;     /* evidence, may be NULL */
  int timed_out;              /* the extension call hit the call timeout */
  int restarted;              /* isolate or runId changed since the last look */
  int64_t new_frames;         /* records this call found */
  int new_frames_have_blocks; /* any of them carries blocks */
  int session_active;
  int liveness_before_known; /* the server saw the counter before this call */
  int64_t liveness_before, liveness_now;
  int reread_done; /* the one delayed re-read already happened */
  diagnose_watch_t watch; /* the quiet watch before a probe */
  diagnose_probe_t probe;
  int64_t liveness_after_probe; /* evidence, with probe != NOT_DONE */
  int64_t frames_lost;          /* lost by ring overflow in this call */
  const char *lifecycle;        /* evidence, NULL when unknown */
  int frames_enabled;           /* evidence: 1, 0, or -1 unknown */
  int64_t elapsed_ms;           /* since the previous look at the counter; -1 unknown */
} diagnose_facts_t;

typedef enum {
  DIAGNOSE_NEXT_NONE = 0, /* `code` is final (DIAG_NONE: nothing to report) */
  DIAGNOSE_NEXT_REREAD,   /* liveness moved, no records: read again after delay_ms */
  DIAGNOSE_NEXT_WATCH,    /* liveness flat or unknown: watch the counter (status) for delay_ms */
  DIAGNOSE_NEXT_PROBE,    /* still after the watch: send action=probe, poll delay_ms */
} diagnose_next_t;

typedef struct {
  diag_code_t code; /* valid when next == DIAGNOSE_NEXT_NONE */
  diagnose_next_t next;
  int delay_ms;
} diagnose_step_t;

/* One step of the decision (docs/tool.md "Diagnosis"): connection problems
 * first, then restart, loss and attribution, then the empty-read procedure. */
diagnose_step_t diagnose_step(const diagnose_facts_t *f);

/* Why no isolate answers ext.telescope.frames: DIAG_NOT_FLUTTER when the
 * isolate is known (a native VM's fresh look: on the web DWDS lists
 * extensions only once asked, so absence proves nothing) to register none
 * of Flutter's own extensions (ext.flutter.*, ext.ui.*) and no Flutter.Frame
 * event came from the app; else DIAG_WATCHER_MISSING (add the watcher). */
diag_code_t diagnose_watcher_absent(int known, int flutter_extensions, uint64_t frame_events);

/* {"code","message","hint","evidence"} for a final code (new reference; NULL
 * for DIAG_NONE); evidence lists the facts that led there. */
json_t *diagnose_to_json(diag_code_t code, const diagnose_facts_t *f);

/* The `liveness` object: {"counter", "delta", "elapsedMs", "framesPerSecond"}
 * (new reference). delta and the rate need an earlier value of the same run
 * (before_known, and a counter that did not go backwards, as it does after a
 * restart) and elapsed_ms > 0 for the rate; otherwise they are left out. The
 * rate is rounded to 0.1 frames/s. */
json_t *diagnose_liveness_to_json(int64_t counter, int before_known, int64_t before,
                                  int64_t elapsed_ms);

#endif
