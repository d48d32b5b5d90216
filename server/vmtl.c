/* vmtl: trace events of getVMTimeline, read across pulls (joined to frames in vmtl_join.c).
 *
 * Facts this file relies on (read from the sources, not guessed):
 * - dart-lang/sdk runtime/vm/timeline.cc (current main): TimelineEvent::PrintJSON writes
 *   "name", "cat" (the stream: "GC", "Embedder", "Dart", ...), integer "tid"/"pid", integer
 *   "ts" (PrintProperty64), "ph" and, for "X", an integer "dur"; args as strings.
 *   TimelineTrackMetadata::PrintJSON writes {"name":"thread_name","ph":"M","pid","tid",
 *   "args":{"name":"<name> (<tid>)","mode":"basic"}} for every thread the recorder has seen, an
 *   unnamed one as "" (so " (<tid>)"). The reply is {"type":"Timeline","traceEvents":[meta...,
 *   events...],"timeOriginMicros","timeExtentMicros"}. Events come block by block (a block holds
 *   one thread's events in time order), not globally sorted. getVMTimeline's range filter
 *   (TimelineEvent::Within) returns a finished "X" that overlaps the range, and a B or E whose ts
 *   lies in it: an E can arrive without its B, and a long X can come back in the next pull.
 * - runtime/vm/json_writer.cc PrintValue64: integers, asserted representable in JavaScript
 *   (|v| <= 2^53); anything larger is not from a VM.
 * - GC scopes: TIMELINE_FUNCTION_GC_DURATION is a TimelineBeginEndScope (B/E) on the GC stream
 *   in current VMs and a TimelineDurationScope ("X") in older ones (dart-lang/sdk 3d21a46b
 *   runtime/vm/timeline.h). Names: "CollectNewGeneration", "CollectOldGeneration" (heap/heap.cc,
 *   0a7cd496) with sub-phases nested inside ("ProcessWeakHandles", "WeakHandleProcessing", ...);
 *   concurrent work ("ConcurrentMark", "ConcurrentSweep") runs on "DartWorker" threads.
 * - Thread names: flutter/flutter engine/src/flutter/runtime/dart_isolate.cc (002ab774)
 *   UpdateThreadPoolNames posts Dart_SetThreadName(label + ".raster" / ".ui" / ".io" /
 *   ".platform") to each task runner, in that order; OSThread::SetName replaces the name. Android
 *   labels are "1" (shell/platform/android/android_shell_holder.cc, 34a9429f), iOS
 *   "io.flutter.1", desktop "io.flutter" (flutter/devtools timeline_events_controller.dart,
 *   e415424f). Before the raster rename the thread was ".gpu".
 * - Merged platform/UI thread: common/settings.h (01453fa8) defaults merged_platform_ui_thread to
 *   kEnabled, and Android then uses the platform runner as the UI runner. Both the ".ui" and the
 *   ".platform" names are posted to that one thread, ".platform" last, so the thread that runs
 *   the root isolate (and its GC) is named "<label>.platform". On macOS there is no raster thread
 *   and raster work runs on ".platform" (DevTools' comment and fallback, same file).
 * - Shaders: shell/common/skia_event_tracer_impl.cc (f2c14e51) turns Skia's
 *   "disabled-by-default-skia.shaders" events into a B carrying args.devtoolsTag = "shaders" and an
 *   E without args (or an async b/e pair, which Skia does not use for shader compilation).
 * - The frame's own envelope on each thread carries args.frame_number ("Animator::BeginFrame",
 *   "Rasterizer::DoDraw", "GPURasterizer::Draw"; DevTools' frame identifiers). */
#include "vmtl.h"
#include "errbuf.h"
#include "vmtl_names.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- hashing ------------------------------------------------------------------ */

static uint64_t fnv_add(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* splitmix64's finaliser: FNV's low bits are weak as a table index. */
static uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* ---- the parser's state ------------------------------------------------------- */

enum { F_GC = 1, F_SHADER = 2, F_FRAME = 4 };

typedef struct {
  int64_t ts;
  uint64_t name_hash; /* of the whole name: the copy below may be cut */
  unsigned flags;
  char name[VMTL_NAME_MAX];
} open_t;

typedef struct {
  int used;
  int64_t tid;
  vmtl_cls_t cls;
  uint32_t touched; /* pull that last named or used it: the least recent goes first */
  /* The VM writes a thread's B and E events in time order, so one older than the newest of an
   * earlier pull was in that pull. This holds when the ring of keys overflows, which would
   * otherwise let a repeated E close the wrong B. -1: none yet. */
  int64_t wm, next_wm;
  /* Keys of this pull's entries at next_wm, put back into the ring at the end of the pull: the
   * order cannot tell a repeat at exactly wm, and these keys must outlive a flood of others. */
  uint64_t wm_keys[4];
  size_t n_wm_keys;
  size_t nopen;
  open_t *open; /* VMTL_MAX_OPEN slots once the thread has had a B; innermost last */
} thread_t;

/* Keys of recent entries. The ring holds them in arrival order, so the oldest is dropped first
 * when it is full; the open-addressing index finds them. The index is never cleaned entry by
 * entry: a slot whose ring position was reused no longer matches, and the index is rebuilt from
 * the live ring when it is half full of such slots. */
typedef struct {
  uint64_t key;
  int64_t until; /* the entry's last µs (ts, or ts + dur): it may come back until then + lookback */
  uint64_t seq;
  uint32_t pull;
} seen_t;

struct vmtl_parser {
  thread_t threads[VMTL_MAX_THREADS];
  size_t last; /* the thread of the previous lookup: entries come in runs per thread */
  int has_raster;
  seen_t *ring;
  size_t cap; /* a power of two <= VMTL_SEEN_MAX */
  uint64_t head, tail;
  uint32_t *slot; /* ring position + 1; 0 = empty. 4 * cap of them */
  size_t slot_used;
  int64_t newest; /* the newest ts of all pulls so far, -1 before any */
  uint32_t pull;
};

#define SEEN_START 1024

vmtl_parser_t *vmtl_parser_new(void) {
  vmtl_parser_t *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->ring = calloc(SEEN_START, sizeof *p->ring);
  p->slot = calloc(4 * SEEN_START, sizeof *p->slot);
  if (!p->ring || !p->slot) {
    vmtl_parser_free(p);
    return NULL;
  }
  p->cap = SEEN_START;
  p->newest = -1;
  return p;
}

void vmtl_parser_free(vmtl_parser_t *p) {
  if (!p) return;
  for (size_t i = 0; i < VMTL_MAX_THREADS; i++) free(p->threads[i].open);
  free(p->ring);
  free(p->slot);
  free(p);
}

static seen_t *seen_find(vmtl_parser_t *p, uint64_t key) {
  size_t mask = 4 * p->cap - 1;
  for (size_t i = mix64(key) & mask; p->slot[i]; i = (i + 1) & mask) {
    seen_t *e = &p->ring[p->slot[i] - 1];
    if (e->key == key && e->seq >= p->tail && e->seq < p->head) return e;
  }
  return NULL;
}

static void slot_put(vmtl_parser_t *p, uint64_t key, size_t pos) {
  size_t mask = 4 * p->cap - 1;
  size_t i = mix64(key) & mask;
  while (p->slot[i]) i = (i + 1) & mask;
  p->slot[i] = (uint32_t)pos + 1;
  p->slot_used++;
}

static void slot_rebuild(vmtl_parser_t *p) {
  memset(p->slot, 0, 4 * p->cap * sizeof *p->slot);
  p->slot_used = 0;
  for (uint64_t s = p->tail; s < p->head; s++)
    slot_put(p, p->ring[s & (p->cap - 1)].key, s & (p->cap - 1));
}

/* Doubles the ring (and its index); -1 when out of memory, nothing changed. */
static int seen_grow(vmtl_parser_t *p) {
  size_t cap = p->cap * 2;
  seen_t *ring = calloc(cap, sizeof *ring);
  uint32_t *slot = calloc(4 * cap, sizeof *slot);
  if (!ring || !slot) {
    free(ring);
    free(slot);
    return -1;
  }
  for (uint64_t s = p->tail; s < p->head; s++) ring[s & (cap - 1)] = p->ring[s & (p->cap - 1)];
  free(p->ring);
  free(p->slot);
  p->ring = ring;
  p->slot = slot;
  p->cap = cap;
  slot_rebuild(p);
  return 0;
}

static void seen_add(vmtl_parser_t *p, uint64_t key, int64_t until) {
  if (p->head - p->tail == p->cap && (p->cap >= VMTL_SEEN_MAX || seen_grow(p) != 0))
    p->tail++; /* full: forget the oldest key */
  size_t pos = p->head & (p->cap - 1);
  p->ring[pos] = (seen_t){key, until, p->head, p->pull};
  p->head++;
  slot_put(p, key, pos);
  if (p->slot_used * 2 > 4 * p->cap) slot_rebuild(p);
}

/* Drops the keys that can no longer come back: the next pull presumes anything ending before
 * newest - lookback seen. Arrival order is close to time order, so stopping at the first live
 * key leaves few dead ones behind, and those go when the ring fills. */
static void seen_expire(vmtl_parser_t *p) {
  if (p->newest < 0) return;
  int64_t horizon = p->newest - VMTL_LOOKBACK_US;
  while (p->tail < p->head && p->ring[p->tail & (p->cap - 1)].until < horizon) p->tail++;
}

static thread_t *thread_find(vmtl_parser_t *p, int64_t tid) {
  thread_t *t = &p->threads[p->last];
  if (t->used && t->tid == tid) return t;
  for (size_t i = 0; i < VMTL_MAX_THREADS; i++) {
    if (p->threads[i].used && p->threads[i].tid == tid) {
      p->last = i;
      return &p->threads[i];
    }
  }
  return NULL;
}

static int key_class(vmtl_cls_t c) {
  return c == VMTL_CLS_UI || c == VMTL_CLS_RASTER || c == VMTL_CLS_PLATFORM;
}

/* A free entry for tid, evicting the least recently touched thread that is neither UI, raster
 * nor platform: preferably one with no open B; with open ones (counted unmatched) only when
 * room is made for a thread that matters. NULL when there is none to give. */
static thread_t *thread_add(vmtl_parser_t *p, int64_t tid, int matters, size_t *unmatched) {
  thread_t *victim = NULL, *busy = NULL;
  for (size_t i = 0; i < VMTL_MAX_THREADS; i++) {
    thread_t *t = &p->threads[i];
    if (!t->used) {
      victim = t;
      break;
    }
    if (key_class(t->cls)) continue;
    if (t->nopen == 0) {
      if (!victim || t->touched < victim->touched) victim = t;
    } else if (!busy || t->touched < busy->touched) {
      busy = t;
    }
  }
  if (!victim && matters) victim = busy;
  if (!victim) return NULL;
  *unmatched += victim->nopen;
  open_t *keep = victim->open;
  memset(victim, 0, sizeof *victim);
  victim->open = keep; /* the slots are reused by the next owner */
  victim->used = 1;
  victim->tid = tid;
  victim->touched = p->pull;
  victim->wm = victim->next_wm = -1;
  p->last = (size_t)(victim - p->threads);
  return victim;
}

/* ---- reading one entry -------------------------------------------------------- */

/* A JSON number as µs: an integer, or a real rounded to the nearest; -1 when absent, not a
 * number, negative or beyond 2^53. */
static int64_t micros(const json_t *v) {
  if (json_is_integer(v)) {
    json_int_t i = json_integer_value(v);
    return (i < 0 || i > VMTL_TIME_MAX) ? -1 : (int64_t)i;
  }
  if (json_is_real(v)) {
    double d = json_real_value(v);
    if (!(d >= 0.0 && d <= (double)VMTL_TIME_MAX)) return -1; /* NaN fails too */
    return (int64_t)(d + 0.5);
  }
  return -1;
}

static int str_is(const json_t *v, const char *s) {
  return json_is_string(v) && json_string_length(v) == strlen(s) &&
         memcmp(json_string_value(v), s, strlen(s)) == 0;
}

/* "GC" as one of the comma-separated categories (Chrome's form; the VM writes one). */
static int cat_has_gc(const json_t *cat) {
  if (!json_is_string(cat)) return 0;
  const char *s = json_string_value(cat);
  size_t n = json_string_length(cat);
  for (size_t i = 0; i <= n;) {
    size_t j = i;
    while (j < n && s[j] != ',') j++;
    size_t a = i, b = j;
    while (a < b && s[a] == ' ') a++;
    while (b > a && s[b - 1] == ' ') b--;
    if (b - a == 2 && s[a] == 'G' && s[a + 1] == 'C') return 1;
    i = j + 1;
  }
  return 0;
}

/* Shader and pipeline compilation by event name, for the compilations that
 * carry no devtoolsTag (only Skia's "skia.shaders" events that pass through
 * shell/common/skia_event_tracer_impl.cc get one). Every Ganesh backend's
 * finalize() starts with TRACE_EVENT0("skia.shaders", TRACE_FUNC) (google/skia
 * src/gpu/ganesh/gl/builders/GrGLProgramBuilder.cpp, mtl/
 * GrMtlPipelineStateBuilder.mm, vk/GrVkPipelineStateBuilder.cpp, d3d/
 * GrD3DPipelineStateBuilder.cpp), and TRACE_FUNC is the compiler's pretty
 * function: "GrMtlPipelineState *GrMtlPipelineStateBuilder::finalize(const
 * GrProgramDesc &, ...)" in DevTools' Flutter 3.7 iOS recording (19.9 ms,
 * untagged). So a table entry matches as the qualified name: at the start or
 * after a space or '*', and followed by '(' or the end. docs/flutter-apis.md
 * cites it; Impeller's pipeline creation has no confirmed name yet. */
static const char *const shader_names[] = {
    "GrGLProgramBuilder::finalize",
    "GrMtlPipelineStateBuilder::finalize",
    "GrVkPipelineStateBuilder::finalize",
    "GrD3DPipelineStateBuilder::finalize",
};

static int shader_name(const char *name, size_t len) {
  for (size_t i = 0; i < sizeof shader_names / sizeof *shader_names; i++) {
    size_t k = strlen(shader_names[i]);
    for (size_t at = 0; at + k <= len; at++) {
      if (memcmp(name + at, shader_names[i], k)) continue;
      int before = at == 0 || name[at - 1] == ' ' || name[at - 1] == '*';
      int after = at + k == len || name[at + k] == '(';
      if (before && after) return 1;
    }
  }
  return 0;
}

static unsigned arg_flags(const json_t *e) {
  const json_t *args = json_object_get(e, "args");
  unsigned f = 0;
  if (!json_is_object(args)) return 0;
  if (str_is(json_object_get(args, "devtoolsTag"), "shaders")) f |= F_SHADER;
  if (json_object_get(args, "frame_number")) f |= F_FRAME;
  return f;
}

typedef struct {
  vmtl_parser_t *p;
  void (*sink)(void *, const vmtl_event_t *);
  void *arg;
  vmtl_pull_stats_t *st;
} run_t;

/* Decides what a finished event is, if anything we keep, and hands it out. */
static void complete(run_t *r, const thread_t *t, int64_t ts, int64_t dur, unsigned flags,
                     const char *name) {
  vmtl_cls_t cls = t ? t->cls : VMTL_CLS_UNKNOWN;
  vmtl_event_t ev;
  if (flags & F_GC) {
    ev.kind = VMTL_GC;
  } else if (flags & F_SHADER) {
    ev.kind = VMTL_SHADER;
  } else if ((cls == VMTL_CLS_RASTER || (cls == VMTL_CLS_PLATFORM && !r->p->has_raster)) &&
             dur >= VMTL_RASTER_MIN_US && !(flags & F_FRAME)) {
    ev.kind = VMTL_RASTER;
  } else {
    return;
  }
  ev.ts_us = ts;
  ev.dur_us = dur;
  ev.thread = vmtl_thread_public(cls);
  memcpy(ev.name, name, VMTL_NAME_MAX);
  r->st->kept++;
  if (r->sink) r->sink(r->arg, &ev);
}

static void read_thread_name(vmtl_parser_t *p, const json_t *e, vmtl_pull_stats_t *st) {
  const json_t *tid = json_object_get(e, "tid");
  const json_t *name = json_object_get(json_object_get(e, "args"), "name");
  if (!json_is_integer(tid) || !json_is_string(name)) {
    st->malformed++;
    return;
  }
  vmtl_cls_t cls = vmtl_thread_class(json_string_value(name), json_string_length(name));
  thread_t *t = thread_find(p, json_integer_value(tid));
  if (!t && cls == VMTL_CLS_UNKNOWN) return; /* unnamed and unknown: nothing to remember */
  if (!t) t = thread_add(p, json_integer_value(tid), key_class(cls), &st->unmatched);
  if (!t) return; /* no room: events on it stay of an unknown thread */
  t->cls = cls;
  t->touched = p->pull;
}

static void on_begin(run_t *r, int64_t tid, int64_t ts, uint64_t name_hash, unsigned flags,
                     const char *name) {
  vmtl_parser_t *p = r->p;
  thread_t *t = thread_find(p, tid);
  if (!t) t = thread_add(p, tid, 0, &r->st->unmatched);
  if (t && !t->open) t->open = malloc(VMTL_MAX_OPEN * sizeof *t->open);
  if (!t || !t->open) {
    r->st->unmatched++; /* its E will find nothing either */
    return;
  }
  t->touched = p->pull;
  if (t->nopen == VMTL_MAX_OPEN) {
    memmove(t->open, t->open + 1, (VMTL_MAX_OPEN - 1) * sizeof *t->open);
    t->nopen--;
    r->st->unmatched++;
  }
  open_t *o = &t->open[t->nopen++];
  o->ts = ts;
  o->name_hash = name_hash;
  o->flags = flags;
  memcpy(o->name, name, VMTL_NAME_MAX);
}

static void on_end(run_t *r, int64_t tid, int64_t ts, uint64_t name_hash, unsigned flags) {
  thread_t *t = thread_find(r->p, tid);
  if (!t || t->nopen == 0) {
    r->st->unmatched++;
    return;
  }
  size_t i = t->nopen;
  while (i > 0 && t->open[i - 1].name_hash != name_hash) i--;
  i = i ? i - 1 : t->nopen - 1;
  if (ts < t->open[i].ts) {
    r->st->malformed++; /* ends before it began: the B stays open for its real E */
    return;
  }
  /* B events opened inside this one can no longer end inside it. */
  r->st->unmatched += t->nopen - 1 - i;
  open_t o = t->open[i];
  t->nopen = i;
  t->touched = r->p->pull;
  complete(r, t, o.ts, ts - o.ts, o.flags | (flags & F_SHADER), o.name);
}

/* Whether the entry was seen in an earlier pull, remembering it for the later ones. */
static int repeat(vmtl_parser_t *p, int64_t horizon, uint64_t key, int64_t until) {
  if (until < horizon) return 1; /* older than any overlap: the earlier pulls had it */
  seen_t *s = seen_find(p, key);
  if (s) return s->pull != p->pull; /* twice in one reply: both are real */
  seen_add(p, key, until);
  return 0;
}

static void read_event(run_t *r, const json_t *e, int64_t horizon) {
  vmtl_pull_stats_t *st = r->st;
  const json_t *ph = json_object_get(e, "ph");
  if (!json_is_object(e) || !json_is_string(ph) || json_string_length(ph) != 1) {
    st->malformed++;
    return;
  }
  char c = json_string_value(ph)[0];
  if (c == 'M') return; /* read in the first pass */
  const json_t *jtid = json_object_get(e, "tid");
  const json_t *jname = json_object_get(e, "name");
  int64_t ts = micros(json_object_get(e, "ts"));
  if (!json_is_integer(jtid) || ts < 0 || (jname && !json_is_string(jname))) {
    st->malformed++;
    return;
  }
  if (ts > st->newest_ts_us) st->newest_ts_us = ts;
  if (c != 'X' && c != 'B' && c != 'E') return; /* instants, counters, async, flows */
  int64_t dur = -1;
  if (c == 'X' && (dur = micros(json_object_get(e, "dur"))) < 0) {
    st->malformed++;
    return;
  }
  int64_t tid = json_integer_value(jtid);
  const char *name = jname ? json_string_value(jname) : "";
  size_t name_len = jname ? json_string_length(jname) : 0;
  uint64_t name_hash = fnv_add(14695981039346656037ull, name, name_len);
  unsigned flags = arg_flags(e);
  if (c != 'E' && cat_has_gc(json_object_get(e, "cat"))) flags |= F_GC;
  if (c != 'E' && !(flags & F_GC) && shader_name(name, name_len)) flags |= F_SHADER;
  /* An X that can never be kept is not worth a key: it changes nothing. */
  if (c == 'X' && !(flags & (F_GC | F_SHADER)) && dur < VMTL_RASTER_MIN_US) return;
  thread_t *t = thread_find(r->p, tid);
  uint64_t key = fnv_add(name_hash, &tid, sizeof tid);
  key = fnv_add(key, &c, 1);
  key = fnv_add(key, &ts, sizeof ts);
  key = fnv_add(key, &dur, sizeof dur);
  if ((c != 'X' && t && ts < t->wm) || repeat(r->p, horizon, key, c == 'X' ? ts + dur : ts)) {
    st->repeats++;
    return;
  }
  char copy[VMTL_NAME_MAX];
  if (c != 'E') vmtl_copy_name(copy, name, name_len);
  if (c == 'X') {
    if (t) t->touched = r->p->pull;
    complete(r, t, ts, dur, flags, copy);
    return;
  }
  if (c == 'B')
    on_begin(r, tid, ts, name_hash, flags, copy);
  else
    on_end(r, tid, ts, name_hash, flags);
  if ((t = thread_find(r->p, tid)) == NULL) return;
  if (ts > t->next_wm) {
    t->next_wm = ts;
    t->n_wm_keys = 0;
  }
  if (ts == t->next_wm && t->n_wm_keys < 4) t->wm_keys[t->n_wm_keys++] = key;
}


int vmtl_parse(vmtl_parser_t *p, const json_t *result,
               void (*sink)(void *arg, const vmtl_event_t *ev), void *arg, vmtl_pull_stats_t *st,
               char *err, size_t errlen) {
  vmtl_pull_stats_t local;
  if (!st) st = &local;
  memset(st, 0, sizeof *st);
  st->origin_us = st->extent_us = st->newest_ts_us = -1;
  if (!json_is_object(result)) return errbuf_fail(err, errlen, "timeline: not an object");
  const json_t *type = json_object_get(result, "type");
  if (!str_is(type, "Timeline"))
    return errbuf_fail(err, errlen, "timeline: type is %s, not Timeline",
                json_is_string(type) ? json_string_value(type) : "missing");
  const json_t *events = json_object_get(result, "traceEvents");
  if (!json_is_array(events)) return errbuf_fail(err, errlen, "timeline: traceEvents is not an array");

  p->pull++;
  st->trace_events = json_array_size(events);
  st->origin_us = micros(json_object_get(result, "timeOriginMicros"));
  st->extent_us = micros(json_object_get(result, "timeExtentMicros"));

  size_t i;
  const json_t *e;
  json_array_foreach(events, i, e) {
    if (str_is(json_object_get(e, "ph"), "M") && str_is(json_object_get(e, "name"), "thread_name"))
      read_thread_name(p, e, st);
  }
  p->has_raster = 0;
  for (i = 0; i < VMTL_MAX_THREADS; i++)
    if (p->threads[i].used && p->threads[i].cls == VMTL_CLS_RASTER) p->has_raster = 1;

  /* Anything ending before this is presumed seen: pulls overlap by at most the lookback. */
  int64_t horizon = p->newest < 0 ? INT64_MIN : p->newest - VMTL_LOOKBACK_US;
  run_t r = {p, sink, arg, st};
  json_array_foreach(events, i, e) read_event(&r, e, horizon);

  if (st->newest_ts_us > p->newest) p->newest = st->newest_ts_us;
  for (i = 0; i < VMTL_MAX_THREADS; i++) {
    thread_t *t = &p->threads[i];
    if (!t->used) continue;
    if (t->next_wm >= 0 && t->next_wm >= t->wm) {
      t->wm = t->next_wm;
      for (size_t k = 0; k < t->n_wm_keys; k++) seen_add(p, t->wm_keys[k], t->wm);
    }
    t->next_wm = -1;
    t->n_wm_keys = 0;
  }
  seen_expire(p);
  return 0;
}
