#include "sim_rebuild.h"

#include <string.h>

#define APP_FILE(f) "file:///home/dev/sim_app/lib/" f

/* Creation locations: where each widget's constructor is called (the
 * kernel transformer's _Location: file, line, column, name). Ids come from
 * the framework's global _toLocationId, shared with framework widgets, so
 * the app's are not 0..n. */
static const struct {
  const char *file, *name;
  int line, column, id;
} locs[SIM_LOC__COUNT] = {
    [SIM_LOC_FEED_LIST] = {APP_FILE("main.dart"), "FeedList", 27, 16, 41},
    [SIM_LOC_PRODUCT_CARD] = {APP_FILE("feed_list.dart"), "ProductCard", 31, 18, 57},
    [SIM_LOC_TEXT] = {APP_FILE("product_card.dart"), "Text", 44, 14, 58},
    [SIM_LOC_SLOW_WIDGET] = {APP_FILE("feed_list.dart"), "SlowWidget", 38, 11, 63},
};

void sim_rebuild_reset(sim_rebuild_t *r) {
  memset(r, 0, sizeof *r);
  r->epoch_us = -1;
}

/* Adds a location to both encodings of exportToJson: the older
 * {file: [id, line, column, ...]} and the newer (Flutter 2.4+)
 * {file: {ids, lines, columns, names}}. */
static void add_location(json_t *old_form, json_t *new_form, int l) {
  json_t *flat = json_object_get(old_form, locs[l].file), *f;
  if (!flat) {
    flat = json_array();
    json_object_set_new(old_form, locs[l].file, flat);
  }
  json_array_append_new(flat, json_integer(locs[l].id));
  json_array_append_new(flat, json_integer(locs[l].line));
  json_array_append_new(flat, json_integer(locs[l].column));
  f = json_object_get(new_form, locs[l].file);
  if (!f) {
    f = json_pack("{s:[], s:[], s:[], s:[]}", "ids", "lines", "columns", "names");
    json_object_set_new(new_form, locs[l].file, f);
  }
  json_array_append_new(json_object_get(f, "ids"), json_integer(locs[l].id));
  json_array_append_new(json_object_get(f, "lines"), json_integer(locs[l].line));
  json_array_append_new(json_object_get(f, "columns"), json_integer(locs[l].column));
  json_array_append_new(json_object_get(f, "names"), json_string(locs[l].name));
}

json_t *sim_rebuild_event(sim_rebuild_t *r, int64_t vsync_us, int64_t frame_number,
                          const int counts[SIM_LOC__COUNT]) {
  json_t *events = json_array(), *old_form = json_object(), *new_form = json_object(), *out;
  int l, fresh = 0;

  if (r->epoch_us < 0) r->epoch_us = vsync_us;
  for (l = 0; l < SIM_LOC__COUNT; l++) {
    if (counts[l] <= 0) continue;
    r->known[l] = 1;
    json_array_append_new(events, json_integer(locs[l].id));
    json_array_append_new(events, json_integer(counts[l]));
    if (!r->sent[l]) {
      r->sent[l] = 1;
      add_location(old_form, new_form, l);
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

json_t *sim_rebuild_location_map(const sim_rebuild_t *r) {
  json_t *old_form = json_object(), *new_form = json_object();
  int l;
  for (l = 0; l < SIM_LOC__COUNT; l++)
    if (r->known[l]) add_location(old_form, new_form, l);
  json_decref(old_form);
  return new_form;
}
