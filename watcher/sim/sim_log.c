#include "sim_log.h"

#include <stdarg.h>
#include <stdio.h>

static int verbose;

void sim_log_set_verbose(int on) {
  verbose = on;
}

void sim_log(const char *fmt, ...) {
  va_list ap;
  if (!verbose) return;
  va_start(ap, fmt);
  fputs("telescope-sim: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}
