/* appfacts: what the server knows of the app in use, from every valid
 * watcher reply (its run, liveness, lifecycle, refresh rate, version and the
 * clock evidence). Pure: the caller passes the loop time. framesPerSecond is
 * measured over a window of at least APPFACTS_RATE_MIN_MS (samples older
 * than APPFACTS_RATE_MAX_MS are forgotten), so two calls a millisecond apart
 * do not report a drawing app at 0 frames/s. */
#ifndef TELESCOPE_APPFACTS_H
#define TELESCOPE_APPFACTS_H

#include <jansson.h>
#include <stdint.h>

#include "record.h"
#include "summary.h"

#define APPFACTS_SAMPLES 32
#define APPFACTS_RATE_MIN_MS 250
#define APPFACTS_RATE_MAX_MS 5000

typedef struct {
  uint64_t at_ms;
  int64_t counter;
} appfacts_sample_t;

typedef struct {
  int known; /* a reply was seen */
  char run_id[RECORD_MAX_RUN_ID + 1];
  int frame_events; /* the newest reply came from Flutter.Frame events, not the watcher */
  int64_t liveness;
  uint64_t at_ms; /* when the newest reply arrived */
  char lifecycle[16];
  int frames_enabled;
  int collecting;
  double refresh_rate;
  appfacts_sample_t ring[APPFACTS_SAMPLES]; /* this run's samples, newest at (head - 1) */
  size_t head, count;
  json_t *watcher; /* the `watcher` object of the newest reply (status) */
  summary_clock_t clock;
  /* The newest `drive` any reply carried (DRIVE 3): kept after the one
   * reply that says it ended, so whoever waits for it sees the end even
   * when another call's reply brought it. */
  record_drive_t drive;
} appfacts_t;

void appfacts_init(appfacts_t *f);
void appfacts_close(appfacts_t *f);
void appfacts_note(appfacts_t *f, uint64_t now_ms, const record_reply_t *r);
/* The `liveness` object (new reference; NULL before any reply): counter,
 * and, with a sample at least APPFACTS_RATE_MIN_MS old of the same run,
 * delta, elapsedMs and framesPerSecond over the oldest such window. */
json_t *appfacts_liveness_json(const appfacts_t *f);
/* The counter at or before now - ms_ago of the current run (-1 unknown). */
int64_t appfacts_counter_before(const appfacts_t *f, uint64_t at_ms, uint64_t *sample_ms);

#endif
