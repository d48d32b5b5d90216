/* switches: Flutter's ext.flutter.profileWidgetBuilds / profileRenderObject-
 * Layouts / profileRenderObjectPaints, switched on while an open session
 * asked for them (trackWidgets, …) and set back to what they were when none
 * does (docs/tool.md "Sessions"). A switch call the app may have run late
 * leaves it dirty: set back again on the next contact.
 *
 * Ownership: the session manager embeds the switches_t and owns the
 * transport it points at; it reads on[] and failed[]; the switches own their
 * call in flight (switches_cancel drops it, no callback). settled(arg) runs
 * after every reply. */
#ifndef TELESCOPE_SWITCHES_H
#define TELESCOPE_SWITCHES_H

#include "wproto.h"

typedef struct {
  int prev[WP_TRACK__COUNT];   /* before we switched it on; -1 unknown */
  int on[WP_TRACK__COUNT];     /* on, by us */
  int failed[WP_TRACK__COUNT]; /* could not be switched on while sessions are open */
  int dirty[WP_TRACK__COUNT];  /* a call may have run late: set back on the next contact */
  unsigned on_sent[WP_TRACK__COUNT]; /* switch-on calls sent while it was off, ever */
  const wp_transport_t *t;     /* the owner's */
  void (*settled)(void *arg);
  void *arg;
  wp_call_t *call;
  wp_track_t track; /* of the call in flight */
  int mode;
} switches_t;

void switches_init(switches_t *sw, const wp_transport_t *t, void (*settled)(void *), void *arg);
/* The next switch call, if one is due: with want (sessions are open), switch
 * on what wanted[] names; without, set back what we switched on. 1: a call
 * went out; 0: none due; -1: out of memory (nothing sent). */
int switches_step(switches_t *sw, int want, const int wanted[WP_TRACK__COUNT]);
/* With no session open: sets a dirty switch back. 1 when a call went out. */
int switches_restore_dirty(switches_t *sw);
int switches_dirty(const switches_t *sw);
int switches_calling(const switches_t *sw);
/* The app restarted: its switches are off again. */
void switches_app_restarted(switches_t *sw);
/* No session is open any more and everything is set back: forget failures. */
void switches_settle(switches_t *sw);
void switches_cancel(switches_t *sw);

#endif
