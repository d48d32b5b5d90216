#include "switches.h"

#include "log.h"

typedef enum { SW_GET = 0, SW_ON, SW_BACK } sw_mode_t;

static void switch_reply(void *arg, const wp_status_t *st, int value) {
  switches_t *sw = arg;
  sw->call = NULL;
  wp_track_t t = sw->track;
  if (sw->mode == SW_GET) { /* read before switching on */
    if (wp_failed(st))
      sw->failed[t] = 1;
    else
      sw->prev[t] = value < 0 ? 0 : value;
  } else if (sw->mode == SW_ON) {
    if (wp_failed(st)) {
      sw->failed[t] = 1;
      if (wp_maybe_ran(st)) sw->dirty[t] = 1;
    } else {
      sw->on[t] = 1;
      sw->dirty[t] = 0;
    }
  } else { /* set back */
    sw->on[t] = 0;
    sw->dirty[t] = wp_failed(st);
  }
  if (wp_failed(st)) log_debug("sessions: profile switch %s: %s", wp_track_name(t), st->detail);
  sw->settled(sw->arg);
}

/* SW_BACK sets the switch to what it was before we switched it on. */
static int switch_send(switches_t *sw, wp_track_t t, sw_mode_t mode) {
  int value = mode == SW_GET ? -1 : mode == SW_ON ? 1 : sw->prev[t] == 1;
  /* Counted when sent: what the app does on it (trackRebuildDirtyWidgets'
   * forced frame) can come before the reply. On already, it does nothing. */
  if (mode == SW_ON && sw->prev[t] != 1) sw->on_sent[t]++;
  sw->track = t;
  sw->mode = (int)mode;
  sw->call = wp_switch(sw->t, t, value, switch_reply, sw);
  return sw->call ? 0 : -1;
}

int switches_step(switches_t *sw, int want, const int wanted[WP_TRACK__COUNT]) {
  for (int t = 0; t < WP_TRACK__COUNT; t++) {
    if (want && wanted[t] && !sw->on[t] && !sw->failed[t])
      return switch_send(sw, t, sw->prev[t] < 0 ? SW_GET : SW_ON) == 0 ? 1 : -1;
    if (!want && sw->on[t]) return switch_send(sw, t, SW_BACK) == 0 ? 1 : -1;
  }
  return 0;
}

int switches_restore_dirty(switches_t *sw) {
  for (int t = 0; t < WP_TRACK__COUNT; t++)
    if (sw->dirty[t] && switch_send(sw, t, SW_BACK) == 0) return 1;
  return 0;
}

int switches_dirty(const switches_t *sw) {
  int d = 0;
  for (int t = 0; t < WP_TRACK__COUNT; t++) d |= sw->dirty[t];
  return d;
}

int switches_calling(const switches_t *sw) { return sw->call != NULL; }

void switches_app_restarted(switches_t *sw) {
  for (int t = 0; t < WP_TRACK__COUNT; t++) sw->on[t] = 0;
}

void switches_settle(switches_t *sw) {
  for (int t = 0; t < WP_TRACK__COUNT; t++) sw->failed[t] = 0;
}

void switches_cancel(switches_t *sw) {
  wp_cancel(sw->call);
  sw->call = NULL;
}

void switches_init(switches_t *sw, const wp_transport_t *t, void (*settled)(void *), void *arg) {
  *sw = (switches_t){.t = t, .settled = settled, .arg = arg};
  for (int i = 0; i < WP_TRACK__COUNT; i++) sw->prev[i] = -1;
}
