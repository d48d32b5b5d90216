#include "stdio_transport.h"
#include "container_of.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

#define READ_CHUNK 65536
/* How long shutdown waits for a client that stopped reading our stdout. */
#define FLUSH_TIMEOUT_MS 1000

typedef enum { END_STREAM, END_FILE } end_kind_t;

typedef union {
  uv_handle_t handle;
  uv_stream_t stream;
  uv_pipe_t pipe;
  uv_tty_t tty;
} stream_u;

struct stdio_s {
  uv_loop_t *loop;
  stdio_callbacks_t cbs;
  framing_t framing;

  end_kind_t in_kind;
  int in_fd;
  stream_u in;       /* when in_kind is END_STREAM */
  uv_fs_t in_req;    /* when in_kind is END_FILE */
  int in_req_active; /* a uv_fs_read is outstanding */
  int reading;       /* lines and EOF still wanted */
  char in_buf[READ_CHUNK];

  end_kind_t out_kind;
  int out_fd;
  stream_u out;
  int out_broken; /* a write failed: the reader is gone, drop the rest */
  size_t writes_pending;

  uv_timer_t flush_timer; /* bounds the wait for queued writes at close */

  int closing;
  int open_handles;
  void (*done)(void *arg);
  void *done_arg;
};

typedef struct {
  uv_write_t req;
  stdio_t *io;
  uv_buf_t buf;
} write_req_t;

static void maybe_finish_close(stdio_t *io);

/* Opens fd as a stream when it is one; a regular file (or a character device
 * such as /dev/null) is END_FILE: uv_pipe_open on a file aborts the process,
 * since epoll refuses regular files. */
static int open_end(stdio_t *io, int fd, int readable, stream_u *s, end_kind_t *kind) {
  uv_handle_type t = uv_guess_handle(fd);
  int rc;
  switch (t) {
    case UV_TTY:
      *kind = END_STREAM;
      rc = uv_tty_init(io->loop, &s->tty, fd, readable);
      break;
    case UV_NAMED_PIPE:
    case UV_TCP:
    case UV_UDP:
      *kind = END_STREAM;
      rc = uv_pipe_init(io->loop, &s->pipe, 0);
      if (rc == 0) {
        rc = uv_pipe_open(&s->pipe, fd);
        if (rc != 0) {
          uv_close(&s->handle, NULL);
          return rc;
        }
      }
      break;
    case UV_FILE:
      *kind = END_FILE;
      return 0;
    default:
      return UV_EINVAL;
  }
  if (rc == 0) {
    s->handle.data = io;
    io->open_handles++;
  }
  return rc;
}

int stdio_new(uv_loop_t *loop, int in_fd, int out_fd, size_t max_line, const stdio_callbacks_t *cbs,
              stdio_t **out) {
  stdio_t *io = calloc(1, sizeof *io);
  if (!io) return UV_ENOMEM;
  io->loop = loop;
  io->cbs = *cbs;
  io->in_fd = in_fd;
  io->out_fd = out_fd;
  framing_init(&io->framing, max_line);
  int rc = open_end(io, in_fd, 1, &io->in, &io->in_kind);
  if (rc != 0) goto fail_in;
  rc = open_end(io, out_fd, 0, &io->out, &io->out_kind);
  if (rc != 0) goto fail_out;
  uv_timer_init(loop, &io->flush_timer); /* cannot fail on Unix */
  io->flush_timer.data = io;
  io->open_handles++;
  *out = io;
  return 0;

fail_out:
  if (io->in_kind == END_STREAM) {
    /* The handle is closed on the loop; the struct must outlive that. */
    io->closing = 1;
    uv_close(&io->in.handle, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
  }
fail_in:
  framing_close(&io->framing);
  free(io);
  return rc;
}

static void line_cb(void *arg, const char *line, size_t len, int oversize) {
  stdio_t *io = arg;
  if (io->reading) io->cbs.on_line(io->cbs.arg, line, len, oversize);
}

static void input_ended(stdio_t *io) {
  if (!io->reading) return;
  framing_finish(&io->framing, line_cb, io);
  if (!io->reading) return;
  io->reading = 0;
  io->cbs.on_eof(io->cbs.arg);
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  stdio_t *io = container_of(h, stdio_t, in.handle);
  *buf = uv_buf_init(io->in_buf, sizeof io->in_buf);
}

static void read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  stdio_t *io = container_of(s, stdio_t, in.stream);
  if (nread > 0) {
    if (io->reading && framing_feed(&io->framing, buf->base, (size_t)nread, line_cb, io) != 0)
      log_error("out of memory while reading a line; the line was dropped");
    return;
  }
  if (nread == 0) return; /* EAGAIN */
  if (nread != UV_EOF) log_warn("reading stdin failed: %s", uv_strerror((int)nread));
  uv_read_stop(s);
  input_ended(io);
}

static void file_read_start(stdio_t *io);

static void file_read_cb(uv_fs_t *req) {
  stdio_t *io = container_of(req, stdio_t, in_req);
  ssize_t n = req->result;
  uv_fs_req_cleanup(req);
  io->in_req_active = 0;
  if (io->closing || !io->reading) {
    maybe_finish_close(io);
    return;
  }
  if (n > 0) {
    if (framing_feed(&io->framing, io->in_buf, (size_t)n, line_cb, io) != 0)
      log_error("out of memory while reading a line; the line was dropped");
    if (io->reading) file_read_start(io);
    return;
  }
  if (n < 0) log_warn("reading stdin failed: %s", uv_strerror((int)n));
  input_ended(io);
}

/* Offset -1 reads from the current position, so a file that a caller already
 * partly consumed, or a character device, reads like a pipe. */
static void file_read_start(stdio_t *io) {
  uv_buf_t b = uv_buf_init(io->in_buf, sizeof io->in_buf);
  io->in_req.data = io;
  int rc = uv_fs_read(io->loop, &io->in_req, io->in_fd, &b, 1, -1, file_read_cb);
  if (rc != 0) {
    log_warn("reading stdin failed: %s", uv_strerror(rc));
    input_ended(io);
    return;
  }
  io->in_req_active = 1;
}

int stdio_start(stdio_t *io) {
  io->reading = 1;
  if (io->in_kind == END_FILE) {
    file_read_start(io);
    return 0;
  }
  int rc = uv_read_start(&io->in.stream, alloc_cb, read_cb);
  if (rc != 0) io->reading = 0;
  return rc;
}

void stdio_stop(stdio_t *io) {
  if (!io->reading) return;
  io->reading = 0;
  if (io->in_kind == END_STREAM)
    uv_read_stop(&io->in.stream);
  else if (io->in_req_active)
    uv_cancel((uv_req_t *)&io->in_req); /* may fail if already running: the callback still comes */
}

static void write_cb(uv_write_t *req, int status) {
  write_req_t *w = (write_req_t *)req;
  stdio_t *io = w->io;
  if (status != 0 && !io->out_broken) {
    io->out_broken = 1;
    /* EPIPE: the client closed our stdout; SIGPIPE is ignored so we get here. */
    log_info("writing stdout failed (%s); dropping further output", uv_strerror(status));
  }
  free(w->buf.base);
  free(w);
  io->writes_pending--;
  maybe_finish_close(io);
}

void stdio_write_line(stdio_t *io, const char *line, size_t len) {
  if (io->out_broken) return;
  char *data = malloc(len + 1);
  if (!data) {
    log_error("out of memory: a response was dropped");
    return;
  }
  memcpy(data, line, len);
  data[len] = '\n';
  if (io->out_kind == END_FILE) {
    /* A regular file never blocks for long, and uv_write cannot poll it:
     * write synchronously, finishing partial writes. */
    size_t off = 0;
    while (off < len + 1) {
      uv_fs_t req;
      uv_buf_t b = uv_buf_init(data + off, (unsigned)(len + 1 - off));
      int n = uv_fs_write(io->loop, &req, io->out_fd, &b, 1, -1, NULL);
      uv_fs_req_cleanup(&req);
      if (n <= 0) {
        io->out_broken = 1;
        log_info("writing stdout failed (%s); dropping further output", uv_strerror(n));
        break;
      }
      off += (size_t)n;
    }
    free(data);
    return;
  }
  write_req_t *w = malloc(sizeof *w);
  if (!w) {
    free(data);
    log_error("out of memory: a response was dropped");
    return;
  }
  w->io = io;
  w->buf = uv_buf_init(data, (unsigned)(len + 1));
  int rc = uv_write(&w->req, &io->out.stream, &w->buf, 1, write_cb);
  if (rc != 0) {
    io->out_broken = 1;
    log_info("writing stdout failed (%s); dropping further output", uv_strerror(rc));
    free(data);
    free(w);
    return;
  }
  io->writes_pending++;
}

/* Shared by the three handles, so it finds the owner through data. */
static void close_cb(uv_handle_t *h) {
  stdio_t *io = h->data;
  io->open_handles--;
  maybe_finish_close(io);
}

/* Closing runs in steps, each resumed from a callback: wait for the file read
 * and the queued writes, close the handles, then report done. */
static void maybe_finish_close(stdio_t *io) {
  if (!io->closing || io->in_req_active || io->writes_pending > 0) return;
  if (!uv_is_closing((uv_handle_t *)&io->flush_timer))
    uv_close((uv_handle_t *)&io->flush_timer, close_cb);
  if (io->in_kind == END_STREAM && !uv_is_closing(&io->in.handle))
    uv_close(&io->in.handle, close_cb);
  if (io->out_kind == END_STREAM && !uv_is_closing(&io->out.handle))
    uv_close(&io->out.handle, close_cb);
  if (io->open_handles > 0) return;
  void (*done)(void *) = io->done;
  void *arg = io->done_arg;
  framing_close(&io->framing);
  free(io);
  if (done) done(arg);
}

/* The client stopped reading: closing the stream cancels the queued writes
 * (their callbacks run with UV_ECANCELED), which lets the close go on. */
static void flush_timeout_cb(uv_timer_t *t) {
  stdio_t *io = container_of(t, stdio_t, flush_timer);
  log_warn("stdout was not drained within %d ms; dropping %zu queued responses", FLUSH_TIMEOUT_MS,
           io->writes_pending);
  io->out_broken = 1;
  if (!uv_is_closing(&io->out.handle)) uv_close(&io->out.handle, close_cb);
}

void stdio_close(stdio_t *io, void (*done)(void *arg), void *arg) {
  stdio_stop(io);
  io->closing = 1;
  io->done = done;
  io->done_arg = arg;
  if (io->writes_pending > 0)
    uv_timer_start(&io->flush_timer, flush_timeout_cb, FLUSH_TIMEOUT_MS, 0);
  maybe_finish_close(io);
}
