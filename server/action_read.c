/* read (DESIGN 4; docs/tool.md "Delivery"): inside a session, the next
 * frames of the session's stream, each handed out once; outside, the
 * watcher's frames after the previous read outside sessions. */
#include "actions.h"

#include <stdio.h>
#include <string.h>

#include "answer_where.h"
#include "cursor.h"
#include "frames_answer.h"

#define READ_MAX_CALLS 16 /* watcher reads per call outside sessions (the ring holds 4096) */
#define WAIT_POLL_MS 100  /* waitMs: how often to look again */
#define PROGRESS_EVERY_MS 1000

static void session_drain(op_t *op);
static void outside_fetch(op_t *op);

/* With waitMs left, looks again later and returns 1. */
static int wait_more(op_t *op, uv_timer_cb again) {
  uint64_t now = uv_now(op->ctx->loop);
  if (op->a.wait_ms <= 0 || now >= op->t0 + (uint64_t)op->a.wait_ms) return 0;
  if (op->call && now >= op->last_progress + PROGRESS_EVERY_MS) {
    op->last_progress = now;
    tool_call_progress(op->call, (double)(now - op->t0), op->a.wait_ms, "waiting for frames");
  }
  uint64_t left = op->t0 + (uint64_t)op->a.wait_ms - now;
  op_timer(op, left < WAIT_POLL_MS ? left : WAIT_POLL_MS, again);
  return 1;
}

/* ---- inside a session -------------------------------------------------- */

static int filtered(const op_t *op) { return op->a.interaction_id != NULL; }

static uint64_t session_from(op_t *op) {
  return op->from_cursor ? op->from : session_read_pos(op->s);
}

/* The read's answer, with where to edit once the CPU samples came. */
static void read_finish(op_t *op, json_t *r) {
  answer_where_fit(op, json_object_get(r, "summary"));
  op_finish(op, r, 0, NULL);
}

/* Where to edit, over the janky frames a read of a closed session hands out
 * (issue 20). Not while frames are measured — in a session or outside one:
 * the VM builds the samples' reply on the UI isolate, so the pull would put
 * its own work into the frames the next read reports, and a read loop would
 * measure jank of its own making (docs/tool.md "Why at the close"). Not when
 * the read ends in a diagnosis (the app gone, paused or failing). */
static int read_where(op_t *op, json_t *r, store_t *st, uint64_t from, uint64_t to,
                      diag_code_t code, int64_t budget_us) {
  return code == DIAG_NONE && op->s && session_state(op->s) == SESSION_CLOSED &&
         answer_where_start(op, r, st, from, to, filtered(op), budget_us, read_finish);
}

static void session_answer(op_t *op, diag_code_t code, const wp_status_t *st) {
  session_t *s = op->s;
  json_t *r = op_result(op);
  if (!r) goto done;
  json_object_set_new(r, "session", session_to_json(s, uv_now(op->ctx->loop)));
  answer_take_t t;
  uint64_t from = session_from(op);
  if (answer_put_frames(op, r, session_store(s), from, filtered(op), 0, session_budget_us(s), &t) <
      0) {
    json_decref(r);
    r = NULL;
    goto done;
  }
  /* Any read moves the session's read position to where it ended; a read
   * filtered by interaction is a query and moves nothing, nor does a read
   * that was in flight when the stop answered: the stop's frames are the
   * stop's (listed, or left to the reads that come after it). */
  int in_flight = session_stop_took(s) && !op->after_stop;
  if (!filtered(op) && !in_flight && t.next > session_read_pos(s)) session_set_read_pos(s, t.next);
  if (in_flight && t.taken)
    op_warn(op, "session %s was stopped while this read waited: it lists these frames but takes "
                "none; they are the stop's (read the stopped session for them)", session_id(s));
  answer_put_cursor(r, 1, session_id(s), (int64_t)t.next);
  if (filtered(op) && !t.taken && session_store(s) &&
      !store_summary(session_store(s), op->a.interaction_id))
    op_warn(op, "interactionId \"%s\": no frame of session %s carries it (yet)",
            op->a.interaction_id, session_id(s));
  if (code == DIAG_NONE && st && wp_failed(st)) code = st->diag ? st->diag : DIAG_WATCHER_ERROR;
  if (code != DIAG_NONE) {
    json_t *d = diagnose_to_json(code, &op->facts);
    if (d && st && wp_failed(st) && st->detail[0]) {
      json_t *ev = json_object_get(d, "evidence");
      if (ev) json_object_set_new(ev, "detail", json_string(st->detail));
    }
    if (d) json_object_set_new(r, "diagnosis", d);
  }
  if (read_where(op, r, session_store(s), from, t.next, code, session_budget_us(s))) return;
done:
  op_finish(op, r, 0, NULL);
}

static void session_diag(op_t *op, diag_code_t code) {
  if (code == DIAG_NONE) { /* the decision asks for a re-read */
    session_drain(op);
    return;
  }
  session_answer(op, code, NULL);
}

static void session_again(uv_timer_t *t) { session_drain(op_from_timer(t)); }

/* The drain is done (or the session is closed): take, wait or diagnose. */
static void session_look(op_t *op, const wp_status_t *st) {
  session_t *s = op->s;
  store_t *store = session_store(s);
  uint64_t from = session_from(op);
  uint64_t avail = store ? store_range_count(store, from, UINT64_MAX, filtered(op) ? op->a.interaction_id : NULL) : 0;
  int evicted = store && from < store_first_kept(store);
  if (!op->restarted && store && store_take_restarted(store)) op->restarted = 1;
  if (avail || evicted) {
    answer_fill_facts(op, (int64_t)avail, 1, 1);
    session_answer(op, diagnose_step(&op->facts).code, wp_failed(st) ? st : NULL);
    return;
  }
  if (wp_failed(st) && session_state(s) != SESSION_CLOSED) {
    op_fail_status(op, st); /* nothing to hand out, and the app cannot be asked */
    return;
  }
  if (session_state(s) == SESSION_CLOSED) { /* a closed session has nothing more */
    session_answer(op, DIAG_NONE, NULL);
    return;
  }
  if (wait_more(op, session_again)) return;
  answer_fill_facts(op, 0, 0, 1);
  op->facts.restarted = op->restarted;
  op->after_diag = session_diag;
  answer_diagnose_empty(op);
}

static void session_drained(void *arg, session_t *s, const wp_status_t *st) {
  op_t *op = arg;
  op->wait = NULL;
  if (!s) { /* it never opened */
    op_fail_status(op, st);
    return;
  }
  session_unref(s);
  session_look(op, st);
}

static void session_drain(op_t *op) {
  if (session_state(op->s) == SESSION_CLOSED) {
    wp_status_t ok;
    wp_status_set(&ok, DIAG_NONE, 0, NULL);
    session_look(op, &ok);
    return;
  }
  if (!(op->wait = sessions_drain(op->app->sessions, op->s, session_drained, op)))
    op_fail_text(op, "internal error: out of memory");
}

/* ---- outside sessions -------------------------------------------------- */

/* Where this read starts in what it fetched: after the frames another read
 * outside sessions took meanwhile (reads that overlap share them out). */
static uint64_t outside_from(op_t *op) {
  store_t *st = op->outside;
  uint64_t p = store_first_kept(st), end = store_frames_seen(st);
  if (op->a.cursor || strcmp(op->app->read_run, op->cur_run) != 0) return p;
  while (p < end && store_at(st, p)->seq <= op->app->read_seq) p++;
  return p;
}

static void outside_answer(op_t *op, diag_code_t code) {
  json_t *r = op_result(op);
  if (!r) goto done;
  store_t *st = op->outside;
  int64_t budget = summary_budget_us(op->a.budget_ms, op->app->facts.refresh_rate);
  answer_take_t t;
  if (answer_put_frames(op, r, st, outside_from(op), filtered(op), 0, budget, &t) < 0) {
    json_decref(r);
    r = NULL;
    goto done;
  }
  int64_t end_seq = op->since;
  if (t.next > store_first_kept(st) && store_at(st, t.next - 1)) end_seq = store_at(st, t.next - 1)->seq;
  if (op->cur_run[0]) {
    if (!filtered(op) && (strcmp(op->app->read_run, op->cur_run) || end_seq > op->app->read_seq)) {
      snprintf(op->app->read_run, sizeof op->app->read_run, "%s", op->cur_run);
      op->app->read_seq = end_seq;
    }
    answer_put_cursor(r, 0, op->cur_run, end_seq);
  }
  if (code != DIAG_NONE) json_object_set_new(r, "diagnosis", diagnose_to_json(code, &op->facts));
done:
  op_finish(op, r, 0, NULL);
}

static void outside_diag(op_t *op, diag_code_t code) {
  if (code == DIAG_NONE) { /* re-read */
    op->calls = 0;
    op->since = store_last_seq(op->outside);
    outside_fetch(op);
    return;
  }
  outside_answer(op, code);
}

static void outside_again(uv_timer_t *t) {
  op_t *op = op_from_timer(t);
  op->calls = 0;
  op->since = store_last_seq(op->outside);
  outside_fetch(op);
}

static void outside_look(op_t *op) {
  store_t *st = op->outside;
  uint64_t from = outside_from(op), end = store_frames_seen(st);
  uint64_t avail = store_range_count(st, from, end, filtered(op) ? op->a.interaction_id : NULL);
  int blocks = 0;
  for (uint64_t p = from; p < end && !blocks; p++) blocks = store_at(st, p)->nblocks > 0;
  /* Frame events never carry blocks: a session would not add them. */
  answer_fill_facts(op, (int64_t)avail, blocks || op->frame_events, 0);
  op->facts.frames_lost = (int64_t)store_frames_lost(st);
  if (avail || op->restarted || op->facts.frames_lost) {
    outside_answer(op, diagnose_step(&op->facts).code);
    return;
  }
  if (wait_more(op, outside_again)) return;
  op->after_diag = outside_diag;
  answer_diagnose_empty(op);
}

static void outside_reply(void *arg, const wp_status_t *st, const record_reply_t *r) {
  op_t *op = arg;
  if (wp_failed(st)) {
    op_fail_status(op, st);
    return;
  }
  if (!op->resolved) {
    /* Where this read starts, now that the current run is known. */
    op->resolved = 1;
    int64_t since = op->since;
    if (op->a.cursor) {
      char run[CURSOR_RUN_ID_MAX + 1];
      int64_t seq = 0;
      cursor_kind_t kind;
      cursor_decode_kind(op->a.cursor, &kind, run, sizeof run, &seq, NULL, 0);
      since = cursor_resolve(run, seq, r->run_id, r->first_seq, &op->restarted);
    } else if (op->since_run[0] && strcmp(op->since_run, r->run_id) != 0) {
      /* The run `since` belongs to, not the one another read outside
       * sessions may have moved op->app->read_run to meanwhile. */
      op->restarted = 1;
      since = r->first_seq > 0 ? r->first_seq - 1 : 0;
    }
    snprintf(op->cur_run, sizeof op->cur_run, "%s", r->run_id);
    /* A store seeded at (run, since): the next reply of that run counts
     * what the ring lost in between. */
    record_reply_t seed;
    memset(&seed, 0, sizeof seed);
    seed.run_id = (char *)r->run_id;
    seed.first_seq = seed.last_seq = since;
    op->outside = store_new_plain(); /* the answer summarises what it takes */
    if (!op->outside || store_add_reply(op->outside, &seed, NULL) < 0) {
      op_fail_text(op, "internal error: out of memory");
      return;
    }
    if (since != op->since) { /* the first reply read from the wrong place */
      op->since = since;
      outside_fetch(op);
      return;
    }
  }
  if (strcmp(op->cur_run, r->run_id) != 0) { /* restarted between two pages */
    op->restarted = 1;
    outside_look(op);
    return;
  }
  if (store_add_reply(op->outside, r, NULL) < 0) {
    op_fail_text(op, "internal error: out of memory");
    return;
  }
  /* Fetch no more than the read can hand out: a listing takes at most
   * `limit`, a summary what the store's window holds; the rest stays in the
   * watcher for the next read. */
  uint64_t want = op->a.detail != D_SUMMARY ? op->a.limit : STORE_WINDOW - WP_READ_LIMIT;
  if (r->more && op->calls < READ_MAX_CALLS && store_frames_seen(op->outside) < want) {
    op->since = store_last_seq(op->outside);
    outside_fetch(op);
    return;
  }
  outside_look(op);
}

static void outside_fetch(op_t *op) {
  wp_request_t req = {WP_READ, op->since, 0, NULL, NULL};
  op->calls++;
  op_wp(op, &req, outside_reply);
}

/* ---- entry ------------------------------------------------------------- */

void action_read(op_t *op) {
  session_t *s = NULL;
  char name[CURSOR_RUN_ID_MAX + 1] = "";
  int64_t n = 0;
  if (op->a.cursor) {
    cursor_kind_t kind;
    cursor_decode_kind(op->a.cursor, &kind, name, sizeof name, &n, NULL, 0); /* checked */
    if (kind == CURSOR_SESSION) {
      if (!(s = sessions_find(op->app->sessions, name))) {
        op_fail_text(op, "cursor: session %s is no longer kept (the last %d closed sessions are); "
                         "read without cursor", name, SESSIONS_HISTORY);
        return;
      }
      op->from = (uint64_t)n;
      op->from_cursor = 1;
    } else if ((s = sessions_current(op->app->sessions))) {
      op_warn(op, "cursor: it is from a read outside sessions; reading session %s from its read "
                  "position instead", session_id(s));
    }
  } else if (op->a.session) {
    if (!(s = sessions_find(op->app->sessions, op->a.session))) {
      op_fail_text(op, "session: no session \"%s\" (the open ones and the last %d closed are kept)",
                   op->a.session, SESSIONS_HISTORY);
      return;
    }
  } else {
    s = sessions_current(op->app->sessions);
  }
  if (s) {
    if (op->a.budget_ms > 0)
      op_warn(op, "budgetMs: not applied; session %s judges jank by the budget it started with "
                  "(%.1f ms)", session_id(s), (double)session_budget_us(s) / 1000.0);
    session_ref(s);
    op->s = s;
    op->after_stop = session_stop_took(s);
    session_drain(op);
    return;
  }
  if (op->a.cursor) {
    /* From the cursor's place: one call when its run is still the app's
     * (outside_reply fetches again from the right place after a restart). */
    op->since = n;
    snprintf(op->since_run, sizeof op->since_run, "%s", name);
  } else {
    op->since = op->app->read_run[0] ? op->app->read_seq : 0;
    snprintf(op->since_run, sizeof op->since_run, "%s", op->app->read_run);
  }
  outside_fetch(op);
}
