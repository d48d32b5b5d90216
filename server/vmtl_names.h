/* vmtl_names: the names of VM-timeline events and threads, for the parser (vmtl.c) and the
 * join (vmtl_join.c): a name copied as valid UTF-8 and C, and the class of a thread name (the
 * VM's " (<tid>)" decoration stripped). Pure; no state. */
#ifndef TELESCOPE_VMTL_NAMES_H
#define TELESCOPE_VMTL_NAMES_H

#include <stddef.h>

/* Bytes kept of an event's name (NUL included), cut at a UTF-8 boundary. */
#define VMTL_NAME_MAX 48

typedef enum {
  VMTL_THREAD_UNKNOWN = 0, /* no name known for the tid */
  VMTL_THREAD_UI,          /* ".ui", or ".platform": the merged platform/UI thread */
  VMTL_THREAD_RASTER,      /* ".raster", ".gpu" */
  VMTL_THREAD_OTHER        /* named, but none of those (DartWorker, .io, ...) */
} vmtl_thread_t;

/* PLATFORM is kept apart from UI inside the parser: it runs the root isolate when the platform
 * and UI threads are merged, and the raster work when there is no raster thread (macOS). */
typedef enum { VMTL_CLS_UNKNOWN = 0, VMTL_CLS_UI, VMTL_CLS_RASTER, VMTL_CLS_OTHER, VMTL_CLS_PLATFORM } vmtl_cls_t;

/* Copies at most VMTL_NAME_MAX - 1 bytes of s (n bytes) into out, whole UTF-8 sequences only;
 * an invalid byte becomes '?' and an embedded NUL ends the name. */
void vmtl_copy_name(char *out, const char *s, size_t n);
/* The class of the thread name s (n bytes, with or without " (<tid>)"). */
vmtl_cls_t vmtl_thread_class(const char *s, size_t n);
/* What a class is called outside the parser (PLATFORM is UI). */
vmtl_thread_t vmtl_thread_public(vmtl_cls_t c);

/* The class of a VM thread name, with or without the VM's " (<tid>)" decoration:
 * "io.flutter.1.ui (22531)" and "1.platform" are UI, "1.raster" and "io.flutter.1.gpu"
 * RASTER, "" UNKNOWN, anything else OTHER. name may be NULL (UNKNOWN). */
vmtl_thread_t vmtl_thread_classify(const char *name);

#endif
