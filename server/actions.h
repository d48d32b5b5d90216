/* The actions of telescope_frames (DESIGN 4), one file each: action.c
 * checks arguments and dispatches; action_status.c, action_session.c
 * (start, mark, stop), action_read.c and action_capture.c do the work on top
 * of op.h, sessions.h and frames_answer.h. */
#ifndef TELESCOPE_ACTIONS_H
#define TELESCOPE_ACTIONS_H

#include "op.h"

/* Checks what the schema cannot (combinations) and names unused arguments
 * in warnings. -1 when the call was answered (an argument error). */
int action_check_args(op_t *op);
/* Runs the op's action (the app is bound). */
void action_run(op_t *op);

void action_status(op_t *op);
void action_start(op_t *op);
void action_mark(op_t *op);
void action_stop(op_t *op);
void action_read(op_t *op);
void action_capture(op_t *op);
void action_compare(op_t *op);

/* Plays op->a.workload in the open session op->s (action_drive.c): with the
 * watcher its `drive`, sent(op) once the watcher took it (NULL: follow it
 * until it ended); without, flutter_driver's commands (only with ended).
 * ended(op) once it is over and the app settled, or the bound passed. A
 * drive that cannot start closes the session and fails the call saying why
 * (and what to add to the app). */
void action_drive(op_t *op, void (*sent)(op_t *op), void (*ended)(op_t *op));
/* summary.workload of the closed session (and the drive's outcome) into r. */
void action_drive_put(op_t *op, json_t *r);

/* The answer of a stop or capture: the whole session's summary and what no
 * read took yet, the session and a diagnosis when its end was not clean. */
void action_answer_closed(op_t *op, const wp_status_t *end);

#endif
