/* --replay FILE: a real recording of a Flutter app played back as the live
 * app. The recording is a Chrome trace-event JSON (a DevTools performance
 * export, a `flutter drive` timeline, or a bare event list). Its frames (the
 * export's flutterFrames, else the engine's frame events in the trace) are
 * handed to the generator as FrameTimings and FlutterTimeline block trees, so
 * they reach the watcher model and the Flutter.Frame events by the same code
 * as the scenarios' frames; its trace events go to the VM timeline ring on
 * their own threads; its rebuild counts (a DevTools export's
 * rebuildCountModel) are posted as Flutter.RebuiltWidgets after their frame
 * while rebuild tracking is on. Timestamps keep their spacing and are moved onto
 * sim_clock_now_us's clock; playback starts when a measurement starts (the watcher
 * starts collecting, or, without a watcher, a client touches the timeline
 * flags) and plays once, in real time. */
#ifndef TELESCOPE_SIM_REPLAY_H
#define TELESCOPE_SIM_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "sim.h"

typedef struct sim_replay sim_replay_t;

/* Reads and indexes the recording at path. NULL with a message in err. */
sim_replay_t *sim_replay_load(const char *path, char *err, size_t errlen);
void sim_replay_free(sim_replay_t *r);

/* The display refresh rate the recording declares (60 when it does not). */
double sim_replay_refresh_rate(const sim_replay_t *r);
size_t sim_replay_frames(const sim_replay_t *r);
/* Recording length from its first event to its last, in µs. */
int64_t sim_replay_span_us(const sim_replay_t *r);
/* The recording's thread_name metadata events (borrowed JSON array). */
const json_t *sim_replay_threads(const sim_replay_t *r);

/* The creation locations of the recording's rebuildCountModel (borrowed;
 * NULL, n = 0, when it has none). */
const sim_rebuild_loc_t *sim_replay_locations(const sim_replay_t *r, size_t *n);

/* `stats`: {"frames", "played", "started", "spanUs", "rebuildFrames",
 * "rebuildsPosted"} (new reference). */
json_t *sim_replay_stats_json(const sim_replay_t *r);

/* A client touched the timeline flags (a session starting); origin: it
 * asked for the timeline's clock (getVMTimelineMicros), the origin of its
 * first pull. Without a watcher the first call starts the measurement;
 * either way playback waits for the origin (at most a second) so the
 * session's first pull covers the first frame's events. */
void sim_replay_arm(sim_replay_t *r, int origin);

/* Called by the generator's tick: starts playback when due (the watcher
 * collecting, or armed without one; then the origin asked), then hands every
 * frame and timeline event whose time has come to the generator and the
 * timeline. */
void sim_replay_tick(sim_t *s);

#endif
