#include "waits.h"

#include <stdlib.h>
#include <string.h>

#include "container_of.h"
#include "log.h"

/* Both lists keep arrival order: waiters that become ready in the same
 * pass are called back in the order their calls came (two joined stops, a
 * read and a stop), so the first asked is the first to hand out frames. */
static void wait_unlink(sessions_wait_t *w) {
  waits_t *q = w->q;
  sessions_wait_t **head = w->ready ? &q->ready : &q->waits;
  sessions_wait_t **tail = w->ready ? &q->ready_tail : &q->waits_tail;
  if (w->prev)
    w->prev->next = w->next;
  else
    *head = w->next;
  if (w->next)
    w->next->prev = w->prev;
  else
    *tail = w->prev;
  w->next = w->prev = NULL;
}

/* Appends w to the list its `ready` flag names. */
static void wait_append(sessions_wait_t *w) {
  waits_t *q = w->q;
  sessions_wait_t **head = w->ready ? &q->ready : &q->waits;
  sessions_wait_t **tail = w->ready ? &q->ready_tail : &q->waits_tail;
  w->prev = *tail;
  w->next = NULL;
  if (*tail)
    (*tail)->next = w;
  else
    *head = w;
  *tail = w;
}

static void wait_free(sessions_wait_t *w) {
  if (w->s) session_unref(w->s);
  free((char *)w->opt.interaction_id);
  free((char *)w->opt.linked_by);
  free(w);
}

/* Callbacks run here, a loop turn after the event that readied them, oldest
 * first; the ones readied meanwhile wait for the next turn. A callback may
 * cancel any other waiter. */
static void on_idle(uv_idle_t *h) {
  waits_t *q = container_of(h, waits_t, idle);
  size_t n = 0;
  for (sessions_wait_t *w = q->ready; w; w = w->next) n++;
  while (n-- && q->ready) {
    sessions_wait_t *w = q->ready;
    wait_unlink(w);
    w->ready = 0;
    session_t *s = w->s;
    w->s = NULL;
    if (s && s->open_failed) {
      session_unref(s);
      s = NULL;
    }
    if (w->open_cb)
      w->open_cb(w->arg, s, w->joined, &w->st);
    else if (w->cb)
      w->cb(w->arg, s, &w->st);
    else if (s)
      session_unref(s); /* nobody waits (a cancelled capture's close) */
    wait_free(w);
  }
  if (!q->ready) uv_idle_stop(&q->idle);
}

void waits_ready(sessions_wait_t *w, const wp_status_t *st) {
  waits_t *q = w->q;
  log_debug("sessions: waiter %d of %s ready", (int)w->kind, w->s ? w->s->id : "-");
  wait_unlink(w);
  if (st)
    w->st = *st;
  else
    wp_status_set(&w->st, DIAG_NONE, 0, NULL);
  w->ready = 1;
  wait_append(w);
  if (!uv_is_active((uv_handle_t *)&q->idle)) uv_idle_start(&q->idle, on_idle);
}

sessions_wait_t *waits_new(waits_t *q, struct sessions *m, wait_kind_t kind, session_t *s) {
  sessions_wait_t *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->m = m;
  w->q = q;
  w->kind = kind;
  w->s = s;
  if (s) session_ref(s);
  wait_append(w);
  return w;
}

void waits_set_options(sessions_wait_t *w, const session_options_t *opt) {
  w->opt = *opt;
  w->opt.interaction_id = opt->interaction_id ? strdup(opt->interaction_id) : NULL;
  w->opt.linked_by = opt->linked_by ? strdup(opt->linked_by) : NULL;
}

void waits_cancel(sessions_wait_t *w) {
  if (!w) return;
  wait_unlink(w);
  wait_free(w);
}

void waits_init(waits_t *q, uv_loop_t *loop) {
  q->waits = q->waits_tail = q->ready = q->ready_tail = NULL;
  uv_idle_init(loop, &q->idle);
}
