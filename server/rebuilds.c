#include "rebuilds.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int64_t frame_number;
  rebuilds_count_t *counts;
  size_t n;
  int baseline; /* the first frame after tracking went on: every widget rebuilt */
} slot_t;

struct rebuilds {
  slot_t ring[REBUILDS_MAX_FRAMES];
  size_t head, nframes; /* oldest slot, slots in use */
  int64_t last_number;  /* newest frame number fed; -1 none */
  int armed;            /* switched on: the next event is forceRebuild's frame */
  size_t unnumbered;    /* events without frameNumber (older Flutter) */
  size_t web;           /* events with frameNumber -1 (web before flutter#171592) */
  rebuilds_loc_t *locs; /* sorted by id */
  size_t nlocs, caplocs;
  char isolate[128]; /* the isolate the ids belong to */
};

rebuilds_t *rebuilds_new(void) {
  rebuilds_t *rb = calloc(1, sizeof *rb);
  if (rb) rb->last_number = -1;
  return rb;
}

void rebuilds_clear(rebuilds_t *rb) {
  if (!rb) return;
  for (size_t i = 0; i < REBUILDS_MAX_FRAMES; i++) {
    free(rb->ring[i].counts);
    rb->ring[i] = (slot_t){0};
  }
  for (size_t i = 0; i < rb->nlocs; i++) {
    free(rb->locs[i].name);
    free(rb->locs[i].file);
  }
  rb->nlocs = rb->head = rb->nframes = 0;
  rb->last_number = -1;
  rb->unnumbered = rb->web = 0;
  /* armed stays: a switch-on sent to a new isolate arms before its first
   * event clears the old isolate's table. */
}

void rebuilds_free(rebuilds_t *rb) {
  if (!rb) return;
  rebuilds_clear(rb);
  free(rb->locs);
  free(rb);
}

/* The index of id in locs, or where it goes (*found = 0). */
static size_t loc_find(const rebuilds_t *rb, int64_t id, int *found) {
  size_t lo = 0, hi = rb->nlocs;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (rb->locs[mid].id < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  *found = lo < rb->nlocs && rb->locs[lo].id == id;
  return lo;
}

const rebuilds_loc_t *rebuilds_location(const rebuilds_t *rb, int64_t id) {
  int found;
  size_t i = loc_find(rb, id, &found);
  return found ? &rb->locs[i] : NULL;
}

/* Adds or completes one location (name may be NULL: the older form). */
static int loc_put(rebuilds_t *rb, int64_t id, const char *file, int64_t line, int64_t column,
                   const char *name) {
  int found;
  size_t i = loc_find(rb, id, &found);
  if (!found) {
    if (rb->nlocs >= REBUILDS_MAX_LOCATIONS) return 0;
    if (rb->nlocs == rb->caplocs) {
      size_t cap = rb->caplocs ? rb->caplocs * 2 : 64;
      rebuilds_loc_t *l = realloc(rb->locs, cap * sizeof *l);
      if (!l) return -1;
      rb->locs = l;
      rb->caplocs = cap;
    }
    memmove(&rb->locs[i + 1], &rb->locs[i], (rb->nlocs - i) * sizeof *rb->locs);
    rb->locs[i] = (rebuilds_loc_t){.id = id};
    rb->nlocs++;
  }
  rebuilds_loc_t *l = &rb->locs[i];
  if (!l->file && file && !(l->file = strdup(file))) return -1;
  if (!l->name && name && !(l->name = strdup(name))) return -1;
  l->line = line;
  l->column = column;
  return 0;
}

static int int_at(const json_t *a, size_t i, int64_t *out) {
  const json_t *v = json_array_get(a, i);
  if (!json_is_integer(v)) return -1;
  *out = json_integer_value(v);
  return 0;
}

int rebuilds_add_locations(rebuilds_t *rb, const json_t *locations) {
  const char *file;
  const json_t *f;
  int bad = !json_is_object(locations);
  json_object_foreach((json_t *)locations, file, f) {
    const json_t *ids = json_object_get(f, "ids"), *lines = json_object_get(f, "lines");
    const json_t *cols = json_object_get(f, "columns"), *names = json_object_get(f, "names");
    size_t n = json_array_size(ids);
    if (json_array_size(lines) != n) {
      bad = 1;
      continue;
    }
    for (size_t i = 0; i < n; i++) {
      int64_t id, line, col = 0;
      if (int_at(ids, i, &id) || int_at(lines, i, &line)) {
        bad = 1;
        continue;
      }
      int_at(cols, i, &col);
      if (loc_put(rb, id, file, line, col, json_string_value(json_array_get(names, i)))) return -1;
    }
  }
  return bad ? -1 : 0;
}

int rebuilds_add_location_map(rebuilds_t *rb, const json_t *reply) {
  return rebuilds_add_locations(rb, json_object_get(reply, "result"));
}

void rebuilds_switched_on(rebuilds_t *rb) {
  if (rb) rb->armed = 1;
}

size_t rebuilds_unjoined(const rebuilds_t *rb, int *web) {
  if (web) *web = rb && rb->web > 0;
  return rb ? rb->unnumbered + rb->web : 0;
}

/* The older form: {file: [id, line, column, id, line, column, ...]}. */
static int add_new_locations(rebuilds_t *rb, const json_t *nl) {
  const char *file;
  const json_t *a;
  json_object_foreach((json_t *)nl, file, a) {
    for (size_t i = 0; i + 3 <= json_array_size(a); i += 3) {
      int64_t id, line, col;
      if (int_at(a, i, &id) || int_at(a, i + 1, &line) || int_at(a, i + 2, &col)) continue;
      if (loc_put(rb, id, file, line, col, NULL)) return -1;
    }
  }
  return 0;
}

int rebuilds_feed(rebuilds_t *rb, const char *isolate_id, const char *kind, const json_t *data,
                  const char *current_isolate) {
  if (!rb || !isolate_id || !kind || strcmp(kind, "Flutter.RebuiltWidgets") != 0 ||
      !json_is_object(data))
    return 0;
  if (strcmp(isolate_id, rb->isolate) != 0) {
    /* An old isolate's event, replayed by DDS: not the current one's, or,
     * while which is current is not known (a reconnect), not the table's. */
    if (current_isolate && current_isolate[0] ? strcmp(isolate_id, current_isolate) != 0
                                              : rb->isolate[0] != '\0')
      return 0;
    rebuilds_clear(rb);
    snprintf(rb->isolate, sizeof rb->isolate, "%s", isolate_id);
  }
  /* Locations first: they are sent once, with the first frame that has them. */
  if (json_is_object(json_object_get(data, "locations")))
    rebuilds_add_locations(rb, json_object_get(data, "locations"));
  if (json_is_object(json_object_get(data, "newLocations")))
    add_new_locations(rb, json_object_get(data, "newLocations"));
  const json_t *fn = json_object_get(data, "frameNumber");
  const json_t *ev = json_object_get(data, "events");
  if (!json_is_array(ev)) return 0;
  /* Older Flutter has no frameNumber, and the web engine's is -1 before
   * flutter#171592: nothing to join on, counted so the answer says so
   * (such an event may still be forceRebuild's frame: it disarms). */
  int64_t number = json_is_integer(fn) ? json_integer_value(fn) : -1;
  if (number < 0) {
    json_is_integer(fn) ? rb->web++ : rb->unnumbered++;
    rb->armed = 0;
    return 0;
  }
  /* Frames come in order: a number not above the newest is a replay. */
  if (number <= rb->last_number) return 0;
  /* The first event after the switch-on is forceRebuild's frame, whatever
   * its number: iOS numbers frames by 2 and any platform skips numbers
   * (flutter#94896), so a number that does not follow the last says nothing. */
  int baseline = rb->armed;
  rb->armed = 0;
  size_t n = json_array_size(ev) / 2, k = 0;
  if (n > REBUILDS_MAX_PER_FRAME) n = REBUILDS_MAX_PER_FRAME;
  rebuilds_count_t *c = n ? malloc(n * sizeof *c) : NULL;
  if (n && !c) return 0;
  for (size_t i = 0; i < n; i++) {
    int64_t id, count;
    if (int_at(ev, 2 * i, &id) || int_at(ev, 2 * i + 1, &count) || count <= 0 || id < 0 ||
        id > INT32_MAX || count > INT32_MAX)
      continue;
    c[k++] = (rebuilds_count_t){(int32_t)id, (int32_t)count};
  }
  slot_t *s;
  if (rb->nframes == REBUILDS_MAX_FRAMES) { /* the ring is full: drop the oldest */
    s = &rb->ring[rb->head];
    free(s->counts);
    rb->head = (rb->head + 1) % REBUILDS_MAX_FRAMES;
  } else {
    s = &rb->ring[(rb->head + rb->nframes++) % REBUILDS_MAX_FRAMES];
  }
  *s = (slot_t){number, c, k, baseline};
  rb->last_number = number;
  return 1;
}

size_t rebuilds_frames(const rebuilds_t *rb) {
  return rb ? rb->nframes : 0;
}

/* Slots are in increasing frame number (replays are refused): search. */
static const slot_t *slot_of(const rebuilds_t *rb, int64_t number) {
  size_t lo = 0, hi = rb->nframes;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const slot_t *s = &rb->ring[(rb->head + mid) % REBUILDS_MAX_FRAMES];
    if (s->frame_number == number) return s;
    if (s->frame_number < number)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

const rebuilds_count_t *rebuilds_frame(const rebuilds_t *rb, int64_t frame_number, size_t *n,
                                       int *baseline) {
  const slot_t *s = rb ? slot_of(rb, frame_number) : NULL;
  *n = s ? s->n : 0;
  if (baseline) *baseline = s && s->baseline;
  return s ? s->counts : NULL;
}

char *rebuilds_file_of(const char *uri) {
  if (!uri) return NULL;
  const char *lib = NULL;
  for (const char *p = strstr(uri, "/lib/"); p; p = strstr(p + 1, "/lib/")) lib = p;
  if (lib) return strdup(lib + 1);
  if (!strncmp(uri, "file://", 7)) return strdup(uri + 7);
  return strdup(uri);
}

/* Cuts s to at most max bytes, not inside a UTF-8 sequence. */
static void cut_utf8(char *s, size_t max) {
  if (strlen(s) <= max) return;
  while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80) max--;
  s[max] = '\0';
}

typedef struct {
  int64_t id, janky, calm; /* summed counts */
  double per_janky, per_calm;
} agg_t;

static int by_id(const void *a, const void *b) {
  int64_t x = ((const agg_t *)a)->id, y = ((const agg_t *)b)->id;
  return (x > y) - (x < y);
}

static int listed(const agg_t *a) {
  return a->per_janky - a->per_calm >= REBUILDS_MIN_EXCESS &&
         a->per_janky >= REBUILDS_MIN_RATIO * a->per_calm;
}

/* Rebuilt as much in calm frames, yet at least once a janky frame: in a
 * build-bound session a subtree rebuilt every frame is still where the
 * build time may go, said as such when nothing rebuilt more when janky. */
static int steady(const agg_t *a) {
  return !listed(a) && a->per_janky >= REBUILDS_MIN_STEADY;
}

static int by_janky(const void *a, const void *b) {
  const agg_t *x = a, *y = b;
  if (x->per_janky != y->per_janky) return x->per_janky < y->per_janky ? 1 : -1;
  return (x->id > y->id) - (x->id < y->id);
}

static int by_excess(const void *a, const void *b) {
  const agg_t *x = a, *y = b;
  double dx = x->per_janky - x->per_calm, dy = y->per_janky - y->per_calm;
  if (dx != dy) return dx < dy ? 1 : -1;
  return (x->id > y->id) - (x->id < y->id);
}

json_t *rebuilds_summary(const rebuilds_t *rb, const rebuilds_frame_t *frames, size_t n) {
  if (!rb) return NULL;
  size_t njank = 0, ncalm = 0, nev = 0, cap = 0, na = 0;
  agg_t *a = NULL;
  for (size_t i = 0; i < n; i++) {
    const slot_t *s = slot_of(rb, frames[i].frame_number);
    if (!s) continue;
    nev++;
    if (s->baseline || (!frames[i].janky && !frames[i].calm)) continue;
    frames[i].janky ? njank++ : ncalm++;
    for (size_t j = 0; j < s->n; j++) {
      if (na == cap) {
        cap = cap ? cap * 2 : 256;
        agg_t *g = realloc(a, cap * sizeof *g);
        if (!g) {
          free(a);
          return NULL;
        }
        a = g;
      }
      a[na++] = (agg_t){s->counts[j].id, frames[i].janky ? s->counts[j].count : 0,
                        frames[i].janky ? 0 : s->counts[j].count, 0, 0};
    }
  }
  if (!nev) {
    free(a);
    return NULL;
  }
  /* One row per id: sum the rows of each id, then the means. */
  if (na) qsort(a, na, sizeof *a, by_id);
  size_t m = 0;
  for (size_t i = 0; i < na; i++) {
    if (m && a[m - 1].id == a[i].id) {
      a[m - 1].janky += a[i].janky;
      a[m - 1].calm += a[i].calm;
    } else {
      a[m++] = a[i];
    }
  }
  for (size_t i = 0; i < m; i++) {
    a[i].per_janky = njank ? (double)a[i].janky / (double)njank : 0;
    a[i].per_calm = ncalm ? (double)a[i].calm / (double)ncalm : 0;
  }
  if (m) qsort(a, m, sizeof *a, by_excess);
  json_t *out = json_pack("{s:I, s:I, s:I, s:[]}", "jankyFrames", (json_int_t)njank, "calmFrames",
                          (json_int_t)ncalm, "framesWithEvents", (json_int_t)nev, "widgets");
  json_t *w = json_object_get(out, "widgets");
  int any = 0; /* one listed by the difference: the steady ones are not said */
  for (size_t i = 0; i < m && !any; i++) any = listed(&a[i]);
  if (!any && m) qsort(a, m, sizeof *a, by_janky);
  for (size_t i = 0; out && i < m && json_array_size(w) < REBUILDS_MAX_WIDGETS; i++) {
    if (!(any ? listed(&a[i]) : steady(&a[i]))) continue;
    const rebuilds_loc_t *l = rebuilds_location(rb, a[i].id);
    char name[REBUILDS_MAX_TEXT + 8];
    if (l && l->name)
      snprintf(name, sizeof name, "%.*s", REBUILDS_MAX_TEXT + 4, l->name);
    else
      snprintf(name, sizeof name, "location %lld", (long long)a[i].id);
    cut_utf8(name, REBUILDS_MAX_TEXT);
    json_t *o = json_pack("{s:s, s:I, s:f, s:f}", "name", name, "id", (json_int_t)a[i].id,
                          "perJankyFrame", a[i].per_janky, "perCalmFrame", a[i].per_calm);
    if (o && !any) json_object_set_new(o, "steady", json_true());
    char *file = l ? rebuilds_file_of(l->file) : NULL;
    if (file) cut_utf8(file, REBUILDS_MAX_TEXT);
    if (o && file) {
      json_object_set_new(o, "file", json_string(file));
      json_object_set_new(o, "line", json_integer((json_int_t)l->line));
    }
    free(file);
    if (!o || json_array_append_new(w, o)) {
      json_decref(out);
      out = NULL;
    }
  }
  free(a);
  return out;
}

char *rebuilds_text(const json_t *r) {
  char *buf = NULL;
  size_t len = 0, i;
  const json_t *w;
  FILE *out;
  if (!r || !(out = open_memstream(&buf, &len))) return NULL;
  json_int_t njank = json_integer_value(json_object_get(r, "jankyFrames"));
  json_array_foreach(json_object_get(r, "widgets"), i, w) {
    const char *file = json_string_value(json_object_get(w, "file"));
    fprintf(out, "rebuilt%s: %s ×%.1f per janky frame vs ×%.1f otherwise",
            json_is_true(json_object_get(w, "steady")) ? " in every frame" : "",
            json_string_value(json_object_get(w, "name")),
            json_number_value(json_object_get(w, "perJankyFrame")),
            json_number_value(json_object_get(w, "perCalmFrame")));
    if (file)
      fprintf(out, " (%s:%lld)", file, (long long)json_integer_value(json_object_get(w, "line")));
    fputc('\n', out);
  }
  if (njank && !json_array_size(json_object_get(r, "widgets")))
    fprintf(out, "rebuilt: no widget rebuilt more in the %lld janky frames than in the others\n",
            (long long)njank);
  if (fclose(out) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}
