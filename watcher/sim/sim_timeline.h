/* The simulated VM timeline: the recorder's ring of trace events, the
 * recorded streams, and the timeline methods of the VM service
 * (getVMTimelineFlags, setVMTimelineFlags, getVMTimeline,
 * getVMTimelineMicros, clearVMTimeline; docs/flutter-apis.md "VM timeline").
 * The frame generator records the engine's events for each frame it draws
 * (Embedder: the UI thread's frame, the raster thread's draw, shader
 * compilation tagged devtoolsTag "shaders"; GC: scavenges on the UI thread),
 * each only while its stream is recorded, on sim_clock_now_us's clock. */
#ifndef TELESCOPE_SIM_TIMELINE_H
#define TELESCOPE_SIM_TIMELINE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_TL_RING 32768 /* events kept by default (--timeline-ring): the VM ring recorder's kDefaultCapacity */

/* The threads the engine names (io.flutter.<n>.<runner>), as the VM prints
 * them in thread_name metadata: "<name> (<os id>)". */
enum { SIM_TID_UI = 22531, SIM_TID_RASTER = 23811, SIM_TID_IO = 24579, SIM_TID_PLATFORM = 20995 };

typedef struct {
  char name[48];
  const char *cat; /* the stream: "Embedder", "GC" (static) */
  char ph;         /* 'X' (with dur), 'B', 'E' */
  int tid;
  int64_t ts, dur;
  int shader; /* args.devtoolsTag "shaders" */
  /* > 0: args.frame_number, as the engine puts it (a string) on its frame
   * envelopes, Animator::BeginFrame and Rasterizer::DoDraw (animator.cc,
   * rasterizer.cc TRACE_EVENT_WITH_FRAME_NUMBER; both in the recordings of
   * tests/recordings). */
  int64_t frame_number;
  /* --replay: a recording's event, its name and args borrowed from the
   * loaded recording (which lives as long as the sim); name is then unused. */
  const char *name_ref;
  const json_t *args;
} sim_tl_event_t;

typedef struct {
  sim_tl_event_t *ring;
  size_t cap, head, len;
  uint64_t written, overwritten;
  int recorded[16]; /* by stream index (sim_tl_streams) */
  const json_t *threads; /* --replay: the recording's thread_name events, served instead of ours */
  const char *recorder; /* getVMTimelineFlags' recorderName (static or argv): "Ring" */
} sim_tl_t;

/* The streams the VM offers (runtime/vm/timeline.h TIMELINE_STREAM_LIST). */
extern const char *const sim_tl_streams[];
extern const size_t sim_tl_nstreams;

/* recorded: a comma-separated stream list (NULL: Flutter's default). -1 when
 * a name is unknown. */
int sim_tl_init(sim_tl_t *tl, size_t cap, const char *recorded);
void sim_tl_free(sim_tl_t *tl);
/* Records one event if its stream is recorded (oldest overwritten). */
void sim_tl_add(sim_tl_t *tl, const sim_tl_event_t *ev);
void sim_tl_begin_end(sim_tl_t *tl, const char *cat, int tid, const char *name, int64_t b, int64_t e,
                      int shader);

/* 1 when name is one of the VM's recorders (runtime/vm/timeline.h *_RECORDER_NAME). */
int sim_tl_recorder_known(const char *name);
/* Where a recorder that keeps no events for the VM service sends them (the
 * tail of getVMTimeline's 114 details), or NULL when getVMTimeline works. */
const char *sim_tl_recorder_elsewhere(const char *name);

/* The recorded streams as a JSON array (new reference). */
json_t *sim_tl_recorded_json(const sim_tl_t *tl);
/* TimelineFlags (new reference). */
json_t *sim_tl_flags_json(const sim_tl_t *tl);
/* setVMTimelineFlags: 0, or -1 with the unknown name in bad (static). */
int sim_tl_set(sim_tl_t *tl, const json_t *streams, const char **bad);
/* getVMTimeline with an optional window (-1: absent). New reference. */
json_t *sim_tl_timeline_json(const sim_tl_t *tl, int64_t origin, int64_t extent);
void sim_tl_clear(sim_tl_t *tl);

#endif
