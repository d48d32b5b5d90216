#include "appfacts.h"

#include <stdio.h>
#include <string.h>

#include "diagnose.h"

void appfacts_init(appfacts_t *f) {
  memset(f, 0, sizeof *f);
  summary_clock_init(&f->clock);
}

void appfacts_close(appfacts_t *f) {
  json_decref(f->watcher);
  f->watcher = NULL;
}

static json_t *watcher_json(const record_reply_t *r) {
  json_t *w = json_pack("{s:s, s:b, s:b, s:f, s:I, s:I, s:I, s:I}", "runId", r->run_id,
                        "collecting", r->collecting, "framesEnabled", r->frames_enabled,
                        "refreshRate", r->refresh_rate, "firstSeq", (json_int_t)r->first_seq,
                        "lastSeq", (json_int_t)r->last_seq, "pending", (json_int_t)r->pending,
                        "droppedAttributions", (json_int_t)r->dropped_attributions);
  if (!w) return NULL;
  int bad = 0;
  if (r->frame_events) bad |= json_object_set_new(w, "source", json_string("frameEvents"));
  if (r->lifecycle) bad |= json_object_set_new(w, "lifecycle", json_string(r->lifecycle));
  if (r->build_mode) bad |= json_object_set_new(w, "buildMode", json_string(r->build_mode));
  if (r->drain_error) bad |= json_object_set_new(w, "drainError", json_string(r->drain_error));
  if (r->timings_missing) bad |= json_object_set_new(w, "timingsMissing", json_true());
  if (r->collection_auto_off) bad |= json_object_set_new(w, "collectionAutoOff", json_true());
  if (r->collection_taken_over)
    bad |= json_object_set_new(w, "collectionTakenOver", json_true());
  if (r->collection_lost) bad |= json_object_set_new(w, "collectionLost", json_true());
  if (r->interaction_id) {
    bad |= json_object_set_new(w, "interactionId", json_string(r->interaction_id));
    bad |= json_object_set_new(w, "linkedBy", json_string(r->linked_by));
  }
  if (bad) {
    json_decref(w);
    return NULL;
  }
  return w;
}

void appfacts_note(appfacts_t *f, uint64_t now_ms, const record_reply_t *r) {
  if (!f->known || strcmp(f->run_id, r->run_id) != 0) f->count = f->head = 0; /* a new run counts from 0 */
  f->known = 1;
  snprintf(f->run_id, sizeof f->run_id, "%s", r->run_id);
  f->frame_events = r->frame_events;
  f->liveness = r->liveness_counter;
  f->at_ms = now_ms;
  snprintf(f->lifecycle, sizeof f->lifecycle, "%s", r->lifecycle ? r->lifecycle : "");
  f->frames_enabled = r->frames_enabled;
  f->collecting = r->collecting;
  f->refresh_rate = r->refresh_rate;
  /* Keep at most one sample per 50 ms, so a burst of replies does not push
   * the older ones the rate needs out of the ring. */
  size_t newest = (f->head + APPFACTS_SAMPLES - 1) % APPFACTS_SAMPLES;
  if (f->count && now_ms < f->ring[newest].at_ms + 50) {
    f->ring[newest].counter = r->liveness_counter;
  } else {
    f->ring[f->head] = (appfacts_sample_t){now_ms, r->liveness_counter};
    f->head = (f->head + 1) % APPFACTS_SAMPLES;
    if (f->count < APPFACTS_SAMPLES) f->count++;
  }
  if (r->drive.present) f->drive = r->drive;
  json_t *w = watcher_json(r);
  if (w) {
    json_decref(f->watcher);
    f->watcher = w;
  }
  for (size_t i = 0; i < r->nrecords; i++)
    summary_clock_add_frame(&f->clock, r->records[i].at_us, r->records[i].vsync_start_us,
                            r->records[i].vsync_overhead_us + r->records[i].build_us +
                                r->records[i].raster_us);
}

int64_t appfacts_counter_before(const appfacts_t *f, uint64_t at_ms, uint64_t *sample_ms) {
  /* Newest first: the first sample at or before at_ms. */
  for (size_t i = 0; i < f->count; i++) {
    const appfacts_sample_t *s = &f->ring[(f->head + APPFACTS_SAMPLES - 1 - i) % APPFACTS_SAMPLES];
    if (s->at_ms <= at_ms) {
      if (sample_ms) *sample_ms = s->at_ms;
      return s->counter;
    }
  }
  return -1;
}

json_t *appfacts_liveness_json(const appfacts_t *f) {
  if (!f->known) return NULL;
  /* The oldest sample within APPFACTS_RATE_MAX_MS that is at least
   * APPFACTS_RATE_MIN_MS old gives the widest meaningful window. */
  const appfacts_sample_t *base = NULL;
  for (size_t i = 0; i < f->count; i++) {
    const appfacts_sample_t *s = &f->ring[(f->head + APPFACTS_SAMPLES - f->count + i) % APPFACTS_SAMPLES];
    if (f->at_ms - s->at_ms > APPFACTS_RATE_MAX_MS) continue;
    if (f->at_ms - s->at_ms >= APPFACTS_RATE_MIN_MS) base = s;
    break;
  }
  if (!base) return diagnose_liveness_to_json(f->liveness, 0, 0, -1);
  return diagnose_liveness_to_json(f->liveness, base->counter <= f->liveness, base->counter,
                                   (int64_t)(f->at_ms - base->at_ms));
}
