#include "frames_answer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "causes.h"
#include "cursor.h"
#include "json_len.h"
#include "summary.h"

#define POLL_MS 50 /* watch and probe: how often to look at the counter */

/* What the timeline and the frame source add to the summary of the frames
 * at positions [from, to) (docs/tool.md "Findings"), and the janky worst
 * frames' own causes (docs/tool.md "Worst frames"). */
static int put_causes(op_t *op, json_t *js, store_t *st, uint64_t from, uint64_t to,
                      const char *iid, int64_t budget_us) {
  causes_input_t in = {op->frame_events || (op->s && session_frame_events(op->s)), NULL, 0, 0};
  if (op->s) in.events = session_timeline(op->s, &in.nevents);
  const json_t *jank = json_object_get(js, "jank");
  if (!in.frame_events && !in.nevents && !json_integer_value(json_object_get(jank, "frames")))
    return 0;
  if (from < store_first_kept(st)) from = store_first_kept(st);
  if (to > store_frames_seen(st)) to = store_frames_seen(st);
  size_t n = 0, cap = to > from ? (size_t)(to - from) : 0;
  const frame_t **frames = cap ? malloc(cap * sizeof *frames) : NULL;
  if (cap && !frames) return -1;
  for (uint64_t p = from; p < to; p++) {
    const frame_t *f = store_at(st, p);
    if (f && (!iid || (f->interaction_id && !strcmp(f->interaction_id, iid)))) frames[n++] = f;
  }
  int rc = causes_apply(js, frames, n, budget_us, &in);
  free(frames);
  return rc;
}

/* What put_causes added (the timeline's findings, gcUs/shaderUs, each worst
 * frame's cause) may take the summary past SUMMARY_MAX_BYTES: the worst
 * frames' topBlocks give way first (their own cause says why they missed),
 * then worst frames, the last first (docs/tool.md "Memory and size bounds"). */
static void fit_worst(json_t *js) {
  json_t *wf = json_object_get(js, "worstFrames");
  size_t len = summary_fit_worst_blocks(js, SUMMARY_MAX_BYTES);
  while (json_array_size(wf) && len > SUMMARY_MAX_BYTES) {
    json_array_remove(wf, json_array_size(wf) - 1);
    len = json_compact_len(js);
  }
}

int answer_put_frames(op_t *op, json_t *r, store_t *st, uint64_t from, int filter, int whole,
                      int64_t budget_us, answer_take_t *out) {
  const char *iid = filter ? op->a.interaction_id : NULL;
  int list = op->a.detail != D_SUMMARY;
  size_t used = json_compact_len(r);
  /* Room for the listing: the call's cap less what the rest takes (the
   * summary is at most SUMMARY_MAX_BYTES) and a margin for the envelope. */
  size_t other = used + SUMMARY_MAX_BYTES + 2048;
  store_range_t q = {from, UINT64_MAX, iid, budget_us, list, op->a.detail == D_BLOCKS,
                     op->a.limit, other < OP_TEXT_CAP ? OP_TEXT_CAP - other : 1};
  store_take_t t;
  memset(out, 0, sizeof *out);
  if (st && store_range_take(st, &q, &t) < 0) return -1;
  if (!st) {
    memset(&t, 0, sizeof t);
    if (!(t.summary = summary_new(budget_us, 0))) return -1;
    t.next = from;
    if (list && !(t.frames = json_array())) goto oom;
  }
  const summary_t *sum = t.summary;
  if (whole && st) sum = store_summary(st, iid);
  summary_t *empty = NULL;
  if (!sum) sum = empty = summary_new(budget_us, 0); /* an interaction with no frames */
  json_t *js = sum ? summary_to_json_bounded(sum, SUMMARY_MAX_BYTES) : NULL;
  summary_free(empty);
  if (js && st && put_causes(op, js, st, whole ? 0 : from, whole ? UINT64_MAX : t.next, iid, budget_us) < 0) {
    json_decref(js);
    js = NULL;
  }
  if (js) fit_worst(js);
  if (!js || json_object_set_new(r, "summary", js)) goto oom;
  if (list) {
    if (json_object_set_new(r, "frames", t.frames)) {
      t.frames = NULL;
      goto oom;
    }
    t.frames = NULL;
    if (t.listed < t.available &&
        json_object_set_new(r, "truncated", json_pack("{s:I, s:I}", "listed", (json_int_t)t.listed,
                                                      "available", (json_int_t)t.available)))
      goto oom;
  }
  if (t.evicted) {
    json_object_set_new(r, "undelivered", json_integer((json_int_t)t.evicted));
    op_warn(op,
            "%llu frames fell out of the session's window of %d before a read took them; they are "
            "counted in the session summary only",
            (unsigned long long)t.evicted, STORE_WINDOW);
  }
  out->taken = t.taken;
  out->next = t.next;
  out->available = t.available;
  store_take_close(&t);
  return 0;

oom:
  store_take_close(&t);
  return -1;
}

void answer_put_cursor(json_t *r, int session_kind, const char *name, int64_t pos) {
  char cur[CURSOR_MAX];
  if (cursor_encode_kind(session_kind ? CURSOR_SESSION : CURSOR_WATCHER, name, pos, cur,
                         sizeof cur) == 0)
    json_object_set_new(r, "nextCursor", json_string(cur));
}

/* ---- the empty-read decision ------------------------------------------- */

void answer_fill_facts(op_t *op, int64_t new_frames, int has_blocks, int session_active) {
  diagnose_facts_t *f = &op->facts;
  f->connected = 1;
  f->watcher_present = 1;
  f->session_active = session_active;
  f->new_frames = new_frames;
  f->new_frames_have_blocks = has_blocks;
  f->restarted = op->restarted;
  int same_run = op->liv_known && strcmp(op->liv_run, op->app->facts.run_id) == 0;
  f->liveness_before_known = same_run;
  f->liveness_before = op->liv_before;
  f->liveness_now = op->app->facts.liveness;
  f->lifecycle = op->app->facts.lifecycle[0] ? op->app->facts.lifecycle : NULL;
  f->frames_enabled = op->app->facts.frames_enabled;
  f->elapsed_ms = op->liv_known ? (int64_t)(op->app->facts.at_ms - op->liv_before_ms) : -1;
}

static void decide(op_t *op);

static void poll_timer(uv_timer_t *t);

/* A watch or probe step failed (the app paused, went away): a read fails
 * with that diagnosis; a closed session's answer keeps what it measured and
 * carries it (issue 11: a stop never loses a session). */
static void diag_fail(op_t *op, const wp_status_t *st) {
  if (op->keep_on_fail) {
    op->after_diag(op, st->diag == DIAG_NONE ? DIAG_WATCHER_ERROR : st->diag);
    return;
  }
  op_fail_status(op, st);
}

static void poll_reply(void *arg, const wp_status_t *st, const record_reply_t *r) {
  op_t *op = arg;
  if (wp_failed(st)) {
    diag_fail(op, st);
    return;
  }
  uint64_t now = uv_now(op->ctx->loop);
  int64_t c = r->liveness_counter;
  if (op->facts.watch == DIAGNOSE_WATCH_NOT_DONE) {
    if (c > op->probe_base) {
      op->facts.watch = DIAGNOSE_WATCH_MOVED;
    } else if (now >= op->watch_until) {
      op->facts.watch = DIAGNOSE_WATCH_STILL;
    } else {
      op_timer(op, POLL_MS, poll_timer);
      return;
    }
    decide(op);
    return;
  }
  if (c > op->probe_base || now >= op->probe_until) {
    op->facts.probe = c > op->probe_base ? DIAGNOSE_PROBE_MOVED : DIAGNOSE_PROBE_NOT_MOVED;
    op->facts.liveness_after_probe = c;
    decide(op);
    return;
  }
  op_timer(op, POLL_MS, poll_timer);
}

static void poll_timer(uv_timer_t *t) {
  op_t *op = op_from_timer(t);
  wp_request_t req = {WP_STATUS, 0, 0, NULL, NULL};
  op_wp(op, &req, poll_reply);
}

static void probe_reply(void *arg, const wp_status_t *st, const record_reply_t *r) {
  op_t *op = arg;
  if (op->frame_events && st->rpc_code == RPC_METHOD_NOT_FOUND) {
    /* Without the watcher the probe is Flutter's ext.ui.window.scheduleFrame,
     * which only debug builds register (docs/flutter-apis.md). */
    op->facts.probe = DIAGNOSE_PROBE_UNAVAILABLE;
    decide(op);
    return;
  }
  if (wp_failed(st)) {
    diag_fail(op, st);
    return;
  }
  op->probe_base = r->liveness_counter;
  op_timer(op, POLL_MS, poll_timer);
}

static void reread_timer(uv_timer_t *t) {
  op_t *op = op_from_timer(t);
  op->facts.reread_done = 1;
  op->after_diag(op, DIAG_NONE);
}

static void decide(op_t *op) {
  op->facts.liveness_now = op->app->facts.liveness;
  diagnose_step_t st = diagnose_step(&op->facts);
  uint64_t now = uv_now(op->ctx->loop);
  switch (st.next) {
  case DIAGNOSE_NEXT_REREAD:
    op_timer(op, (uint64_t)st.delay_ms, reread_timer);
    return;
  case DIAGNOSE_NEXT_WATCH:
    op->probe_base = op->app->facts.liveness;
    op->watch_until = now + (uint64_t)st.delay_ms;
    op_timer(op, POLL_MS, poll_timer);
    return;
  case DIAGNOSE_NEXT_PROBE: {
    op->probe_until = now + (uint64_t)st.delay_ms;
    wp_request_t req = {WP_PROBE, 0, 0, NULL, NULL};
    op_wp(op, &req, probe_reply);
    return;
  }
  case DIAGNOSE_NEXT_NONE:
    break;
  }
  op->after_diag(op, st.code);
}

void answer_diagnose_empty(op_t *op) { decide(op); }
