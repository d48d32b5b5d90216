#include "sim_log.h"

#include <stdarg.h>
#include <stdio.h>

static int verbose;

void sim_log_set_verbose(int on) {
  verbose = on;
}

static void log_line(const char *fmt, va_list ap) {
  fputs("telescope-sim: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  fflush(stderr);
}

void sim_log(const char *fmt, ...) {
  va_list ap;
  if (!verbose) return;
  va_start(ap, fmt);
  log_line(fmt, ap);
  va_end(ap);
}

void sim_log_always(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  log_line(fmt, ap);
  va_end(ap);
}
