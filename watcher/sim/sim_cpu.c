#include "sim_cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the simulated app's code -------------------------------------------- */

typedef enum { LIB_APP, LIB_FLUTTER, LIB_UI, LIB_NATIVE } lib_kind_t;

/* One function the UI thread runs. cls NULL: a top-level function, owned by
 * its library. Lines are where the declaration starts (Function::line). */
typedef struct {
  const char *name; /* as QualifiedUserVisibleName prints it: Class.method */
  const char *cls;
  const char *member;
  lib_kind_t lib;
  const char *uri;      /* the script's uri (package:, dart:) */
  const char *resolved; /* Script::resolved_url */
  int line, column;
  int class_id;
} fn_t;

#define APP_ROOT "file:///home/dev/sim_app/lib/"
#define FLUTTER_ROOT "file:///opt/flutter/packages/flutter/lib/src/"
#define UI_ROOT "org-dartlang-sdk:///flutter/lib/ui/"

enum {
  F_UNKNOWN = 0, /* index 0: the VM's "<unknown Dart function>" (kind Collected) */
  F_NATIVE_LOOP,
  F_NATIVE_TASK,
  F_NATIVE_ENTRY,
  F_NATIVE_GC,
  F_DRAW_FRAME,
  F_PD_DRAW_FRAME,
  F_SB_HANDLE_DRAW_FRAME_,
  F_SB_HANDLE_DRAW_FRAME,
  F_SB_INVOKE_FRAME_CALLBACK,
  F_RB_PERSISTENT,
  F_WB_DRAW_FRAME,
  F_BO_BUILD_SCOPE,
  F_EL_REBUILD,
  F_CE_PERFORM_REBUILD,
  F_SE_BUILD,
  F_FEED_LIST,
  F_PRODUCT_CARD,
  F_TEXT,
  F_SLOW_WIDGET,
  F_PRICE_FORMAT,
  F_CATALOG_INDEX,
  F_RB_DRAW_FRAME,
  F_PO_FLUSH_LAYOUT,
  F_RO_LAYOUT_NO_RESIZE,
  F_RO_LAYOUT,
  F_FLEX_LAYOUT,
  F_PARA_LAYOUT,
  F_PO_FLUSH_PAINT,
  F_PC_REPAINT,
  F_PC_PAINT_CHILD,
  F_FLEX_PAINT,
  F_PARA_PAINT,
  F_RV_COMPOSITE,
  F_BO_FINALIZE,
  F__COUNT
};

static const fn_t fns[F__COUNT] = {
    [F_UNKNOWN] = {"<unknown Dart function>", NULL, NULL, LIB_NATIVE, NULL, NULL, 0, 0, 0},
    /* The engine's and the VM's C++ frames: Flutter passes --profile-vm, so
     * stacks reach into native code (flutter/engine runtime/dart_vm.cc
     * ProfilingFlags). An Android libflutter.so has no symbols to resolve. */
    [F_NATIVE_LOOP] = {"[Native] libflutter.so+0x1b0c34", NULL, NULL, LIB_NATIVE, NULL, NULL, 0, 0,
                       0},
    [F_NATIVE_TASK] = {"[Native] libflutter.so+0x2e1b90", NULL, NULL, LIB_NATIVE, NULL, NULL, 0, 0,
                       0},
    [F_NATIVE_ENTRY] = {"[Native] libflutter.so+0x2f7a14", NULL, NULL, LIB_NATIVE, NULL, NULL, 0, 0,
                        0},
    [F_NATIVE_GC] = {"[Native] libflutter.so+0x3b81c0", NULL, NULL, LIB_NATIVE, NULL, NULL, 0, 0,
                     0},
    [F_DRAW_FRAME] = {"_drawFrame", NULL, "_drawFrame", LIB_UI, "dart:ui/hooks.dart",
                      UI_ROOT "hooks.dart", 283, 1, 0},
    [F_PD_DRAW_FRAME] = {"PlatformDispatcher._drawFrame", "PlatformDispatcher", "_drawFrame",
                         LIB_UI, "dart:ui/platform_dispatcher.dart",
                         UI_ROOT "platform_dispatcher.dart", 826, 3, 1101},
    [F_SB_HANDLE_DRAW_FRAME_] = {"SchedulerBinding._handleDrawFrame", "SchedulerBinding",
                                 "_handleDrawFrame", LIB_FLUTTER,
                                 "package:flutter/src/scheduler/binding.dart",
                                 FLUTTER_ROOT "scheduler/binding.dart", 1279, 3, 2203},
    [F_SB_HANDLE_DRAW_FRAME] = {"SchedulerBinding.handleDrawFrame", "SchedulerBinding",
                                "handleDrawFrame", LIB_FLUTTER,
                                "package:flutter/src/scheduler/binding.dart",
                                FLUTTER_ROOT "scheduler/binding.dart", 1361, 3, 2203},
    [F_SB_INVOKE_FRAME_CALLBACK] = {"SchedulerBinding._invokeFrameCallback", "SchedulerBinding",
                                    "_invokeFrameCallback", LIB_FLUTTER,
                                    "package:flutter/src/scheduler/binding.dart",
                                    FLUTTER_ROOT "scheduler/binding.dart", 1439, 3, 2203},
    [F_RB_PERSISTENT] = {"RendererBinding._handlePersistentFrameCallback", "RendererBinding",
                         "_handlePersistentFrameCallback", LIB_FLUTTER,
                         "package:flutter/src/rendering/binding.dart",
                         FLUTTER_ROOT "rendering/binding.dart", 458, 3, 2210},
    [F_WB_DRAW_FRAME] = {"WidgetsBinding.drawFrame", "WidgetsBinding", "drawFrame", LIB_FLUTTER,
                         "package:flutter/src/widgets/binding.dart",
                         FLUTTER_ROOT "widgets/binding.dart", 1177, 3, 2215},
    [F_BO_BUILD_SCOPE] = {"BuildOwner.buildScope", "BuildOwner", "buildScope", LIB_FLUTTER,
                          "package:flutter/src/widgets/framework.dart",
                          FLUTTER_ROOT "widgets/framework.dart", 2899, 3, 2220},
    [F_EL_REBUILD] = {"Element.rebuild", "Element", "rebuild", LIB_FLUTTER,
                      "package:flutter/src/widgets/framework.dart",
                      FLUTTER_ROOT "widgets/framework.dart", 5320, 3, 2221},
    [F_CE_PERFORM_REBUILD] = {"ComponentElement.performRebuild", "ComponentElement",
                              "performRebuild", LIB_FLUTTER,
                              "package:flutter/src/widgets/framework.dart",
                              FLUTTER_ROOT "widgets/framework.dart", 5660, 3, 2222},
    [F_SE_BUILD] = {"StatelessElement.build", "StatelessElement", "build", LIB_FLUTTER,
                    "package:flutter/src/widgets/framework.dart",
                    FLUTTER_ROOT "widgets/framework.dart", 5741, 3, 2223},
    [F_FEED_LIST] = {"FeedList.build", "FeedList", "build", LIB_APP,
                     "package:sim_app/feed_list.dart", APP_ROOT "feed_list.dart", 23, 3, 3001},
    [F_PRODUCT_CARD] = {"ProductCard.build", "ProductCard", "build", LIB_APP,
                        "package:sim_app/product_card.dart", APP_ROOT "product_card.dart", 31, 3,
                        3002},
    [F_TEXT] = {"Text.build", "Text", "build", LIB_FLUTTER, "package:flutter/src/widgets/text.dart",
                FLUTTER_ROOT "widgets/text.dart", 652, 3, 2230},
    [F_SLOW_WIDGET] = {"SlowWidget.build", "SlowWidget", "build", LIB_APP,
                       "package:sim_app/slow_widget.dart", APP_ROOT "slow_widget.dart", 42, 3,
                       3003},
    [F_PRICE_FORMAT] = {"PriceFormatter.formatAll", "PriceFormatter", "formatAll", LIB_APP,
                        "package:sim_app/price_formatter.dart", APP_ROOT "price_formatter.dart", 18,
                        3, 3004},
    [F_CATALOG_INDEX] = {"CatalogIndex.rebuild", "CatalogIndex", "rebuild", LIB_APP,
                         "package:sim_app/catalog_index.dart", APP_ROOT "catalog_index.dart", 57, 3,
                         3005},
    [F_RB_DRAW_FRAME] = {"RendererBinding.drawFrame", "RendererBinding", "drawFrame", LIB_FLUTTER,
                         "package:flutter/src/rendering/binding.dart",
                         FLUTTER_ROOT "rendering/binding.dart", 601, 3, 2210},
    [F_PO_FLUSH_LAYOUT] = {"PipelineOwner.flushLayout", "PipelineOwner", "flushLayout", LIB_FLUTTER,
                           "package:flutter/src/rendering/object.dart",
                           FLUTTER_ROOT "rendering/object.dart", 1064, 3, 2240},
    [F_RO_LAYOUT_NO_RESIZE] = {"RenderObject._layoutWithoutResize", "RenderObject",
                               "_layoutWithoutResize", LIB_FLUTTER,
                               "package:flutter/src/rendering/object.dart",
                               FLUTTER_ROOT "rendering/object.dart", 2549, 3, 2241},
    [F_RO_LAYOUT] = {"RenderObject.layout", "RenderObject", "layout", LIB_FLUTTER,
                     "package:flutter/src/rendering/object.dart",
                     FLUTTER_ROOT "rendering/object.dart", 2685, 3, 2241},
    [F_FLEX_LAYOUT] = {"RenderFlex.performLayout", "RenderFlex", "performLayout", LIB_FLUTTER,
                       "package:flutter/src/rendering/flex.dart",
                       FLUTTER_ROOT "rendering/flex.dart", 1098, 3, 2245},
    [F_PARA_LAYOUT] = {"RenderParagraph.performLayout", "RenderParagraph", "performLayout",
                       LIB_FLUTTER, "package:flutter/src/rendering/paragraph.dart",
                       FLUTTER_ROOT "rendering/paragraph.dart", 795, 3, 2246},
    [F_PO_FLUSH_PAINT] = {"PipelineOwner.flushPaint", "PipelineOwner", "flushPaint", LIB_FLUTTER,
                          "package:flutter/src/rendering/object.dart",
                          FLUTTER_ROOT "rendering/object.dart", 1271, 3, 2240},
    [F_PC_REPAINT] = {"PaintingContext.repaintCompositedChild", "PaintingContext",
                      "repaintCompositedChild", LIB_FLUTTER,
                      "package:flutter/src/rendering/object.dart",
                      FLUTTER_ROOT "rendering/object.dart", 95, 10, 2242},
    [F_PC_PAINT_CHILD] = {"PaintingContext.paintChild", "PaintingContext", "paintChild",
                          LIB_FLUTTER, "package:flutter/src/rendering/object.dart",
                          FLUTTER_ROOT "rendering/object.dart", 238, 3, 2242},
    [F_FLEX_PAINT] = {"RenderFlex.paint", "RenderFlex", "paint", LIB_FLUTTER,
                      "package:flutter/src/rendering/flex.dart", FLUTTER_ROOT "rendering/flex.dart",
                      1162, 3, 2245},
    [F_PARA_PAINT] = {"RenderParagraph.paint", "RenderParagraph", "paint", LIB_FLUTTER,
                      "package:flutter/src/rendering/paragraph.dart",
                      FLUTTER_ROOT "rendering/paragraph.dart", 878, 3, 2246},
    [F_RV_COMPOSITE] = {"RenderView.compositeFrame", "RenderView", "compositeFrame", LIB_FLUTTER,
                        "package:flutter/src/rendering/view.dart",
                        FLUTTER_ROOT "rendering/view.dart", 344, 3, 2250},
    [F_BO_FINALIZE] = {"BuildOwner.finalizeTree", "BuildOwner", "finalizeTree", LIB_FLUTTER,
                       "package:flutter/src/widgets/framework.dart",
                       FLUTTER_ROOT "widgets/framework.dart", 3218, 3, 2220},
};

/* The stacks, top frame first, as the VM prints CpuSample.stack (frame 0 is
 * the pc the thread was interrupted at). -1 ends each. */
#define BASE                                                                                    \
  F_RB_PERSISTENT, F_SB_INVOKE_FRAME_CALLBACK, F_SB_HANDLE_DRAW_FRAME, F_SB_HANDLE_DRAW_FRAME_, \
      F_PD_DRAW_FRAME, F_DRAW_FRAME, F_NATIVE_ENTRY, F_NATIVE_TASK, F_NATIVE_LOOP
#define BUILD F_BO_BUILD_SCOPE, F_WB_DRAW_FRAME, BASE
#define ELEMENT F_SE_BUILD, F_CE_PERFORM_REBUILD, F_EL_REBUILD, BUILD
#define LAYOUT F_PO_FLUSH_LAYOUT, F_RB_DRAW_FRAME, F_WB_DRAW_FRAME, BASE
#define PAINT F_PO_FLUSH_PAINT, F_RB_DRAW_FRAME, F_WB_DRAW_FRAME, BASE
#define MAX_STACK 32
static const int stacks[SIM_CPU__COUNT][MAX_STACK] = {
    [SIM_CPU_BUILD] = {BUILD, -1},
    [SIM_CPU_FEED_LIST] = {F_FEED_LIST, ELEMENT, -1},
    [SIM_CPU_PRODUCT_CARD] = {F_PRODUCT_CARD, ELEMENT, -1},
    [SIM_CPU_TEXT] = {F_TEXT, ELEMENT, -1},
    [SIM_CPU_SLOW_WIDGET] = {F_SLOW_WIDGET, ELEMENT, -1},
    [SIM_CPU_PRICE_FORMAT] = {F_PRICE_FORMAT, F_FEED_LIST, ELEMENT, -1},
    [SIM_CPU_CATALOG_INDEX] = {F_CATALOG_INDEX, F_FEED_LIST, ELEMENT, -1},
    [SIM_CPU_GC] = {F_NATIVE_GC, BUILD, -1},
    [SIM_CPU_LAYOUT] = {LAYOUT, -1},
    [SIM_CPU_LAYOUT_FLEX] = {F_FLEX_LAYOUT, F_RO_LAYOUT_NO_RESIZE, LAYOUT, -1},
    [SIM_CPU_LAYOUT_TEXT] = {F_PARA_LAYOUT, F_RO_LAYOUT, F_FLEX_LAYOUT, F_RO_LAYOUT_NO_RESIZE,
                             LAYOUT, -1},
    [SIM_CPU_PAINT] = {PAINT, -1},
    [SIM_CPU_PAINT_FLEX] = {F_FLEX_PAINT, F_PC_REPAINT, PAINT, -1},
    [SIM_CPU_PAINT_TEXT] = {F_PARA_PAINT, F_PC_PAINT_CHILD, F_FLEX_PAINT, F_PC_REPAINT, PAINT, -1},
    [SIM_CPU_COMPOSITE] = {F_RV_COMPOSITE, F_RB_DRAW_FRAME, F_WB_DRAW_FRAME, BASE, -1},
    [SIM_CPU_FINALIZE] = {F_BO_FINALIZE, F_WB_DRAW_FRAME, BASE, -1},
    [SIM_CPU_POST_FRAME] = {F_SB_INVOKE_FRAME_CALLBACK, F_SB_HANDLE_DRAW_FRAME,
                            F_SB_HANDLE_DRAW_FRAME_, F_PD_DRAW_FRAME, F_DRAW_FRAME, F_NATIVE_ENTRY,
                            F_NATIVE_TASK, F_NATIVE_LOOP, -1},
};

/* The tag functions the VM registers for every profile (ProfileBuilder::
 * Setup), then the VM tag and user tag the samples carry. */
static const char *const tags[] = {"Root",
                                   "[Truncated]",
                                   "[No Code]",
                                   "[Optimized Code]",
                                   "[Unoptimized Code]",
                                   "[Native Code]",
                                   "[Inline Start]",
                                   "[Inline End]",
                                   "Dart",
                                   "VM",
                                   "Default"};
#define N_TAGS (sizeof tags / sizeof tags[0])
#define TAG_TRUNCATED 1

/* ---- the ring ------------------------------------------------------------- */

int sim_cpu_init(sim_cpu_t *c, size_t capacity) {
  memset(c, 0, sizeof *c);
  c->enabled = 1;
  c->period_us = SIM_CPU_DEFAULT_PERIOD_US;
  c->max_depth = SIM_CPU_DEFAULT_MAX_DEPTH;
  c->compiled = SIM_CPU_DEFAULT_COMPILED;
  c->cap = capacity ? capacity : SIM_CPU_DEFAULT_RING;
  c->ring = calloc(c->cap, sizeof *c->ring);
  return c->ring ? 0 : -1;
}

void sim_cpu_free(sim_cpu_t *c) {
  json_decref(c->compiled_json);
  c->compiled_json = NULL;
  free(c->ring);
  c->ring = NULL;
  c->cap = c->len = c->head = 0;
}

void sim_cpu_clear(sim_cpu_t *c) {
  c->len = c->head = 0;
}

void sim_cpu_span(sim_cpu_t *c, int64_t start, int64_t end, sim_cpu_stack_t stack) {
  int64_t p = c->period_us > 0 ? c->period_us : SIM_CPU_DEFAULT_PERIOD_US, t;

  if (!c->enabled || !c->ring || end <= start) return;
  t = (start + p - 1) / p * p; /* the first grid point at or after start */
  if (t < c->next_ts) t = c->next_ts;
  for (; t < end; t += p) {
    size_t slot = (c->head + c->len) % c->cap;
    if (c->len == c->cap) { /* full: the oldest goes, as a reused VM block */
      c->head = (c->head + 1) % c->cap;
      c->overwritten++;
    } else {
      c->len++;
    }
    c->ring[slot].ts = t;
    c->ring[slot].stack = (uint8_t)stack;
    c->taken++;
    c->next_ts = t + p;
  }
}

/* ---- the answer ------------------------------------------------------------ */

/* A library's private key, as its service id shows it: one per uri. */
static unsigned long library_key(const char *uri) {
  unsigned long h = 5381;
  for (; *uri; uri++) h = (h * 33 + (unsigned char)*uri) % 90000000ul;
  return 10000000ul + h;
}

static json_t *library_ref(lib_kind_t lib, const char *script_uri) {
  char id[40];
  const char *uri = lib == LIB_UI ? "dart:ui" : script_uri;
  snprintf(id, sizeof id, "libraries/@%lu", library_key(uri));
  return json_pack("{s:s, s:b, s:s, s:s, s:s}", "type", "@Library", "fixedId", 1, "id", id, "name",
                   "", "uri", uri);
}

/* Script ids as Script::PrintJSONImpl makes them: the library's private
 * key, the IRI-encoded uri, the load time in hex. */
static json_t *script_ref(const fn_t *f) {
  char id[256], enc[160];
  size_t i, o = 0;
  for (i = 0; f->uri[i] && o + 4 < sizeof enc; i++) {
    unsigned char ch = (unsigned char)f->uri[i];
    if (ch == ':' || ch == '/')
      o += (size_t)snprintf(enc + o, sizeof enc - o, "%%%02X", ch);
    else
      enc[o++] = (char)ch;
  }
  enc[o] = '\0';
  snprintf(id, sizeof id, "libraries/@%lu/scripts/%s/18c3a2f1b9e",
           library_key(f->lib == LIB_UI ? "dart:ui" : f->uri), enc);
  return json_pack("{s:s, s:b, s:s, s:s, s:s}", "type", "@Script", "fixedId", 1, "id", id, "uri",
                   f->uri, "_kind", "kernel");
}

/* @Function as Function::PrintJSONImpl prints a reference: the owner is the
 * class (or the library for a top-level function); in JIT (debug) the
 * location has token positions and, since dart-lang/sdk 2db8f37, line and
 * column; in AOT (profile) AddLocationLine gives the line without them. */
static json_t *dart_function(const fn_t *f, int aot) {
  char id[160];
  json_t *owner, *loc;
  if (f->cls) {
    char cid[32];
    snprintf(cid, sizeof cid, "classes/%d", f->class_id);
    snprintf(id, sizeof id, "classes/%d/functions/%s", f->class_id, f->member);
    owner = json_pack("{s:s, s:b, s:s, s:s, s:o}", "type", "@Class", "fixedId", 1, "id", cid,
                      "name", f->cls, "library", library_ref(f->lib, f->uri));
  } else {
    snprintf(id, sizeof id, "libraries/@%lu/functions/%s", library_key("dart:ui"), f->member);
    owner = library_ref(f->lib, f->uri);
  }
  if (aot)
    loc = json_pack("{s:s, s:o, s:i}", "type", "SourceLocation", "script", script_ref(f), "line",
                    f->line);
  else
    loc = json_pack("{s:s, s:o, s:i, s:i, s:i, s:i}", "type", "SourceLocation", "script",
                    script_ref(f), "tokenPos", f->line * 40 + f->column, "endTokenPos",
                    f->line * 40 + 400, "line", f->line, "column", f->column);
  return json_pack("{s:s, s:b, s:s, s:s, s:o, s:s, s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:o}",
                   "type", "@Function", "fixedId", 1, "id", id, "name", f->member, "owner", owner,
                   "_kind", "RegularFunction", "static", 0, "const", 0, "implicit", 0, "abstract",
                   0, "_intrinsic", 0, "_native", 0, "isGetter", 0, "isSetter", 0, "location", loc);
}

/* A function with no Dart Function object (native, tag, collected) prints
 * a NativeFunction and an empty resolvedUrl (ProfileFunction::
 * PrintToJSONObject; a null ResolvedScriptUrl() prints as ""). */
static json_t *profile_function(const char *kind, json_t *function, const char *resolved, long incl,
                                long excl) {
  return json_pack("{s:s, s:s, s:i, s:i, s:s, s:o, s:[]}", "type", "ProfileFunction", "kind", kind,
                   "inclusiveTicks", (int)incl, "exclusiveTicks", (int)excl, "resolvedUrl",
                   resolved ? resolved : "", "function", function, "_codes");
}

static json_t *native_function(const char *name, const char *kind) {
  return json_pack("{s:s, s:s, s:s}", "type", "NativeFunction", "name", name, "_kind", kind);
}

/* Zero-tick compiled functions: framework code the app has compiled but
 * that ran in no sample of the range. */
static json_t *compiled_function(int i, int aot) {
  char cls[32], uri[96], resolved[128];
  fn_t f;
  snprintf(cls, sizeof cls, "_SimCompiled%04d", i);
  snprintf(uri, sizeof uri, "package:flutter/src/widgets/sim_compiled_%02d.dart", i % 40);
  snprintf(resolved, sizeof resolved, FLUTTER_ROOT "widgets/sim_compiled_%02d.dart", i % 40);
  memset(&f, 0, sizeof f);
  f.cls = cls;
  f.member = "run";
  f.lib = LIB_FLUTTER;
  f.uri = uri;
  f.resolved = resolved;
  f.line = 10 + i % 900;
  f.column = 3;
  f.class_id = 4000 + i;
  return profile_function("Dart", dart_function(&f, aot), resolved, 0, 0);
}

/* The zero-tick functions never change between answers: built once, then
 * shared by every answer (a 30 000-entry table takes seconds to build). */
static json_t *compiled_functions(sim_cpu_t *c) {
  if (c->compiled_json && (int)json_array_size(c->compiled_json) == c->compiled &&
      c->compiled_json_aot == c->aot)
    return c->compiled_json;
  json_decref(c->compiled_json);
  c->compiled_json = json_array();
  c->compiled_json_aot = c->aot;
  for (int k = 0; c->compiled_json && k < c->compiled; k++)
    json_array_append_new(c->compiled_json, compiled_function(k, c->aot));
  return c->compiled_json;
}

static int stack_depth(int st) {
  int n = 0;
  while (n < MAX_STACK && stacks[st][n] >= 0) n++;
  return n;
}

json_t *sim_cpu_samples_json(sim_cpu_t *c, int64_t origin, int64_t extent, int64_t now,
                             long pid, long tid) {
  long incl[F__COUNT] = {0}, excl[F__COUNT] = {0}, tag_incl[N_TAGS] = {0};
  int64_t min_ts = INT64_MAX, max_ts = 0;
  size_t i, n = 0;
  int st, d, k, max_depth = c->max_depth > 0 ? c->max_depth : SIM_CPU_DEFAULT_MAX_DEPTH;
  json_t *out, *functions, *samples;

  samples = json_array();
  for (i = 0; i < c->len; i++) {
    const sim_cpu_sample_t *sm = &c->ring[(c->head + i) % c->cap];
    int depth, truncated, seen[F__COUNT] = {0};
    json_t *stack, *js;
    if (sm->ts > now) continue; /* drawn ahead of the clock: not taken yet */
    if (origin != -1 && extent != -1 && (sm->ts < origin || sm->ts - origin > extent)) continue;
    st = sm->stack;
    depth = stack_depth(st);
    truncated = depth > max_depth;
    if (truncated) depth = max_depth;
    stack = json_array();
    for (d = 0; d < depth; d++) {
      int f = stacks[st][d];
      json_array_append_new(stack, json_integer(f));
      if (d == 0) excl[f]++;
      if (!seen[f]) incl[f]++;
      seen[f] = 1;
    }
    if (truncated) tag_incl[TAG_TRUNCATED]++;
    js = json_pack("{s:I, s:I, s:s, s:s}", "tid", (json_int_t)tid, "timestamp", (json_int_t)sm->ts,
                   "vmTag", st == SIM_CPU_GC ? "VM" : "Dart", "userTag", "Default");
    if (truncated) json_object_set_new(js, "truncated", json_true());
    json_object_set_new(js, "stack", stack);
    json_array_append_new(samples, js);
    if (sm->ts < min_ts) min_ts = sm->ts;
    if (sm->ts > max_ts) max_ts = sm->ts;
    n++;
  }
  if (!n) min_ts = max_ts = 0; /* ProfileBuilder::SanitizeMinMaxTimes */

  /* functions: the unknown function first (ProfileFunctionTable's
   * constructor), then the code's functions, then the tags. */
  functions = json_array();
  for (k = 0; k < F__COUNT; k++) {
    const fn_t *f = &fns[k];
    if (k == F_UNKNOWN)
      json_array_append_new(
          functions, profile_function("Collected", native_function(f->name, "Collected"), NULL,
                                      incl[k], excl[k]));
    else if (f->lib == LIB_NATIVE)
      json_array_append_new(
          functions,
          profile_function("Native", native_function(f->name, "Native"), NULL, incl[k], excl[k]));
    else
      json_array_append_new(functions, profile_function("Dart", dart_function(f, c->aot),
                                                        f->resolved, incl[k], excl[k]));
  }
  json_array_extend(functions, compiled_functions(c));
  for (i = 0; i < N_TAGS; i++)
    json_array_append_new(
        functions, profile_function("Tag", native_function(tags[i], "Tag"), NULL, tag_incl[i], 0));

  out = json_pack(
      "{s:s, s:i, s:i, s:I, s:I, s:I, s:I, s:{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i}}",
      "type", "CpuSamples", "samplePeriod", c->period_us, "maxStackDepth", max_depth, "sampleCount",
      (json_int_t)n, "timeOriginMicros", (json_int_t)min_ts, "timeExtentMicros",
      (json_int_t)(max_ts - min_ts), "pid", (json_int_t)pid, "_counters", "bail_out_unknown_task",
      0, "bail_out_jump_to_exception_handler", 0, "bail_out_check_isolate", 0,
      "single_frame_sample_deoptimizing", 0, "single_frame_sample_get_and_validate_stack_bounds", 0,
      "stack_walker_native", 0, "stack_walker_dart_exit", 0, "stack_walker_dart", 0,
      "stack_walker_none", 0);
  if (!out) {
    json_decref(functions);
    json_decref(samples);
    return NULL;
  }
  json_object_set_new(out, "functions", functions);
  json_object_set_new(out, "samples", samples);
  return out;
}
