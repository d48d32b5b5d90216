/* The simulated Dart CPU profiler: a bounded ring of samples of the UI
 * isolate's thread, taken on the timeline's clock (sim_clock_now_us) once
 * every profile_period µs while that thread runs Dart code in a frame, and
 * the getCpuSamples answer built from it (a CpuSamples object as
 * runtime/vm/profiler_service.cc prints it; docs/flutter-apis.md, "CPU
 * samples"). Pure: no sim_t, no loop; sim_gen feeds spans, sim_vm asks. */
#ifndef TELESCOPE_SIM_CPU_H
#define TELESCOPE_SIM_CPU_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* What the UI thread is running: each names one stack, top frame first, in
 * sim_cpu.c's table (app code under Flutter's frames under dart:ui). */
typedef enum {
  SIM_CPU_BUILD = 0,     /* BuildOwner.buildScope itself */
  SIM_CPU_FEED_LIST,     /* FeedList.build (the app) */
  SIM_CPU_PRODUCT_CARD,  /* ProductCard.build (the app) */
  SIM_CPU_TEXT,          /* Text.build (the framework, under a card) */
  SIM_CPU_SLOW_WIDGET,   /* SlowWidget.build: janky's and rare-slow's slow work */
  SIM_CPU_PRICE_FORMAT,  /* PriceFormatter.formatAll: cpu-rare-slow's steady work */
  SIM_CPU_CATALOG_INDEX, /* CatalogIndex.rebuild: cpu-rare-slow's rare work */
  SIM_CPU_GC,            /* a collection inside a build (VM code, vmTag "VM") */
  SIM_CPU_LAYOUT,        /* PipelineOwner.flushLayout itself */
  SIM_CPU_LAYOUT_FLEX,   /* RenderFlex.performLayout */
  SIM_CPU_LAYOUT_TEXT,   /* RenderParagraph.performLayout */
  SIM_CPU_PAINT,         /* PipelineOwner.flushPaint itself */
  SIM_CPU_PAINT_FLEX,    /* RenderFlex.paint */
  SIM_CPU_PAINT_TEXT,    /* RenderParagraph.paint */
  SIM_CPU_COMPOSITE,     /* RenderView.compositeFrame */
  SIM_CPU_FINALIZE,      /* BuildOwner.finalizeTree */
  SIM_CPU_POST_FRAME,    /* SchedulerBinding._invokeFrameCallback (post-frame) */
  SIM_CPU__COUNT
} sim_cpu_stack_t;

/* The VM's defaults (runtime/vm/profiler.cc, profiler.h): profile_period
 * 1000 µs, max_profile_depth 32 * 4 = 128, a sample buffer of 600 blocks of
 * 100 samples shared by every isolate, reused oldest-completed-first. */
#define SIM_CPU_DEFAULT_PERIOD_US 1000
#define SIM_CPU_DEFAULT_MAX_DEPTH 128
#define SIM_CPU_DEFAULT_RING 60000
/* Functions with compiled code and no samples: the VM lists every compiled
 * function of the isolate group in every answer (ProfileBuilder::
 * BuildCodeTable registers every entry of the code lookup table, the heap's
 * Code objects, not only the sampled ones). A debug (JIT) app has compiled
 * every function it has run: the framework's, dart:core's, the app's: tens
 * of thousands (--compiled-functions 30000 is issue 31's real size). */
#define SIM_CPU_DEFAULT_COMPILED 30000

typedef struct {
  int64_t ts;
  uint8_t stack; /* sim_cpu_stack_t */
} sim_cpu_sample_t;

typedef struct {
  int enabled;   /* the VM's `profiler` flag: no samples are taken while off */
  int period_us; /* `profile_period` (at least 50, as Profiler::SetSamplePeriod) */
  int max_depth; /* `max_profile_depth` (2..255, as Profiler::SetSampleDepth) */
  int aot;       /* a profile (AOT) build: locations carry a line, no token positions */
  int compiled;  /* zero-tick compiled functions listed in every answer */
  json_t *compiled_json; /* their ProfileFunctions, built once (same compiled, aot) */
  int compiled_json_aot;
  sim_cpu_sample_t *ring;
  size_t cap, len, head; /* head: the oldest sample */
  uint64_t taken, overwritten;
  int64_t next_ts; /* the first grid point not sampled yet */
} sim_cpu_t;

/* 0, or -1 when the ring cannot be allocated. Profiler on, VM defaults. */
int sim_cpu_init(sim_cpu_t *c, size_t capacity);
void sim_cpu_free(sim_cpu_t *c);
/* Forgets every sample (a hot restart: the new isolate has none). */
void sim_cpu_clear(sim_cpu_t *c);
/* The UI thread ran `stack` over [start, end): one sample at every multiple
 * of period_us in it, while enabled. Spans come in time order; a grid point
 * is never sampled twice. The oldest samples are overwritten when full. */
void sim_cpu_span(sim_cpu_t *c, int64_t start, int64_t end, sim_cpu_stack_t stack);
/* The CpuSamples answer for [origin, origin + extent] (both ends inclusive;
 * origin or extent -1: no time filter), leaving out samples later than now.
 * pid and tid as the VM prints them. New reference, or NULL (no memory).
 * The compiled functions' table is built at the first answer and kept. */
json_t *sim_cpu_samples_json(sim_cpu_t *c, int64_t origin, int64_t extent, int64_t now,
                             long pid, long tid);

#endif
