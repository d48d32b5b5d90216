#!/bin/sh
# Interim demo: a scripted MCP session against BUILD_DIR/telescope-mcp, printed
# readably. Usage: sh examples/demo.sh [BUILD_DIR]   (what `make demo` runs)
set -eu
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
bin="$build/telescope-mcp"
if [ ! -x "$bin" ]; then
  echo "demo: $bin not found; build first (make build)" >&2
  exit 1
fi
if command -v node >/dev/null 2>&1; then
  exec node "$here/demo.mjs" "$bin"
fi
# Without node: the same session, raw. Each response is one JSON line.
echo "(node not found: showing the raw JSON-RPC exchange)"
while IFS= read -r line; do
  printf '\n-> %s\n' "$line"
  printf '%s\n' "$line" | "$bin" 2>/dev/null | sed 's/^/<- /'
done < "$here/jsonrpc/legacy_session.jsonl"
