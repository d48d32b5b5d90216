/* answer_where: where to edit, in an answer that summarises frames (issue
 * 20): pulls the CPU samples of the janky frames of the answer's range
 * (appsrc_cpu.h) and puts `where` into its summary, each finding's place
 * (`at`) and the place of each worst frame that missed on build; then fits
 * what it added, and the rebuilt widgets, within the summary's bound.
 * stop and capture ask it over the session's frames, read over the frames it
 * hands out.
 *
 * Ownership: while the pull runs the op holds the answer (op->held) and the
 * pull (op->cpu); the store must outlive the op (a session's, or the op's
 * own). The continuation runs from the loop, with the answer back. */
#ifndef TELESCOPE_ANSWER_WHERE_H
#define TELESCOPE_ANSWER_WHERE_H

#include <jansson.h>

#include "op.h"
#include "store.h"

typedef void (*answer_where_cb)(op_t *op, json_t *r);

/* Starts the pull over positions [from, to) of st (filter: only frames of the
 * op's interactionId) when r's summary counts frames that missed on build.
 * 1: done(op, r) follows; 0: nothing pulled, r is the caller's again (a note
 * why, if any, is in the warnings). */
int answer_where_start(op_t *op, json_t *r, store_t *st, uint64_t from, uint64_t to, int filter,
                       int64_t budget_us, answer_where_cb done);

/* Where and the rebuilt widgets came after the summary was cut to
 * SUMMARY_MAX_BYTES: they give way within it, least useful first. */
void answer_where_fit(op_t *op, json_t *sum);

#endif
