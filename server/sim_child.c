#include "sim_child.h"
#include "container_of.h"

#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

/* After SIGTERM the sim gets this long to exit before SIGKILL. It normally
 * takes a few ms; the server's own exit must stay prompt. */
#define SIM_KILL_GRACE_MS 150
#define SIM_POLL_MS 5

struct sim_child {
  uv_loop_t *loop;
  uv_process_t proc;
  uv_pipe_t err;    /* the child's stderr, logged line by line (redacted) */
  uv_timer_t timer; /* polls for the URI file, then the SIGKILL grace */
  int stopping;     /* sim_child_stop was called */
  int exited;       /* the exit callback ran */
  int err_eof;      /* the child's stderr reached EOF */
  int ready;        /* the URI file exists */
  int64_t exit_status;
  int term_signal;
  int closing; /* handles still to close */
  void (*done)(void *arg);
  void *done_arg;
  char rbuf[4096];
  char line[512];
  size_t line_len;
  char dir[PATH_MAX];
  char file[PATH_MAX + 16];
};


/* Where to find the sim: next to our own executable (an install puts both in
 * bin/, a build tree both in the build dir), else the PATH. */
static void find_sim(char *out, size_t n) {
  char self[PATH_MAX];
  size_t size = sizeof self;
  if (uv_exepath(self, &size) == 0) {
    char *slash = strrchr(self, '/');
    if (slash) {
      *slash = '\0';
      int len = snprintf(out, n, "%s/telescope-sim", self);
      if (len > 0 && (size_t)len < n && access(out, X_OK) == 0) return;
    }
  }
  snprintf(out, n, "telescope-sim");
}

static void flush_line(sim_child_t *c) {
  if (c->line_len == 0) return;
  c->line[c->line_len] = '\0';
  log_warn("[sim] %s", c->line);
  c->line_len = 0;
}

static void err_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf) {
  sim_child_t *c = container_of((uv_pipe_t *)h, sim_child_t, err);
  *buf = uv_buf_init(c->rbuf, sizeof c->rbuf);
}

static void err_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  sim_child_t *c = container_of((uv_pipe_t *)s, sim_child_t, err);
  if (n < 0) {
    flush_line(c);
    c->err_eof = 1;
    uv_read_stop(s);
    return;
  }
  for (ssize_t i = 0; i < n; i++) {
    char ch = buf->base[i];
    if (ch == '\n') {
      flush_line(c);
    } else {
      c->line[c->line_len++] = ch;
      if (c->line_len == sizeof c->line - 1) flush_line(c);
    }
  }
}

static void handle_closed(uv_handle_t *h) {
  sim_child_t *c = h->data;
  if (--c->closing > 0) return;
  /* The sim writes under a temporary name and renames, so only the final
   * file can be left behind (unless it was killed mid-write). */
  if (c->file[0]) unlink(c->file);
  if (c->dir[0]) rmdir(c->dir);
  void (*done)(void *) = c->done;
  void *arg = c->done_arg;
  free(c);
  if (done) done(arg);
}

static void close_all(sim_child_t *c) {
  uv_handle_t *hs[] = {(uv_handle_t *)&c->proc, (uv_handle_t *)&c->err, (uv_handle_t *)&c->timer};
  c->closing = 3;
  for (size_t i = 0; i < 3; i++) {
    hs[i]->data = c;
    uv_close(hs[i], handle_closed);
  }
}

static void on_exit_cb(uv_process_t *p, int64_t status, int sig) {
  sim_child_t *c = container_of(p, sim_child_t, proc);
  c->exited = 1;
  c->exit_status = status;
  c->term_signal = sig;
  if (c->stopping) { /* this is the reap */
    close_all(c);
    return;
  }
  /* Before it was ready, sim_child_wait_ready reports it. */
  if (c->ready)
    log_warn("telescope-sim exited (status %lld, signal %d); tool calls will report not_connected",
             (long long)status, sig);
}

int sim_child_start(uv_loop_t *loop, char **argv, int argc, sim_child_t **out) {
  *out = NULL;
  for (int i = 0; i < argc; i++) {
    if (strncmp(argv[i], "--uri-file", 10) == 0) {
      log_error("--sim: --uri-file is chosen by telescope-mcp; leave it out");
      return UV_EINVAL;
    }
    /* The sim would print them on its stdout, which is not ours to pass on. */
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h") || !strcmp(argv[i], "--version")) {
      log_error("--sim: for the sim's own %s, run telescope-sim %s", argv[i], argv[i]);
      return UV_EINVAL;
    }
  }
  sim_child_t *c = calloc(1, sizeof *c);
  char **args = calloc((size_t)argc + 6, sizeof *args);
  char path[PATH_MAX];
  int err = UV_ENOMEM;
  if (!c || !args) goto fail_alloc;
  c->loop = loop;

  const char *tmp = getenv("TMPDIR");
  if (!tmp || !*tmp || strlen(tmp) > PATH_MAX - 32) tmp = "/tmp";
  snprintf(c->dir, sizeof c->dir, "%s/telescope-sim-XXXXXX", tmp);
  if (!mkdtemp(c->dir)) {
    err = UV_EIO;
    log_error("--sim: cannot create a temporary directory in %s", tmp);
    c->dir[0] = '\0';
    goto fail_alloc;
  }
  snprintf(c->file, sizeof c->file, "%s/vmservice.uri", c->dir);

  find_sim(path, sizeof path);
  int n = 0;
  args[n++] = path;
  args[n++] = "--port";
  args[n++] = "0";
  args[n++] = "--uri-file";
  args[n++] = c->file;
  for (int i = 0; i < argc; i++) args[n++] = argv[i];
  args[n] = NULL;

  uv_timer_init(loop, &c->timer);
  uv_pipe_init(loop, &c->err, 0);
  /* stdin: /dev/null (EOF does not stop the sim). stdout: /dev/null, since
   * the banner holds the token and our stdout is MCP only. */
  uv_stdio_container_t stdio[3] = {
      {.flags = UV_IGNORE},
      {.flags = UV_IGNORE},
      {.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE, .data.stream = (uv_stream_t *)&c->err},
  };
  uv_process_options_t opts = {
      .exit_cb = on_exit_cb, .file = path, .args = args, .stdio_count = 3, .stdio = stdio};
  err = uv_spawn(loop, &c->proc, &opts);
  free(args);
  *out = c;
  if (err != 0) {
    /* Nothing to reap: the handle still has to be closed. */
    c->exited = 1;
    log_error("--sim: cannot start %s: %s%s", path, uv_strerror(err),
              err == UV_ENOENT ? " (not next to telescope-mcp, nor on PATH)" : "");
    return err;
  }
  uv_read_start((uv_stream_t *)&c->err, err_alloc, err_read);
  log_info("--sim: started %s (pid %d)", path, c->proc.pid);
  return 0;

fail_alloc:
  free(args);
  if (c && c->dir[0]) rmdir(c->dir);
  free(c);
  if (err == UV_ENOMEM) log_error("--sim: out of memory");
  return err;
}

const char *sim_child_uri_file(const sim_child_t *c) {
  return c->file;
}

static void poll_tick(uv_timer_t *t) {
  sim_child_t *c = container_of(t, sim_child_t, timer);
  if (access(c->file, F_OK) == 0) c->ready = 1;
}

int sim_child_wait_ready(sim_child_t *c, unsigned timeout_ms, int *exit_status) {
  uint64_t end = uv_now(c->loop) + timeout_ms;
  uv_timer_start(&c->timer, poll_tick, 0, SIM_POLL_MS);
  /* An exited child: run on until its stderr is drained, so its complaint
   * (e.g. a bad option) is logged before we give up. */
  while (!c->ready && !(c->exited && c->err_eof)) {
    if (uv_now(c->loop) >= end) {
      break;
    }
    uv_run(c->loop, UV_RUN_ONCE);
  }
  uv_timer_stop(&c->timer);
  if (c->ready) return 0;
  if (c->exited) {
    if (exit_status) *exit_status = (int)c->exit_status;
    return UV_ESRCH;
  }
  log_error("--sim: telescope-sim wrote no URI within %u ms", timeout_ms);
  return UV_ETIMEDOUT;
}

static void kill_tick(uv_timer_t *t) {
  sim_child_t *c = container_of(t, sim_child_t, timer);
  log_warn("telescope-sim did not exit on SIGTERM; killing it");
  uv_process_kill(&c->proc, SIGKILL);
}

void sim_child_stop(sim_child_t *c, void (*done)(void *arg), void *arg) {
  if (!c) {
    if (done) done(arg);
    return;
  }
  c->stopping = 1;
  c->done = done;
  c->done_arg = arg;
  if (c->exited) {
    close_all(c);
    return;
  }
  /* The exit callback does the closing once the child is reaped. */
  uv_process_kill(&c->proc, SIGTERM);
  uv_timer_start(&c->timer, kill_tick, SIM_KILL_GRACE_MS, 0);
}
