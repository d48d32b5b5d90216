/* telescope-mcp: the wiring. Parses the command line, puts stdio, the MCP
 * session and the tool on one libuv loop, and shuts all of it down on stdin
 * EOF, SIGTERM or SIGINT: cancel what is in flight, flush stdout, close every
 * handle, prove the loop empty (uv_loop_close == 0), exit 0.
 * Exit codes: 0 normal, 1 fatal runtime error, 2 bad command line. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "check_cmd.h"
#include "config.h"
#include "container_of.h"
#include "frames_tool.h"
#include "log.h"
#include "loopstall.h"
#include "mcp.h"
#include "setup.h"
#include "sim_child.h"
#include "stdio_transport.h"
#include "vm_lws_ctx.h"

typedef struct {
  uv_loop_t loop;
  config_t cfg;
  stdio_t *io;
  mcp_session_t *mcp;
  frames_tool_t *tool;
  sim_child_t *sim; /* --sim: telescope-sim as our child; NULL otherwise */
  uv_signal_t sigterm, sigint;
  uv_timer_t grace; /* stdin EOF: calls in flight get a moment to finish */
  loopstall_t stall; /* the loop's longest stall, on stderr (loopstall.h) */
  uint64_t grace_until;
  int stopping;
} app_t;

/* After stdin EOF, calls in flight (e.g. a status whose connection attempt
 * is under way) may still finish within cfg.eof_grace_ms (150 by default,
 * so `telescope-mcp < session.jsonl` gets its answers); then they are
 * cancelled. */
/* A closed fd 0-2 would be reused by libuv for its own descriptors, which it
 * then refuses to close (an assertion aborts). stdin and stdout are the
 * transport, so without them there is nothing to do: fatal. A closed stderr
 * only silences logs. */
static int check_std_fds(void) {
  for (int fd = 0; fd <= 2; fd++) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    int nfd = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (nfd != fd) {
      if (nfd >= 0) close(nfd);
      return -1;
    }
    if (fd < 2) {
      log_error("%s is closed; it is the MCP transport", fd == 0 ? "stdin" : "stdout");
      return -1;
    }
  }
  return 0;
}

static void emit_line(void *arg, const char *line, size_t len) {
  app_t *app = arg;
  if (app->io) stdio_write_line(app->io, line, len);
}

static void on_line(void *arg, const char *line, size_t len, int oversize) {
  app_t *app = arg;
  if (oversize) {
    log_warn("a line of more than %zu bytes was skipped", app->cfg.max_line_bytes);
    mcp_session_handle_oversize(app->mcp, app->cfg.max_line_bytes);
  } else {
    mcp_session_handle_line(app->mcp, line, len);
  }
}

static void io_closed(void *arg) {
  app_t *app = arg;
  app->io = NULL;
}

static void sim_stopped(void *arg) {
  app_t *app = arg;
  /* Last: the writes queued by the steps above still go out before close. */
  if (app->io) stdio_close(app->io, io_closed, app);
}

static void tool_closed(void *arg) {
  app_t *app = arg;
  app->tool = NULL;
  /* The sim goes after the tool, so the tool's connection closes cleanly. */
  sim_child_t *sim = app->sim;
  app->sim = NULL;
  sim_child_stop(sim, sim_stopped, app);
}

/* --sim: starts the child and waits (briefly) for its URI file, which then
 * stands for --vm-service-uri-file. Returns the exit code to fail with, or 0. */
static int app_start_sim(app_t *app) {
  int status = 0;
  int err = sim_child_start(&app->loop, app->cfg.sim_argv, app->cfg.sim_argc, &app->sim);
  if (err == 0) err = sim_child_wait_ready(app->sim, 10000, &status);
  if (err == 0) {
    app->cfg.vm_service_uri_file = strdup(sim_child_uri_file(app->sim));
    if (app->cfg.vm_service_uri_file) return 0;
    log_error("out of memory");
  } else if (err == UV_ESRCH) {
    log_error("--sim: telescope-sim exited with status %d before it was ready", status);
  }
  sim_child_stop(app->sim, NULL, NULL);
  app->sim = NULL;
  uv_run(&app->loop, UV_RUN_DEFAULT);
  /* The sim's own "bad command line" is ours too: its options came from us. */
  return (err == UV_ESRCH && status == 2) || err == UV_EINVAL ? 2 : 1;
}

/* Starts the shutdown; every later step runs from a callback. */
static void app_stop(app_t *app, const char *why) {
  if (app->stopping) return;
  app->stopping = 1;
  log_info("shutting down: %s", why);
  if (app->io) stdio_stop(app->io);
  uv_close((uv_handle_t *)&app->sigterm, NULL);
  uv_close((uv_handle_t *)&app->sigint, NULL);
  loopstall_close(&app->stall);
  mcp_session_cancel_all(app->mcp);
  frames_tool_close(app->tool, tool_closed, app);
}

static void grace_tick(uv_timer_t *t) {
  app_t *app = t->data;
  if (mcp_session_inflight(app->mcp) == 0 || uv_now(&app->loop) >= app->grace_until) {
    uv_close((uv_handle_t *)&app->grace, NULL);
    app_stop(app, "stdin closed");
  }
}

static void on_eof(void *arg) {
  app_t *app = arg;
  if (app->stopping) return;
  if (mcp_session_inflight(app->mcp) == 0) {
    app_stop(app, "stdin closed");
    return;
  }
  app->grace_until = uv_now(&app->loop) + app->cfg.eof_grace_ms;
  uv_timer_init(&app->loop, &app->grace);
  app->grace.data = app;
  uv_timer_start(&app->grace, grace_tick, 5, 5);
}


static void on_signal(uv_signal_t *h, int signum) {
  app_t *app = signum == SIGTERM ? container_of(h, app_t, sigterm) : container_of(h, app_t, sigint);
  app_stop(app, signum == SIGTERM ? "SIGTERM" : "SIGINT");
}

/* Names a handle left open at exit, for the report of that bug. */
static void log_handle(uv_handle_t *h, void *arg) {
  (void)arg;
  log_error("  %s handle %p: %s, %s%s", uv_handle_type_name(h->type), (void *)h,
            uv_is_active(h) ? "active" : "inactive", uv_has_ref(h) ? "referenced" : "unreferenced",
            uv_is_closing(h) ? ", closing" : "");
}

int main(int argc, char **argv) {
  app_t app;
  memset(&app, 0, sizeof app);
  int rc = 1;

  if (argc > 1 && !strcmp(argv[1], "check")) return check_main(argc - 1, argv + 1);
  switch (config_parse(&app.cfg, argc, argv, stdout, stderr)) {
    case CONFIG_RUN:
      if (app.cfg.setup_client) {
        rc = setup_main(app.cfg.setup_client, app.cfg.setup_argv, app.cfg.setup_argc);
        config_close(&app.cfg);
        return rc;
      }
      break;
    case CONFIG_DONE:
      config_close(&app.cfg);
      return 0;
    case CONFIG_USAGE:
      config_close(&app.cfg);
      return 2;
  }
  log_set_name("telescope-mcp");
  log_set_level(app.cfg.log_level);
  if (check_std_fds() != 0) {
    config_close(&app.cfg);
    return 1;
  }
  /* A write to a closed stdout must come back as EPIPE, not kill us. */
  signal(SIGPIPE, SIG_IGN);

  if (uv_loop_init(&app.loop) != 0) {
    log_error("cannot create the event loop");
    goto fail_loop;
  }
  if (app.cfg.sim_argv && (rc = app_start_sim(&app)) != 0) goto fail_sim;
  rc = 1;
  app.tool = frames_tool_new(&app.loop, &app.cfg);
  if (!app.tool) {
    log_error("cannot create the tool (embedded schema unreadable?)");
    goto fail_tool;
  }
  app.mcp = mcp_session_new(emit_line, &app);
  if (!app.mcp) goto fail_mcp;
  mcp_tool_t t = frames_tool_mcp(app.tool);
  mcp_session_add_tool(app.mcp, &t);
  mcp_session_set_instructions(app.mcp, frames_tool_instructions);

  stdio_callbacks_t cbs = {on_line, on_eof, &app};
  int err =
      stdio_new(&app.loop, STDIN_FILENO, STDOUT_FILENO, app.cfg.max_line_bytes, &cbs, &app.io);
  if (err != 0) {
    log_error("cannot use stdin/stdout: %s", uv_strerror(err));
    goto fail_io;
  }
  uv_signal_init(&app.loop, &app.sigterm);
  uv_signal_init(&app.loop, &app.sigint);
  uv_signal_start(&app.sigterm, on_signal, SIGTERM);
  uv_signal_start(&app.sigint, on_signal, SIGINT);
  if ((err = stdio_start(app.io)) != 0) {
    log_error("cannot read stdin: %s", uv_strerror(err));
    app_stop(&app, "stdin unreadable");
    uv_run(&app.loop, UV_RUN_DEFAULT);
    goto fail_run;
  }
  if ((err = loopstall_start(&app.stall, &app.loop)) != 0)
    log_warn("cannot time the loop's stalls: %s", uv_strerror(err));
  log_info("telescope-mcp %s ready", TELESCOPE_VERSION);

  uv_run(&app.loop, UV_RUN_DEFAULT);
  rc = 0;

fail_run:
  mcp_session_free(app.mcp);
  app.mcp = NULL;
  vm_lws_close_strays(&app.loop);
  if (uv_loop_close(&app.loop) != 0) {
    log_error("handles were left open at exit:");
    uv_walk(&app.loop, log_handle, NULL);
    rc = 1;
  }
  config_close(&app.cfg);
  return rc;

fail_io:
  mcp_session_free(app.mcp);
fail_mcp:
  frames_tool_close(app.tool, NULL, NULL);
fail_tool:
  sim_child_stop(app.sim, NULL, NULL);
  uv_run(&app.loop, UV_RUN_DEFAULT);
fail_sim:
  uv_loop_close(&app.loop);
fail_loop:
  config_close(&app.cfg);
  return rc;
}
