#!/bin/sh
# Runs tests/lws/two_contexts.c's modes under valgrind and checks the
# definitely-lost blocks against libwebsockets 4.1's known loss (RELIABILITY.md,
# "Two lws contexts alive at once").
#   sh two_contexts.sh VALGRIND BINARY LWS_VERSION
set -u
valgrind=$1 bin=$2 version=$3
case $version in
  4.1.*) overlap=1 three=2 ;; # every context but the newest loses its SSL_CTX
  *) overlap=0 three=0 ;;
esac
status=0
for pair in one:0 sequential:0 overlap:$overlap overlap-lifo:$overlap three:$three; do
  mode=${pair%%:*} want=${pair#*:}
  log=$(mktemp)
  "$valgrind" --leak-check=full "$bin" "$mode" >"$log" 2>&1
  if ! grep -q 'ERROR SUMMARY' "$log"; then
    echo "two_contexts $mode: valgrind did not run it"
    cat "$log"
    status=1
    rm -f "$log"
    continue
  fi
  got=$(sed -n 's/.*definitely lost: [0-9,]* bytes in \([0-9,]*\) blocks.*/\1/p' "$log")
  got=${got:-0}
  if [ "$got" != "$want" ]; then
    echo "two_contexts $mode: $got block(s) definitely lost, expected $want (libwebsockets $version)"
    [ "$want" != 0 ] && [ "$got" = 0 ] &&
      echo "  lws no longer loses the SSL_CTX: drop the note in RELIABILITY.md and this expectation"
    grep -A12 'definitely lost in loss record' "$log"
    status=1
  else
    echo "two_contexts $mode: $got block(s) definitely lost, as expected"
  fi
  rm -f "$log"
done
exit $status
