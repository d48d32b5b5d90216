/* container_of: from an embedded member (a libuv handle) back to the struct
 * that owns it (STYLE: handles are owned by the struct embedding them). */
#ifndef TELESCOPE_CONTAINER_OF_H
#define TELESCOPE_CONTAINER_OF_H

#include <stddef.h>

#define container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

#endif
