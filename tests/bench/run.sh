#!/bin/sh
# make bench: install the pinned baseline, then run every section; bench.mjs
# writes BENCHMARKS.md whole (the sections with scripts of their own, §8
# answers.mjs, §9 timeline.mjs, §11 recordings.mjs, §13 where.mjs, §14
# realsizes.mjs, §15 repeatability.mjs, run from it).
set -e
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
if [ ! -d "$here/node_modules" ] || [ "$here/package-lock.json" -nt "$here/node_modules/.package-lock.json" ]; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi
exec node --experimental-websocket --no-warnings "$here/bench.mjs" "$build"
