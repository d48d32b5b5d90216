#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>


static const char usage_text[] =
    "Usage: telescope-mcp [OPTIONS]\n"
    "       telescope-mcp [OPTIONS] --sim [SIM OPTIONS]\n"
    "       telescope-mcp check [CHECK OPTIONS]   (measure once for CI; check --help)\n"
    "       telescope-mcp --setup CLIENT [-- OPTIONS]   (register with an MCP client)\n"
    "\n"
    "An MCP server on stdio that gives AI coding agents sight of a Flutter app's\n"
    "frame performance through one tool, telescope_frames. Start it from an MCP\n"
    "client (Claude Code, Cursor, VS Code, ...); it reads JSON-RPC lines on stdin\n"
    "and writes them on stdout. Logs go to stderr.\n"
    "\n"
    "Options:\n"
    "  --vm-service-uri URI       the app's VM service, any form `flutter run` prints\n"
    "                             (http://127.0.0.1:PORT/TOKEN=/, ws://.../ws, DevTools ?uri=)\n"
    "  --vm-service-uri-file PATH read the URI from this file (e.g. flutter run\n"
    "                             --vmservice-out-file); re-read when the app restarts\n"
    "  --dtd-uri URI              find the app through the Dart Tooling Daemon at URI\n"
    "                             (flutter run --print-dtd, the IDE, dart tooling-daemon):\n"
    "                             one app listed is used; status lists none or several\n"
    "                             (a call names one with app; several apps at once: each\n"
    "                             call names its app, docs/tool.md \"Several apps\")\n"
    "  --call-timeout-ms N        give up on a VM-service call after N ms (default 3000)\n"
    "  --allow-remote             accept a VM service (or DTD) on a non-loopback host\n"
    "  --max-line-bytes N         longest accepted JSON-RPC line (default 4194304)\n"
    "  --chart-dir DIR            where chart \"svg\"/\"trace\" (stop/capture) writes its files,\n"
    "                             created if missing (default: the working directory)\n"
    "  --log-level LEVEL          error|warn|info|debug|trace on stderr (default warn)\n"
    "  --sim [SIM OPTIONS]        start telescope-sim (a simulated Flutter app) as a child\n"
    "                             and use it; every argument after --sim goes to the sim\n"
    "                             (e.g. --sim --scenario janky --seed 7); it ends with us\n"
    "  --setup CLIENT [-- OPTIONS]  print what registers this server, by its absolute\n"
    "                             path and with OPTIONS, with CLIENT: " SETUP_CLIENTS "\n"
    "                             (claude-code: the claude mcp add command; the others:\n"
    "                             the JSON or TOML on stdout, its file on stderr)\n"
    "  --help, -h                 print this help and exit\n"
    "  --version                  print the version and exit\n"
    "\n"
    "Environment (flags win):\n"
    "  TELESCOPE_VM_SERVICE_URI       as --vm-service-uri\n"
    "  TELESCOPE_VM_SERVICE_URI_FILE  as --vm-service-uri-file\n"
    "  TELESCOPE_DTD_URI              as --dtd-uri (a VM-service URI, flag or\n"
    "                                 variable, and a DTD URI exclude each other)\n"
    "  TELESCOPE_LOG_LEVEL            as --log-level\n"
    "  TELESCOPE_EOF_GRACE_MS         after stdin closes, calls in flight may finish\n"
    "                                 for this many ms (default 150, 0 to 60000)\n"
    "  (with --sim the URI variables are ignored)\n"
    "\n"
    "Exit status: 0 on stdin EOF, SIGTERM or SIGINT; 2 on a bad command line;\n"
    "1 on a fatal runtime error.\n"
    "\n"
    "More: man telescope-mcp; the schemas are in share/telescope/schema.\n";

/* Parses a whole decimal number in [lo, hi]. */
static int parse_uint(const char *s, unsigned long long lo, unsigned long long hi,
                      unsigned long long *out) {
  if (!s || !*s || *s == '-' || *s == '+') return -1;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

static int set_str(char **dst, const char *v) {
  free(*dst);
  *dst = strdup(v);
  return *dst ? 0 : -1;
}

config_result_t config_parse(config_t *cfg, int argc, char **argv, FILE *out, FILE *err) {
  memset(cfg, 0, sizeof *cfg);
  cfg->log_level = LOG_WARN;
  cfg->call_timeout_ms = CONFIG_DEFAULT_CALL_TIMEOUT_MS;
  cfg->max_line_bytes = CONFIG_DEFAULT_MAX_LINE_BYTES;
  cfg->eof_grace_ms = CONFIG_DEFAULT_EOF_GRACE_MS;

  const char *env;
  if ((env = getenv("TELESCOPE_LOG_LEVEL")) && *env) {
    int l = log_level_parse(env);
    if (l < 0) {
      fprintf(
          err,
          "telescope-mcp: TELESCOPE_LOG_LEVEL: unknown level '%s' (error|warn|info|debug|trace)\n",
          env);
      return CONFIG_USAGE;
    }
    cfg->log_level = (log_level_t)l;
  }
  if ((env = getenv("TELESCOPE_EOF_GRACE_MS")) && *env) {
    unsigned long long g;
    if (parse_uint(env, 0, 60000, &g)) {
      fprintf(err, "telescope-mcp: TELESCOPE_EOF_GRACE_MS: must be an integer from 0 to 60000, got '%s'\n", env);
      return CONFIG_USAGE;
    }
    cfg->eof_grace_ms = (unsigned)g;
  }
  if ((env = getenv("TELESCOPE_VM_SERVICE_URI")) && *env && set_str(&cfg->vm_service_uri, env))
    goto oom;
  if ((env = getenv("TELESCOPE_VM_SERVICE_URI_FILE")) && *env &&
      set_str(&cfg->vm_service_uri_file, env))
    goto oom;
  if ((env = getenv("TELESCOPE_DTD_URI")) && *env && set_str(&cfg->dtd_uri, env)) goto oom;
  const char *dtd_flag = NULL;

  const char *uri_flag = NULL; /* a URI given as a flag, which --sim would contradict */
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage_text, out);
      return CONFIG_DONE;
    }
    if (strcmp(a, "--version") == 0) {
      fprintf(out, "telescope-mcp %s\n", TELESCOPE_VERSION);
      return CONFIG_DONE;
    }
    /* Everything after --sim is the sim's: our own flags must come first. */
    if (strcmp(a, "--sim") == 0) {
      cfg->sim_argv = argv + i + 1;
      cfg->sim_argc = argc - i - 1;
      break;
    }
    /* Likewise everything after --setup CLIENT is the configured server's. */
    if (strcmp(a, "--setup") == 0) {
      if (i != 1) {
        fprintf(err, "telescope-mcp: --setup comes first; the options of the server it "
                     "registers go after --setup CLIENT --\n");
        return CONFIG_USAGE;
      }
      if (i + 1 >= argc) {
        fprintf(err, "telescope-mcp: --setup needs a client: %s\n", SETUP_CLIENTS);
        return CONFIG_USAGE;
      }
      cfg->setup_client = argv[i + 1];
      i += 2;
      if (i < argc && strcmp(argv[i], "--") == 0) i++;
      cfg->setup_argv = argv + i;
      cfg->setup_argc = argc - i;
      break;
    }
    if (strcmp(a, "--allow-remote") == 0) {
      cfg->allow_remote = 1;
      continue;
    }
    /* The valued flags, as "--flag VALUE" or "--flag=VALUE". */
    static const char *valued[] = {"--log-level",
                                   "--vm-service-uri",
                                   "--vm-service-uri-file",
                                   "--dtd-uri",
                                   "--call-timeout-ms",
                                   "--max-line-bytes",
                                   "--chart-dir",
                                   NULL};
    const char *flag = NULL, *val = NULL;
    for (const char **f = valued; *f; f++) {
      size_t n = strlen(*f);
      if (strncmp(a, *f, n) == 0 && (a[n] == '\0' || a[n] == '=')) {
        flag = *f;
        if (a[n] == '=')
          val = a + n + 1;
        else if (i + 1 < argc)
          val = argv[++i];
        break;
      }
    }
    if (!flag) {
      fprintf(err, "telescope-mcp: unknown option '%s' (see --help)\n", a);
      return CONFIG_USAGE;
    }
    if (!val) {
      fprintf(err, "telescope-mcp: %s needs a value (see --help)\n", flag);
      return CONFIG_USAGE;
    }
    unsigned long long n;
    if (strcmp(flag, "--log-level") == 0) {
      int l = log_level_parse(val);
      if (l < 0) {
        fprintf(err,
                "telescope-mcp: --log-level: unknown level '%s' (error|warn|info|debug|trace)\n",
                val);
        return CONFIG_USAGE;
      }
      cfg->log_level = (log_level_t)l;
    } else if (strcmp(flag, "--vm-service-uri") == 0) {
      if (!*val) {
        fprintf(err, "telescope-mcp: --vm-service-uri: empty URI\n");
        return CONFIG_USAGE;
      }
      if (set_str(&cfg->vm_service_uri, val)) goto oom;
      uri_flag = "--vm-service-uri";
    } else if (strcmp(flag, "--vm-service-uri-file") == 0) {
      if (!*val) {
        fprintf(err, "telescope-mcp: --vm-service-uri-file: empty path\n");
        return CONFIG_USAGE;
      }
      if (set_str(&cfg->vm_service_uri_file, val)) goto oom;
      uri_flag = "--vm-service-uri-file";
    } else if (strcmp(flag, "--dtd-uri") == 0) {
      if (!*val) {
        fprintf(err, "telescope-mcp: --dtd-uri: empty URI\n");
        return CONFIG_USAGE;
      }
      if (set_str(&cfg->dtd_uri, val)) goto oom;
      dtd_flag = "--dtd-uri";
    } else if (strcmp(flag, "--chart-dir") == 0) {
      if (!*val) {
        fprintf(err, "telescope-mcp: --chart-dir: empty path\n");
        return CONFIG_USAGE;
      }
      if (set_str(&cfg->chart_dir, val)) goto oom;
    } else if (strcmp(flag, "--call-timeout-ms") == 0) {
      if (parse_uint(val, 1, 600000, &n)) {
        fprintf(err,
                "telescope-mcp: --call-timeout-ms: must be an integer from 1 to 600000, got '%s'\n",
                val);
        return CONFIG_USAGE;
      }
      cfg->call_timeout_ms = (unsigned)n;
    } else if (strcmp(flag, "--max-line-bytes") == 0) {
      if (parse_uint(val, 1024, (unsigned long long)1 << 30, &n)) {
        fprintf(err,
                "telescope-mcp: --max-line-bytes: must be an integer from 1024 to 1073741824, got "
                "'%s'\n",
                val);
        return CONFIG_USAGE;
      }
      cfg->max_line_bytes = (size_t)n;
    }
  }
  if (cfg->sim_argv) {
    if (uri_flag || dtd_flag) {
      fprintf(err, "telescope-mcp: --sim and %s exclude each other (see --help)\n",
              uri_flag ? uri_flag : dtd_flag);
      return CONFIG_USAGE;
    }
    /* The sim's URI file replaces any app named in the environment. */
    free(cfg->vm_service_uri);
    free(cfg->vm_service_uri_file);
    free(cfg->dtd_uri);
    cfg->vm_service_uri = cfg->vm_service_uri_file = cfg->dtd_uri = NULL;
  }
  /* The app comes from a VM-service URI or from a DTD, not both: a flag
   * overrides the other kind's variable; two flags, or two variables,
   * contradict each other. */
  if (cfg->dtd_uri && (cfg->vm_service_uri || cfg->vm_service_uri_file)) {
    if (dtd_flag && !uri_flag) {
      free(cfg->vm_service_uri);
      free(cfg->vm_service_uri_file);
      cfg->vm_service_uri = cfg->vm_service_uri_file = NULL;
    } else if (uri_flag && !dtd_flag) {
      free(cfg->dtd_uri);
      cfg->dtd_uri = NULL;
    } else {
      fprintf(err,
              "telescope-mcp: %s and %s exclude each other: the app comes from one or the "
              "other (see --help)\n",
              dtd_flag ? dtd_flag : "TELESCOPE_DTD_URI",
              uri_flag ? uri_flag
                       : cfg->vm_service_uri ? "TELESCOPE_VM_SERVICE_URI"
                                             : "TELESCOPE_VM_SERVICE_URI_FILE");
      return CONFIG_USAGE;
    }
  }
  return CONFIG_RUN;

oom:
  fprintf(err, "telescope-mcp: out of memory\n");
  return CONFIG_USAGE;
}

void config_close(config_t *cfg) {
  free(cfg->vm_service_uri);
  free(cfg->vm_service_uri_file);
  free(cfg->chart_dir);
  free(cfg->dtd_uri);
  cfg->vm_service_uri = cfg->vm_service_uri_file = cfg->chart_dir = cfg->dtd_uri = NULL;
}
