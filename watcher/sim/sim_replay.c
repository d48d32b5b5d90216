#include "sim_replay.h"

#include <stdlib.h>
#include <string.h>

#include "sim_clock.h"
#include "sim_gen.h"
#include "sim_log.h"

/* Playback starts this long after the measurement started, so the first
 * frame is the session's and not a frame drawn before it. */
#define LEAD_US 50000
/* A session that pulls the timeline first asks for its origin
 * (getVMTimelineMicros); events before it are not the session's. Playback
 * waits for that question, or this long when it does not come (a session
 * without the timeline). */
#define ORIGIN_WAIT_US 1000000

/* One synchronous slice of the trace: a B matched with its E on the same
 * thread, or an X. Names and args are borrowed from the loaded JSON. */
typedef struct {
  const char *name, *cat;
  const json_t *args;
  int tid, depth;
  int64_t start, end;
} span_t;

/* One entry of the trace as the VM timeline will serve it. */
typedef struct {
  const char *name, *cat;
  const json_t *args;
  char ph;
  int tid;
  int64_t ts, dur;
  size_t order; /* position in the file: keeps equal timestamps in order */
} ev_t;

/* One frame of DevTools' rebuildCountModel (borrowed from the JSON). */
typedef struct {
  int64_t frame_number;
  const json_t *events; /* [id, count, id, count, ...] */
} rebuilt_t;

typedef struct {
  wm_timing_t timing;
  int64_t drained; /* the end of the frame's work on the UI thread */
  size_t b0, nb;   /* its blocks in blocks[], finish order */
} frame_t;

struct sim_replay {
  json_t *root; /* owns every string below */
  ev_t *evs;
  size_t nevs;
  span_t *spans;
  size_t nspans;
  frame_t *frames;
  size_t nframes;
  wm_event_t *blocks;
  size_t nblocks, blocks_cap;
  json_t *threads;
  sim_rebuild_loc_t *locs; /* rebuildCountModel.locations */
  size_t nlocs;
  rebuilt_t *rebuilt; /* rebuildCountModel.frames, by frame number */
  size_t nrebuilt, rebuilds_posted;
  double refresh;
  int ui_tid;
  int64_t origin, last;
  /* playback */
  int armed, origin_asked, started;
  int64_t since; /* when the measurement was first seen (0: not yet) */
  int64_t shift;
  size_t next_frame, next_ev;
};

static int64_t num(const json_t *v) {
  if (json_is_integer(v)) return (int64_t)json_integer_value(v);
  if (json_is_real(v)) return (int64_t)json_real_value(v);
  if (json_is_string(v)) return strtoll(json_string_value(v), NULL, 10);
  return 0;
}

static int cmp_ev(const void *a, const void *b) {
  const ev_t *x = a, *y = b;
  if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order;
}

/* The trace-event array: a bare array, or {traceEvents: [...]}. */
static const json_t *trace_events(const json_t *root) {
  if (json_is_array(root)) return root;
  return json_object_get(root, "traceEvents");
}

static int tid_of(const json_t *e) {
  return (int)num(json_object_get(e, "tid"));
}

/* The UI thread: the one the engine names "<label>.ui (<tid>)" (or the
 * thread of Animator::BeginFrame when no name says it). */
static int find_ui_tid(const sim_replay_t *r) {
  size_t i;
  json_t *m;
  json_array_foreach(r->threads, i, m) {
    const char *n = json_string_value(json_object_get(json_object_get(m, "args"), "name"));
    if (n && strstr(n, ".ui (")) return tid_of(m);
  }
  for (i = 0; i < r->nevs; i++)
    if (!strcmp(r->evs[i].name, "Animator::BeginFrame")) return r->evs[i].tid;
  return -1;
}

/* Matches B with E per thread (a stack per thread, as the VM nests sync
 * scopes) and takes X as it is. */
static int build_spans(sim_replay_t *r) {
  typedef struct {
    int tid;
    size_t n;
    size_t stack[256];
  } open_t;
  open_t *open = calloc(256, sizeof *open);
  size_t nopen = 0, i;
  if (!open || !(r->spans = calloc(r->nevs + 1, sizeof *r->spans))) {
    free(open);
    return -1;
  }
  for (i = 0; i < r->nevs; i++) {
    const ev_t *e = &r->evs[i];
    open_t *o = NULL;
    size_t k;
    for (k = 0; k < nopen; k++)
      if (open[k].tid == e->tid) o = &open[k];
    if (!o && nopen < 256) {
      o = &open[nopen++];
      o->tid = e->tid;
    }
    if (!o) continue;
    if (e->ph == 'X') {
      r->spans[r->nspans++] =
          (span_t){e->name, e->cat, e->args, e->tid, (int)o->n, e->ts, e->ts + e->dur};
    } else if (e->ph == 'B') {
      if (o->n < 256) o->stack[o->n++] = i;
    } else if (e->ph == 'E' && o->n) {
      const ev_t *b = &r->evs[o->stack[--o->n]];
      r->spans[r->nspans++] = (span_t){b->name, b->cat, b->args, b->tid, (int)o->n, b->ts, e->ts};
    }
  }
  free(open);
  return 0;
}

static const span_t *find_span(const sim_replay_t *r, const char *name, int64_t frame_number) {
  for (size_t i = 0; i < r->nspans; i++) {
    const span_t *p = &r->spans[i];
    if (!strcmp(p->name, name) && num(json_object_get(p->args, "frame_number")) == frame_number &&
        json_object_get(p->args, "frame_number"))
      return p;
  }
  return NULL;
}

/* DevTools' flutterFrames entry (Flutter.Frame's fields: startTime is
 * buildStart, elapsed runs from vsyncStart to rasterFinish). */
static void frame_from_devtools(const json_t *f, wm_timing_t *t) {
  int64_t start = num(json_object_get(f, "startTime"));
  t->frame_number = num(json_object_get(f, "number"));
  t->build_start_us = start;
  t->vsync_start_us = start - num(json_object_get(f, "vsyncOverhead"));
  t->build_finish_us = start + num(json_object_get(f, "build"));
  t->raster_finish_us = t->vsync_start_us + num(json_object_get(f, "elapsed"));
  t->raster_start_us = t->raster_finish_us - num(json_object_get(f, "raster"));
}

static int cmp_block(const void *a, const void *b) {
  const wm_event_t *x = a, *y = b;
  int64_t xe = x->start_us + x->dur_us, ye = y->start_us + y->dur_us;
  if (xe != ye) return xe < ye ? -1 : 1;
  /* Same end: the inner (later start) finishes first. */
  return x->start_us > y->start_us ? -1 : x->start_us < y->start_us;
}

static int cmp_frame(const void *a, const void *b) {
  const frame_t *x = a, *y = b;
  return x->timing.build_start_us < y->timing.build_start_us
             ? -1
             : x->timing.build_start_us > y->timing.build_start_us;
}

static void add_frame(sim_replay_t *r, const wm_timing_t *t) {
  frame_t *f = &r->frames[r->nframes++];
  const span_t *env = find_span(r, "Animator::BeginFrame", t->frame_number);
  int64_t lo = t->build_start_us, hi = t->build_finish_us;
  f->timing = *t;
  /* The frame's UI work: the engine's BeginFrame envelope, which also holds
   * FINALIZE TREE and the post-frame callbacks after buildFinish. */
  if (env && env->start <= lo + 1000 && env->end >= hi) {
    lo = env->start;
    hi = env->end;
  }
  f->drained = hi;
  f->b0 = r->nblocks;
  /* FlutterTimeline blocks: the framework's sync slices (stream "Dart") on
   * the UI thread, inside that window. */
  for (size_t i = 0; i < r->nspans; i++) {
    const span_t *p = &r->spans[i];
    if (p->tid != r->ui_tid || !p->cat || strcmp(p->cat, "Dart") || p->start < lo || p->end > hi)
      continue;
    if (r->nblocks == r->blocks_cap) break;
    r->blocks[r->nblocks++] = (wm_event_t){p->name, p->start, p->end - p->start};
  }
  f->nb = r->nblocks - f->b0;
  qsort(r->blocks + f->b0, f->nb, sizeof *r->blocks, cmp_block);
}

/* Frames from the trace alone: Animator::BeginFrame (build start) and
 * Animator::Render (build finish) with args.frame_number on the UI thread,
 * Rasterizer::DoDraw with the same number on the raster thread
 * (docs/flutter-apis.md "Engine frame events"). */
static void frames_from_trace(sim_replay_t *r) {
  for (size_t i = 0; i < r->nspans; i++) {
    const span_t *p = &r->spans[i];
    if (strcmp(p->name, "Animator::BeginFrame") || !json_object_get(p->args, "frame_number"))
      continue;
    int64_t n = num(json_object_get(p->args, "frame_number"));
    const span_t *render = find_span(r, "Animator::Render", n);
    const span_t *draw = find_span(r, "Rasterizer::DoDraw", n);
    if (!render || !draw) continue;
    wm_timing_t t = {n, p->start, p->start, render->start, draw->start, draw->end, 0, 0};
    add_frame(r, &t);
  }
}

static int cmp_rebuilt(const void *a, const void *b) {
  const rebuilt_t *x = a, *y = b;
  return (x->frame_number > y->frame_number) - (x->frame_number < y->frame_number);
}

/* DevTools' rebuildCountModel (RebuildCountModel.toJson: {locations,
 * frames: [{frameNumber, events}]}), when the export has one. */
static int load_rebuilds(sim_replay_t *r, const json_t *model) {
  const json_t *frames = json_object_get(model, "frames"), *f;
  size_t i;
  if (!json_is_array(frames)) return 0;
  r->locs = sim_rebuild_parse_locations(json_object_get(model, "locations"), &r->nlocs);
  if (!(r->rebuilt = calloc(json_array_size(frames) + 1, sizeof *r->rebuilt))) return -1;
  json_array_foreach(frames, i, f) {
    const json_t *ev = json_object_get(f, "events");
    if (!json_is_integer(json_object_get(f, "frameNumber")) || !json_is_array(ev)) continue;
    r->rebuilt[r->nrebuilt++] = (rebuilt_t){num(json_object_get(f, "frameNumber")), ev};
  }
  qsort(r->rebuilt, r->nrebuilt, sizeof *r->rebuilt, cmp_rebuilt);
  return 0;
}

sim_replay_t *sim_replay_load(const char *path, char *err, size_t errlen) {
  json_error_t je;
  sim_replay_t *r = calloc(1, sizeof *r);
  const json_t *evs, *perf, *ff, *e;
  size_t i;
  if (!r) goto oom;
  r->root = json_load_file(path, 0, &je);
  if (!r->root) {
    snprintf(err, errlen, "--replay %s: %s (line %d)", path, je.text, je.line);
    goto fail;
  }
  evs = trace_events(r->root);
  if (!json_is_array(evs)) {
    snprintf(err, errlen, "--replay %s: no traceEvents array", path);
    goto fail;
  }
  perf = json_object_get(r->root, "performance");
  r->refresh = (double)num(json_object_get(perf, "displayRefreshRate"));
  if (r->refresh <= 0) r->refresh = 60;
  r->threads = json_array();
  r->evs = calloc(json_array_size(evs) + 1, sizeof *r->evs);
  if (!r->threads || !r->evs) goto oom;
  json_array_foreach(evs, i, e) {
    const char *ph = json_string_value(json_object_get(e, "ph"));
    const char *name = json_string_value(json_object_get(e, "name"));
    if (!ph || !name) continue;
    if (!strcmp(ph, "M") && !strcmp(name, "thread_name")) {
      /* Exports repeat the metadata: keep one per thread. */
      size_t k;
      json_t *m;
      int dup = 0;
      json_array_foreach(r->threads, k, m) dup |= tid_of(m) == tid_of(e);
      if (!dup) json_array_append(r->threads, (json_t *)e);
      continue;
    }
    if (strcmp(ph, "B") && strcmp(ph, "E") && strcmp(ph, "X")) continue;
    if (!json_is_number(json_object_get(e, "ts"))) continue;
    ev_t *v = &r->evs[r->nevs];
    v->name = name;
    v->cat = json_string_value(json_object_get(e, "cat"));
    v->args = json_object_get(e, "args");
    v->ph = ph[0];
    v->tid = tid_of(e);
    v->ts = num(json_object_get(e, "ts"));
    v->dur = v->ph == 'X' ? num(json_object_get(e, "dur")) : 0;
    v->order = r->nevs++;
  }
  qsort(r->evs, r->nevs, sizeof *r->evs, cmp_ev);
  if (build_spans(r)) goto oom;
  r->ui_tid = find_ui_tid(r);
  if (load_rebuilds(r, json_object_get(perf, "rebuildCountModel"))) goto oom;

  ff = json_object_get(perf, "flutterFrames");
  r->frames = calloc(json_array_size(ff) + r->nspans + 1, sizeof *r->frames);
  /* A UI slice lies in one frame's window unless windows overlap; then a
   * frame past the capacity keeps fewer blocks. */
  r->blocks_cap = 2 * r->nspans + 1;
  r->blocks = calloc(r->blocks_cap, sizeof *r->blocks);
  if (!r->frames || !r->blocks) goto oom;
  if (json_array_size(ff)) {
    json_array_foreach(ff, i, e) {
      wm_timing_t t;
      memset(&t, 0, sizeof t);
      frame_from_devtools(e, &t);
      add_frame(r, &t);
    }
  } else {
    frames_from_trace(r);
  }
  if (!r->nframes) {
    snprintf(err, errlen,
             "--replay %s: no frames (no flutterFrames, no Animator::BeginFrame "
             "with frame_number)",
             path);
    goto fail;
  }
  qsort(r->frames, r->nframes, sizeof *r->frames, cmp_frame);
  r->origin = r->frames[0].timing.vsync_start_us;
  r->last = r->frames[r->nframes - 1].timing.raster_finish_us;
  for (i = 0; i < r->nevs; i++) {
    if (r->evs[i].ts < r->origin) r->origin = r->evs[i].ts;
    if (r->evs[i].ts + r->evs[i].dur > r->last) r->last = r->evs[i].ts + r->evs[i].dur;
  }
  return r;
oom:
  snprintf(err, errlen, "--replay %s: out of memory", path);
fail:
  sim_replay_free(r);
  return NULL;
}

void sim_replay_free(sim_replay_t *r) {
  if (!r) return;
  free(r->evs);
  free(r->spans);
  free(r->frames);
  free(r->blocks);
  free(r->locs);
  free(r->rebuilt);
  json_decref(r->threads);
  json_decref(r->root);
  free(r);
}

double sim_replay_refresh_rate(const sim_replay_t *r) {
  return r->refresh;
}

size_t sim_replay_frames(const sim_replay_t *r) {
  return r->nframes;
}

int64_t sim_replay_span_us(const sim_replay_t *r) {
  return r->last - r->origin;
}

const json_t *sim_replay_threads(const sim_replay_t *r) {
  return r->threads;
}

const sim_rebuild_loc_t *sim_replay_locations(const sim_replay_t *r, size_t *n) {
  *n = r->nlocs;
  return r->locs;
}

json_t *sim_replay_stats_json(const sim_replay_t *r) {
  return json_pack("{s:I, s:I, s:b, s:I, s:I, s:I}", "frames", (json_int_t)r->nframes, "played",
                   (json_int_t)r->next_frame, "started", r->started, "spanUs",
                   (json_int_t)(r->last - r->origin), "rebuildFrames", (json_int_t)r->nrebuilt,
                   "rebuildsPosted", (json_int_t)r->rebuilds_posted);
}

void sim_replay_arm(sim_replay_t *r, int origin) {
  r->armed = 1;
  if (origin) r->origin_asked = 1;
}

/* The inspector's post-frame callback (_onFrameEnd): while tracking is on,
 * the frame's recorded counts as the framework posts them. A frame the
 * recording has no counts for posts nothing (tracking was off then). */
static void post_rebuilt(sim_t *s, sim_replay_t *r, int64_t frame_number, int64_t vsync_us) {
  rebuilt_t key = {frame_number, NULL}, *e;
  if (!s->vm.bool_ext[SIM_EXT_TRACK_REBUILDS] || !r->nrebuilt) return;
  e = bsearch(&key, r->rebuilt, r->nrebuilt, sizeof *e, cmp_rebuilt);
  if (!e) return;
  size_t n = json_array_size(e->events) / 2, i;
  int64_t *pairs = malloc((2 * n + 1) * sizeof *pairs);
  if (!pairs) return;
  for (i = 0; i < 2 * n; i++) pairs[i] = num(json_array_get(e->events, i));
  sim_post_event(s, "Flutter.RebuiltWidgets",
                    sim_rebuild_event_pairs(&s->rebuild, vsync_us, frame_number, pairs, n));
  free(pairs);
  r->rebuilds_posted++;
}

static void replay_frame(sim_t *s, sim_replay_t *r, const frame_t *f) {
  wm_timing_t t = f->timing;
  wm_event_t ev[512];
  size_t n = f->nb < 512 ? f->nb : 512, i;
  t.vsync_start_us += r->shift;
  t.build_start_us += r->shift;
  t.build_finish_us += r->shift;
  t.raster_start_us += r->shift;
  t.raster_finish_us += r->shift;
  for (i = 0; i < n; i++) {
    ev[i] = r->blocks[f->b0 + i];
    ev[i].start_us += r->shift;
  }
  /* The scheduler's epoch is the run's first frame: here, the first played. */
  sim_rebuild_frame_begun(&s->rebuild, t.vsync_start_us);
  sim_gen_draw_replayed(s, &t, ev, n, f->drained + r->shift);
  post_rebuilt(s, r, t.frame_number, t.vsync_start_us);
}

void sim_replay_tick(sim_t *s) {
  sim_replay_t *r = s->replay;
  int64_t now = sim_clock_now_us();
  if (!r->started) {
    int go = s->vm.watcher ? (s->model && wm_collecting(s->model)) : r->armed;
    if (go && !r->since) r->since = now;
    if (!r->since || s->vm.paused) return;
    if (!r->origin_asked && now - r->since < ORIGIN_WAIT_US) return;
    r->started = 1;
    r->shift = now + LEAD_US - r->origin;
    sim_log("replay: %zu frames over %.1f s from now", r->nframes,
            (double)(r->last - r->origin) / 1e6);
  }
  if (s->vm.paused) return; /* a paused isolate draws nothing; its frames wait */
  /* Trace events in time order, each once its moment has come. */
  while (r->next_ev < r->nevs) {
    const ev_t *e = &r->evs[r->next_ev];
    if (e->ts + e->dur + r->shift > now) break;
    sim_tl_event_t te;
    memset(&te, 0, sizeof te);
    te.name_ref = e->name;
    te.cat = e->cat ? e->cat : "Embedder";
    te.args = e->args;
    te.ph = e->ph;
    te.tid = e->tid;
    te.ts = e->ts + r->shift;
    te.dur = e->dur;
    sim_tl_add(&s->tl, &te);
    r->next_ev++;
  }
  /* A frame once both its UI work and its raster are done. */
  while (r->next_frame < r->nframes) {
    const frame_t *f = &r->frames[r->next_frame];
    int64_t done =
        f->drained > f->timing.raster_finish_us ? f->drained : f->timing.raster_finish_us;
    if (done + r->shift > now) break;
    replay_frame(s, r, f);
    r->next_frame++;
  }
}
