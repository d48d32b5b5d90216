/* The parts record.c (one record) and record_reply.c (the whole reply)
 * share. Nothing else includes it but tests/unit/test_record_text.c. */
#ifndef TELESCOPE_RECORD_IMPL_H
#define TELESCOPE_RECORD_IMPL_H

#include "record.h"

/* A protocol-2 or -3 reply's tables, shared by its records. seen[i]
 * holds the mark of the last record that named entry i, so a record naming
 * one entry twice is caught in O(1) per block without clearing anything. */
typedef struct {
  const char **names; /* borrowed from the reply */
  char **shared;      /* each entry's counted name, made on first use (n slots) */
  size_t n;
  uint32_t *seen;
  uint32_t mark;
  int positional;      /* protocol 3: records are arrays */
  const json_t *pairs; /* protocol 3: the reply's checked interactions (NULL: none) */
} record_tables_t;

char *record_dup(const char *s);
/* Drops the tables' references to their counted names (the records that
 * took one keep theirs) and frees the slots. */
void record_tables_drop_names(record_tables_t *t);
/* Integer v (the member key of the message) within [min, max] into *out:
 * 1 when read, 0 when absent and not required, -1 with err written. Reals
 * are refused: the schema says integer. */
int record_get_value(const json_t *v, const char *key, int required, int64_t min, int64_t max,
                     int64_t *out, const char *where, char *err, size_t errlen);
int record_get_int(const json_t *obj, const char *key, int required, int64_t min, int64_t max,
                   int64_t *out, const char *where, char *err, size_t errlen);
/* A string of 1..maxchars code points without NUL, or -1 with err written. */
int record_check_string(const json_t *v, const char *where, const char *key, size_t maxchars,
                        char *err, size_t errlen);
/* One record of any form: names NULL for protocol 1, the reply's tables
 * for protocols 2 and 3 (record_frame_parse's contract otherwise). */
int record_frame_parse_in(frame_t *out, const json_t *rec, const char *where,
                          record_tables_t *names, char *err, size_t errlen);

/* Record i of r against the records before it and the reply's firstSeq and
 * lastSeq: 0, or -1 with err written ("<where>.seq: …"). */
int record_seq_check(const record_reply_t *r, size_t i, const char *where, char *err,
                     size_t errlen);

/* Protocol 3: the records array's text [p, p + n) into r->records, with
 * every check the tree reader makes (r->first_seq and r->last_seq set,
 * tables t ready); 0 and r->has_records set, or -1 with r's records left
 * empty when anything is not as expected: then parse the text and use the
 * tree reader, which names the fault. */
int record_frames_from_text(record_reply_t *r, const char *p, size_t n, record_tables_t *t);

#endif
