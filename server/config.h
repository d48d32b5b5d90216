/* The command line and environment, parsed once into a struct every module
 * may read. Flags win over environment variables. */
#ifndef TELESCOPE_CONFIG_H
#define TELESCOPE_CONFIG_H

#include <stddef.h>
#include <stdio.h>

#include "log.h"

/* The clients --setup knows, for --help and error messages (setup.c prints
 * their configurations). */
#define SETUP_CLIENTS "claude-code|claude-desktop|cursor|vscode|codex|gemini"

typedef struct {
  log_level_t log_level;     /* --log-level / TELESCOPE_LOG_LEVEL, default warn */
  char *vm_service_uri;      /* --vm-service-uri / TELESCOPE_VM_SERVICE_URI; owned, NULL if none */
  char *vm_service_uri_file; /* --vm-service-uri-file / TELESCOPE_VM_SERVICE_URI_FILE; owned, NULL
                                if none */
  char *dtd_uri;             /* --dtd-uri / TELESCOPE_DTD_URI: find the app through this Dart
                                Tooling Daemon; owned, NULL if none (never with a VM-service URI) */
  unsigned call_timeout_ms;  /* --call-timeout-ms, default 3000 */
  int allow_remote;          /* --allow-remote: accept non-loopback VM-service hosts */
  size_t max_line_bytes;     /* --max-line-bytes, default 4 MiB */
  char *chart_dir;           /* --chart-dir: where chart "svg" files go; owned, NULL = the working
                                directory */
  unsigned eof_grace_ms;     /* TELESCOPE_EOF_GRACE_MS: calls in flight may finish this long after stdin EOF */
  char **sim_argv;           /* --sim: the telescope-sim options after it (borrowed from argv);
                                NULL without --sim */
  int sim_argc;              /* how many there are (may be 0) */
  const char *setup_client;  /* --setup CLIENT: print CLIENT's configuration and exit (setup.h);
                                borrowed from argv, NULL without --setup */
  char **setup_argv;         /* the server arguments after CLIENT (and an optional --); borrowed */
  int setup_argc;            /* how many there are (may be 0) */
} config_t;

#define CONFIG_DEFAULT_CALL_TIMEOUT_MS 3000u
#define CONFIG_DEFAULT_MAX_LINE_BYTES ((size_t)4 << 20)
#define CONFIG_DEFAULT_EOF_GRACE_MS 150u

typedef enum {
  CONFIG_RUN = 0,  /* go on and serve */
  CONFIG_DONE = 1, /* --help or --version was printed: exit 0 */
  CONFIG_USAGE = 2 /* bad command line, message written to err: exit 2 */
} config_result_t;

/* Fills cfg from argv and the process environment. Help and version go to
 * out, complaints to err. cfg must be released with config_close in every case. */
config_result_t config_parse(config_t *cfg, int argc, char **argv, FILE *out, FILE *err);
void config_close(config_t *cfg);

#endif
