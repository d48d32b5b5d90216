/* answer_where: the CPU samples of an answer's janky frames (answer_where.h). */
#include "answer_where.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "appsrc_cpu.h"
#include "json_len.h"
#include "summary.h"

typedef struct {
  uint64_t from, to;
} span_t;

/* Each worst frame that missed on build gets the app function sampled most
 * in its UI window ("at"). */
static void where_worst(json_t *sum, store_t *st, span_t sp, const cpuprof_t *prof) {
  int64_t budget = json_integer_value(json_object_get(sum, "budgetUs"));
  size_t i;
  json_t *w;
  char place[600];
  json_array_foreach(json_object_get(sum, "worstFrames"), i, w) {
    json_int_t seq = json_integer_value(json_object_get(w, "seq"));
    for (uint64_t p = sp.from; p < sp.to; p++) {
      const frame_t *f = store_at(st, p);
      if (!f || f->seq != seq) continue;
      int64_t s = f->vsync_start_us + f->vsync_overhead_us;
      if (f->build_us > budget && cpuprof_top_in(prof, s, s + f->build_us, place, sizeof place))
        json_object_set_new(w, "at", json_string(place));
      break;
    }
  }
}

static void where_done(void *arg, json_t *where, const cpuprof_t *prof, const char *note) {
  op_t *op = arg;
  json_t *r = op->held;
  answer_where_cb done = op->after_where;
  op->cpu = NULL;
  op->held = NULL;
  op->after_where = NULL;
  json_t *sum = json_object_get(r, "summary");
  if (where) {
    cpuprof_attach(json_object_get(sum, "findings"), where);
    where_worst(sum, op->where_st, (span_t){op->where_from, op->where_to}, prof);
    json_object_set_new(sum, "where", where);
  }
  if (note && note[0]) op_warn(op, "%s", note);
  done(op, r);
}

int answer_where_start(op_t *op, json_t *r, store_t *st, uint64_t from, uint64_t to, int filter,
                       int64_t budget_us, answer_where_cb done) {
  const json_t *jank = json_object_get(json_object_get(r, "summary"), "jank");
  if (!st || !op->app || !op->app->app || !json_integer_value(json_object_get(jank, "buildMissed")))
    return 0;
  if (from < store_first_kept(st)) from = store_first_kept(st);
  if (to > store_frames_seen(st)) to = store_frames_seen(st);
  size_t n = 0;
  frame_t *frames = calloc(to > from ? (size_t)(to - from) : 1, sizeof *frames); /* shallow */
  if (!frames) return 0;
  for (uint64_t p = from; p < to; p++) {
    const frame_t *f = store_at(st, p);
    if (!f || (filter && (!f->interaction_id || strcmp(f->interaction_id, op->a.interaction_id))))
      continue;
    frames[n++] = *f;
  }
  char note[300];
  op->held = r;
  op->after_where = done;
  op->where_st = st;
  op->where_from = from;
  op->where_to = to;
  op->cpu = appsrc_cpu_pull(op->app->app, frames, n, budget_us,
                            (double)json_integer_value(json_object_get(jank, "overUs")), where_done,
                            op, note, sizeof note);
  free(frames);
  if (op->cpu) return 1;
  op->held = NULL;
  op->after_where = NULL;
  if (!note[0]) /* the summary counts frames the window no longer holds */
    snprintf(note, sizeof note, "CPU samples: no janky frame is still held (they fell out of the "
                                "session's window): none to look up");
  op_warn(op, "%s", note);
  return 0;
}

/* Least useful first: the worst frames' places and their topBlocks (their
 * own cause says why they missed), the context entries and the `top` of each
 * function, then all but the first entry, then the whole object with the
 * findings' places (said in a warning). */
void answer_where_fit(op_t *op, json_t *sum) {
  json_t *where = json_object_get(sum, "where"), *rb = json_object_get(sum, "rebuilds");
  json_t *fns = json_object_get(where, "functions"), *wid = json_object_get(rb, "widgets"), *e;
  size_t i;
  if (!sum || json_compact_len(sum) <= SUMMARY_MAX_BYTES) return;
  json_array_foreach(json_object_get(sum, "worstFrames"), i, e) json_object_del(e, "at");
  if (summary_fit_worst_blocks(sum, SUMMARY_MAX_BYTES) <= SUMMARY_MAX_BYTES) return;
  for (i = json_array_size(fns); i-- > 0 && json_compact_len(sum) > SUMMARY_MAX_BYTES;) {
    const char *code = json_string_value(json_object_get(json_array_get(fns, i), "code"));
    if (!code || strcmp(code, "app")) json_array_remove(fns, i);
  }
  json_array_foreach(fns, i, e) json_object_del(e, "top");
  while (json_compact_len(sum) > SUMMARY_MAX_BYTES &&
         (json_array_size(fns) > 1 || json_array_size(wid) > 1)) {
    if (json_array_size(wid) > 1) json_array_remove(wid, json_array_size(wid) - 1);
    if (json_array_size(fns) > 1 && json_compact_len(sum) > SUMMARY_MAX_BYTES)
      json_array_remove(fns, json_array_size(fns) - 1);
  }
  if (rb && json_compact_len(sum) > SUMMARY_MAX_BYTES) {
    json_object_del(sum, "rebuilds");
    op_warn(op, "rebuilds: left out, the summary is at its %d-byte bound", SUMMARY_MAX_BYTES);
  }
  if (where && json_compact_len(sum) > SUMMARY_MAX_BYTES) {
    json_object_del(sum, "where");
    json_t *fs = json_object_get(sum, "findings"); /* their places too, last first */
    for (i = json_array_size(fs); i-- > 0 && json_compact_len(sum) > SUMMARY_MAX_BYTES;)
      json_object_del(json_array_get(fs, i), "at");
    op_warn(op, "where: left out, the summary is at its %d-byte bound", SUMMARY_MAX_BYTES);
  }
}
