/* vm_call: the calls of a vm_app (their public side is vm_isolate.h:
 * vm_app_call_extension, vm_app_call_vm, vm_app_refresh, vm_call_cancel).
 * What the tracking (vm_isolate.c) asks of them when the isolate changes.
 * Each failure is delivered from the loop, never inside the caller. */
#ifndef TELESCOPE_VM_CALL_H
#define TELESCOPE_VM_CALL_H

#include "vm_app_impl.h"

/* The isolate is known: send the calls parked until it was. */
void vm_calls_dispatch(vm_app_t *app);
/* The isolate could not be learnt: the parked calls fail with diag. */
void vm_calls_fail_waiting(vm_app_t *app, diag_code_t diag, const char *detail);
/* The isolate paused: calls in flight to it fail (their answers would wait). */
void vm_calls_fail_paused(vm_app_t *app);
/* 1 when a call is parked until the isolate is known. */
int vm_calls_waiting(const vm_app_t *app);
/* Shutdown: every call cancelled, no callback. */
void vm_calls_cancel_all(vm_app_t *app);

#endif
