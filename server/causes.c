#include "causes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"
#include "summary.h"

/* DevTools' advice for the same two causes (flutter/devtools performance
 * page: shader jank → Impeller or warm-up; GC → allocation). */
#define GC_HINT                                                                                  \
  "GC pauses inside build: the app allocates heavily in these frames (objects, lists or images " \
  "made in build/layout); reuse them or move the work out of the frame"
#define SHADER_HINT                                                                          \
  "shader compilation on the raster thread (first use of an effect): use Impeller, or warm " \
  "up shaders (SkSL warm-up) on Skia"
#define WATCHER_HINT "the watcher would name the widgets and render objects (see warnings)"

vmtl_window_t causes_window(const frame_t *f) {
  /* FrameTiming: vsyncOverhead = buildStart - vsyncStart; totalSpan =
   * rasterFinish - vsyncStart. The raster phase ends the span. */
  vmtl_window_t w;
  w.build_start_us = f->vsync_start_us + f->vsync_overhead_us;
  w.build_end_us = w.build_start_us + f->build_us;
  w.raster_end_us = f->vsync_start_us + f->total_span_us;
  w.raster_start_us = w.raster_end_us - f->raster_us;
  if (w.raster_start_us < w.build_end_us) w.raster_start_us = w.build_end_us;
  if (w.raster_end_us < w.raster_start_us) w.raster_end_us = w.raster_start_us;
  return w;
}

static int64_t mean(double sum, uint64_t n) { return n ? (int64_t)llround(sum / (double)n) : 0; }

typedef struct {
  const char *kind, *name, *thread, *hint;
  uint64_t jank_frames, of_frames;
  int64_t jank_mean, other_mean;
} cause_t;

static json_t *cause_json(const cause_t *c) {
  return json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:s}", "kind", c->kind, "name", c->name, "thread",
                   c->thread, "jankFrames", (json_int_t)c->jank_frames, "ofJankFrames",
                   (json_int_t)c->of_frames, "perJankFrameUs", (json_int_t)c->jank_mean,
                   "perOtherFrameUs", (json_int_t)c->other_mean, "hint", c->hint);
}

/* The findings' rule (findings.h): names below the phases first, by excess;
 * a cause from the timeline is as specific as a name, so it ranks in that
 * tier, and before the tracking/watcher advice it makes less urgent. */
static int tier0(const char *kind) {
  return !strcmp(kind, "widget") || !strcmp(kind, "render_object") || !strcmp(kind, "gc") ||
         !strcmp(kind, "shader");
}

static int insert(json_t *findings, const cause_t *c) {
  int64_t excess = c->jank_mean - c->other_mean;
  size_t i;
  json_t *f;
  json_array_foreach(findings, i, f) {
    const char *kind = json_string_value(json_object_get(f, "kind"));
    if (!kind || !tier0(kind)) break;
    int64_t e = json_integer_value(json_object_get(f, "perJankFrameUs")) -
                json_integer_value(json_object_get(f, "perOtherFrameUs"));
    if (excess > e) break;
  }
  json_t *j = cause_json(c);
  return !j || json_array_insert_new(findings, i, j) ? -1 : 0;
}

static int watcher_instead_of_tracking(json_t *findings) {
  size_t i;
  json_t *f;
  json_array_foreach(findings, i, f) {
    const char *kind = json_string_value(json_object_get(f, "kind"));
    if (!kind || strcmp(kind, "tracking")) continue;
    if (json_object_set_new(f, "kind", json_string("watcher")) ||
        json_object_set_new(f, "name", json_string("telescope")) ||
        json_object_set_new(f, "hint", json_string(WATCHER_HINT)))
      return -1;
  }
  return 0;
}

int causes_apply(json_t *summary, const frame_t *const *frames, size_t nframes,
                 int64_t budget_us, const causes_input_t *in) {
  json_t *findings = json_object_get(summary, "findings");
  if (!json_is_array(findings)) return 0;
  if (in->frame_events && watcher_instead_of_tracking(findings) < 0) return -1;
  if (!in->nevents || !nframes) return 0;

  vmtl_window_t *w = malloc(nframes * sizeof *w);
  vmtl_causes_t *c = calloc(nframes, sizeof *c);
  if (!w || !c) goto oom;
  for (size_t i = 0; i < nframes; i++) w[i] = causes_window(frames[i]);
  if (vmtl_join(in->events, in->nevents, w, nframes, in->offset_us, c) < 0) goto oom;

  uint64_t build_missed = 0, raster_missed = 0, other = 0, gc_frames = 0, shader_frames = 0;
  double gc_missed = 0, gc_other = 0, sh_missed = 0, sh_other = 0;
  for (size_t i = 0; i < nframes; i++) {
    const frame_t *f = frames[i];
    int bm = f->build_us > budget_us, rm = f->raster_us > budget_us;
    if (bm) {
      build_missed++;
      gc_missed += (double)c[i].gc_us;
      gc_frames += c[i].gc_us > 0;
    }
    if (rm) {
      raster_missed++;
      sh_missed += (double)c[i].shader_us;
      shader_frames += c[i].shader_us > 0;
    }
    if (!bm && !rm) {
      other++;
      gc_other += (double)c[i].gc_us;
      sh_other += (double)c[i].shader_us;
    }
  }
  int64_t min_excess = budget_us / FINDINGS_MIN_EXCESS_DIV;
  if (min_excess < 1) min_excess = 1;
  cause_t gc = {"gc", "GC", "ui", GC_HINT, gc_frames, build_missed,
                mean(gc_missed, build_missed), mean(gc_other, other)};
  cause_t sh = {"shader", "shader compilation", "raster", SHADER_HINT, shader_frames,
                raster_missed, mean(sh_missed, raster_missed), mean(sh_other, other)};
  int bad = 0;
  if (build_missed && gc.jank_mean - gc.other_mean >= min_excess) bad |= insert(findings, &gc);
  if (raster_missed && sh.jank_mean - sh.other_mean >= min_excess) bad |= insert(findings, &sh);
  while (json_array_size(findings) > SUMMARY_FINDINGS)
    json_array_remove(findings, json_array_size(findings) - 1);

  /* The worst frames say how much of each was in them. */
  size_t k;
  json_t *wf;
  json_array_foreach(json_object_get(summary, "worstFrames"), k, wf) {
    json_int_t seq = json_integer_value(json_object_get(wf, "seq"));
    for (size_t i = 0; i < nframes; i++) {
      if (frames[i]->seq != seq) continue;
      if (c[i].gc_us) bad |= json_object_set_new(wf, "gcUs", json_integer(c[i].gc_us));
      if (c[i].shader_us) bad |= json_object_set_new(wf, "shaderUs", json_integer(c[i].shader_us));
      break;
    }
  }
  free(w);
  free(c);
  return bad ? -1 : 0;
oom:
  free(w);
  free(c);
  return -1;
}
