/* compare (issue 14; docs/tool.md "Comparing sessions"): two stopped
 * sessions, by id or the two most recently stopped, judged by
 * compare_sessions on their kept frames. No call to the app. */
#include "actions.h"

#include <stdlib.h>
#include <string.h>

#include "apps.h"
#include "compare.h"
#include "summary.h"
#include "wproto.h"

/* One side: shallow copies of the kept frames (valid while the session is
 * referenced), and the summary's findings (kept in *summary_json). */
static int side_init(compare_side_t *side, session_t *s, frame_t **frames, json_t **summary_json) {
  store_t *st = session_store(s);
  size_t n = st ? store_recent_count(st) : 0;
  memset(side, 0, sizeof *side);
  *frames = n ? calloc(n, sizeof **frames) : NULL;
  if (n && !*frames) return -1;
  for (size_t i = 0; i < n; i++) (*frames)[i] = *store_recent_at(st, i);
  *summary_json = st ? summary_to_json(store_summary(st, NULL), 0, 0, 0) : NULL;
  side->id = session_id(s);
  side->frames = *frames;
  side->nframes = n;
  side->budget_us = session_budget_us(s);
  side->refresh_rate = session_refresh_rate(s);
  side->build_mode = session_build_mode(s);
  for (int t = 0; t < WP_TRACK__COUNT; t++) side->tracking[t] = session_track(s)[t];
  side->findings = *summary_json ? json_object_get(*summary_json, "findings") : NULL;
  side->frames_total = st ? store_frames_seen(st) : 0;
  /* Its workload's runs (kept inside the summary, freed with it). */
  const workload_t *w = session_workload(s);
  json_t *wl = w && *summary_json ? workload_summary(w, *frames, n, side->budget_us, session_drive_id(s))
                                      : NULL;
  if (wl && !json_object_set_new(*summary_json, "workload", wl))
    side->workload = json_object_get(*summary_json, "workload");
  return 0;
}

/* By id, in whichever app holds it (a session of one app against one of
 * another); without ids, the two most recently stopped of the app named by
 * `app`, or of the app the latest call talked to. */
static session_t *pick(op_t *op, const char *id, size_t k, const char *role) {
  appref_t *app = id ? apps_of_session(op->ctx, id) : op->app ? op->app : op->ctx->app;
  sessions_t *m = app ? app->sessions : NULL;
  session_t *s = !m ? NULL : id ? sessions_find(m, id) : sessions_stopped(m, k);
  if (!s) {
    if (id)
      op_fail_text(op, "%s: no session \"%s\" (the last %d stopped sessions are kept)", role, id,
                   SESSIONS_HISTORY);
    else
      op_fail_text(op, "compare: needs two stopped sessions (measure, fix, measure again), or "
                       "baseline and candidate ids");
    return NULL;
  }
  if (session_state(s) != SESSION_CLOSED) {
    op_fail_text(op, "%s: session %s is still %s; stop it first", role, session_id(s),
                 session_state(s) == SESSION_ACTIVE ? "active" : "open");
    return NULL;
  }
  return s;
}

void action_compare(op_t *op) {
  session_t *b = pick(op, op->a.baseline, 1, "baseline");
  if (!b) return;
  session_t *c = pick(op, op->a.candidate, 0, "candidate");
  if (!c) return;
  if (b == c) {
    op_fail_text(op, "compare: baseline and candidate are the same session (%s)", session_id(b));
    return;
  }
  compare_side_t sb, sc;
  frame_t *fb = NULL, *fc = NULL;
  json_t *jb = NULL, *jc = NULL, *r = NULL, *cmp = NULL;
  if (side_init(&sb, b, &fb, &jb) < 0 || side_init(&sc, c, &fc, &jc) < 0) goto done;
  cmp = compare_sessions(&sb, &sc);
  if (!cmp) goto done;
  if ((r = op_result(op)) && json_object_set_new(r, "comparison", cmp)) {
    json_decref(r);
    r = NULL;
  }
  cmp = NULL;
done:
  json_decref(cmp);
  json_decref(jb);
  json_decref(jc);
  free(fb);
  free(fc);
  op_finish(op, r, 0, NULL);
}
