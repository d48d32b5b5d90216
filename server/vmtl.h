#ifndef TELESCOPE_VMTL_H
#define TELESCOPE_VMTL_H
#include <jansson.h>
#include <stdint.h>
#include <stddef.h>
#define VMTL_RASTER_MIN_US 1000
#define VMTL_NAME_MAX 48          /* bytes kept of an event's name (NUL included), cut at a UTF-8 boundary */
#define VMTL_LOOKBACK_US 1000000  /* pulls overlap by up to this much; repeats inside it are dropped */
#define VMTL_MAX_OPEN 64          /* unmatched "B" events kept per thread */
#define VMTL_MAX_THREADS 256

typedef enum { VMTL_GC = 0, VMTL_SHADER, VMTL_RASTER } vmtl_kind_t;
/* VMTL_RASTER: any other event on the raster thread lasting >= VMTL_RASTER_MIN_US (1000):
 * kept so an answer can name the longest raster work when no shader is to blame. */
typedef enum { VMTL_THREAD_UNKNOWN = 0, VMTL_THREAD_UI, VMTL_THREAD_RASTER, VMTL_THREAD_OTHER } vmtl_thread_t;

typedef struct {
  int64_t ts_us, dur_us;      /* timeline clock; dur >= 0 */
  vmtl_kind_t kind;
  vmtl_thread_t thread;
  char name[VMTL_NAME_MAX];
} vmtl_event_t;

typedef struct vmtl_parser vmtl_parser_t; /* state across pulls: thread names, open B events, recent keys */

typedef struct {
  size_t trace_events;   /* entries in traceEvents */
  size_t kept;           /* events handed to the sink */
  size_t repeats;        /* dropped as already seen (overlapping pulls) */
  size_t malformed;      /* entries skipped: not an object, missing/ill-typed ph/ts/tid, ... */
  size_t unmatched;      /* E without B, or B evicted past VMTL_MAX_OPEN */
  int64_t origin_us, extent_us; /* the reply's timeOriginMicros / timeExtentMicros; -1 when absent */
  int64_t newest_ts_us;  /* the latest ts seen in this reply (-1: none) */
} vmtl_pull_stats_t;

vmtl_parser_t *vmtl_parser_new(void);
void vmtl_parser_free(vmtl_parser_t *p);
/* Reads one getVMTimeline result (borrowed; {"type":"Timeline","traceEvents":[...],...}).
 * Thread-name metadata is read first (a reply names its threads; names learned earlier are kept).
 * Complete events ("X" with dur) and B/E pairs (matched per tid, possibly across pulls) become
 * events; events of interest go to sink in the order they are completed. Returns 0, or -1 when
 * result is not a Timeline object (err says why; nothing changed). Never trusts the input:
 * bounded memory whatever it holds. */
int vmtl_parse(vmtl_parser_t *p, const json_t *result,
               void (*sink)(void *arg, const vmtl_event_t *ev), void *arg,
               vmtl_pull_stats_t *st, char *err, size_t errlen);

/* A frame's windows on the frames' clock (FrameTiming). */
typedef struct { int64_t build_start_us, build_end_us, raster_start_us, raster_end_us; } vmtl_window_t;
typedef struct {
  int64_t gc_us;        /* union of GC intervals (UI thread, or unknown thread) inside the build window */
  int64_t shader_us;    /* union of shader intervals (any thread) inside the raster window */
  int64_t raster_top_us;/* the longest single VMTL_RASTER event's overlap with the raster window */
  uint32_t gc_n, shader_n;
  char raster_top[VMTL_NAME_MAX]; /* its name ("" when none) */
} vmtl_causes_t;
/* For each of the nfr frames, what fell inside its windows. offset_us is added to event times to
 * bring them onto the frames' clock (0 on native: same clock). Events need not be sorted; cost
 * O((nev + nfr) log(nev + nfr)) or better. Returns 0, -1 on allocation failure (out zeroed). */
int vmtl_join(const vmtl_event_t *ev, size_t nev, const vmtl_window_t *fr, size_t nfr,
              int64_t offset_us, vmtl_causes_t *out);

#endif
