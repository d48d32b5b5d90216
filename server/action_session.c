/* start, mark and stop (DESIGN 4; docs/tool.md "Sessions"): thin calls into
 * the session manager, which alone decides what is open. */
#include "actions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "answer_where.h"
#include "budgets.h"
#include "chart.h"
#include "chart_file.h"
#include "summary.h"
#include "trace.h"
#include "findings.h"
#include "frames_answer.h"
#include "log.h"

/* ---- start ------------------------------------------------------------- */

static void answer_start(op_t *op) {
  json_t *r = op_result(op);
  json_t *so = r ? session_to_json(op->s, uv_now(op->ctx->loop)) : NULL;
  if (so && op->joined) json_object_set_new(so, "alreadyActive", json_true());
  if (r && op->drive_json) json_object_set(r, "drive", op->drive_json);
  if (r && (!so || json_object_set_new(r, "session", so))) {
    json_decref(r);
    r = NULL;
  }
  op_finish(op, r, 0, NULL);
}

static void start_mark_reply(void *arg, const wp_status_t *st, const record_reply_t *r) {
  op_t *op = arg;
  (void)r;
  if (wp_failed(st)) {
    op_fail_status(op, st);
    return;
  }
  sessions_note_interaction(op->app->sessions, op->a.interaction_id, op->a.linked_by);
  answer_start(op);
}

static void started(void *arg, session_t *s, int joined, const wp_status_t *st) {
  op_t *op = arg;
  op->wait = NULL;
  if (!s) {
    op_fail_status(op, st);
    return;
  }
  op->s = s;
  op->joined = joined;
  if (joined) {
    /* The session was open already: what can be applied now is applied
     * (an interaction is a mark), the rest is named. */
    char budget[64];
    snprintf(budget, sizeof budget, "%.1f ms", (double)session_budget_us(s) / 1000.0);
    if (op->a.budget_ms > 0)
      op_warn(op, "budgetMs: not applied; session %s is already active with a budget of %s",
              session_id(s), budget);
    if (op->a.any_track)
      op_warn(op,
              "trackWidgets/trackLayouts/trackPaints/trackRebuilds: not applied; session %s is "
              "already active (stop it and start again to change them)",
              session_id(s));
    if (op->a.interaction_id) {
      wp_request_t req = {WP_MARK, 0, 0, op->a.interaction_id, op->a.linked_by};
      op_wp(op, &req, start_mark_reply);
      return;
    }
  } else if (op->a.interaction_id) {
    sessions_note_interaction(op->app->sessions, op->a.interaction_id, op->a.linked_by);
  }
  if (op->a.has_workload && joined) {
    op_warn(op, "workload: not played; session %s is already active (stop it, then start with "
                "the workload)", session_id(s));
  } else if (op->a.has_workload) {
    action_drive(op, answer_start, NULL); /* answers once the watcher took it */
    return;
  }
  answer_start(op);
}

void action_start(op_t *op) {
  session_options_t o = {op->a.interaction_id, op->a.linked_by, op->a.budget_ms, {0}, 0, 0, 0, NULL};
  if (op->a.has_workload) o.workload = &op->a.workload;
  o.no_timeline = op->a.no_timeline;
  o.include_startup = op->a.include_startup;
  memcpy(o.track, op->a.track, sizeof o.track);
  if (!(op->wait = sessions_open(op->app->sessions, &o, started, op)))
    op_fail_text(op, "internal error: out of memory");
}

/* ---- mark -------------------------------------------------------------- */

static void mark_reply(void *arg, const wp_status_t *st, const record_reply_t *rep) {
  op_t *op = arg;
  (void)rep;
  if (wp_failed(st)) {
    op_fail_status(op, st);
    return;
  }
  tool_ctx_t *ctx = op->ctx;
  sessions_note_interaction(op->app->sessions, op->a.interaction_id, op->a.linked_by);
  json_t *r = op_result(op);
  json_t *i = json_pack("{s:s}", "state", op->a.interaction_id ? "begun" : "ended");
  if (i && op->a.interaction_id) {
    json_object_set_new(i, "interactionId", json_string(op->a.interaction_id));
    json_object_set_new(i, "linkedBy", json_string(op->a.linked_by ? op->a.linked_by : "agent"));
  }
  if (r && i) json_object_set_new(r, "interaction", i);
  session_t *s = sessions_current(op->app->sessions);
  if (r && s) json_object_set_new(r, "session", session_to_json(s, uv_now(ctx->loop)));
  op_finish(op, r, 0, NULL);
}

void action_mark(op_t *op) {
  wp_request_t req = {WP_MARK, 0, 0, op->a.interaction_id, op->a.linked_by};
  op_wp(op, &req, mark_reply);
}

/* ---- stop -------------------------------------------------------------- */

static void stopped(void *arg, session_t *s, const wp_status_t *st) {
  op_t *op = arg;
  op->wait = NULL;
  if (!s) { /* it never opened */
    op_fail_status(op, st);
    return;
  }
  session_unref(s); /* the op holds its own */
  action_answer_closed(op, st);
}

void action_stop(op_t *op) {
  session_t *s = sessions_current(op->app->sessions);
  if (!s) {
    /* A stop whose close is over but whose answer is still being written
     * (the empty-read decision takes a moment) overlaps this one: the
     * session it closed is the answer to both. */
    for (op_t *o = op->ctx->ops; o; o = o->next) /* of this app: another's is not ours */
      if (o != op && o->app == op->app && o->action == A_STOP && o->s && o->call) {
        session_ref(o->s);
        op->s = o->s;
        action_answer_closed(op, session_end_status(o->s));
        return;
      }
    op_fail_text(op, "stop: no session is active; call action=start first");
    return;
  }
  session_ref(s);
  op->s = s;
  if (op->app) fe_closing(op->app->fe);
  if (!(op->wait = sessions_close(op->app->sessions, s, stopped, op)))
    op_fail_text(op, "internal error: out of memory");
}

/* ---- the answer of a closed session (stop, capture) --------------------- */

/* Writes the chart of the frames the answer covers (the session's kept
 * frames, of the interaction when stop filters by one) to
 * <chart-dir>/telescope-<session>-<UTC time>.svg, puts "chart" {path, uri}
 * into r and returns the resource_link block (resource_link exists from
 * 2025-06-18 on; earlier clients find the path in the text). A chart that
 * cannot be written does not fail the call: a text block says why. */
static json_t *chart_put(op_t *op, json_t *r, store_t *st, int64_t budget) {
  if (!op->call) return NULL;
  const char *iid = op->action == A_STOP ? op->a.interaction_id : NULL;
  size_t n = st ? store_recent_count(st) : 0, m = 0;
  frame_t *frames = n ? calloc(n, sizeof *frames) : NULL; /* shallow copies */
  for (size_t i = 0; frames && i < n; i++) {
    const frame_t *f = store_recent_at(st, i);
    if (!iid || (f->interaction_id && !strcmp(f->interaction_id, iid))) frames[m++] = *f;
  }
  char title[256], when[32], name[128], path[4352], uri[13100], err[512];
  struct timespec ts;
  struct tm tm;
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  strftime(when, sizeof when, "%Y%m%dT%H%M%S", &tm);
  const char *sid = session_id(op->s);
  snprintf(title, sizeof title, "telescope %s %s%s%s", sid,
           op->action == A_STOP ? "stop" : "capture", iid ? " of " : "", iid ? iid : "");
  int trace = op->a.chart == 2;
  /* The GC pauses and compiles the findings name, on their own tracks. */
  trace_timeline_t tl = {NULL, 0, 0};
  tl.events = session_timeline(op->s, &tl.nevents);
  snprintf(name, sizeof name, "telescope-%s-%s.%03ldZ.%s", sid, when, ts.tv_nsec / 1000000,
           trace ? "trace.json" : "svg");
  char *svg = n && !frames ? NULL
              : trace      ? trace_json(frames, m, budget, title, &tl)
                           : chart_svg(frames, m, budget, title);
  int rc =
      svg ? chart_file_write(op->ctx->cfg->chart_dir, name, svg, path, sizeof path, err, sizeof err)
          : (snprintf(err, sizeof err, "out of memory"), -1);
  free(svg);
  size_t janky = 0;
  for (size_t i = 0; i < m; i++) janky += (size_t)chart_is_janky(&frames[i], budget);
  free(frames);
  if (rc == 0 && chart_file_uri(path, uri, sizeof uri) < 0) {
    snprintf(err, sizeof err, "chart path too long for a URI");
    rc = -1;
  }
  if (rc < 0) {
    log_warn("chart: not written: %s", err);
    char text[600];
    snprintf(text, sizeof text, "chart: not written: %s", err);
    return json_pack("[{s:s, s:s}]", "type", "text", "text", text);
  }
  json_object_set_new(r, "chart", json_pack("{s:s, s:s}", "path", path, "uri", uri));
  if (strcmp(tool_call_protocol_version(op->call), "2025-06-18") < 0) return NULL;
  char desc[160];
  snprintf(desc, sizeof desc, "%s: %zu frames, %zu janky, budget %.1f ms",
           trace ? "Chrome trace (Perfetto, chrome://tracing)" : "SVG frame chart", m, janky,
           (double)budget / 1000.0);
  return json_pack("[{s:s, s:s, s:s, s:s, s:s}]", "type", "resource_link", "uri", uri, "name",
                   strrchr(path, '/') + 1, "mimeType", trace ? "application/json" : "image/svg+xml",
                   "description", desc);
}

static void closed_diag(op_t *op, diag_code_t code);
static void closed_finish(op_t *op, json_t *r);
static int where_start(op_t *op, json_t *r, store_t *st);
static int rebuilds_start(op_t *op, json_t *r, store_t *st, int filter);

void action_answer_closed(op_t *op, const wp_status_t *end) {
  session_t *s = op->s;
  store_t *st = session_store(s);
  if (st && store_take_restarted(st)) op->restarted = 1;
  if (wp_failed(end)) {
    /* The app went away, paused or hung: the session ends with what it
     * measured, and says so. */
    op->facts.restarted = op->restarted;
    closed_diag(op, end->diag == DIAG_NONE ? DIAG_WATCHER_ERROR : end->diag);
    return;
  }
  uint64_t frames = st ? store_frames_seen(st) : 0;
  if (frames == 0 && op->drive_failed) {
    /* The drive failed before anything drew: its error is the answer. */
    answer_fill_facts(op, 0, 0, 0);
    closed_diag(op, DIAG_NONE);
    return;
  }
  if (frames == 0) {
    /* Nothing was measured: say why, as an empty read would. */
    answer_fill_facts(op, 0, 0, 0);
    op->after_diag = closed_diag;
    op->keep_on_fail = 1;
    answer_diagnose_empty(op);
    return;
  }
  answer_fill_facts(op, (int64_t)frames, 1, 1);
  closed_diag(op, diagnose_step(&op->facts).code);
}

static void closed_diag(op_t *op, diag_code_t code) {
  tool_ctx_t *ctx = op->ctx;
  session_t *s = op->s;
  store_t *st = session_store(s);
  if (code == DIAG_NONE && op->facts.new_frames == 0 && op->facts.reread_done) {
    /* The decision asked for a re-read: a closed session has nothing more. */
    code = DIAG_FRAMES_PENDING;
  }
  json_t *r = op_result(op);
  if (!r) goto done;
  json_object_set_new(r, "session", session_to_json(s, uv_now(ctx->loop)));
  int filter = op->action == A_STOP && op->a.interaction_id;
  uint64_t from = op->action == A_CAPTURE ? 0 : session_read_pos(s);
  answer_take_t t;
  if (answer_put_frames(op, r, st, from, filter, 1, session_budget_us(s), &t) < 0) {
    json_decref(r);
    r = NULL;
    goto done;
  }
  /* A stop that lists hands out every frame no read had taken: those it
   * lists and, through its nextCursor, the rest. So a read of the session
   * still in flight (waiting on an empty app when the stop came) takes none
   * of them again. One that lists nothing (detail summary) leaves them all
   * to reads of the closed session, except those that fell out of the
   * window: it counted them in its `undelivered`, and a read must not again. */
  if (!filter && op->action == A_STOP) {
    session_set_stop_took(s);
    if (op->a.detail != D_SUMMARY)
      session_set_read_pos(s, st ? store_frames_seen(st) : t.next);
    else if (st && store_first_kept(st) > session_read_pos(s))
      session_set_read_pos(s, store_first_kept(st));
  }
  if (op->a.detail != D_SUMMARY && t.taken < t.available)
    answer_put_cursor(r, 1, session_id(s), (int64_t)t.next);
  /* A debug build's timings are inflated, and tracking adds overhead: say
   * so with the numbers they shaped (issue 13). */
  const int *tr = session_track(s);
  json_t *notes = findings_warnings_new(session_build_mode(s), tr[0], tr[1], tr[2]);
  for (size_t i = 0; i < json_array_size(notes); i++)
    op_warn(op, "%s", json_string_value(json_array_get(notes, i)));
  json_decref(notes);
  if (session_taken_over(s))
    op_warn(op,
            "another tool (in-app code: a benchmark harness, a profiler) was collecting the "
            "Flutter timeline when the session started: the session took the buffer over (it was "
            "emptied at start), and while both read, each misses the blocks the other took");
  if (session_collection_lost(s))
    op_warn(op,
            "another tool switched the Flutter timeline's collection off during the session: "
            "the frames since then have no blocks, and the watcher left it off at stop");
  action_drive_put(op, r);
  if (op->a.budgets) {
    json_t *b = budgets_eval(op->a.budgets, json_object_get(r, "summary"));
    if (b) json_object_set_new(r, "budgets", b);
  }
  if (filter && st && !store_summary(st, op->a.interaction_id))
    op_warn(op, "interactionId \"%s\": no frame of session %s carries it", op->a.interaction_id,
            session_id(s));
  if (code != DIAG_NONE) {
    json_t *d = diagnose_to_json(code, &op->facts);
    const wp_status_t *end = session_end_status(s);
    if (d && wp_failed(end) && end->detail[0]) {
      json_t *ev = json_object_get(d, "evidence");
      if (ev) json_object_set_new(ev, "detail", json_string(end->detail));
    }
    if (d) json_object_set_new(r, "diagnosis", d);
  }
  if (rebuilds_start(op, r, st, filter)) return; /* rebuilds_located follows */
  if (where_start(op, r, st)) return;            /* closed_finish follows */
done:
  closed_finish(op, r);
}

/* The last step of a closed session's answer: the chart, then the answer. */
static void closed_finish(op_t *op, json_t *r) {
  answer_where_fit(op, json_object_get(r, "summary"));
  if (r && op->a.chart) {
    json_t *extra = chart_put(op, r, session_store(op->s), session_budget_us(op->s));
    /* warnings added by the chart are not in r; the chart's own text says why */
    op_finish(op, r, op->drive_failed, extra);
    return;
  }
  op_finish(op, r, op->drive_failed, NULL);
}

/* ---- where to edit: the CPU samples of the janky frames ----------------- */

/* Over every frame the session holds; not after the app went away. */
static int where_start(op_t *op, json_t *r, store_t *st) {
  if (!st || wp_failed(session_end_status(op->s))) return 0;
  return answer_where_start(op, r, st, store_first_kept(st), store_frames_seen(st), 0,
                            session_budget_us(op->s), closed_finish);
}

/* ---- rebuilt widgets: Flutter.RebuiltWidgets joined by frame number ----- */

/* summary.rebuilds when the session asked trackRebuilds and the kept
 * frames have events (none: the switch failed, and its warning says so).
 * Janky and calm as for the CPU samples (appsrc_cpu.c): build over the
 * budget, or nothing missed; start-up frames are neither. 1 when a listed
 * widget's location was never sent (the app exported it before this server
 * connected): widgetLocationIdMap is asked and rebuilds_located finishes. */
static int rebuilds_put(op_t *op, json_t *r, store_t *st, int filter) {
  json_t *sum = json_object_get(r, "summary");
  if (!st || !sum || !op->app || !session_track(op->s)[WP_TRACK_REBUILDS]) return 0;
  int64_t budget = session_budget_us(op->s);
  size_t n = store_recent_count(st), k = 0, i;
  rebuilds_frame_t *f = calloc(n ? n : 1, sizeof *f);
  if (!f) return 0;
  for (i = 0; i < n; i++) {
    const frame_t *fr = store_recent_at(st, i);
    if (filter && (!fr->interaction_id || strcmp(fr->interaction_id, op->a.interaction_id)))
      continue;
    f[k++] = (rebuilds_frame_t){fr->frame_number, !fr->startup && fr->build_us > budget,
                                !fr->startup && fr->build_us <= budget && fr->raster_us <= budget};
  }
  json_t *rb = rebuilds_summary(op->app->rb, f, k), *w;
  free(f);
  int web;
  size_t unjoined = rebuilds_unjoined(op->app->rb, &web);
  if (!rb && unjoined)
    op_warn(op,
            "trackRebuilds: %zu Flutter.RebuiltWidgets events could not be joined to frames, so "
            "no rebuilt widget is listed: %s",
            unjoined,
            web ? "their frameNumber is -1, as the web engine sends it before flutter#171592"
                : "they carry no frameNumber (an older Flutter)");
  if (!rb) return 0;
  int unknown = 0;
  json_array_foreach(json_object_get(rb, "widgets"), i, w) unknown |= !json_object_get(w, "file");
  json_object_set_new(sum, "rebuilds", rb);
  return unknown;
}

static void rebuilds_located(void *arg, const vm_result_t *res) {
  op_t *op = arg;
  json_t *r = op->held;
  op->vmc = NULL;
  op->held = NULL;
  if (res->diag == DIAG_NONE && !res->rpc_code) {
    rebuilds_add_location_map(op->app->rb, res->result);
    rebuilds_put(op, r, session_store(op->s), op->action == A_STOP && op->a.interaction_id);
  }
  if (!where_start(op, r, session_store(op->s))) closed_finish(op, r);
}

static int rebuilds_start(op_t *op, json_t *r, store_t *st, int filter) {
  if (!rebuilds_put(op, r, st, filter) || !op->app->app || op->vmc) return 0;
  op->held = r;
  op->vmc = vm_app_call_extension(op->app->app, "ext.flutter.inspector.widgetLocationIdMap", NULL,
                                  rebuilds_located, op);
  if (op->vmc) return 1;
  op->held = NULL;
  return 0;
}
