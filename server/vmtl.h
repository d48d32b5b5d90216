/* vmtl: the Dart VM timeline's trace events (`getVMTimeline`, Chrome
 * trace-event JSON), read across overlapping pulls and joined to frames by
 * time (issue 15). GC pauses on the UI thread explain a slow build; shader
 * compilation and long engine work on the raster thread explain a slow raster.
 * Pure: no loop, no clock, no I/O; jansson in, plain structs out.
 *
 * What the VM writes (dart-lang/sdk runtime/vm/timeline.cc, TimelineEvent::
 * PrintJSON and TimelineTrackMetadata::PrintJSON): integer `ts`/`dur` in µs on
 * the timeline clock, `cat` = the stream name ("GC", "Embedder", "Dart", ...),
 * `tid` an integer, and one {"ph":"M","name":"thread_name"} entry per thread
 * whose args.name is "<name> (<tid>)". GC scopes are B/E pairs in current VMs
 * (TimelineBeginEndScope) and X events in older ones. The engine names its
 * threads "<label>.ui", ".raster" (".gpu" before the rename), ".io",
 * ".platform" (flutter/flutter engine runtime/dart_isolate.cc
 * UpdateThreadPoolNames); Skia's shader compilation is a B/E pair whose B
 * carries args.devtoolsTag = "shaders" (shell/common/skia_event_tracer_impl.cc).
 * vmtl.c cites the sources with their commits. */
#ifndef TELESCOPE_VMTL_H
#define TELESCOPE_VMTL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "vmtl_names.h" /* VMTL_NAME_MAX, vmtl_thread_t */

/* Pulls overlap by up to this much; repeats inside it are dropped. */
#define VMTL_LOOKBACK_US 2000000
#define VMTL_MAX_OPEN 64                 /* unmatched "B" events kept per thread */
#define VMTL_MAX_THREADS 256             /* threads remembered (names, open B events) */
#define VMTL_RASTER_MIN_US 1000          /* shortest raster-thread event kept as VMTL_RASTER */
#define VMTL_SEEN_MAX 65536              /* keys of recent entries remembered to drop repeats */
#define VMTL_TIME_MAX 9007199254740992LL /* 2^53: larger ts/dur are malformed */

typedef enum { VMTL_GC = 0, VMTL_SHADER, VMTL_RASTER } vmtl_kind_t;
/* VMTL_GC: category "GC", any thread (the join counts UI and unknown ones).
 * VMTL_SHADER: args.devtoolsTag == "shaders", or a shader/pipeline builder
 *   named in vmtl.c's table (GrMtlPipelineStateBuilder::finalize, ...), any thread.
 * VMTL_RASTER: any other event on the raster thread lasting >= VMTL_RASTER_MIN_US,
 * except the frame's own envelope (args.frame_number): kept so an answer can
 * name the longest raster work when no shader is to blame. */
typedef struct {
  int64_t ts_us, dur_us; /* timeline clock; dur >= 0 */
  vmtl_kind_t kind;
  vmtl_thread_t thread;
  char name[VMTL_NAME_MAX]; /* valid UTF-8, NUL-terminated */
} vmtl_event_t;

/* State across pulls: thread names, open B events, recent keys. */
typedef struct vmtl_parser vmtl_parser_t;

typedef struct {
  size_t trace_events;  /* entries in traceEvents */
  size_t kept;          /* events handed to the sink */
  size_t repeats;       /* dropped as already seen (overlapping pulls) */
  size_t malformed;     /* entries skipped: not an object, missing/ill-typed ph/ts/tid, ... */
  size_t unmatched;     /* E without B; B evicted past VMTL_MAX_OPEN, left open inside a closed B,
                           or on a thread that could not be remembered */
  int64_t origin_us;    /* the reply's timeOriginMicros; -1 when absent */
  int64_t extent_us;    /* the reply's timeExtentMicros; -1 when absent */
  int64_t newest_ts_us; /* the latest ts seen in this reply (-1: none) */
} vmtl_pull_stats_t;

/* A parser with nothing learned yet; NULL when out of memory. */
vmtl_parser_t *vmtl_parser_new(void);
void vmtl_parser_free(vmtl_parser_t *p);

/* Reads one getVMTimeline result (borrowed; {"type":"Timeline","traceEvents":[...],...}).
 * Thread-name metadata is read first (a reply names its threads; names learned earlier are kept).
 * Complete events ("X" with dur) and B/E pairs (matched per tid, possibly across pulls) become
 * events; events of interest go to sink in the order they are completed. A repeat is an entry
 * seen in an earlier pull (same tid, ph, ts, name, dur), a B or E older than the newest B/E its
 * thread had in the earlier pulls, or one ending more than VMTL_LOOKBACK_US before the newest
 * ts of the earlier pulls; an X that could never be kept is passed over without being counted.
 * Returns 0, or -1 when result is not a Timeline object (err says why; nothing changed).
 * Never trusts the input: bounded memory whatever it holds; out of memory only makes it forget
 * sooner. sink, st and err may be NULL. */
int vmtl_parse(vmtl_parser_t *p, const json_t *result,
               void (*sink)(void *arg, const vmtl_event_t *ev), void *arg, vmtl_pull_stats_t *st,
               char *err, size_t errlen);

#endif
