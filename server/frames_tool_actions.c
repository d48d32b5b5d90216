/* The actions of telescope_frames (DESIGN 4): status, start, mark, read,
 * stop, capture. Each call is an op: a small state machine driven by VM-service
 * replies and timers on the loop, ending in exactly one tool_call_finish (or
 * in silence when the client cancelled it). */
#include <math.h>
#include "container_of.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chart.h"
#include "cursor.h"
#include "diagnose.h"
#include "frames_tool.h"
#include "frames_tool_int.h"
#include "log.h"
#include "record.h"
#include "store.h"
#include "summary.h"


#define READ_LIMIT 500       /* records asked for per watcher read */
#define READ_MAX_CALLS 16    /* watcher reads per tool call (the ring holds 4096) */
#define WAIT_POLL_MS 100     /* waitMs: how often to look again */
#define PROBE_POLL_MS 50     /* after a probe: how often to look at the counter */
#define PROGRESS_EVERY_MS 1000
#define TEXT_CAP 65536       /* no call returns more text than this */
#define CLOCK_TOPUP 32       /* records read by status for clock evidence */

typedef enum { A_STATUS, A_START, A_MARK, A_READ, A_STOP, A_CAPTURE } action_t;
static const char *const action_names[] = {"status", "start", "mark", "read", "stop", "capture"};

typedef enum { D_SUMMARY, D_FRAMES, D_BLOCKS } detail_t;

struct op {
  frames_tool_t *ft;
  tool_call_t *call;
  op_t *next, *prev; /* ft->ops */
  action_t action;
  /* arguments */
  char *uri, *interaction_id, *linked_by, *cursor;
  size_t limit;
  detail_t detail;
  int wait_ms, duration_ms; /* -1 when absent */
  double budget_ms;
  int track[TRACK__COUNT];
  int chart; /* chart: "svg" (stop/capture) */

  vm_call_t *vmc; /* the one VM call in flight */
  uv_timer_t timer;
  int timer_armed;
  uint64_t t0; /* uv_now at the start of the call */

  /* liveness as the server knew it when the call began */
  int liv_known;
  int64_t liv_before;
  uint64_t liv_before_ms;
  char liv_run[RECORD_MAX_RUN_ID + 1];

  /* read / capture state */
  store_t *store;        /* this call's frames; how it is held: */
  enum { ST_OWNED, ST_TAP, ST_BORROWED } store_kind; /* TAP: owned, fed by the session */
  char cur_run[RECORD_MAX_RUN_ID + 1]; /* where this read ended, for nextCursor */
  int64_t cur_seq;
  int waiting_session;   /* a session callback will come back to this op */
  int cancelled;         /* ... and the client gave up meanwhile */
  int64_t since;
  int calls;             /* watcher reads made */
  int restarted;
  int resolved;          /* the cursor/position was resolved against the current run */
  diagnose_facts_t facts;
  int64_t probe_base;    /* the counter when the probe was sent */
  uint64_t probe_until;
  int own_session;       /* capture opened the session it will close */
  uint64_t last_progress;
  session_status_t session_warning;
  json_t *extra;         /* fields to merge into the result (e.g. the session) */
};

/* ---- op lifecycle ------------------------------------------------------ */

static void op_closed(uv_handle_t *h) {
  op_t *op = container_of((uv_timer_t *)h, op_t, timer);
  free(op->uri);
  free(op->interaction_id);
  free(op->linked_by);
  free(op->cursor);
  json_decref(op->extra);
  free(op);
}

/* Forgets everything in flight and frees the op (the call is answered or
 * cancelled by then). */
static void op_free(op_t *op) {
  frames_tool_t *ft = op->ft;
  if (op->vmc) vm_call_cancel(op->vmc);
  op->vmc = NULL;
  uv_timer_stop(&op->timer);
  if (op->store && op->store_kind == ST_TAP && ft->session) session_tap_detach(ft->session, op->store);
  if (op->store && op->store_kind != ST_BORROWED) store_free(op->store);
  op->store = NULL;
  if (op->own_session && ft->session) {
    /* A cancelled capture leaves the app as it was: attribution off. */
    session_t *s = ft->session;
    ft->session = NULL;
    frames_tool_drop_read_tap(ft, s);
    session_abandon(s);
  }
  if (op->prev) op->prev->next = op->next; else ft->ops = op->next;
  if (op->next) op->next->prev = op->prev;
  uv_close((uv_handle_t *)&op->timer, op_closed);
}

static void op_cancelled(void *arg) {
  op_t *op = arg;
  log_debug("%s cancelled", action_names[op->action]);
  op->call = NULL;
  if (op->waiting_session) { /* freed when the session step comes back */
    op->cancelled = 1;
    return;
  }
  op_free(op);
}

/* Called first by every session callback: 1 when the op was cancelled while
 * it waited (it is freed here, and a session it opened is abandoned). */
static int op_gone(op_t *op, session_t *s, int opened) {
  op->waiting_session = 0;
  if (!op->cancelled) return 0;
  if (opened && s) session_abandon(s); /* cancellation leaves attribution off */
  op_free(op);
  return 1;
}

/* extra (stolen, may be NULL): content blocks after the text block. */
static void op_finish_extra(op_t *op, json_t *res, int is_error, json_t *extra) {
  if (op->call) {
    tool_call_finish(op->call, res, is_error, extra);
  } else {
    json_decref(res);
    json_decref(extra);
  }
  op->call = NULL;
  op_free(op);
}

static void op_finish(op_t *op, json_t *res, int is_error) {
  op_finish_extra(op, res, is_error, NULL);
}

static void op_fail_text(op_t *op, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void op_fail_text(op_t *op, const char *fmt, ...) {
  char buf[512], clean[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  log_redact(buf, clean, sizeof clean);
  if (op->call) tool_call_finish_text_error(op->call, clean);
  op->call = NULL;
  op_free(op);
}

static void op_timer(op_t *op, uint64_t ms, uv_timer_cb cb) {
  uv_timer_start(&op->timer, cb, ms, 0);
}

/* ---- results ----------------------------------------------------------- */

static json_t *result_base(op_t *op) {
  frames_tool_t *ft = op->ft;
  json_t *r = json_pack("{s:s}", "action", action_names[op->action]);
  json_object_set_new(r, "connection", ft->app ? vm_app_connection_json(ft->app)
                                               : json_pack("{s:s}", "state", "not_connected"));
  if (ft->w.known) {
    int same_run = op->liv_known && strcmp(op->liv_run, ft->w.run_id) == 0;
    json_object_set_new(r, "liveness",
                        diagnose_liveness_to_json(ft->w.liveness, same_run, op->liv_before,
                                                  (int64_t)(ft->w.at_ms - op->liv_before_ms)));
  }
  if (op->extra) json_object_update(r, op->extra);
  return r;
}

/* A VM-level failure as the answer: the diagnosis in structuredContent,
 * isError except for status. */
static void op_fail_diag(op_t *op, diag_code_t code, const char *detail) {
  json_t *r = result_base(op);
  diagnose_facts_t f = op->facts;
  json_t *d = diagnose_to_json(code, &f);
  if (detail && *detail) {
    char clean[600];
    log_redact(detail, clean, sizeof clean);
    json_t *ev = json_object_get(d, "evidence");
    if (!ev) json_object_set_new(d, "evidence", ev = json_object());
    json_object_set_new(ev, "detail", json_string(clean));
  }
  json_t *ev = json_object_get(d, "evidence");
  if (ev && json_object_size(ev) == 0) json_object_del(d, "evidence");
  json_object_set_new(r, "diagnosis", d);
  op_finish(op, r, op->action != A_STATUS && diag_is_error(code));
}

/* The answer to a failed VM call; 1 when it failed (op is gone then). */
static int op_vm_failed(op_t *op, const vm_result_t *res) {
  if (res->diag != DIAG_NONE) {
    op_fail_diag(op, res->diag, res->detail);
    return 1;
  }
  if (res->rpc_code == RPC_PARSE_ERROR || res->rpc_code == RPC_INTERNAL_ERROR) {
    op_fail_diag(op, DIAG_INVALID_REPLY, res->detail);
    return 1;
  }
  if (res->rpc_code != 0) {
    char detail[400];
    snprintf(detail, sizeof detail, "the app's watcher answered with error %d: %s", res->rpc_code,
             res->detail ? res->detail : "");
    op_fail_diag(op, DIAG_WATCHER_ERROR, detail);
    return 1;
  }
  return 0;
}

static void op_fail_status(op_t *op, const session_status_t *st) {
  if (st->diag != DIAG_NONE) {
    op_fail_diag(op, st->diag, st->detail);
  } else {
    char detail[400];
    snprintf(detail, sizeof detail, "the app's watcher answered with error %d: %s", st->rpc_code,
             st->detail);
    op_fail_diag(op, DIAG_WATCHER_ERROR, detail);
  }
}

/* Parses a watcher reply; on failure answers invalid_reply and returns -1. */
static int op_parse(op_t *op, const vm_result_t *res, record_reply_t *r) {
  char err[RECORD_ERR_LEN];
  if (record_reply_parse(r, res->result, err, sizeof err) < 0) {
    op_fail_diag(op, DIAG_INVALID_REPLY, err);
    return -1;
  }
  frames_tool_note_reply(op->ft, r);
  return 0;
}

static vm_call_t *op_ext(op_t *op, json_t *params, vm_reply_cb cb) {
  return op->vmc = vm_app_call_extension(op->ft->app, VM_APP_WATCHER_EXTENSION, params, cb, op);
}

/* The frames part of a read/stop/capture answer: summary, listing, cursor. */
static void put_frames(op_t *op, json_t *r, store_t *st, int64_t budget_us) {
  const char *iid = op->action == A_CAPTURE ? NULL : op->interaction_id;
  const summary_t *sum = st ? store_summary(st, iid) : NULL;
  summary_t *empty = NULL;
  if (!sum) sum = empty = summary_new(budget_us, 0);
  json_object_set_new(r, "summary", summary_to_json_bounded(sum, SUMMARY_MAX_BYTES));
  summary_free(empty);
  if (op->detail != D_SUMMARY && st && op->limit > 0) {
    char *text = json_dumps(r, JSON_COMPACT);
    size_t used = text ? strlen(text) : 0;
    free(text);
    size_t room = used + 2048 < TEXT_CAP ? TEXT_CAP - used - 2048 : 1;
    json_object_set_new(r, "frames", store_frames_to_json(st, iid, op->limit,
                                                          op->detail == D_BLOCKS, room, NULL));
  }
}

/* ---- the diagnosis of an empty read (DESIGN 4) ------------------------- */

static void diag_step(op_t *op);
static json_t *chart_put(op_t *op, json_t *r);
static void capture_begin(op_t *op);
static void read_again(op_t *op);
static void read_finish(op_t *op);

static void probe_poll_reply(void *arg, const vm_result_t *res);

static void probe_poll_timer(uv_timer_t *t) {
  op_t *op = container_of(t, op_t, timer);
  op_ext(op, json_pack("{s:s}", "action", "status"), probe_poll_reply);
}

static void probe_poll_reply(void *arg, const vm_result_t *res) {
  op_t *op = arg;
  op->vmc = NULL;
  if (op_vm_failed(op, res)) return;
  record_reply_t r;
  if (op_parse(op, res, &r) < 0) return;
  int64_t now = r.liveness_counter;
  record_reply_close(&r);
  if (now > op->probe_base) {
    op->facts.probe = DIAGNOSE_PROBE_MOVED;
    op->facts.liveness_after_probe = now;
    diag_step(op);
  } else if (uv_now(op->ft->loop) >= op->probe_until) {
    op->facts.probe = DIAGNOSE_PROBE_NOT_MOVED;
    op->facts.liveness_after_probe = now;
    diag_step(op);
  } else {
    op_timer(op, PROBE_POLL_MS, probe_poll_timer);
  }
}

static void probe_reply(void *arg, const vm_result_t *res) {
  op_t *op = arg;
  op->vmc = NULL;
  if (op_vm_failed(op, res)) return;
  record_reply_t r;
  if (op_parse(op, res, &r) < 0) return;
  op->probe_base = r.liveness_counter;
  record_reply_close(&r);
  op_timer(op, PROBE_POLL_MS, probe_poll_timer);
}

static void reread_timer(uv_timer_t *t) {
  op_t *op = container_of(t, op_t, timer);
  op->facts.reread_done = 1;
  read_again(op);
}

static void fill_facts(op_t *op) {
  frames_tool_t *ft = op->ft;
  diagnose_facts_t *f = &op->facts;
  f->connected = 1;
  f->watcher_present = 1;
  f->session_active = ft->session && session_active(ft->session);
  f->new_frames = op->store ? (int64_t)store_frames_seen(op->store) : 0;
  f->new_frames_have_blocks = 0;
  if (op->store)
    for (size_t i = 0; i < store_recent_count(op->store) && !f->new_frames_have_blocks; i++)
      if (store_recent_at(op->store, i)->nblocks) f->new_frames_have_blocks = 1;
  f->restarted = op->restarted;
  f->frames_lost = op->store ? (int64_t)store_frames_lost(op->store) : 0;
  int same_run = op->liv_known && strcmp(op->liv_run, ft->w.run_id) == 0;
  f->liveness_before_known = same_run;
  f->liveness_before = op->liv_before;
  f->liveness_now = ft->w.liveness;
  f->lifecycle = ft->w.lifecycle[0] ? ft->w.lifecycle : NULL;
  f->frames_enabled = ft->w.frames_enabled;
  f->elapsed_ms = op->liv_known ? (int64_t)(ft->w.at_ms - op->liv_before_ms) : -1;
}

static void diag_step(op_t *op) {
  fill_facts(op);
  diagnose_step_t st = diagnose_step(&op->facts);
  switch (st.next) {
  case DIAGNOSE_NEXT_REREAD:
    op_timer(op, (uint64_t)st.delay_ms, reread_timer);
    return;
  case DIAGNOSE_NEXT_PROBE:
    op->probe_until = uv_now(op->ft->loop) + (uint64_t)st.delay_ms;
    op_ext(op, json_pack("{s:s}", "action", "probe"), probe_reply);
    return;
  case DIAGNOSE_NEXT_NONE:
    break;
  }
  op->facts.restarted = st.code == DIAG_APP_RESTARTED; /* evidence */
  json_t *r = result_base(op);
  /* The session's budget when there is one, else this call's: it judges an
   * empty summary too (e.g. an interaction with no frames yet). */
  session_t *s = op->action == A_STOP || op->action == A_CAPTURE ? op->ft->closing_session
                                                                 : op->ft->session;
  if (s) json_object_set_new(r, "session", session_to_json(s));
  int64_t budget = s ? session_budget_us(s) : summary_budget_us(op->budget_ms, op->ft->w.refresh_rate);
  put_frames(op, r, op->store, budget);
  if (op->action == A_READ && op->cur_run[0]) {
    char cur[CURSOR_MAX];
    if (cursor_encode(op->cur_run, op->cur_seq, cur, sizeof cur) == 0)
      json_object_set_new(r, "nextCursor", json_string(cur));
  }
  if (st.code != DIAG_NONE) json_object_set_new(r, "diagnosis", diagnose_to_json(st.code, &op->facts));
  json_t *chart_content = op->chart ? chart_put(op, r) : NULL;
  if (op->ft->closing_session) { /* its store was this answer's frames */
    if (op->store_kind == ST_BORROWED) op->store = NULL;
    session_free(op->ft->closing_session);
    op->ft->closing_session = NULL;
  }
  op_finish_extra(op, r, 0, chart_content);
}

/* ---- read -------------------------------------------------------------- */

static void read_reply(void *arg, const vm_result_t *res);

static void read_send(op_t *op) {
  json_t *p = json_pack("{s:s, s:I, s:i}", "action", "read", "since", (json_int_t)op->since,
                        "limit", READ_LIMIT);
  op->calls++;
  op_ext(op, p, read_reply);
}

/* A store seeded at (run, since): the next reply of that run counts what
 * the ring lost in between. */
static store_t *store_seeded(const char *run, int64_t since, int64_t budget_us) {
  store_t *st = store_new(budget_us);
  if (!st) return NULL;
  record_reply_t seed;
  memset(&seed, 0, sizeof seed);
  seed.run_id = (char *)run;
  seed.first_seq = seed.last_seq = since;
  store_add_reply(st, &seed, NULL);
  return st;
}

static void read_reply(void *arg, const vm_result_t *res) {
  op_t *op = arg;
  frames_tool_t *ft = op->ft;
  op->vmc = NULL;
  if (op_vm_failed(op, res)) return;
  record_reply_t r;
  if (op_parse(op, res, &r) < 0) return;
  if (!op->resolved) {
    /* Where this read starts, now that the current run is known. */
    op->resolved = 1;
    int64_t since = op->since;
    if (op->cursor) {
      char run[CURSOR_RUN_ID_MAX + 1];
      int64_t seq = 0;
      cursor_decode(op->cursor, run, sizeof run, &seq, NULL, 0); /* checked at the start */
      since = cursor_resolve(run, seq, r.run_id, r.first_seq, &op->restarted);
    } else if (ft->read_run[0] && strcmp(ft->read_run, r.run_id) != 0) {
      op->restarted = 1;
      since = r.first_seq > 0 ? r.first_seq - 1 : 0;
    }
    op->store = store_seeded(r.run_id, since, summary_budget_us(op->budget_ms, r.refresh_rate));
    if (since != op->since) {
      op->since = since;
      record_reply_close(&r);
      read_send(op);
      return;
    }
  }
  store_add_reply(op->store, &r, NULL);
  snprintf(op->cur_run, sizeof op->cur_run, "%s", r.run_id);
  int more = r.more;
  record_reply_close(&r);
  op->cur_seq = store_last_seq(op->store);
  if (more && op->calls < READ_MAX_CALLS) {
    op->since = store_last_seq(op->store);
    read_send(op);
    return;
  }
  read_finish(op);
}

static void wait_timer(uv_timer_t *t) {
  op_t *op = container_of(t, op_t, timer);
  read_again(op);
}

static void session_read_drained(void *arg, session_t *s, const session_status_t *st);

/* Looks again for frames: a drain in a session, a watcher read outside. */
static void read_again(op_t *op) {
  frames_tool_t *ft = op->ft;
  if (ft->session && op->store_kind == ST_TAP) {
    op->waiting_session = 1;
    session_drain(ft->session, session_read_drained, op);
    return;
  }
  op->since = op->store ? store_last_seq(op->store) : op->since;
  op->calls = 0;
  read_send(op);
}

static void read_finish(op_t *op) {
  frames_tool_t *ft = op->ft;
  uint64_t now = uv_now(ft->loop);
  int64_t found = op->store ? (int64_t)store_frames_seen(op->store) : 0;
  if (found == 0 && op->wait_ms > 0 && now < op->t0 + (uint64_t)op->wait_ms) {
    if (op->call && now >= op->last_progress + PROGRESS_EVERY_MS) {
      op->last_progress = now;
      tool_call_progress(op->call, (double)(now - op->t0), op->wait_ms, "waiting for frames");
    }
    uint64_t left = op->t0 + (uint64_t)op->wait_ms - now;
    op_timer(op, left < WAIT_POLL_MS ? left : WAIT_POLL_MS, wait_timer);
    return;
  }
  if (!ft->session || op->store_kind != ST_TAP) {
    snprintf(ft->read_run, sizeof ft->read_run, "%s", op->cur_run);
    ft->read_seq = op->cur_seq;
  }
  diag_step(op);
}

static void session_read_drained(void *arg, session_t *s, const session_status_t *st) {
  op_t *op = arg;
  if (op_gone(op, s, 0)) return;
  if (st->diag != DIAG_NONE || st->rpc_code != 0) {
    op_fail_status(op, st);
    return;
  }
  if (!op->restarted && store_take_restarted(session_store(s))) op->restarted = 1;
  snprintf(op->cur_run, sizeof op->cur_run, "%s",
           store_run_id(session_store(s)) ? store_run_id(session_store(s)) : "");
  op->cur_seq = store_last_seq(session_store(s));
  read_finish(op);
}

/* A read inside a session serves what the session drained: by default the
 * frames since the previous read (the session's read tap), with a cursor
 * the kept frames after it. */
static void read_in_session(op_t *op) {
  frames_tool_t *ft = op->ft;
  session_t *s = ft->session;
  if (op->cursor) {
    /* Frames after the cursor among the newest the session keeps. */
    char run[CURSOR_RUN_ID_MAX + 1];
    int64_t seq = 0;
    cursor_decode(op->cursor, run, sizeof run, &seq, NULL, 0);
    store_t *all = session_store(s);
    const char *cur = store_run_id(all) ? store_run_id(all) : "";
    if (strcmp(run, cur) != 0) {
      op->restarted = 1;
      seq = 0;
    }
    /* The kept frames of the current run are the newest ones whose seq
     * keeps falling as we walk back. */
    size_t n = store_recent_count(all), from = n;
    int64_t prev = INT64_MAX;
    while (from > 0) {
      const frame_t *f = store_recent_at(all, from - 1);
      if (f->seq >= prev || f->seq <= seq) break;
      prev = f->seq;
      from--;
    }
    op->store = store_seeded(cur, seq, session_budget_us(s));
    if (op->store && from < n) {
      frame_t *frames = calloc(n - from, sizeof *frames);
      for (size_t i = from; frames && i < n; i++) frames[i - from] = *store_recent_at(all, i);
      record_reply_t rr;
      memset(&rr, 0, sizeof rr);
      rr.run_id = (char *)cur;
      rr.records = frames;
      rr.nrecords = frames ? n - from : 0;
      rr.first_seq = frames ? frames[0].seq : 0;
      rr.last_seq = frames ? frames[n - from - 1].seq : 0;
      store_add_reply(op->store, &rr, NULL);
      free(frames); /* shallow copies: the frames stay the session's */
    }
    op->store_kind = ST_OWNED;
    op->waiting_session = 1;
    session_drain(s, session_read_drained, op);
    return;
  }
  /* The read tap collects everything since the previous read; this read
   * takes it over and a fresh one starts. */
  op->store = ft->read_tap;
  op->store_kind = ST_TAP;
  ft->read_tap = NULL;
  frames_tool_new_read_tap(ft);
  op->waiting_session = 1;
  session_drain(s, session_read_drained, op);
}

static void do_read(op_t *op) {
  frames_tool_t *ft = op->ft;
  if (ft->session && session_active(ft->session)) {
    read_in_session(op);
    return;
  }
  op->since = ft->read_run[0] ? ft->read_seq : 0;
  read_send(op);
}

/* ---- status ------------------------------------------------------------ */

static json_t *watcher_json(const record_reply_t *r) {
  json_t *w = json_pack("{s:s, s:b, s:b, s:f, s:I, s:I, s:I, s:I}", "runId", r->run_id,
                        "collecting", r->collecting, "framesEnabled", r->frames_enabled,
                        "refreshRate", r->refresh_rate, "firstSeq", (json_int_t)r->first_seq,
                        "lastSeq", (json_int_t)r->last_seq, "pending", (json_int_t)r->pending,
                        "droppedAttributions", (json_int_t)r->dropped_attributions);
  if (r->lifecycle) json_object_set_new(w, "lifecycle", json_string(r->lifecycle));
  if (r->interaction_id) {
    json_object_set_new(w, "interactionId", json_string(r->interaction_id));
    json_object_set_new(w, "linkedBy", json_string(r->linked_by));
  }
  return w;
}

static void status_answer(op_t *op) {
  frames_tool_t *ft = op->ft;
  json_t *r = result_base(op);
  if (op->extra == NULL && ft->last_watcher) json_object_set(r, "watcher", ft->last_watcher);
  json_object_set_new(r, "clock", summary_clock_to_json(&ft->clock));
  if (ft->session) json_object_set_new(r, "session", session_to_json(ft->session));
  op_finish(op, r, 0);
}

static void status_clock_reply(void *arg, const vm_result_t *res) {
  op_t *op = arg;
  op->vmc = NULL;
  if (res->diag == DIAG_NONE && res->rpc_code == 0) {
    record_reply_t r;
    char err[RECORD_ERR_LEN];
    if (record_reply_parse(&r, res->result, err, sizeof err) == 0) {
      frames_tool_note_reply(op->ft, &r);
      record_reply_close(&r);
    }
  }
  status_answer(op); /* the clock is evidence; its absence is no failure */
}

static void status_watcher_reply(void *arg, const vm_result_t *res) {
  op_t *op = arg;
  op->vmc = NULL;
  if (op_vm_failed(op, res)) return;
  record_reply_t r;
  if (op_parse(op, res, &r) < 0) return;
  json_decref(op->ft->last_watcher);
  op->ft->last_watcher = watcher_json(&r);
  int64_t last = r.last_seq;
  record_reply_close(&r);
  if (op->ft->clock.seen < SUMMARY_CLOCK_MIN_SAMPLES && last > 0) {
    int64_t since = last > CLOCK_TOPUP ? last - CLOCK_TOPUP : 0;
    op_ext(op, json_pack("{s:s, s:I, s:i}", "action", "read", "since", (json_int_t)since, "limit",
                         CLOCK_TOPUP),
           status_clock_reply);
    return;
  }
  status_answer(op);
}

static void status_refreshed(void *arg, const vm_result_t *res) {
  op_t *op = arg;
  op->vmc = NULL;
  if (res->diag != DIAG_NONE) {
    op_fail_diag(op, res->diag, res->detail);
    return;
  }
  const char *w = json_string_value(json_object_get(res->result, "watcher"));
  if (w && strcmp(w, "present") != 0) {
    op_fail_diag(op, json_is_true(json_object_get(res->result, "paused")) ? DIAG_ISOLATE_PAUSED
                                                                          : DIAG_WATCHER_MISSING,
                 NULL);
    return;
  }
  if (json_is_true(json_object_get(res->result, "paused"))) {
    op_fail_diag(op, DIAG_ISOLATE_PAUSED, NULL);
    return;
  }
  op_ext(op, json_pack("{s:s}", "action", "status"), status_watcher_reply);
}

/* ---- start, mark ------------------------------------------------------- */

static void started(void *arg, session_t *s, const session_status_t *st) {
  op_t *op = arg;
  frames_tool_t *ft = op->ft;
  ft->opening = 0;
  if (op_gone(op, s, 1)) return;
  if (!s) {
    op_fail_status(op, st);
    return;
  }
  ft->session = s;
  frames_tool_new_read_tap(ft);
  if (op->action == A_CAPTURE) {
    op->own_session = 1;
    capture_begin(op);
    return;
  }
  json_t *r = result_base(op);
  json_object_set_new(r, "session", session_to_json(s));
  if (ft->last_watcher) json_object_set(r, "watcher", ft->last_watcher);
  op_finish(op, r, 0);
}

static void open_session(op_t *op) {
  frames_tool_t *ft = op->ft;
  char id[32];
  snprintf(id, sizeof id, "s%u", ++ft->session_count);
  session_options_t o = {id, op->interaction_id, op->linked_by, op->budget_ms, {0}};
  memcpy(o.track, op->track, sizeof o.track);
  ft->opening = 1;
  op->waiting_session = 1;
  session_open(ft->loop, ft->app, &o, frames_tool_on_session_reply, ft, started, op);
}

static void do_start(op_t *op) {
  frames_tool_t *ft = op->ft;
  if (ft->session) {
    json_t *r = result_base(op);
    json_t *so = session_to_json(ft->session);
    json_object_set_new(so, "alreadyActive", json_true());
    json_object_set_new(r, "session", so);
    op_finish(op, r, 0);
    return;
  }
  if (ft->opening) {
    op_fail_text(op, "start: a session is being opened by another call; try again");
    return;
  }
  open_session(op);
}

static void mark_reply(void *arg, const vm_result_t *res) {
  op_t *op = arg;
  op->vmc = NULL;
  if (op_vm_failed(op, res)) return;
  record_reply_t r;
  if (op_parse(op, res, &r) < 0) return;
  record_reply_close(&r);
  if (op->ft->session) session_set_interaction(op->ft->session, op->interaction_id, op->linked_by);
  json_t *r2 = result_base(op);
  json_t *i = json_pack("{s:s}", "state", op->interaction_id ? "begun" : "ended");
  if (op->interaction_id) {
    json_object_set_new(i, "interactionId", json_string(op->interaction_id));
    json_object_set_new(i, "linkedBy", json_string(op->linked_by ? op->linked_by : "agent"));
  }
  json_object_set_new(r2, "interaction", i);
  if (op->ft->session) json_object_set_new(r2, "session", session_to_json(op->ft->session));
  op_finish(op, r2, 0);
}

static void do_mark(op_t *op) {
  json_t *p = json_pack("{s:s}", "action", "mark");
  if (op->interaction_id) {
    json_object_set_new(p, "interactionId", json_string(op->interaction_id));
    json_object_set_new(p, "linkedBy", json_string(op->linked_by ? op->linked_by : "agent"));
  }
  op_ext(op, p, mark_reply);
}

/* ---- stop, capture ----------------------------------------------------- */

static void stopped(void *arg, session_t *s, const session_status_t *st) {
  op_t *op = arg;
  frames_tool_t *ft = op->ft;
  if (op->cancelled && s && !session_active(s)) { /* stopped, nobody to tell */
    if (ft->session == s) ft->session = NULL;
    frames_tool_drop_read_tap(ft, s);
    op->own_session = 0;
    op_gone(op, s, 0);
    session_free(s);
    return;
  }
  if (op_gone(op, s, 0)) return;
  int app_gone = st->diag == DIAG_NOT_CONNECTED || st->diag == DIAG_CONNECTION_REJECTED ||
                 st->diag == DIAG_WATCHER_MISSING;
  if ((st->diag != DIAG_NONE || st->rpc_code != 0) && !app_gone) {
    op_fail_status(op, st); /* the session stays active: try again */
    return;
  }
  /* The session is over: its store becomes this answer's frames. */
  op->own_session = 0;
  ft->session = NULL;
  frames_tool_drop_read_tap(ft, s);
  ft->closing_session = s;
  store_t *all = session_store(s);
  if (op->store && op->store_kind == ST_TAP) {
    session_tap_detach(s, op->store);
    op->store_kind = ST_OWNED;
  }
  if (!op->store) {
    op->store = all;
    op->store_kind = ST_BORROWED; /* the session frees it */
  }
  if (store_take_restarted(all)) op->restarted = 1;
  op->facts.frames_lost = 0;
  if (app_gone) {
    op_fail_diag(op, st->diag, st->detail);
    ft->closing_session = NULL;
    session_free(s);
    return;
  }
  diag_step(op);
}

static void do_stop(op_t *op) {
  frames_tool_t *ft = op->ft;
  if (!ft->session) {
    op_fail_text(op, "stop: no session is active; call action=start first");
    return;
  }
  if (!session_active(ft->session)) {
    op_fail_text(op, "stop: the session is being opened or closed by another call; try again");
    return;
  }
  op->waiting_session = 1;
  session_close(ft->session, stopped, op);
}

static void capture_tick(uv_timer_t *t);

static void capture_window_drained(void *arg, session_t *s, const session_status_t *st) {
  op_t *op = arg;
  if (op_gone(op, s, 0)) return;
  if (st->diag != DIAG_NONE || st->rpc_code != 0) {
    op_fail_status(op, st);
    return;
  }
  session_tap_detach(s, op->store);
  op->store_kind = ST_OWNED;
  if (store_take_restarted(op->store)) op->restarted = 1;
  diag_step(op);
}

static void capture_tick(uv_timer_t *t) {
  op_t *op = container_of(t, op_t, timer);
  frames_tool_t *ft = op->ft;
  uint64_t now = uv_now(ft->loop), end = op->t0 + (uint64_t)op->duration_ms;
  if (now < end) {
    if (op->call) {
      char msg[96];
      uint64_t frames = op->store ? store_frames_seen(op->store)
                                  : (ft->session ? store_frames_seen(session_store(ft->session)) : 0);
      snprintf(msg, sizeof msg, "recording: %llu ms of %d, %llu frames",
               (unsigned long long)(now - op->t0), op->duration_ms, (unsigned long long)frames);
      tool_call_progress(op->call, (double)(now - op->t0), op->duration_ms, msg);
    }
    uint64_t left = end - now;
    op_timer(op, left < PROGRESS_EVERY_MS ? left : PROGRESS_EVERY_MS, capture_tick);
    return;
  }
  if (!ft->session) {
    op_fail_text(op, "capture: the session ended before the capture did");
    return;
  }
  op->waiting_session = 1;
  if (op->own_session)
    session_close(ft->session, stopped, op);
  else
    session_drain(ft->session, capture_window_drained, op);
}

static void capture_begin(op_t *op) {
  op->t0 = uv_now(op->ft->loop);
  capture_tick(&op->timer);
}

static void do_capture(op_t *op) {
  frames_tool_t *ft = op->ft;
  if (op->duration_ms < 0) op->duration_ms = 3000;
  if (ft->session) {
    /* Inside a session: measure this window, leave the session running. */
    op->store = store_new(session_budget_us(ft->session));
    if (!op->store || session_tap_attach(ft->session, op->store) < 0) {
      op_fail_text(op, "capture: too many captures at once");
      return;
    }
    op->store_kind = ST_TAP;
    capture_begin(op);
    return;
  }
  if (ft->opening) {
    op_fail_text(op, "capture: a session is being opened by another call; try again");
    return;
  }
  open_session(op);
}

/* ---- chart: "svg" (issue 8) -------------------------------------------- */

/* Writes the chart of the frames this stop/capture answer covers (the
 * store's kept frames, of the interaction when stop filters by one) to
 * <chart-dir>/telescope-<session>-<UTC time>.svg, puts "chart" {path, uri}
 * into r and returns the resource_link block for the content (resource_link
 * exists from 2025-06-18 on; earlier clients find the path in the text).
 * A chart that cannot be written does not fail the call: the answer has no
 * "chart", a text block says why, and a warning is logged. Called before
 * the closing session is freed (its id and budget are read here). */
static json_t *chart_put(op_t *op, json_t *r) {
  frames_tool_t *ft = op->ft;
  if (!op->call) return NULL;
  session_t *s = ft->closing_session ? ft->closing_session : ft->session;
  int64_t budget = s ? session_budget_us(s) : summary_budget_us(op->budget_ms, ft->w.refresh_rate);
  const char *iid = op->action == A_STOP ? op->interaction_id : NULL;
  size_t n = op->store ? store_recent_count(op->store) : 0, m = 0;
  frame_t *frames = n ? calloc(n, sizeof *frames) : NULL; /* shallow copies */
  for (size_t i = 0; frames && i < n; i++) {
    const frame_t *f = store_recent_at(op->store, i);
    if (!iid || (f->interaction_id && !strcmp(f->interaction_id, iid))) frames[m++] = *f;
  }
  char title[256], when[32], name[128], path[4352], uri[13100], err[512];
  struct timespec ts;
  struct tm tm;
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  strftime(when, sizeof when, "%Y%m%dT%H%M%S", &tm);
  const char *sid = s ? session_id(s) : "none";
  snprintf(title, sizeof title, "telescope %s %s%s%s", sid, action_names[op->action],
           iid ? " of " : "", iid ? iid : "");
  snprintf(name, sizeof name, "telescope-%s-%s.%03ldZ.svg", sid, when, ts.tv_nsec / 1000000);
  char *svg = n && !frames ? NULL : chart_svg(frames, m, budget, title);
  int rc = svg ? chart_file_write(ft->cfg->chart_dir, name, svg, path, sizeof path, err, sizeof err)
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
  snprintf(desc, sizeof desc, "SVG frame chart: %zu frames, %zu janky, budget %.1f ms", m, janky,
           (double)budget / 1000.0);
  return json_pack("[{s:s, s:s, s:s, s:s, s:s}]", "type", "resource_link", "uri", uri, "name",
                   strrchr(path, '/') + 1, "mimeType", "image/svg+xml", "description", desc);
}

/* ---- entry ------------------------------------------------------------- */

static char *dup_arg(json_t *args, const char *key) {
  const char *v = json_string_value(json_object_get(args, key));
  return v ? strdup(v) : NULL;
}

void frames_tool_run(frames_tool_t *ft, tool_call_t *call, json_t *args) {
  op_t *op = calloc(1, sizeof *op);
  if (!op) {
    tool_call_finish_text_error(call, "internal error: out of memory");
    return;
  }
  op->ft = ft;
  op->call = call;
  uv_timer_init(ft->loop, &op->timer);
  op->next = ft->ops;
  if (ft->ops) ft->ops->prev = op;
  ft->ops = op;
  op->t0 = op->last_progress = uv_now(ft->loop);
  tool_call_on_cancel(call, op_cancelled, op);

  const char *a = json_string_value(json_object_get(args, "action"));
  op->action = A_READ;
  for (int i = 0; a && i < (int)(sizeof action_names / sizeof *action_names); i++)
    if (!strcmp(a, action_names[i])) op->action = (action_t)i;
  op->uri = dup_arg(args, "vmServiceUri");
  op->interaction_id = dup_arg(args, "interactionId");
  op->linked_by = dup_arg(args, "linkedBy");
  op->cursor = dup_arg(args, "cursor");
  json_t *v;
  op->limit = (v = json_object_get(args, "limit")) ? (size_t)json_integer_value(v) : 20;
  const char *d = json_string_value(json_object_get(args, "detail"));
  op->detail = !d || !strcmp(d, "summary") ? D_SUMMARY : !strcmp(d, "frames") ? D_FRAMES : D_BLOCKS;
  op->wait_ms = (v = json_object_get(args, "waitMs")) ? (int)json_integer_value(v) : -1;
  op->duration_ms = (v = json_object_get(args, "durationMs")) ? (int)json_integer_value(v) : -1;
  op->budget_ms = (v = json_object_get(args, "budgetMs")) ? json_number_value(v) : 0;
  op->track[TRACK_WIDGETS] = json_is_true(json_object_get(args, "trackWidgets"));
  op->track[TRACK_LAYOUTS] = json_is_true(json_object_get(args, "trackLayouts"));
  op->track[TRACK_PAINTS] = json_is_true(json_object_get(args, "trackPaints"));
  const char *chart = json_string_value(json_object_get(args, "chart"));
  op->chart = chart && !strcmp(chart, "svg");

  if (op->cursor) {
    char run[CURSOR_RUN_ID_MAX + 1], err[160];
    int64_t seq;
    if (cursor_decode(op->cursor, run, sizeof run, &seq, err, sizeof err) < 0) {
      op_fail_text(op, "%s (pass a nextCursor from an earlier read, or leave it out)", err);
      return;
    }
  }
  if (op->chart && op->action != A_STOP && op->action != A_CAPTURE) {
    op_fail_text(op, "chart: only with action stop or capture (it charts the frames they return)");
    return;
  }
  if (op->action == A_MARK && op->linked_by && !op->interaction_id) {
    op_fail_text(op, "linkedBy: only with interactionId (mark without interactionId ends the "
                     "current interaction)");
    return;
  }

  char err[256];
  diag_code_t dc = frames_tool_ensure_app(ft, op->uri, err, sizeof err);
  if (dc != DIAG_NONE) {
    /* With no URI at all there is nothing more to say than the hint. */
    op_fail_diag(op, dc, ft->app ? err : NULL);
    return;
  }
  /* What the server knew of liveness before this call. */
  op->liv_known = ft->w.known;
  op->liv_before = ft->w.liveness;
  op->liv_before_ms = ft->w.at_ms;
  snprintf(op->liv_run, sizeof op->liv_run, "%s", ft->w.run_id);

  switch (op->action) {
  case A_STATUS: op->vmc = vm_app_refresh(ft->app, status_refreshed, op); break;
  case A_START: do_start(op); break;
  case A_MARK: do_mark(op); break;
  case A_READ: do_read(op); break;
  case A_STOP: do_stop(op); break;
  case A_CAPTURE: do_capture(op); break;
  }
}

void frames_tool_cancel_all(frames_tool_t *ft) {
  while (ft->ops) {
    op_t *op = ft->ops;
    op->call = NULL; /* mcp answers nothing for them */
    op->own_session = 0; /* the sessions are freed with the tool */
    op_free(op);
  }
}
