#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "container_of.h"
#include "summary.h"

void session_ref(session_t *s) { s->refs++; }

void session_unref(session_t *s) {
  if (!s || --s->refs > 0) return;
  appsrc_tl_slot_close(&s->tl);
  free(s->interaction_id);
  free(s->linked_by);
  for (size_t i = 0; i < s->nwarnings; i++) free(s->warnings[i]);
  store_free(s->store);
  if (s->workload) workload_close(s->workload);
  free(s->workload);
  free(s);
}

void session_warn(session_t *s, const char *text) {
  if (s->nwarnings == SESSION_MAX_WARNINGS) return;
  char *w = strdup(text);
  if (w) s->warnings[s->nwarnings++] = w;
}

/* The timeline's notes (appsrc.h): once, not when it has said so already. */
static void tl_warn(appsrc_slot_t *slot, const char *text, int once) {
  session_t *s = container_of(slot, session_t, tl.base);
  for (size_t i = 0; once && i < s->nwarnings; i++)
    if (!strcmp(s->warnings[i], text)) return;
  session_warn(s, text);
}

session_t *session_new(unsigned n, const session_options_t *opt, uint64_t now) {
  session_t *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->refs = 1;
  snprintf(s->id, sizeof s->id, "s%u", n);
  s->capture = opt->capture;
  s->tl.base.want = !opt->no_timeline;
  s->tl.base.warn = tl_warn;
  s->include_startup = opt->include_startup;
  s->budget_ms = opt->budget_ms;
  memcpy(s->track, opt->track, sizeof s->track);
  if (opt->interaction_id) {
    s->interaction_id = strdup(opt->interaction_id);
    s->linked_by = strdup(opt->linked_by ? opt->linked_by : "agent");
    if (!s->interaction_id || !s->linked_by) {
      session_unref(s);
      return NULL;
    }
  }
  if (opt->workload &&
      (!(s->workload = malloc(sizeof *s->workload)) || workload_copy(s->workload, opt->workload) < 0)) {
    free(s->workload);
    s->workload = NULL;
    session_unref(s);
    return NULL;
  }
  s->started_ms = now;
  return s;
}

const workload_t *session_workload(const session_t *s) {
  return s->workload;
}

const char *session_drive_id(const session_t *s) {
  return s->drive_id;
}

void session_set_drive_id(session_t *s, const char *id) {
  snprintf(s->drive_id, sizeof s->drive_id, "%s", id);
}

int session_begin(session_t *s, const record_reply_t *r, const int track_on[WP_TRACK__COUNT], uint64_t now) {
  s->asked = 0;
  s->refresh_rate = r->refresh_rate;
  s->build_mode = r->build_mode;
  s->taken_over = r->collection_taken_over;
  s->frame_events = r->frame_events;
  s->budget_us = summary_budget_us(s->budget_ms, r->refresh_rate);
  s->store = store_new(s->budget_us);
  if (s->store) store_set_include_startup(s->store, s->include_startup);
  if (!s->store || store_add_reply(s->store, r, NULL) < 0) {
    store_free(s->store);
    s->store = NULL;
    return -1;
  }
  store_set_tracking(s->store, s->track[0] || track_on[0], s->track[1] || track_on[1],
                     s->track[2] || track_on[2]);
  s->started_ms = now;
  s->tl.base.begun = 1;
  return 0;
}

int session_activate(session_t *s, const int on[WP_TRACK__COUNT], const int failed[WP_TRACK__COUNT]) {
  if (!s->store) return 0;
  for (int t = 0; t < WP_TRACK__COUNT; t++)
    if (s->track[t] && !on[t] && !failed[t]) return 0;
  for (int t = 0; t < WP_TRACK__COUNT; t++)
    if (s->track[t] && failed[t]) {
      char w[128];
      snprintf(w, sizeof w, "track%c%s: could not be switched on in the app",
               wp_track_name(t)[0] - 'a' + 'A', wp_track_name(t) + 1);
      session_warn(s, w);
    }
  s->state = SESSION_ACTIVE;
  return 1;
}

/* ---- accessors --------------------------------------------------------- */

const char *session_id(const session_t *s) { return s->id; }
session_state_t session_state(const session_t *s) { return s->state; }
int session_is_capture(const session_t *s) { return s->capture; }
store_t *session_store(session_t *s) { return s->store; }
int64_t session_budget_us(const session_t *s) { return s->budget_us; }
uint64_t session_read_pos(const session_t *s) { return s->read_pos; }
void session_set_read_pos(session_t *s, uint64_t pos) { s->read_pos = pos; }
int session_stop_took(const session_t *s) { return s->stop_took; }
void session_set_stop_took(session_t *s) { s->stop_took = 1; }
const wp_status_t *session_end_status(const session_t *s) { return &s->end; }
const int *session_track(const session_t *s) { return s->track; }
const char *const *session_warnings(const session_t *s) { return (const char *const *)s->warnings; }
double session_refresh_rate(const session_t *s) { return s->refresh_rate; }
const char *session_build_mode(const session_t *s) { return s->build_mode; }
int session_taken_over(const session_t *s) { return s->taken_over; }
int session_collection_lost(const session_t *s) { return s->collection_lost; }
int session_frame_events(const session_t *s) { return s->frame_events; }
const vmtl_event_t *session_timeline(const session_t *s, size_t *n) {
  *n = s->tl.n;
  return s->tl.ev;
}

static const char *const state_name[] = {"opening", "active", "closing", "stopped"};

json_t *session_to_json(const session_t *s, uint64_t now) {
  /* A session's window ends when its close was asked for; the final drain
   * that follows (longer behind a slow app) is not part of the window. */
  uint64_t end = s->close_ms ? s->close_ms : s->state == SESSION_CLOSED ? s->stopped_ms : now;
  uint64_t dur = end > s->started_ms ? end - s->started_ms : 0;
  json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I}", "id", s->id, "state",
                        state_name[s->state], "durationMs", (json_int_t)dur, "framesSeen",
                        (json_int_t)(s->store ? store_frames_seen(s->store) : 0), "framesLost",
                        (json_int_t)(s->store ? store_frames_lost(s->store) : 0), "restarts",
                        (json_int_t)(s->store ? store_restarts(s->store) : 0));
  if (!o) return NULL;
  int bad = 0;
  if (s->capture) bad |= json_object_set_new(o, "capture", json_true());
  if (s->tl.base.want)
    bad |= json_object_set_new(o, "timeline", json_string(s->tl.base.on ? "on" : "off"));
  if (s->tl.base.dropped) bad |= json_object_set_new(o, "timelineDropped", json_true());
  if (s->store && store_number_gaps(s->store))
    bad |= json_object_set_new(o, "frameNumberGaps", json_integer((json_int_t)store_number_gaps(s->store)));
  if (s->interaction_id) {
    bad |= json_object_set_new(o, "interactionId", json_string(s->interaction_id));
    bad |= json_object_set_new(o, "linkedBy", json_string(s->linked_by));
  }
  json_t *tr = json_array();
  for (int t = 0; tr && t < WP_TRACK__COUNT; t++)
    if (s->track[t]) bad |= json_array_append_new(tr, json_string(wp_track_name(t)));
  if (tr && json_array_size(tr))
    bad |= json_object_set_new(o, "tracking", tr);
  else
    json_decref(tr);
  if (bad) {
    json_decref(o);
    return NULL;
  }
  return o;
}
