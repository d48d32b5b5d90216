/* cursor: the opaque `nextCursor` strings of `read` (DESIGN 4, 5). A cursor
 * carries the watcher's runId and the last seq covered, because seq restarts
 * with every run (hot restart). Wire form: base64url (no padding) of
 * "v1:<runId>:<seq>:<check>", check being 8 hex digits of FNV-1a over
 * "v1:<runId>:<seq>", so a truncated or edited cursor is refused instead of
 * silently reading from a wrong place. Pure. */
#ifndef TELESCOPE_CURSOR_H
#define TELESCOPE_CURSOR_H

#include <stddef.h>
#include <stdint.h>

#define CURSOR_MAX 400        /* bytes of an encoded cursor, NUL included */
#define CURSOR_RUN_ID_MAX 128 /* bytes of a runId inside a cursor */

/* Two kinds share the form: a watcher position ("v1:<runId>:<seq>", reads
 * outside sessions) and a session position ("v2:<sessionId>:<pos>", a
 * position in a session's delivery stream, docs/tool.md "Delivery"). */
typedef enum { CURSOR_WATCHER = 1, CURSOR_SESSION = 2 } cursor_kind_t;
int cursor_encode_kind(cursor_kind_t kind, const char *name, int64_t n, char *out, size_t outlen);
int cursor_decode_kind(const char *cursor, cursor_kind_t *kind, char *name, size_t name_len,
                       int64_t *n, char *err, size_t errlen);

/* Writes the cursor for (run_id, seq) into out; 0, or -1 when run_id is empty
 * or too long, seq is negative or out is too small. */
int cursor_encode(const char *run_id, int64_t seq, char *out, size_t outlen);

/* Parses a cursor; 0 and fills run_id (NUL-terminated, run_len ≥
 * CURSOR_RUN_ID_MAX + 1) and *seq, or -1 with a message for a -32602 /
 * isError answer ("cursor: …") in err. */
int cursor_decode(const char *cursor, char *run_id, size_t run_len, int64_t *seq, char *err,
                  size_t errlen);

/* Where a read continues. A cursor of the current run continues after its seq
 * (a seq beyond last_seq simply finds nothing new). A cursor of another run
 * means the app restarted since: the read starts at the new run's first_seq
 * and *restarted is set (report app_restarted; not an error). Returns the
 * `since` to send to the watcher (records with seq > since). */
int64_t cursor_resolve(const char *cursor_run_id, int64_t cursor_seq, const char *current_run_id,
                       int64_t first_seq, int *restarted);

#endif
