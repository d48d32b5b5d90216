/* telescope-sim: a simulated Flutter app behind a Dart VM Service endpoint.
 * Wiring: command line, the printed URIs, stdin commands, start, shutdown. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim.h"
#include "sim_clock.h"
#include "sim_gen.h"
#include "sim_log.h"
#include "sim_replay.h"
#include "sim_server.h"
#include "sim_timings.h"
#include "sim_vm.h"

#define STDIN_LINE_MAX 65536

static sim_t sim;

static union {
  uv_pipe_t pipe;
  uv_tty_t tty;
} stdin_handle;
static int stdin_active;
static char stdin_line[STDIN_LINE_MAX];
static size_t stdin_len;
static int stdin_overflow;
static uv_signal_t sig_int, sig_term;

/* ---- command line ---------------------------------------------------------- */

static const char usage_text[] =
    "Usage: telescope-sim [options]\n"
    "A simulated Flutter app: a Dart VM Service endpoint (WebSocket JSON-RPC)\n"
    "with a simulated FramePerfWatcher (ext.telescope.frames) behind it.\n"
    "\n"
    "Options:\n"
    "  --host ADDR            listen address (default 127.0.0.1)\n"
    "  --port N               listen port (default 0: ephemeral)\n"
    "  --token T              auth token, first path segment (default: 8 random\n"
    "                         bytes, base64url, like the VM; fixed by --seed)\n"
    "  --mode dds|vm|web      which server to imitate (default dds): DDS as behind\n"
    "                         `flutter run`, the raw VM service, or DWDS (web)\n"
    "  --fps N                frames per second while drawing (default 60; up to\n"
    "                         100000: above 1000 each 1 ms tick draws several)\n"
    "  --scenario S           steady|janky|idle|stalled|rare-slow|layout-bound|\n"
    "                         raster-bound|gc|shader|cpu-rare-slow (default\n"
    "                         steady); gc: GC pauses inside some builds, shader:\n"
    "                         shader compilation in the first frames of new\n"
    "                         content; cpu-rare-slow: CatalogIndex.rebuild 22 ms\n"
    "                         in 1 frame of 20 (janky), PriceFormatter.formatAll\n"
    "                         5 ms in every frame (heavier in total), named only\n"
    "                         by getCpuSamples; scrolllist: a feed that draws\n"
    "                         only while driven (the watcher's drive action,\n"
    "                         ext.flutter.driver), a HeavyTile (~25 ms build)\n"
    "                         every 7th tile\n"
    "  --seed N               make tokens, ids and frame durations reproducible\n"
    "  --uri-file PATH        write the ws URI there (no newline), like\n"
    "                         flutter run --vmservice-out-file\n"
    "  --ring N               watcher ring capacity (records kept)\n"
    "  --blocks N             pad every frame with CustomNN blocks to N distinct\n"
    "                         block names (1..64; default: the natural tree)\n"
    "  --timings-batch-ms N   FrameTiming batch interval (default 100; native: web\n"
    "                         follows web_ui's 100 ms hand-over rule instead)\n"
    "  --method-log PATH      append every VM-service method received, one a line\n"
    "  --no-watcher           start without ext.telescope.frames registered\n"
    "  --flutter-driver       the app called enableFlutterDriverExtension():\n"
    "                         ext.flutter.driver is registered (scroll, tap,\n"
    "                         waitUntilNoTransientCallbacks, get_health), each\n"
    "                         call logged on stderr as one line of JSON\n"
    "  --start-paused         the isolate starts paused (PauseStart), like\n"
    "                         flutter run --start-paused; `resume` lets it run\n"
    "  --dds-attached         vm/web: DDS has taken the service over: upgrades get\n"
    "                         a 302 to DDS (vm) or a 403 naming it (web)\n"
    "  --dwds chrome|websocket  web: DWDS's Chrome mode (default) or its WebSocket\n"
    "                         mode (web-server device: no registry check, -32000)\n"
    "  --workers N            native: N worker isolates beside the main one (0..4)\n"
    "  --dds-host H           the host DDS advertises (default: the listen address;\n"
    "                         tests use a non-loopback one to see it refused)\n"
    "  --exit-on-eof          stop when stdin reaches EOF (a parent process that\n"
    "                         holds the pipe ties the sim to its own lifetime)\n"
    "  --timeline-ring N      VM timeline events kept (default 20000; the oldest\n"
    "                         are overwritten, as the VM's ring recorder does)\n"
    "  --timeline-streams L   streams recorded at start (default Dart,Embedder,GC,\n"
    "                         as a Flutter app; \"\" for none)\n"
    "  --web-frame-number N   web: every Flutter.Frame carries number N, as web_ui\n"
    "                         before flutter#171592 (FrameTiming defaults it to 1)\n"
    "  --dwds-batch-ms N      web: DWDS sends the page's events (Flutter.Frame...)\n"
    "                         in batches N ms apart (default 1000, as DWDS; 0: at once)\n"
    "  --timeline-recorder R  the VM's timeline recorder (default Ring); Systrace,\n"
    "                         File, Perfettofile, Callback...: getVMTimeline\n"
    "                         answers 114 (flutter run --trace-systrace)\n"
    "  --build-mode profile   a profile app: no debug-only extensions\n"
    "                         (scheduleFrame, reassemble, debugPaint,\n"
    "                         reinitializeShader); without it they are served\n"
    "  --plain-dart           a plain Dart program, not a Flutter app: no ext.flutter.*\n"
    "                         or ext.ui.* extension, no watcher, no Flutter.Frame\n"
    "  --replay FILE          play a recording (Chrome trace JSON: a DevTools\n"
    "                         performance export, a flutter drive timeline) back\n"
    "                         as the app: its frames, Flutter.Frame events, VM\n"
    "                         timeline and blocks, once, in real time, from when\n"
    "                         a measurement starts; --fps and --scenario are then\n"
    "                         unused (the recording's refresh rate is the fps)\n"
    "  --profiler on|off      the VM's profiler flag (default on, as flutter run;\n"
    "                         off: getCpuSamples answers 100 Feature is disabled;\n"
    "                         setFlag profiler true turns it on)\n"
    "  --profile-period US    sample period in µs (default 1000, minimum 50)\n"
    "  --max-profile-depth N  frames kept per sample (2..255, default 128); deeper\n"
    "                         stacks are cut and marked truncated\n"
    "  --compiled-functions N zero-tick compiled functions in every CpuSamples\n"
    "                         (default 30000, a debug app's: the VM lists all\n"
    "                         compiled code)\n"
    "  --cpu-ring N           CPU samples kept (default 60000, the VM's 600\n"
    "                         blocks of 100; the oldest are overwritten)\n"
    "  --frame-step N         frame numbers go up by N (1..100, default 1; iOS: 2)\n"
    "  --frame-gaps N         every Nth frame skips one more number, as when the\n"
    "                         raster thread is backed up (0: none, the default)\n"
    "  --verbose              log connections and lws notices on stderr\n"
    "  --help, --version\n"
    "\n"
    "Commands on stdin (one a line; each answered by one line `ok ...` or\n"
    "`error ...` on stdout):\n"
    "  scenario S            switch the scenario (names as --scenario)\n"
    "  fps N                 change the frame rate\n"
    "  inject N              the next N drawn frames are janky (SlowWidget,\n"
    "                        build > 2x budget)\n"
    "  pause [KIND] | resume pause the isolate (a Debug event of KIND, default\n"
    "                        PauseInterrupted; also PauseBreakpoint, PauseException,\n"
    "                        PauseStart, PausePostRequest, PauseExit; extension\n"
    "                        replies are held) / resume it (Resume)\n"
    "  restart               hot restart: IsolateExit, new isolate id,\n"
    "                        IsolateStart/IsolateRunnable, ServiceExtensionAdded,\n"
    "                        new watcher runId; the old id answers Collected\n"
    "  reload                hot reload: IsolateReload, same isolate\n"
    "  watcher off|on        unregister / register ext.telescope.frames\n"
    "  foreign-off            another tool switches FlutterTimeline collection off\n"
    "                         mid-session (replies say collectionLost)\n"
    "  foreign-collect on|off  another tool (DevTools) switches\n"
    "                        FlutterTimeline collection on / off in the app\n"
    "  streams L             another client (DevTools) sets the VM timeline's\n"
    "                        recorded streams to L (Dart,GC,...), as\n"
    "                        setVMTimelineFlags does\n"
    "  profiler on|off       the VM's profiler flag changes (another client's\n"
    "                        setFlag): VMFlagUpdate; off, getCpuSamples is refused\n"
    "  ext-delay MS          answer ext.telescope.frames MS later\n"
    "  ext-hang on|off       never answer ext.telescope.frames (until off)\n"
    "  flutter-ext-hang on|off  hold every other extension (ext.flutter.*,\n"
    "                        ext.ui.*) until off\n"
    "  vm-hang METHOD [after N]|off  never answer that VM method\n"
    "                        (getVMTimelineFlags, ...) after its next N answers\n"
    "  ext-error on|off      answer ext.telescope.frames with -32000\n"
    "  reply normal|malformed|huge MB|wrongtypes\n"
    "                        shape of ext.telescope.frames replies\n"
    "  timings-delay MS      hold FrameTimings back MS (frames_pending)\n"
    "  frame-step N [GAPS]   number the next frames N apart, every GAPS-th\n"
    "                        skipping one more (as --frame-step, --frame-gaps)\n"
    "  web-timeout MS        web: extension calls unanswered after MS get -32603\n"
    "                        TimeoutException (DWDS WebSocket mode; 0: never)\n"
    "  web-unregistered 32601|32603\n"
    "                        web: an unregistered extension's error code\n"
    "  flood N [isolate|extension]\n"
    "                        post N events a second on that stream (default\n"
    "                        isolate); 0 stops\n"
    "  dds-attach            DDS takes over (vm/web): direct clients get\n"
    "                        DartDevelopmentServiceConnected (web: only those\n"
    "                        listening to Service) and are closed\n"
    "  drop                  close every connection abruptly\n"
    "  stats                 counters as one JSON object\n"
    "  methods               the methods received, in order (JSON array)\n"
    "  params                the last ext.telescope.frames params, raw and as\n"
    "                        the handler saw them (JSON)\n"
    "  quit                  stop (so do SIGTERM and SIGINT; stdin EOF does not,\n"
    "                        unless --exit-on-eof)\n"
    "\n"
    "On start it prints the two lines `flutter run` prints: the VM Service URI\n"
    "and the DevTools URL.\n";

static int parse_long(const char *s, long lo, long hi, long *out) {
  char *end;
  long v;
  errno = 0;
  v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

static int parse_fps(const char *s, double *out) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || *end || !(v >= 0.1 && v <= SIM_MAX_FPS)) return -1;
  *out = v;
  return 0;
}

static int token_ok(const char *t) {
  if (!*t || strlen(t) > 48) return 0;
  for (; *t; t++)
    if (!((*t >= 'A' && *t <= 'Z') || (*t >= 'a' && *t <= 'z') || (*t >= '0' && *t <= '9') ||
          *t == '-' || *t == '_' || *t == '='))
      return 0;
  return 1;
}

static int bad_usage(const char *fmt, const char *arg) {
  fputs("telescope-sim: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs("\n(try --help)\n", stderr);
  return 2;
}

/* Fills cfg; returns -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, sim_config_t *cfg) {
  enum {
    O_HOST = 256,
    O_PORT,
    O_TOKEN,
    O_MODE,
    O_FPS,
    O_SCENARIO,
    O_SEED,
    O_URI_FILE,
    O_RING,
    O_BLOCKS,
    O_BATCH,
    O_METHOD_LOG,
    O_NO_WATCHER,
    O_EXIT_ON_EOF,
    O_START_PAUSED,
    O_DDS_ATTACHED,
    O_DWDS,
    O_WORKERS,
    O_DDS_HOST,
    O_VERBOSE,
    O_TL_RING,
    O_TL_STREAMS,
    O_BUILD_MODE,
    O_REPLAY,
    O_PLAIN_DART,
    O_WEB_FRAME_NUMBER,
    O_DWDS_BATCH,
    O_TL_RECORDER,
    O_PROFILER,
    O_PROFILE_PERIOD,
    O_MAX_PROFILE_DEPTH,
    O_COMPILED_FUNCTIONS,
    O_CPU_RING,
    O_FRAME_STEP,
    O_FRAME_GAPS,
    O_FLUTTER_DRIVER,
    O_HELP,
    O_VERSION
  };
  static const struct option opts[] = {
      {"host", required_argument, NULL, O_HOST},
      {"port", required_argument, NULL, O_PORT},
      {"token", required_argument, NULL, O_TOKEN},
      {"mode", required_argument, NULL, O_MODE},
      {"fps", required_argument, NULL, O_FPS},
      {"scenario", required_argument, NULL, O_SCENARIO},
      {"seed", required_argument, NULL, O_SEED},
      {"uri-file", required_argument, NULL, O_URI_FILE},
      {"ring", required_argument, NULL, O_RING},
      {"blocks", required_argument, NULL, O_BLOCKS},
      {"timings-batch-ms", required_argument, NULL, O_BATCH},
      {"method-log", required_argument, NULL, O_METHOD_LOG},
      {"no-watcher", no_argument, NULL, O_NO_WATCHER},
      {"exit-on-eof", no_argument, NULL, O_EXIT_ON_EOF},
      {"start-paused", no_argument, NULL, O_START_PAUSED},
      {"dds-attached", no_argument, NULL, O_DDS_ATTACHED},
      {"dwds", required_argument, NULL, O_DWDS},
      {"workers", required_argument, NULL, O_WORKERS},
      {"dds-host", required_argument, NULL, O_DDS_HOST},
      {"verbose", no_argument, NULL, O_VERBOSE},
      {"timeline-ring", required_argument, NULL, O_TL_RING},
      {"timeline-streams", required_argument, NULL, O_TL_STREAMS},
      {"build-mode", required_argument, NULL, O_BUILD_MODE},
      {"replay", required_argument, NULL, O_REPLAY},
      {"plain-dart", no_argument, NULL, O_PLAIN_DART},
      {"web-frame-number", required_argument, NULL, O_WEB_FRAME_NUMBER},
      {"dwds-batch-ms", required_argument, NULL, O_DWDS_BATCH},
      {"timeline-recorder", required_argument, NULL, O_TL_RECORDER},
      {"profiler", required_argument, NULL, O_PROFILER},
      {"profile-period", required_argument, NULL, O_PROFILE_PERIOD},
      {"max-profile-depth", required_argument, NULL, O_MAX_PROFILE_DEPTH},
      {"compiled-functions", required_argument, NULL, O_COMPILED_FUNCTIONS},
      {"cpu-ring", required_argument, NULL, O_CPU_RING},
      {"frame-step", required_argument, NULL, O_FRAME_STEP},
      {"frame-gaps", required_argument, NULL, O_FRAME_GAPS},
      {"flutter-driver", no_argument, NULL, O_FLUTTER_DRIVER},
      {"help", no_argument, NULL, O_HELP},
      {"version", no_argument, NULL, O_VERSION},
      {NULL, 0, NULL, 0}};
  int c;
  long v;

  cfg->host = "127.0.0.1";
  cfg->mode = SIM_MODE_DDS;
  cfg->fps = 60;
  cfg->scenario = SIM_SCENARIO_STEADY;
  cfg->timings_batch_ms = 100;
  cfg->web_frame_number = -2;
  cfg->dwds_batch_ms = 1000; /* dwds/web/client.dart _batchDelayMilliseconds */
  cfg->compiled_functions = -1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
      case O_HOST:
        cfg->host = optarg;
        break;
      case O_PORT:
        if (parse_long(optarg, 0, 65535, &v))
          return bad_usage("--port wants 0..65535, got '%s'", optarg);
        cfg->port = (int)v;
        break;
      case O_TOKEN:
        if (!token_ok(optarg))
          return bad_usage("--token wants 1-48 base64url characters, got '%s'", optarg);
        cfg->token = optarg;
        break;
      case O_MODE:
        if (!strcmp(optarg, "dds"))
          cfg->mode = SIM_MODE_DDS;
        else if (!strcmp(optarg, "vm"))
          cfg->mode = SIM_MODE_VM;
        else if (!strcmp(optarg, "web"))
          cfg->mode = SIM_MODE_WEB;
        else
          return bad_usage("--mode wants dds, vm or web, got '%s'", optarg);
        break;
      case O_FPS:
        if (parse_fps(optarg, &cfg->fps))
          return bad_usage("--fps wants a number in 0.1..100000, got '%s'", optarg);
        break;
      case O_SCENARIO:
        if ((c = sim_scenario_parse(optarg)) < 0)
          return bad_usage("--scenario wants steady, janky, idle, stalled, rare-slow, "
                           "layout-bound, raster-bound, gc, shader, cpu-rare-slow or "
                           "scrolllist, got '%s'",
                           optarg);
        cfg->scenario = (sim_scenario_t)c;
        break;
      case O_SEED: {
        char *end;
        errno = 0;
        cfg->seed = strtoull(optarg, &end, 10);
        if (errno || end == optarg || *end)
          return bad_usage("--seed wants a non-negative integer, got '%s'", optarg);
        cfg->seeded = 1;
        break;
      }
      case O_URI_FILE:
        cfg->uri_file = optarg;
        break;
      case O_RING:
        if (parse_long(optarg, 1, 10000000, &v))
          return bad_usage("--ring wants 1..10000000, got '%s'", optarg);
        cfg->ring = (size_t)v;
        break;
      case O_BLOCKS:
        if (parse_long(optarg, 1, SIM_MAX_BLOCKS, &v))
          return bad_usage("--blocks wants 1..64, got '%s'", optarg);
        cfg->blocks = (int)v;
        break;
      case O_BATCH:
        if (parse_long(optarg, 1, 60000, &v))
          return bad_usage("--timings-batch-ms wants 1..60000, got '%s'", optarg);
        cfg->timings_batch_ms = (int)v;
        break;
      case O_METHOD_LOG:
        cfg->method_log = optarg;
        break;
      case O_NO_WATCHER:
        cfg->no_watcher = 1;
        break;
      case O_EXIT_ON_EOF:
        cfg->exit_on_eof = 1;
        break;
      case O_START_PAUSED:
        cfg->start_paused = 1;
        break;
      case O_DDS_ATTACHED:
        cfg->dds_attached = 1;
        break;
      case O_DWDS:
        if (!strcmp(optarg, "chrome"))
          cfg->dwds_websocket = 0;
        else if (!strcmp(optarg, "websocket"))
          cfg->dwds_websocket = 1;
        else
          return bad_usage("--dwds wants chrome or websocket, got '%s'", optarg);
        break;
      case O_DDS_HOST:
        cfg->dds_host = optarg;
        break;
      case O_WORKERS:
        if (parse_long(optarg, 0, SIM_MAX_WORKERS, &v))
          return bad_usage("--workers wants 0..4, got '%s'", optarg);
        cfg->workers = (int)v;
        break;
      case O_TL_RING:
        if (parse_long(optarg, 8, 10000000, &v))
          return bad_usage("--timeline-ring wants 8..10000000, got '%s'", optarg);
        cfg->timeline_ring = (size_t)v;
        break;
      case O_TL_STREAMS: {
        sim_tl_t probe;
        int bad = sim_tl_init(&probe, 8, optarg);
        sim_tl_free(&probe);
        if (bad) return bad_usage("--timeline-streams wants VM stream names (Dart,Embedder,GC...), got '%s'", optarg);
        cfg->timeline_streams = optarg;
        break;
      }
      case O_BUILD_MODE:
        if (strcmp(optarg, "debug") && strcmp(optarg, "profile"))
          return bad_usage("--build-mode wants debug or profile, got '%s'", optarg);
        cfg->profile = !strcmp(optarg, "profile");
        break;
      case O_REPLAY:
        cfg->replay = optarg;
        break;
      case O_PLAIN_DART:
        cfg->plain_dart = cfg->no_watcher = 1;
        break;
      case O_WEB_FRAME_NUMBER:
        if (parse_long(optarg, -1, 1000000000, &v))
          return bad_usage("--web-frame-number wants -1..1000000000, got '%s'", optarg);
        cfg->web_frame_number = v;
        break;
      case O_DWDS_BATCH:
        if (parse_long(optarg, 0, 60000, &v))
          return bad_usage("--dwds-batch-ms wants 0..60000, got '%s'", optarg);
        cfg->dwds_batch_ms = (int)v;
        break;
      case O_TL_RECORDER:
        if (!sim_tl_recorder_known(optarg))
          return bad_usage("--timeline-recorder wants Ring, Endless, Startup, Systrace, File, "
                           "Perfettofile, Callback, Fuchsia or Macos, got '%s'", optarg);
        cfg->timeline_recorder = optarg;
        break;
      case O_PROFILER:
        if (strcmp(optarg, "on") && strcmp(optarg, "off"))
          return bad_usage("--profiler wants on or off, got '%s'", optarg);
        cfg->profiler_off = !strcmp(optarg, "off");
        break;
      case O_PROFILE_PERIOD:
        if (parse_long(optarg, 50, 1000000, &v))
          return bad_usage("--profile-period wants microseconds 50..1000000, got '%s'", optarg);
        cfg->profile_period = (int)v;
        break;
      case O_MAX_PROFILE_DEPTH:
        if (parse_long(optarg, 2, 255, &v))
          return bad_usage("--max-profile-depth wants 2..255, got '%s'", optarg);
        cfg->max_profile_depth = (int)v;
        break;
      case O_COMPILED_FUNCTIONS:
        if (parse_long(optarg, 0, 1000000, &v))
          return bad_usage("--compiled-functions wants 0..1000000, got '%s'", optarg);
        cfg->compiled_functions = (int)v;
        break;
      case O_CPU_RING:
        if (parse_long(optarg, 16, 10000000, &v))
          return bad_usage("--cpu-ring wants 16..10000000, got '%s'", optarg);
        cfg->cpu_ring = (size_t)v;
        break;
      case O_FRAME_STEP:
        if (parse_long(optarg, 1, 100, &v))
          return bad_usage("--frame-step wants 1..100, got '%s'", optarg);
        cfg->frame_step = (int)v;
        break;
      case O_FRAME_GAPS:
        if (parse_long(optarg, 0, 100000, &v) || v == 1)
          return bad_usage("--frame-gaps wants 0 or 2..100000, got '%s'", optarg);
        cfg->frame_gaps = (int)v;
        break;
      case O_FLUTTER_DRIVER:
        cfg->flutter_driver = 1;
        break;
      case O_VERBOSE:
        cfg->verbose = 1;
        break;
      case O_HELP:
        fputs(usage_text, stdout);
        return 0;
      case O_VERSION:
        printf("telescope-sim %s\n", TELESCOPE_VERSION);
        return 0;
      default:
        return bad_usage("unknown or incomplete option '%s'", argv[optind - 1]);
    }
  }
  if (optind < argc) return bad_usage("unexpected argument '%s'", argv[optind]);
  if (cfg->web_frame_number != -2 && cfg->mode != SIM_MODE_WEB)
    return bad_usage("%s: --web-frame-number needs --mode web", "");
  if (cfg->dds_attached && cfg->mode == SIM_MODE_DDS)
    return bad_usage("%s: --dds-attached needs --mode vm or web (dds mode is DDS already)", "");
  return -1;
}

/* ---- start-up helpers -------------------------------------------------------- */

static void random_token(uint64_t *rng, char *token) {
  static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  unsigned char bytes[9] = {0};
  uint64_t r = sim_rand_next(rng);
  int i;

  for (i = 0; i < 8; i++) bytes[i] = (unsigned char)(r >> (8 * i));
  /* 8 bytes -> 12 characters, the last one '=' (base64Url in Dart). */
  for (i = 0; i < 3; i++) {
    unsigned v = (unsigned)bytes[3 * i] << 16 | (unsigned)bytes[3 * i + 1] << 8 | bytes[3 * i + 2];
    token[4 * i] = b64[(v >> 18) & 63];
    token[4 * i + 1] = b64[(v >> 12) & 63];
    token[4 * i + 2] = b64[(v >> 6) & 63];
    token[4 * i + 3] = i == 2 ? '=' : b64[v & 63];
  }
  token[12] = '\0';
}

static void make_token(sim_t *s) {
  /* Drawn whether used or not, and DDS's from a stream of its own, so a
   * --seed gives the same ids as before either existed. */
  uint64_t dds_rng = s->rng ^ 0xD05D05D05D05D05Dull;
  random_token(&s->rng, s->token);
  if (s->cfg.token) snprintf(s->token, sizeof s->token, "%s", s->cfg.token);
  random_token(&dds_rng, s->dds.token);
}

static uint64_t random_seed(void) {
  uint64_t v = 0;
  int fd = open("/dev/urandom", O_RDONLY);
  if (fd >= 0) {
    if (read(fd, &v, sizeof v) != (ssize_t)sizeof v) v = 0;
    close(fd);
  }
  return v ^ (uint64_t)sim_clock_wall_ms() ^ ((uint64_t)getpid() << 32);
}

/* lws binds to an address, not a name: resolve --host to its numeric form
 * (IPv4 preferred), which is also what the printed URIs carry. */
static int resolve_host(const char *host, char *out, size_t n) {
  struct addrinfo hints, *res = NULL, *ai, *pick = NULL;
  int rc;

  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  rc = getaddrinfo(host, NULL, &hints, &res);
  if (rc) return -1;
  for (ai = res; ai; ai = ai->ai_next)
    if (!pick || (ai->ai_family == AF_INET && pick->ai_family != AF_INET)) pick = ai;
  rc = pick ? getnameinfo(pick->ai_addr, pick->ai_addrlen, out, (socklen_t)n, NULL, 0,
                          NI_NUMERICHOST)
            : -1;
  freeaddrinfo(res);
  return rc ? -1 : 0;
}

static int mkdirs_for(const char *path) {
  char tmp[4096];
  char *p;
  if (strlen(path) >= sizeof tmp) return -1;
  strcpy(tmp, path);
  for (p = tmp + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      if (mkdir(tmp, 0755) && errno != EEXIST) return -1;
      *p = '/';
    }
  return 0;
}

/* Written whole under a temporary name and renamed, so a tool polling for
 * the file never reads half a URI. */
static void write_uri_file(sim_t *s) {
  char tmp[4096];
  FILE *f;
  int ok;

  if (!s->cfg.uri_file) return;
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", s->cfg.uri_file, (long)getpid());
  if (mkdirs_for(s->cfg.uri_file) || !(f = fopen(tmp, "w"))) {
    fprintf(stderr, "Failed to write vmservice-out-file at %s\n", s->cfg.uri_file);
    return;
  }
  ok = fputs(s->ws_uri, f) >= 0; /* no trailing newline, like writeAsStringSync */
  ok = (fclose(f) == 0) && ok;
  if (!ok || rename(tmp, s->cfg.uri_file)) {
    unlink(tmp);
    fprintf(stderr, "Failed to write vmservice-out-file at %s\n", s->cfg.uri_file);
  }
}

/* ---- stdin commands ------------------------------------------------------------ */

static json_t *stats_json(sim_t *s) {
  json_t *j = json_pack(
      "{s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:s, s:I, s:i, s:O, s:s, s:b, s:b, s:I, "
      "s:I, s:f}",
      "framesDrawn", (json_int_t)s->gen.frames_drawn, "recordsWritten",
      (json_int_t)s->timings.records_written, "jankInjected", (json_int_t)s->gen.jank_injected,
      "jankFrames", (json_int_t)s->gen.jank_frames, "timingsPending", (json_int_t)s->timings.n_pend,
      "liveness", (json_int_t)(s->model ? wm_liveness(s->model) : 0), "runId", s->run_id,
      "isolateId", s->vm.isolate_id, "lastSeq", (json_int_t)(s->model ? wm_last_seq(s->model) : 0),
      "connections", (int)s->srv.n_conns, "methods", s->vm.method_counts, "scenario",
      sim_scenario_name(s->gen.scenario), "paused", s->vm.paused, "watcher", s->vm.watcher,
      "heldCalls", (json_int_t)sim_vm_held_calls(s), "lastFrameNumber",
      (json_int_t)s->gen.frame_number, "fps", s->gen.fps);
  if (j) {
    json_object_set_new(j, "lastFrameEvent",
                        json_integer((json_int_t)s->timings.last_posted_number));
    json_object_set_new(j, "recordedStreams", sim_tl_recorded_json(&s->tl));
    json_object_set_new(j, "timelineEvents", json_integer((json_int_t)s->tl.len));
    json_object_set_new(j, "timelineOverwritten", json_integer((json_int_t)s->tl.overwritten));
  }
  if (j && s->model) {
    json_object_set_new(j, "collecting", json_boolean(wm_collecting(s->model)));
    json_object_set_new(j, "firstSeq", json_integer((json_int_t)wm_first_seq(s->model)));
    json_object_set_new(j, "pending", json_integer((json_int_t)wm_pending(s->model)));
    json_object_set_new(j, "droppedAttributions",
                        json_integer((json_int_t)wm_dropped_attributions(s->model)));
    json_object_set_new(j, "moreFollowed", json_integer((json_int_t)wm_more_followed(s->model)));
    json_object_set_new(j, "starts", json_integer((json_int_t)wm_starts(s->model)));
    json_object_set_new(j, "stops", json_integer((json_int_t)wm_stops(s->model)));
  }
  if (j) json_object_set_new(j, "floodSent", json_integer((json_int_t)s->vm.flood_sent));
  if (j) json_object_set_new(j, "feed", sim_drive_stats_json(s));
  if (j)
    json_object_set_new(
        j, "cpu",
        json_pack("{s:b, s:i, s:i, s:I, s:I, s:I}", "profiler", s->cpu.enabled, "samplePeriod",
                  s->cpu.period_us, "maxStackDepth", s->cpu.max_depth, "samples",
                  (json_int_t)s->cpu.len, "taken", (json_int_t)s->cpu.taken, "overwritten",
                  (json_int_t)s->cpu.overwritten));
  if (j && s->replay) json_object_set_new(j, "replay", sim_replay_stats_json(s->replay));
  if (j && s->dds.attached) json_object_set_new(j, "ddsUri", json_string(s->dds.http_uri));
  if (j && s->cfg.mode == SIM_MODE_WEB) {
    /* What web_ui's recorder still holds: the tail a later frame hands over. */
    json_object_set_new(j, "webTimingsHeld", json_integer((json_int_t)s->timings.web_held));
    json_object_set_new(j, "webHandOvers", json_integer((json_int_t)s->timings.web_hand_overs));
    json_object_set_new(j, "dwds", sim_dwds_stats_json(&s->dwds));
  }
  if (j)
    json_object_set_new(
        j, "tracking",
        json_pack("{s:b, s:b, s:b}", "widgets", s->vm.bool_ext[SIM_EXT_PROFILE_WIDGETS], "layouts",
                  s->vm.bool_ext[SIM_EXT_PROFILE_LAYOUTS], "paints",
                  s->vm.bool_ext[SIM_EXT_PROFILE_PAINTS]));
  return j;
}

static int answer(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int answer(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  putchar('\n');
  fflush(stdout);
  return 0;
}

static void answer_json(json_t *j) {
  char *t = json_dumps(j, JSON_COMPACT);
  json_decref(j);
  answer("ok %s", t ? t : "null");
  free(t);
}

static int on_off(const char *arg, int *out) {
  if (arg && !strcmp(arg, "on"))
    *out = 1;
  else if (arg && !strcmp(arg, "off"))
    *out = 0;
  else
    return -1;
  return 0;
}

static void shutdown_sim(sim_t *s);

static int run_command(sim_t *s, char *line) {
  char *cmd, *arg, *arg2, *arg3, *save = NULL;
  long v;
  int on;

  cmd = strtok_r(line, " \t\r", &save);
  if (!cmd) return 0; /* blank line: nothing to answer */
  arg = strtok_r(NULL, " \t\r", &save);
  arg2 = strtok_r(NULL, " \t\r", &save);
  arg3 = strtok_r(NULL, " \t\r", &save);

  if (!strcmp(cmd, "scenario")) {
    int sc = arg ? sim_scenario_parse(arg) : -1;
    if (sc < 0)
      return answer(
          "error scenario wants steady|janky|idle|stalled|rare-slow|layout-bound|raster-bound|gc|"
          "shader|cpu-rare-slow|scrolllist");
    sim_gen_set_scenario(s, (sim_scenario_t)sc);
    answer("ok scenario %s", arg);
  } else if (!strcmp(cmd, "fps")) {
    double fps;
    if (!arg || parse_fps(arg, &fps)) return answer("error fps wants a number in 0.1..100000");
    sim_gen_set_fps(s, fps);
    answer("ok fps %g", fps);
  } else if (!strcmp(cmd, "inject")) {
    if (!arg || parse_long(arg, 1, 100000, &v))
      return answer("error inject wants a count 1..100000");
    sim_gen_inject(s, (int)v);
    answer("ok inject %ld", v);
  } else if (!strcmp(cmd, "draw")) {
    if (!arg || parse_long(arg, 1, 4000, &v)) return answer("error draw wants a count 1..4000");
    if (s->replay) return answer("error draw: under --replay the frames are the recording's");
    if (s->gen.hold_left) return answer("error draw: %d frames are still held", s->gen.hold_left);
    sim_gen_draw_held(s, (int)v);
    answer("ok draw %ld", v);
  } else if (!strcmp(cmd, "pause")) {
    if (sim_vm_pause(s, arg))
      return answer(
          "error pause wants PauseInterrupted|PauseBreakpoint|PauseException|"
          "PauseStart|PausePostRequest|PauseExit");
    answer("ok paused %s %s", s->vm.isolate_id, s->vm.pause_kind);
  } else if (!strcmp(cmd, "resume")) {
    sim_vm_resume(s);
    sim_timings_flush(s);
    answer("ok resumed %s", s->vm.isolate_id);
  } else if (!strcmp(cmd, "restart")) {
    sim_vm_restart(s);
    answer("ok restarted %s runId %s", s->vm.isolate_id, s->run_id);
  } else if (!strcmp(cmd, "reload")) {
    sim_vm_reload(s);
    answer("ok reloaded %s", s->vm.isolate_id);
  } else if (!strcmp(cmd, "watcher")) {
    if (on_off(arg, &on)) return answer("error watcher wants on|off");
    sim_vm_set_watcher(s, on);
    answer("ok watcher %s", arg);
  } else if (!strcmp(cmd, "foreign-off")) {
    if (!s->model) return answer("error foreign-off wants the watcher");
    wm_collection_switched_off(s->model);
    answer("ok foreign-off");
  } else if (!strcmp(cmd, "foreign-collect")) {
    if (on_off(arg, &on) || !s->model) return answer("error foreign-collect wants on|off (with the watcher)");
    wm_set_foreign_collection(s->model, on);
    answer("ok foreign-collect %s", arg);
  } else if (!strcmp(cmd, "streams")) {
    json_t *list = json_array();
    const char *bad = "(none given)";
    char *name, *save2 = NULL;
    for (name = arg ? strtok_r(arg, ",", &save2) : NULL; name; name = strtok_r(NULL, ",", &save2))
      json_array_append_new(list, json_string(name));
    if (!json_array_size(list) || sim_vm_set_streams(s, list, &bad) < 0) {
      answer("error streams wants VM stream names (Dart,GC...), not %s", bad); /* bad is in list */
      json_decref(list);
      return 0;
    }
    json_decref(list);
    json_t *now = sim_tl_recorded_json(&s->tl);
    char *txt = json_dumps(now, JSON_COMPACT);
    answer("ok streams %s", txt ? txt : "?");
    free(txt);
    json_decref(now);
  } else if (!strcmp(cmd, "profiler")) {
    if (on_off(arg, &on)) return answer("error profiler wants on|off");
    sim_vm_set_profiler(s, on);
    answer("ok profiler %s", arg);
  } else if (!strcmp(cmd, "ext-delay")) {
    if (!arg || parse_long(arg, 0, 3600000, &v))
      return answer("error ext-delay wants milliseconds 0..3600000");
    s->vm.ext_delay_ms = (int)v;
    answer("ok ext-delay %ld", v);
  } else if (!strcmp(cmd, "write-gap")) {
    if (!arg || parse_long(arg, 0, 60000, &v)) return answer("error write-gap wants milliseconds 0..60000");
    sim_server_set_gap(s, (int)v);
    answer("ok write-gap %ld", v);
  } else if (!strcmp(cmd, "ext-hang")) {
    if (on_off(arg, &on)) return answer("error ext-hang wants on|off");
    sim_vm_set_hang(s, 0, on);
    answer("ok ext-hang %s", arg);
  } else if (!strcmp(cmd, "flutter-ext-hang")) {
    if (on_off(arg, &on)) return answer("error flutter-ext-hang wants on|off");
    sim_vm_set_hang(s, 1, on);
    answer("ok flutter-ext-hang %s", arg);
  } else if (!strcmp(cmd, "vm-hang")) { /* a VM too busy to answer one method */
    v = 0;
    if (!arg || strlen(arg) >= sizeof s->vm.hang_method ||
        (arg2 && (strcmp(arg2, "after") || !arg3 || parse_long(arg3, 0, 1000000, &v))))
      return answer("error vm-hang wants a method name [after N], or off");
    snprintf(s->vm.hang_method, sizeof s->vm.hang_method, "%s", strcmp(arg, "off") ? arg : "");
    s->vm.hang_spared = (int)v;
    if (arg2)
      answer("ok vm-hang %s after %ld", arg, v);
    else
      answer("ok vm-hang %s", arg);
  } else if (!strcmp(cmd, "ext-error")) {
    if (on_off(arg, &on)) return answer("error ext-error wants on|off");
    s->vm.ext_error = on;
    answer("ok ext-error %s", arg);
  } else if (!strcmp(cmd, "reply")) {
    if (arg && !strcmp(arg, "normal"))
      s->vm.reply = SIM_REPLY_NORMAL;
    else if (arg && !strcmp(arg, "malformed"))
      s->vm.reply = SIM_REPLY_MALFORMED;
    else if (arg && !strcmp(arg, "wrongtypes"))
      s->vm.reply = SIM_REPLY_WRONGTYPES;
    else if (arg && !strcmp(arg, "huge")) {
      if (!arg2 || parse_long(arg2, 1, 1024, &v))
        return answer("error reply huge wants megabytes 1..1024");
      s->vm.reply = SIM_REPLY_HUGE;
      s->vm.huge_mb = (size_t)v;
    } else
      return answer("error reply wants normal|malformed|huge MB|wrongtypes");
    answer("ok reply %s%s%s", arg, arg2 ? " " : "", arg2 ? arg2 : "");
  } else if (!strcmp(cmd, "web-timeout")) {
    if (!arg || parse_long(arg, 0, 3600000, &v))
      return answer("error web-timeout wants milliseconds 0..3600000");
    s->vm.web_timeout_ms = (int)v;
    answer("ok web-timeout %ld%s", v, s->cfg.mode == SIM_MODE_WEB ? "" : " (applies in web mode)");
  } else if (!strcmp(cmd, "web-unregistered")) {
    if (!arg || (strcmp(arg, "32601") && strcmp(arg, "32603")))
      return answer("error web-unregistered wants 32601|32603");
    s->vm.web_unregistered = arg[4] == '1' ? -32601 : -32603;
    answer("ok web-unregistered -%s%s", arg,
           s->cfg.mode == SIM_MODE_WEB ? "" : " (applies in web mode)");
  } else if (!strcmp(cmd, "timings-delay")) {
    if (!arg || parse_long(arg, 0, 3600000, &v))
      return answer("error timings-delay wants milliseconds 0..3600000");
    s->timings.delay_ms = (int)v;
    sim_timings_flush(s);
    answer("ok timings-delay %ld", v);
  } else if (!strcmp(cmd, "frame-step")) {
    long gaps = 0;
    if (!arg || parse_long(arg, 1, 100, &v) ||
        (arg2 && (parse_long(arg2, 0, 100000, &gaps) || gaps == 1)))
      return answer("error frame-step wants a step 1..100 and gaps 0 or 2..100000");
    sim_gen_set_numbering(s, (int)v, (int)gaps);
    answer("ok frame-step %ld gaps %ld", v, gaps);
  } else if (!strcmp(cmd, "flood")) {
    int ext = 0;
    if (!arg || parse_long(arg, 0, 1000000, &v))
      return answer("error flood wants events per second 0..1000000 [isolate|extension]");
    if (arg2 && !strcmp(arg2, "extension"))
      ext = 1;
    else if (arg2 && strcmp(arg2, "isolate") != 0)
      return answer("error flood wants a stream: isolate|extension");
    sim_vm_set_flood(s, (int)v, ext);
    answer("ok flood %ld %s", v, ext ? "extension" : "isolate");
  } else if (!strcmp(cmd, "dds-attach")) {
    int n = sim_vm_dds_attach(s);
    if (n < 0)
      return answer("error dds-attach wants --mode vm or web, once (dds mode is DDS already)");
    answer("ok dds-attach %s closed %d", s->dds.http_uri, n);
  } else if (!strcmp(cmd, "drop")) {
    size_t n = s->srv.n_conns;
    sim_server_drop_all(s);
    answer("ok dropped %zu", n);
  } else if (!strcmp(cmd, "stats")) {
    answer_json(stats_json(s));
  } else if (!strcmp(cmd, "methods")) {
    answer_json(json_incref(s->vm.method_list));
  } else if (!strcmp(cmd, "params")) {
    answer_json(json_pack("{s:O, s:O}", "raw",
                          s->vm.last_raw_params ? s->vm.last_raw_params : json_null(), "handed",
                          s->vm.last_handed_params ? s->vm.last_handed_params : json_null()));
  } else if (!strcmp(cmd, "quit")) {
    answer("ok quit");
    shutdown_sim(s);
  } else {
    answer("error unknown command '%.64s' (see --help)", cmd);
  }
  return 0;
}

static void feed_stdin(sim_t *s, const char *buf, size_t n) {
  size_t i;
  for (i = 0; i < n && !s->stopping; i++) {
    char ch = buf[i];
    if (ch == '\n') {
      if (stdin_overflow)
        answer("error line too long");
      else {
        stdin_line[stdin_len] = '\0';
        run_command(s, stdin_line);
      }
      stdin_len = 0;
      stdin_overflow = 0;
    } else if (stdin_len + 1 < sizeof stdin_line) {
      stdin_line[stdin_len++] = ch;
    } else {
      stdin_overflow = 1;
    }
  }
}

static void on_stdin_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  static char storage[8192];
  (void)h;
  (void)suggested;
  buf->base = storage;
  buf->len = sizeof storage;
}

static void on_stdin_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf) {
  if (n > 0) {
    feed_stdin(&sim, buf->base, (size_t)n);
  } else if (n < 0) {
    /* EOF does not stop the simulator (tests may close its stdin), unless
     * a parent asked for its lifetime with --exit-on-eof. */
    uv_read_stop(st);
    if (stdin_active) {
      stdin_active = 0;
      uv_close((uv_handle_t *)st, NULL);
    }
    if (sim.cfg.exit_on_eof) shutdown_sim(&sim);
  }
}

static void start_stdin(sim_t *s) {
  uv_handle_type t = uv_guess_handle(0);
  int rc = -1;

  if (t == UV_TTY) {
    rc = uv_tty_init(s->loop, &stdin_handle.tty, 0, 1);
  } else if (t == UV_NAMED_PIPE) {
    rc = uv_pipe_init(s->loop, &stdin_handle.pipe, 0);
    if (!rc && (rc = uv_pipe_open(&stdin_handle.pipe, 0)))
      uv_close((uv_handle_t *)&stdin_handle.pipe, NULL);
  } else if (t == UV_FILE) {
    /* A regular file (uv_pipe_open would fail on it): read it through now. */
    char buf[8192];
    ssize_t n;
    while (!s->stopping && (n = read(0, buf, sizeof buf)) > 0) feed_stdin(s, buf, (size_t)n);
    if (s->cfg.exit_on_eof) shutdown_sim(s);
    return;
  }
  if (rc) return;
  stdin_active = 1;
  uv_read_start((uv_stream_t *)&stdin_handle, on_stdin_alloc, on_stdin_read);
}

/* ---- shutdown ---------------------------------------------------------------- */

static void shutdown_sim(sim_t *s) {
  if (s->stopping) return;
  s->stopping = 1;
  if (stdin_active) {
    stdin_active = 0;
    uv_read_stop((uv_stream_t *)&stdin_handle);
    uv_close((uv_handle_t *)&stdin_handle, NULL);
  }
  uv_close((uv_handle_t *)&sig_int, NULL);
  uv_close((uv_handle_t *)&sig_term, NULL);
  sim_gen_close(s);
  sim_vm_close(s);
  sim_server_close(s);
}

static void on_signal(uv_signal_t *h, int signum) {
  (void)h;
  (void)signum;
  shutdown_sim(&sim);
}

int main(int argc, char **argv) {
  sim_t *s = &sim;
  char host_num[64], uri_host[72];
  wm_config_t mcfg;
  int rc;

  rc = parse_args(argc, argv, &s->cfg);
  if (rc >= 0) return rc;
  sim_log_set_verbose(s->cfg.verbose);
  signal(SIGPIPE, SIG_IGN);
  /* `telescope-sim &` from an interactive shell: reading the terminal from
   * the background would stop the whole app; the read fails instead and the
   * sim goes on without stdin commands. */
  signal(SIGTTIN, SIG_IGN);
  s->rng = s->cfg.seeded ? s->cfg.seed : random_seed();
  if (!s->cfg.seeded) s->cfg.seed = sim_rand_next(&s->rng);
  if (resolve_host(s->cfg.host, host_num, sizeof host_num)) {
    fprintf(stderr, "telescope-sim: cannot resolve --host %s\n", s->cfg.host);
    return 2;
  }
  s->cfg.host = host_num;
  /* An IPv6 address goes in brackets inside a URI. */
  snprintf(uri_host, sizeof uri_host, strchr(host_num, ':') ? "[%s]" : "%s", host_num);
  s->loop = uv_default_loop();
  make_token(s);
  sim_new_run_id(s);

  if (s->cfg.replay) {
    char err[512];
    size_t n_locs;
    s->replay = sim_replay_load(s->cfg.replay, err, sizeof err);
    if (!s->replay) {
      fprintf(stderr, "telescope-sim: %s\n", err);
      return 2;
    }
    s->cfg.fps = sim_replay_refresh_rate(s->replay);
    s->up.replay_tick = sim_replay_tick;
    /* widgetLocationIdMap answers the recording's locations from the start. */
    const sim_rebuild_loc_t *locs = sim_replay_locations(s->replay, &n_locs);
    if (locs) sim_rebuild_use(&s->rebuild, locs, n_locs);
  }
  memset(&mcfg, 0, sizeof mcfg);
  mcfg.ring_capacity = s->cfg.ring;
  /* watcher_version: the model's default, the Dart package's version. */
  mcfg.refresh_rate = s->cfg.fps;
  /* Without --build-mode the model keeps its default ("profile") while the
   * debug-only extensions are served: what the tests were written against. */
  if (s->cfg.profile) mcfg.build_mode = "profile";
  /* The Dart watcher joins web frames by time (kIsWeb): their numbers do not
   * tell frames apart there (issue 21 item 9). */
  mcfg.join_by_time = s->cfg.mode == SIM_MODE_WEB;
  s->model = wm_new(&mcfg, s->run_id);
  if (!s->model) {
    fprintf(stderr, "telescope-sim: cannot create the watcher model\n");
    return 1;
  }
  if (sim_tl_init(&s->tl, s->cfg.timeline_ring, s->cfg.timeline_streams)) {
    fprintf(stderr, "telescope-sim: cannot create the timeline\n");
    return 1;
  }
  if (s->replay) s->tl.threads = sim_replay_threads(s->replay);
  if (sim_cpu_init(&s->cpu, s->cfg.cpu_ring)) {
    fprintf(stderr, "telescope-sim: cannot create the CPU profiler's sample ring\n");
    return 1;
  }
  s->cpu.enabled = !s->cfg.profiler_off;
  if (s->cfg.profile_period) s->cpu.period_us = s->cfg.profile_period;
  if (s->cfg.max_profile_depth) s->cpu.max_depth = s->cfg.max_profile_depth;
  if (s->cfg.compiled_functions >= 0) s->cpu.compiled = s->cfg.compiled_functions;
  s->cpu.aot = s->cfg.profile;
  s->tl.recorder = s->cfg.timeline_recorder;
  sim_drive_init(s);
  if (sim_server_init(s)) goto fail_server;
  if (sim_vm_init(s)) goto fail_vm;
  if (sim_gen_init(s)) goto fail_gen;
  if (s->cfg.start_paused) sim_vm_pause(s, "PauseStart");
  uv_signal_init(s->loop, &sig_int);
  uv_signal_init(s->loop, &sig_term);
  uv_signal_start(&sig_int, on_signal, SIGINT);
  uv_signal_start(&sig_term, on_signal, SIGTERM);

  if (s->cfg.mode == SIM_MODE_WEB) {
    /* DWDS prints no trailing slash and serves the socket on /<token>. */
    snprintf(s->http_uri, sizeof s->http_uri, "http://%.71s:%d/%.63s", uri_host, s->srv.port,
             s->token);
    snprintf(s->ws_uri, sizeof s->ws_uri, "ws://%.71s:%d/%.63s", uri_host, s->srv.port, s->token);
  } else {
    snprintf(s->http_uri, sizeof s->http_uri, "http://%.71s:%d/%.63s/", uri_host, s->srv.port,
             s->token);
    snprintf(s->ws_uri, sizeof s->ws_uri, "ws://%.71s:%d/%.63s/ws", uri_host, s->srv.port,
             s->token);
  }
  /* The simulated DDS shares the port; its own token tells it apart. */
  snprintf(s->dds.http_uri, sizeof s->dds.http_uri, "http://%.71s:%d/%.63s/",
           s->cfg.dds_host ? s->cfg.dds_host : uri_host, s->srv.port, s->dds.token);
  if (s->cfg.dds_attached) sim_vm_dds_attach(s);
  write_uri_file(s); /* before the banner: whoever sees the banner finds the file */
  printf("A Dart VM Service on telescope-sim is available at: %s\n", s->http_uri);
  printf(
      "The Flutter DevTools debugger and profiler on telescope-sim is available "
      "at: http://127.0.0.1:9100?uri=%s\n",
      s->http_uri);
  fflush(stdout);
  start_stdin(s);

  uv_run(s->loop, UV_RUN_DEFAULT);
  sim_tl_free(&s->tl);
  sim_cpu_free(&s->cpu);
  rc = uv_loop_close(s->loop);
  if (rc) fprintf(stderr, "telescope-sim: loop closed with handles open: %s\n", uv_strerror(rc));
  sim_drive_free(s);
  wm_free(s->model);
  sim_replay_free(s->replay);
  return 0;

fail_gen:
  sim_vm_close(s);
fail_vm:
fail_server:
  sim_replay_free(s->replay);
  s->replay = NULL;
  sim_server_close(s);
  uv_run(s->loop, UV_RUN_DEFAULT);
  sim_cpu_free(&s->cpu);
  sim_drive_free(s);
  wm_free(s->model);
  return 1;
}
