#include "check_cmd.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "budgets.h"
#include "config.h"
#include "container_of.h"
#include "frames_tool.h"
#include "log.h"
#include "mcp.h"
#include "record.h"
#include "report.h"
#include "vm_lws_ctx.h"

#define CHECK_MIN_DURATION_MS 100 /* capture's durationMs bounds (input schema) */
#define CHECK_MAX_DURATION_MS 120000
#define CHECK_LIMIT 1000    /* frames listed by the capture (the largest limit) */
#define CHECK_GRACE_MS 5000 /* beyond duration + call timeouts: give up waiting */

static const char usage_text[] =
    "Usage: telescope-mcp check --vm-service-uri URI | --vm-service-uri-file PATH |\n"
    "                           --dtd-uri URI [--app NAME] --duration-ms N [OPTIONS]\n"
    "\n"
    "Measures a running Flutter app's frames for N ms (run it while an integration\n"
    "test drives the app), prints a short summary, judges it against budgets and\n"
    "writes a report. For CI.\n"
    "\n"
    "Options:\n"
    "  --vm-service-uri URI       the app's VM service, any form `flutter run` prints\n"
    "  --vm-service-uri-file PATH read the URI from this file (flutter run\n"
    "                             --vmservice-out-file)\n"
    "  --dtd-uri URI              find the app through the Dart Tooling Daemon (flutter\n"
    "                             run --print-dtd): its one app; with several, the\n"
    "                             diagnosis lists them: pick one with --app\n"
    "  --app NAME                 with --dtd-uri: the app the daemon lists by this name\n"
    "  --duration-ms N            how long to measure, 100 to 120000 ms (required)\n"
    "  --budgets FILE             JSON limits: {\"jankRatioMax\", \"buildP90MsMax\",\n"
    "                             \"rasterP90MsMax\", \"frozenMax\"}, any subset\n"
    "  --report FILE              write the report (our summary and Flutter's\n"
    "                             TimelineSummary keys) as JSON to FILE\n"
    "  --interaction ID           tag the measured frames with this interactionId\n"
    "  --call-timeout-ms N        give up on a VM-service call after N ms (default 3000)\n"
    "  --allow-remote             accept a VM service on a non-loopback host\n"
    "  --log-level LEVEL          error|warn|info|debug|trace on stderr (default warn)\n"
    "  --help, -h                 print this help and exit\n"
    "\n"
    "Environment (flags win):\n"
    "  TELESCOPE_VM_SERVICE_URI       as --vm-service-uri\n"
    "  TELESCOPE_VM_SERVICE_URI_FILE  as --vm-service-uri-file\n"
    "  TELESCOPE_DTD_URI              as --dtd-uri\n"
    "\n"
    "Exit status: 0 within budgets (or none given); 1 when a budget failed; 2 when\n"
    "nothing could be measured (no app, no watcher, paused, no frames: the\n"
    "diagnosis is printed); 64 on a bad command line.\n";

typedef struct {
  uv_loop_t loop;
  config_t cfg;
  mcp_session_t *mcp;
  frames_tool_t *tool;
  uv_timer_t step;     /* defers work out of the emit callback */
  uv_timer_t watchdog; /* the capture must answer by duration + timeouts */
  int step_open, watchdog_open;

  /* options */
  unsigned duration_ms;
  const char *interaction, *report_path;
  const char *app; /* --app: the DTD-listed app of this name */
  char *app_uri;   /* ... its redacted URI, which the capture names it by (owned) */
  json_t *budgets; /* owned, validated; NULL without --budgets */

  /* the conversation */
  int phase;        /* 0 initialize sent, 1 capture sent, 2 answered, 3 closing */
  int looking;      /* --app, in phase 0: 1 the status is sent, 2 answered, 3 no such app */
  json_t *answer;   /* the capture's tools/call result (owned) */
  const char *fail; /* why no answer came, when none did */
  int exit_code;
} check_t;

static int usage(const char *fmt, const char *arg) {
  fputs("telescope-mcp check: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs(" (see telescope-mcp check --help)\n", stderr);
  return CHECK_EXIT_USAGE;
}

static int parse_ms(const char *s, unsigned long lo, unsigned long hi, unsigned *out) {
  if (!s || !*s || *s == '-' || *s == '+') return -1;
  char *end;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (errno || *end || v < lo || v > hi) return -1;
  *out = (unsigned)v;
  return 0;
}

static int set_str(char **dst, const char *v) {
  free(*dst);
  *dst = strdup(v);
  return *dst ? 0 : -1;
}

/* Fills ck from argv (argv[0] is "check"). 0 to go on, 1 after --help, or
 * CHECK_EXIT_USAGE with the complaint on stderr. */
static int parse_args(check_t *ck, int argc, char **argv) {
  const char *env, *budgets_path = NULL;
  ck->cfg.log_level = LOG_WARN;
  ck->cfg.call_timeout_ms = CONFIG_DEFAULT_CALL_TIMEOUT_MS;
  ck->cfg.max_line_bytes = CONFIG_DEFAULT_MAX_LINE_BYTES;
  ck->cfg.eof_grace_ms = CONFIG_DEFAULT_EOF_GRACE_MS;
  if ((env = getenv("TELESCOPE_VM_SERVICE_URI")) && *env && set_str(&ck->cfg.vm_service_uri, env))
    return usage("%s", "out of memory");
  if ((env = getenv("TELESCOPE_VM_SERVICE_URI_FILE")) && *env &&
      set_str(&ck->cfg.vm_service_uri_file, env))
    return usage("%s", "out of memory");
  if ((env = getenv("TELESCOPE_DTD_URI")) && *env && set_str(&ck->cfg.dtd_uri, env))
    return usage("%s", "out of memory");
  int have_duration = 0, flag_uri = 0, flag_file = 0, flag_dtd = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(usage_text, stdout);
      return 1;
    }
    if (!strcmp(a, "--allow-remote")) {
      ck->cfg.allow_remote = 1;
      continue;
    }
    static const char *valued[] = {
        "--vm-service-uri", "--vm-service-uri-file", "--dtd-uri",   "--duration-ms", "--budgets",
        "--report",         "--interaction",         "--call-timeout-ms", "--log-level", "--app",
        NULL};
    const char *flag = NULL, *val = NULL;
    for (const char **f = valued; *f; f++) {
      size_t n = strlen(*f);
      if (!strncmp(a, *f, n) && (a[n] == '\0' || a[n] == '=')) {
        flag = *f;
        val = a[n] == '=' ? a + n + 1 : i + 1 < argc ? argv[++i] : NULL;
        break;
      }
    }
    if (!flag) return usage("unknown option '%s'", a);
    if (!val || !*val) return usage("%s needs a value", flag);
    if (!strcmp(flag, "--vm-service-uri")) {
      if (set_str(&ck->cfg.vm_service_uri, val)) return usage("%s", "out of memory");
      flag_uri = 1;
    } else if (!strcmp(flag, "--vm-service-uri-file")) {
      if (set_str(&ck->cfg.vm_service_uri_file, val)) return usage("%s", "out of memory");
      flag_file = 1;
    } else if (!strcmp(flag, "--dtd-uri")) {
      if (set_str(&ck->cfg.dtd_uri, val)) return usage("%s", "out of memory");
      flag_dtd = 1;
    } else if (!strcmp(flag, "--duration-ms")) {
      if (parse_ms(val, CHECK_MIN_DURATION_MS, CHECK_MAX_DURATION_MS, &ck->duration_ms))
        return usage("--duration-ms: must be an integer from 100 to 120000, got '%s'", val);
      have_duration = 1;
    } else if (!strcmp(flag, "--call-timeout-ms")) {
      if (parse_ms(val, 1, 600000, &ck->cfg.call_timeout_ms))
        return usage("--call-timeout-ms: must be an integer from 1 to 600000, got '%s'", val);
    } else if (!strcmp(flag, "--log-level")) {
      int l = log_level_parse(val);
      if (l < 0) return usage("--log-level: unknown level '%s' (error|warn|info|debug|trace)", val);
      ck->cfg.log_level = (log_level_t)l;
    } else if (!strcmp(flag, "--budgets")) {
      budgets_path = val;
    } else if (!strcmp(flag, "--report")) {
      ck->report_path = val;
    } else if (!strcmp(flag, "--app")) {
      ck->app = val;
    } else if (!strcmp(flag, "--interaction")) {
      size_t len = record_utf8_length(val);
      if (len < 1 || len > RECORD_MAX_INTERACTION)
        return usage("--interaction: must be 1 to 128 characters, got '%s'", val);
      ck->interaction = val;
    }
  }
  if (flag_uri + flag_file + flag_dtd > 1)
    return usage("%s", "--vm-service-uri, --vm-service-uri-file and --dtd-uri exclude each other");
  /* A flag wins over the environment, also over the other variables. */
  if (flag_uri + flag_file + flag_dtd) {
    char **keep = flag_uri ? &ck->cfg.vm_service_uri
                  : flag_file ? &ck->cfg.vm_service_uri_file : &ck->cfg.dtd_uri;
    char **all[] = {&ck->cfg.vm_service_uri, &ck->cfg.vm_service_uri_file, &ck->cfg.dtd_uri};
    for (size_t k = 0; k < 3; k++)
      if (all[k] != keep) {
        free(*all[k]);
        *all[k] = NULL;
      }
  } else if (ck->cfg.dtd_uri && (ck->cfg.vm_service_uri || ck->cfg.vm_service_uri_file)) {
    return usage("%s", "TELESCOPE_DTD_URI and TELESCOPE_VM_SERVICE_URI(_FILE) exclude each other: "
                       "unset one, or give a flag");
  }
  if (!ck->cfg.vm_service_uri && !ck->cfg.vm_service_uri_file && !ck->cfg.dtd_uri)
    return usage("%s", "give the app: --vm-service-uri URI, --vm-service-uri-file PATH or "
                       "--dtd-uri URI");
  if (!have_duration) return usage("%s", "--duration-ms N is required");
  if (ck->app && !ck->cfg.dtd_uri)
    return usage("%s", "--app names an app the Dart Tooling Daemon lists: give --dtd-uri too");
  if (budgets_path) {
    json_error_t je;
    char err[256];
    ck->budgets = json_load_file(budgets_path, JSON_REJECT_DUPLICATES, &je);
    if (!ck->budgets) {
      fprintf(stderr, "telescope-mcp check: --budgets %s: line %d: %s\n", budgets_path, je.line,
              je.text);
      return CHECK_EXIT_USAGE;
    }
    if (budgets_validate(ck->budgets, err, sizeof err)) {
      fprintf(stderr, "telescope-mcp check: --budgets %s: %s\n", budgets_path, err);
      return CHECK_EXIT_USAGE;
    }
  }
  if (ck->report_path) {
    /* Found out now, not after the measurement: the path must be writable. */
    FILE *f = fopen(ck->report_path, "a");
    if (!f) {
      fprintf(stderr, "telescope-mcp check: --report %s: %s\n", ck->report_path, strerror(errno));
      return CHECK_EXIT_USAGE;
    }
    fclose(f);
  }
  return 0;
}

/* ---- the MCP conversation -------------------------------------------- */

static void send_json(check_t *ck, json_t *msg) {
  char *line = json_dumps(msg, JSON_COMPACT);
  json_decref(msg);
  if (!line) {
    ck->fail = "out of memory";
    return;
  }
  mcp_session_handle_line(ck->mcp, line, strlen(line));
  free(line);
}

static void send_capture(check_t *ck) {
  json_t *args = json_pack("{s:s,s:i,s:s,s:i}", "action", "capture", "durationMs",
                           (int)ck->duration_ms, "detail", "frames", "limit", CHECK_LIMIT);
  if (args && ck->app_uri) json_object_set_new(args, "vmServiceUri", json_string(ck->app_uri));
  if (args && ck->interaction) {
    json_object_set_new(args, "interactionId", json_string(ck->interaction));
    json_object_set_new(args, "linkedBy", json_string("check"));
  }
  ck->phase = 1;
  send_json(ck, json_pack("{s:s,s:i,s:s,s:{s:s,s:o}}", "jsonrpc", "2.0", "id", 2, "method",
                          "tools/call", "params", "name", FRAMES_TOOL_NAME, "arguments", args));
}

static void finish(check_t *ck);

/* --app: a status first, for the daemon's list; the capture then names the
 * app by its redacted URI as listed, which the tool resolves (dtd_pick.c). */
static void send_look(check_t *ck) {
  ck->looking = 1;
  send_json(ck, json_pack("{s:s,s:i,s:s,s:{s:s,s:{s:s}}}", "jsonrpc", "2.0", "id", 3, "method",
                          "tools/call", "params", "name", FRAMES_TOOL_NAME, "arguments", "action",
                          "status"));
}

/* The one listed app named ck->app: 0 with ck->app_uri set, or -1 with
 * ck->fail (and the list, when there is one, printed by finish). */
static int pick_app(check_t *ck, const json_t *status) {
  const json_t *apps = json_object_get(
      json_object_get(json_object_get(status, "structuredContent"), "dtd"), "apps");
  const char *uri = NULL;
  size_t i, named = 0;
  const json_t *a;
  json_array_foreach(apps, i, a) {
    const char *n = json_string_value(json_object_get(a, "name"));
    if (n && !strcmp(n, ck->app)) {
      named++;
      uri = json_string_value(json_object_get(a, "vmServiceUri"));
    }
  }
  if (named == 1 && uri && (ck->app_uri = strdup(uri))) return 0;
  ck->fail = !json_array_size(apps) ? "--app: the Dart Tooling Daemon lists no app"
             : named > 1            ? "--app: the Dart Tooling Daemon lists several apps of that name"
             : named == 1           ? "out of memory"
                                    : "--app: the Dart Tooling Daemon lists no app of that name";
  return -1;
}

/* Runs on the loop, never inside mcp_session_handle_line. */
static void on_step(uv_timer_t *t) {
  check_t *ck = container_of(t, check_t, step);
  if (ck->phase == 0 && ck->looking == 2) { /* the look answered */
    if (pick_app(ck, ck->answer) == 0) {
      json_decref(ck->answer);
      ck->answer = NULL;
      send_capture(ck);
    } else {
      ck->looking = 3;
      ck->phase = 2;
      finish(ck);
    }
  } else if (ck->phase == 0) {
    send_json(ck, json_pack("{s:s,s:s}", "jsonrpc", "2.0", "method", "notifications/initialized"));
    if (ck->app)
      send_look(ck);
    else
      send_capture(ck);
  } else if (ck->phase == 2) {
    finish(ck);
  }
}

static void emit(void *arg, const char *line, size_t len) {
  check_t *ck = arg;
  if (ck->phase == 3) return; /* closing: the step timer may be closed already */
  json_t *msg = json_loadb(line, len, 0, NULL);
  json_t *id = json_object_get(msg, "id");
  if (!id) { /* notifications (progress) are not ours to answer */
    json_decref(msg);
    return;
  }
  json_int_t n = json_integer_value(id);
  if (json_object_get(msg, "error")) {
    log_error("the MCP core refused our request %lld: %s", (long long)n,
              json_string_value(json_object_get(json_object_get(msg, "error"), "message")));
    ck->fail = "internal error: the MCP request was refused";
    ck->phase = 2;
  } else if (n == 1 && ck->phase == 0) {
    /* initialize answered: go on from the loop */
  } else if (n == 2 && ck->phase == 1) {
    ck->answer = json_incref(json_object_get(msg, "result"));
    ck->phase = 2;
  } else if (n == 3 && ck->phase == 0 && ck->looking == 1) {
    ck->answer = json_incref(json_object_get(msg, "result"));
    ck->looking = 2;
  }
  json_decref(msg);
  uv_timer_start(&ck->step, on_step, 0, 0);
}

static void on_watchdog(uv_timer_t *t) {
  check_t *ck = container_of(t, check_t, watchdog);
  if (ck->phase >= 2) return;
  ck->fail = "the capture did not answer in time";
  ck->phase = 2;
  finish(ck);
}

/* ---- judging and reporting ------------------------------------------- */

static double ms(const json_t *stats, const char *k) {
  return (double)json_integer_value(json_object_get(stats, k)) / 1000.0;
}

/* The apps the daemon lists, one line each (tokens redacted). */
static void print_apps(const json_t *dtd) {
  size_t i;
  const json_t *app;
  json_array_foreach(json_object_get(dtd, "apps"), i, app)
      printf("  app: %s %s\n", json_string_value(json_object_get(app, "name")) ?: "(unnamed)",
             json_string_value(json_object_get(app, "vmServiceUri")) ?: "");
}

static void print_diagnosis(const json_t *diag, const json_t *dtd, const char *text) {
  if (diag) {
    const char *code = json_string_value(json_object_get(diag, "code"));
    printf("telescope check: nothing measured: %s: %s\n", code,
           json_string_value(json_object_get(diag, "message")));
    /* What went wrong in its own words (a malformed URI says what is malformed). */
    const char *detail =
        json_string_value(json_object_get(json_object_get(diag, "evidence"), "detail"));
    if (detail && *detail) printf("  detail: %s\n", detail);
    print_apps(dtd);
    const char *hint = json_string_value(json_object_get(diag, "hint"));
    if (code && !strcmp(code, "app_choice"))
      printf("  hint: name the one to measure with --app NAME, or give its full URI (as the IDE "
             "or `flutter run` printed it) with --vm-service-uri instead of --dtd-uri\n");
    else if (hint)
      printf("  hint: %s\n", hint);
  } else {
    printf("telescope check: nothing measured: %s\n", text ? text : "no frames");
    print_apps(dtd); /* --app found none: the list */
  }
}

static void print_summary(const check_t *ck, const json_t *sum, const json_t *verdict) {
  const json_t *jank = json_object_get(sum, "jank"), *b = json_object_get(sum, "buildUs"),
               *r = json_object_get(sum, "rasterUs");
  printf(
      "telescope check: %lld frames in %.1f s%s%s, jank %.2f %% (%lld frames, %lld frozen) at "
      "a %.1f ms budget\n",
      (long long)json_integer_value(json_object_get(sum, "frames")), ck->duration_ms / 1000.0,
      ck->interaction ? ", interaction " : "", ck->interaction ? ck->interaction : "",
      json_number_value(json_object_get(jank, "ratio")) * 100,
      (long long)json_integer_value(json_object_get(jank, "frames")),
      (long long)json_integer_value(json_object_get(jank, "frozen")),
      (double)json_integer_value(json_object_get(sum, "budgetUs")) / 1000.0);
  printf("  build p50/p90/p99 %.1f/%.1f/%.1f ms, raster %.1f/%.1f/%.1f ms\n", ms(b, "p50"),
         ms(b, "p90"), ms(b, "p99"), ms(r, "p50"), ms(r, "p90"), ms(r, "p99"));
  if (!verdict) return;
  char line[1024];
  budgets_format(verdict, line, sizeof line);
  printf("%s\n", line);
}

/* Writes under a temporary name and renames, so a dashboard never reads
 * half a report. */
static int write_report(const char *path, const json_t *report) {
  size_t n = strlen(path) + 8;
  char *tmp = malloc(n);
  if (!tmp) return -1;
  snprintf(tmp, n, "%s.tmp", path);
  int rc = json_dump_file(report, tmp, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
  if (rc == 0 && rename(tmp, path) != 0) rc = -1;
  if (rc != 0) remove(tmp);
  free(tmp);
  return rc;
}

/* Parses the listed frames; returns how many (0 on any failure). */
static size_t frames_of(const json_t *list, frame_t **out) {
  size_t n = json_array_size(list), k = 0;
  *out = n ? calloc(n, sizeof **out) : NULL;
  if (!*out) return 0;
  char err[RECORD_ERR_LEN];
  for (; k < n; k++)
    if (record_frame_parse(&(*out)[k], json_array_get(list, k), "frames[]", err, sizeof err)) {
      log_warn("a listed frame was refused: %s", err);
      break;
    }
  return k;
}

static void tool_closed(void *arg) {
  check_t *ck = arg;
  ck->tool = NULL;
}

static void finish(check_t *ck) {
  if (ck->phase == 3) return;
  ck->phase = 3;
  const json_t *sc = json_object_get(ck->answer, "structuredContent");
  int is_error = json_is_true(json_object_get(ck->answer, "isError"));
  const json_t *sum = is_error ? NULL : json_object_get(sc, "summary");
  const json_t *diag = json_object_get(sc, "diagnosis");
  json_int_t nsum = json_integer_value(json_object_get(sum, "frames"));
  json_t *verdict = NULL;
  frame_t *frames = NULL;
  size_t nframes = 0;

  if (!ck->answer || is_error || !sum || nsum <= 0) {
    const char *text = ck->fail;
    if (!text && is_error)
      text = json_string_value(
          json_object_get(json_array_get(json_object_get(ck->answer, "content"), 0), "text"));
    /* --app found no app of its name: our reason, with the daemon's list. */
    print_diagnosis(ck->looking == 3 ? NULL : diag, json_object_get(sc, "dtd"), text);
    ck->exit_code = CHECK_EXIT_UNMEASURED;
  } else {
    if (ck->budgets) verdict = budgets_eval(ck->budgets, sum);
    ck->exit_code =
        verdict && !strcmp(json_string_value(json_object_get(verdict, "verdict")), "fail")
            ? CHECK_EXIT_FAIL
            : CHECK_EXIT_PASS;
    nframes = frames_of(json_object_get(sc, "frames"), &frames);
    print_summary(ck, sum, verdict);
  }
  if (ck->report_path) {
    report_input_t in = {TELESCOPE_VERSION,
                         ck->duration_ms,
                         ck->interaction,
                         json_object_get(sc, "session"),
                         sum,
                         ck->budgets,
                         verdict,
                         ck->exit_code == CHECK_EXIT_UNMEASURED ? diag : NULL,
                         frames,
                         nframes,
                         sum && (json_int_t)nframes == nsum,
                         ck->exit_code};
    json_t *report = report_new(&in);
    if (!report || write_report(ck->report_path, report)) {
      log_error("cannot write the report to %s", ck->report_path);
      if (ck->exit_code == CHECK_EXIT_PASS) ck->exit_code = CHECK_EXIT_UNMEASURED;
    } else {
      printf("report: %s\n", ck->report_path);
    }
    json_decref(report);
  }
  for (size_t i = 0; i < nframes; i++) record_frame_close(&frames[i]);
  free(frames);
  json_decref(verdict);
  fflush(stdout);

  /* Tear down from the loop: handles close in their callbacks. */
  mcp_session_cancel_all(ck->mcp);
  if (ck->tool) frames_tool_close(ck->tool, tool_closed, ck);
  uv_close((uv_handle_t *)&ck->step, NULL);
  uv_close((uv_handle_t *)&ck->watchdog, NULL);
}

int check_main(int argc, char **argv) {
  check_t ck;
  memset(&ck, 0, sizeof ck);
  int rc = parse_args(&ck, argc, argv);
  if (rc) {
    rc = rc == 1 ? 0 : rc;
    goto done_args;
  }
  log_set_name("telescope-mcp check");
  log_set_level(ck.cfg.log_level);
  signal(SIGPIPE, SIG_IGN);
  rc = CHECK_EXIT_UNMEASURED;
  if (uv_loop_init(&ck.loop)) {
    log_error("cannot create the event loop");
    goto done_args;
  }
  ck.tool = frames_tool_new(&ck.loop, &ck.cfg);
  if (!ck.tool) {
    log_error("cannot create the tool");
    goto fail_tool;
  }
  ck.mcp = mcp_session_new(emit, &ck);
  if (!ck.mcp) goto fail_mcp;
  mcp_tool_t t = frames_tool_mcp(ck.tool);
  if (mcp_session_add_tool(ck.mcp, &t)) goto fail_add;
  uv_timer_init(&ck.loop, &ck.step);
  uv_timer_init(&ck.loop, &ck.watchdog);
  uv_timer_start(&ck.watchdog, on_watchdog,
                 ck.duration_ms + 5ull * ck.cfg.call_timeout_ms + CHECK_GRACE_MS, 0);

  send_json(&ck, json_pack("{s:s,s:i,s:s,s:{s:s,s:{},s:{s:s,s:s}}}", "jsonrpc", "2.0", "id", 1,
                           "method", "initialize", "params", "protocolVersion",
                           MCP_LATEST_LEGACY_VERSION, "capabilities", "clientInfo", "name",
                           "telescope-mcp check", "version", TELESCOPE_VERSION));
  uv_run(&ck.loop, UV_RUN_DEFAULT);
  rc = ck.exit_code;
  mcp_session_free(ck.mcp);
  vm_lws_close_strays(&ck.loop);
  if (uv_loop_close(&ck.loop)) log_error("handles were left open at exit");
  json_decref(ck.answer);
  json_decref(ck.budgets);
  free(ck.app_uri);
  config_close(&ck.cfg);
  return rc;

fail_add:
  mcp_session_free(ck.mcp);
fail_mcp:
  frames_tool_close(ck.tool, NULL, NULL);
  uv_run(&ck.loop, UV_RUN_DEFAULT);
fail_tool:
  uv_loop_close(&ck.loop);
done_args:
  json_decref(ck.budgets);
  config_close(&ck.cfg);
  return rc;
}
