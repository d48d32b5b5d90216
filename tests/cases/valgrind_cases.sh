#!/bin/sh
# Every transcript case once more under valgrind: any memory error or
# definite/indirect leak fails (run_case.sh turns valgrind's exit 99 into a failure).
set -eu
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
fail=0
for d in "$here"/*/; do
  [ -f "$d/input.jsonl" ] || continue
  name=$(basename "$d")
  # The 4 MiB line costs seconds under valgrind and adds nothing the 1 KiB
  # limit case does not already exercise.
  [ "$name" = oversize_line_default ] && continue
  if sh "$here/run_case.sh" "$bin" "$d" pipe valgrind >/dev/null 2>"${TMPDIR:-/tmp}/vg.$$"; then
    echo "ok   $name"
  else
    echo "FAIL $name"; cat "${TMPDIR:-/tmp}/vg.$$"; fail=1
  fi
done
# The regular-file stdin path (uv_fs_read on the thread pool) once too.
for name in tool_actions oversize_line_limit; do
  if sh "$here/run_case.sh" "$bin" "$here/$name" file valgrind >/dev/null 2>"${TMPDIR:-/tmp}/vg.$$"; then
    echo "ok   $name (file)"
  else
    echo "FAIL $name (file)"; cat "${TMPDIR:-/tmp}/vg.$$"; fail=1
  fi
done
rm -f "${TMPDIR:-/tmp}/vg.$$"
exit $fail
