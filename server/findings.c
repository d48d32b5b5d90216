#include "findings.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The block names FlutterTimeline gives the pipeline phases, as read in
 * flutter/flutter packages/flutter/lib/src/widgets/framework.dart (BUILD,
 * FINALIZE TREE), rendering/object.dart (LAYOUT, UPDATING COMPOSITING BITS,
 * PAINT, SEMANTICS, each with " (root)" for the root PipelineOwner),
 * rendering/view.dart (COMPOSITING) and scheduler/binding.dart (POST_FRAME).
 * See /work/shared/reference/flutter.md, "Framework phases". */
static const char *const phases[] = {"BUILD",         "LAYOUT",      "UPDATING COMPOSITING BITS",
                                     "PAINT",         "COMPOSITING", "SEMANTICS",
                                     "FINALIZE TREE", "POST_FRAME"};
#define N_PHASES (sizeof phases / sizeof phases[0])
#define ROOT_SUFFIX " (root)"

finding_kind_t findings_classify(const char *name) {
  size_t n = strlen(name), rs = sizeof ROOT_SUFFIX - 1;
  if (n > rs && !strcmp(name + n - rs, ROOT_SUFFIX)) n -= rs;
  for (size_t i = 0; i < N_PHASES; i++)
    if (strlen(phases[i]) == n && !strncmp(name, phases[i], n)) return FINDING_PHASE;
  /* flushSemantics' inner blocks (Semantics.updateChildren, …) belong to it. */
  if (!strncmp(name, "Semantics.", 10)) return FINDING_PHASE;
  if (!strncmp(name, "Render", 6)) return FINDING_RENDER_OBJECT;
  return FINDING_WIDGET;
}

const char *findings_kind_name(finding_kind_t kind) {
  static const char *const names[] = {"widget", "render_object", "phase", "raster", "tracking"};
  return names[kind];
}

static int starts(const char *s, const char *prefix) {
  return !strncmp(s, prefix, strlen(prefix));
}

/* One line in Flutter's terms: what to try for this kind of cause. */
static const char *hint_for(finding_kind_t kind, const char *name) {
  switch (kind) {
    case FINDING_WIDGET:
      return "builds cost more in janky frames: cheapen its build() or rebuild it less "
             "(const children, narrower setState)";
    case FINDING_RENDER_OBJECT:
      /* RenderBox._computeIntrinsics / getDryLayout name their blocks
       * "<Type> intrinsics" / "<Type>.getDryLayout" (rendering/box.dart). */
      if (strstr(name, " intrinsics") || strstr(name, "getDryLayout"))
        return "intrinsic sizing pass: avoid IntrinsicHeight/IntrinsicWidth and shrinkWrap, "
               "give fixed sizes";
      return "expensive layout or paint of this render object: add a RepaintBoundary or a "
             "relayout boundary, avoid intrinsics";
    case FINDING_PHASE:
      if (starts(name, "BUILD")) return "build work outside named widgets: trackWidgets names them";
      if (starts(name, "LAYOUT"))
        return "layout-bound: look for intrinsic passes (IntrinsicHeight, shrinkWrap) and deep "
               "relayouts; trackLayouts names render objects";
      if (starts(name, "PAINT"))
        return "paint-bound: isolate what repaints with RepaintBoundary; trackPaints names "
               "render objects";
      if (starts(name, "COMPOSITING"))
        return "scene building: many layers (Opacity, ShaderMask, clips); use fewer";
      if (starts(name, "UPDATING COMPOSITING BITS"))
        return "compositing bits: layer-changing widgets toggled often";
      if (starts(name, "FINALIZE TREE"))
        return "finalizing the tree: large subtrees unmounted and disposed in these frames";
      if (starts(name, "POST_FRAME"))
        return "post-frame callbacks do heavy work (this block belongs to the previous frame)";
      return "semantics updates (accessibility is on): large or changing semantics trees";
    case FINDING_RASTER:
      return "raster-bound with no UI cause: cut saveLayer, Opacity, clips and large images; "
             "check shader compilation";
    case FINDING_TRACKING:
      break;
  }
  return "";
}

typedef struct {
  finding_kind_t kind;
  int tier; /* 0: names below the phases; 1: phases and raster */
  const char *name, *thread, *hint;
  uint64_t jank_frames, of_frames;
  int64_t jank_mean, other_mean; /* µs per frame */
} cand_t;

static int64_t mean(double sum, uint64_t n) {
  return n ? (int64_t)llround(sum / (double)n) : 0;
}

/* Tier first, then the larger excess, then name ascending (byte order). */
static int cand_cmp(const void *a, const void *b) {
  const cand_t *x = a, *y = b;
  if (x->tier != y->tier) return x->tier < y->tier ? -1 : 1;
  int64_t ex = x->jank_mean - x->other_mean, ey = y->jank_mean - y->other_mean;
  if (ex != ey) return ex > ey ? -1 : 1;
  return strcmp(x->name, y->name);
}

static json_t *cand_json(const cand_t *c) {
  return json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:s}", "kind", findings_kind_name(c->kind), "name",
                   c->name, "thread", c->thread, "jankFrames", (json_int_t)c->jank_frames,
                   "ofJankFrames", (json_int_t)c->of_frames, "perJankFrameUs",
                   (json_int_t)c->jank_mean, "perOtherFrameUs", (json_int_t)c->other_mean, "hint",
                   c->hint);
}

json_t *findings_to_json(const findings_input_t *in, size_t max) {
  json_t *out = json_array();
  if (!out) return NULL;
  cand_t *c = malloc((in->nblocks + 1) * sizeof *c);
  if (!c) {
    json_decref(out);
    return NULL;
  }
  size_t n = 0;
  int64_t min_excess = in->budget_us / FINDINGS_MIN_EXCESS_DIV;
  if (min_excess < 1) min_excess = 1;
  if (in->build_missed) {
    for (size_t i = 0; i < in->nblocks; i++) {
      const findings_block_t *b = &in->blocks[i];
      cand_t k = {findings_classify(b->name),
                  0,
                  b->name,
                  "ui",
                  NULL,
                  b->jank_frames,
                  in->build_missed,
                  mean((double)b->jank_self_us, in->build_missed),
                  mean((double)b->other_self_us, in->other_frames)};
      if (k.jank_mean - k.other_mean < min_excess) continue;
      k.tier = k.kind == FINDING_PHASE;
      k.hint = hint_for(k.kind, k.name);
      c[n++] = k;
    }
  }
  if (in->raster_missed) {
    cand_t k = {FINDING_RASTER,
                1,
                "raster",
                "raster",
                hint_for(FINDING_RASTER, ""),
                in->raster_missed,
                in->raster_missed,
                mean(in->raster_us_missed, in->raster_missed),
                mean(in->raster_us_other, in->other_frames)};
    c[n++] = k;
  }
  qsort(c, n, sizeof *c, cand_cmp);

  /* Missing names: the option that would name the top phase's work. */
  int bad = 0;
  if (in->build_missed && !in->build_missed_named && max > 0) {
    const char *top = NULL;
    for (size_t i = 0; i < n && !top; i++)
      if (c[i].kind == FINDING_PHASE) top = c[i].name;
    const char *opt = "trackWidgets", *hint =
                                          "no janky frame names a widget: start again with "
                                          "trackWidgets: true";
    int on = in->track_widgets;
    if (top && starts(top, "LAYOUT")) {
      opt = "trackLayouts";
      hint = "no janky frame names a render object: start again with trackLayouts: true";
      on = in->track_layouts;
    } else if (top && starts(top, "PAINT")) {
      opt = "trackPaints";
      hint = "no janky frame names a render object: start again with trackPaints: true";
      on = in->track_paints;
    }
    if (on != 1) {
      cand_t k = {FINDING_TRACKING,
                  0,
                  opt,
                  "ui",
                  hint,
                  in->build_missed,
                  in->build_missed,
                  mean(in->build_us_missed, in->build_missed),
                  mean(in->build_us_other, in->other_frames)};
      if (json_array_append_new(out, cand_json(&k)) != 0) bad = 1;
    }
  }
  for (size_t i = 0; i < n && json_array_size(out) < max && !bad; i++)
    if (json_array_append_new(out, cand_json(&c[i])) != 0) bad = 1;
  free(c);
  if (bad) {
    json_decref(out);
    return NULL;
  }
  return out;
}

json_t *findings_warnings_new(const char *build_mode, int track_widgets, int track_layouts,
                              int track_paints) {
  json_t *w = json_array();
  if (!w) return NULL;
  int bad = 0;
  /* FrameTiming's own doc (engine lib/ui/platform_dispatcher.dart): debug
   * metrics "may be very different from those in profile and release modes". */
  if (build_mode && !strcmp(build_mode, "debug") &&
      json_array_append_new(
          w, json_string("debug build: timings are inflated; run `flutter run --profile` for "
                         "real ones")) != 0)
    bad = 1;
  char line[160];
  const char *on[3];
  size_t k = 0;
  if (track_widgets == 1) on[k++] = "trackWidgets";
  if (track_layouts == 1) on[k++] = "trackLayouts";
  if (track_paints == 1) on[k++] = "trackPaints";
  if (k) {
    /* widgets/debug.dart on debugProfileBuildsEnabled: "the overhead of
     * adding timeline events is significant". */
    snprintf(line, sizeof line, "%s%s%s%s%s on: %s overhead to the frames measured", on[0],
             k > 1 ? ", " : "", k > 1 ? on[1] : "", k > 2 ? ", " : "", k > 2 ? on[2] : "",
             k > 1 ? "they add" : "it adds");
    if (json_array_append_new(w, json_string(line)) != 0) bad = 1;
  }
  if (bad) {
    json_decref(w);
    return NULL;
  }
  return w;
}
