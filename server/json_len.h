/* json_len: the length of a JSON value's compact text without writing it.
 * Answers are held to byte caps (OP_TEXT_CAP, SUMMARY_MAX_BYTES), so their
 * builders measure what they built, often several times per call. Measuring
 * with json_dumpb(j, NULL, 0, JSON_COMPACT) formats every number and hashes
 * every container for jansson's cycle check; this walks the tree and counts.
 * The count is json_dumpb's to the byte (jansson 2.14 src/dump.c: escapes
 * and separators; reals are measured by jansson itself). Trees here are built
 * by the server and hold no cycle. */
#ifndef TELESCOPE_JSON_LEN_H
#define TELESCOPE_JSON_LEN_H

#include <jansson.h>
#include <stddef.h>

/* json_dumpb(j, NULL, 0, JSON_COMPACT | JSON_ENCODE_ANY); 0 for NULL. */
size_t json_compact_len(const json_t *j);

#endif
