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
  static const char *const names[] = {"widget", "render_object", "phase", "raster", "tracking",
                                      "build"};
  return names[kind];
}

static int starts(const char *s, const char *prefix) {
  return !strncmp(s, prefix, strlen(prefix));
}

int findings_kind_tier(const char *kind) {
  return !(!strcmp(kind, "widget") || !strcmp(kind, "render_object") || !strcmp(kind, "gc") ||
           !strcmp(kind, "shader"));
}

double findings_explained(double excess, double overrun) {
  if (excess <= 0) return 0;
  return excess < overrun ? excess : overrun;
}

double findings_share(int64_t explained_us, double jank_over_us) {
  if (!(jank_over_us > 0) || explained_us <= 0) return 0;
  double r = (double)explained_us / jank_over_us;
  return round((r > 1 ? 1 : r) * 100.0) / 100.0;
}

/* One line in Flutter's terms: what to try for this kind of cause. A hint
 * never suggests an option that was on (on: the track* option of the phase). */
static const char *next_option(const findings_input_t *in);

static const char *hint_for(finding_kind_t kind, const char *name, const findings_input_t *in) {
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
      if (starts(name, "BUILD"))
        return in->track_widgets == 1
                   ? "build work that no widget's build() holds: state changes, listeners, "
                     "GC or work in callbacks run during the frame"
                   : !strcmp(next_option(in), "trackWidgets")
                         ? "build work outside named widgets (see next)"
                         : "build work outside named widgets";
      if (starts(name, "LAYOUT"))
        return in->track_layouts == 1
                   ? "layout-bound outside named render objects: look for intrinsic passes "
                     "(IntrinsicHeight, shrinkWrap) and deep relayouts"
                   : "layout-bound: look for intrinsic passes (IntrinsicHeight, shrinkWrap) and "
                     "deep relayouts";
      if (starts(name, "PAINT"))
        return "paint-bound: isolate what repaints with RepaintBoundary";
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
      return "raster-bound with no UI cause: cut saveLayer, Opacity, clips and large images";
    case FINDING_BUILD:
      return "the UI thread's frame work (build, layout, paint: FrameTiming's build) is over "
             "budget, with no blocks to say which part";
    case FINDING_TRACKING:
      break;
  }
  return "";
}

typedef struct {
  finding_kind_t kind;
  const char *name, *thread, *hint;
  uint64_t jank_frames, of_frames;
  int64_t jank_mean, other_mean; /* µs per frame */
  int64_t explained;
  double share;
} cand_t;

static int64_t mean(double sum, uint64_t n) {
  return n ? (int64_t)llround(sum / (double)n) : 0;
}

static json_t *cand_json(const cand_t *c) {
  return json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:f,s:s}", "kind", findings_kind_name(c->kind),
                   "name", c->name, "thread", c->thread, "jankFrames", (json_int_t)c->jank_frames,
                   "ofJankFrames", (json_int_t)c->of_frames, "perJankFrameUs",
                   (json_int_t)c->jank_mean, "perOtherFrameUs", (json_int_t)c->other_mean,
                   "explainedUs", (json_int_t)c->explained, "explains", c->share, "hint", c->hint);
}

/* The ranking's order on (explained, tier, name): the more jank explained
 * first (exact µs, not the rounded share), equal → name ascending; then a
 * specific cause moves ahead of a general one when it explains at least
 * FINDINGS_TIE_SHARE of what that one explains (a near tie), never past one
 * it does not nearly tie. Deterministic. */
typedef struct {
  double share; /* explainedUs */
  int tier;
  const char *name;
  size_t idx;
} rank_t;

static int rank_cmp(const void *a, const void *b) {
  const rank_t *x = a, *y = b;
  if (x->share != y->share) return x->share > y->share ? -1 : 1;
  int c = strcmp(x->name, y->name);
  if (c) return c;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void rank_order(rank_t *r, size_t n) {
  qsort(r, n, sizeof *r, rank_cmp);
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && r[j].tier < r[j - 1].tier &&
                       r[j].share >= FINDINGS_TIE_SHARE * r[j - 1].share;
         j--) {
      rank_t t = r[j];
      r[j] = r[j - 1];
      r[j - 1] = t;
    }
}

/* A cause that is a whole thread's time (raster, or build without blocks):
 * its FrameTiming sums over the frames that missed on it and the calm ones. */
static cand_t thread_cand(const findings_input_t *in, finding_kind_t kind, const char *thread,
                          uint64_t missed, double us_missed, double us_other, int64_t explained) {
  cand_t k = {kind,
              findings_kind_name(kind),
              thread,
              hint_for(kind, "", in),
              missed,
              in->jank_frames,
              mean(us_missed, missed),
              mean(us_other, in->other_frames),
              explained,
              findings_share(explained, in->jank_over_us)};
  return k;
}

json_t *findings_to_json(const findings_input_t *in, size_t max) {
  json_t *out = json_array();
  if (!out) return NULL;
  cand_t *c = malloc((in->nblocks + 2) * sizeof *c);
  rank_t *r = malloc((in->nblocks + 2) * sizeof *r);
  if (!c || !r) {
    free(c);
    free(r);
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
                  b->name,
                  "ui",
                  NULL,
                  b->jank_frames,
                  in->jank_frames,
                  mean((double)b->jank_self_us, in->build_missed),
                  mean((double)b->other_self_us, in->other_frames),
                  b->explained_us,
                  findings_share(b->explained_us, in->jank_over_us)};
      if (k.jank_mean - k.other_mean < min_excess || k.explained <= 0) continue;
      k.hint = hint_for(k.kind, k.name, in);
      c[n++] = k;
    }
  }
  if (in->raster_missed && in->raster_explained_us > 0)
    c[n++] = thread_cand(in, FINDING_RASTER, "raster", in->raster_missed, in->raster_us_missed,
                         in->raster_us_other, in->raster_explained_us);
  /* Frames measured without blocks (no watcher, or attribution off): the
   * build time itself is the UI thread's cause, as FrameTiming tells it. */
  if (in->build_missed && in->nblocks == 0 && in->build_explained_us > 0)
    c[n++] = thread_cand(in, FINDING_BUILD, "ui", in->build_missed, in->build_us_missed,
                         in->build_us_other, in->build_explained_us);
  for (size_t i = 0; i < n; i++)
    r[i] = (rank_t){(double)c[i].explained,
                    c[i].kind == FINDING_PHASE || c[i].kind == FINDING_RASTER ||
                        c[i].kind == FINDING_BUILD,
                    c[i].name, i};
  rank_order(r, n);
  int bad = 0;
  for (size_t i = 0; i < n && json_array_size(out) < max && !bad; i++)
    if (json_array_append_new(out, cand_json(&c[r[i].idx])) != 0) bad = 1;
  free(c);
  free(r);
  if (bad) {
    json_decref(out);
    return NULL;
  }
  return out;
}

/* The option that would name the work of the phase that explains the most
 * jank (the ranking's measure; name ascending on a tie): trackLayouts for
 * LAYOUT, trackPaints for PAINT, else trackWidgets. */
static const char *next_option(const findings_input_t *in) {
  const char *top = NULL;
  int64_t best = 0;
  for (size_t i = 0; i < in->nblocks; i++) {
    const findings_block_t *b = &in->blocks[i];
    if (findings_classify(b->name) != FINDING_PHASE || b->explained_us <= 0) continue;
    if (b->explained_us > best || (b->explained_us == best && top && strcmp(b->name, top) < 0)) {
      best = b->explained_us;
      top = b->name;
    }
  }
  if (top && starts(top, "LAYOUT")) return "trackLayouts";
  if (top && starts(top, "PAINT")) return "trackPaints";
  return "trackWidgets";
}

json_t *findings_next_to_json(const findings_input_t *in) {
  json_t *out = json_array();
  if (!out || !in->build_missed || in->build_missed_named) return out;
  const char *opt = next_option(in), *why = "no janky frame names a widget: it names the widgets "
                                            "whose builds take the time";
  int on = in->track_widgets;
  if (!strcmp(opt, "trackLayouts")) {
    why = "no janky frame names a render object: it names the layouts that take the time";
    on = in->track_layouts;
  } else if (!strcmp(opt, "trackPaints")) {
    why = "no janky frame names a render object: it names the paints that take the time";
    on = in->track_paints;
  }
  if (on == 1) return out;
  if (json_array_append_new(out, json_pack("{s:s,s:s,s:s}", "kind", "tracking", "option", opt,
                                           "why", why))) {
    json_decref(out);
    return NULL;
  }
  return out;
}

int findings_sort_json(json_t *findings, size_t max) {
  size_t n = json_array_size(findings);
  rank_t *r = malloc((n ? n : 1) * sizeof *r);
  json_t *copy = json_array();
  if (!r || !copy) {
    free(r);
    json_decref(copy);
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    json_t *f = json_array_get(findings, i);
    const char *kind = json_string_value(json_object_get(f, "kind"));
    const char *name = json_string_value(json_object_get(f, "name"));
    if (!kind || !name) {
      free(r);
      json_decref(copy);
      return -1;
    }
    r[i] = (rank_t){json_number_value(json_object_get(f, "explainedUs")),
                    findings_kind_tier(kind), name, i};
  }
  rank_order(r, n);
  int bad = 0;
  for (size_t i = 0; i < n && i < max; i++)
    bad |= json_array_append(copy, json_array_get(findings, r[i].idx));
  free(r);
  if (bad || json_array_clear(findings) || json_array_extend(findings, copy)) {
    json_decref(copy);
    return -1;
  }
  json_decref(copy);
  return 0;
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
