/* vmtl_names: the names of VM-timeline events and threads, for the parser (vmtl.c) and the
 * join (vmtl_join.c): a name copied as valid UTF-8 and C, and the class of a thread name (the
 * VM's " (<tid>)" decoration stripped). Pure; no state. */
#ifndef TELESCOPE_VMTL_NAMES_H
#define TELESCOPE_VMTL_NAMES_H

#include <stddef.h>

#include "vmtl.h"

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

#endif
