/* The widget inspector's rebuild counts (debug builds): which of the app's
 * widgets rebuilt in a frame, by creation location, as
 * ext.flutter.inspector.trackRebuildDirtyWidgets makes the framework post
 * them (Flutter.RebuiltWidgets), and the location table
 * ext.flutter.inspector.widgetLocationIdMap answers with
 * (flutter/flutter packages/flutter/lib/src/widgets/widget_inspector.dart;
 * docs/flutter-apis.md, "Rebuilt widgets"). The locations are the built-in
 * app's, or a recording's (--replay). Pure: no sim_t, no loop. */
#ifndef TELESCOPE_SIM_REBUILD_H
#define TELESCOPE_SIM_REBUILD_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* The built-in app's widget creation locations the simulated frames rebuild. */
typedef enum {
  SIM_LOC_FEED_LIST = 0, /* FeedList(), in main.dart */
  SIM_LOC_PRODUCT_CARD,  /* ProductCard(), in FeedList.build */
  SIM_LOC_TEXT,          /* Text(), in ProductCard.build */
  SIM_LOC_SLOW_WIDGET,   /* SlowWidget(), in FeedList.build */
  SIM_LOC__COUNT
} sim_loc_t;

/* A creation location: where a widget's constructor is called (the kernel
 * transformer's _Location) and the id _toLocationId gave it. */
typedef struct {
  const char *file, *name;
  int line, column, id;
} sim_rebuild_loc_t;

#define SIM_REBUILD_MAX_LOCS 4096 /* a recording's locations past this are not announced */

/* Per isolate run (Dart statics: a hot restart starts again). */
typedef struct {
  const sim_rebuild_loc_t *locs; /* the app's locations; NULL until the first reset */
  size_t nlocs;
  int all_known;                             /* a recording's: every location has an id */
  unsigned char known[SIM_REBUILD_MAX_LOCS]; /* the location has an id */
  unsigned char sent[SIM_REBUILD_MAX_LOCS];  /* ... and the tracker announced it */
  int64_t epoch_us; /* the scheduler's epoch: the first frame's vsync (-1: none yet) */
} sim_rebuild_t;

/* A new run: no id given, nothing announced, no epoch. Keeps the location
 * table (the built-in app's until sim_rebuild_use). */
void sim_rebuild_reset(sim_rebuild_t *r);
/* The app is a recording's: its locations (borrowed; the first
 * SIM_REBUILD_MAX_LOCS) all have ids from the start, as the recorded app had
 * met them before the recording began. */
void sim_rebuild_use(sim_rebuild_t *r, const sim_rebuild_loc_t *locs, size_t n);

/* A frame began (SchedulerBinding.handleBeginFrame): the run's first sets
 * the epoch startTime counts from (_firstRawTimeStampInEpoch). Without it
 * the first event's frame does. */
void sim_rebuild_frame_begun(sim_rebuild_t *r, int64_t vsync_us);
/* The Flutter.RebuiltWidgets extensionData for one frame of the built-in
 * app: counts[] widgets of each location rebuilt, the frame's vsync on the
 * engine clock and its number. New reference. */
json_t *sim_rebuild_event(sim_rebuild_t *r, int64_t vsync_us, int64_t frame_number,
                          const int counts[SIM_LOC__COUNT]);
/* The same from n (location id, count) pairs, flat as the event's `events`
 * (a recorded frame). An id missing from the table is counted, never
 * announced. New reference. */
json_t *sim_rebuild_event_pairs(sim_rebuild_t *r, int64_t vsync_us, int64_t frame_number,
                                const int64_t *pairs, size_t n);
/* widgetLocationIdMap's answer: every location given an id so far, by file.
 * New reference. */
json_t *sim_rebuild_location_map(const sim_rebuild_t *r);

/* The locations of a {file: {ids, lines, columns, names}} object (a
 * recording's rebuildCountModel.locations); names and files borrowed from
 * it. malloc'd array, *n entries; NULL with *n = 0 when there are none (or
 * out of memory). A file whose four lists differ in length is skipped. */
sim_rebuild_loc_t *sim_rebuild_parse_locations(const json_t *map, size_t *n);

#endif
