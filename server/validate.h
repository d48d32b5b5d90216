/* Tool arguments checked against the tool's own input schema (pure).
 *
 * A small validator for the JSON Schema subset our schemas use: type
 * (object, string, integer, number, boolean), enum, minimum, maximum,
 * exclusiveMinimum, exclusiveMaximum, minLength/maxLength (in code points),
 * pattern (only the printable-ASCII class `^[\x20-\x7E]+$`; the schema is
 * ours, so any other pattern is refused loudly at startup by validate_schema_check),
 * required and additionalProperties:false. The message names the field and
 * what is allowed, e.g. "limit: must be an integer from 0 to 1000, got 5000". */
#ifndef TELESCOPE_VALIDATE_H
#define TELESCOPE_VALIDATE_H

#include <jansson.h>
#include <stddef.h>

/* Returns 0 when args conform to schema; else -1 with the message in err. */
int validate_args(const json_t *schema, const json_t *args, char *err, size_t err_len);

/* Returns 0 when every keyword in schema is one validate_args understands;
 * else -1 naming the first unsupported one (a build-time contract check). */
int validate_schema_check(const json_t *schema, char *err, size_t err_len);

#endif
