/* Inside telescope_frames: the state frames_tool.c keeps and
 * frames_tool_actions.c drives. Not an API for other modules. */
#ifndef TELESCOPE_FRAMES_TOOL_INT_H
#define TELESCOPE_FRAMES_TOOL_INT_H

#include <jansson.h>
#include <uv.h>

#include "config.h"
#include "record.h"
#include "session.h"
#include "store.h"
#include "summary.h"
#include "tool.h"
#include "vm_isolate.h"

typedef struct op op_t;

struct frames_tool {
  uv_loop_t *loop;
  const config_t *cfg; /* borrowed, outlives the tool */
  json_t *input_schema;
  vm_app_t *app;                   /* NULL until a URI is known */
  session_t *session;              /* the active session (or the one a capture opened) */
  session_t *closing_session;      /* stopped, its answer being written */
  int opening;                     /* a session_open is under way */
  unsigned session_count;
  store_t *read_tap;               /* frames since the previous read of the session */
  struct {                         /* the latest valid watcher reply */
    int known;
    char run_id[RECORD_MAX_RUN_ID + 1];
    int64_t liveness;
    uint64_t at_ms; /* uv_now when it arrived */
    char lifecycle[16];
    int frames_enabled;
    double refresh_rate;
  } w;
  json_t *last_watcher;            /* the `watcher` object of the latest status */
  char read_run[RECORD_MAX_RUN_ID + 1]; /* outside sessions: where the previous read ended */
  int64_t read_seq;
  summary_clock_t clock;
  op_t *ops;                       /* calls in flight */
  void (*close_done)(void *arg);
  void *close_arg;
};

/* frames_tool_actions.c */
void frames_tool_run(frames_tool_t *ft, tool_call_t *call, json_t *args);
void frames_tool_cancel_all(frames_tool_t *ft);

/* frames_tool.c */
/* The app for this call: vmServiceUri when given (a different one
 * reconnects), else the command line's. DIAG_NONE, or why there is none. */
diag_code_t frames_tool_ensure_app(frames_tool_t *ft, const char *uri, char *err, size_t errlen);
/* Every valid watcher reply passes here: liveness, version, clock evidence. */
void frames_tool_note_reply(frames_tool_t *ft, const record_reply_t *r);
void frames_tool_on_session_reply(void *arg, const record_reply_t *r);
/* The session's read tap: a fresh one attached, or the current one dropped. */
void frames_tool_new_read_tap(frames_tool_t *ft);
void frames_tool_drop_read_tap(frames_tool_t *ft, session_t *s);

#endif
