/* appsrc: the app-side sources a session records besides the watcher's
 * frames. Today the VM timeline (appsrc_timeline.h); CPU samples
 * (getCpuSamples) and rebuild events are to come as further sources of the
 * same shape, each a file appsrc_<name>.c with the functions below.
 *
 * The shape, driven by the session manager (sessions.c) and the drain
 * (drain.c):
 *   ask/switch on  appsrc_<name>_step(src, want=1): read what the app records
 *                  now, then switch on what the sessions need. One control
 *                  call at a time; returns 1 when a call went out, and the
 *                  source calls its `settled` callback when it is answered.
 *   pull           appsrc_<name>_pull(src, ok, done, arg): after each drain
 *                  generation, fetch what the app recorded within a window
 *                  (since the last pull, reaching back for late events) into
 *                  the slots of the sessions receiving it; done(arg) when it
 *                  ends. 0: no pull was due (done is not called).
 *   restore        appsrc_<name>_step(src, want=0): set back what we changed
 *                  once no session wants it; appsrc_<name>_gone(src): the app
 *                  went away, so nothing is set back on whatever comes next.
 * Adding a source: a slot for it in struct session (session.h), its step in
 * the manager's pump, its pull in drain_done (drain.c), its gone and free
 * next to the timeline's.
 *
 * Ownership: a source owns its state and its calls in flight (its _free
 * cancels them). Each open session holds one slot per source, embedded in
 * the session and attached to the source while the session is open; the
 * session owns the slot and what the source wrote into it, the source only
 * borrows the attached slots. Every callback runs from a reply, never from
 * inside the call that caused it. */
#ifndef TELESCOPE_APPSRC_H
#define TELESCOPE_APPSRC_H

typedef struct appsrc_slot appsrc_slot_t;

/* A note for the session's `warnings`; once: not when it already has it. */
typedef void (*appsrc_warn_cb)(appsrc_slot_t *slot, const char *text, int once);
/* A control call was answered: the owner does what is due next. */
typedef void (*appsrc_settled_cb)(void *arg);
/* A pull ended (whatever its outcome: a source only explains, never holds). */
typedef void (*appsrc_done_cb)(void *arg);

/* A session's share of one source. */
struct appsrc_slot {
  int want;            /* the session asked for the source */
  int begun;           /* the session has begun: it receives what is pulled */
  int on;              /* the app recorded the source for it at some point */
  int dropped;         /* some of what it should have was lost */
  appsrc_warn_cb warn; /* set by the session */
  appsrc_slot_t *next; /* in the source's list of attached slots */
};

#endif
