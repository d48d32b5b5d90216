#include "vmtl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Trace events as the VM prints them (Chrome trace-event format; dart-lang/sdk
 * runtime/vm/timeline.cc TimelineEvent::PrintJSON): "ph" X (a duration, with
 * "dur"), B/E (the embedder's begin/end pairs), M (metadata: thread_name);
 * "ts"/"dur" in µs, "tid" an integer, "cat" the stream, "args" an object. */

#define MAX_TS (INT64_C(1) << 53)
#define SEEN_MIN 4096       /* slots of the recent-keys table at first (power of two) */
#define SEEN_MAX (1u << 18) /* ... at most: 4 MiB; past it repeats are counted, not remembered */

typedef struct {
  char name[VMTL_NAME_MAX];
  int64_t ts;
  int shader;
} open_t;

typedef struct {
  int64_t tid;
  vmtl_thread_t thread;
  open_t open[VMTL_MAX_OPEN];
  size_t nopen;
} thread_t;

typedef struct {
  uint64_t key; /* 0: empty */
  int64_t ts;
} seen_t;

struct vmtl_parser {
  thread_t threads[VMTL_MAX_THREADS];
  size_t nthreads;
  seen_t *seen; /* open addressing, cap slots, at most half full */
  size_t nseen, cap;
  int64_t newest;  /* the newest ts of earlier pulls (-1: none) */
  int64_t running; /* ... and of this one so far: the pruning horizon */
};

vmtl_parser_t *vmtl_parser_new(void) {
  vmtl_parser_t *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  if (!(p->seen = calloc(SEEN_MIN, sizeof *p->seen))) {
    free(p);
    return NULL;
  }
  p->cap = SEEN_MIN;
  p->newest = p->running = -1;
  return p;
}

void vmtl_parser_free(vmtl_parser_t *p) {
  if (!p) return;
  free(p->seen);
  free(p);
}

/* ---- small readers ------------------------------------------------------ */

/* An integer µs value: a JSON integer, or a real with no fraction (the VM
 * prints integers; other tools print reals). */
static int get_us(const json_t *o, const char *key, int64_t *out) {
  const json_t *v = json_object_get(o, key);
  double d;
  if (json_is_integer(v)) {
    *out = json_integer_value(v);
  } else if (json_is_real(v)) {
    d = json_real_value(v);
    if (!(d >= -(double)MAX_TS && d <= (double)MAX_TS)) return -1;
    *out = (int64_t)d;
  } else {
    return -1;
  }
  return *out < 0 || *out > MAX_TS ? -1 : 0;
}

/* Copies at most VMTL_NAME_MAX - 1 bytes, cut before a partial UTF-8
 * sequence, so the copy stays valid UTF-8 when the source was. */
static void copy_name(char *dst, const char *src) {
  size_t n = strlen(src);
  if (n > VMTL_NAME_MAX - 1) {
    n = VMTL_NAME_MAX - 1;
    while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80) n--;
  }
  memcpy(dst, src, n);
  dst[n] = '\0';
}

static int ends_with(const char *s, size_t n, const char *suffix) {
  size_t k = strlen(suffix);
  return n >= k && !memcmp(s + n - k, suffix, k);
}

/* A thread's role from its name: the engine names its task runners
 * "io.flutter.<n>.ui" / ".raster" (".gpu" before Flutter 1.20; on Android
 * "<n>.ui"); the VM may append " (<os id>)". */
static vmtl_thread_t classify_thread(const char *name) {
  size_t n = strlen(name);
  const char *paren = strstr(name, " (");
  if (paren) n = (size_t)(paren - name);
  if (ends_with(name, n, ".ui") || (n == 2 && !memcmp(name, "ui", 2))) return VMTL_THREAD_UI;
  if (ends_with(name, n, ".raster") || ends_with(name, n, ".gpu") ||
      (n == 6 && !memcmp(name, "raster", 6)) || (n == 3 && !memcmp(name, "gpu", 3)))
    return VMTL_THREAD_RASTER;
  return VMTL_THREAD_OTHER;
}

static thread_t *thread_get(vmtl_parser_t *p, int64_t tid, int create) {
  for (size_t i = 0; i < p->nthreads; i++)
    if (p->threads[i].tid == tid) return &p->threads[i];
  if (!create) return NULL;
  if (p->nthreads == VMTL_MAX_THREADS) {
    /* the oldest thread (likely gone) makes room */
    memmove(p->threads, p->threads + 1, (VMTL_MAX_THREADS - 1) * sizeof *p->threads);
    p->nthreads--;
  }
  thread_t *t = &p->threads[p->nthreads++];
  memset(t, 0, sizeof *t);
  t->tid = tid;
  return t;
}

/* ---- repeats ------------------------------------------------------------ */

static uint64_t fnv(uint64_t h, const void *data, size_t n) {
  const unsigned char *b = data;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

static uint64_t event_key(int64_t tid, char ph, int64_t ts, int64_t dur, const char *name) {
  uint64_t h = 1469598103934665603ull;
  h = fnv(h, &tid, sizeof tid);
  h = fnv(h, &ph, 1);
  h = fnv(h, &ts, sizeof ts);
  h = fnv(h, &dur, sizeof dur);
  h = fnv(h, name, strlen(name));
  return h ? h : 1;
}

static void seen_put(seen_t *t, size_t cap, uint64_t key, int64_t ts) {
  size_t j = (size_t)key & (cap - 1);
  while (t[j].key) j = (j + 1) & (cap - 1);
  t[j].key = key;
  t[j].ts = ts;
}

/* Rebuilds the table with the keys inside the lookback, in twice the slots
 * when they still fill half of it: amortised O(1) per event, memory in
 * proportion to the events of the lookback (an overlapping pull can repeat
 * only those). Returns -1 when it could not make room. */
static int seen_grow(vmtl_parser_t *p) {
  int64_t horizon = p->running - VMTL_LOOKBACK_US;
  size_t live = 0;
  for (size_t i = 0; i < p->cap; i++) live += p->seen[i].key && p->seen[i].ts >= horizon;
  size_t cap = p->cap;
  while (live * 4 > cap) cap *= 2;
  if (cap > SEEN_MAX) return -1;
  seen_t *fresh = calloc(cap, sizeof *fresh);
  if (!fresh) return -1;
  for (size_t i = 0; i < p->cap; i++)
    if (p->seen[i].key && p->seen[i].ts >= horizon)
      seen_put(fresh, cap, p->seen[i].key, p->seen[i].ts);
  free(p->seen);
  p->seen = fresh;
  p->cap = cap;
  p->nseen = live;
  return 0;
}

/* 1 when the event was seen within the lookback (a repeat); else records it. */
static int seen_check(vmtl_parser_t *p, uint64_t key, int64_t ts) {
  /* Older than the lookback of an earlier pull: read then, or never ours. */
  if (p->newest >= 0 && ts < p->newest - VMTL_LOOKBACK_US) return 1;
  if (ts > p->running) p->running = ts;
  size_t j = (size_t)key & (p->cap - 1);
  while (p->seen[j].key) {
    if (p->seen[j].key == key) return 1;
    j = (j + 1) & (p->cap - 1);
  }
  if ((p->nseen + 1) * 2 > p->cap && seen_grow(p) < 0) return 0; /* counted, not remembered */
  seen_put(p->seen, p->cap, key, ts);
  p->nseen++;
  return 0;
}

/* ---- parsing ------------------------------------------------------------ */

static int is_gc(const json_t *ev) {
  const char *cat = json_string_value(json_object_get(ev, "cat"));
  return cat && strstr(cat, "GC") != NULL;
}

static int is_shader(const json_t *ev) {
  const char *tag = json_string_value(json_object_get(json_object_get(ev, "args"), "devtoolsTag"));
  return tag && !strcmp(tag, "shaders");
}

typedef struct {
  vmtl_parser_t *p;
  void (*sink)(void *arg, const vmtl_event_t *ev);
  void *arg;
  vmtl_pull_stats_t *st;
} ctx_t;

/* A finished event: kept when it is of interest. */
static void finish(ctx_t *c, const thread_t *t, const char *name, int gc, int shader, int64_t ts,
                   int64_t dur) {
  vmtl_event_t e;
  memset(&e, 0, sizeof e);
  e.thread = t ? t->thread : VMTL_THREAD_UNKNOWN;
  if (shader)
    e.kind = VMTL_SHADER;
  else if (gc)
    e.kind = VMTL_GC;
  else if (e.thread == VMTL_THREAD_RASTER && dur >= VMTL_RASTER_MIN_US)
    e.kind = VMTL_RASTER;
  else
    return;
  e.ts_us = ts;
  e.dur_us = dur;
  copy_name(e.name, name);
  c->st->kept++;
  c->sink(c->arg, &e);
}

static void one_event(ctx_t *c, const json_t *ev) {
  vmtl_parser_t *p = c->p;
  const char *ph = json_string_value(json_object_get(ev, "ph"));
  const char *name = json_string_value(json_object_get(ev, "name"));
  const json_t *jtid = json_object_get(ev, "tid");
  int64_t ts, dur = 0;
  if (!ph || !ph[0] || ph[1] || !name || !json_is_integer(jtid) || get_us(ev, "ts", &ts) < 0) {
    if (!(ph && !strcmp(ph, "M"))) c->st->malformed++;
    return;
  }
  int64_t tid = json_integer_value(jtid);
  char kind = ph[0];
  if (kind != 'X' && kind != 'B' && kind != 'E') return; /* instants, async, counters, flows */
  if (kind == 'X' && get_us(ev, "dur", &dur) < 0) {
    c->st->malformed++;
    return;
  }
  if (ts > c->st->newest_ts_us) c->st->newest_ts_us = ts;
  if (seen_check(p, event_key(tid, kind, ts, dur, name), ts)) {
    c->st->repeats++;
    return;
  }
  if (kind == 'X') {
    finish(c, thread_get(p, tid, 0), name, is_gc(ev), is_shader(ev), ts, dur);
    return;
  }
  thread_t *t = thread_get(p, tid, 1);
  if (kind == 'B') {
    if (t->nopen == VMTL_MAX_OPEN) { /* the oldest never ended: give it up */
      memmove(t->open, t->open + 1, (VMTL_MAX_OPEN - 1) * sizeof *t->open);
      t->nopen--;
      c->st->unmatched++;
    }
    open_t *o = &t->open[t->nopen++];
    copy_name(o->name, name);
    o->ts = ts;
    /* GC never comes as B/E from the VM; the embedder's shader work does. */
    o->shader = is_shader(ev) | (is_gc(ev) << 1);
    return;
  }
  /* E: closes the innermost open B of that name, else the innermost. */
  if (!t->nopen) {
    c->st->unmatched++;
    return;
  }
  char cut[VMTL_NAME_MAX];
  copy_name(cut, name);
  size_t i = t->nopen;
  while (i > 0 && strcmp(t->open[i - 1].name, cut) != 0) i--;
  if (i == 0) i = t->nopen;
  open_t o = t->open[i - 1];
  memmove(t->open + i - 1, t->open + i, (t->nopen - i) * sizeof *t->open);
  t->nopen--;
  if (ts < o.ts) {
    c->st->malformed++;
    return;
  }
  finish(c, t, o.name, o.shader >> 1, (o.shader & 1) | is_shader(ev), o.ts, ts - o.ts);
}

int vmtl_parse(vmtl_parser_t *p, const json_t *result,
               void (*sink)(void *arg, const vmtl_event_t *ev), void *arg,
               vmtl_pull_stats_t *st, char *err, size_t errlen) {
  memset(st, 0, sizeof *st);
  st->origin_us = st->extent_us = st->newest_ts_us = -1;
  const char *type = json_string_value(json_object_get(result, "type"));
  const json_t *events = json_object_get(result, "traceEvents");
  if (!type || strcmp(type, "Timeline") != 0 || !json_is_array(events)) {
    if (err && errlen) snprintf(err, errlen, "not a Timeline (type and traceEvents expected)");
    return -1;
  }
  int64_t v;
  if (get_us(result, "timeOriginMicros", &v) == 0) st->origin_us = v;
  if (get_us(result, "timeExtentMicros", &v) == 0) st->extent_us = v;
  st->trace_events = json_array_size(events);
  size_t i;
  const json_t *ev;
  /* Thread names first: a reply names the threads its events ran on. */
  json_array_foreach(events, i, ev) {
    const char *ph = json_string_value(json_object_get(ev, "ph"));
    const char *name = json_string_value(json_object_get(ev, "name"));
    const json_t *tid = json_object_get(ev, "tid");
    if (!ph || strcmp(ph, "M") || !name || strcmp(name, "thread_name") || !json_is_integer(tid))
      continue;
    const char *tn = json_string_value(json_object_get(json_object_get(ev, "args"), "name"));
    if (!tn) {
      st->malformed++;
      continue;
    }
    thread_t *t = thread_get(p, json_integer_value(tid), 1);
    t->thread = classify_thread(tn);
  }
  ctx_t c = {p, sink, arg, st};
  json_array_foreach(events, i, ev) {
    if (!json_is_object(ev)) {
      st->malformed++;
      continue;
    }
    one_event(&c, ev);
  }
  if (st->newest_ts_us > p->newest) p->newest = st->newest_ts_us;
  return 0;
}

/* ---- the join ----------------------------------------------------------- */

typedef struct {
  int64_t start, end;
  size_t ev; /* index of the event */
} span_t;

static int span_cmp(const void *a, const void *b) {
  const span_t *x = a, *y = b;
  return x->start < y->start ? -1 : x->start > y->start;
}

/* The union length of spans (sorted by start) clipped to [lo, hi). */
static int64_t union_in(const span_t *s, size_t n, int64_t lo, int64_t hi) {
  int64_t total = 0, cur_s = 0, cur_e = 0;
  int open = 0;
  for (size_t i = 0; i < n; i++) {
    int64_t a = s[i].start > lo ? s[i].start : lo, b = s[i].end < hi ? s[i].end : hi;
    if (b <= a) continue;
    if (open && a <= cur_e) {
      if (b > cur_e) cur_e = b;
      continue;
    }
    if (open) total += cur_e - cur_s;
    cur_s = a;
    cur_e = b;
    open = 1;
  }
  if (open) total += cur_e - cur_s;
  return total;
}

/* First index in sorted spans whose start could reach lo: spans are sorted
 * by start, and none lasts longer than maxdur. */
static size_t lower(const span_t *s, size_t n, int64_t from) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (s[mid].start < from)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

int vmtl_join(const vmtl_event_t *ev, size_t nev, const vmtl_window_t *fr, size_t nfr,
              int64_t offset_us, vmtl_causes_t *out) {
  memset(out, 0, nfr * sizeof *out);
  span_t *gc = malloc((nev ? nev : 1) * sizeof *gc), *sh = malloc((nev ? nev : 1) * sizeof *sh);
  size_t ngc = 0, nsh = 0;
  int64_t gc_max = 0, sh_max = 0;
  if (!gc || !sh) {
    free(gc);
    free(sh);
    return -1;
  }
  for (size_t i = 0; i < nev; i++) {
    span_t s = {ev[i].ts_us + offset_us, ev[i].ts_us + offset_us + ev[i].dur_us, i};
    if (ev[i].kind == VMTL_GC &&
        (ev[i].thread == VMTL_THREAD_UI || ev[i].thread == VMTL_THREAD_UNKNOWN)) {
      gc[ngc++] = s;
      if (ev[i].dur_us > gc_max) gc_max = ev[i].dur_us;
    } else if (ev[i].kind == VMTL_SHADER) {
      sh[nsh++] = s;
      if (ev[i].dur_us > sh_max) sh_max = ev[i].dur_us;
    }
  }
  qsort(gc, ngc, sizeof *gc, span_cmp);
  qsort(sh, nsh, sizeof *sh, span_cmp);
  for (size_t f = 0; f < nfr; f++) {
    const vmtl_window_t *w = &fr[f];
    size_t a = lower(gc, ngc, w->build_start_us - gc_max), b = lower(gc, ngc, w->build_end_us);
    out[f].gc_us = union_in(gc + a, b - a, w->build_start_us, w->build_end_us);
    for (size_t i = a; i < b; i++)
      out[f].gc_n += gc[i].end > w->build_start_us && gc[i].start < w->build_end_us;
    a = lower(sh, nsh, w->raster_start_us - sh_max);
    b = lower(sh, nsh, w->raster_end_us);
    out[f].shader_us = union_in(sh + a, b - a, w->raster_start_us, w->raster_end_us);
    for (size_t i = a; i < b; i++)
      out[f].shader_n += sh[i].end > w->raster_start_us && sh[i].start < w->raster_end_us;
  }
  /* The longest raster work in each raster window. */
  size_t nra = 0;
  int64_t ra_max = 0;
  for (size_t i = 0; i < nev; i++)
    if (ev[i].kind == VMTL_RASTER) {
      gc[nra++] = (span_t){ev[i].ts_us + offset_us, ev[i].ts_us + offset_us + ev[i].dur_us, i};
      if (ev[i].dur_us > ra_max) ra_max = ev[i].dur_us;
    }
  qsort(gc, nra, sizeof *gc, span_cmp); /* gc's spans are no longer needed */
  for (size_t f = 0; f < nfr; f++) {
    size_t a = lower(gc, nra, fr[f].raster_start_us - ra_max), b = lower(gc, nra, fr[f].raster_end_us);
    for (size_t i = a; i < b; i++) {
      int64_t lo = gc[i].start > fr[f].raster_start_us ? gc[i].start : fr[f].raster_start_us;
      int64_t hi = gc[i].end < fr[f].raster_end_us ? gc[i].end : fr[f].raster_end_us;
      if (hi - lo > out[f].raster_top_us) {
        out[f].raster_top_us = hi - lo;
        copy_name(out[f].raster_top, ev[gc[i].ev].name);
      }
    }
  }
  free(gc);
  free(sh);
  return 0;
}
