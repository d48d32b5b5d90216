/* apps_text: the several-apps lines of an answer's text (apps_text.h). */
#include "apps_text.h"

#include <stdio.h>
#include <string.h>

const char *apps_text(const json_t *r) {
  static char buf[1024];
  size_t n = 0, i;
  const json_t *a;
  buf[0] = '\0';
#define ADD(...)                                                                  \
  do {                                                                           \
    if (n < sizeof buf) n += (size_t)snprintf(buf + n, sizeof buf - n, __VA_ARGS__); \
  } while (0)
  const char *app = json_string_value(json_object_get(r, "app"));
  if (app) ADD("app: %s\n", app);
  json_array_foreach(json_object_get(r, "apps"), i, a) {
    const char *s = json_string_value(json_object_get(a, "session"));
    ADD("%s%s (%s%s%s%s)", i ? ", " : "apps: ", json_string_value(json_object_get(a, "app")),
        json_string_value(json_object_get(a, "state")), s ? ", session " : "", s ? s : "",
        json_is_true(json_object_get(a, "latest")) ? ", latest" : "");
  }
  if (i) ADD("\n");
#undef ADD
  if (n >= sizeof buf) strcpy(buf + sizeof buf - 5, "...\n"); /* cut, still one line each */
  return buf;
}
