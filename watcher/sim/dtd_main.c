/* telescope-dtd: a stand-in for the Dart Tooling Daemon (`dart
 * tooling-daemon`), and a one-shot client that registers an app with it the
 * way an IDE does for the apps it launches. See watcher/sim/README.md. */
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "dtd_daemon.h"
#include "dtd_methods.h"
#include "dtd_wsc.h"

static const char usage_text[] =
    "Usage: telescope-dtd [options]                 run the daemon\n"
    "       telescope-dtd register --dtd-uri URI --secret S --vm-service-uri WS [--name N]\n"
    "                                               [--exposed-uri WS]\n"
    "       telescope-dtd unregister --dtd-uri URI --secret S --vm-service-uri WS\n"
    "       telescope-dtd list --dtd-uri URI\n"
    "\n"
    "A stand-in for the Dart Tooling Daemon (DTD) with its ConnectedApp service:\n"
    "IDEs register the apps they launch there, and tools find them with\n"
    "ConnectedApp.getVmServices. register/unregister/list are one-shot clients\n"
    "that do what an IDE does; they print the daemon's answer as JSON.\n"
    "\n"
    "Daemon options:\n"
    "  --host ADDR                 listen address (default 127.0.0.1)\n"
    "  --port N                    listen port (default 0: ephemeral)\n"
    "  --machine                   print {\"tooling_daemon_details\":{\"uri\",\n"
    "                              \"trusted_client_secret\"}} instead of two lines\n"
    "  --unrestricted              registering needs no secret\n"
    "  --disable-service-auth-codes  no auth code in the URI\n"
    "  --no-connected-app          behave as a DTD from before the ConnectedApp\n"
    "                              service (getRegisteredServices does not list it;\n"
    "                              a name without a dot is -32601, not -32000)\n"
    "  --uri-file PATH             also write the URI there (no newline)\n"
    "  --exit-on-eof               stop when stdin reaches EOF\n"
    "  --verbose                   log connections and registrations on stderr\n"
    "  --help\n";

/* 8 random bytes, base64url: dtd_impl's _generateSecret. */
static void make_secret(char *out) {
  static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  unsigned char r[9] = {0};
  int fd = open("/dev/urandom", O_RDONLY);
  if (fd < 0 || read(fd, r, 8) != 8) {
    for (int i = 0; i < 8; i++) r[i] = (unsigned char)(rand() >> 3);
  }
  if (fd >= 0) close(fd);
  for (int i = 0, o = 0; i < 9; i += 3) {
    unsigned v = (unsigned)r[i] << 16 | (unsigned)r[i + 1] << 8 | r[i + 2];
    out[o++] = b64[v >> 18 & 63];
    out[o++] = b64[v >> 12 & 63];
    out[o++] = i + 1 < 8 ? b64[v >> 6 & 63] : '=';
    out[o++] = i + 2 < 8 ? b64[v & 63] : '=';
    out[o] = '\0';
  }
}

/* ---- the daemon ---- */

static dtd_daemon_t daemon_state;
static uv_signal_t sig_int, sig_term;
static uv_pipe_t stdin_pipe;
static int stdin_open;

static void stop_all(void) {
  uv_close((uv_handle_t *)&sig_int, NULL);
  uv_close((uv_handle_t *)&sig_term, NULL);
  if (stdin_open) {
    stdin_open = 0;
    uv_close((uv_handle_t *)&stdin_pipe, NULL);
  }
  dtd_daemon_stop(&daemon_state);
}

static void on_signal(uv_signal_t *h, int signum) {
  (void)h;
  (void)signum;
  stop_all();
}

static void alloc_cb(uv_handle_t *h, size_t n, uv_buf_t *b) {
  static char buf[4096];
  (void)h;
  (void)n;
  *b = uv_buf_init(buf, sizeof buf);
}

static void on_stdin(uv_stream_t *s, ssize_t n, const uv_buf_t *b) {
  (void)s;
  (void)b;
  if (n < 0) stop_all();
}

static int run_daemon(int argc, char **argv) {
  static const struct option opts[] = {{"host", required_argument, 0, 'H'},
                                       {"port", required_argument, 0, 'p'},
                                       {"machine", no_argument, 0, 'm'},
                                       {"unrestricted", no_argument, 0, 'u'},
                                       {"disable-service-auth-codes", no_argument, 0, 'd'},
                                       {"no-connected-app", no_argument, 0, 'n'},
                                       {"uri-file", required_argument, 0, 'f'},
                                       {"exit-on-eof", no_argument, 0, 'e'},
                                       {"verbose", no_argument, 0, 'v'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  dtd_daemon_t *d = &daemon_state;
  int machine = 0, no_auth = 0, eof = 0, c;
  const char *uri_file = NULL;
  uv_loop_t *loop = uv_default_loop();
  char uri[512];

  snprintf(d->host, sizeof d->host, "127.0.0.1");
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
      case 'H':
        snprintf(d->host, sizeof d->host, "%s", optarg);
        break;
      case 'p':
        d->port = atoi(optarg);
        break;
      case 'm':
        machine = 1;
        break;
      case 'u':
        d->unrestricted = 1;
        break;
      case 'd':
        no_auth = 1;
        break;
      case 'n':
        d->no_connected_app = 1;
        break;
      case 'f':
        uri_file = optarg;
        break;
      case 'e':
        eof = 1;
        break;
      case 'v':
        d->verbose = 1;
        break;
      case 'h':
        fputs(usage_text, stdout);
        return 0;
      default:
        fputs(usage_text, stderr);
        return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "telescope-dtd: unexpected argument '%s'\n", argv[optind]);
    return 2;
  }
  d->loop = loop;
  if (!no_auth) make_secret(d->token);
  make_secret(d->secret);
  dtd_methods_attach(d);
  if (dtd_daemon_start(d)) return 1;
  dtd_daemon_uri(d, uri, sizeof uri);
  if (uri_file) {
    FILE *f = fopen(uri_file, "w");
    if (!f || fputs(uri, f) < 0 || fclose(f)) {
      fprintf(stderr, "telescope-dtd: cannot write %s\n", uri_file);
      return 1;
    }
  }
  /* dtd_impl's own output (DartToolingDaemon.startService). */
  if (machine) {
    json_t *o = json_pack("{s:{s:s}}", "tooling_daemon_details", "uri", uri);
    if (!d->unrestricted)
      json_object_set_new(json_object_get(o, "tooling_daemon_details"), "trusted_client_secret",
                          json_string(d->secret));
    char *text = json_dumps(o, JSON_COMPACT);
    printf("%s\n", text);
    free(text);
    json_decref(o);
  } else {
    printf("The Dart Tooling Daemon is listening on %s\n", uri);
    if (!d->unrestricted) printf("Trusted Client Secret: %s\n", d->secret);
  }
  fflush(stdout);
  uv_signal_init(loop, &sig_int);
  uv_signal_init(loop, &sig_term);
  uv_signal_start(&sig_int, on_signal, SIGINT);
  uv_signal_start(&sig_term, on_signal, SIGTERM);
  if (eof && uv_guess_handle(0) == UV_NAMED_PIPE && uv_pipe_init(loop, &stdin_pipe, 0) == 0) {
    if (uv_pipe_open(&stdin_pipe, 0) == 0 &&
        uv_read_start((uv_stream_t *)&stdin_pipe, alloc_cb, on_stdin) == 0)
      stdin_open = 1;
    else
      uv_close((uv_handle_t *)&stdin_pipe, NULL);
  }
  uv_run(loop, UV_RUN_DEFAULT);
  uv_loop_close(loop);
  return 0;
}

/* ---- the one-shot client (what an IDE does) ---- */

static struct {
  dtd_wsc_t *w;
  char *request;
} one;

/* A one-shot: once the answer is printed there is nothing to tear down
 * politely (and lws must not be destroyed from inside its own callback). */
static void one_done(int rc) {
  fflush(stdout);
  fflush(stderr);
  _exit(rc);
}

static void one_open(void *arg) {
  (void)arg;
  dtd_wsc_send(one.w, one.request);
}

static void one_message(void *arg, const char *text, size_t len) {
  json_t *m = json_loadb(text, len, 0, NULL);
  (void)arg;
  if (!m || !json_equal(json_object_get(m, "id"), json_string("1"))) { /* an event: not ours */
    json_decref(m);
    return;
  }
  json_t *res = json_object_get(m, "result"), *err = json_object_get(m, "error");
  char *out = json_dumps(res ? res : err, JSON_COMPACT);
  printf("%s\n", out ? out : "null");
  fflush(stdout);
  free(out);
  json_decref(m);
  one_done(res ? 0 : 1);
}

static void one_close(void *arg, const char *why) {
  (void)arg;
  fprintf(stderr, "telescope-dtd: %s\n", why);
  one_done(1);
}

static void one_timeout(uv_timer_t *t) {
  (void)t;
  fprintf(stderr, "telescope-dtd: no answer within 5 s\n");
  one_done(1);
}

static int run_client(const char *verb, int argc, char **argv) {
  static const struct option opts[] = {
      {"dtd-uri", required_argument, 0, 'd'},        {"secret", required_argument, 0, 's'},
      {"vm-service-uri", required_argument, 0, 'u'}, {"name", required_argument, 0, 'n'},
      {"exposed-uri", required_argument, 0, 'x'},    {0, 0, 0, 0}};
  static const struct lws_protocols protocols[] = {DTD_WSC_PROTOCOL,
                                                   {NULL, NULL, 0, 0, 0, NULL, 0}};
  const char *dtd = NULL, *secret = NULL, *vm = NULL, *name = NULL, *exposed = NULL;
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
      case 'd':
        dtd = optarg;
        break;
      case 's':
        secret = optarg;
        break;
      case 'u':
        vm = optarg;
        break;
      case 'n':
        name = optarg;
        break;
      case 'x':
        exposed = optarg;
        break;
      default:
        fputs(usage_text, stderr);
        return 2;
    }
  }
  int list = !strcmp(verb, "list");
  if (!dtd || (!list && (!secret || !vm))) {
    fputs(usage_text, stderr);
    return 2;
  }
  json_t *params = json_object();
  if (!list) {
    json_object_set_new(params, "uri", json_string(vm));
    json_object_set_new(params, "secret", json_string(secret));
    if (name && !strcmp(verb, "register")) json_object_set_new(params, "name", json_string(name));
    if (exposed && !strcmp(verb, "register"))
      json_object_set_new(params, "exposedUri", json_string(exposed));
  }
  char method[64];
  snprintf(method, sizeof method, "ConnectedApp.%s",
           list                        ? "getVmServices"
           : !strcmp(verb, "register") ? "registerVmService"
                                       : "unregisterVmService");
  json_t *req = json_pack("{s:s, s:s, s:o, s:s}", "jsonrpc", "2.0", "method", method, "params",
                          params, "id", "1");
  one.request = json_dumps(req, JSON_COMPACT);
  json_decref(req);

  uv_loop_t *loop = uv_default_loop();
  struct lws_context_creation_info info;
  void *loops[1] = {loop};
  lws_set_log_level(LLL_ERR, NULL);
  memset(&info, 0, sizeof info);
  info.port = CONTEXT_PORT_NO_LISTEN;
  info.protocols = protocols;
  info.options = LWS_SERVER_OPTION_LIBUV;
  info.foreign_loops = loops;
  struct lws_context *ctx = lws_create_context(&info);
  if (!ctx) return 1;
  static uv_timer_t timer;
  uv_timer_init(loop, &timer);
  uv_timer_start(&timer, one_timeout, 5000, 0);
  char err[200];
  dtd_wsc_cbs_t cbs = {one_open, one_message, one_close, NULL};
  one.w = dtd_wsc_open(ctx, NULL, dtd, &cbs, err, sizeof err);
  if (!one.w) {
    fprintf(stderr, "telescope-dtd: cannot dial the daemon: %s\n", err);
    one_done(1);
  }
  uv_run(loop, UV_RUN_DEFAULT);
  return 1;
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  if (argc > 1 &&
      (!strcmp(argv[1], "register") || !strcmp(argv[1], "unregister") || !strcmp(argv[1], "list")))
    return run_client(argv[1], argc - 1, argv + 1);
  return run_daemon(argc, argv);
}
