#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static log_level_t current = LOG_WARN;
static const char *proc_name = "telescope-mcp";
static const char *level_names[] = {"error", "warn", "info", "debug", "trace"};

void log_set_level(log_level_t level) { current = level; }
log_level_t log_get_level(void) { return current; }
void log_set_name(const char *name) { proc_name = name; }

int log_level_parse(const char *s) {
  for (int i = 0; i <= LOG_TRACE; i++)
    if (s && strcmp(s, level_names[i]) == 0) return i;
  return -1;
}

#define REDACTED "\xe2\x80\xa6redacted\xe2\x80\xa6"

void log_redact(const char *src, char *dst, unsigned long n) {
  unsigned long o = 0;
  if (n == 0) return;
  for (const char *p = src; *p && o + 1 < n;) {
    const char *sep = strstr(p, "://");
    if (!sep) {
      size_t len = strlen(p);
      if (len > n - 1 - o) len = n - 1 - o;
      memcpy(dst + o, p, len);
      o += len;
      break;
    }
    /* copy through "://" and the authority */
    const char *auth_end = sep + 3;
    while (*auth_end && *auth_end != '/' && *auth_end != '?' && *auth_end != ' ' &&
           *auth_end != '"' && *auth_end != '\n')
      auth_end++;
    size_t len = (size_t)(auth_end - p);
    if (len > n - 1 - o) len = n - 1 - o;
    memcpy(dst + o, p, len);
    o += len;
    p = auth_end;
    if (*p == '/' && o + 1 < n) {
      dst[o++] = *p++;
      /* the first path segment is the token, unless it is plainly not one */
      const char *seg = p;
      while (*p && *p != '/' && *p != '?' && *p != ' ' && *p != '"' && *p != '\n' &&
             *p != '&')
        p++;
      size_t seglen = (size_t)(p - seg);
      int is_token = seglen > 0 && !(seglen == 2 && memcmp(seg, "ws", 2) == 0);
      const char *put = is_token ? REDACTED : seg;
      size_t plen = is_token ? strlen(REDACTED) : seglen;
      if (plen > n - 1 - o) plen = n - 1 - o;
      memcpy(dst + o, put, plen);
      o += plen;
    }
  }
  dst[o] = '\0';
}

void log_msg(log_level_t level, const char *fmt, ...) {
  if (level > current) return;
  char raw[2048], clean[2304];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(raw, sizeof raw, fmt, ap);
  va_end(ap);
  log_redact(raw, clean, sizeof clean);
  /* One write per line so concurrent writers never interleave mid-line. */
  char line[2560];
  int len = snprintf(line, sizeof line, "%s: %s: %s\n", proc_name, level_names[level], clean);
  if (len > (int)sizeof line - 1) len = (int)sizeof line - 1;
  ssize_t ignored = write(STDERR_FILENO, line, (size_t)len);
  (void)ignored;
}
