/* frames_answer: what read, stop and capture share, below them: the frames
 * part of an answer (a range taken from a store: summary, listing,
 * truncation, cursor) and the empty-read decision (docs/tool.md
 * "Diagnosis"), which watches, re-reads and probes through the op. */
#ifndef TELESCOPE_FRAMES_ANSWER_H
#define TELESCOPE_FRAMES_ANSWER_H

#include <jansson.h>

#include "op.h"
#include "store.h"

typedef struct {
  uint64_t taken;     /* frames the answer covers */
  uint64_t next;      /* the position after them */
  uint64_t available; /* frames the range held */
} answer_take_t;

/* Takes the frames of st from position `from` (of the op's interaction when
 * filter is set) per the op's detail and limit, and puts into r: `summary`
 * (of exactly the taken frames, or with whole of every frame in st),
 * `frames` (detail frames|blocks), `truncated` when fewer were listed than
 * available, `undelivered` (and a warning) when frames fell out of the window
 * first. 0, or -1 when out of memory. */
int answer_put_frames(op_t *op, json_t *r, store_t *st, uint64_t from, int filter, int whole,
                      int64_t budget_us, answer_take_t *out);

/* Puts "nextCursor" (kind, name, position) into r. */
void answer_put_cursor(json_t *r, int session_kind, const char *name, int64_t pos);

/* Runs the empty-read decision for an op whose read found nothing:
 * new_frames says what it found (0 here), and when it ends,
 * op->after_diag(op, code) is called (DIAG_NONE: frames arrived meanwhile
 * as far as the decision can tell: read again). */
void answer_diagnose_empty(op_t *op);
/* The facts common to every decision (connection, liveness, restart). */
void answer_fill_facts(op_t *op, int64_t new_frames, int has_blocks, int session_active);

#endif
