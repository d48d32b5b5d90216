/* appsrc_cpu: the app-side source of CPU samples — pulls the VM profiler's
 * samples of the UI isolate over a closed session's janky frames and a few
 * calm ones around them, and hands back the `where` object (cpuprof.h).
 * It asks (getIsolate: the app's package from its root library), pulls
 * within windows (getCpuSamples, one call per range, at most
 * APPSRC_CPU_MAX_RANGES), and switches nothing on, so it restores nothing:
 * a VM whose profiler is off is told, with the remedy, never changed.
 *
 * Ownership: the pull owns its copy of the windows and its profile; the
 * callback receives `where` (stolen) or a note (borrowed), then the pull is
 * freed (the callback must not cancel it). Every callback comes from the loop
 * (vm_app's rule). */
#ifndef TELESCOPE_APPSRC_CPU_H
#define TELESCOPE_APPSRC_CPU_H

#include <jansson.h>

#include "cpuprof.h"
#include "record.h"
#include "vm_isolate.h"

#define APPSRC_CPU_MAX_JANKY 64  /* janky frames looked at: the newest */
#define APPSRC_CPU_MAX_RANGES 8  /* getCpuSamples calls per pull */
#define APPSRC_CPU_PAD_US 100000 /* each range reaches this far around its janky frames */
/* Ranges closer than this are one call, up to APPSRC_CPU_MAX_EXTENT_US: every
 * reply repeats the VM's whole function table (1 MB for 1 000 compiled
 * functions, 30 MB for a debug app's 30 000), while a second of samples is
 * about 100 KB. */
#define APPSRC_CPU_MERGE_US 1000000
#define APPSRC_CPU_MAX_EXTENT_US 5000000
/* One getCpuSamples call's deadline, in call timeouts (30 s at the default
 * 3 s): the VM builds the reply on the UI isolate from its whole code table,
 * seconds in a large debug app (DevTools dropped its own timeout on it for
 * that reason: flutter/devtools#1683). The other calls keep one. */
#define APPSRC_CPU_CALL_TIMEOUTS 10

typedef struct appsrc_cpu appsrc_cpu_t;

/* where: the `where` object (stolen; NULL when there is none). prof: the
 * samples (borrowed for the call; NULL with no where), for per-frame
 * questions (cpuprof_top_in). note: why there is none or what limits it (""
 * when nothing to say); borrowed. */
typedef void (*appsrc_cpu_cb)(void *arg, json_t *where, const cpuprof_t *prof, const char *note);

/* Starts a pull over frames (borrowed for the call: copied). A frame is
 * janky when it missed budget_us on build (start-up frames excluded), calm
 * when it missed nothing. jank_over_us: the jank `explains` is a share of.
 * Returns NULL with note filled when there is nothing to pull (no janky
 * frame, no isolate yet, a web app, out of memory): cb is then not called. */
appsrc_cpu_t *appsrc_cpu_pull(vm_app_t *app, const frame_t *frames, size_t n, int64_t budget_us,
                              double jank_over_us, appsrc_cpu_cb cb, void *arg, char *note,
                              size_t notelen);
/* cb will not be called; the pull is freed. */
void appsrc_cpu_cancel(appsrc_cpu_t *p);

/* The pure part: the janky and calm windows of frames (as above), and the
 * time ranges to ask for, merged, newest first. Returns the number of
 * windows written to w (room for n), ranges into r (room for
 * APPSRC_CPU_MAX_RANGES, count in *nr); windows outside every range are
 * left out. */
size_t appsrc_cpu_plan(const frame_t *frames, size_t n, int64_t budget_us, cpuprof_window_t *w,
                       int64_t (*r)[2], size_t *nr);

#endif
