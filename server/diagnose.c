#include "diagnose.h"

#include "json_put.h"

#include <math.h>

static diagnose_step_t final(diag_code_t code) {
  diagnose_step_t s = {code, DIAGNOSE_NEXT_NONE, 0};
  return s;
}

static diagnose_step_t next(diagnose_next_t what, int delay_ms) {
  diagnose_step_t s = {DIAG_NONE, what, delay_ms};
  return s;
}

diagnose_step_t diagnose_step(const diagnose_facts_t *f) {
  /* Reachability, in the order a fix has to happen: nothing below can be
   * known while a condition above holds. */
  if (f->rejected) return final(DIAG_CONNECTION_REJECTED);
  if (!f->connected) return final(DIAG_NOT_CONNECTED);
  if (!f->watcher_present) return final(DIAG_WATCHER_MISSING);
  if (f->paused) return final(DIAG_ISOLATE_PAUSED);
  if (f->timed_out) return final(DIAG_UNRESPONSIVE);
  /* A restart explains a gap or an empty read better than anything else. */
  if (f->restarted) return final(DIAG_APP_RESTARTED);
  if (f->frames_lost > 0) return final(DIAG_FRAMES_LOST);
  if (f->new_frames > 0)
    return final(!f->session_active && !f->new_frames_have_blocks ? DIAG_ATTRIBUTION_OFF
                                                                  : DIAG_NONE);
  /* Once probed, the probe decides: the counter now includes the probe's
   * own frame, which must not read as "the engine drew since we looked". */
  switch (f->probe) {
    case DIAGNOSE_PROBE_MOVED:
      return final(DIAG_APP_IDLE);
    case DIAGNOSE_PROBE_NOT_MOVED:
      return final(DIAG_ENGINE_STALLED);
    case DIAGNOSE_PROBE_UNAVAILABLE:
      return final(DIAG_NO_FRAMES);
    case DIAGNOSE_PROBE_NOT_DONE:
      break;
  }
  /* Empty read: did the engine draw since we last looked? A counter that
   * moves by itself means the app is drawing and the timings are on their
   * way; a probe could not tell that app from an idle one (it would draw the
   * probe frame either way), so only a counter that stayed still through a
   * quiet watch is probed (DESIGN 4). */
  int moved = (f->liveness_before_known && f->liveness_now > f->liveness_before) ||
              f->watch == DIAGNOSE_WATCH_MOVED;
  if (moved)
    return f->reread_done ? final(DIAG_FRAMES_PENDING)
                          : next(DIAGNOSE_NEXT_REREAD, DIAGNOSE_REREAD_DELAY_MS);
  if (f->watch == DIAGNOSE_WATCH_NOT_DONE) return next(DIAGNOSE_NEXT_WATCH, DIAGNOSE_WATCH_MS);
  return next(DIAGNOSE_NEXT_PROBE, DIAGNOSE_PROBE_WAIT_MS);
}

diag_code_t diagnose_watcher_absent(int known, int flutter_extensions, uint64_t frame_events) {
  return known && !flutter_extensions && frame_events == 0 ? DIAG_NOT_FLUTTER
                                                           : DIAG_WATCHER_MISSING;
}

static void set_liveness(json_t *ev, int *bad, const diagnose_facts_t *f) {
  if (f->liveness_before_known) json_put(ev, bad, "livenessBefore", json_integer(f->liveness_before));
  json_put(ev, bad, "livenessNow", json_integer(f->liveness_now));
  if (f->elapsed_ms >= 0) json_put(ev, bad, "elapsedMs", json_integer(f->elapsed_ms));
  if (f->watch != DIAGNOSE_WATCH_NOT_DONE)
    json_put(ev, bad, "watch", json_string(f->watch == DIAGNOSE_WATCH_MOVED ? "moved" : "still"));
}

static void set_engine(json_t *ev, int *bad, const diagnose_facts_t *f) {
  json_put(ev, bad, "lifecycle", f->lifecycle ? json_string(f->lifecycle) : json_null());
  if (f->frames_enabled >= 0) json_put(ev, bad, "framesEnabled", json_boolean(f->frames_enabled));
}

json_t *diagnose_to_json(diag_code_t code, const diagnose_facts_t *f) {
  if (!diag_name(code)) return NULL;
  int bad = 0;
  json_t *ev = json_object();
  if (!ev) return NULL;
  switch (code) {
    case DIAG_NOT_CONNECTED:
    case DIAG_CONNECTION_REJECTED:
    case DIAG_WATCHER_MISSING:
    case DIAG_NOT_FLUTTER:
      break;
    case DIAG_ISOLATE_PAUSED:
      if (f->pause_kind) json_put(ev, &bad, "pauseKind", json_string(f->pause_kind));
      break;
    case DIAG_UNRESPONSIVE:
      if (f->elapsed_ms >= 0) json_put(ev, &bad, "elapsedMs", json_integer(f->elapsed_ms));
      break;
    case DIAG_APP_RESTARTED:
      json_put(ev, &bad, "newFrames", json_integer(f->new_frames));
      if (f->frames_lost > 0) json_put(ev, &bad, "framesLost", json_integer(f->frames_lost));
      break;
    case DIAG_FRAMES_LOST:
      json_put(ev, &bad, "framesLost", json_integer(f->frames_lost));
      json_put(ev, &bad, "newFrames", json_integer(f->new_frames));
      break;
    case DIAG_ATTRIBUTION_OFF:
      json_put(ev, &bad, "newFrames", json_integer(f->new_frames));
      json_put(ev, &bad, "sessionActive", json_false());
      break;
    case DIAG_FRAMES_PENDING:
      set_liveness(ev, &bad, f);
      json_put(ev, &bad, "reread", json_boolean(f->reread_done));
      break;
    case DIAG_APP_IDLE:
    case DIAG_ENGINE_STALLED:
    case DIAG_NO_FRAMES:
      set_liveness(ev, &bad, f);
      json_put(ev, &bad, "probe",
          json_string(f->probe == DIAGNOSE_PROBE_MOVED         ? "moved"
                      : f->probe == DIAGNOSE_PROBE_NOT_MOVED   ? "not_moved"
                      : f->probe == DIAGNOSE_PROBE_UNAVAILABLE ? "unavailable"
                                                               : "not_done"));
      if (f->probe != DIAGNOSE_PROBE_NOT_DONE)
        json_put(ev, &bad, "livenessAfterProbe", json_integer(f->liveness_after_probe));
      json_put(ev, &bad, "probeWaitMs", json_integer(DIAGNOSE_PROBE_WAIT_MS));
      set_engine(ev, &bad, f);
      break;
    default:
      break;
  }
  if (bad) {
    json_decref(ev);
    return NULL;
  }
  return json_pack("{s:s,s:s,s:s,s:o}", "code", diag_name(code), "message", diag_message(code),
                   "hint", diag_hint(code), "evidence", ev);
}

json_t *diagnose_liveness_to_json(int64_t counter, int before_known, int64_t before,
                                  int64_t elapsed_ms) {
  json_t *o = json_pack("{s:I}", "counter", (json_int_t)(counter < 0 ? 0 : counter));
  int bad = 0;
  if (!o || !before_known || counter < before) return o;
  json_put(o, &bad, "delta", json_integer(counter - before));
  if (elapsed_ms >= 0) json_put(o, &bad, "elapsedMs", json_integer(elapsed_ms));
  if (elapsed_ms > 0)
    json_put(o, &bad, "framesPerSecond",
        json_real(round((double)(counter - before) * 10000.0 / (double)elapsed_ms) / 10.0));
  if (bad) {
    json_decref(o);
    return NULL;
  }
  return o;
}
