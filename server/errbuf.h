/* errbuf: the one way the pure modules write an error message into the
 * caller's buffer and fail (record, cursor, vmtl). */
#ifndef TELESCOPE_ERRBUF_H
#define TELESCOPE_ERRBUF_H

#include <stddef.h>

/* Formats into err (when given) and returns -1. */
int errbuf_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
