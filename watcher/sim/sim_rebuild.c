#include "sim_rebuild.h"

#include <stdlib.h>
#include <string.h>

#define APP_FILE(f) "file:///home/dev/sim_app/lib/" f

/* The built-in app's locations, by sim_loc_t. Ids come from the framework's
 * global _toLocationId, shared with framework widgets, so the app's are not
 * 0..n. */
static const sim_rebuild_loc_t builtin[SIM_LOC__COUNT] = {
    [SIM_LOC_FEED_LIST] = {APP_FILE("main.dart"), "FeedList", 27, 16, 41},
    [SIM_LOC_PRODUCT_CARD] = {APP_FILE("feed_list.dart"), "ProductCard", 31, 18, 57},
    [SIM_LOC_TEXT] = {APP_FILE("product_card.dart"), "Text", 44, 14, 58},
    [SIM_LOC_SLOW_WIDGET] = {APP_FILE("feed_list.dart"), "SlowWidget", 38, 11, 63},
};

void sim_rebuild_reset(sim_rebuild_t *r) {
  if (!r->locs) {
    r->locs = builtin;
    r->nlocs = SIM_LOC__COUNT;
  }
  memset(r->known, 0, sizeof r->known);
  memset(r->sent, 0, sizeof r->sent);
  r->epoch_us = -1;
}

void sim_rebuild_use(sim_rebuild_t *r, const sim_rebuild_loc_t *locs, size_t n) {
  r->locs = locs;
  r->nlocs = n < SIM_REBUILD_MAX_LOCS ? n : SIM_REBUILD_MAX_LOCS;
  r->all_known = 1;
  sim_rebuild_reset(r);
}

void sim_rebuild_frame_begun(sim_rebuild_t *r, int64_t vsync_us) {
  if (r->epoch_us < 0) r->epoch_us = vsync_us;
}

/* Adds a location to both encodings of exportToJson: the older
 * {file: [id, line, column, ...]} (NULL: not wanted) and the newer
 * (Flutter 2.4+) {file: {ids, lines, columns, names}}. */
static void add_location(json_t *old_form, json_t *new_form, const sim_rebuild_loc_t *l) {
  json_t *flat, *f;
  if (old_form) {
    if (!(flat = json_object_get(old_form, l->file))) {
      flat = json_array();
      json_object_set_new(old_form, l->file, flat);
    }
    json_array_append_new(flat, json_integer(l->id));
    json_array_append_new(flat, json_integer(l->line));
    json_array_append_new(flat, json_integer(l->column));
  }
  f = json_object_get(new_form, l->file);
  if (!f) {
    f = json_pack("{s:[], s:[], s:[], s:[]}", "ids", "lines", "columns", "names");
    json_object_set_new(new_form, l->file, f);
  }
  json_array_append_new(json_object_get(f, "ids"), json_integer(l->id));
  json_array_append_new(json_object_get(f, "lines"), json_integer(l->line));
  json_array_append_new(json_object_get(f, "columns"), json_integer(l->column));
  json_array_append_new(json_object_get(f, "names"), json_string(l->name));
}

static long find(const sim_rebuild_t *r, int64_t id) {
  for (size_t l = 0; l < r->nlocs; l++)
    if (r->locs[l].id == id) return (long)l;
  return -1;
}

json_t *sim_rebuild_event_pairs(sim_rebuild_t *r, int64_t vsync_us, int64_t frame_number,
                                const int64_t *pairs, size_t n) {
  json_t *events = json_array(), *old_form = json_object(), *new_form = json_object(), *out;
  int fresh = 0;

  if (r->epoch_us < 0) r->epoch_us = vsync_us;
  for (size_t i = 0; i < n; i++) {
    long l = find(r, pairs[2 * i]);
    json_array_append_new(events, json_integer(pairs[2 * i]));
    json_array_append_new(events, json_integer(pairs[2 * i + 1]));
    if (l < 0) continue;
    r->known[l] = 1;
    /* The tracker announces a location the first time it counts it in a
     * run (_ElementLocationStatsTracker.newLocations). */
    if (!r->sent[l]) {
      r->sent[l] = 1;
      add_location(old_form, new_form, &r->locs[l]);
      fresh = 1;
    }
  }
  /* startTime: the frame callbacks' time stamp, adjusted to the
   * scheduler's epoch (0 at the first frame), not the engine clock. */
  out = json_pack("{s:I, s:I, s:o}", "startTime", (json_int_t)(vsync_us - r->epoch_us),
                  "frameNumber", (json_int_t)frame_number, "events", events);
  if (fresh) {
    json_object_set_new(out, "newLocations", old_form);
    json_object_set_new(out, "locations", new_form);
  } else {
    json_decref(old_form);
    json_decref(new_form);
  }
  return out;
}

json_t *sim_rebuild_event(sim_rebuild_t *r, int64_t vsync_us, int64_t frame_number,
                          const int counts[SIM_LOC__COUNT]) {
  int64_t pairs[2 * SIM_LOC__COUNT];
  size_t n = 0;
  for (int l = 0; l < SIM_LOC__COUNT; l++) {
    if (counts[l] <= 0) continue;
    pairs[2 * n] = builtin[l].id;
    pairs[2 * n + 1] = counts[l];
    n++;
  }
  return sim_rebuild_event_pairs(r, vsync_us, frame_number, pairs, n);
}

json_t *sim_rebuild_location_map(const sim_rebuild_t *r) {
  json_t *map = json_object();
  for (size_t l = 0; l < r->nlocs; l++)
    if (r->all_known || r->known[l]) add_location(NULL, map, &r->locs[l]);
  return map;
}

sim_rebuild_loc_t *sim_rebuild_parse_locations(const json_t *map, size_t *n) {
  sim_rebuild_loc_t *out = NULL;
  size_t cap = 0, i;
  const char *file;
  const json_t *f;
  *n = 0;
  json_object_foreach((json_t *)map, file, f) {
    const json_t *ids = json_object_get(f, "ids"), *lines = json_object_get(f, "lines"),
                 *cols = json_object_get(f, "columns"), *names = json_object_get(f, "names");
    size_t k = json_array_size(ids);
    if (!k || json_array_size(lines) != k || json_array_size(cols) != k ||
        json_array_size(names) != k)
      continue;
    if (*n + k > cap) {
      sim_rebuild_loc_t *g = realloc(out, 2 * (*n + k) * sizeof *g);
      if (!g) goto oom;
      out = g;
      cap = 2 * (*n + k);
    }
    for (i = 0; i < k; i++) {
      const char *name = json_string_value(json_array_get(names, i));
      out[(*n)++] = (sim_rebuild_loc_t){file, name ? name : "",
                                        (int)json_integer_value(json_array_get(lines, i)),
                                        (int)json_integer_value(json_array_get(cols, i)),
                                        (int)json_integer_value(json_array_get(ids, i))};
    }
  }
  if (*n) return out;
oom:
  free(out);
  *n = 0;
  return NULL;
}
