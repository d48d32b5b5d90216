#include "sim_timings.h"

#include <stdlib.h>
#include <string.h>

#include "sim_clock.h"

/* Engine rule (shell.cc): in debug/profile, timings are reported at most
 * ~100 ms after a frame, the first frame at once, and at once when 100
 * frames are waiting. */
#define TIMINGS_BACKLOG_FLUSH 100
/* web_ui's _kFrameTimingsSubmitInterval: 100 000 µs. */
#define WEB_SUBMIT_INTERVAL_US 100000

static void on_flush(uv_timer_t *t) {
  sim_t *s = (sim_t *)((char *)t - offsetof(sim_t, timings.flush_timer));
  sim_timings_flush(s);
}

/* Handed over and not yet delivered: the queue's head. */
static size_t handed_over(const sim_t *s) {
  return s->timings.n_pend - s->timings.web_held;
}

void sim_timings_arm(sim_t *s) {
  uint64_t ms = (uint64_t)(s->cfg.timings_batch_ms > 0 ? s->cfg.timings_batch_ms : 1);
  if (handed_over(s) && !uv_is_active((uv_handle_t *)&s->timings.flush_timer))
    uv_timer_start(&s->timings.flush_timer, on_flush, ms, ms);
}

/* FrameTimingRecorder.submitTimings (frame_timing_recorder.dart): `now` is
 * taken when the frame's raster is done, then compared with
 * _frameTimingsLastSubmitTime. That static's initializer (_nowMicros()) runs
 * at its first read, just after the first frame's `now`: so the first frame
 * is never handed over by itself, and the clock starts there. */
static void web_submit(sim_t *s, const wm_timing_t *timing) {
  int64_t now = timing->raster_finish_us;

  s->timings.web_held++;
  if (!s->timings.web_started) {
    s->timings.web_started = 1;
    s->timings.web_last_submit_us = now;
  }
  if (now - s->timings.web_last_submit_us > WEB_SUBMIT_INTERVAL_US) {
    s->timings.web_last_submit_us = now;
    s->timings.web_held = 0; /* invokeOnReportTimings(_frameTimings), a new list */
    s->timings.web_hand_overs++;
    sim_timings_flush(s);
    sim_timings_arm(s);
  }
}

/* When the engine hands a frame's timing over: once its raster is done
 * (shell.cc: the rasterizer's OnFrameRasterized records the timing, then
 * reports the batch). The sim draws a frame's whole work at once, ahead of
 * its clock, so a timing is due when the clock reaches its raster finish:
 * before that the frame is still running, and the CPU samples of its end are
 * not taken yet (sim_cpu.c). */
static uint64_t due_ms(const sim_t *s, const wm_timing_t *timing) {
  int64_t ahead = timing->raster_finish_us - sim_clock_now_us();
  uint64_t now = uv_now(s->loop);
  return ahead > 0 ? now + (uint64_t)((ahead + 999) / 1000) : now;
}

void sim_timings_submit(sim_t *s, const wm_timing_t *timing) {
  if (s->timings.n_pend == s->timings.cap_pend) {
    size_t cap = s->timings.cap_pend ? s->timings.cap_pend * 2 : 64;
    wm_timing_t *p = realloc(s->timings.pend, cap * sizeof *p);
    uint64_t *q;
    if (!p) return;
    s->timings.pend = p;
    q = realloc(s->timings.pend_due_ms, cap * sizeof *q);
    if (!q) return;
    s->timings.pend_due_ms = q;
    s->timings.cap_pend = cap;
  }
  s->timings.pend[s->timings.n_pend] = *timing;
  s->timings.pend_due_ms[s->timings.n_pend] =
      s->cfg.mode == SIM_MODE_WEB ? uv_now(s->loop) : due_ms(s, timing);
  s->timings.n_pend++;
  if (s->cfg.mode == SIM_MODE_WEB) {
    web_submit(s, timing);
  } else if ((!s->timings.first_reported && s->timings.delay_ms <= 0) ||
             s->timings.n_pend >= TIMINGS_BACKLOG_FLUSH) {
    sim_timings_flush(s);
    /* At once means when its raster is done, not by the next batch. */
    if (handed_over(s) && !uv_is_active((uv_handle_t *)&s->timings.flush_timer)) {
      uint64_t now = uv_now(s->loop), due = s->timings.pend_due_ms[0];
      uint64_t ms = (uint64_t)(s->cfg.timings_batch_ms > 0 ? s->cfg.timings_batch_ms : 1);
      uv_timer_start(&s->timings.flush_timer, on_flush, due > now ? due - now : 1, ms);
    }
  } else {
    sim_timings_arm(s);
  }
}

void sim_timings_flush(sim_t *s) {
  uint64_t now = uv_now(s->loop);
  uint64_t delay = (uint64_t)(s->timings.delay_ms > 0 ? s->timings.delay_ms : 0);
  size_t n = 0, ready = handed_over(s);

  if (s->vm.paused) /* the timings callback is Dart code: not while paused */
    return;
  /* The delay in force now applies, so lowering it releases held timings. */
  while (n < ready && s->timings.pend_due_ms[n] + delay <= now) n++;
  if (n) {
    size_t i;
    s->timings.first_reported = 1;
    /* The binding's own timings callback posts Flutter.Frame per timing
     * (debug/profile), whether or not a watcher is installed. */
    for (i = 0; i < n && !s->cfg.plain_dart; i++) {
      const wm_timing_t *t = &s->timings.pend[i];
      sim_post_event(
          s, "Flutter.Frame",
          json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "number", (json_int_t)t->frame_number,
                    "startTime", (json_int_t)t->build_start_us, "elapsed",
                    (json_int_t)(t->raster_finish_us - t->vsync_start_us), "build",
                    (json_int_t)(t->build_finish_us - t->build_start_us), "raster",
                    (json_int_t)(t->raster_finish_us - t->raster_start_us), "vsyncOverhead",
                    (json_int_t)(t->build_start_us - t->vsync_start_us)));
      s->timings.last_posted_number = t->frame_number;
    }
    if (s->model && s->vm.watcher) {
      wm_timings(s->model, s->timings.pend, n);
      s->timings.records_written += n;
    }
    s->timings.delivered += n;
    memmove(s->timings.pend, s->timings.pend + n,
            (s->timings.n_pend - n) * sizeof *s->timings.pend);
    memmove(s->timings.pend_due_ms, s->timings.pend_due_ms + n,
            (s->timings.n_pend - n) * sizeof *s->timings.pend_due_ms);
    s->timings.n_pend -= n;
  }
  if (!handed_over(s)) uv_timer_stop(&s->timings.flush_timer);
}

void sim_timings_web_restart(sim_t *s) {
  /* DDC resets every Dart static on a hot restart, web_ui's included
   * ("This extension does not need to clean-up Dart statics. Those are
   * cleaned up by the compiler.", web_ui initialization.dart,
   * initializeEngineServices): _frameTimings is a new list and
   * _frameTimingsLastSubmitTime unread again. The held entries are the
   * queue's tail. */
  s->timings.n_pend -= s->timings.web_held;
  s->timings.web_held = 0;
  s->timings.web_started = 0;
}

int sim_timings_init(sim_t *s) {
  return uv_timer_init(s->loop, &s->timings.flush_timer) ? -1 : 0;
}

void sim_timings_close(sim_t *s) {
  uv_close((uv_handle_t *)&s->timings.flush_timer, NULL);
  free(s->timings.pend);
  free(s->timings.pend_due_ms);
  s->timings.pend = NULL;
  s->timings.pend_due_ms = NULL;
  s->timings.n_pend = s->timings.cap_pend = 0;
  s->timings.web_held = 0;
}
