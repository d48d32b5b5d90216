#include "cursor.h"
#include "errbuf.h"

#include <inttypes.h>
#include <libwebsockets.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* base64url through libwebsockets (lws-sha1-base64.h). At 4.1.6 its encoder
 * pads with '=' (lib/misc/base64-decode.c:76-78), which a cursor never
 * carries: the padding is cut. Its decoder reads what we issue but accepts
 * what a cursor must not, and says nothing of it (base64-decode.c:117-141,
 * 154-172): it skips a character outside its alphabet, takes the standard
 * alphabet's '+' and '/' as well as '-' and '_', ignores '=', drops a
 * one-character tail and the spare bits of a short one. So a cursor's length,
 * alphabet and tail are checked here first, and only then decoded. */
static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static uint32_t fnv1a(const char *s, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

int cursor_encode(const char *run_id, int64_t seq, char *out, size_t outlen) {
  return cursor_encode_kind(CURSOR_WATCHER, run_id, seq, out, outlen);
}

int cursor_encode_kind(cursor_kind_t kind, const char *run_id, int64_t seq, char *out,
                       size_t outlen) {
  char plain[CURSOR_RUN_ID_MAX + 64];
  size_t rl = strlen(run_id);
  if (rl == 0 || rl > CURSOR_RUN_ID_MAX || seq < 0) return -1;
  int n = snprintf(plain, sizeof plain, "v%d:%s:%" PRId64, (int)kind, run_id, seq);
  if (n < 0 || (size_t)n >= sizeof plain) return -1;
  n += snprintf(plain + n, sizeof plain - (size_t)n, ":%08" PRIx32, fnv1a(plain, (size_t)n));
  char padded[(sizeof plain + 2) / 3 * 4 + 2]; /* lws wants room for one byte more */
  int w = lws_b64_encode_string_url(plain, n, padded, (int)sizeof padded);
  if (w < 0) return -1;
  while (w > 0 && padded[w - 1] == '=') w--;
  if ((size_t)w + 1 > outlen) return -1;
  memcpy(out, padded, (size_t)w);
  out[w] = 0;
  return 0;
}

int cursor_decode(const char *cursor, char *run_id, size_t run_len, int64_t *seq, char *err,
                  size_t errlen) {
  cursor_kind_t kind;
  if (cursor_decode_kind(cursor, &kind, run_id, run_len, seq, err, errlen) < 0) return -1;
  if (kind != CURSOR_WATCHER)
    return errbuf_fail(err, errlen, "cursor: a session cursor where a watcher cursor was expected");
  return 0;
}

int cursor_decode_kind(const char *cursor, cursor_kind_t *kind, char *run_id, size_t run_len,
                       int64_t *seq, char *err, size_t errlen) {
  char plain[CURSOR_MAX];
  size_t len = strlen(cursor);
  if (len == 0)
    return errbuf_fail(err, errlen, "cursor: empty; pass the nextCursor of a previous read");
  if (len >= CURSOR_MAX || len % 4 == 1)
    return errbuf_fail(err, errlen, "cursor: not a cursor this server issued (bad length)");
  if (strspn(cursor, b64url) != len)
    return errbuf_fail(err, errlen, "cursor: not a cursor this server issued (bad character)");
  /* Only the canonical encoding is accepted: spare low bits of a short tail
   * must be zero, so no two strings name the same cursor. */
  int last = (int)(strchr(b64url, cursor[len - 1]) - b64url);
  if ((len % 4 == 2 && (last & 0xF)) || (len % 4 == 3 && (last & 0x3)))
    return errbuf_fail(err, errlen, "cursor: not a cursor this server issued (bad padding bits)");
  int got = lws_b64_decode_string_len(cursor, (int)len, plain, (int)sizeof plain);
  size_t n = len * 3 / 4;
  if (got < 0 || (size_t)got != n) /* not after the checks above; never trust a count unchecked */
    return errbuf_fail(err, errlen, "cursor: not a cursor this server issued (bad length)");
  plain[n] = 0;
  if (memchr(plain, 0, n) || n < 14 || (memcmp(plain, "v1:", 3) && memcmp(plain, "v2:", 3)))
    return errbuf_fail(err, errlen, "cursor: not a cursor this server issued (unknown version)");
  *kind = plain[1] == '1' ? CURSOR_WATCHER : CURSOR_SESSION;
  char *check = strrchr(plain, ':');
  if (strlen(check + 1) != 8 ||
      strtoul(check + 1, NULL, 16) != fnv1a(plain, (size_t)(check - plain)) ||
      strspn(check + 1, "0123456789abcdef") != 8)
    return errbuf_fail(err, errlen,
                       "cursor: damaged (checksum mismatch); pass nextCursor unchanged");
  *check = 0;
  char *colon = strrchr(plain, ':');
  const char *digits = colon + 1;
  size_t dl = strlen(digits);
  if (colon <= plain + 2 || dl == 0 || dl > 18 || strspn(digits, "0123456789") != dl)
    return errbuf_fail(err, errlen, "cursor: damaged (bad seq)");
  *colon = 0;
  size_t rl = strlen(plain + 3);
  if (rl == 0 || rl > CURSOR_RUN_ID_MAX || rl + 1 > run_len)
    return errbuf_fail(err, errlen, "cursor: damaged (bad runId)");
  memcpy(run_id, plain + 3, rl + 1);
  *seq = strtoll(digits, NULL, 10);
  return 0;
}

int64_t cursor_resolve(const char *cursor_run_id, int64_t cursor_seq, const char *current_run_id,
                       int64_t first_seq, int *restarted) {
  if (!strcmp(cursor_run_id, current_run_id)) {
    *restarted = 0;
    return cursor_seq;
  }
  *restarted = 1;
  return first_seq > 0 ? first_seq - 1 : 0;
}
