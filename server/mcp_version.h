/* mcp_version: the MCP revisions this server speaks: the legacy ones a
 * handshake negotiates (newest first) and the stateless 2026-07-28 era.
 * Pure; every string returned is static. */
#ifndef TELESCOPE_MCP_VERSION_H
#define TELESCOPE_MCP_VERSION_H

#include <stddef.h>

#define MCP_LATEST_LEGACY_VERSION "2025-11-25"
#define MCP_MODERN_VERSION "2026-07-28"

/* 1 for a revision this server speaks. */
int mcp_version_supported(const char *version);
/* strcmp on revision dates: 1 when version is at least since. */
int mcp_version_at_least(const char *version, const char *since);
/* The legacy revision equal to v (static), or NULL. */
const char *mcp_version_legacy(const char *v);
/* 1 when v (not NULL) is the stateless era's revision. */
int mcp_version_modern(const char *v);
/* The i-th legacy revision, newest first; NULL past the last. */
const char *mcp_version_legacy_nth(size_t i);

#endif
