/* Runs telescope-sim as a child process for the vm integration tests: an
 * ephemeral port, its printed URI, stdin commands answered by `ok …` lines.
 * On Linux the child dies with the test process (PR_SET_PDEATHSIG), so a failing
 * Check test in fork mode never leaves a simulator behind. */
#ifndef TELESCOPE_TEST_VM_SIM_PROC_H
#define TELESCOPE_TEST_VM_SIM_PROC_H

#include <check.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  pid_t pid;
  int in_fd, out_fd;
  char buf[1 << 16];
  size_t len;
  char http_uri[512]; /* as printed: http://127.0.0.1:P/TOKEN=/ */
  char devtools[1024];
  char token[64];
  int port;
} sim_proc_t;

static long long mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* nanosleep: usleep left POSIX in 2008. */
static void pause_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
  nanosleep(&ts, NULL);
}

/* Reads one line (without '\n') into line within ms; 0 on timeout/EOF. */
static int sim_read_line(sim_proc_t *s, char *line, size_t n, int ms) {
  long long deadline = mono_ms() + ms;
  for (;;) {
    char *nl = memchr(s->buf, '\n', s->len);
    if (nl) {
      size_t l = (size_t)(nl - s->buf);
      snprintf(line, n, "%.*s", (int)l, s->buf);
      memmove(s->buf, nl + 1, s->len - l - 1);
      s->len -= l + 1;
      return 1;
    }
    long long left = deadline - mono_ms();
    if (left <= 0) return 0;
    struct pollfd p = {s->out_fd, POLLIN, 0};
    if (poll(&p, 1, (int)left) <= 0) continue;
    if (s->len == sizeof s->buf) s->len = 0; /* a line that long is junk */
    ssize_t r = read(s->out_fd, s->buf + s->len, sizeof s->buf - s->len);
    if (r <= 0) return 0;
    s->len += (size_t)r;
  }
}

/* Starts the simulator with extra arguments (NULL-terminated). */
static void sim_start(sim_proc_t *s, const char *const *extra) {
  memset(s, 0, sizeof *s);
  int in[2], out[2];
  ck_assert_int_eq(pipe(in), 0);
  ck_assert_int_eq(pipe(out), 0);
  const char *argv[32];
  int a = 0;
  argv[a++] = TELESCOPE_BINARY_DIR "/telescope-sim";
  argv[a++] = "--port";
  argv[a++] = "0";
  argv[a++] = "--fps";
  argv[a++] = "60";
  for (int i = 0; extra && extra[i] && a < 30; i++) argv[a++] = extra[i];
  argv[a] = NULL;
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
#ifdef __linux__ /* elsewhere a failing test may leave its simulator behind */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[0]);
    close(in[1]);
    close(out[0]);
    close(out[1]);
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  s->pid = pid;
  s->in_fd = in[1];
  s->out_fd = out[0];
  char line[2048];
  long long deadline = mono_ms() + 5000;
  while (!s->http_uri[0] || !s->devtools[0]) {
    ck_assert_msg(sim_read_line(s, line, sizeof line, (int)(deadline - mono_ms())),
                  "telescope-sim printed no URI");
    const char *at = strstr(line, "is available at: ");
    if (!at) continue;
    at += strlen("is available at: ");
    if (strstr(line, "Dart VM Service"))
      snprintf(s->http_uri, sizeof s->http_uri, "%s", at);
    else
      snprintf(s->devtools, sizeof s->devtools, "%s", at);
  }
  /* http://HOST:PORT/TOKEN/ with HOST 127.0.0.1, ::1 or [::1] */
  const char *tok = strchr(s->http_uri + strlen("http://"), '/');
  ck_assert_ptr_nonnull(tok);
  const char *pc = tok;
  while (pc > s->http_uri && pc[-1] != ':') pc--;
  s->port = atoi(pc);
  ck_assert_int_eq(sscanf(tok, "/%63[^/]", s->token), 1);
  ck_assert_int_gt(s->port, 0);
}

/* Sends a command; returns the `ok …` answer (static) or fails the test. */
static const char *sim_cmd(sim_proc_t *s, const char *cmd) {
  static char line[1 << 16];
  char msg[256];
  int n = snprintf(msg, sizeof msg, "%s\n", cmd);
  ck_assert_int_eq(write(s->in_fd, msg, (size_t)n), n);
  for (;;) {
    ck_assert_msg(sim_read_line(s, line, sizeof line, 5000), "no answer to '%s'", cmd);
    if (strncmp(line, "ok", 2) == 0) return line;
    ck_assert_msg(strncmp(line, "error", 5) != 0, "'%s' answered %s", cmd, line);
  }
}

static void sim_kill(sim_proc_t *s) {
  if (s->pid <= 0) return;
  kill(s->pid, SIGKILL);
  waitpid(s->pid, NULL, 0);
  close(s->in_fd);
  close(s->out_fd);
  s->pid = 0;
}

static void sim_stop(sim_proc_t *s) {
  if (s->pid <= 0) return;
  ssize_t w = write(s->in_fd, "quit\n", 5);
  (void)w;
  long long deadline = mono_ms() + 2000;
  while (mono_ms() < deadline) {
    if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
      close(s->in_fd);
      close(s->out_fd);
      s->pid = 0;
      return;
    }
    pause_ms(5);
  }
  sim_kill(s);
}

#endif
