#include "sim_timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* runtime/vm/timeline.h, TIMELINE_STREAM_LIST (dart-lang/sdk). */
const char *const sim_tl_streams[] = {"API",      "Compiler", "CompilerVerbose", "Dart",
                                      "Debugger", "Embedder", "GC",              "Isolate",
                                      "Microtask", "VM"};
const size_t sim_tl_nstreams = sizeof sim_tl_streams / sizeof *sim_tl_streams;

/* What a Flutter app records from the start: the engine passes
 * --timeline_streams=Dart,Embedder,GC in debug and profile
 * (docs/flutter-apis.md "VM timeline"). */
#define FLUTTER_DEFAULT_STREAMS "Dart,Embedder,GC"

static int stream_index(const char *name, size_t n) {
  for (size_t i = 0; i < sim_tl_nstreams; i++)
    if (strlen(sim_tl_streams[i]) == n && !strncmp(sim_tl_streams[i], name, n)) return (int)i;
  return -1;
}

int sim_tl_init(sim_tl_t *tl, size_t cap, const char *recorded) {
  memset(tl, 0, sizeof *tl);
  tl->cap = cap ? cap : SIM_TL_RING;
  if (!(tl->ring = calloc(tl->cap, sizeof *tl->ring))) return -1;
  const char *p = recorded ? recorded : FLUTTER_DEFAULT_STREAMS;
  while (*p) {
    const char *comma = strchr(p, ',');
    size_t n = comma ? (size_t)(comma - p) : strlen(p);
    if (n) {
      int i = stream_index(p, n);
      if (i < 0) return -1;
      tl->recorded[i] = 1;
    }
    p += n + (comma != NULL);
  }
  return 0;
}

void sim_tl_free(sim_tl_t *tl) {
  free(tl->ring);
  tl->ring = NULL;
}

static int sim_tl_recording(const sim_tl_t *tl, const char *stream) {
  int i = stream_index(stream, strlen(stream));
  return i >= 0 && tl->recorded[i];
}

void sim_tl_add(sim_tl_t *tl, const sim_tl_event_t *ev) {
  if (!tl->ring || !sim_tl_recording(tl, ev->cat)) return;
  if (tl->len == tl->cap) { /* the ring recorder overwrites its oldest */
    tl->head = (tl->head + 1) % tl->cap;
    tl->len--;
    tl->overwritten++;
  }
  tl->ring[(tl->head + tl->len) % tl->cap] = *ev;
  tl->len++;
  tl->written++;
}

static void add(sim_tl_t *tl, const char *cat, int tid, const char *name, char ph, int64_t ts,
                int64_t dur, int shader) {
  sim_tl_event_t e;
  memset(&e, 0, sizeof e);
  snprintf(e.name, sizeof e.name, "%s", name);
  e.cat = cat;
  e.ph = ph;
  e.tid = tid;
  e.ts = ts;
  e.dur = dur;
  e.shader = shader;
  sim_tl_add(tl, &e);
}

/* The engine's TRACE_EVENT macros record a begin and an end
 * (Dart_RecordTimelineEvent with Dart_Timeline_Event_Begin/End), which the
 * VM prints as "B" and "E"; so do the VM's own GC scopes. */
void sim_tl_begin_end(sim_tl_t *tl, const char *cat, int tid, const char *name, int64_t b, int64_t e,
                      int shader) {
  add(tl, cat, tid, name, 'B', b, 0, shader);
  add(tl, cat, tid, name, 'E', e, 0, 0);
}

static const char *const recorders[] = {"Ring", "Endless", "Startup", "Systrace", "File",
                                        "Perfettofile", "Callback", "Fuchsia", "Macos"};

int sim_tl_recorder_known(const char *name) {
  for (size_t i = 0; i < sizeof recorders / sizeof *recorders; i++)
    if (!strcmp(name, recorders[i])) return 1;
  return 0;
}

/* dart-lang/sdk runtime/vm/service.cc GetVMTimelineCommon's three cases. */
const char *sim_tl_recorder_elsewhere(const char *name) {
  if (!name) return NULL;
  if (!strcmp(name, "Callback"))
    return "timeline events are handled by the embedder rather than the VM.";
  if (!strcmp(name, "Systrace") || !strcmp(name, "Fuchsia") || !strcmp(name, "Macos"))
    return "timeline events are handled by the OS rather than the VM. See the VM service "
           "documentation for more details on where timeline events can be found for this "
           "recorder type.";
  if (!strcmp(name, "File") || !strcmp(name, "Perfettofile"))
    return "timeline events are written directly to a file and thus cannot be retrieved "
           "through the VM Service.";
  return NULL;
}

json_t *sim_tl_recorded_json(const sim_tl_t *tl) {
  json_t *a = json_array();
  for (size_t i = 0; a && i < sim_tl_nstreams; i++)
    if (tl->recorded[i]) json_array_append_new(a, json_string(sim_tl_streams[i]));
  return a;
}

json_t *sim_tl_flags_json(const sim_tl_t *tl) {
  json_t *avail = json_array();
  for (size_t i = 0; avail && i < sim_tl_nstreams; i++)
    json_array_append_new(avail, json_string(sim_tl_streams[i]));
  return json_pack("{s:s, s:s, s:o, s:o}", "type", "TimelineFlags", "recorderName",
                   tl->recorder ? tl->recorder : "Ring",
                   "availableStreams", avail, "recordedStreams", sim_tl_recorded_json(tl));
}

int sim_tl_set(sim_tl_t *tl, const json_t *streams, const char **bad) {
  int want[16] = {0};
  size_t i;
  json_t *v;
  *bad = NULL;
  json_array_foreach(streams, i, v) {
    const char *n = json_string_value(v);
    int k = n ? stream_index(n, strlen(n)) : -1;
    if (k < 0) {
      *bad = n ? n : "(not a string)";
      return -1;
    }
    want[k] = 1;
  }
  memcpy(tl->recorded, want, sizeof want);
  return 0;
}

static json_t *meta(int tid, const char *name) {
  char full[96];
  snprintf(full, sizeof full, "%s (%d)", name, tid);
  return json_pack("{s:s, s:s, s:i, s:i, s:{s:s, s:s}}", "name", "thread_name", "ph", "M", "pid",
                   4242, "tid", tid, "args", "name", full, "mode", "basic");
}

json_t *sim_tl_timeline_json(const sim_tl_t *tl, int64_t origin, int64_t extent) {
  json_t *evs = json_array();
  /* Every reply names the threads the recorder knows (PrintJSONMeta). */
  if (tl->threads) {
    size_t k;
    json_t *m;
    json_array_foreach(tl->threads, k, m) json_array_append(evs, m);
  } else {
    json_array_append_new(evs, meta(SIM_TID_PLATFORM, "io.flutter.1.platform"));
    json_array_append_new(evs, meta(SIM_TID_UI, "io.flutter.1.ui"));
    json_array_append_new(evs, meta(SIM_TID_RASTER, "io.flutter.1.raster"));
    json_array_append_new(evs, meta(SIM_TID_IO, "io.flutter.1.io"));
  }
  int64_t lo = origin >= 0 ? origin : INT64_MIN;
  int64_t hi = origin >= 0 && extent >= 0 ? origin + extent : INT64_MAX;
  int64_t oldest = -1, newest = -1;
  for (size_t i = 0; i < tl->len; i++) {
    const sim_tl_event_t *e = &tl->ring[(tl->head + i) % tl->cap];
    /* ts in [origin, origin + extent], both ends; an X when it overlaps. */
    if (e->ts + e->dur < lo || e->ts > hi) continue;
    if (oldest < 0 || e->ts < oldest) oldest = e->ts;
    if (e->ts + e->dur > newest) newest = e->ts + e->dur;
    char ph[2] = {e->ph, 0};
    json_t *j = json_pack("{s:s, s:s, s:s, s:i, s:i, s:I}", "name", e->name_ref ? e->name_ref : e->name,
                          "cat", e->cat, "ph", ph,
                          "pid", 4242, "tid", e->tid, "ts", (json_int_t)e->ts);
    if (e->ph == 'X') json_object_set_new(j, "dur", json_integer(e->dur));
    json_t *args = e->args ? json_deep_copy(e->args) : json_object();
    if (e->shader) json_object_set_new(args, "devtoolsTag", json_string("shaders"));
    if (e->frame_number > 0) {
      char n[24];
      snprintf(n, sizeof n, "%lld", (long long)e->frame_number);
      json_object_set_new(args, "frame_number", json_string(n));
    }
    json_object_set_new(j, "args", args);
    json_array_append_new(evs, j);
  }
  /* The span of the events returned: the lowest ts to the highest end, 0
   * and 0 when none (timeline.cc ReportTime; docs/flutter-apis.md). */
  return json_pack("{s:s, s:o, s:I, s:I}", "type", "Timeline", "traceEvents", evs,
                   "timeOriginMicros", (json_int_t)(oldest < 0 ? 0 : oldest), "timeExtentMicros",
                   (json_int_t)(oldest < 0 ? 0 : newest - oldest));
}

void sim_tl_clear(sim_tl_t *tl) {
  tl->head = tl->len = 0;
}
