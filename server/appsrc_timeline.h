/* appsrc_timeline: the VM timeline as an app-side source (appsrc.h has the
 * shape): the GC and Embedder streams recorded while sessions want them
 * (getVMTimelineFlags, setVMTimelineFlags), pulled after each drain
 * generation (getVMTimeline from a moving origin, reaching back
 * APPSRC_TL_OVERLAP_US), and set back to what the VM recorded less ours
 * when no session wants them (a stream another client changed meanwhile
 * stays as it left it).
 *
 * Ownership: the source owns the flags it read, what it will set back, its
 * parser, its calls in flight and a large reply being read off the loop; a session owns its slot (appsrc_tl_slot_t)
 * and the events in it (appsrc_tl_slot_close frees them). */
#ifndef TELESCOPE_APPSRC_TIMELINE_H
#define TELESCOPE_APPSRC_TIMELINE_H

#include <stddef.h>
#include <uv.h>

#include "appsrc.h"
#include "vmtl.h"
#include "wproto.h"

#define APPSRC_TL_MAX_EVENTS 20000  /* timeline events kept per session (then timelineDropped) */
#define APPSRC_TL_OVERLAP_US 500000 /* pulls reach back this far: events are recorded when they end */

typedef struct appsrc_timeline appsrc_timeline_t;

/* A session's timeline: the events kept for it, in the order they were read. */
typedef struct {
  appsrc_slot_t base;
  vmtl_event_t *ev; /* owned by the session; APPSRC_TL_MAX_EVENTS at most */
  size_t n, cap;
} appsrc_tl_slot_t;

/* t is borrowed (the owner's; its call_vm NULL: no timeline to be had).
 * settled(arg) after every control call answered. A large pull's reply is
 * parsed on loop's thread pool. NULL: out of memory. */
appsrc_timeline_t *appsrc_timeline_new(uv_loop_t *loop, const wp_transport_t *t,
                                       appsrc_settled_cb settled, void *arg)
    __attribute__((warn_unused_result));
/* Cancels the calls in flight (no callback) and frees; nothing is set back.
 * A reply being read off the loop is let finish and then freed (the loop
 * runs until it has). */
void appsrc_timeline_free(appsrc_timeline_t *src);
/* The slot of an open session; detach it before the session closes. */
void appsrc_timeline_attach(appsrc_timeline_t *src, appsrc_tl_slot_t *slot);
void appsrc_timeline_detach(appsrc_timeline_t *src, appsrc_tl_slot_t *slot);
/* The next control step, if one is due (want: sessions are open): 1 when a
 * call went out. */
int appsrc_timeline_step(appsrc_timeline_t *src, int want);
/* Pulls what the VM recorded since the last pull, when the timeline is on,
 * a slot wants it and ok (the drain reached the app): 1 when a pull went
 * out (done(arg) follows), 0 when none was due. */
int appsrc_timeline_pull(appsrc_timeline_t *src, int ok, appsrc_done_cb done, void *arg);
int appsrc_timeline_calling(const appsrc_timeline_t *src); /* a control call in flight */
int appsrc_timeline_pulling(const appsrc_timeline_t *src); /* a pull in flight */
/* Why the last set-back failed (the streams stay recorded), once; NULL when
 * it did not. Valid until the next call. */
const char *appsrc_timeline_lost(appsrc_timeline_t *src);
/* The connection to the app dropped: its flags are not set back on the next. */
void appsrc_timeline_gone(appsrc_timeline_t *src);
/* Frees the events in slot. */
void appsrc_tl_slot_close(appsrc_tl_slot_t *slot);

#endif
