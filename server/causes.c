#include "causes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"
#include "frame_cause.h"
#include "summary.h"

/* DevTools' advice for the same two causes (flutter/devtools performance
 * page: shader jank → Impeller or warm-up; GC → allocation). */
#define GC_HINT                                                                                  \
  "GC pauses inside build: the app allocates heavily in these frames (objects, lists or images " \
  "made in build/layout); reuse them or move the work out of the frame"
#define SHADER_HINT                                                                          \
  "shader or pipeline compilation on the raster thread (first use of an effect): use "       \
  "Impeller, or warm up shaders (SkSL warm-up) on Skia"
#define WATCHER_HINT                                                                        \
  "add the telescope watcher to the app: it names the widgets and render objects in the " \
  "janky frames (README, Setup)"

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
  int64_t jank_mean, other_mean, explained;
  double share;
} cause_t;

static json_t *cause_json(const cause_t *c) {
  return json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:f,s:s}", "kind", c->kind, "name", c->name,
                   "thread", c->thread, "jankFrames", (json_int_t)c->jank_frames, "ofJankFrames",
                   (json_int_t)c->of_frames, "perJankFrameUs", (json_int_t)c->jank_mean,
                   "perOtherFrameUs", (json_int_t)c->other_mean, "explainedUs",
                   (json_int_t)c->explained, "explains", c->share, "hint", c->hint);
}

/* Without the watcher no track* option can name anything: the advice is the
 * watcher itself. */
static int watcher_instead_of_tracking(json_t *summary) {
  json_t *next = json_object_get(summary, "next");
  size_t i;
  json_t *n;
  json_array_foreach(next, i, n) {
    const char *kind = json_string_value(json_object_get(n, "kind"));
    if (!kind || strcmp(kind, "tracking")) continue;
    return json_array_set_new(next, i,
                              json_pack("{s:s,s:s}", "kind", "watcher", "why", WATCHER_HINT));
  }
  return 0;
}

/* One timeline cause over the kept steady-state frames: the frames of its
 * side that missed (build for gc, raster for shader) against the frames that
 * missed nothing, and what it explains: per missed frame its time beyond the
 * other frames' mean, at most that side's overrun (findings.h). */
typedef struct {
  uint64_t missed, with, other;
  double sum_missed, sum_other;
} tally_t;

static void tally_frame(tally_t *t, int missed, int other, int64_t us) {
  if (missed) {
    t->missed++;
    t->sum_missed += (double)us;
    t->with += us > 0;
  }
  if (other) {
    t->other++;
    t->sum_other += (double)us;
  }
}

static double tally_explained(const frame_t *const *frames, size_t nframes,
                              const vmtl_causes_t *c, int64_t budget_us, int shader,
                              double other_mean) {
  double e = 0;
  for (size_t i = 0; i < nframes; i++) {
    const frame_t *f = frames[i];
    if (f->startup) continue;
    int64_t over = (shader ? f->raster_us : f->build_us) - budget_us;
    if (over <= 0) continue;
    double x = (double)(shader ? c[i].shader_us : c[i].gc_us) - other_mean;
    e += findings_explained(x, (double)over);
  }
  return e;
}

/* Recomputes a whole-thread finding's explainedUs/explains (kind "raster":
 * the raster time beyond each frame's shader compilation; kind "build": the
 * build time beyond its GC), or takes it out when that explains nothing.
 * 0, or -1 on OOM. */
static int thread_beyond_timeline(json_t *findings, const char *thread_kind,
                                  const frame_t *const *frames, size_t nframes,
                                  const vmtl_causes_t *c, int64_t budget_us, double scale,
                                  double over) {
  int raster = !strcmp(thread_kind, "raster");
  size_t i;
  json_t *f;
  json_array_foreach(findings, i, f) {
    const char *kind = json_string_value(json_object_get(f, "kind"));
    if (!kind || strcmp(kind, thread_kind)) continue;
    double other = (double)json_integer_value(json_object_get(f, "perOtherFrameUs")), e = 0;
    for (size_t k = 0; k < nframes; k++) {
      const frame_t *fr = frames[k];
      int64_t us = raster ? fr->raster_us : fr->build_us, ro = us - budget_us;
      if (fr->startup || ro <= 0) continue;
      double x = (double)(us - (raster ? c[k].shader_us : c[k].gc_us)) - other;
      e += findings_explained(x, (double)ro);
    }
    int64_t ex = llround(e * scale);
    if (ex <= 0) return json_array_remove(findings, i) ? -1 : 0;
    return json_object_set_new(f, "explainedUs", json_integer(ex)) ||
                   json_object_set_new(f, "explains", json_real(findings_share(ex, over)))
               ? -1
               : 0;
  }
  return 0;
}

int causes_apply(json_t *summary, const frame_t *const *frames, size_t nframes,
                 int64_t budget_us, const causes_input_t *in) {
  json_t *findings = json_object_get(summary, "findings");
  if (!json_is_array(findings)) return 0;
  if (in->frame_events && watcher_instead_of_tracking(summary) < 0) return -1;
  if (!nframes) return 0;
  if (!in->nevents) return frame_cause_apply(summary, frames, nframes, NULL, budget_us);

  vmtl_window_t *w = malloc(nframes * sizeof *w);
  vmtl_causes_t *c = calloc(nframes, sizeof *c);
  if (!w || !c) goto oom;
  for (size_t i = 0; i < nframes; i++) w[i] = causes_window(frames[i]);
  if (vmtl_join(in->events, in->nevents, w, nframes, in->offset_us, c) < 0) goto oom;

  tally_t gt = {0}, st = {0};
  for (size_t i = 0; i < nframes; i++) {
    const frame_t *f = frames[i];
    if (f->startup) continue;
    int bm = f->build_us > budget_us, rm = f->raster_us > budget_us;
    tally_frame(&gt, bm, !bm && !rm, c[i].gc_us);
    tally_frame(&st, rm, !bm && !rm, c[i].shader_us);
  }
  /* The summary counted every janky frame; the kept ones may be fewer: what
   * they explain is scaled up to all (as the summary does). */
  const json_t *jank = json_object_get(summary, "jank");
  double over = json_number_value(json_object_get(jank, "overUs"));
  uint64_t jf = (uint64_t)json_integer_value(json_object_get(jank, "frames"));
  uint64_t bm_all = (uint64_t)json_integer_value(json_object_get(jank, "buildMissed"));
  uint64_t rm_all = (uint64_t)json_integer_value(json_object_get(jank, "rasterMissed"));
  int64_t min_excess = budget_us / FINDINGS_MIN_EXCESS_DIV;
  if (min_excess < 1) min_excess = 1;
  int64_t gc_other = mean(gt.sum_other, gt.other), sh_other = mean(st.sum_other, st.other);
  double ge = tally_explained(frames, nframes, c, budget_us, 0, (double)gc_other);
  double se = tally_explained(frames, nframes, c, budget_us, 1, (double)sh_other);
  if (gt.missed) ge *= (double)bm_all / (double)gt.missed;
  if (st.missed) se *= (double)rm_all / (double)st.missed;
  cause_t gc = {"gc", "GC", "ui", GC_HINT, gt.with, jf, mean(gt.sum_missed, gt.missed), gc_other,
                llround(ge), findings_share(llround(ge), over)};
  cause_t sh = {"shader", "shader compilation", "raster", SHADER_HINT, st.with, jf,
                mean(st.sum_missed, st.missed), sh_other, llround(se),
                findings_share(llround(se), over)};
  int bad = 0;
  /* The raster and build findings are a thread's time that nothing named
   * explains, as a phase's self time is what no named block holds: with
   * shader compilation (GC) seen, they keep only the time beyond it. */
  if (st.missed && se > 0)
    bad |= thread_beyond_timeline(findings, "raster", frames, nframes, c, budget_us,
                                  (double)rm_all / (double)st.missed, over);
  if (gt.missed && ge > 0)
    bad |= thread_beyond_timeline(findings, "build", frames, nframes, c, budget_us,
                                  (double)bm_all / (double)gt.missed, over);
  if (gt.missed && gc.jank_mean - gc.other_mean >= min_excess && gc.explained > 0)
    bad |= json_array_append_new(findings, cause_json(&gc));
  if (st.missed && sh.jank_mean - sh.other_mean >= min_excess && sh.explained > 0)
    bad |= json_array_append_new(findings, cause_json(&sh));
  if (!bad && findings_sort_json(findings, SUMMARY_FINDINGS) < 0) bad = 1;

  /* The worst frames say how much of each was in them. */
  size_t k;
  json_t *wf;
  json_array_foreach(json_object_get(summary, "worstFrames"), k, wf) {
    json_int_t seq = json_integer_value(json_object_get(wf, "seq"));
    json_int_t num = json_integer_value(json_object_get(wf, "frameNumber"));
    for (size_t i = 0; i < nframes; i++) {
      if (frames[i]->seq != seq || frames[i]->frame_number != num) continue;
      if (c[i].gc_us) bad |= json_object_set_new(wf, "gcUs", json_integer(c[i].gc_us));
      if (c[i].shader_us) bad |= json_object_set_new(wf, "shaderUs", json_integer(c[i].shader_us));
      break;
    }
  }
  if (!bad) bad = frame_cause_apply(summary, frames, nframes, c, budget_us) < 0;
  free(w);
  free(c);
  return bad ? -1 : 0;
oom:
  free(w);
  free(c);
  return -1;
}
