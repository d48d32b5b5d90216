/* FrameTimings on their way to PlatformDispatcher.onReportTimings, which the
 * binding's own callback (one Flutter.Frame event per timing, debug and
 * profile) and the watcher's (wm_timings) both listen to. When the engine
 * hands a frame's timing over depends on the engine:
 *
 *   native  engine/src/flutter/shell/common/shell.cc: the first frame at
 *           once, then at most --timings-batch-ms (100 ms in debug and
 *           profile) late, and at once when 100 are waiting.
 *   web     web_ui's frame_timing_recorder.dart (flutter/flutter 0cd75f4a)
 *           submitTimings, once per frame: the timing joins a list, which is
 *           handed over only when that frame is submitted more than 100 ms
 *           after the last hand-over. No timer: the last frames before the
 *           app goes quiet wait for a later frame (ext.ui.window.scheduleFrame
 *           draws one). The first frame starts the clock and is not sent.
 *
 * Timings handed over still wait for `timings-delay` and while the isolate is
 * paused (the callbacks are Dart code). State: s->timings. */
#ifndef TELESCOPE_SIM_TIMINGS_H
#define TELESCOPE_SIM_TIMINGS_H

#include "sim.h"

int sim_timings_init(sim_t *s);
void sim_timings_close(sim_t *s); /* closes the flush timer, frees the queue */

/* The engine has finished a frame: its timing, by the engine's rule. */
void sim_timings_submit(sim_t *s, const wm_timing_t *timing);
/* Delivers every handed-over timing that is due now. */
void sim_timings_flush(sim_t *s);
/* Starts the flush timer when handed-over timings are waiting for it. */
void sim_timings_arm(sim_t *s);
/* Web hot restart: web_ui's statics start again, so the timings its list
 * held are gone and the next frame starts the clock anew. */
void sim_timings_web_restart(sim_t *s);

#endif
