#include "frame_cause.h"

#include <stdlib.h>
#include <string.h>

#include "findings.h"

#define ROOT_SUFFIX " (root)"

/* A block name as the rule counts it: a phase's " (root)" is the phase. */
typedef struct {
  const char *name;
  size_t len;
  double calm_us; /* self time summed over the calm frames */
} name_t;

static size_t name_len(const char *name) {
  size_t n = strlen(name), rs = sizeof ROOT_SUFFIX - 1;
  if (n > rs && !strcmp(name + n - rs, ROOT_SUFFIX) && findings_classify(name) == FINDING_PHASE)
    n -= rs;
  return n;
}

static int name_cmp(const void *a, const void *b) {
  const name_t *x = a, *y = b;
  size_t n = x->len < y->len ? x->len : y->len;
  int c = memcmp(x->name, y->name, n);
  return c ? c : (x->len > y->len) - (x->len < y->len);
}

static name_t *name_find(name_t *names, size_t n, const char *name) {
  name_t key = {name, name_len(name), 0};
  return bsearch(&key, names, n, sizeof *names, name_cmp);
}

typedef struct {
  const char *kind, *name;
  size_t len;
  int64_t us;
  double excess, beyond; /* capped at the overrun, and not */
} cand_t;

/* Before in the order: more explained, then more beyond the mean, then name. */
static int cand_before(const cand_t *a, const cand_t *b) {
  if (a->excess != b->excess) return a->excess > b->excess;
  if (a->beyond != b->beyond) return a->beyond > b->beyond;
  size_t n = a->len < b->len ? a->len : b->len;
  int c = memcmp(a->name, b->name, n);
  return c ? c < 0 : a->len < b->len;
}

/* The winner of cands by the findings' rule, or NULL when none explains anything. */
static const cand_t *pick(const cand_t *c, size_t n) {
  const cand_t *top = NULL, *near = NULL;
  for (size_t i = 0; i < n; i++)
    if (c[i].excess > 0 && (!top || cand_before(&c[i], top))) top = &c[i];
  if (!top || !findings_kind_tier(top->kind)) return top;
  for (size_t i = 0; i < n; i++)
    if (c[i].excess > 0 && !findings_kind_tier(c[i].kind) &&
        c[i].excess >= FINDINGS_TIE_SHARE * top->excess && (!near || cand_before(&c[i], near)))
      near = &c[i];
  return near ? near : top;
}

static void offer(cand_t *c, size_t *n, const char *kind, const char *name, int64_t us,
                  double calm_mean, double overrun) {
  double beyond = (double)us - calm_mean;
  c[*n] = (cand_t){kind, name, strlen(name), us, findings_explained(beyond, overrun), beyond};
  (*n)++;
}

int frame_cause_of(const frame_t *const *frames, size_t nframes, const vmtl_causes_t *tl,
                   int64_t budget_us, const size_t *at, size_t nat, frame_cause_t *out) {
  size_t k = 0, cap = 0;
  if (nat > FRAME_CAUSE_MAX) nat = FRAME_CAUSE_MAX;
  memset(out, 0, nat * sizeof *out);
  for (size_t i = 0; i < nat; i++) cap += frames[at[i]]->nblocks;
  /* The names the frames' blocks hold. */
  name_t *names = malloc((cap ? cap : 1) * sizeof *names);
  cand_t *c = malloc((cap + 4) * sizeof *c);
  if (!names || !c) goto oom;
  for (size_t i = 0; i < nat; i++) {
    const frame_t *f = frames[at[i]];
    for (size_t b = 0; b < f->nblocks; b++)
      names[k++] = (name_t){f->blocks[b].name, name_len(f->blocks[b].name), 0};
  }
  qsort(names, k, sizeof *names, name_cmp);
  size_t n = 0;
  for (size_t i = 0; i < k; i++)
    if (!n || name_cmp(&names[n - 1], &names[i])) names[n++] = names[i];

  /* One pass over the calm frames for every mean the rule needs. */
  double calm = 0, raster = 0, build = 0, gc = 0, shader = 0;
  for (size_t i = 0; i < nframes; i++) {
    const frame_t *f = frames[i];
    if (f->startup || f->build_us > budget_us || f->raster_us > budget_us) continue;
    calm++;
    raster += (double)f->raster_us;
    build += (double)f->build_us - (double)(tl ? tl[i].gc_us : 0);
    if (tl) gc += (double)tl[i].gc_us, shader += (double)tl[i].shader_us;
    for (size_t b = 0; b < f->nblocks; b++) {
      name_t *nm = n ? name_find(names, n, f->blocks[b].name) : NULL;
      if (nm) nm->calm_us += (double)f->blocks[b].self_micros;
    }
  }
  double d = calm ? calm : 1;

  for (size_t i = 0; i < nat; i++) {
    const frame_t *f = frames[at[i]];
    if (f->build_us <= budget_us && f->raster_us <= budget_us) continue;
    int64_t g = tl ? tl[at[i]].gc_us : 0, s = tl ? tl[at[i]].shader_us : 0;
    double over = (double)((f->build_us > f->raster_us ? f->build_us : f->raster_us) - budget_us);
    size_t m = 0;
    /* Its blocks, a phase and its " (root)" as one. */
    for (size_t b = 0; b < f->nblocks; b++) {
      const name_t *nm = name_find(names, n, f->blocks[b].name);
      size_t j = 0;
      while (j < m && (c[j].len != nm->len || memcmp(c[j].name, nm->name, nm->len))) j++;
      if (j == m) {
        const char *kind = findings_kind_name(findings_classify(f->blocks[b].name));
        c[m++] = (cand_t){kind, nm->name, nm->len, 0, 0, nm->calm_us / d};
      }
      c[j].us += f->blocks[b].self_micros;
    }
    for (size_t j = 0; j < m; j++) {
      c[j].beyond = (double)c[j].us - c[j].beyond; /* held the calm mean until here */
      c[j].excess = findings_explained(c[j].beyond, over);
    }
    offer(c, &m, "raster", "raster", f->raster_us, raster / d, over);
    if (!f->nblocks) offer(c, &m, "build", "build", f->build_us - g, build / d, over);
    if (tl) {
      offer(c, &m, "gc", "GC", g, gc / d, over);
      offer(c, &m, "shader", "shader compilation", s, shader / d, over);
    }
    const cand_t *win = pick(c, m);
    if (win) out[i] = (frame_cause_t){win->kind, win->name, win->len, win->us};
  }
  free(names);
  free(c);
  return 0;
oom:
  free(names);
  free(c);
  return -1;
}

int frame_cause_apply(json_t *summary, const frame_t *const *frames, size_t nframes,
                      const vmtl_causes_t *tl, int64_t budget_us) {
  json_t *worst = json_object_get(summary, "worstFrames");
  size_t nw = json_array_size(worst), at[FRAME_CAUSE_MAX] = {0}, entry[FRAME_CAUSE_MAX] = {0};
  size_t nat = 0;
  /* The worst frames among frames (same seq and frame number). */
  for (size_t i = 0; i < nw && nat < FRAME_CAUSE_MAX; i++) {
    const json_t *w = json_array_get(worst, i);
    json_int_t seq = json_integer_value(json_object_get(w, "seq"));
    json_int_t num = json_integer_value(json_object_get(w, "frameNumber"));
    for (size_t f = 0; f < nframes; f++)
      if (frames[f]->seq == seq && frames[f]->frame_number == num) {
        at[nat] = f, entry[nat++] = i;
        break;
      }
  }
  frame_cause_t out[FRAME_CAUSE_MAX];
  if (frame_cause_of(frames, nframes, tl, budget_us, at, nat, out) < 0) return -1;
  int bad = 0;
  for (size_t i = 0; i < nat; i++) {
    if (!out[i].kind) continue;
    json_t *j = json_pack("{s:s,s:s%,s:I}", "kind", out[i].kind, "name", out[i].name, out[i].len,
                          "us", (json_int_t)out[i].us);
    bad |= !j || json_object_set_new(json_array_get(worst, entry[i]), "cause", j);
  }
  return bad ? -1 : 0;
}
