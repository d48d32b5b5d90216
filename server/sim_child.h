/* `telescope-mcp --sim [telescope-sim options]`: telescope-sim as a child
 * process, so the tool can be tried with no Flutter app. The child writes its
 * ws URI to a private temporary file (`--uri-file`), which the server then
 * uses exactly as if `--vm-service-uri-file` had been given. The child never
 * touches our stdout (MCP only): its stdout (the banner, which holds the
 * token) goes to /dev/null, its stderr through our redacting logger. It ends
 * with the server: SIGTERM, reaped, SIGKILL if it lingers. */
#ifndef TELESCOPE_SIM_CHILD_H
#define TELESCOPE_SIM_CHILD_H

#include <uv.h>

typedef struct sim_child sim_child_t;

/* Spawns telescope-sim (found next to our own executable, else on PATH) with
 * `--port 0 --uri-file TMP` and then argv[0..argc-1] (borrowed; a later
 * option wins, so `--port` may be given; `--uri-file`, `--help` and `--version`
 * are refused: UV_EINVAL).
 * Returns 0 or a libuv error code (the reason logged). Whenever *out is set,
 * even on failure, it must be released with sim_child_stop. */
int sim_child_start(uv_loop_t *loop, char **argv, int argc, sim_child_t **out);
/* The file the child writes its ws URI to (owned by c). */
const char *sim_child_uri_file(const sim_child_t *c);
/* Runs the loop until the child has written its URI file (0), has exited
 * (UV_ESRCH; *exit_status set), or timeout_ms passed (UV_ETIMEDOUT). Call it
 * before anything else is active on the loop. */
int sim_child_wait_ready(sim_child_t *c, unsigned timeout_ms, int *exit_status);
/* Stops the child (SIGTERM, then SIGKILL after a grace), reaps it, closes
 * every handle, removes the temporary file, frees c, then calls done from the
 * loop. NULL c: done is called at once. */
void sim_child_stop(sim_child_t *c, void (*done)(void *arg), void *arg);

#endif
