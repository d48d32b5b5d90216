#include "actions.h"

#include <string.h>

#include "budgets.h"
#include "cursor.h"

/* Which arguments each action reads (bits of arg_t). An argument outside its
 * action's set is named in `warnings`: nothing is dropped silently. */
typedef enum {
  ARG_INTERACTION = 1 << 0,
  ARG_LINKED_BY = 1 << 1,
  ARG_CURSOR = 1 << 2,
  ARG_LIMIT = 1 << 3,
  ARG_DETAIL = 1 << 4,
  ARG_WAIT = 1 << 5,
  ARG_DURATION = 1 << 6,
  ARG_BUDGET = 1 << 7,
  ARG_TRACK = 1 << 8,
  ARG_SESSION = 1 << 9,
  ARG_BUDGETS = 1 << 10,
  ARG_COMPARE = 1 << 11,
  ARG_TIMELINE = 1 << 12,
  ARG_WORKLOAD = 1 << 13,
} arg_t;

static const unsigned uses[A__COUNT] = {
    [A_STATUS] = 0,
    [A_START] = ARG_INTERACTION | ARG_LINKED_BY | ARG_BUDGET | ARG_TRACK | ARG_TIMELINE | ARG_WORKLOAD,
    [A_MARK] = ARG_INTERACTION | ARG_LINKED_BY,
    [A_READ] = ARG_INTERACTION | ARG_CURSOR | ARG_LIMIT | ARG_DETAIL | ARG_WAIT | ARG_BUDGET | ARG_SESSION,
    [A_STOP] = ARG_INTERACTION | ARG_LIMIT | ARG_DETAIL | ARG_BUDGETS,
    [A_CAPTURE] = ARG_INTERACTION | ARG_LINKED_BY | ARG_LIMIT | ARG_DETAIL | ARG_DURATION |
                  ARG_BUDGET | ARG_TRACK | ARG_BUDGETS | ARG_TIMELINE | ARG_WORKLOAD,
    [A_COMPARE] = ARG_COMPARE,
};

static const char *const action_name[A__COUNT] = {"status", "start", "mark",   "read",
                                                  "stop",   "capture", "compare"};

int action_check_args(op_t *op) {
  const op_args_t *a = &op->a;
  const char *act = action_name[op->action];
  if (a->chart && op->action != A_STOP && op->action != A_CAPTURE) {
    op_fail_text(op, "chart: only with action stop or capture (it charts the frames they return)");
    return -1;
  }
  if (op->action == A_MARK && a->linked_by && !a->interaction_id) {
    op_fail_text(op, "linkedBy: only with interactionId (mark without interactionId ends the "
                     "current interaction)");
    return -1;
  }
  if (a->cursor) {
    char name[CURSOR_RUN_ID_MAX + 1], err[160];
    int64_t n;
    cursor_kind_t kind;
    if (cursor_decode_kind(a->cursor, &kind, name, sizeof name, &n, err, sizeof err) < 0) {
      op_fail_text(op, "%s (pass a nextCursor from an earlier read, or leave it out)", err);
      return -1;
    }
  }
  if (a->budgets && (op->action == A_STOP || op->action == A_CAPTURE)) {
    char err[256];
    if (budgets_validate(a->budgets, err, sizeof err) < 0) {
      op_fail_text(op, "%s", err);
      return -1;
    }
  }
  if (a->workload_arg && (op->action == A_START || op->action == A_CAPTURE)) {
    char err[320];
    if (workload_parse(&op->a.workload, a->workload_arg, err, sizeof err) < 0) {
      op_fail_text(op, "%s", err);
      return -1;
    }
    op->a.has_workload = 1;
  }
  if (a->cursor && a->session && op->action == A_READ) {
    op_fail_text(op, "session: give either session or cursor (a cursor names its session)");
    return -1;
  }
  unsigned u = uses[op->action];
  struct {
    unsigned bit;
    int given;
    const char *name;
  } given[] = {
      {ARG_INTERACTION, a->interaction_id != NULL, "interactionId"},
      {ARG_LINKED_BY, a->linked_by != NULL, "linkedBy"},
      {ARG_CURSOR, a->cursor != NULL, "cursor"},
      {ARG_LIMIT, a->has_limit, "limit"},
      {ARG_DETAIL, a->has_detail, "detail"},
      {ARG_WAIT, a->wait_ms >= 0, "waitMs"},
      {ARG_DURATION, a->duration_ms >= 0, "durationMs"},
      {ARG_BUDGET, a->budget_ms > 0, "budgetMs"},
      {ARG_TRACK, a->any_track, "trackWidgets/trackLayouts/trackPaints/trackRebuilds"},
      {ARG_TIMELINE, a->has_timeline, "timeline"},
      {ARG_TIMELINE, a->has_include_startup, "includeStartup"}, /* start/capture, as timeline */
      {ARG_SESSION, a->session != NULL, "session"},
      {ARG_BUDGETS, a->budgets != NULL, "budgets"},
      {ARG_COMPARE, a->baseline != NULL, "baseline"},
      {ARG_COMPARE, a->candidate != NULL, "candidate"},
      {ARG_WORKLOAD, a->workload_arg != NULL, "workload"},
  };
  for (size_t i = 0; i < sizeof given / sizeof *given; i++)
    if (given[i].given && !(u & given[i].bit)) op_warn(op, "%s: not used by %s; ignored", given[i].name, act);
  if ((u & ARG_LINKED_BY) && a->linked_by && !a->interaction_id && op->action != A_MARK)
    op_warn(op, "linkedBy: only with interactionId; ignored");
  if (a->has_limit && !a->has_detail && (u & ARG_DETAIL))
    op_warn(op, "limit: lists frames only with detail \"frames\" or \"blocks\"");
  return 0;
}

void action_run(op_t *op) {
  /* What the server knew of liveness before this call. */
  if (op->app) {
    op->liv_known = op->app->facts.known;
    op->liv_before = op->app->facts.liveness;
    op->liv_before_ms = op->app->facts.at_ms;
    memcpy(op->liv_run, op->app->facts.run_id, sizeof op->liv_run);
  }
  switch (op->action) {
  case A_STATUS: action_status(op); break;
  case A_START: action_start(op); break;
  case A_MARK: action_mark(op); break;
  case A_READ: action_read(op); break;
  case A_STOP: action_stop(op); break;
  case A_CAPTURE: action_capture(op); break;
  case A_COMPARE: action_compare(op); break;
  case A__COUNT: break;
  }
}
