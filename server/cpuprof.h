/* cpuprof: where to edit — the functions the Dart VM's CPU profiler caught on
 * the UI thread in janky frames, more than in calm ones (docs/tool.md "Where
 * to edit"). Pure: a `CpuSamples` reply (getCpuSamples, docs/flutter-apis.md)
 * and the frames' UI windows in, the `where` object out; no loop, no socket.
 *
 * Each sample is charged to one function: the innermost frame of the app's
 * own code on its stack (what an agent can edit; the library code it called
 * is its cost), else, with no app frame at all, the top frame. A function's
 * time in a frame is its samples there × the sample period. The ranking is
 * the findings' rule (findings.h): over the janky frames, each frame's time
 * beyond the function's mean in the calm frames, at most that frame's
 * overrun, summed — so a function that is slow only when frames are janky
 * goes ahead of a heavier one that runs in every frame.
 *
 * Ownership: cpuprof_t owns everything it holds; cpuprof_close frees it. */
#ifndef TELESCOPE_CPUPROF_H
#define TELESCOPE_CPUPROF_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define CPUPROF_MAX_APP 3     /* app functions in `where.functions` */
#define CPUPROF_MAX_OTHER 2   /* then library / framework functions, as context */
#define CPUPROF_MAX_DEPTH 512 /* stack frames looked at per sample */
#define CPUPROF_FEW_SAMPLES 3 /* fewer per janky frame: `fewSamples` */

typedef enum {
  CPUPROF_APP = 0, /* the app's own package, or a file: URI outside any package cache */
  CPUPROF_PACKAGE, /* another package: */
  CPUPROF_FLUTTER, /* package:flutter/ and the other Flutter SDK packages */
  CPUPROF_DART,    /* dart: libraries */
  CPUPROF_VM       /* native code, VM tags and stubs: no Dart source */
} cpuprof_code_t;

typedef struct {
  char *name;   /* "HeavyTile.build": owner class or function, then name */
  char *file;   /* the path when the resolved URL is file:, else the script URI; NULL */
  int64_t line; /* 0: the VM gave no line */
  cpuprof_code_t code;
} cpuprof_fn_t;

typedef struct {
  int64_t ts_us;  /* the VM's monotonic clock, as FrameTiming's */
  int32_t charge; /* index into fns: the function charged (see above) */
  int32_t leaf;   /* index into fns: the top frame */
} cpuprof_sample_t;

typedef struct {
  int64_t period_us; /* samplePeriod */
  cpuprof_fn_t *fns; /* the sampled functions of the replies, first seen first */
  size_t nfns, fncap;
  cpuprof_sample_t *samples; /* sorted by ts_us */
  size_t nsamples;
  /* fns by identity (name, file, line): open addressing, -1 empty, at most
   * half full, so that a reply's functions join the held ones in linear time
   * (a debug app's reply lists tens of thousands; only the sampled ones are
   * read and held, docs/tool.md). */
  int32_t *slots;
  size_t nslots;
} cpuprof_t;

/* One frame's UI-thread window [start_us, end_us) and whether it missed the
 * budget on build (over_us > 0: buildUs − budget) or was calm (missed
 * nothing). Frames that missed only on raster are left out by the caller. */
typedef struct {
  int64_t start_us, end_us, over_us;
} cpuprof_window_t;

/* Adds the samples of one `CpuSamples` reply (borrowed) to p (zeroed first,
 * or filled by an earlier call: replies for separate windows accumulate;
 * a sample already held — same timestamp — is not added twice). app_package
 * is the app's package name ("my_app" of package:my_app/main.dart; NULL:
 * only file: URIs are the app's). 0, or -1 with a message in err when the
 * reply is not a CpuSamples object (p keeps what it had). */
int cpuprof_add(cpuprof_t *p, const json_t *reply, const char *app_package, char *err,
                size_t errlen);
void cpuprof_close(cpuprof_t *p);

/* The code kind of a script URI (and resolved URL, may be NULL). */
cpuprof_code_t cpuprof_code_of(const char *uri, const char *resolved, const char *app_package);
const char *cpuprof_code_name(cpuprof_code_t code);

/* The `where` object (new reference; NULL on OOM): the sample period, the
 * samples in janky windows and per janky frame, `fewSamples` when below
 * CPUPROF_FEW_SAMPLES per janky frame, and `functions`: the app functions
 * that explain jank (at most CPUPROF_MAX_APP, most explained first), then
 * the other code charged with jank (at most CPUPROF_MAX_OTHER). A function
 * counts when its mean per janky frame beyond its calm mean is at least
 * min_excess_us and one sample period. windows need not be sorted;
 * jank_over_us is the jank to explain (for `explains`). */
json_t *cpuprof_where_json(const cpuprof_t *p, const cpuprof_window_t *windows, size_t nwindows,
                           int64_t min_excess_us, double jank_over_us);

/* Gives each widget or render-object finding (summary.findings, borrowed,
 * changed in place) whose name N owns a function of where (N.build,
 * N.performLayout…) an "at": that function's place, the one that explains
 * most. 0, or -1 on OOM. */
int cpuprof_attach(json_t *findings, const json_t *where);

/* The app function charged with the most samples in [start_us, end_us), as
 * "Class.method (file:line)" into buf; NULL when no app code was sampled. */
const char *cpuprof_top_in(const cpuprof_t *p, int64_t start_us, int64_t end_us, char *buf,
                           size_t len);

/* "HeavyTile.build (lib/heavy_tile.dart:42)" of a `where.functions` entry
 * into buf; returns buf. */
const char *cpuprof_place(const json_t *fn, char *buf, size_t len);

/* The `where:` lines of the text an agent reads (malloc'd, "" when there is
 * nothing to say; NULL when where is NULL or on OOM): the app's functions
 * numbered, other code as context, and what limits the samples. */
char *cpuprof_where_text(const json_t *where);

#endif
