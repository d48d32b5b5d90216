#!/bin/sh
# Runs one transcript case against telescope-mcp and compares its stdout with
# the case's expected.jsonl, semantically (tests/cases/compare.mjs).
#
#   run_case.sh BINARY CASE_DIR pipe|file [valgrind]
#
# pipe: input through a pipe; file: stdin is the regular file itself
# (`telescope-mcp < input`), the path that needs uv_fs_read. A case dir may hold
# `args` (extra command-line flags, one line). An input line of the form
#   @@LINE <bytes>@@
# is replaced by a generated JSON-RPC request of exactly that many bytes, so
# multi-megabyte lines need not be committed.
set -eu
bin=$1 dir=$2 mode=$3 vg=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# Expand @@LINE n@@ markers: {"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"aaaa…"}}
while IFS= read -r line || [ -n "$line" ]; do
  case $line in
    @@LINE\ *@@)
      n=${line#@@LINE }; n=${n%@@}
      head='{"jsonrpc":"2.0","id":"big","method":"ping","params":{"pad":"'
      tail='"}}'
      pad=$((n - ${#head} - ${#tail}))
      printf '%s' "$head"
      head -c "$pad" /dev/zero | tr '\0' 'a'
      printf '%s\n' "$tail" ;;
    *) printf '%s\n' "$line" ;;
  esac
done < "$dir/input.jsonl" > "$tmp/input"
# Keep a missing final newline a missing final newline.
if [ -n "$(tail -c 1 "$dir/input.jsonl")" ]; then
  size=$(wc -c < "$tmp/input")
  head -c $((size - 1)) "$tmp/input" > "$tmp/input2" && mv "$tmp/input2" "$tmp/input"
fi

args=""
[ -f "$dir/args" ] && args=$(cat "$dir/args")
run=""
# A call in flight at EOF (a connection attempt) may finish for this long;
# the grace ends as soon as nothing is in flight, so it costs nothing when
# the machine is fast, and keeps a loaded one (or a sanitizer build) from
# cutting the last answer off.
export TELESCOPE_EOF_GRACE_MS=30000
if [ "$vg" = valgrind ]; then
  run="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect"
fi

status=0
# shellcheck disable=SC2086
if [ "$mode" = file ]; then
  $run "$bin" $args < "$tmp/input" > "$tmp/out" 2> "$tmp/err" || status=$?
else
  cat "$tmp/input" | $run "$bin" $args > "$tmp/out" 2> "$tmp/err" || status=$?
fi
if [ "$status" -ne 0 ]; then
  echo "FAIL: telescope-mcp exited with $status" >&2
  cat "$tmp/err" >&2
  exit 1
fi
exec node "$here/compare.mjs" "$tmp/out" "$dir/expected.jsonl"
