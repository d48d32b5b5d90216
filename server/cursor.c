#include "cursor.h"
#include "errbuf.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

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
  size_t need = ((size_t)n * 4 + 2) / 3 + 1;
  if (need > outlen) return -1;
  size_t o = 0;
  for (int i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)(unsigned char)plain[i] << 16;
    if (i + 1 < n) v |= (uint32_t)(unsigned char)plain[i + 1] << 8;
    if (i + 2 < n) v |= (unsigned char)plain[i + 2];
    out[o++] = b64[(v >> 18) & 63];
    out[o++] = b64[(v >> 12) & 63];
    if (i + 1 < n) out[o++] = b64[(v >> 6) & 63];
    if (i + 2 < n) out[o++] = b64[v & 63];
  }
  out[o] = 0;
  return 0;
}

static int b64_value(char c) {
  const char *p = c ? strchr(b64, c) : NULL;
  return p ? (int)(p - b64) : -1;
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
  size_t len = strlen(cursor), n = 0;
  if (len == 0) return errbuf_fail(err, errlen, "cursor: empty; pass the nextCursor of a previous read");
  if (len >= CURSOR_MAX || len % 4 == 1)
    return errbuf_fail(err, errlen, "cursor: not a cursor this server issued (bad length)");
  for (size_t i = 0; i < len; i += 4) {
    uint32_t v = 0;
    size_t k;
    for (k = 0; k < 4 && i + k < len; k++) {
      int d = b64_value(cursor[i + k]);
      if (d < 0)
        return errbuf_fail(err, errlen, "cursor: not a cursor this server issued (bad character)");
      v |= (uint32_t)d << (18 - 6 * k);
    }
    /* Only the canonical encoding is accepted: spare low bits of a short
     * tail must be zero, so no two strings name the same cursor. */
    if ((k == 2 && (v & 0xFFFF)) || (k == 3 && (v & 0xFF)))
      return errbuf_fail(err, errlen, "cursor: not a cursor this server issued (bad padding bits)");
    plain[n++] = (char)(v >> 16);
    if (k > 2) plain[n++] = (char)(v >> 8);
    if (k > 3) plain[n++] = (char)v;
  }
  plain[n] = 0;
  if (memchr(plain, 0, n) || n < 14 || (memcmp(plain, "v1:", 3) && memcmp(plain, "v2:", 3)))
    return errbuf_fail(err, errlen, "cursor: not a cursor this server issued (unknown version)");
  *kind = plain[1] == '1' ? CURSOR_WATCHER : CURSOR_SESSION;
  char *check = strrchr(plain, ':');
  if (strlen(check + 1) != 8 ||
      strtoul(check + 1, NULL, 16) != fnv1a(plain, (size_t)(check - plain)) ||
      strspn(check + 1, "0123456789abcdef") != 8)
    return errbuf_fail(err, errlen, "cursor: damaged (checksum mismatch); pass nextCursor unchanged");
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
