/* Fuzz target: the VM timeline reader (vmtl.c) and the join of what it kept
 * to frames.
 *
 * The input is one getVMTimeline result, or an array of up to 8 taken in
 * order by one parser (overlapping pulls, B in one and E in the next).
 * Checked for every input: a refused reply says why and counts nothing;
 * every emitted event has dur >= 0, times within 2^53, a known kind and
 * thread, and a NUL-terminated valid-UTF-8 name; the stats add up over the
 * pulls (kept + repeats + malformed + unmatched <= entries, kept = events
 * handed out); the same reply parsed again keeps nothing; vmtl_join on all
 * that was kept gives each frame values within its window lengths, pieces
 * counted exactly when time was found, and a raster name exactly when a
 * raster overlap was found. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "vmtl.h"
#include "vmtl_join.h"

#define MAX_REPLIES 8
#define MAX_FRAMES 24

typedef struct {
  vmtl_event_t *ev;
  size_t n, cap;
  size_t calls;
} kept_t;

static int valid_utf8(const char *s, size_t max) {
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0;
  while (i < max && u[i]) {
    unsigned char c = u[i];
    size_t len = c < 0x80                   ? 1
                 : (c >= 0xC2 && c <= 0xDF) ? 2
                 : (c >= 0xE0 && c <= 0xEF) ? 3
                 : (c >= 0xF0 && c <= 0xF4) ? 4
                                            : 0;
    if (len == 0 || i + len >= max + 1) return 0;
    uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1Fu) : len == 3 ? (c & 0x0Fu) : (c & 0x07u);
    for (size_t k = 1; k < len; k++) {
      if ((u[i + k] & 0xC0) != 0x80) return 0;
      cp = (cp << 6) | (u[i + k] & 0x3Fu);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return 0;
    i += len;
  }
  return i < max; /* the NUL is inside the array */
}

static void sink(void *arg, const vmtl_event_t *e) {
  kept_t *k = arg;
  k->calls++;
  FUZZ_ASSERT(e->dur_us >= 0 && e->dur_us <= VMTL_TIME_MAX);
  FUZZ_ASSERT(e->ts_us >= 0 && e->ts_us <= VMTL_TIME_MAX);
  FUZZ_ASSERT(e->kind == VMTL_GC || e->kind == VMTL_SHADER || e->kind == VMTL_RASTER);
  FUZZ_ASSERT(e->thread == VMTL_THREAD_UNKNOWN || e->thread == VMTL_THREAD_UI ||
              e->thread == VMTL_THREAD_RASTER || e->thread == VMTL_THREAD_OTHER);
  /* Raster work is, by definition, long work on a raster(-like) thread. */
  FUZZ_ASSERT(e->kind != VMTL_RASTER || e->dur_us >= VMTL_RASTER_MIN_US);
  FUZZ_ASSERT(valid_utf8(e->name, VMTL_NAME_MAX));
  if (k->n == k->cap) {
    size_t cap = k->cap ? 2 * k->cap : 64;
    vmtl_event_t *ev = realloc(k->ev, cap * sizeof *ev);
    FUZZ_ASSERT(ev != NULL);
    k->ev = ev;
    k->cap = cap;
  }
  k->ev[k->n++] = *e;
}

static void check_join(const kept_t *k, int64_t offset) {
  vmtl_window_t fr[MAX_FRAMES];
  size_t nfr = 0;
  /* Windows around what was kept (edges cut through events), and two fixed ones. */
  for (size_t i = 0; i < k->n && nfr < MAX_FRAMES - 2; i++) {
    const vmtl_event_t *e = &k->ev[i];
    int64_t a = e->ts_us + offset;
    fr[nfr++] = (vmtl_window_t){a - (int64_t)(i * 37 % 500), a + e->dur_us / 2 + (int64_t)i,
                                a + e->dur_us / 3, a + e->dur_us + 1000};
  }
  fr[nfr++] = (vmtl_window_t){0, VMTL_TIME_MAX, -VMTL_TIME_MAX, VMTL_TIME_MAX};
  fr[nfr++] = (vmtl_window_t){500, 100, 7, 7}; /* reversed and empty */
  vmtl_causes_t out[MAX_FRAMES];
  FUZZ_ASSERT(vmtl_join(k->ev, k->n, fr, nfr, offset, out) == 0);
  for (size_t f = 0; f < nfr; f++) {
    int64_t build = fr[f].build_end_us - fr[f].build_start_us;
    int64_t raster = fr[f].raster_end_us - fr[f].raster_start_us;
    if (build < 0) build = 0;
    if (raster < 0) raster = 0;
    FUZZ_ASSERT(out[f].gc_us >= 0 && out[f].gc_us <= build);
    FUZZ_ASSERT(out[f].shader_us >= 0 && out[f].shader_us <= raster);
    FUZZ_ASSERT(out[f].raster_top_us >= 0 && out[f].raster_top_us <= raster);
    FUZZ_ASSERT((out[f].gc_n > 0) == (out[f].gc_us > 0));
    FUZZ_ASSERT((out[f].shader_n > 0) == (out[f].shader_us > 0));
    FUZZ_ASSERT(valid_utf8(out[f].raster_top, VMTL_NAME_MAX));
    /* Every kept raster event has a name of some bytes or none; a found one is copied. */
    FUZZ_ASSERT(out[f].raster_top_us > 0 || out[f].raster_top[0] == '\0');
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  json_t *input = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
  if (!input) return 0;
  vmtl_parser_t *p = vmtl_parser_new();
  FUZZ_ASSERT(p != NULL);
  kept_t k = {0};
  size_t entries = 0, charged = 0;
  size_t nreplies = json_is_array(input) ? json_array_size(input) : 1;
  if (nreplies > MAX_REPLIES) nreplies = MAX_REPLIES;
  for (size_t r = 0; r < nreplies; r++) {
    const json_t *reply = json_is_array(input) ? json_array_get(input, r) : input;
    vmtl_pull_stats_t st;
    char err[128];
    err[0] = '\0';
    size_t before = k.calls;
    if (vmtl_parse(p, reply, sink, &k, &st, err, sizeof err) != 0) {
      FUZZ_ASSERT(err[0] != '\0');
      FUZZ_ASSERT(st.trace_events == 0 && st.kept == 0 && st.repeats == 0 && st.malformed == 0 &&
                  st.unmatched == 0 && st.newest_ts_us == -1);
      FUZZ_ASSERT(k.calls == before);
      continue;
    }
    FUZZ_ASSERT(st.kept == k.calls - before);
    FUZZ_ASSERT(st.newest_ts_us >= -1 && st.newest_ts_us <= VMTL_TIME_MAX);
    FUZZ_ASSERT(st.origin_us >= -1 && st.origin_us <= VMTL_TIME_MAX);
    FUZZ_ASSERT(st.extent_us >= -1 && st.extent_us <= VMTL_TIME_MAX);
    FUZZ_ASSERT(st.trace_events == json_array_size(json_object_get(reply, "traceEvents")));
    entries += st.trace_events;
    /* An entry is charged once at most: kept (its E or X), repeat, malformed, or unmatched
     * (an E alone, or a B given up, possibly in a later pull). */
    charged += st.kept + st.repeats + st.malformed + st.unmatched;
    FUZZ_ASSERT(charged <= entries);

    /* The same reply again: all of it was seen. */
    vmtl_pull_stats_t again;
    before = k.calls;
    FUZZ_ASSERT(vmtl_parse(p, reply, sink, &k, &again, NULL, 0) == 0);
    if (st.trace_events <= VMTL_SEEN_MAX) FUZZ_ASSERT(again.kept == 0 && k.calls == before);
    FUZZ_ASSERT(again.trace_events == st.trace_events);
    entries += again.trace_events;
    charged += again.kept + again.repeats + again.malformed + again.unmatched;
    FUZZ_ASSERT(charged <= entries);
  }
  check_join(&k, 0);
  check_join(&k, (int64_t)(size % 4001) - 2000);
  free(k.ev);
  vmtl_parser_free(p);
  json_decref(input);
  return 0;
}
