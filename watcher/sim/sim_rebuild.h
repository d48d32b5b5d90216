/* The widget inspector's rebuild counts (debug builds): which of the app's
 * widgets rebuilt in a frame, by creation location, as
 * ext.flutter.inspector.trackRebuildDirtyWidgets makes the framework post
 * them (Flutter.RebuiltWidgets), and the location table
 * ext.flutter.inspector.widgetLocationIdMap answers with
 * (flutter/flutter packages/flutter/lib/src/widgets/widget_inspector.dart;
 * docs/flutter-apis.md, "Rebuilt widgets"). Pure: no sim_t, no loop. */
#ifndef TELESCOPE_SIM_REBUILD_H
#define TELESCOPE_SIM_REBUILD_H

#include <jansson.h>
#include <stdint.h>

/* The app's widget creation locations the simulated frames rebuild. */
typedef enum {
  SIM_LOC_FEED_LIST = 0, /* FeedList(), in main.dart */
  SIM_LOC_PRODUCT_CARD,  /* ProductCard(), in FeedList.build */
  SIM_LOC_TEXT,          /* Text(), in ProductCard.build */
  SIM_LOC_SLOW_WIDGET,   /* SlowWidget(), in FeedList.build */
  SIM_LOC__COUNT
} sim_loc_t;

/* Per isolate run (Dart statics: a hot restart starts again). */
typedef struct {
  int known[SIM_LOC__COUNT]; /* the location has an id (_toLocationId) */
  int sent[SIM_LOC__COUNT];  /* ... and the tracker announced it (newLocations) */
  int64_t epoch_us;          /* the scheduler's epoch: the first frame's vsync (-1: none yet) */
} sim_rebuild_t;

void sim_rebuild_reset(sim_rebuild_t *r);
/* The Flutter.RebuiltWidgets extensionData for one frame: counts[] widgets
 * of each location rebuilt, the frame's vsync on the engine clock and its
 * number. New reference. */
json_t *sim_rebuild_event(sim_rebuild_t *r, int64_t vsync_us, int64_t frame_number,
                          const int counts[SIM_LOC__COUNT]);
/* widgetLocationIdMap's answer: every location given an id so far, by file.
 * New reference. */
json_t *sim_rebuild_location_map(const sim_rebuild_t *r);

#endif
