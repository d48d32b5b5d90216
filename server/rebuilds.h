/* rebuilds: which widgets rebuilt in janky frames, from the inspector's
 * Flutter.RebuiltWidgets events (debug builds with trackRebuilds on;
 * docs/flutter-apis.md "Rebuilt widgets", docs/tool.md "Rebuilt widgets").
 * Pure: event data in, the `rebuilds` summary object out; no loop, no socket.
 *
 * One table per app connection: the (location id, count) lists of the last
 * REBUILDS_MAX_FRAMES frames by frame number (FrameTiming's, the one the
 * frames carry), and the location table (id → widget name, file, line)
 * filled from the events' `locations` / `newLocations` and from
 * widgetLocationIdMap replies. Location ids are Dart statics: a hot restart
 * (another isolate) starts them again, so the table is cleared.
 *
 * Ranking: over the frames that have an event (but the baseline frame that
 * switching tracking on forces, see rebuilds_switched_on), a location's mean count per
 * janky frame minus its mean per calm frame; the top REBUILDS_MAX_WIDGETS
 * whose janky mean is at least REBUILDS_MIN_EXCESS and REBUILDS_MIN_RATIO
 * times above the calm one (a list of cards that is a little longer when
 * frames are janky is not a cause; a widget that rebuilds only then is).
 * When none passes, the top ones rebuilt at least REBUILDS_MIN_STEADY times
 * per janky frame are listed as `steady`: in a build-bound session the
 * subtree rebuilt in every frame is still where build time may go.
 *
 * Ownership: rebuilds_t owns everything it holds; rebuilds_free frees it. */
#ifndef TELESCOPE_REBUILDS_H
#define TELESCOPE_REBUILDS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define REBUILDS_MAX_FRAMES 4096     /* frames kept (a ring, oldest dropped) */
#define REBUILDS_MAX_PER_FRAME 256   /* (id, count) pairs kept per frame: ≤ 8 MB in all */
#define REBUILDS_MAX_LOCATIONS 16384 /* location table bound */
#define REBUILDS_MAX_WIDGETS 3       /* widgets in `rebuilds.widgets` */
#define REBUILDS_MAX_TEXT 200        /* bytes of a name or file in the answer */
#define REBUILDS_MIN_EXCESS 0.5      /* rebuilds per janky frame beyond the calm mean */
#define REBUILDS_MIN_RATIO 1.25      /* janky mean / calm mean */
#define REBUILDS_MIN_STEADY 1.0      /* rebuilds per janky frame of a steady rebuilder */

typedef struct rebuilds rebuilds_t;

typedef struct {
  int32_t id; /* the framework's ids are small ints; others are skipped */
  int32_t count;
} rebuilds_count_t;

typedef struct {
  int64_t id;
  char *name; /* the widget class; NULL when the older form gave none */
  char *file; /* the creation location's file URI */
  int64_t line, column;
} rebuilds_loc_t;

/* One kept frame, classified by the caller. */
typedef struct {
  int64_t frame_number;
  int janky; /* missed the budget on build (not a startup frame) */
  int calm;  /* missed nothing */
} rebuilds_frame_t;

rebuilds_t *rebuilds_new(void);
void rebuilds_free(rebuilds_t *rb);
/* Drops frames and locations (a hot restart). */
void rebuilds_clear(rebuilds_t *rb);

/* One Extension-stream event (borrowed). Only Flutter.RebuiltWidgets of
 * current_isolate is taken (NULL/"": not known yet, then only the table's
 * isolate, or any when the table has none) — DDS replays old isolates'
 * events; another isolate than the table's (a hot restart) clears the table
 * first. 1 taken, 0 not ours or malformed. */
int rebuilds_feed(rebuilds_t *rb, const char *isolate_id, const char *kind, const json_t *data,
                  const char *current_isolate);
/* A `{file: {ids, lines, columns, names}}` object: the `locations` form.
 * 0, or -1 when malformed (what parsed is kept). */
int rebuilds_add_locations(rebuilds_t *rb, const json_t *locations);
/* The JSON-RPC result of ext.flutter.inspector.widgetLocationIdMap
 * (borrowed): every location of the isolate, the map under "result"
 * (_registerSignalServiceExtension wraps it so in every Flutter version).
 * The inspector sends each location in an event once per isolate, so a
 * server that joined later resolves ids only this way. As add_locations. */
int rebuilds_add_location_map(rebuilds_t *rb, const json_t *reply);
/* trackRebuildDirtyWidgets was switched on (from off) by our call: its
 * forceRebuild draws one frame in which every widget rebuilds, and the next
 * joinable event is that frame (the baseline). Frame numbers cannot tell it:
 * they step by 2 on iOS and skip when the raster thread lags. */
void rebuilds_switched_on(rebuilds_t *rb);
/* Events since the table was cleared that no frame can be joined to: no
 * frameNumber (older Flutter) or -1 (*web = 1: the web engine before
 * flutter#171592). */
size_t rebuilds_unjoined(const rebuilds_t *rb, int *web);

size_t rebuilds_frames(const rebuilds_t *rb);
/* The counts of frame_number, or NULL (n = 0) when no event had it.
 * baseline (may be NULL): 1 for the frame in which Flutter's forceRebuild
 * rebuilt every widget (rebuilds_switched_on); the ranking leaves it out. */
const rebuilds_count_t *rebuilds_frame(const rebuilds_t *rb, int64_t frame_number, size_t *n,
                                       int *baseline);
/* NULL when the id has no location yet. */
const rebuilds_loc_t *rebuilds_location(const rebuilds_t *rb, int64_t id);

/* Where an agent opens a creation location: lib/<rest> after the file URI's
 * last /lib/ (Flutter counts only the project's own widgets), else the
 * path of a file: URI, else the URI. Newly allocated; NULL on OOM. */
char *rebuilds_file_of(const char *uri);

/* The `rebuilds` summary object (new reference), or NULL when no classified
 * frame had an event (nothing to say) or out of memory:
 * {jankyFrames, calmFrames, framesWithEvents, widgets: [{name, file, line,
 * perJankyFrame, perCalmFrame, steady?}]}. Locations without a known name/file are
 * named by id ("location 12"). */
json_t *rebuilds_summary(const rebuilds_t *rb, const rebuilds_frame_t *frames, size_t n);
/* The `rebuilt:` lines of the text an agent reads (malloc'd, "" when there
 * is nothing to say; NULL when rebuilds is NULL or on OOM):
 * "rebuilt: SlowWidget ×12.0 per janky frame vs ×1.0 otherwise (lib/x.dart:42)". */
char *rebuilds_text(const json_t *rebuilds);

#endif
