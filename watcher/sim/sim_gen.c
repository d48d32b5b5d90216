#include "sim_gen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_clock.h"
#include "sim_timings.h"

#define MAX_EVENTS 128

static const char *const scenario_names[SIM_SCENARIO__COUNT] = {
    "steady", "janky", "idle", "stalled", "rare-slow", "layout-bound", "raster-bound", "gc",
    "shader", "cpu-rare-slow", "scrolllist"};

int sim_scenario_parse(const char *name) {
  int i;
  for (i = 0; i < SIM_SCENARIO__COUNT; i++)
    if (!strcmp(name, scenario_names[i])) return i;
  return -1;
}

const char *sim_scenario_name(sim_scenario_t scenario) {
  return scenario_names[scenario];
}

typedef struct {
  wm_event_t ev[MAX_EVENTS];
  size_t n;
} evbuf_t;

/* Blocks are appended when they finish: callers push children first. */
static void push(evbuf_t *b, const char *name, int64_t start, int64_t end) {
  if (b->n < MAX_EVENTS) b->ev[b->n++] = (wm_event_t){name, start, end - start};
}

/* A frame's random draws, all made up front and in a fixed order, so the
 * same seed gives the same durations whatever is being tracked. */
typedef struct {
  int64_t overhead, build_self, layout_self, bits, composite, finalize, post;
  int64_t raster, raster_gap, layer_cache, picture_cache;
  int n_cards;
  int64_t card[6], flex_layout, para_layout[6], flex_paint, para_paint[6];
  int jank_roll;
  double slow_factor;
  int64_t gc_pause;  /* gc: a GC pause inside BUILD (0: none) */
  int64_t gc_at;     /* ... where it began (set by build_frame) */
  int64_t shader;    /* shader: compilation inside the raster phase (0: none) */
  int64_t price;     /* cpu-rare-slow: PriceFormatter.formatAll inside FeedList (0: none) */
  int64_t catalog;   /* cpu-rare-slow: CatalogIndex.rebuild inside FeedList (0: none) */
} draws_t;

static int64_t uniform(uint64_t *r, int64_t lo, int64_t hi) {
  return lo + (int64_t)(sim_rand_next(r) % (uint64_t)(hi - lo + 1));
}

static void draw_numbers(const sim_t *s, draws_t *d) {
  uint64_t r = s->cfg.seed ^ (s->gen.frame_index * 0xD1B54A32D192ED03ull);
  int i;

  memset(d, 0, sizeof *d);
  sim_rand_next(&r);
  d->overhead = uniform(&r, 60, 400);
  d->build_self = uniform(&r, 200, 600);
  d->layout_self = uniform(&r, 100, 300);
  d->bits = uniform(&r, 20, 80);
  d->composite = uniform(&r, 200, 600);
  d->finalize = uniform(&r, 50, 200);
  d->post = uniform(&r, 20, 90);
  d->raster = uniform(&r, 1200, 4500);
  d->raster_gap = uniform(&r, 40, 200);
  d->layer_cache = uniform(&r, 0, 4);
  d->picture_cache = uniform(&r, 0, 2);
  d->n_cards = (int)uniform(&r, 3, 6);
  for (i = 0; i < 6; i++) {
    d->card[i] = uniform(&r, 300, 900);
    d->para_layout[i] = uniform(&r, 50, 200);
    d->para_paint[i] = uniform(&r, 30, 120);
  }
  d->flex_layout = uniform(&r, 100, 300);
  d->flex_paint = uniform(&r, 80, 250);
  d->jank_roll = (int)uniform(&r, 0, 999);
  d->slow_factor = 1.15 + (double)uniform(&r, 0, 1000) / 1000.0 * 1.4;
}

/* The UI thread's Dart work over [a, b), for the CPU profiler's samples.
 * Not above SIM_TICK_MAX_FPS: frames overlap there, no thread runs them. */
static void cpu(sim_t *s, int64_t a, int64_t b, sim_cpu_stack_t stack) {
  if (s->gen.fps <= SIM_TICK_MAX_FPS) sim_cpu_span(&s->cpu, a, b, stack);
}

/* RenderFlex ⊃ RenderParagraph×n inside LAYOUT or PAINT when tracked;
 * returns the end time. Untracked, the same work takes the same time (and
 * the same samples: text_stack in each paragraph, flex_stack after them). */
static int64_t render_objects(sim_t *s, evbuf_t *b, int tracked, int64_t t, int64_t flex,
                              const int64_t *para, int n, sim_cpu_stack_t text_stack,
                              sim_cpu_stack_t flex_stack) {
  int64_t c = t + 5;
  int i;
  for (i = 0; i < n; i++) {
    if (tracked) push(b, "RenderParagraph", c, c + para[i]);
    cpu(s, c, c + para[i], text_stack);
    c += para[i] + 3;
  }
  cpu(s, c, c + flex, flex_stack);
  c += flex;
  if (tracked) push(b, "RenderFlex", t, c);
  return c;
}

static const char *const custom_names[SIM_MAX_BLOCKS] = {
    "Custom01", "Custom02", "Custom03", "Custom04", "Custom05", "Custom06", "Custom07",
    "Custom08", "Custom09", "Custom10", "Custom11", "Custom12", "Custom13", "Custom14",
    "Custom15", "Custom16", "Custom17", "Custom18", "Custom19", "Custom20", "Custom21",
    "Custom22", "Custom23", "Custom24", "Custom25", "Custom26", "Custom27", "Custom28",
    "Custom29", "Custom30", "Custom31", "Custom32", "Custom33", "Custom34", "Custom35",
    "Custom36", "Custom37", "Custom38", "Custom39", "Custom40", "Custom41", "Custom42",
    "Custom43", "Custom44", "Custom45", "Custom46", "Custom47", "Custom48", "Custom49",
    "Custom50", "Custom51", "Custom52", "Custom53", "Custom54", "Custom55", "Custom56",
    "Custom57", "Custom58", "Custom59", "Custom60", "Custom61", "Custom62", "Custom63",
    "Custom64"};

/* --blocks N: custom blocks (named CustomNN, 2 µs apart) inside FINALIZE
 * TREE until the frame has N distinct block names, FINALIZE TREE counted.
 * Returns FINALIZE TREE's end, moved later when they do not fit. */
static int64_t pad_blocks(evbuf_t *b, int want, int64_t t, int64_t end) {
  size_t i, j;
  int distinct = 1, k;
  for (i = 0; i < b->n; i++) {
    for (j = 0; j < i && strcmp(b->ev[j].name, b->ev[i].name); j++) continue;
    if (j == i) distinct++;
  }
  for (k = 0; distinct < want && k < SIM_MAX_BLOCKS; k++, distinct++) {
    push(b, custom_names[k], t + 1 + 2 * k, t + 2 + 2 * k);
    if (t + 3 + 2 * k > end) end = t + 3 + 2 * k;
  }
  return end;
}

/* Builds one frame starting at vsync: fills b (finish order) and *timing;
 * returns the time the framework's work ended (FINALIZE TREE). */
static int64_t build_frame(sim_t *s, draws_t *d, int jank_us, int64_t vsync, evbuf_t *b,
                           wm_timing_t *timing) {
  int widgets =
      s->vm.bool_ext[SIM_EXT_PROFILE_WIDGETS] || s->vm.bool_ext[SIM_EXT_PROFILE_USER_WIDGETS];
  int layouts = s->vm.bool_ext[SIM_EXT_PROFILE_LAYOUTS];
  int paints = s->vm.bool_ext[SIM_EXT_PROFILE_PAINTS];
  int64_t build_start = vsync + d->overhead, t, c, c2, inner, end, x, self_from;
  int i;

  /* The previous frame's POST_FRAME block closed after that frame's drain,
   * so it lands in this frame's buffer (the persistent-callback drain). */
  if (s->gen.have_post)
    push(b, "POST_FRAME", s->gen.post_start_us, s->gen.post_start_us + s->gen.post_dur_us);

  /* BUILD ⊃ FeedList ⊃ ProductCard ⊃ Text (when widget builds are tracked),
   * and SlowWidget (a custom FlutterTimeline block) in janky frames. */
  t = build_start;
  c = t + 30;
  /* The samples follow the same times whether or not widgets are tracked:
   * FeedList, each card (its Text inside), the plain functions FeedList
   * calls (cpu-rare-slow), then SlowWidget, a collection, BUILD's own. */
  cpu(s, t, c, SIM_CPU_BUILD);
  cpu(s, c, c + 20, SIM_CPU_FEED_LIST);
  for (i = 0, x = c + 20; i < d->n_cards; x += d->card[i] + 5, i++) {
    int64_t text = d->card[i] * 2 / 5;
    cpu(s, x, x + 40, SIM_CPU_PRODUCT_CARD);
    cpu(s, x + 40, x + 40 + text, SIM_CPU_TEXT);
    cpu(s, x + 40 + text, x + d->card[i], SIM_CPU_PRODUCT_CARD);
  }
  cpu(s, x, x + d->price, SIM_CPU_PRICE_FORMAT);
  cpu(s, x + d->price, x + d->price + d->catalog, SIM_CPU_CATALOG_INDEX);
  if (widgets) {
    c2 = c + 20;
    for (i = 0; i < d->n_cards; i++) {
      int64_t text = d->card[i] * 2 / 5;
      push(b, "Text", c2 + 40, c2 + 40 + text);
      push(b, "ProductCard", c2, c2 + d->card[i]);
      c2 += d->card[i] + 5;
    }
    c2 += d->price + d->catalog;
    push(b, "FeedList", c, c2 + 15);
    c = c2 + 15;
  } else {
    for (i = 0; i < d->n_cards; i++) c += d->card[i] + 5;
    c += 35 + d->price + d->catalog;
  }
  if (jank_us > 0) {
    /* scrolllist: the HeavyTiles built in this frame (a custom block, as
     * SlowWidget is elsewhere). */
    int feed = s->gen.scenario == SIM_SCENARIO_SCROLLLIST;
    push(b, feed ? "HeavyTile" : "SlowWidget", c, c + jank_us);
    /* The profiler has no HeavyTile stack: its samples are BUILD's own. */
    cpu(s, c, c + jank_us, feed ? SIM_CPU_BUILD : SIM_CPU_SLOW_WIDGET);
    c += jank_us;
  }
  self_from = c;
  if (d->gc_pause > 0) {
    /* The UI thread stops for the collector: no block ends meanwhile, so
     * only BUILD's self time grows (and the timeline shows why). */
    d->gc_at = c + 40;
    cpu(s, c, d->gc_at, SIM_CPU_BUILD);
    cpu(s, d->gc_at, d->gc_at + d->gc_pause, SIM_CPU_GC);
    self_from = d->gc_at + d->gc_pause;
    c += d->gc_pause + 80;
  }
  c += d->build_self;
  cpu(s, self_from, c, SIM_CPU_BUILD);
  push(b, "BUILD", t, c);

  /* LAYOUT (root) ⊃ LAYOUT: the RenderView lives in a child PipelineOwner. */
  t = c + 10;
  inner = t + 8;
  cpu(s, t, inner + 15, SIM_CPU_LAYOUT);
  c = render_objects(s, b, layouts, inner + 10, d->flex_layout, d->para_layout, d->n_cards,
                     SIM_CPU_LAYOUT_TEXT, SIM_CPU_LAYOUT_FLEX);
  cpu(s, c, c + d->layout_self, SIM_CPU_LAYOUT);
  c += d->layout_self;
  push(b, "LAYOUT", inner, c);
  c += 8;
  push(b, "LAYOUT (root)", t, c);

  t = c + 5;
  push(b, "UPDATING COMPOSITING BITS", t + 3, t + 3 + d->bits);
  c = t + 6 + d->bits;
  push(b, "UPDATING COMPOSITING BITS (root)", t, c);

  t = c + 5;
  inner = t + 8;
  cpu(s, t, inner + 15, SIM_CPU_PAINT);
  c = render_objects(s, b, paints, inner + 10, d->flex_paint, d->para_paint, d->n_cards,
                     SIM_CPU_PAINT_TEXT, SIM_CPU_PAINT_FLEX);
  cpu(s, c, c + 40, SIM_CPU_PAINT);
  c += 40;
  push(b, "PAINT", inner, c);
  c += 8;
  push(b, "PAINT (root)", t, c);

  /* buildFinish is taken when the last view renders, i.e. at COMPOSITING. */
  t = c + 5;
  c = t + d->composite;
  cpu(s, t, c, SIM_CPU_COMPOSITE);
  push(b, "COMPOSITING", t, c);
  timing->frame_number = s->gen.frame_number;
  timing->vsync_start_us = vsync;
  timing->build_start_us = build_start;
  timing->build_finish_us = c;
  timing->raster_start_us = c + d->raster_gap;
  timing->raster_finish_us = c + d->raster_gap + d->raster + d->shader;
  timing->layer_cache_count = d->layer_cache;
  timing->picture_cache_count = d->picture_cache;

  t = c + 5;
  end = t + d->finalize;
  if (s->cfg.blocks > 0) end = pad_blocks(b, s->cfg.blocks, t, end);
  cpu(s, t, end, SIM_CPU_FINALIZE);
  push(b, "FINALIZE TREE", t, end);

  s->gen.have_post = 1;
  s->gen.post_start_us = end + 15;
  s->gen.post_dur_us = d->post;
  cpu(s, s->gen.post_start_us, s->gen.post_start_us + d->post, SIM_CPU_POST_FRAME);
  return end;
}

static void record_timeline(sim_t *s, const draws_t *d, const wm_timing_t *t);

static void draw_frame(sim_t *s, int64_t now) {
  draws_t d;
  evbuf_t b;
  wm_timing_t timing;
  int64_t budget = (int64_t)(1e6 / s->gen.fps), end;
  int jank_us = 0;

  draw_numbers(s, &d);
  if (s->gen.scenario == SIM_SCENARIO_RARE_SLOW) {
    /* The case of issue 13: four ProductCards cost about 4 ms of self time
     * in every frame (each 1.65–1.75 ms, 2/5 of it in its Text), while a
     * SlowWidget costs 20 ms in every twentieth frame and makes each of them
     * janky at 60 Hz. Summed over all frames the cards cost more. */
    int i;
    d.n_cards = 4;
    for (i = 0; i < 4; i++) d.card[i] = 1650 + (d.card[i] - 300) / 6;
  }
  if (s->gen.scenario == SIM_SCENARIO_CPU_RARE_SLOW) {
    /* 4.6-5.2 ms of price formatting in every frame, three cards: about 11
     * ms a frame at most, within a 60 Hz budget. */
    d.n_cards = 3;
    d.price = 4600 + d.jank_roll % 600;
  }
  if (s->gen.inject_left > 0) {
    s->gen.inject_left--;
    s->gen.jank_injected++;
    jank_us = (int)(budget * 2 + budget / 4);
  } else if (s->gen.scenario == SIM_SCENARIO_JANKY && d.jank_roll < 120) {
    jank_us = (int)(budget * d.slow_factor);
  } else if (s->gen.scenario == SIM_SCENARIO_RARE_SLOW && s->gen.frame_index % 20 == 19) {
    jank_us = 20000;
  } else if (s->gen.scenario == SIM_SCENARIO_CPU_RARE_SLOW && s->gen.frame_index % 20 == 19) {
    /* The index is rebuilt from scratch in one frame of twenty: 22 ms. */
    d.catalog = 22000;
    s->gen.jank_frames++;
  } else if (s->gen.scenario == SIM_SCENARIO_LAYOUT_BOUND && d.jank_roll < 125) {
    /* A relayout of the whole list (e.g. an intrinsic pass): the RenderFlex
     * does the work, so it is named only while layouts are tracked. */
    d.flex_layout += (int64_t)(budget * d.slow_factor);
    s->gen.jank_frames++;
  } else if (s->gen.scenario == SIM_SCENARIO_RASTER_BOUND && d.jank_roll < 166) {
    /* Raster work (saveLayer, big images) no UI block accounts for. */
    d.raster = (int64_t)(budget * d.slow_factor);
    s->gen.jank_frames++;
  } else if (s->gen.scenario == SIM_SCENARIO_GC && d.jank_roll < 125) {
    /* A major collection in the middle of a build: 12-30 ms. */
    d.gc_pause = 12000 + (int64_t)d.jank_roll * 144;
    s->gen.jank_frames++;
  } else if (s->gen.scenario == SIM_SCENARIO_GC && d.jank_roll % 7 == 0) {
    d.gc_pause = 150 + d.jank_roll % 300; /* a scavenge: well within budget */
  } else if (s->gen.scenario == SIM_SCENARIO_SHADER &&
             s->gen.frame_index - s->gen.shader_from < 3) {
    /* New content: its first frames compile the shaders they use. */
    d.shader = 14000 + (int64_t)d.jank_roll * 12;
    s->gen.jank_frames++;
  }
  {
    /* The drive's pointer events for this frame; on the scrolllist feed,
     * its scroll and the tiles that came into view, built in it. */
    int64_t heavy_us;
    d.build_self += sim_drive_frame(s, now, &heavy_us);
    jank_us += (int)heavy_us;
  }
  if (s->gen.scenario == SIM_SCENARIO_SHADER && s->gen.frame_index - s->gen.shader_from >= 90)
    s->gen.shader_from = s->gen.frame_index + 1; /* new content next frame */
  if (jank_us) s->gen.jank_frames++;
  b.n = 0;
  /* FrameTimingsRecorder's numbers: one per vsync the animator got, so
   * steps of 2 on iOS and a gap where a vsync began no frame (flutter#94896:
   * "The frame numbers are not guaranteed to be contiguous"). */
  s->gen.frame_number += s->gen.frame_step;
  if (s->gen.frame_gaps && s->gen.frame_index % (uint64_t)s->gen.frame_gaps ==
                               (uint64_t)s->gen.frame_gaps - 1)
    s->gen.frame_number += s->gen.frame_step;
  end = build_frame(s, &d, jank_us, now, &b, &timing);
  record_timeline(s, &d, &timing);
  if (s->vm.bool_ext[SIM_EXT_TRACK_REBUILDS] && !s->cfg.plain_dart) {
    /* The inspector's post-frame callback (_onFrameEnd): the app's widgets
     * rebuilt in this frame, every card and its Text, SlowWidget only when
     * it ran, or in the frame forceRebuild drew when tracking went on
     * (every widget rebuilds there: widget_inspector.dart's setter). */
    int counts[SIM_LOC__COUNT] = {1, d.n_cards, d.n_cards, jank_us > 0 || s->gen.force_rebuild};
    s->gen.force_rebuild = 0;
    sim_post_event(s, "Flutter.RebuiltWidgets",
                      sim_rebuild_event(&s->rebuild, timing.vsync_start_us, timing.frame_number,
                                        counts));
  }
  s->gen.frame_index++;
  s->gen.frames_drawn++;
  /* The UI thread is busy until the frame's work is done: vsyncs in the
   * meantime draw nothing (a long frame drops the frames behind it). */
  s->gen.busy_until_us = s->gen.post_start_us + s->gen.post_dur_us;
  if (s->model && s->vm.watcher) {
    s->vm.watcher_installed = 1;
    wm_frame_drawn(s->model, timing.frame_number, end + 5, b.ev, b.n);
  }
  sim_timings_submit(s, &timing);
}

void sim_gen_draw_replayed(sim_t *s, const wm_timing_t *timing, const wm_event_t *events, size_t n,
                           int64_t drained_us) {
  s->gen.frame_number = timing->frame_number;
  s->gen.frame_index++;
  s->gen.frames_drawn++;
  if (s->model && s->vm.watcher) {
    s->vm.watcher_installed = 1;
    wm_frame_drawn(s->model, timing->frame_number, drained_us, events, n);
  }
  sim_timings_submit(s, timing);
}

static void on_tick(uv_timer_t *t);

/* The engine's and the VM's events for one frame, as they reach the VM
 * timeline (engine shell/common/animator.cc, rasterizer.cc TRACE_EVENTs;
 * runtime/vm/heap GC durations; shader compilation tagged "shaders"). */
static void record_timeline(sim_t *s, const draws_t *d, const wm_timing_t *t) {
  sim_tl_t *tl = &s->tl;
  sim_tl_event_t e;
  /* Each thread's events in time order, nested scopes inside their parent:
   * B(frame) [B(GC) E(GC)] E(frame) on the UI thread, B(draw) [B(compile)
   * E(compile)] E(draw) on the raster thread. Current VMs record a
   * collection as a begin/end scope on the mutator thread (runtime/vm/
   * timeline.h TimelineBeginEndScope). */
  memset(&e, 0, sizeof e);
  e.cat = "Embedder";
  e.tid = SIM_TID_UI;
  snprintf(e.name, sizeof e.name, "Animator::BeginFrame");
  e.ph = 'B';
  e.frame_number = t->frame_number;
  e.ts = t->build_start_us;
  sim_tl_add(tl, &e);
  if (d->gc_pause > 0)
    sim_tl_begin_end(tl, "GC", SIM_TID_UI,
                     d->gc_pause > 5000 ? "CollectOldGeneration" : "CollectNewGeneration", d->gc_at,
                     d->gc_at + d->gc_pause, 0);
  e.ph = 'E';
  e.ts = t->build_finish_us;
  e.frame_number = 0; /* the E carries no args */
  sim_tl_add(tl, &e);
  e.tid = SIM_TID_RASTER;
  snprintf(e.name, sizeof e.name, "Rasterizer::DoDraw");
  e.ph = 'B';
  e.frame_number = t->frame_number;
  e.ts = t->raster_start_us;
  sim_tl_add(tl, &e);
  if (d->shader > 0)
    sim_tl_begin_end(tl, "Embedder", SIM_TID_RASTER, "GrGLProgramBuilder::finalize",
                     t->raster_start_us + 100, t->raster_start_us + 100 + d->shader, 1);
  e.ph = 'E';
  e.ts = t->raster_finish_us;
  e.frame_number = 0;
  sim_tl_add(tl, &e);
}

static void schedule_tick(sim_t *s) {
  double period = s->gen.fps > SIM_TICK_MAX_FPS ? 1.0 : 1000.0 / s->gen.fps;
  double now = (double)uv_now(s->loop);
  double delay;

  s->gen.next_tick_ms += period;
  if (s->gen.next_tick_ms < now) /* missed vsyncs are skipped, not replayed */
    s->gen.next_tick_ms = now + period - fmod(now - s->gen.next_tick_ms, period);
  delay = s->gen.next_tick_ms - now;
  uv_timer_start(&s->gen.frame_timer, on_tick, (uint64_t)(delay + 0.5), 0);
}

static void on_tick(uv_timer_t *t) {
  sim_t *s = (sim_t *)((char *)t - offsetof(sim_t, gen.frame_timer));
  int probe = 0, want = 0;

  if (s->model && s->vm.watcher && wm_take_probe(s->model)) probe = 1;
  /* A drive goes on in every scenario (its waits end, its finders fail
   * where no feed is on screen); only scrolllist draws for it. */
  int driven = sim_drive_tick(s, sim_clock_now_us());
  if (s->replay) { /* the recording's frames only; a probe draws nothing */
    s->up.replay_tick(s);
    sim_timings_arm(s);
    schedule_tick(s);
    return;
  }
  if (s->gen.probe_requested) {
    s->gen.probe_requested = 0;
    probe = 1;
  }
  if (s->gen.hold_left > 0) {
    int64_t now = sim_clock_now_us(), i, n = s->gen.hold_left;
    if (now >= s->gen.hold_until_us) {
      /* Vsyncs one period apart after the hold began, the last at its end:
       * later than anything drawn before it. A paused isolate draws none. */
      double period_us = (double)(s->gen.hold_until_us - s->gen.hold_from_us) / (double)n;
      for (i = 0; i < n && !s->vm.paused; i++)
        draw_frame(s, s->gen.hold_from_us + (int64_t)((double)(i + 1) * period_us));
      s->gen.hold_left = 0;
      s->gen.burst_last_us = now; /* the burst owes nothing for the hold */
      s->gen.burst_due = 0;
    }
    sim_timings_arm(s);
    schedule_tick(s);
    return;
  }
  switch (s->gen.scenario) {
    case SIM_SCENARIO_STEADY:
    case SIM_SCENARIO_JANKY:
    case SIM_SCENARIO_RARE_SLOW:
    case SIM_SCENARIO_LAYOUT_BOUND:
    case SIM_SCENARIO_RASTER_BOUND:
    case SIM_SCENARIO_GC:
    case SIM_SCENARIO_SHADER:
    case SIM_SCENARIO_CPU_RARE_SLOW:
      want = 1;
      break;
    case SIM_SCENARIO_IDLE:
      want = probe || driven; /* a drive's tap or back draws its frame */
      break;
    case SIM_SCENARIO_SCROLLLIST: /* only while driven or settling */
      want = driven || probe;
      break;
    case SIM_SCENARIO_STALLED: /* a probe is swallowed: no vsync arrives */
    case SIM_SCENARIO__COUNT:
      want = 0;
      break;
  }
  if (s->gen.fps > SIM_TICK_MAX_FPS) {
    /* Burst: every frame due since the last tick, vsyncs one period apart
     * (at most 100 ms worth, as missed vsyncs are skipped, not replayed). */
    int64_t now = sim_clock_now_us(), i, n;
    double period_us = 1e6 / s->gen.fps;
    if (!s->gen.burst_last_us) s->gen.burst_last_us = now - (int64_t)period_us;
    s->gen.burst_due += (double)(now - s->gen.burst_last_us) / period_us;
    if (s->gen.burst_due > s->gen.fps / 10) s->gen.burst_due = s->gen.fps / 10;
    n = (int64_t)s->gen.burst_due;
    s->gen.burst_due -= (double)n;
    s->gen.burst_last_us = now;
    if (!want || s->vm.paused) n = 0;
    if (s->gen.scenario == SIM_SCENARIO_IDLE && n > 1) n = 1; /* a probe draws one */
    for (i = 0; i < n; i++) draw_frame(s, now - (int64_t)((double)(n - 1 - i) * period_us));
    if (want && probe && !n) s->gen.probe_requested = 1;
  } else if (want && !s->vm.paused && sim_clock_now_us() >= s->gen.busy_until_us)
    draw_frame(s, sim_clock_now_us());
  else if (want && probe)
    s->gen.probe_requested = 1; /* keep the request for the next vsync */
  sim_timings_arm(s);
  /* A flutter_driver command waits for its gesture to end. */
  if (s->up.after_tick) s->up.after_tick(s);
  schedule_tick(s);
}

void sim_gen_set_scenario(sim_t *s, sim_scenario_t scenario) {
  s->gen.scenario = scenario;
  s->gen.shader_from = s->gen.frame_index; /* shader: the content is new now */
  if (s->model) {
    int stalled = scenario == SIM_SCENARIO_STALLED;
    wm_set_lifecycle(s->model, stalled ? "hidden" : "resumed");
    wm_set_frames_enabled(s->model, !stalled);
  }
}

void sim_gen_set_fps(sim_t *s, double fps) {
  s->gen.fps = fps;
  s->gen.burst_last_us = 0;
  s->gen.burst_due = 0;
  s->gen.next_tick_ms = (double)uv_now(s->loop);
  uv_timer_stop(&s->gen.frame_timer);
  schedule_tick(s);
}

void sim_gen_inject(sim_t *s, int n) {
  s->gen.inject_left += n;
}

void sim_gen_set_numbering(sim_t *s, int step, int gaps) {
  s->gen.frame_step = step > 0 ? step : 1;
  s->gen.frame_gaps = gaps;
}

void sim_gen_draw_held(sim_t *s, int n) {
  int64_t now = sim_clock_now_us();
  s->gen.hold_left = n;
  s->gen.hold_from_us = now;
  s->gen.hold_until_us = now + (int64_t)((double)n * 1e6 / s->gen.fps);
}

int sim_gen_init(sim_t *s) {
  s->gen.fps = s->cfg.fps;
  s->gen.frame_number = 0;
  sim_gen_set_numbering(s, s->cfg.frame_step, s->cfg.frame_gaps);
  if (uv_timer_init(s->loop, &s->gen.frame_timer) || sim_timings_init(s)) return -1;
  sim_gen_set_scenario(s, s->cfg.scenario);
  s->gen.next_tick_ms = (double)uv_now(s->loop);
  schedule_tick(s);
  return 0;
}

void sim_gen_close(sim_t *s) {
  uv_close((uv_handle_t *)&s->gen.frame_timer, NULL);
  sim_timings_close(s);
}
