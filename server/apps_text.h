/* apps_text: the text lines of an answer's `app` and `apps` (several apps;
 * docs/tool.md "Several apps"). Pure. */
#ifndef TELESCOPE_APPS_TEXT_H
#define TELESCOPE_APPS_TEXT_H

#include <jansson.h>

/* "app: phone\n" and "apps: phone (connected, session s3), tablet
 * (not_connected)\n", each when the answer has it; "" otherwise. A static
 * buffer, valid until the next call (one loop thread). */
const char *apps_text(const json_t *answer);

#endif
