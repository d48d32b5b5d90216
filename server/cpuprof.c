/* cpuprof: where to edit, from the VM's CPU samples (cpuprof.h). */
#include "cpuprof.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"

static const char *const code_names[] = {"app", "package", "flutter", "dart", "vm"};

const char *cpuprof_code_name(cpuprof_code_t code) {
  return code_names[code];
}

static int starts(const char *s, const char *prefix) {
  return s && !strncmp(s, prefix, strlen(prefix));
}

/* The Flutter SDK's own packages (packages/ in flutter/flutter). */
static int flutter_package(const char *uri) {
  static const char *const sdk[] = {"package:flutter/",
                                    "package:flutter_test/",
                                    "package:flutter_driver/",
                                    "package:flutter_localizations/",
                                    "package:flutter_web_plugins/",
                                    "package:sky_engine/"};
  for (size_t i = 0; i < sizeof sdk / sizeof *sdk; i++)
    if (starts(uri, sdk[i])) return 1;
  return 0;
}

cpuprof_code_t cpuprof_code_of(const char *uri, const char *resolved, const char *app_package) {
  if (!uri || !*uri) uri = resolved;
  if (!uri || !*uri) return CPUPROF_VM;
  if (starts(uri, "dart:")) return CPUPROF_DART;
  if (flutter_package(uri)) return CPUPROF_FLUTTER;
  if (starts(uri, "package:")) {
    size_t n = app_package ? strlen(app_package) : 0;
    if (n && !strncmp(uri + 8, app_package, n) && uri[8 + n] == '/') return CPUPROF_APP;
    return CPUPROF_PACKAGE;
  }
  /* A file: URI is the app's unless it lies in a package cache or the SDK
   * (a path dependency outside them is the developer's code too). */
  if (starts(uri, "file:") || starts(uri, "org-dartlang-app:"))
    return strstr(uri, "/.pub-cache/") || strstr(uri, "/flutter/packages/") ||
                   strstr(uri, "/flutter/bin/cache/")
               ? CPUPROF_PACKAGE
               : CPUPROF_APP;
  return CPUPROF_VM;
}

static const char *str_of(const json_t *o, const char *key) {
  return json_string_value(json_object_get(o, key));
}

/* "Owner.name" for a method (owner @Class) or a closure (owner @Function),
 * the bare name for a top-level function or a native one. */
static char *name_of(const json_t *func) {
  const char *name = str_of(func, "name");
  const json_t *owner = json_object_get(func, "owner");
  const char *otype = str_of(owner, "type"), *oname = str_of(owner, "name");
  if (!name) name = "?";
  if (oname && otype && (!strcmp(otype, "@Class") || !strcmp(otype, "@Function"))) {
    size_t n = strlen(oname) + strlen(name) + 2;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s.%s", oname, name);
    return s;
  }
  return strdup(name);
}

/* Where an agent opens it: lib/<rest> for the app's own package: URI (the
 * package convention), the path of a file: URL, else the URI. */
static char *file_of(const char *uri, const char *resolved, cpuprof_code_t code,
                     const char *app_package) {
  if (code == CPUPROF_APP && starts(uri, "package:") && app_package) {
    const char *rest = uri + 8 + strlen(app_package) + 1;
    size_t n = strlen(rest) + 5;
    char *s = malloc(n);
    if (s) snprintf(s, n, "lib/%s", rest);
    return s;
  }
  if (starts(resolved, "file://")) return strdup(resolved + 7);
  if (uri && *uri) return strdup(uri);
  return resolved && *resolved ? strdup(resolved) : NULL;
}

static int fn_parse(cpuprof_fn_t *f, const json_t *pf, const char *app_package) {
  const json_t *func = json_object_get(pf, "function");
  const char *kind = str_of(pf, "kind"), *resolved = str_of(pf, "resolvedUrl");
  const json_t *loc = json_object_get(func, "location");
  const char *uri = str_of(json_object_get(loc, "script"), "uri");
  memset(f, 0, sizeof *f);
  f->code = kind && strcmp(kind, "Dart") ? CPUPROF_VM : cpuprof_code_of(uri, resolved, app_package);
  f->name = name_of(func);
  json_int_t line = json_integer_value(json_object_get(loc, "line"));
  f->line = line > 0 ? line : 0;
  if (f->code != CPUPROF_VM) f->file = file_of(uri, resolved, f->code, app_package);
  return f->name ? 0 : -1;
}

/* FNV-1a over a function's identity: name, file, line. */
static uint64_t fn_hash(const cpuprof_fn_t *f) {
  uint64_t h = 14695981039346656037ull;
  const char *parts[2] = {f->name, f->file ? f->file : ""};
  for (int k = 0; k < 2; k++) {
    for (const unsigned char *c = (const unsigned char *)parts[k]; *c; c++)
      h = (h ^ *c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull; /* "a" + "bc" is not "ab" + "c" */
  }
  for (int k = 0; k < 8; k++) h = (h ^ (((uint64_t)f->line >> (8 * k)) & 0xff)) * 1099511628211ull;
  return h;
}

static int fn_same(const cpuprof_fn_t *a, const cpuprof_fn_t *b) {
  if (a->line != b->line || strcmp(a->name, b->name)) return 0;
  if (!a->file || !b->file) return a->file == b->file;
  return !strcmp(a->file, b->file);
}

/* The slot holding f's equal, or the empty slot where it would go. */
static size_t fn_slot(const cpuprof_t *p, const cpuprof_fn_t *f) {
  size_t mask = p->nslots - 1, i = (size_t)fn_hash(f) & mask;
  while (p->slots[i] >= 0 && !fn_same(&p->fns[p->slots[i]], f)) i = (i + 1) & mask;
  return i;
}

/* Room for want functions at most half full: 0, or -1 (out of memory). */
static int fn_reserve(cpuprof_t *p, size_t want) {
  size_t n = p->nslots ? p->nslots : 64, i;
  while (n < 2 * want) n *= 2;
  if (n == p->nslots) return 0;
  int32_t *old = p->slots;
  if (!(p->slots = malloc(n * sizeof *p->slots))) {
    p->slots = old;
    return -1;
  }
  memset(p->slots, 0xff, n * sizeof *p->slots); /* every slot -1 */
  p->nslots = n;
  free(old);
  for (i = 0; i < p->nfns; i++) p->slots[fn_slot(p, &p->fns[i])] = (int32_t)i;
  return 0;
}

static int by_ts(const void *a, const void *b) {
  int64_t x = ((const cpuprof_sample_t *)a)->ts_us, y = ((const cpuprof_sample_t *)b)->ts_us;
  return (x > y) - (x < y);
}

/* One reply being added: its functions are read only when a sample's stack
 * names them (a debug app lists tens of thousands, nearly all never
 * sampled). map: the reply's function index → index in p->fns, -1 not yet
 * read. */
typedef struct {
  cpuprof_t *p;
  const json_t *fns;
  int32_t *map;
  size_t nf;
  const char *app_package;
  int oom;
} adding_t;

/* The reply's function k as an index into p->fns (the held one with the
 * same identity, else a new one), or -1 (out of memory: a->oom). */
static int32_t fn_index(adding_t *a, size_t k) {
  cpuprof_t *p = a->p;
  cpuprof_fn_t f;
  if (a->map[k] >= 0) return a->map[k];
  if (p->nfns == p->fncap) {
    size_t cap = p->fncap ? p->fncap * 2 : 64;
    cpuprof_fn_t *nf = realloc(p->fns, cap * sizeof *nf);
    if (!nf) goto oom;
    p->fns = nf;
    p->fncap = cap;
  }
  if (fn_reserve(p, p->nfns + 1)) goto oom;
  if (fn_parse(&f, json_array_get(a->fns, k), a->app_package)) {
    free(f.file);
    goto oom;
  }
  size_t slot = fn_slot(p, &f);
  if (p->slots[slot] >= 0) { /* held from an earlier reply */
    free(f.name);
    free(f.file);
  } else {
    p->slots[slot] = (int32_t)p->nfns;
    p->fns[p->nfns++] = f;
  }
  return a->map[k] = p->slots[slot];
oom:
  a->oom = 1;
  return -1;
}

/* The function a sample is charged to: the innermost app frame, else the
 * top one; -1 when the stack is empty or names no function (or on OOM). */
static int32_t charge_of(adding_t *a, const json_t *stack, int32_t *leaf) {
  size_t i, n = json_array_size(stack);
  *leaf = -1;
  for (i = 0; i < n && i < CPUPROF_MAX_DEPTH; i++) {
    json_int_t k = json_integer_value(json_array_get(stack, i));
    if (!json_is_integer(json_array_get(stack, i)) || k < 0 || (size_t)k >= a->nf) return -1;
    int32_t fn = fn_index(a, (size_t)k);
    if (fn < 0) return -1;
    if (*leaf < 0) *leaf = fn;
    if (a->p->fns[fn].code == CPUPROF_APP) return fn;
  }
  return *leaf;
}

int cpuprof_add(cpuprof_t *p, const json_t *reply, const char *app_package, char *err,
                size_t errlen) {
  const json_t *fns = json_object_get(reply, "functions");
  const json_t *samples = json_object_get(reply, "samples");
  json_int_t period = json_integer_value(json_object_get(reply, "samplePeriod"));
  size_t nf = json_array_size(fns), ns = json_array_size(samples), i;
  if (!json_is_object(reply) || !json_is_array(fns) || !json_is_array(samples) || period <= 0) {
    snprintf(err, errlen, "not a CpuSamples reply (functions, samples, samplePeriod)");
    return -1;
  }
  adding_t a = {p, fns, malloc((nf ? nf : 1) * sizeof *a.map), nf, app_package, 0};
  cpuprof_sample_t *nsam = realloc(p->samples, (p->nsamples + ns + 1) * sizeof *nsam);
  if (nsam) p->samples = nsam;
  if (!a.map || !nsam) goto oom;
  memset(a.map, 0xff, (nf ? nf : 1) * sizeof *a.map); /* every entry -1: not read yet */
  size_t had = p->nsamples;
  for (i = 0; i < ns; i++) {
    const json_t *s = json_array_get(samples, i);
    const json_t *ts = json_object_get(s, "timestamp");
    cpuprof_sample_t x;
    if (!json_is_integer(ts)) continue;
    x.ts_us = json_integer_value(ts);
    x.charge = charge_of(&a, json_object_get(s, "stack"), &x.leaf);
    if (a.oom) goto oom;
    if (x.charge < 0) continue;
    /* One sample per timestamp: overlapping windows ask for it twice. */
    cpuprof_sample_t *hit = had ? bsearch(&x, p->samples, had, sizeof *p->samples, by_ts) : NULL;
    if (!hit) p->samples[p->nsamples++] = x;
  }
  qsort(p->samples, p->nsamples, sizeof *p->samples, by_ts);
  p->period_us = period;
  free(a.map);
  return 0;
oom:
  free(a.map);
  snprintf(err, errlen, "out of memory reading CPU samples");
  return -1;
}

void cpuprof_close(cpuprof_t *p) {
  for (size_t i = 0; i < p->nfns; i++) {
    free(p->fns[i].name);
    free(p->fns[i].file);
  }
  free(p->fns);
  free(p->samples);
  free(p->slots);
  memset(p, 0, sizeof *p);
}

/* One (function, window) charge: sorted so that each function's windows
 * are consecutive. */
typedef struct {
  int32_t fn, win, leaf;
} hit_t;

static int by_fn_win(const void *a, const void *b) {
  const hit_t *x = a, *y = b;
  if (x->fn != y->fn) return x->fn < y->fn ? -1 : 1;
  return (x->win > y->win) - (x->win < y->win);
}

static int by_start(const void *a, const void *b) {
  int64_t x = ((const cpuprof_window_t *)a)->start_us, y = ((const cpuprof_window_t *)b)->start_us;
  return (x > y) - (x < y);
}

/* The window holding ts (windows sorted by start; they do not overlap:
 * one UI thread), or -1. */
static int32_t window_of(const cpuprof_window_t *w, size_t n, int64_t ts) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (w[mid].start_us <= ts)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0 || ts >= w[lo - 1].end_us) return -1;
  return (int32_t)(lo - 1);
}

typedef struct {
  int32_t fn, leaf, frames;
  double janky_us, calm_us, explained_us;
} rank_t;

static int by_explained(const void *a, const void *b) {
  const rank_t *x = a, *y = b;
  if (x->explained_us != y->explained_us) return x->explained_us > y->explained_us ? -1 : 1;
  return x->fn - y->fn;
}

static json_t *fn_json(const cpuprof_t *p, const rank_t *r, size_t njanky, size_t ncalm,
                       double jank_over_us) {
  const cpuprof_fn_t *f = &p->fns[r->fn];
  json_t *o = json_pack(
      "{s:s,s:s,s:I,s:I,s:I,s:f,s:i}", "function", f->name, "code", cpuprof_code_name(f->code),
      "jankyUs", (json_int_t)llround(r->janky_us / (double)njanky), "calmUs",
      (json_int_t)llround(ncalm ? r->calm_us / (double)ncalm : 0), "explainedUs",
      (json_int_t)llround(r->explained_us), "explains",
      findings_share((int64_t)llround(r->explained_us), jank_over_us), "frames", (int)r->frames);
  if (!o) return NULL;
  if ((f->file && json_object_set_new(o, "file", json_string(f->file))) ||
      (f->line && json_object_set_new(o, "line", json_integer(f->line))) ||
      (r->leaf >= 0 && r->leaf != r->fn &&
       json_object_set_new(o, "top", json_string(p->fns[r->leaf].name)))) {
    json_decref(o);
    return NULL;
  }
  return o;
}

json_t *cpuprof_where_json(const cpuprof_t *p, const cpuprof_window_t *windows, size_t nwindows,
                           int64_t min_excess_us, double jank_over_us) {
  cpuprof_window_t *w = malloc((nwindows ? nwindows : 1) * sizeof *w);
  hit_t *hits = malloc((p->nsamples ? p->nsamples : 1) * sizeof *hits);
  rank_t *ranks = malloc((p->nfns ? p->nfns : 1) * sizeof *ranks);
  int32_t *leaf_count = calloc(p->nfns ? p->nfns : 1, sizeof *leaf_count);
  json_t *out = NULL, *list = NULL;
  size_t i, nh = 0, nr = 0, njanky = 0, ncalm = 0, janky_samples = 0;
  if (!w || !hits || !ranks || !leaf_count) goto done;
  /* The VM's sample buffer is a ring: a window that began before the
   * oldest sample held (by more than a period: a busy window's first sample
   * comes within one) was overwritten, not idle. Such windows are left out
   * (counted in jankyFramesLost) rather than read as frames with no work. */
  int64_t oldest = p->nsamples ? p->samples[0].ts_us : INT64_MAX;
  size_t lost = 0, kept = 0;
  for (i = 0; i < nwindows; i++) {
    if (windows[i].start_us < oldest - p->period_us) {
      lost += windows[i].over_us > 0;
      continue;
    }
    w[kept++] = windows[i];
  }
  nwindows = kept;
  qsort(w, nwindows, sizeof *w, by_start);
  for (i = 0; i < nwindows; i++) w[i].over_us > 0 ? njanky++ : ncalm++;
  for (i = 0; i < p->nsamples; i++) {
    int32_t k = window_of(w, nwindows, p->samples[i].ts_us);
    if (k < 0) continue;
    hits[nh++] = (hit_t){p->samples[i].charge, k, p->samples[i].leaf};
    if (w[k].over_us > 0) janky_samples++;
  }
  qsort(hits, nh, sizeof *hits, by_fn_win);
  double period = (double)p->period_us;
  for (i = 0; i < nh;) {
    size_t j = i, end = i;
    rank_t r = {hits[i].fn, -1, 0, 0, 0, 0};
    while (end < nh && hits[end].fn == r.fn) end++;
    for (j = i; j < end; j++)
      if (w[hits[j].win].over_us > 0) {
        r.janky_us += period;
        leaf_count[hits[j].leaf]++;
      } else {
        r.calm_us += period;
      }
    /* The hottest top frame under it in the janky frames (context). */
    int32_t best = 0;
    for (j = i; j < end; j++)
      if (w[hits[j].win].over_us > 0 && leaf_count[hits[j].leaf] > best)
        best = leaf_count[hits[j].leaf], r.leaf = hits[j].leaf;
    for (j = i; j < end; j++) leaf_count[hits[j].leaf] = 0;
    double calm_mean = ncalm ? r.calm_us / (double)ncalm : 0;
    /* Per janky window: its samples of this function (consecutive). */
    for (j = i; j < end;) {
      size_t k = j;
      while (k < end && hits[k].win == hits[j].win) k++;
      const cpuprof_window_t *win = &w[hits[j].win];
      if (win->over_us > 0) {
        r.frames++;
        r.explained_us +=
            findings_explained((double)(k - j) * period - calm_mean, (double)win->over_us);
      }
      j = k;
    }
    double excess = njanky ? r.janky_us / (double)njanky - calm_mean : 0;
    if (r.frames && excess >= (double)min_excess_us && excess >= period && r.explained_us > 0)
      ranks[nr++] = r;
    i = end;
  }
  qsort(ranks, nr, sizeof *ranks, by_explained);
  list = json_array();
  if (!list) goto done;
  size_t napp = 0, nother = 0;
  for (int pass = 0; pass < 2; pass++)
    for (i = 0; i < nr; i++) {
      int app = p->fns[ranks[i].fn].code == CPUPROF_APP;
      if (app != (pass == 0)) continue;
      if (app ? napp >= CPUPROF_MAX_APP : nother >= CPUPROF_MAX_OTHER) continue;
      json_t *e = fn_json(p, &ranks[i], njanky, ncalm, jank_over_us);
      if (json_array_append_new(list, e)) goto done;
      app ? napp++ : nother++;
    }
  double per = njanky ? (double)janky_samples / (double)njanky : 0;
  out = json_pack("{s:I,s:I,s:I,s:I,s:f,s:b,s:o}", "samplePeriodUs", (json_int_t)p->period_us,
                  "jankyFrames", (json_int_t)njanky, "jankyFramesLost", (json_int_t)lost,
                  "jankySamples", (json_int_t)janky_samples, "samplesPerJankyFrame",
                  round(per * 10) / 10, "fewSamples", njanky && per < CPUPROF_FEW_SAMPLES,
                  "functions", list);
  list = NULL;
done:
  json_decref(list);
  free(w);
  free(hits);
  free(ranks);
  free(leaf_count);
  return out;
}

const char *cpuprof_place(const json_t *fn, char *buf, size_t len) {
  const char *name = str_of(fn, "function"), *file = str_of(fn, "file");
  json_int_t line = json_integer_value(json_object_get(fn, "line"));
  if (!name) name = "?";
  if (file && line > 0)
    snprintf(buf, len, "%s (%s:%lld)", name, file, (long long)line);
  else if (file)
    snprintf(buf, len, "%s (%s)", name, file);
  else
    snprintf(buf, len, "%s", name);
  return buf;
}

int cpuprof_attach(json_t *findings, const json_t *where) {
  size_t i, j;
  json_t *f;
  const json_t *fn;
  char place[600];
  json_array_foreach(findings, i, f) {
    const char *kind = str_of(f, "kind"), *name = str_of(f, "name");
    if (!kind || !name || (strcmp(kind, "widget") && strcmp(kind, "render_object"))) continue;
    size_t n = strlen(name);
    /* functions are ranked: the first match explains most. */
    json_array_foreach(json_object_get(where, "functions"), j, fn) {
      const char *fname = str_of(fn, "function");
      if (!fname || strncmp(fname, name, n) || fname[n] != '.') continue;
      if (json_object_set_new(f, "at", json_string(cpuprof_place(fn, place, sizeof place))))
        return -1;
      break;
    }
  }
  return 0;
}

static int64_t num_of(const json_t *o, const char *key) {
  return (int64_t)json_integer_value(json_object_get(o, key));
}

char *cpuprof_where_text(const json_t *w) {
  char *buf = NULL, place[600];
  size_t len = 0, i, k = 0;
  const json_t *f;
  FILE *out;
  if (!w || !(out = open_memstream(&buf, &len))) return NULL;
  json_array_foreach(json_object_get(w, "functions"), i, f) {
    const char *code = str_of(f, "code");
    if (!code) continue;
    if (!strcmp(code, "app"))
      fprintf(out, "where %zu: ", ++k);
    else
      fprintf(out, "where (%s code): ", code);
    fprintf(out, "%s explains %.0f%% of the jank: %.1f ms per janky frame vs %.1f ms otherwise",
            cpuprof_place(f, place, sizeof place),
            json_number_value(json_object_get(f, "explains")) * 100.0,
            (double)num_of(f, "jankyUs") / 1000.0, (double)num_of(f, "calmUs") / 1000.0);
    if (str_of(f, "top")) fprintf(out, " (mostly in %s)", str_of(f, "top"));
    fputc('\n', out);
  }
  if (num_of(w, "jankyFramesLost"))
    fprintf(out, "where: %lld of %lld janky frames were older than the VM's sample ring held\n",
            (long long)num_of(w, "jankyFramesLost"),
            (long long)(num_of(w, "jankyFramesLost") + num_of(w, "jankyFrames")));
  if (json_is_true(json_object_get(w, "fewSamples")))
    fprintf(out, "where: %.1f CPU samples per janky frame (one per %lld µs): too few to rank on\n",
            json_number_value(json_object_get(w, "samplesPerJankyFrame")),
            (long long)num_of(w, "samplePeriodUs"));
  else if (!json_array_size(json_object_get(w, "functions")))
    fprintf(out,
            "where: no function ran longer in the janky frames than in the others "
            "(%lld CPU samples in them)\n",
            (long long)num_of(w, "jankySamples"));
  if (fclose(out)) {
    free(buf);
    return NULL;
  }
  return buf;
}

const char *cpuprof_top_in(const cpuprof_t *p, int64_t start_us, int64_t end_us, char *buf,
                           size_t len) {
  cpuprof_sample_t key = {start_us, 0, 0};
  size_t lo = 0, hi = p->nsamples, i, j;
  while (lo < hi) { /* the first sample at or after start_us */
    size_t mid = (lo + hi) / 2;
    if (by_ts(&p->samples[mid], &key) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  int32_t best = -1;
  size_t best_n = 0;
  for (i = lo; i < p->nsamples && p->samples[i].ts_us < end_us; i++) {
    int32_t fn = p->samples[i].charge;
    size_t n = 0;
    if (p->fns[fn].code != CPUPROF_APP) continue;
    for (j = lo; j < p->nsamples && p->samples[j].ts_us < end_us; j++)
      n += p->samples[j].charge == fn;
    if (n > best_n) best_n = n, best = fn;
  }
  if (best < 0) return NULL;
  const cpuprof_fn_t *f = &p->fns[best];
  if (f->file && f->line)
    snprintf(buf, len, "%s (%s:%lld)", f->name, f->file, (long long)f->line);
  else if (f->file)
    snprintf(buf, len, "%s (%s)", f->name, f->file);
  else
    snprintf(buf, len, "%s", f->name);
  return buf;
}
