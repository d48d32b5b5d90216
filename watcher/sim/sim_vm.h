/* The VM-service side of telescope-sim: one isolate, its streams and events,
 * the core RPCs, and service-extension calls (ext.telescope.frames served by
 * the watcher model, Flutter's own ext.flutter.*), with the per-mode wire
 * quirks of the raw VM, DDS and DWDS (../../shared/reference/vmservice.md). */
#ifndef TELESCOPE_SIM_VM_H
#define TELESCOPE_SIM_VM_H

#include <stddef.h>

#include "sim.h"


/* The first isolate, the method log. 0 or -1. */
int sim_vm_init(sim_t *s);
void sim_vm_close(sim_t *s); /* closes the call timer; frees held calls */

/* A complete message from c (text, or binary when binary != 0). */
void sim_vm_handle_message(sim_t *s, sim_conn_t *c, const char *text, size_t len, int binary);
/* c is going away: forget the calls it is waiting for. */
void sim_vm_conn_closed(sim_t *s, sim_conn_t *c);

/* Scripted app events (stdin commands). */
/* kind: a Pause* event kind (NULL: PauseInterrupted); -1 when unknown. */
int sim_vm_pause(sim_t *s, const char *kind);
void sim_vm_resume(sim_t *s);
void sim_vm_restart(sim_t *s);
void sim_vm_reload(sim_t *s);
void sim_vm_set_watcher(sim_t *s, int on);
/* DDS takes the vm or web server over: direct clients get the
 * DartDevelopmentServiceConnected event and are closed; new ones are sent to
 * s->dds.http_uri (302 on vm, 403 naming it on web). Returns how many were
 * closed, or -1 (dds mode, or already attached). */
int sim_vm_dds_attach(sim_t *s);
void sim_vm_set_hang(sim_t *s, int flutter, int on);
/* `profiler on|off`: the VM's profiler flag changed (as another client's
 * setFlag would), announced with VMFlagUpdate on the VM stream. */
void sim_vm_set_profiler(sim_t *s, int on);

/* Posts an Extension-stream event from the app (dart:developer postEvent);
 * steals data. */
void sim_vm_post_event(sim_t *s, const char *extension_kind, json_t *data);

/* `flood N isolate|extension`: posts N events a second on that stream
 * (0 stops). Isolate: ServiceExtensionAdded for an extension no client uses;
 * Extension: a Sim.Flood event. Both are what a busy app's streams carry. */
void sim_vm_set_flood(sim_t *s, int per_second, int extension_stream);

/* setVMTimelineFlags, from a client or from `streams L` on stdin (another
 * client, such as DevTools, at work): sets the recorded streams and posts
 * TimelineStreamSubscriptionsUpdate. -1 with the unknown name in bad. */
int sim_vm_set_streams(sim_t *s, const json_t *streams, const char **bad);

/* --flutter-driver: answers the ext.flutter.driver calls whose gesture or
 * animation has ended (sim_gen, after each vsync's drive tick). */
void sim_vm_driver_pump(sim_t *s);

/* Calls held (paused isolate, slow or hung extension). */
size_t sim_vm_held_calls(const sim_t *s);

#endif
