/* appsrc_cpu: CPU samples over a closed session's janky frames (appsrc_cpu.h). */
#include "appsrc_cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "container_of.h"
#include "findings.h"
#include "log.h"
#include "vm_wire.h"

struct appsrc_cpu {
  vm_app_t *app;
  vm_call_t *call; /* the one VM call in flight */
  char isolate_id[256];
  char package[128]; /* the app's package ("" : only file: URIs are the app's) */
  cpuprof_window_t *w;
  size_t nw;
  int64_t ranges[APPSRC_CPU_MAX_RANGES][2];
  size_t nranges, next; /* next: the range to ask for */
  int64_t budget_us;
  double jank_over_us;
  cpuprof_t prof;
  appsrc_cpu_cb cb;
  void *arg;
  /* A large reply is parsed and added to prof on libuv's thread pool, off
   * the loop (VM_CLIENT_TEXT_MIN): while it is, nothing else touches prof. */
  uv_work_t work;
  char *text; /* the reply's copy, the worker's until it ends */
  size_t text_len;
  int working, cancelled;
  int work_rpc;   /* the reply was a JSON-RPC error with this code */
  char work_err[200]; /* "" or why the reply could not be read */
};

static int64_t ui_start(const frame_t *f) {
  return f->vsync_start_us + f->vsync_overhead_us;
}

static int janky(const frame_t *f, int64_t budget) {
  return !f->startup && f->build_us > budget;
}

static int calm(const frame_t *f, int64_t budget) {
  return !f->startup && f->build_us <= budget && f->raster_us <= budget;
}

size_t appsrc_cpu_plan(const frame_t *frames, size_t n, int64_t budget_us, cpuprof_window_t *w,
                       int64_t (*r)[2], size_t *nr) {
  size_t i, k, nw = 0, seen = 0;
  *nr = 0;
  /* Ranges around the newest janky frames first: the VM's sample buffer is
   * a ring, and the oldest samples are the first it loses. */
  for (i = n; i-- > 0 && seen < APPSRC_CPU_MAX_JANKY;) {
    const frame_t *f = &frames[i];
    if (!janky(f, budget_us) || f->vsync_start_us <= 0) continue;
    seen++;
    int64_t lo = ui_start(f) - APPSRC_CPU_PAD_US,
            hi = ui_start(f) + f->build_us + APPSRC_CPU_PAD_US;
    for (k = 0; k < *nr; k++)
      if (lo <= r[k][1] + APPSRC_CPU_MERGE_US && hi >= r[k][0] - APPSRC_CPU_MERGE_US &&
          (hi > r[k][1] ? hi : r[k][1]) - (lo < r[k][0] ? lo : r[k][0]) <= APPSRC_CPU_MAX_EXTENT_US)
        break;
    if (k < *nr) {
      if (lo < r[k][0]) r[k][0] = lo;
      if (hi > r[k][1]) r[k][1] = hi;
    } else if (*nr < APPSRC_CPU_MAX_RANGES) {
      r[*nr][0] = lo;
      r[*nr][1] = hi;
      (*nr)++;
    } else {
      break; /* no range left for it */
    }
  }
  /* The windows: janky and calm frames lying wholly inside a range. */
  for (i = 0; i < n; i++) {
    const frame_t *f = &frames[i];
    int j = janky(f, budget_us);
    if ((!j && !calm(f, budget_us)) || f->vsync_start_us <= 0) continue;
    int64_t s = ui_start(f), e = s + f->build_us;
    for (k = 0; k < *nr; k++)
      if (s >= r[k][0] && e <= r[k][1]) break;
    if (k == *nr) continue;
    w[nw++] = (cpuprof_window_t){s, e, j ? f->build_us - budget_us : 0};
  }
  return nw;
}

static void finish(appsrc_cpu_t *p, json_t *where, const char *note) {
  p->cb(p->arg, where, where ? &p->prof : NULL, note);
  appsrc_cpu_cancel(p);
}

static void ask_next(appsrc_cpu_t *p);

static json_t *where_of(appsrc_cpu_t *p) {
  int64_t min_excess = p->budget_us / FINDINGS_MIN_EXCESS_DIV;
  return cpuprof_where_json(&p->prof, p->w, p->nw, min_excess, p->jank_over_us);
}

/* A failed call: why, in the words an agent needs (and what to do). The
 * ranges already pulled still say where, with the loss told. */
static void failed(appsrc_cpu_t *p, const vm_result_t *res, const char *what) {
  char note[400];
  if (p->prof.nsamples && res->diag != DIAG_NONE) {
    json_t *where = where_of(p);
    snprintf(note, sizeof note,
             "CPU samples: %s not answered (%s): %zu of %zu time ranges pulled, `where` covers "
             "only those",
             what, res->detail ? res->detail : diag_name(res->diag), p->next - 1, p->nranges);
    finish(p, where, where ? note : "CPU samples: out of memory");
    return;
  }
  if (res->diag != DIAG_NONE)
    snprintf(note, sizeof note, "CPU samples: %s not answered (%s)", what,
             res->detail ? res->detail : diag_name(res->diag));
  else if (res->rpc_code == -32601)
    snprintf(note, sizeof note,
             "CPU samples: this VM service has no %s (a web app: DWDS "
             "serves no CPU samples)",
             what);
  else if (res->rpc_code == RPC_INTERNAL_ERROR || res->rpc_code == RPC_PARSE_ERROR)
    snprintf(note, sizeof note, "CPU samples: %s's reply could not be read (%s)", what,
             res->detail ? res->detail : "no detail");
  else
    snprintf(note, sizeof note,
             "CPU samples: %s failed (%d%s%s): is the Dart profiler off? `flutter run` has it "
             "on in debug and profile builds unless --no-enable-dart-profiling was given",
             what, res->rpc_code, res->detail ? ": " : "", res->detail ? res->detail : "");
  finish(p, NULL, note);
}

/* On the thread pool: the reply's JSON, then its functions and samples. */
static void parse_work(uv_work_t *w) {
  appsrc_cpu_t *p = container_of(w, appsrc_cpu_t, work);
  const json_t *result;
  json_t *msg = vm_wire_read_text(p->text, p->text_len, &result, &p->work_rpc, p->work_err,
                                  sizeof p->work_err);
  p->text = NULL;
  if (result)
    cpuprof_add(&p->prof, result, p->package[0] ? p->package : NULL, p->work_err,
                sizeof p->work_err);
  json_decref(msg);
#ifdef __GLIBC__
  /* The tree's hundreds of thousands of small blocks sit in this thread's
   * arena as fast bins; left there, the first large free of that arena on
   * the loop (prof's samples, at the close) merges them all on the loop:
   * 200 ms at 30 000 functions. Merged here instead (and given back). */
  malloc_trim(0);
#endif
}

static void parse_done(uv_work_t *w, int status) {
  appsrc_cpu_t *p = container_of(w, appsrc_cpu_t, work);
  p->working = 0;
  if (p->cancelled) {
    appsrc_cpu_cancel(p);
    return;
  }
  if (status || p->work_err[0] || p->work_rpc) {
    vm_result_t res = {DIAG_NONE, p->work_rpc ? p->work_rpc : RPC_INTERNAL_ERROR,
                       p->work_err[0] ? p->work_err : uv_strerror(status), NULL, NULL, 0};
    failed(p, &res, "getCpuSamples");
    return;
  }
  ask_next(p);
}

static void on_samples(void *arg, const vm_result_t *res) {
  appsrc_cpu_t *p = arg;
  char err[160];
  p->call = NULL;
  if (res->diag != DIAG_NONE || res->rpc_code) {
    failed(p, res, "getCpuSamples");
    return;
  }
  if (!res->result && res->records) { /* the reply's text: parsed off the loop */
    p->work_err[0] = 0;
    p->work_rpc = 0;
    if ((p->text = malloc(res->records_len))) {
      memcpy(p->text, res->records, res->records_len);
      p->text_len = res->records_len;
      if (!uv_queue_work(vm_app_loop(p->app), &p->work, parse_work, parse_done)) {
        p->working = 1;
        return;
      }
      free(p->text);
      p->text = NULL;
    }
    finish(p, NULL, "CPU samples: out of memory");
    return;
  }
  if (cpuprof_add(&p->prof, res->result, p->package[0] ? p->package : NULL, err, sizeof err)) {
    char note[220];
    snprintf(note, sizeof note, "CPU samples: %s", err);
    finish(p, NULL, note);
    return;
  }
  ask_next(p);
}

static void ask_next(appsrc_cpu_t *p) {
  if (p->next == p->nranges && !p->prof.nsamples) {
    finish(p, NULL,
           "CPU samples: the VM had none around the janky frames (the profiler saw no Dart "
           "work on the UI isolate there, or its sample ring had moved on)");
    return;
  }
  if (p->next == p->nranges) {
    json_t *where = where_of(p);
    finish(p, where, where ? "" : "CPU samples: out of memory");
    return;
  }
  const int64_t *r = p->ranges[p->next++];
  json_t *params = json_pack("{s:s,s:I,s:I}", "isolateId", p->isolate_id, "timeOriginMicros",
                             (json_int_t)r[0], "timeExtentMicros", (json_int_t)(r[1] - r[0]));
  int timeout_ms = APPSRC_CPU_CALL_TIMEOUTS * vm_app_timeout_ms(p->app);
  if (!params || !(p->call = vm_app_call_vm_within(p->app, "getCpuSamples", params, timeout_ms,
                                                   on_samples, p)))
    finish(p, NULL, "CPU samples: out of memory");
}

/* "package:my_app/main.dart" → "my_app". */
static void package_of(const char *uri, char *out, size_t len) {
  out[0] = 0;
  if (!uri || strncmp(uri, "package:", 8)) return;
  const char *slash = strchr(uri + 8, '/');
  size_t n = slash ? (size_t)(slash - (uri + 8)) : 0;
  if (n && n < len) {
    memcpy(out, uri + 8, n);
    out[n] = 0;
  }
}

static void on_isolate(void *arg, const vm_result_t *res) {
  appsrc_cpu_t *p = arg;
  p->call = NULL;
  if (res->diag != DIAG_NONE || res->rpc_code) {
    failed(p, res, "getIsolate");
    return;
  }
  const json_t *root = json_object_get(res->result, "rootLib");
  package_of(json_string_value(json_object_get(root, "uri")), p->package, sizeof p->package);
  ask_next(p);
}

appsrc_cpu_t *appsrc_cpu_pull(vm_app_t *app, const frame_t *frames, size_t n, int64_t budget_us,
                              double jank_over_us, appsrc_cpu_cb cb, void *arg, char *note,
                              size_t notelen) {
  const char *iso = app ? vm_app_isolate_id(app) : "";
  appsrc_cpu_t *p;
  snprintf(note, notelen, "%s", "");
  if (!app || !iso[0] || strlen(iso) >= sizeof p->isolate_id) {
    snprintf(note, notelen, "CPU samples: no isolate to ask");
    return NULL;
  }
  if (vm_app_is_web(app)) {
    snprintf(note, notelen, "CPU samples: none on the web (DWDS serves no getCpuSamples)");
    return NULL;
  }
  if (!(p = calloc(1, sizeof *p)) || !(p->w = malloc((n ? n : 1) * sizeof *p->w))) {
    free(p);
    snprintf(note, notelen, "CPU samples: out of memory");
    return NULL;
  }
  p->nw = appsrc_cpu_plan(frames, n, budget_us, p->w, p->ranges, &p->nranges);
  if (!p->nranges) {
    free(p->w);
    free(p);
    return NULL; /* no janky frame: nothing to say */
  }
  p->app = app;
  snprintf(p->isolate_id, sizeof p->isolate_id, "%s", iso);
  p->budget_us = budget_us;
  p->jank_over_us = jank_over_us;
  p->cb = cb;
  p->arg = arg;
  if (!(p->call = vm_app_call_vm(app, "getIsolate", json_pack("{s:s}", "isolateId", iso),
                                 on_isolate, p))) {
    free(p->w);
    free(p);
    snprintf(note, notelen, "CPU samples: out of memory");
    return NULL;
  }
  log_debug("cpu: %zu windows in %zu ranges", p->nw, p->nranges);
  return p;
}

void appsrc_cpu_cancel(appsrc_cpu_t *p) {
  if (!p) return;
  if (p->working) { /* the worker holds prof: freed when it ends */
    p->cancelled = 1;
    p->cb = NULL;
    return;
  }
  if (p->call) vm_call_cancel(p->call);
  cpuprof_close(&p->prof);
  free(p->w);
  free(p);
}
