/* loopstall: the event loop's longest stall, measured from inside the loop
 * as the lateness of a repeating timer (every LOOPSTALL_PERIOD_MS). A loop
 * that is blocked (a long parse, a quadratic merge) fires the timer late by
 * about the time it was blocked; nothing else can see that from outside but
 * the answers' latency. Reported on stderr only: a debug line at every new
 * longest stall ("loop: longest stall so far 12.3 ms"), an info line at every
 * stall of LOOPSTALL_REPORT_MS or more (docs/tool.md "The server's own
 * stalls"). It runs only at --log-level info or more verbose (below that it
 * could say nothing), unreferenced: it never keeps the loop alive, and
 * loopstall_close closes it at shutdown. */
#ifndef TELESCOPE_LOOPSTALL_H
#define TELESCOPE_LOOPSTALL_H

#include <stdint.h>
#include <uv.h>

#define LOOPSTALL_PERIOD_MS 10
#define LOOPSTALL_REPORT_MS 50 /* the goal: no stall longer (issue 31) */

typedef struct {
  uv_timer_t timer;
  uint64_t due_ns;  /* when the next tick is due (uv_hrtime) */
  uint64_t max_ns;  /* the longest lateness seen */
  uint64_t ticks;
} loopstall_t;

/* 0, or a libuv error. */
int loopstall_start(loopstall_t *s, uv_loop_t *loop);
/* Closes the timer (its memory must live until the loop has run once more). */
void loopstall_close(loopstall_t *s);
/* The longest stall so far, in ms. */
double loopstall_max_ms(const loopstall_t *s);

#endif
