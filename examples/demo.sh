#!/bin/sh
# The demo: telescope-sim (a simulated, janky Flutter app) measured by the real
# telescope-mcp through the official MCP SDK client, printed for a human.
#
#   sh examples/demo.sh [BUILD_DIR]     (what `make demo` runs; default: build)
#
# Needs node and the pinned SDK in tests/client/node_modules (make node-deps).
# Exits non-zero when any step fails; stops every process it started.
set -eu
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
for exe in telescope-mcp telescope-sim; do
  if [ ! -x "$build/$exe" ]; then
    echo "demo: $build/$exe not found; build first (make build)" >&2
    exit 1
  fi
done
if ! command -v node >/dev/null 2>&1; then
  echo "demo: node not found; run make deps (or install Node 18+)" >&2
  exit 1
fi
if [ ! -d "$here/../tests/client/node_modules/@modelcontextprotocol/sdk" ]; then
  echo "demo: the MCP SDK is missing; run make node-deps" >&2
  exit 1
fi
exec node "$here/demo.mjs" "$build"
