/* chart_file: the file-system shell of the chart (chart.h): a chart written
 * whole or not at all, and the file:// URI an MCP client opens. The caller
 * owns every buffer. */
#ifndef TELESCOPE_CHART_FILE_H
#define TELESCOPE_CHART_FILE_H

#include <stddef.h>

/* Writes text to dir/name (dir created with its parents when missing; NULL
 * or "" is the working directory) through a temporary file and a rename, so
 * a reader never sees half a chart. An existing file of that name is not
 * replaced: "-2", "-3", … go before the extension. On success the absolute
 * path is in path and 0 is returned; on failure -1 and err says what failed
 * and where. */
int chart_file_write(const char *dir, const char *name, const char *text, char *path,
                     size_t pathlen, char *err, size_t errlen);

/* The file:// URI of an absolute path, percent-encoding every byte outside
 * RFC 3986's unreserved set and '/'. 0, or -1 when it does not fit. */
int chart_file_uri(const char *abs_path, char *uri, size_t len);

#endif
