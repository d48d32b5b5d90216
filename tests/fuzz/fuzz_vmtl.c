/* Fuzz target: the VM timeline's trace events (vmtl.c), as getVMTimeline
 * replies come from an app we do not trust, and the join of what was kept
 * with frame windows.
 *
 * The input is one getVMTimeline result, or an array of up to 8 parsed in
 * order by one parser (pulls overlap). Checked for every input: every kept
 * event has dur >= 0, a known kind and thread, and a NUL-terminated name of
 * valid UTF-8 when the input's was; the counts add up; the same reply parsed
 * twice keeps nothing the second time; the join gives each frame no more GC
 * or shader time than its windows are long. */
#include <jansson.h>
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "vmtl.h"

#define MAX_PULLS 8
#define MAX_KEPT 4096

typedef struct {
  vmtl_event_t ev[MAX_KEPT];
  size_t n;
} kept_t;

static int utf8_valid(const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    int n = *p < 0x80 ? 0 : (*p & 0xE0) == 0xC0 ? 1 : (*p & 0xF0) == 0xE0 ? 2 : (*p & 0xF8) == 0xF0 ? 3 : -1;
    if (n < 0) return 0;
    p++;
    for (int i = 0; i < n; i++, p++)
      if ((*p & 0xC0) != 0x80) return 0;
  }
  return 1;
}

static void sink(void *arg, const vmtl_event_t *ev) {
  kept_t *k = arg;
  FUZZ_ASSERT(ev->dur_us >= 0 && ev->ts_us >= 0);
  FUZZ_ASSERT(ev->kind == VMTL_GC || ev->kind == VMTL_SHADER || ev->kind == VMTL_RASTER);
  FUZZ_ASSERT(ev->thread >= VMTL_THREAD_UNKNOWN && ev->thread <= VMTL_THREAD_OTHER);
  FUZZ_ASSERT(memchr(ev->name, '\0', sizeof ev->name) != NULL);
  FUZZ_ASSERT(utf8_valid(ev->name)); /* jansson hands over valid UTF-8 only */
  if (k->n < MAX_KEPT) k->ev[k->n++] = *ev;
}

static void parse(vmtl_parser_t *p, const json_t *reply, kept_t *k) {
  vmtl_pull_stats_t st;
  char err[128];
  size_t before = k->n;
  if (vmtl_parse(p, reply, sink, k, &st, err, sizeof err) < 0) {
    FUZZ_ASSERT(err[0]);
    FUZZ_ASSERT(k->n == before);
    return;
  }
  FUZZ_ASSERT(st.kept <= st.trace_events);
  FUZZ_ASSERT(st.repeats + st.malformed <= st.trace_events + st.trace_events);
  FUZZ_ASSERT(st.kept == k->n - before || k->n == MAX_KEPT);
  /* The same reply again: everything in it is a repeat, or too old to keep. */
  size_t again = k->n;
  if (vmtl_parse(p, reply, sink, k, &st, err, sizeof err) == 0) FUZZ_ASSERT(k->n == again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  json_t *j = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
  if (!j) return 0;
  vmtl_parser_t *p = vmtl_parser_new();
  static kept_t k;
  k.n = 0;
  if (p) {
    if (json_is_array(j)) {
      size_t i;
      json_t *r;
      json_array_foreach(j, i, r) {
        if (i == MAX_PULLS) break;
        parse(p, r, &k);
      }
    } else {
      parse(p, j, &k);
    }
    /* Windows around what was kept: a frame per kept event. */
    static vmtl_window_t w[64];
    static vmtl_causes_t c[64];
    size_t nw = k.n < 64 ? k.n : 64;
    for (size_t i = 0; i < nw; i++) {
      int64_t t = k.ev[i].ts_us;
      w[i] = (vmtl_window_t){t - 1000, t + 5000, t + 5000, t + 9000};
    }
    if (vmtl_join(k.ev, k.n, w, nw, 0, c) == 0)
      for (size_t i = 0; i < nw; i++) {
        FUZZ_ASSERT(c[i].gc_us >= 0 && c[i].gc_us <= 6000);
        FUZZ_ASSERT(c[i].shader_us >= 0 && c[i].shader_us <= 4000);
        FUZZ_ASSERT(c[i].raster_top_us >= 0 && c[i].raster_top_us <= 4000);
        FUZZ_ASSERT(memchr(c[i].raster_top, '\0', sizeof c[i].raster_top) != NULL);
      }
    vmtl_parser_free(p);
  }
  json_decref(j);
  return 0;
}
