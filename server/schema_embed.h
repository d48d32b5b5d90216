/* The contracts in schema/, embedded at build time by cmake/embed.cmake into
 * schema_embed.c, so the schema an agent is shown and the file in schema/ are
 * the same bytes. Each is a NUL-terminated JSON text. */
#ifndef TELESCOPE_SCHEMA_EMBED_H
#define TELESCOPE_SCHEMA_EMBED_H

extern const char schema_telescope_frames_input[];  /* tool inputSchema */
extern const char schema_telescope_frames_output[]; /* tool outputSchema */
extern const char schema_frame_perf_record[];       /* one watcher record */
extern const char schema_extension_reply[];         /* ext.telescope.frames reply */

#endif
