/* record: validate and normalise one ext.telescope.frames reply
 * (schema/extension_reply.json) and its FramePerfRecords
 * (schema/frame_perf_record.json) into plain C structs, so nothing the app
 * sends reaches the agent unchecked and the summaries never touch jansson per
 * frame. Pure: no loop, no clock. A reply is validated whole before anything
 * is returned; on error the output is left empty (nothing half-applied).
 *
 * Every wire form is read into the same structs: protocol 1 (blocks as an
 * object of objects), protocol 2 (a per-reply "blockNames" table, each
 * record's blocks a flat array of [nameIndex, micros, selfMicros, count]
 * quadruples) and protocol 3 (protocol 2 with each record an array in a
 * fixed order and a per-reply "interactions" table; DESIGN 5). Nothing past
 * this module sees which one came. */
#ifndef TELESCOPE_RECORD_H
#define TELESCOPE_RECORD_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define RECORD_MAX_RECORDS 4096    /* records in one reply (the watcher's ring size) */
#define RECORD_MAX_BLOCKS 256      /* distinct block names in one record */
#define RECORD_MAX_NAME 256        /* bytes in a block name */
#define RECORD_MAX_INTERACTION 128 /* characters in an interactionId (schema) */
#define RECORD_MAX_LINKED_BY 64    /* characters in linkedBy (schema) */
#define RECORD_MAX_RUN_ID 128      /* bytes in a runId (it travels inside cursors) */
#define RECORD_MAX_BLOCK_NAMES 65536 /* entries in a protocol-2 blockNames table */
#define RECORD_MAX_DRAIN_ERROR 1024  /* characters in drainError */
#define RECORD_ERR_LEN 256         /* enough for any error this module writes */

/* Bounds on the app's integers, so that the server's differences (atUs -
 * vsyncStartUs) and sums (a session's micros per block) cannot overflow
 * int64: timestamps within +-2^53 µs, durations and counts within 2^40
 * (12.7 days, or a trillion; 2^23 frames of them still sum below 2^63),
 * sequence numbers and counters within 2^53 (exact in a JSON double too). */
#define RECORD_MAX_TIME_US (INT64_C(1) << 53)
#define RECORD_MAX_AMOUNT (INT64_C(1) << 40)
#define RECORD_MAX_COUNTER (INT64_C(1) << 53)

#define RECORD_PROTOCOL_MAX 3 /* the newest wire form this server reads */

typedef struct {
  char *name; /* a counted name (record_name_new): one reference owned */
  int64_t micros, self_micros, count;
} record_block_t;

typedef struct {
  int64_t seq, frame_number, at_us, vsync_start_us;
  int64_t build_us, raster_us, vsync_overhead_us, total_span_us;
  int64_t layer_cache_count, picture_cache_count; /* -1 when absent */
  char *interaction_id, *linked_by;               /* owned; both NULL or both set */
  record_block_t *blocks;                         /* owned, in the reply's key order */
  size_t nblocks;
  /* Set by the store, never parsed: a frame of the app's start-up (store.h),
   * kept out of the steady-state jank and findings (docs/tool.md "Start-up"). */
  int startup;
} frame_t;

#define RECORD_DRIVE_CANDIDATES 5 /* finders a failed drive lists (DRIVE 3) */
#define RECORD_DRIVE_FINDER 128   /* characters in one of them */
#define RECORD_DRIVE_ERROR 512    /* characters of a drive's error kept */
#define RECORD_DRIVE_CUT 64       /* "run/step" entries of cut steps kept */

/* The `drive` object a watcher reply carries while a workload plays and
 * once more after it ended (DRIVE 3). Fixed-size, so it is copied by value. */
typedef struct {
  int present;
  char id[32];
  char state[8]; /* "running", "done", "failed" */
  int run, runs, step, of;
  char error[RECORD_DRIVE_ERROR + 1];                        /* "": none */
  char candidates[RECORD_DRIVE_CANDIDATES][RECORD_DRIVE_FINDER + 1];
  int ncandidates;
  char cut[RECORD_DRIVE_CUT][16];
  int ncut;
} record_drive_t;

typedef struct {
  char *watcher_version, *run_id; /* owned */
  int64_t liveness_counter, now_us;
  int collecting, frames_enabled;
  const char *lifecycle;            /* static string, NULL when the app reported null */
  double refresh_rate;              /* Hz; 0 when unknown */
  char *interaction_id, *linked_by; /* current interaction, owned; NULL when none */
  int64_t first_seq, last_seq, pending, dropped_attributions;
  int protocol;                     /* 1-3: the form it came in (parsed the same) */
  const char *build_mode;           /* static "debug"/"profile"/"release"; NULL: not said */
  char *drain_error;                /* owned; NULL: draining works (or not said) */
  int timings_missing;              /* frames drawn but no FrameTiming came (0: not said) */
  int collection_auto_off;          /* collection went off as nobody read (0: not said) */
  int collection_taken_over; /* start found another tool collecting; its buffer was dropped */
  int collection_lost;       /* another tool switched collection off while the watcher collected */
  int frame_events; /* answered from Flutter.Frame events, no watcher (source "frameEvents") */
  int has_records;  /* the reply carried "records" (read replies) */
  frame_t *records; /* owned, seq strictly increasing */
  size_t nrecords;
  int more;
  record_drive_t drive; /* present when the reply carried `drive` */
} record_reply_t;

/* Validates `reply` (borrowed) whole; on success fills *out (caller closes it)
 * and returns 0; on failure returns -1, leaves *out zeroed and writes a
 * message naming the offending field ("records[3].buildUs: …") into err. */
int record_reply_parse(record_reply_t *out, const json_t *reply, char *err, size_t errlen);
/* The same, for a reply whose "records" were cut out of its text before the
 * parse (vm_wire_records_span): raw/rawlen is that array's text, and the
 * reply's own "records" member is ignored. Protocol 3 records are read from
 * the text without a JSON tree; any other, or any fault, goes through the
 * tree reader, so the result and every message are record_reply_parse's. */
int record_reply_parse_raw(record_reply_t *out, const json_t *reply, const char *raw,
                           size_t rawlen, char *err, size_t errlen);
void record_reply_close(record_reply_t *r);

/* Validates one protocol-1 FramePerfRecord; same contract as record_reply_parse.
 * `where` prefixes field names in messages (e.g. "records[3]"; may be NULL). */
int record_frame_parse(frame_t *out, const json_t *rec, const char *where, char *err,
                       size_t errlen);
void record_frame_close(frame_t *f);
/* Deep copy; returns 0, or -1 on allocation failure with *dst zeroed. */
int record_frame_copy(frame_t *dst, const frame_t *src);

/* The record as FramePerfRecord JSON (new reference): with_blocks 0 is
 * detail "frames" (no "blocks" key), 1 is detail "blocks" (full record). */
json_t *record_frame_to_json(const frame_t *f, int with_blocks);

/* Block names are counted strings, shared: a protocol-2/3 reply allocates
 * each entry of its blockNames table once, and every record naming it, and
 * every copy of such a record (the store's), holds one reference. The
 * pointer is the text itself, so readers use it as any string; only these
 * three make or drop one. record_name_new: NULL on OOM; record_name_ref
 * returns its argument; record_name_unref(NULL) does nothing. */
char *record_name_new(const char *s);
char *record_name_ref(char *name);
void record_name_unref(char *name);

/* Number of Unicode code points in a UTF-8 string (schema minLength/maxLength). */
size_t record_utf8_length(const char *s);

#endif
