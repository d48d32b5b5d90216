#include "mcp_version.h"

#include <string.h>

static const char *legacy_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
#define N_LEGACY (sizeof legacy_versions / sizeof *legacy_versions)

int mcp_version_supported(const char *v) {
  if (!v) return 0;
  for (size_t i = 0; i < N_LEGACY; i++)
    if (strcmp(v, legacy_versions[i]) == 0) return 1;
  return strcmp(v, MCP_MODERN_VERSION) == 0;
}

int mcp_version_at_least(const char *v, const char *since) {
  return v && strcmp(v, since) >= 0;
}

const char *mcp_version_legacy(const char *v) {
  for (size_t i = 0; i < N_LEGACY; i++)
    if (v && strcmp(v, legacy_versions[i]) == 0) return legacy_versions[i];
  return NULL;
}

int mcp_version_modern(const char *v) {
  return strcmp(v, MCP_MODERN_VERSION) == 0;
}

const char *mcp_version_legacy_nth(size_t i) { return i < N_LEGACY ? legacy_versions[i] : NULL; }
