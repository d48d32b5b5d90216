#!/bin/sh
# make bench: install the pinned baseline, then run every section.
set -e
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
if [ ! -d "$here/node_modules" ] || [ "$here/package-lock.json" -nt "$here/node_modules/.package-lock.json" ]; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi
node --experimental-websocket --no-warnings "$here/bench.mjs" "$build"
# Issue 15: what reading the VM timeline costs the server.
node --experimental-websocket --no-warnings "$here/timeline.mjs" "$build" > "$build/timeline.md"
# Issue 20: what reading the CPU samples at the close costs.
node --experimental-websocket --no-warnings "$here/where.mjs" "$build" > "$build/where.md"
# Issue 13's "Measure it": answer sizes per action and the cause-first table.
exec node --experimental-websocket --no-warnings "$here/answers.mjs" "$build" --out "$build/answers.md"
