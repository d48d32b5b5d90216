/* stdin/stdout of the MCP transport on a libuv loop (the thin shell around
 * framing.c). Not named stdio.h: server/ is on the include path and would
 * shadow <stdio.h>.
 * stdin may be a pipe, a socket, a TTY or a regular file; stdout a
 * pipe, a socket, a TTY or a file. Every stdout byte goes through here, so
 * responses are never interleaved and are flushed before exit. */
#ifndef TELESCOPE_STDIO_TRANSPORT_H
#define TELESCOPE_STDIO_TRANSPORT_H

#include <uv.h>

#include "framing.h"

typedef struct stdio_s stdio_t;

typedef struct {
  framing_line_cb on_line;   /* every framed line, or an oversize report */
  void (*on_eof)(void *arg); /* stdin ended or failed: once */
  void *arg;
} stdio_callbacks_t;

/* Opens fds in_fd/out_fd on loop (normally 0 and 1). Returns 0 or a UV_ error
 * (e.g. UV_EINVAL for an fd of an unusable kind). On error nothing is left
 * open and the struct is freed. */
int stdio_new(uv_loop_t *loop, int in_fd, int out_fd, size_t max_line, const stdio_callbacks_t *cbs,
              stdio_t **out);
/* Starts reading. Returns 0 or a UV_ error. */
int stdio_start(stdio_t *io);
/* Stops reading: no more lines, no on_eof. Idempotent. */
void stdio_stop(stdio_t *io);
/* Queues line (copied) plus "\n" on stdout. Dropped after a write error
 * (the client is gone) or once closing. */
void stdio_write_line(stdio_t *io, const char *line, size_t len);
/* Stops reading, lets queued writes finish, closes both ends, then calls done
 * from the loop and frees io. */
void stdio_close(stdio_t *io, void (*done)(void *arg), void *arg);

#endif
