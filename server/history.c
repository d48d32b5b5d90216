#include "history.h"

#include <string.h>

void history_push(history_t *h, session_t *s) {
  if (h->n == SESSIONS_HISTORY) {
    session_unref(h->s[0]);
    memmove(h->s, h->s + 1, (SESSIONS_HISTORY - 1) * sizeof *h->s);
    h->n--;
  }
  h->s[h->n++] = s;
  if (h->n > SESSIONS_HISTORY_BLOCKS) {
    session_t *old = h->s[h->n - 1 - SESSIONS_HISTORY_BLOCKS];
    if (old->store) store_drop_blocks(old->store);
  }
}

session_t *history_find(const history_t *h, const char *id) {
  for (size_t i = 0; i < h->n; i++)
    if (!strcmp(h->s[i]->id, id)) return h->s[i];
  return NULL;
}

session_t *history_newest(const history_t *h, size_t k) { return k < h->n ? h->s[h->n - 1 - k] : NULL; }

void history_close(history_t *h) {
  for (size_t i = 0; i < h->n; i++) session_unref(h->s[i]);
  h->n = 0;
}
