/* history: the last SESSIONS_HISTORY closed sessions, readable by id, oldest
 * first; the newest SESSIONS_HISTORY_BLOCKS keep their frames' blocks, older
 * ones their timings only (memory bound).
 *
 * Ownership: the history holds one reference to each session in it (it
 * takes the one history_push is given) and releases it when the session
 * falls out or at history_close. Lookups return borrowed pointers. */
#ifndef TELESCOPE_HISTORY_H
#define TELESCOPE_HISTORY_H

#include <stddef.h>

#include "session.h"

#define SESSIONS_HISTORY 16       /* closed sessions kept readable by id */
#define SESSIONS_HISTORY_BLOCKS 4 /* of them, the newest keep their frames' blocks */

typedef struct {
  session_t *s[SESSIONS_HISTORY]; /* oldest first */
  size_t n;
} history_t;

void history_push(history_t *h, session_t *s); /* takes the caller's reference */
session_t *history_find(const history_t *h, const char *id);
session_t *history_newest(const history_t *h, size_t k); /* k-th newest (0: newest), or NULL */
void history_close(history_t *h);

#endif
