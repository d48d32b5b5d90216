#include "trace.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "causes.h"
#include "findings.h"

/* A block's place in the reconstructed tree. The record keeps only each
 * name's inclusive and self time (summed over its occurrences), not when it
 * ran or what contained it, so the nesting is rebuilt: blocks are taken
 * from the largest inclusive time down, and each goes into the placed block
 * whose free child time (inclusive − self − children placed so far) fits it
 * most tightly; a block nothing can hold sits at the top, directly in the
 * frame. Siblings are laid out one after the other, largest first, with the
 * parent's self time after them. Sizes and containment are therefore
 * faithful; the order inside a parent is not time order. */
typedef struct {
  const record_block_t *b;
  int parent;         /* index into the placed array, -1 for top level */
  int64_t free_us;    /* inclusive − self − Σ children (real µs) */
  int64_t next_child; /* offset of the next child from the block's start (scaled µs) */
  int64_t ts, dur;    /* scaled, absolute */
} placed_t;

static int cmp_blocks(const void *x, const void *y) {
  const record_block_t *a = *(const record_block_t *const *)x,
                       *b = *(const record_block_t *const *)y;
  if (a->micros != b->micros) return a->micros > b->micros ? -1 : 1;
  return strcmp(a->name, b->name);
}

static int add(json_t *events, json_t *e) {
  return json_array_append_new(events, e);
}

static json_t *meta(const char *what, int tid, json_t *args) {
  return json_pack("{s:s,s:s,s:i,s:i,s:o}", "name", what, "ph", "M", "pid", 1, "tid", tid, "args",
                   args);
}

/* The frame's blocks as X events nested in [start, start + build). */
static int add_blocks(json_t *events, const frame_t *f, int64_t start) {
  size_t n = f->nblocks;
  if (n == 0) return 0;
  const record_block_t **order = malloc(n * sizeof *order);
  placed_t *p = malloc(n * sizeof *p);
  int rc = -1;
  if (!order || !p) goto done;
  for (size_t i = 0; i < n; i++) order[i] = &f->blocks[i];
  qsort(order, n, sizeof *order, cmp_blocks);

  int64_t top_us = 0;
  for (size_t i = 0; i < n; i++) {
    int best = -1;
    for (size_t k = 0; k < i; k++)
      if (p[k].free_us >= order[i]->micros && (best < 0 || p[k].free_us <= p[best].free_us))
        best = (int)k;
    p[i] = (placed_t){order[i], best, order[i]->micros - order[i]->self_micros, 0, 0, 0};
    if (best >= 0)
      p[best].free_us -= order[i]->micros;
    else
      top_us += order[i]->micros;
  }
  /* Blocks that add up to more than the build (clock skew, or blocks the
   * watcher saw outside the build phase) are scaled down together so they
   * stay inside the frame; floor keeps every child inside its parent, since
   * floor(x) + floor(y) ≤ floor(x + y). args keep the real numbers. */
  double k = top_us > f->build_us && top_us > 0 ? (double)f->build_us / (double)top_us : 1.0;
  int64_t next_top = start;
  for (size_t i = 0; i < n; i++) {
    p[i].dur = (int64_t)floor((double)p[i].b->micros * k);
    if (p[i].parent < 0) {
      p[i].ts = next_top;
      next_top += p[i].dur;
    } else {
      placed_t *par = &p[p[i].parent];
      p[i].ts = par->ts + par->next_child;
      par->next_child += p[i].dur;
    }
    json_t *args = json_pack("{s:I,s:I,s:I}", "micros", (json_int_t)p[i].b->micros, "selfMicros",
                             (json_int_t)p[i].b->self_micros, "count", (json_int_t)p[i].b->count);
    if (args && k < 1.0) json_object_set_new(args, "scaledBy", json_real(round(k * 1000) / 1000));
    if (add(events, json_pack("{s:s,s:s,s:s,s:I,s:I,s:i,s:i,s:o*}", "name", p[i].b->name, "cat",
                              "block", "ph", "X", "ts", (json_int_t)p[i].ts, "dur",
                              (json_int_t)p[i].dur, "pid", 1, "tid", TRACE_TID_UI, "args", args)))
      goto done;
  }
  rc = 0;
done:
  free(order);
  free(p);
  return rc;
}

/* A janky frame's cause, as the findings see it: the phase that missed
 * (the longer one when both did), and inside it the largest of the block
 * below the phases with the most self time and what the timeline put in
 * that phase's window (on raster: the longest raster event, unless a
 * shader compile takes half of it). A phase block (BUILD, LAYOUT) is never the cause
 * when anything more specific is there: a GC pause inside the build is
 * counted in BUILD's self time too. */
static int put_cause(json_t *a, const frame_t *f, int64_t budget_us, const vmtl_causes_t *c) {
  int bm = f->build_us > budget_us, rm = f->raster_us > budget_us;
  int build = bm && (!rm || f->build_us >= f->raster_us);
  const record_block_t *top = NULL, *phase = NULL;
  for (size_t i = 0; i < f->nblocks; i++) {
    const record_block_t *b = &f->blocks[i];
    const record_block_t **slot = findings_classify(b->name) == FINDING_PHASE ? &phase : &top;
    if (!*slot || b->self_micros > (*slot)->self_micros) *slot = b;
  }
  int bad = json_object_set_new(a, "boundBy", json_string(build ? "build" : "raster"));
  const record_block_t *shown = top ? top : phase;
  if (shown) {
    bad |= json_object_set_new(a, "topBlock", json_string(shown->name));
    bad |= json_object_set_new(a, "topBlockSelfUs", json_integer(shown->self_micros));
  }
  const char *cause = build ? "build" : "raster";
  int64_t cause_us = 0;
  if (build) {
    if (c && c->gc_us > cause_us) cause = "GC", cause_us = c->gc_us;
    if (top && top->self_micros > cause_us) cause = top->name, cause_us = top->self_micros;
    if (!cause_us && phase) cause = phase->name, cause_us = phase->self_micros;
  } else if (c) {
    /* The longest raster event mostly encloses the compile (GPURasterizer::Draw
     * carries no frame_number, DrawToSurface wraps the flush that compiles): a
     * compile that takes half of it or more is the more specific cause. */
    if (c->raster_top[0]) cause = c->raster_top, cause_us = c->raster_top_us;
    if (c->shader_us > 0 && c->shader_us * 2 >= cause_us)
      cause = "shader compilation", cause_us = c->shader_us;
  }
  bad |= json_object_set_new(a, "cause", json_string(cause));
  if (cause_us) bad |= json_object_set_new(a, "causeUs", json_integer(cause_us));
  return bad;
}

static json_t *frame_args(const frame_t *f, int janky, int64_t budget_us, const vmtl_causes_t *c) {
  json_t *a =
      json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:b}", "seq", (json_int_t)f->seq, "frameNumber",
                (json_int_t)f->frame_number, "buildUs", (json_int_t)f->build_us, "rasterUs",
                (json_int_t)f->raster_us, "vsyncOverheadUs", (json_int_t)f->vsync_overhead_us,
                "totalSpanUs", (json_int_t)f->total_span_us, "janky", janky);
  if (!a) return NULL;
  int bad = 0;
  if (f->interaction_id)
    bad |= json_object_set_new(a, "interactionId", json_string(f->interaction_id));
  if (c && c->gc_us) {
    bad |= json_object_set_new(a, "gcUs", json_integer(c->gc_us));
    bad |= json_object_set_new(a, "gcPauses", json_integer(c->gc_n));
  }
  if (c && c->shader_us) {
    bad |= json_object_set_new(a, "shaderUs", json_integer(c->shader_us));
    bad |= json_object_set_new(a, "shaderCompiles", json_integer(c->shader_n));
  }
  if (janky) bad |= put_cause(a, f, budget_us, c);
  if (bad) {
    json_decref(a);
    return NULL;
  }
  return a;
}

/* The timeline's GC pauses and compiles that touch the frames' span, each
 * on its thread's track (trace.h), at its real time from the origin. */
static int add_timeline(json_t *events, const trace_timeline_t *tl, int64_t origin, int64_t end) {
  for (size_t i = 0; tl && i < tl->nevents; i++) {
    const vmtl_event_t *e = &tl->events[i];
    if (e->dur_us < 0 || e->ts_us > VMTL_TIME_MAX || e->ts_us < -VMTL_TIME_MAX) continue;
    int64_t ts = e->ts_us + tl->offset_us - origin;
    if (ts + e->dur_us < 0 || ts > end) continue;
    int tid;
    const char *cat;
    if (e->kind == VMTL_GC) {
      /* Helper threads' GC work runs inside the UI thread's pause: counted once, there. */
      if (e->thread != VMTL_THREAD_UI && e->thread != VMTL_THREAD_UNKNOWN) continue;
      tid = TRACE_TID_GC, cat = "gc";
    } else if (e->thread == VMTL_THREAD_RASTER || e->thread == VMTL_THREAD_UNKNOWN) {
      tid = TRACE_TID_RASTER_WORK, cat = e->kind == VMTL_SHADER ? "shader" : "raster-work";
    } else if (e->kind == VMTL_SHADER) {
      tid = TRACE_TID_OTHER_SHADERS, cat = "shader";
    } else {
      continue;
    }
    static const char *const threads[] = {"unknown", "ui", "raster", "other"};
    if (add(events, json_pack("{s:s,s:s,s:s,s:I,s:I,s:i,s:i,s:{s:s,s:I}}", "name", e->name, "cat",
                              cat, "ph", "X", "ts", (json_int_t)ts, "dur", (json_int_t)e->dur_us,
                              "pid", 1, "tid", tid, "args", "thread", threads[e->thread],
                              "timelineTsUs", (json_int_t)e->ts_us)))
      return -1;
  }
  return 0;
}

/* The interaction slices: runs of consecutive frames with one id, each
 * ending where the next run starts at the latest, so the track never
 * overlaps itself even though a frame's raster overlaps the next build. */
static int add_interactions(json_t *events, const frame_t *fr, size_t n, int64_t origin,
                            int64_t budget_us) {
  for (size_t i = 0; i < n;) {
    const char *id = fr[i].interaction_id;
    size_t j = i + 1;
    while (j < n &&
           (id ? fr[j].interaction_id && !strcmp(fr[j].interaction_id, id) : !fr[j].interaction_id))
      j++;
    if (id) {
      int64_t start = fr[i].vsync_start_us - origin, end = start;
      size_t jank = 0;
      for (size_t k = i; k < j; k++) {
        int64_t e = fr[k].vsync_start_us - origin + fr[k].total_span_us;
        if (e > end) end = e;
        jank += fr[k].build_us > budget_us || fr[k].raster_us > budget_us;
      }
      if (j < n && end > fr[j].vsync_start_us - origin) end = fr[j].vsync_start_us - origin;
      if (end < start) end = start;
      if (add(events, json_pack("{s:s,s:s,s:s,s:I,s:I,s:i,s:i,s:{s:s,s:I,s:I}}", "name", id, "cat",
                                "interaction", "ph", "X", "ts", (json_int_t)start, "dur",
                                (json_int_t)(end - start), "pid", 1, "tid", TRACE_TID_INTERACTIONS,
                                "args", "linkedBy", fr[i].linked_by ? fr[i].linked_by : "",
                                "frames", (json_int_t)(j - i), "jankFrames", (json_int_t)jank)))
        return -1;
    }
    i = j;
  }
  return 0;
}

char *trace_json(const frame_t *fr, size_t n, int64_t budget_us, const char *title,
                 const trace_timeline_t *tl) {
  json_t *events = json_array();
  char *text = NULL;
  vmtl_window_t *win = NULL;
  vmtl_causes_t *causes = NULL;
  if (!events) return NULL;
  if (tl && !tl->nevents) tl = NULL;
  /* Sorted as a reader scans them: each timeline track next to its thread. */
  static const struct {
    int tid, sort;
    const char *name;
  } threads[] = {{TRACE_TID_UI, 1, "UI"},
                 {TRACE_TID_GC, 2, "UI GC"},
                 {TRACE_TID_RASTER, 3, "Raster"},
                 {TRACE_TID_RASTER_WORK, 4, "Raster work"},
                 {TRACE_TID_OTHER_SHADERS, 5, "Shaders, other threads"},
                 {TRACE_TID_INTERACTIONS, 6, "Interactions"}};
  if (add(events, meta("process_name", 0, json_pack("{s:s}", "name", title ? title : "telescope"))))
    goto done;
  for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
    if (!tl && threads[t].tid > TRACE_TID_INTERACTIONS) continue;
    if (add(events,
            meta("thread_name", threads[t].tid, json_pack("{s:s}", "name", threads[t].name))) ||
        add(events, meta("thread_sort_index", threads[t].tid,
                         json_pack("{s:i}", "sort_index", threads[t].sort))))
      goto done;
  }
  if (tl && n) {
    win = malloc(n * sizeof *win);
    causes = calloc(n, sizeof *causes);
    if (!win || !causes) goto done;
    for (size_t i = 0; i < n; i++) win[i] = causes_window(&fr[i]);
    if (vmtl_join(tl->events, tl->nevents, win, n, tl->offset_us, causes) < 0) goto done;
  }

  int64_t origin = n ? fr[0].vsync_start_us : 0, end = 0;
  size_t jank_frames = 0;
  for (size_t i = 0; i < n; i++) {
    const frame_t *f = &fr[i];
    const vmtl_causes_t *c = causes ? &causes[i] : NULL;
    int janky = f->build_us > budget_us || f->raster_us > budget_us;
    jank_frames += janky;
    int64_t vsync = f->vsync_start_us - origin;
    int64_t build_start = vsync + f->vsync_overhead_us;
    /* FrameTiming: rasterFinish = vsyncStart + totalSpan. A record whose
     * numbers do not add up still gets its raster after its build. */
    int64_t raster_start = vsync + f->total_span_us - f->raster_us;
    if (raster_start < build_start + f->build_us) raster_start = build_start + f->build_us;
    if (raster_start + f->raster_us > end) end = raster_start + f->raster_us;
    char name[48];
    snprintf(name, sizeof name, "Frame %lld", (long long)f->frame_number);
    const char *cname = janky ? "terrible" : "good";
    if (add(events, json_pack("{s:s,s:s,s:s,s:I,s:I,s:i,s:i,s:s,s:o*}", "name", name, "cat",
                              "frame", "ph", "X", "ts", (json_int_t)build_start, "dur",
                              (json_int_t)f->build_us, "pid", 1, "tid", TRACE_TID_UI, "cname",
                              cname, "args", frame_args(f, janky, budget_us, c))) ||
        add_blocks(events, f, build_start) ||
        add(events, json_pack("{s:s,s:s,s:s,s:I,s:I,s:i,s:i,s:s,s:o*}", "name", name, "cat",
                              "raster", "ph", "X", "ts", (json_int_t)raster_start, "dur",
                              (json_int_t)f->raster_us, "pid", 1, "tid", TRACE_TID_RASTER, "cname",
                              cname, "args", frame_args(f, janky, budget_us, c))))
      goto done;
  }
  if (add_interactions(events, fr, n, origin, budget_us)) goto done;
  if (n && add_timeline(events, tl, origin, end)) goto done;

  json_t *doc = json_pack("{s:o,s:s,s:{s:s,s:I,s:I,s:I,s:I}}", "traceEvents", events,
                          "displayTimeUnit", "ms", "otherData", "generator", "telescope-mcp",
                          "budgetUs", (json_int_t)budget_us, "frames", (json_int_t)n, "jankFrames",
                          (json_int_t)jank_frames, "originVsyncStartUs", (json_int_t)origin);
  events = NULL; /* stolen by "o", also on failure */
  if (doc) text = json_dumps(doc, JSON_COMPACT);
  json_decref(doc);
done:
  free(win);
  free(causes);
  json_decref(events);
  return text;
}
