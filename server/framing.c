#include "framing.h"

#include <stdlib.h>
#include <string.h>

void framing_init(framing_t *f, size_t max_line) {
  memset(f, 0, sizeof *f);
  f->max_line = max_line ? max_line : 1;
}

void framing_close(framing_t *f) {
  free(f->buf);
  f->buf = NULL;
  f->len = f->cap = 0;
}

/* Hands out one finished line: strip one trailing "\r", skip empty lines. */
static void emit(const char *line, size_t len, framing_line_cb cb, void *arg) {
  if (len > 0 && line[len - 1] == '\r') len--;
  if (len == 0) return;
  cb(arg, line, len, 0);
}

/* Appends to the unfinished line; the caller has checked the limit. */
static int append(framing_t *f, const char *data, size_t n) {
  if (f->len + n > f->cap) {
    size_t cap = f->cap ? f->cap : 4096;
    while (cap < f->len + n) cap *= 2;
    if (cap > f->max_line) cap = f->max_line;
    char *nb = realloc(f->buf, cap);
    if (!nb) return -1;
    f->buf = nb;
    f->cap = cap;
  }
  memcpy(f->buf + f->len, data, n);
  f->len += n;
  return 0;
}

static void start_discarding(framing_t *f, size_t seen, framing_line_cb cb, void *arg) {
  f->discarding = 1;
  f->discarded = seen;
  f->len = 0;
  /* Give the memory back: one oversize line should not pin 4 MiB forever. */
  free(f->buf);
  f->buf = NULL;
  f->cap = 0;
  cb(arg, NULL, seen, 1);
}

/* The limit counts every byte before the "\n" (a "\r" included). */
int framing_feed(framing_t *f, const char *data, size_t len, framing_line_cb cb, void *arg) {
  int rc = 0;
  while (len > 0) {
    const char *nl = memchr(data, '\n', len);
    size_t n = nl ? (size_t)(nl - data) : len; /* bytes of this line in the chunk */
    if (f->discarding) {
      f->discarded += n;
    } else if (f->len + n > f->max_line) {
      start_discarding(f, f->len + n, cb, arg);
    } else if (nl && f->len == 0) {
      emit(data, n, cb, arg); /* the common case, a whole line in one chunk: no copy */
    } else if (append(f, data, n) != 0) {
      f->len = 0;
      rc = -1;
    } else if (nl) {
      emit(f->buf, f->len, cb, arg);
      f->len = 0;
    }
    if (!nl) break;
    f->discarding = 0;
    f->discarded = 0;
    data = nl + 1;
    len -= n + 1;
  }
  return rc;
}

void framing_finish(framing_t *f, framing_line_cb cb, void *arg) {
  if (!f->discarding && f->len > 0) {
    emit(f->buf, f->len, cb, arg);
  }
  f->len = 0;
  f->discarding = 0;
  f->discarded = 0;
}
