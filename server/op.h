/* op: one telescope_frames call in flight, and the state the actions share
 * (tool_ctx_t). This is the layer below the actions (action_*.c): it parses
 * the arguments once, holds what a call has in flight (one watcher call, one
 * session wait, one timer) so cancellation forgets all of it, collects
 * warnings, and ends the call with exactly one answer. It never calls up into
 * frames_tool.c.
 *
 * Rule for asynchronous completion: every callback an op receives comes
 * from the loop (wproto's from the VM client, sessions' from a uv_idle turn,
 * the op's own timer), never from inside the call that asked for it. */
#ifndef TELESCOPE_OP_H
#define TELESCOPE_OP_H

#include <jansson.h>
#include <uv.h>

#include "appfacts.h"
#include "config.h"
#include "diagnose.h"
#include "dtd.h"
#include "frame_events.h"
#include "rebuilds.h"
#include "sessions.h"
#include "tool.h"
#include "vm_isolate.h"
#include "workload.h"
#include "wproto.h"

#define OP_TEXT_CAP 65536 /* no call returns more text than this */
#define OP_MAX_WARNINGS 8

typedef enum { A_STATUS = 0, A_START, A_MARK, A_READ, A_STOP, A_CAPTURE, A_COMPARE, A__COUNT } action_t;
typedef enum { D_SUMMARY = 0, D_FRAMES, D_BLOCKS } detail_t;

#define TOOL_MAX_APPS 8 /* apps known at once; beyond, a gone one is pointed at the new URI */

/* One app the server knows (docs/tool.md "Several apps"): its connection
 * and everything measured of it. Each app has its own sessions, cursors and
 * facts; an app is never pointed elsewhere while it has a session open or a
 * call in flight. frames_tool.c owns the list; ops borrow (op_bind). */
typedef struct appref {
  vm_app_t *app;
  fe_t *fe;         /* its frames from Flutter.Frame events (no watcher) */
  rebuilds_t *rb;   /* its Flutter.RebuiltWidgets counts (trackRebuilds) */
  unsigned rb_on;   /* sessions_switched_on(REBUILDS) when rb last heard of it */
  wp_transport_t t; /* the watcher, or the frame events standing in */
  char uri[2048]; /* normalised ws URI ("" while it comes from the URI file) */
  char name[128]; /* the name the Dart Tooling Daemon lists it by ("": none) */
  unsigned n;     /* "app N" when it has no name: the order it became known in */
  int live;       /* connected now (its connection's events) */
  int launch;     /* named at launch (command line, URI file): never pointed elsewhere */
  int ops;        /* calls bound to it */
  sessions_t *sessions;
  appfacts_t facts;
  char read_run[RECORD_MAX_RUN_ID + 1]; /* outside sessions: where the previous read ended */
  int64_t read_seq;
  struct appref *next;
  void *ctx;      /* the tool_ctx_t it belongs to (events) */
} appref_t;

typedef struct op op_t;

/* What the actions share; frames_tool.c owns it. */
typedef struct {
  uv_loop_t *loop;
  const config_t *cfg;
  appref_t *apps;  /* every app known, in the order they became known */
  appref_t *app;   /* the app the latest call was bound to; NULL until a URI is known */
  unsigned napps, apps_seen;
  unsigned session_ids; /* the last session id given, over every app */
  dtd_t *dtd;      /* the Dart Tooling Daemon the app is found through; NULL without one */
  dtd_look_t *launch_look; /* --dtd-uri: the look at launch, in flight */
  op_t *ops; /* calls in flight */
} tool_ctx_t;

typedef struct {
  char *uri, *interaction_id, *linked_by, *cursor, *session;
  char *app; /* app: a name the DTD lists, or a VM-service URI */
  char *dtd_uri; /* dtdUri */
  size_t limit;
  int has_limit;
  detail_t detail;
  int has_detail;
  int wait_ms, duration_ms; /* -1 when absent */
  double budget_ms;         /* 0 when absent */
  int track[WP_TRACK__COUNT];
  int any_track;
  int chart; /* 0 none, 1 svg, 2 trace */
  int no_timeline; /* timeline: false */
  int has_timeline;
  int include_startup; /* includeStartup: true (start-up frames judged as any other) */
  int has_include_startup;
  json_t *budgets; /* stop/capture; a reference */
  json_t *workload_arg; /* start/capture: `workload` as given; a reference */
  workload_t workload;  /* ... checked (action_check_args); has_workload once it is */
  int has_workload;
  char *baseline, *candidate;
} op_args_t;

struct op {
  tool_ctx_t *ctx;
  tool_call_t *call; /* NULL once answered or cancelled */
  action_t action;
  op_args_t a;
  appref_t *app; /* the app this call talks to (op_bind; a reference in app->ops) */
  op_t *next, *prev;

  wp_call_t *wpc;         /* the one watcher call in flight */
  vm_call_t *vmc;         /* status: the connection refresh in flight */
  dtd_look_t *look;       /* the DTD look in flight (dtd_pick.c) */
  void (*after_pick)(op_t *op); /* ... and what the call does once it is answered */
  json_t *dtd_json;       /* the answer's `dtd` object, when the DTD was consulted */
  sessions_wait_t *wait;  /* the one session wait in flight */
  struct appsrc_cpu *cpu; /* the CPU-sample pull in flight (answer_where.h) */
  json_t *held;           /* ... and the answer it completes (a reference) */
  void (*after_where)(op_t *op, json_t *r); /* ... and what is done with it next */
  store_t *where_st;      /* ... over [where_from, where_to) of this store */
  uint64_t where_from, where_to;
  uv_timer_t timer;
  uint64_t t0; /* uv_now at the start of the call */
  uint64_t last_progress;
  char *warnings[OP_MAX_WARNINGS];
  size_t nwarnings;
  int warnings_dropped;

  /* liveness as the server knew it when the call began */
  int liv_known;
  int64_t liv_before;
  uint64_t liv_before_ms;
  char liv_run[RECORD_MAX_RUN_ID + 1];

  /* read / stop / capture */
  uint64_t from;          /* read: where it starts in its session's stream */
  int from_cursor;        /* ... given by a cursor (else the session's read position) */
  int after_stop;         /* read: the session's stop had answered when the read began */
  session_t *s;           /* the session this call acts on (a reference) */
  int joined;             /* start: joined a session another call opened */
  diagnose_facts_t facts; /* the empty-read decision */
  int64_t probe_base;
  uint64_t watch_until;
  uint64_t probe_until;
  store_t *outside;       /* a read outside sessions: what it fetched */
  char cur_run[RECORD_MAX_RUN_ID + 1];
  char since_run[RECORD_MAX_RUN_ID + 1]; /* the run `since` was taken in ("" : none) */
  int64_t since;
  int calls;
  int resolved;
  int restarted;
  int frame_events; /* a reply came from Flutter.Frame events: say what the watcher adds */
  int keep_on_fail; /* the empty-read decision of a closed session: a failed step is its diagnosis */
  wp_reply_cb after_wp; /* op_wp: the action's own reply handler */

  /* A workload (action_drive.c): how it is played and how it went. */
  int drive_mode;        /* 0 none, 1 the watcher's drive, 2 flutter_driver commands */
  int drive_run, drive_step; /* flutter_driver: the step playing (1-based) */
  size_t drive_cmd;      /* ... and its next command */
  json_t *drive_cmds;    /* ... the step's commands */
  json_t *drive_json;    /* summary.workload.drive: the outcome (a reference) */
  int drive_failed;      /* the drive failed: the answer is an error that says why */
  int drive_ended;       /* the drive is over (done or failed) */
  uint64_t drive_end_ms; /* when it ended (loop time) */
  uint64_t drive_bound;  /* loop time after which the capture stops it */
  char drive_run_id[RECORD_MAX_RUN_ID + 1]; /* the app's run the watcher's drive plays in */
  void (*drive_sent)(op_t *op);     /* the watcher took the drive (start answers) */
  void (*drive_ended_cb)(op_t *op); /* the drive is over and the app settled (capture) */
  void (*after_diag)(op_t *op, diag_code_t code); /* the empty-read decision ended */
};

/* Starts a call: arguments parsed (args borrowed, already schema-valid).
 * NULL when out of memory (the call is then answered). */
op_t *op_new(tool_ctx_t *ctx, tool_call_t *call, json_t *args);
/* Drops every op silently (shutdown). */
void op_cancel_all(tool_ctx_t *ctx);

/* Adds a line to the answer's `warnings` (printf-style). */
void op_warn(op_t *op, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The base of every answer: action, warnings, and the connection when the
 * call failed on it. New reference. */
json_t *op_result(op_t *op);
/* Ends the call: res stolen (NULL: out of memory), extra content stolen. */
void op_finish(op_t *op, json_t *res, int is_error, json_t *extra);
/* Ends the call with isError and one text line (argument problems). */
void op_fail_text(op_t *op, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Ends the call with a diagnosis (isError unless status or not an error). */
void op_fail_diag(op_t *op, diag_code_t code, const char *detail);
void op_fail_status(op_t *op, const wp_status_t *st);

/* One watcher request for this op (only one at a time). On failure to send
 * (OOM) the call is answered and -1 returned. Every good reply passes
 * through appfacts and the session manager first. */
int op_wp(op_t *op, const wp_request_t *req, wp_reply_cb cb);
/* The same for action drive (wp_call_drive). */
int op_wp_drive(op_t *op, const char *steps, int repeat, wp_reply_cb cb);
/* Forgets the watcher call in flight (its reply was handled). */
void op_timer(op_t *op, uint64_t ms, uv_timer_cb cb);
op_t *op_from_timer(uv_timer_t *t);

/* Every good watcher reply of an app: its facts, its sessions' check.
 * op_note_facts: the facts only (a reply of the sessions' own calls, which
 * they check themselves once they have taken it in). */
void op_note_reply(appref_t *app, const record_reply_t *r);
void op_note_facts(appref_t *app, const record_reply_t *r);

/* Binds the op to app (counted in app->ops until the op ends). */
void op_bind(op_t *op, appref_t *app);
/* "phone", or "app 2" when the daemon gave it no name. */
const char *op_app_label(const appref_t *app, char *buf, size_t n);
/* The apps as status lists them (token redacted; NULL when out of memory). */
json_t *op_apps_json(const tool_ctx_t *ctx);

#endif
