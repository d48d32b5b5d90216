/* loopstall: the lateness of a repeating timer (loopstall.h). */
#include "loopstall.h"

#include "log.h"

#define NS_PER_MS 1000000ull

static void on_tick(uv_timer_t *t) {
  loopstall_t *s = t->data;
  uint64_t now = uv_hrtime();
  uint64_t late = now > s->due_ns ? now - s->due_ns : 0;
  s->ticks++;
  if (late > s->max_ns) {
    s->max_ns = late;
    log_debug("loop: longest stall so far %.1f ms", (double)late / NS_PER_MS);
  }
  if (late >= LOOPSTALL_REPORT_MS * NS_PER_MS)
    log_info("loop: stalled %.0f ms (answers and VM messages waited as long)",
             (double)late / NS_PER_MS);
  s->due_ns = now + LOOPSTALL_PERIOD_MS * NS_PER_MS;
}

int loopstall_start(loopstall_t *s, uv_loop_t *loop) {
  /* Below info nothing it finds is said: no timer, so an idle server does
   * not wake a hundred times a second for nothing. */
  if (log_get_level() < LOG_INFO) return 0;
  int err = uv_timer_init(loop, &s->timer);
  if (err) return err;
  s->timer.data = s;
  s->max_ns = s->ticks = 0;
  s->due_ns = uv_hrtime() + LOOPSTALL_PERIOD_MS * NS_PER_MS;
  uv_unref((uv_handle_t *)&s->timer);
  return uv_timer_start(&s->timer, on_tick, LOOPSTALL_PERIOD_MS, LOOPSTALL_PERIOD_MS);
}

void loopstall_close(loopstall_t *s) {
  if (!s->timer.data || uv_is_closing((uv_handle_t *)&s->timer)) return;
  log_debug("loop: longest stall of the run %.1f ms (%llu ticks)", loopstall_max_ms(s),
            (unsigned long long)s->ticks);
  uv_close((uv_handle_t *)&s->timer, NULL);
}

double loopstall_max_ms(const loopstall_t *s) {
  return (double)s->max_ns / NS_PER_MS;
}
