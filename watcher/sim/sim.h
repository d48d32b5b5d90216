/* telescope-sim: the whole simulated app in one struct. One libuv loop, one
 * thread; libwebsockets runs on that loop. Modules:
 *   sim_server  the WebSocket endpoint (handshake, 403s, framing, queues)
 *   sim_vm      the VM-service protocol (methods, isolates, streams, calls)
 *   sim_gen     the frame generator (scenarios, block trees, FrameTimings)
 *   sim_timings FrameTimings handed to onReportTimings (native and web rules)
 *   sim_dwds    web: DWDS's injected client, batching the page's events
 *   sim_cpu     the CPU profiler: samples of the UI thread, getCpuSamples
 *   sim_rebuild the widget inspector's Flutter.RebuiltWidgets and location ids
 *   sim_clock   the monotonic µs clock and the wall clock
 *   sim_log     --verbose logging on stderr
 *   main        command line, stdin commands, start and shutdown (it calls
 *               the modules; none of them calls back into it)
 * The watcher model (model.h) is a separate, pure library the generator
 * feeds and sim_vm serves as ext.telescope.frames. */
#ifndef TELESCOPE_SIM_H
#define TELESCOPE_SIM_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <uv.h>

#include "model.h"
#include "sim_cpu.h"
#include "sim_drive.h"
#include "sim_dwds.h"
#include "sim_rebuild.h"
#include "sim_timeline.h"

typedef enum { SIM_MODE_DDS = 0, SIM_MODE_VM, SIM_MODE_WEB } sim_mode_t;

typedef enum {
  SIM_SCENARIO_STEADY = 0, /* a frame every vsync, all within budget */
  SIM_SCENARIO_JANKY,      /* seeded: some frames over budget (SlowWidget) */
  SIM_SCENARIO_IDLE,       /* nothing changes on screen: a frame only when asked */
  SIM_SCENARIO_STALLED,    /* rendering suspended: no frame even when asked */
  /* Each with one known cause of jank (issue 13's findings): */
  SIM_SCENARIO_RARE_SLOW,    /* ProductCards 4 ms in every frame, SlowWidget 20 ms in 1 of 20 */
  SIM_SCENARIO_LAYOUT_BOUND, /* seeded: some frames' layout (RenderFlex) over budget */
  SIM_SCENARIO_RASTER_BOUND, /* seeded: some frames' raster over budget, build normal */
  /* Each with a cause only the VM timeline shows (issue 15): */
  SIM_SCENARIO_GC,     /* seeded: some frames' build holds a long GC pause on the UI thread */
  SIM_SCENARIO_SHADER, /* new content every 1.5 s: its first frames compile shaders on raster */
  /* Only the CPU profiler names the cause (issue 20): plain functions, no
   * widget block; CatalogIndex.rebuild 22 ms in 1 frame of 20 (janky),
   * PriceFormatter.formatAll 6 ms in every frame (heavier in total). */
  SIM_SCENARIO_CPU_RARE_SLOW,
  /* A feed that draws only while driven (issue 32, sim_drive.h): tiles are
   * built as they scroll into view, a HeavyTile every 7th (~25 ms). */
  SIM_SCENARIO_SCROLLLIST,
  SIM_SCENARIO__COUNT
} sim_scenario_t;

typedef enum {
  SIM_REPLY_NORMAL = 0,
  SIM_REPLY_MALFORMED, /* an invalid JSON text frame instead of the reply */
  SIM_REPLY_HUGE,      /* the reply padded to huge_mb MiB */
  SIM_REPLY_WRONGTYPES /* numbers as strings, booleans as strings */
} sim_reply_t;

typedef struct {
  const char *host;  /* listen address (loopback by default) */
  int port;          /* 0: ephemeral */
  const char *token; /* NULL: 8 random bytes, base64url */
  sim_mode_t mode;
  double fps;
  sim_scenario_t scenario;
  uint64_t seed;
  int seeded; /* --seed given: everything random is reproducible */
  const char *uri_file;
  size_t ring; /* 0: the model's default */
  int blocks;  /* 0: the natural tree; else pad each frame to this many block names */
  int timings_batch_ms;
  const char *method_log;
  int no_watcher;
  int exit_on_eof;  /* stdin EOF stops the sim (a parent's lifetime) */
  int start_paused; /* the isolate starts at PauseStart (flutter run --start-paused) */
  int dds_attached; /* vm/web: DDS has taken the service over from the start */
  int dwds_websocket; /* web: DWDS's WebSocket mode (web-server device), not Chrome's */
  int workers;        /* native: worker isolates beside the main one */
  const char *dds_host; /* the host DDS advertises (NULL: the listen address) */
  int verbose;
  size_t timeline_ring;         /* 0: SIM_TL_RING */
  const char *timeline_streams; /* recorded at start (NULL: Flutter's default) */
  int profile;                  /* --build-mode profile: no debug-only extensions */
  const char *replay;           /* --replay FILE: a recording played back (sim_replay.h) */
  int plain_dart;               /* --plain-dart: no Flutter extensions, no watcher, no Flutter.Frame */
  int64_t web_frame_number;     /* web: every Flutter.Frame's number (-2: the real one) */
  int dwds_batch_ms;            /* web: DWDS's batch delay for the page's events (0: none) */
  const char *timeline_recorder; /* getVMTimelineFlags' recorderName (NULL: "Ring") */
  int profiler_off;              /* --profiler off: the VM's profiler flag is false */
  int profile_period;            /* --profile-period (0: the VM's 1000 µs) */
  int max_profile_depth;         /* --max-profile-depth (0: the VM's 128) */
  int compiled_functions;        /* --compiled-functions (-1: SIM_CPU_DEFAULT_COMPILED) */
  size_t cpu_ring;               /* --cpu-ring (0: SIM_CPU_DEFAULT_RING) */
  int frame_step;                /* --frame-step: frame numbers go up by this (0: 1) */
  int frame_gaps;                /* --frame-gaps: every Nth frame skips a number (0: none) */
  int flutter_driver;            /* --flutter-driver: the app called enableFlutterDriverExtension() */
} sim_config_t;

#define SIM_MAX_WORKERS 4

typedef struct sim_conn sim_conn_t;
typedef struct sim_call sim_call_t;

/* One WebSocket client. Owned by sim_server; sim_vm keeps its stream
 * subscriptions here. Freed when lws reports LWS_CALLBACK_CLOSED. */
struct sim_conn {
  sim_conn_t *next;
  struct lws *wsi;
  uint64_t serial;
  json_t *streams; /* object: streamId -> true */
  struct sim_msg *out_head, *out_tail;
  size_t out_bytes;
  unsigned char *rx; /* the message being reassembled */
  size_t rx_len, rx_cap;
  int close_code; /* > 0: close with this code once out is drained */
  int dropping;   /* abrupt close requested */
  int dds;        /* came in through the simulated DDS endpoint: DDS's wire rules */
};

/* Indexes into s->vm.bool_ext (Flutter's boolean extensions). */
enum {
  SIM_EXT_PROFILE_WIDGETS = 0,
  SIM_EXT_PROFILE_USER_WIDGETS,
  SIM_EXT_PROFILE_LAYOUTS,
  SIM_EXT_PROFILE_PAINTS,
  SIM_EXT_DEBUG_PAINT,
  SIM_EXT_PERF_OVERLAY,
  SIM_EXT_TRACK_REBUILDS /* ext.flutter.inspector.trackRebuildDirtyWidgets */
};

typedef struct sim {
  sim_config_t cfg;
  uv_loop_t *loop;
  uint64_t rng; /* ids, tokens, run ids (seeded with --seed) */
  char token[64];
  char http_uri[256];
  char ws_uri[256];
  int stopping;

  /* The simulated DDS in front of the vm or web server: same port, its own
   * token. Once attached, the server hands direct clients to it. */
  struct {
    int attached;
    char token[64];
    char http_uri[256]; /* http://host:port/T=/ as DDS advertises itself */
  } dds;

  struct {
    struct lws_context *ctx;
    struct lws_vhost *vhost;
    int port;
    sim_conn_t *conns;
    size_t n_conns;
    uint64_t next_serial;
    int gap_ms;           /* write-gap: at least this long between two messages */
    uv_timer_t gap_timer; /* the end of the gap: every connection may write again */
  } srv;

  struct {
    char isolate_id[48];
    char isolate_number[32];
    char group_id[48];
    int64_t isolate_start_ms;
    unsigned web_counter;
    int paused;
    const char *pause_kind; /* "Resume" or a Pause* kind */
    int64_t pause_ms;
    int watcher;           /* ext.telescope.frames registered */
    int watcher_installed; /* the model has ever been fed */
    int bool_ext[8];       /* state of Flutter's boolean extensions */
    int ext_delay_ms;
    int pause_flags[3]; /* pause_isolates_on_{start,exit,unhandled_exceptions} (setFlag) */
    int ext_hang;
    int flutter_ext_hang; /* `flutter-ext-hang`: the app's other extensions are held until off */
    char hang_method[64]; /* `vm-hang METHOD`: a VM method never answered ("": none) */
    int hang_spared;      /* `vm-hang METHOD after N`: its calls still answered first */
    int ext_error;
    int web_timeout_ms;   /* web: DWDS WebSocket-mode timeout (0: none) */
    int web_unregistered; /* web: -32601 or -32603 for an unknown ext */
    int web_not_started;  /* web --start-paused: main() has not run, nothing registered */
    int n_workers;
    char worker_ids[SIM_MAX_WORKERS][48];
    char worker_numbers[SIM_MAX_WORKERS][32];
    sim_reply_t reply;
    size_t huge_mb;
    sim_call_t *calls_head, *calls_tail;
    uv_timer_t call_timer;
    json_t *method_counts; /* object: method -> count */
    json_t *method_list;   /* array of methods in order received */
    FILE *method_log;
    json_t *last_raw_params;    /* last ext.telescope.frames params as sent */
    json_t *last_handed_params; /* ... and as the handler saw them */
    json_t *ext_history;        /* DDS replays Extension events to new listeners */
    uv_timer_t flood_timer;     /* `flood N`: N events a second on one stream */
    int flood_rate;
    int flood_extension; /* 1: the Extension stream, 0: the Isolate stream */
    uint64_t flood_last_ms;
    double flood_carry; /* the fraction of an event owed from the last tick */
    uint64_t flood_sent;
  } vm;

  struct {
    uv_timer_t frame_timer;
    double next_tick_ms;
    int64_t burst_last_us; /* above SIM_TICK_MAX_FPS: when the last tick drew */
    double burst_due;      /* ... and the fraction of a frame it left over */
    sim_scenario_t scenario;
    double fps;
    uint64_t frame_index; /* frames drawn so far: seeds each frame */
    int64_t frame_number;
    int frame_step, frame_gaps; /* the engine's numbering (sim_gen_set_numbering) */
    int inject_left;
    int hold_left;                 /* `draw N`: frames held for one batch */
    int64_t hold_from_us, hold_until_us; /* ... over this stretch of time */
    int probe_requested;   /* ext.ui.window.scheduleFrame */
    int force_rebuild;     /* trackRebuildDirtyWidgets went on: the next frame rebuilds all */
    int64_t busy_until_us; /* the UI thread is still in the last frame */
    int have_post;         /* POST_FRAME of the last frame: next drain */
    int64_t post_start_us, post_dur_us;
    uint64_t frames_drawn, jank_injected, jank_frames;
    uint64_t shader_from; /* shader: the frame index new content last appeared at */
  } gen;

  /* The frames' FrameTimings on their way to onReportTimings (sim_timings.h).
   * pend is a queue: the engine has handed the first n_pend - web_held over
   * (they wait only for timings-delay or a pause); on web the last web_held
   * are still in web_ui's list. */
  struct {
    uv_timer_t flush_timer;
    int delay_ms; /* `timings-delay`: held until this long after their frame */
    wm_timing_t *pend;
    uint64_t *pend_due_ms; /* when each pending timing's frame was drawn */
    size_t n_pend, cap_pend;
    int first_reported; /* native: the first frame's timing goes at once */
    size_t web_held;    /* web: timings not handed over yet */
    int web_started;    /* web: _frameTimingsLastSubmitTime has been read once */
    int64_t web_last_submit_us; /* web: _frameTimingsLastSubmitTime */
    uint64_t web_hand_overs;
    uint64_t records_written, delivered;
    int64_t last_posted_number; /* the newest frame a Flutter.Frame event was posted for */
  } timings;

  wm_t *model;
  sim_tl_t tl; /* the VM timeline */
  sim_cpu_t cpu; /* the CPU profiler's samples of the UI thread */
  sim_rebuild_t rebuild; /* the widget inspector's rebuild counts (debug builds) */
  sim_dwds_t dwds;       /* web: DWDS's injected client, batching the page's events */
  sim_drive_t drive;     /* scrolllist's feed and the workload driving it */
  struct sim_replay *replay; /* --replay: the recording; the generator draws only its frames */
  char run_id[40];

  /* How a lower file reaches a higher one without naming it (tests/layers.mjs
   * holds the sim's files in layers too): set once at start-up by the file
   * that answers. The transport and the frame sources sit below sim_vm; the
   * generator's tick below the recording it plays. */
  struct {
    /* sim_vm: an Extension-stream event (data stolen) */
    void (*post_event)(struct sim *s, const char *extension_kind, json_t *data);
    /* sim_vm: one whole message from a client, and a client gone */
    void (*message)(struct sim *s, sim_conn_t *c, const char *text, size_t len, int binary);
    void (*conn_closed)(struct sim *s, sim_conn_t *c);
    /* sim_replay: the recording's frames due now, on the generator's tick */
    void (*replay_tick)(struct sim *s);
    /* sim_vm: after each generator tick (a flutter_driver command answers
     * once its gesture is over) */
    void (*after_tick)(struct sim *s);
  } up;
} sim_t;

/* The app posts an Extension-stream event (Flutter.Frame, …): data stolen. */
static inline void sim_post_event(sim_t *s, const char *extension_kind, json_t *data) {
  if (s->up.post_event)
    s->up.post_event(s, extension_kind, data);
  else
    json_decref(data);
}

/* splitmix64: small, seedable, good enough for simulated durations. */
static inline uint64_t sim_rand_next(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* A fresh run id for the watcher (hot restart makes a new one). */
static inline void sim_new_run_id(sim_t *s) {
  uint64_t a = sim_rand_next(&s->rng);
  snprintf(s->run_id, sizeof s->run_id, "%016llx", (unsigned long long)a);
}

#endif
