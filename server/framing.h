/* Newline framing for the MCP stdio transport (pure: bytes in, lines out).
 *
 * Bytes arrive in chunks split anywhere; each complete line is handed to the
 * callback without its "\n" (and without a trailing "\r"). Empty lines are
 * dropped. A line longer than max_line bytes is reported once as oversize and
 * then discarded up to its newline, so memory never exceeds max_line + one
 * chunk's bookkeeping (Redis' client query buffer cap, in miniature). */
#ifndef TELESCOPE_FRAMING_H
#define TELESCOPE_FRAMING_H

#include <stddef.h>

/* line is NULL and len the bytes seen so far when oversize is set. */
typedef void (*framing_line_cb)(void *arg, const char *line, size_t len, int oversize);

typedef struct {
  char *buf;        /* the unfinished line, owned */
  size_t len;       /* bytes in buf */
  size_t cap;       /* allocated size of buf, never above max_line */
  size_t max_line;  /* longest line accepted, excluding "\n" */
  int discarding;   /* inside an oversize line: drop bytes until "\n" */
  size_t discarded; /* bytes dropped of the current oversize line */
} framing_t;

void framing_init(framing_t *f, size_t max_line);
void framing_close(framing_t *f);
/* Feeds len bytes; calls cb for every line completed by them. Returns 0, or -1
 * when memory ran out (the partial line is then dropped). */
int framing_feed(framing_t *f, const char *data, size_t len, framing_line_cb cb, void *arg);
/* At EOF: a last line without "\n" is still a line (a file may lack the final
 * newline). */
void framing_finish(framing_t *f, framing_line_cb cb, void *arg);

#endif
