#!/bin/sh
# Runs the integration test in a profile build and `telescope-mcp check`
# beside it; exits with check's status (0 within budgets, 1 a budget failed,
# 2 nothing measured, 64 bad command line).
#
#   examples/ci/run_check.sh [DEVICE]     (default: linux)
#
# Run from the Flutter app's directory, with telescope-mcp on PATH and
# examples/ci/budgets.json copied next to it (or BUDGETS=path).
set -eu
device=${1:-linux}
out=${OUT:-build/telescope}
budgets=${BUDGETS:-budgets.json}
mkdir -p "$out"
uri="$out/vmservice.uri"
rm -f "$uri"

# `flutter run` writes the VM service URI to --vmservice-out-file once the
# app is up (flutter/flutter packages/flutter_tools/lib/src/commands/run.dart,
# RunCommandBase). Its stdin is a fifo so that `q` can end it afterwards.
fifo="$out/flutter.stdin"
rm -f "$fifo" && mkfifo "$fifo"
flutter run --profile -d "$device" --vmservice-out-file "$uri" \
  integration_test/scroll_perf_test.dart < "$fifo" > "$out/flutter.log" 2>&1 &
flutter_pid=$!
exec 3> "$fifo"

i=0
while [ ! -s "$uri" ]; do
  i=$((i + 1))
  if [ $i -gt 600 ] || ! kill -0 $flutter_pid 2>/dev/null; then
    echo "the app did not start; see $out/flutter.log" >&2
    exit 2
  fi
  sleep 0.5
done

status=0
telescope-mcp check --vm-service-uri-file "$uri" --duration-ms 20000 \
  --budgets "$budgets" --report "$out/report.json" --interaction scroll-feed || status=$?

echo q >&3 # flutter run's "quit" key
exec 3>&-
wait $flutter_pid || true
exit $status
