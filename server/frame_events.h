/* frame_events: the frames of an app without the watcher. Every Flutter
 * binding in debug and profile posts a `Flutter.Frame` event on the VM
 * service's Extension stream for each FrameTiming (docs/flutter-apis.md).
 * This module keeps them, per run (an isolate: a hot restart starts a new
 * one), in a bounded ring, and answers `ext.telescope.frames` itself as a
 * watcher without blocks would, so sessions, reads, capture and the
 * empty-read diagnosis run unchanged on either source.
 *
 * The transport it offers goes to the real watcher whenever the app might
 * have one, and answers from the events only when the VM service said the
 * isolate serves no watcher and the isolate is a Flutter app's. A watcher
 * that appears later (ServiceExtensionAdded) wins again: the run id changes,
 * which the sessions follow as they follow a hot restart.
 *
 * The ring is pure (fe_add, fe_answer), tested without a loop; the transport
 * delivers local answers from a uv_idle turn, never inside the call. */
#ifndef TELESCOPE_FRAME_EVENTS_H
#define TELESCOPE_FRAME_EVENTS_H

#include <jansson.h>
#include <stdint.h>
#include <uv.h>

#include "vm_isolate.h"
#include "wproto.h"

#define FE_RING 4096 /* frames kept, as the watcher's ring */
#define FE_WATCHER_VERSION "flutter-frame-events"
#define FE_SOURCE "frameEvents" /* the reply's `source`, and status's */

typedef struct fe fe_t;

/* app may be NULL (unit tests: no transport, only the ring). */
fe_t *fe_new(uv_loop_t *loop, vm_app_t *app) __attribute__((warn_unused_result));
/* Local answers not yet delivered are dropped (no callback). */
void fe_free(fe_t *fe);

/* An Extension-stream event (vm_app_options_t.on_extension). Flutter.Frame
 * from current_isolate, the isolate the tool talks to, is kept (a new
 * isolate starts a new run); another isolate's is dropped. While
 * current_isolate is "" (not known yet) every frame is held, the newest
 * FE_HELD_MAX: at a connect DDS replays the Extension stream's history, old
 * isolates' frames included, before the VM says which isolate is current.
 * Returns 1 when a frame was kept. */
int fe_add(fe_t *fe, const char *isolate_id, const char *kind, const json_t *data,
           const char *current_isolate);
/* The current isolate is known: held frames of it are kept, in order, the
 * others dropped. Nothing happens while it is "" (they stay held). fe_add
 * and the local answers call it too, so frames never stay held once the
 * isolate is known. */
void fe_isolate_known(fe_t *fe, const char *current_isolate);
#define FE_HELD_MAX 256

/* The reply the watcher would give to these ext.telescope.frames params
 * (borrowed; values as strings, as the handler sees them). New reference;
 * NULL only when out of memory. An unknown action is answered like the
 * watcher: NULL with *rpc_code -32602 and detail. */
json_t *fe_answer(fe_t *fe, const json_t *params, int *rpc_code, char *detail, size_t detail_len);

/* What the watcher would add, said once in answers built from the events. */
#define FE_NOTE                                                                              \
  "no telescope watcher in the app: frame timings come from Flutter.Frame events. To see "  \
  "what inside a frame was slow, add the telescope package and call "                       \
  "TelescopePlugin.install() under if (!kReleaseMode)"

/* A session's close begins: the next read answered from the events is its
 * last drain, which on the web has the app draw one frame and waits for
 * DWDS's batch (frame_events.c). fe may be NULL. */
void fe_closing(fe_t *fe);

/* 1 while calls for the watcher are answered from the events. */
int fe_in_use(const fe_t *fe);

/* Frame events received for the current run (0: none seen). */
uint64_t fe_frames(const fe_t *fe);

/* The transport: the watcher when the app might have one, else the events. */
wp_transport_t fe_transport(fe_t *fe);

#endif
