#!/bin/sh
# Fuzzes each libFuzzer target of a TELESCOPE_FUZZ build for SECONDS (or one
# million executions, whichever comes first) and prints libFuzzer's final
# stats per target.
#
#   sh tests/fuzz/run.sh BUILD_DIR SECONDS [TARGET...]
#
# TARGET is mcp_line, validate, record, vm_uri or vmtl (default: all five, one after
# the other). New interesting inputs go to BUILD_DIR/fuzz-work/<target>/ (the
# committed seeds in tests/fuzz/corpus/ are only read); a crash leaves its
# input as BUILD_DIR/fuzz-work/<target>-crash-* and makes the script exit 1 —
# fix the bug, then copy the input to tests/fuzz/regressions/<target>/.
# With --ctest first (the fuzz-long ctest label) it exits 77 (skipped) unless
# TELESCOPE_FUZZ_LONG=1 is set.
set -u

if [ "${1:-}" = "--ctest" ]; then
  shift
  if [ "${TELESCOPE_FUZZ_LONG:-}" != 1 ]; then
    echo "fuzz-long: set TELESCOPE_FUZZ_LONG=1 to run (skipped)"
    exit 77
  fi
fi
if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR SECONDS [mcp_line|validate|record|vm_uri|vmtl ...]" >&2
  exit 2
fi
build=$(cd "$1" 2>/dev/null && pwd) || { echo "run.sh: no build directory $1" >&2; exit 2; }
seconds=$2
shift 2
targets=${*:-mcp_line validate record vm_uri vmtl}
here=$(cd "$(dirname "$0")" && pwd)

status=0
summary=""
for t in $targets; do
  bin=$build/fuzz_$t
  if [ ! -x "$bin" ]; then
    echo "run.sh: $bin missing: configure $build with -DTELESCOPE_FUZZ=ON" \
         "-DTELESCOPE_SANITIZE=ON -DCMAKE_C_COMPILER=clang and build it" >&2
    exit 2
  fi
  work=$build/fuzz-work/$t
  mkdir -p "$work"
  set -- "$work" "$here/corpus/$t"
  [ -d "$here/regressions/$t" ] && set -- "$@" "$here/regressions/$t"
  dict=""
  [ -f "$here/$t.dict" ] && dict="-dict=$here/$t.dict"
  maxlen=""
  # Long enough for the MCP target to reach the 8192-byte line limit.
  [ "$t" = mcp_line ] && maxlen="-max_len=20000"
  log=$build/fuzz-work/$t.log
  echo "== fuzz_$t: ${seconds}s or 1000000 runs"
  "$bin" -max_total_time="$seconds" -runs=1000000 -print_final_stats=1 -timeout=10 \
         -rss_limit_mb=2048 -artifact_prefix="$build/fuzz-work/$t-crash-" \
         $dict $maxlen "$@" >"$log" 2>&1
  rc=$?
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  cov=$(echo "$done_line" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
  ft=$(echo "$done_line" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
  corp=$(echo "$done_line" | sed -n 's/.* corp: \([^ ]*\).*/\1/p')
  if [ $rc -ne 0 ]; then
    status=1
    echo "fuzz_$t FAILED (exit $rc); log: $log"
    tail -n 40 "$log"
    ls "$build/fuzz-work/$t-crash-"* 2>/dev/null
  fi
  line="fuzz_$t: runs=${runs:-?} exec/s=${rate:-?} cov=${cov:-?} ft=${ft:-?} corpus=${corp:-?} exit=$rc"
  echo "$line"
  summary="$summary$line
"
done
echo "== summary"
printf '%s' "$summary"
exit $status
