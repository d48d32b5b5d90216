/* json_put: json_object_set_new that remembers a failure. jansson's setters
 * fail silently (and steal value even then); an object built with a member
 * missing must not pass for a whole one, so builders OR every outcome into
 * *bad and return NULL at the end when it is set (test_alloc_fail). */
#ifndef TELESCOPE_JSON_PUT_H
#define TELESCOPE_JSON_PUT_H

#include <jansson.h>

static inline void json_put(json_t *o, int *bad, const char *key, json_t *value) {
  if (json_object_set_new(o, key, value) != 0) *bad = 1;
}

#endif
