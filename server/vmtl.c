/* vmtl: trace events of getVMTimeline, read across pulls and joined to frames.
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

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- names ------------------------------------------------------------------ */

/* Length of the well-formed UTF-8 sequence at s (n bytes left), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  size_t len;
  uint32_t min, cp;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF)
    len = 2, min = 0x80, cp = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF)
    len = 3, min = 0x800, cp = c & 0x0F;
  else if (c >= 0xF0 && c <= 0xF4)
    len = 4, min = 0x10000, cp = c & 0x07;
  else
    return 0;
  if (n < len) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

/* Copies at most VMTL_NAME_MAX - 1 bytes of s, whole UTF-8 sequences only; an invalid byte
 * becomes '?' and an embedded NUL ends the name, so the copy is always valid C and UTF-8. */
static void copy_name(char *out, const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  size_t o = 0, i = 0;
  while (i < n && u[i] != 0) {
    size_t len = utf8_seq(u + i, n - i);
    if (o + (len ? len : 1) > VMTL_NAME_MAX - 1) break;
    if (len == 0) {
      out[o++] = '?';
      i++;
    } else {
      memcpy(out + o, u + i, len);
      o += len;
      i += len;
    }
  }
  out[o] = '\0';
}

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

/* ---- thread classes ----------------------------------------------------------- */

/* PLATFORM is kept apart from UI inside the parser: it runs the root isolate when the platform
 * and UI threads are merged, and the raster work when there is no raster thread (macOS). */
typedef enum { CLS_UNKNOWN = 0, CLS_UI, CLS_RASTER, CLS_OTHER, CLS_PLATFORM } cls_t;

static int ends_with(const char *s, size_t n, const char *suffix) {
  size_t k = strlen(suffix);
  if (n == k) return memcmp(s, suffix, k) == 0;
  return n > k && s[n - k - 1] == '.' && memcmp(s + n - k, suffix, k) == 0;
}

static cls_t classify(const char *s, size_t n) {
  /* The VM decorates every name as "<name> (<tid>)"; strip that one suffix. */
  if (n >= 4 && s[n - 1] == ')') {
    size_t i = n - 1;
    while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9') i--;
    if (i < n - 1 && i > 0 && s[i - 1] == '-') i--;
    if (i >= 2 && i < n - 1 && s[i - 1] == '(' && s[i - 2] == ' ') n = i - 2;
  }
  if (n == 0) return CLS_UNKNOWN;
  if (ends_with(s, n, "ui")) return CLS_UI;
  if (ends_with(s, n, "raster") || ends_with(s, n, "gpu")) return CLS_RASTER;
  if (ends_with(s, n, "platform")) return CLS_PLATFORM;
  return CLS_OTHER;
}

static vmtl_thread_t public_thread(cls_t c) {
  switch (c) {
    case CLS_UI:
    case CLS_PLATFORM:
      return VMTL_THREAD_UI;
    case CLS_RASTER:
      return VMTL_THREAD_RASTER;
    case CLS_OTHER:
      return VMTL_THREAD_OTHER;
    default:
      return VMTL_THREAD_UNKNOWN;
  }
}

vmtl_thread_t vmtl_thread_classify(const char *name) {
  return name ? public_thread(classify(name, strlen(name))) : VMTL_THREAD_UNKNOWN;
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
  cls_t cls;
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

static int key_class(cls_t c) {
  return c == CLS_UI || c == CLS_RASTER || c == CLS_PLATFORM;
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
  cls_t cls = t ? t->cls : CLS_UNKNOWN;
  vmtl_event_t ev;
  if (flags & F_GC) {
    ev.kind = VMTL_GC;
  } else if (flags & F_SHADER) {
    ev.kind = VMTL_SHADER;
  } else if ((cls == CLS_RASTER || (cls == CLS_PLATFORM && !r->p->has_raster)) &&
             dur >= VMTL_RASTER_MIN_US && !(flags & F_FRAME)) {
    ev.kind = VMTL_RASTER;
  } else {
    return;
  }
  ev.ts_us = ts;
  ev.dur_us = dur;
  ev.thread = public_thread(cls);
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
  cls_t cls = classify(json_string_value(name), json_string_length(name));
  thread_t *t = thread_find(p, json_integer_value(tid));
  if (!t && cls == CLS_UNKNOWN) return; /* unnamed and unknown: nothing to remember */
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
  if (c != 'E') copy_name(copy, name, name_len);
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
    if (p->threads[i].used && p->threads[i].cls == CLS_RASTER) p->has_raster = 1;

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

/* ---- the join ------------------------------------------------------------------ */

#define NONE SIZE_MAX
#define OFFSET_MAX (INT64_C(1) << 61) /* keeps ts + offset + dur far from overflow */

typedef struct {
  int64_t a, b;
  const char *name;
} span_t;

static int span_cmp(const void *x, const void *y) {
  const span_t *s = x, *t = y;
  if (s->a != t->a) return s->a < t->a ? -1 : 1;
  if (s->b != t->b) return s->b < t->b ? -1 : 1;
  return strncmp(s->name, t->name, VMTL_NAME_MAX);
}

/* Merged, sorted, disjoint intervals with prefix sums of their lengths. */
typedef struct {
  size_t n;
  int64_t *start, *end, *pre; /* pre[i]: total length of intervals 0..i-1 */
} uni_t;

static int uni_build(uni_t *u, span_t *s, size_t n) {
  memset(u, 0, sizeof *u);
  if (n == 0) return 0;
  qsort(s, n, sizeof *s, span_cmp);
  u->start = malloc(n * sizeof *u->start);
  u->end = malloc(n * sizeof *u->end);
  u->pre = malloc((n + 1) * sizeof *u->pre);
  if (!u->start || !u->end || !u->pre) return -1;
  u->pre[0] = 0;
  for (size_t i = 0; i < n; i++) {
    if (u->n > 0 && s[i].a <= u->end[u->n - 1]) {
      if (s[i].b > u->end[u->n - 1]) u->end[u->n - 1] = s[i].b;
      continue;
    }
    u->start[u->n] = s[i].a;
    u->end[u->n] = s[i].b;
    u->n++;
  }
  for (size_t i = 0; i < u->n; i++) u->pre[i + 1] = u->pre[i] + (u->end[i] - u->start[i]);
  return 0;
}

static void uni_free(uni_t *u) {
  free(u->start);
  free(u->end);
  free(u->pre);
}

/* First index in v[0..n) whose value is > x (v sorted ascending). */
static size_t first_above(const int64_t *v, size_t n, int64_t x) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (v[mid] > x)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/* Length of the union inside [s, e), and how many of its pieces touch it. */
static int64_t uni_within(const uni_t *u, int64_t s, int64_t e, uint32_t *count) {
  *count = 0;
  if (u->n == 0 || s >= e) return 0;
  size_t lo = first_above(u->end, u->n, s);       /* first piece ending after s */
  size_t hi = first_above(u->start, u->n, e - 1); /* first piece starting at or after e */
  if (lo >= hi) return 0;
  int64_t sum = u->pre[hi] - u->pre[lo];
  if (u->start[lo] < s) sum -= s - u->start[lo];
  if (u->end[hi - 1] > e) sum -= u->end[hi - 1] - e;
  *count = hi - lo > UINT32_MAX ? UINT32_MAX : (uint32_t)(hi - lo);
  return sum;
}

/* The raster events sorted by start, for "which single event overlaps [s, e) most": the ones
 * starting before s overlap by min(b, e) - s (a prefix maximum of b answers); of those starting
 * inside, the first that runs past e overlaps by e - a, and every one before it ends inside,
 * so a range maximum of lengths answers the rest. */
typedef struct {
  size_t n, size; /* size: leaves of the trees, a power of two */
  span_t *s;
  int64_t *premax_b; /* max b over s[0..i] */
  int64_t *tb;       /* segment tree: max b */
  size_t *tl;        /* segment tree: index of the longest (earliest on ties) */
} top_t;

static size_t longer(const span_t *s, size_t i, size_t j) {
  if (i == NONE) return j;
  if (j == NONE) return i;
  int64_t li = s[i].b - s[i].a, lj = s[j].b - s[j].a;
  return (lj > li || (lj == li && j < i)) ? j : i;
}

static int top_build(top_t *t, span_t *s, size_t n) {
  memset(t, 0, sizeof *t);
  t->s = s;
  t->n = n;
  if (n == 0) return 0;
  qsort(s, n, sizeof *s, span_cmp);
  t->size = 1;
  while (t->size < n) t->size *= 2;
  t->premax_b = malloc(n * sizeof *t->premax_b);
  t->tb = malloc(2 * t->size * sizeof *t->tb);
  t->tl = malloc(2 * t->size * sizeof *t->tl);
  if (!t->premax_b || !t->tb || !t->tl) return -1;
  for (size_t i = 0; i < n; i++)
    t->premax_b[i] = (i == 0 || s[i].b > t->premax_b[i - 1]) ? s[i].b : t->premax_b[i - 1];
  for (size_t i = 0; i < t->size; i++) {
    t->tb[t->size + i] = i < n ? s[i].b : INT64_MIN;
    t->tl[t->size + i] = i < n ? i : NONE;
  }
  for (size_t i = t->size - 1; i > 0; i--) {
    t->tb[i] = t->tb[2 * i] > t->tb[2 * i + 1] ? t->tb[2 * i] : t->tb[2 * i + 1];
    t->tl[i] = longer(s, t->tl[2 * i], t->tl[2 * i + 1]);
  }
  return 0;
}

static void top_free(top_t *t) {
  free(t->premax_b);
  free(t->tb);
  free(t->tl);
}

/* First index in [lo, hi) with b > x, or NONE. */
static size_t first_b_above(const top_t *t, size_t node, size_t nl, size_t nr, size_t lo, size_t hi,
                            int64_t x) {
  if (nr <= lo || hi <= nl || t->tb[node] <= x) return NONE;
  if (nr - nl == 1) return nl;
  size_t mid = nl + (nr - nl) / 2;
  size_t i = first_b_above(t, 2 * node, nl, mid, lo, hi, x);
  return i != NONE ? i : first_b_above(t, 2 * node + 1, mid, nr, lo, hi, x);
}

/* Index of the longest event in [lo, hi) (earliest on ties), or NONE. */
static size_t longest_in(const top_t *t, size_t lo, size_t hi) {
  size_t best_l = NONE, best_r = NONE;
  for (size_t l = lo + t->size, r = hi + t->size; l < r; l /= 2, r /= 2) {
    if (l & 1) best_l = longer(t->s, best_l, t->tl[l++]);
    if (r & 1) best_r = longer(t->s, t->tl[--r], best_r);
  }
  return longer(t->s, best_l, best_r);
}

/* First index in s[0..n) starting at or after x. */
static size_t first_start(const span_t *s, size_t n, int64_t x) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s[mid].a >= x)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

static void top_within(const top_t *t, int64_t s, int64_t e, vmtl_causes_t *out) {
  if (t->n == 0 || s >= e) return;
  size_t lo = first_start(t->s, t->n, s), hi = first_start(t->s, t->n, e);
  int64_t best = 0;
  size_t bi = NONE;
  if (lo > 0) { /* started before the window */
    int64_t reach = t->premax_b[lo - 1] < e ? t->premax_b[lo - 1] : e;
    if (reach - s > 0) {
      best = reach - s;
      bi = first_b_above(t, 1, 0, t->size, 0, lo, reach - 1);
    }
  }
  size_t past = first_b_above(t, 1, 0, t->size, lo, hi, e); /* starts inside, ends after e */
  size_t inside = longest_in(t, lo, past != NONE ? past : hi);
  if (inside != NONE) {
    int64_t ov = t->s[inside].b - t->s[inside].a;
    if (ov > best) {
      best = ov;
      bi = inside;
    }
  }
  if (past != NONE && e - t->s[past].a > best) {
    best = e - t->s[past].a;
    bi = past;
  }
  if (bi == NONE || best <= 0) return;
  out->raster_top_us = best;
  /* The caller's names need not end inside their arrays: read at most one array. */
  const char *name = t->s[bi].name;
  const char *nul = memchr(name, '\0', VMTL_NAME_MAX);
  copy_name(out->raster_top, name, nul ? (size_t)(nul - name) : VMTL_NAME_MAX);
}

int vmtl_join(const vmtl_event_t *ev, size_t nev, const vmtl_window_t *fr, size_t nfr,
              int64_t offset_us, vmtl_causes_t *out) {
  if (nfr) memset(out, 0, nfr * sizeof *out);
  if (nev > SIZE_MAX / (8 * sizeof(span_t))) return -1;
  if (offset_us > OFFSET_MAX) offset_us = OFFSET_MAX;
  if (offset_us < -OFFSET_MAX) offset_us = -OFFSET_MAX;
  span_t *gc = malloc((nev ? nev : 1) * sizeof *gc);
  span_t *sh = malloc((nev ? nev : 1) * sizeof *sh);
  span_t *ra = malloc((nev ? nev : 1) * sizeof *ra);
  uni_t ug = {0}, us = {0};
  top_t tr = {0};
  size_t ngc = 0, nsh = 0, nra = 0;
  int rc = -1;
  if (!gc || !sh || !ra) goto out;
  for (size_t i = 0; i < nev; i++) {
    const vmtl_event_t *v = &ev[i];
    if (v->dur_us <= 0 || v->dur_us > VMTL_TIME_MAX || v->ts_us < -VMTL_TIME_MAX ||
        v->ts_us > VMTL_TIME_MAX)
      continue; /* a point in time covers nothing */
    span_t s = {v->ts_us + offset_us, v->ts_us + offset_us + v->dur_us, v->name};
    if (v->kind == VMTL_GC && (v->thread == VMTL_THREAD_UI || v->thread == VMTL_THREAD_UNKNOWN))
      gc[ngc++] = s;
    else if (v->kind == VMTL_SHADER)
      sh[nsh++] = s;
    else if (v->kind == VMTL_RASTER)
      ra[nra++] = s;
  }
  if (uni_build(&ug, gc, ngc) || uni_build(&us, sh, nsh) || top_build(&tr, ra, nra)) goto out;
  for (size_t f = 0; f < nfr; f++) {
    out[f].gc_us = uni_within(&ug, fr[f].build_start_us, fr[f].build_end_us, &out[f].gc_n);
    out[f].shader_us =
        uni_within(&us, fr[f].raster_start_us, fr[f].raster_end_us, &out[f].shader_n);
    top_within(&tr, fr[f].raster_start_us, fr[f].raster_end_us, &out[f]);
  }
  rc = 0;
out:
  if (rc != 0 && nfr) memset(out, 0, nfr * sizeof *out);
  uni_free(&ug);
  uni_free(&us);
  top_free(&tr);
  free(gc);
  free(sh);
  free(ra);
  return rc;
}
