#!/bin/sh
# make soak: the model and integration tests, SOAK_RUNS times (default 5),
# each run beside SOAK_LOAD busy loops (default 2) that stand in for a slower,
# shared machine. A test that passes only when the machine is fast fails here.
# Every failure is printed with the line that replays it; a summary line
# follows each run and the whole soak. Not part of make test.
#
#   sh tests/soak.sh [BUILD]
#   SOAK_RUNS    runs (default 5)
#   SOAK_LOAD    busy loops beside the tests (default 2)
#   SOAK_TESTS   ctest -R regex (default: the model and integration tests,
#                not their valgrind variants)
#   SOAK_JOBS    ctest -j (default: the cores, as make test)
#   MODEL_SEED   the model tests' seed (default: a new one each run, printed)
#   MODEL_SEQUENCES, MODEL_BUDGET_S ...  passed on to the model tests
# The logs are kept in BUILD/soak/run-N.log. Exit status: 0 when every run
# was clean.
set -u

BUILD=${1:-build}
RUNS=${SOAK_RUNS:-5}
LOAD=${SOAK_LOAD:-2}
TESTS=${SOAK_TESTS:-'^(model|integration)\.'}
JOBS=${SOAK_JOBS:-$(nproc 2>/dev/null || echo 2)}

[ -d "$BUILD" ] || { echo "soak: no build tree $BUILD (make build)" >&2; exit 2; }
LOGS=$BUILD/soak
mkdir -p "$LOGS"

# The busy loops: started here, and killed by their process ids whatever
# way the soak ends.
burners=""
stop_burners() {
  for p in $burners; do kill "$p" 2>/dev/null; done
  burners=""
}
trap 'stop_burners' EXIT
trap 'stop_burners; exit 130' INT TERM
i=0
while [ "$i" -lt "$LOAD" ]; do
  sh -c 'while :; do :; done' &
  burners="$burners $!"
  i=$((i + 1))
done

load1() { cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo "?"; }

# The replay lines of one failed test, from its run's log: the model tests
# print theirs (MODEL FAILURE ... replay: ...); any test can be run alone
# again with ctest, and its failing subtests are named by node's spec
# reporter (a line starting with the cross, then the error).
replay() { # log test seed
  echo "  FAIL $2"
  awk -v t="$2" '
    $0 ~ "^ *[0-9]+/[0-9]+ Test +#[0-9]+: " t " " { on = 1; next }
    on && /^ *[0-9]+\/[0-9]+ Test +#[0-9]+: / { on = 0 }
    !on { next }
    /failing tests:$/ { next }
    grab { print "      " $0; grab = 0 }
    /^ *\xe2\x9c\x96/ { if (!seen[$0]++) { print "    " $0; grab = 1 } next }
    /MODEL FAILURE/ || /replay/ { print "    " $0 }
  ' "$1" | head -40
  case $2 in
    model.*) echo "    replay the run: cd $BUILD && MODEL_SEED=$3 ctest -R '^$2\$' --output-on-failure" ;;
    *) echo "    replay: cd $BUILD && ctest -R '^$2\$' --output-on-failure" ;;
  esac
}

clean=0
failed=0
total_start=$(date +%s)
run=1
while [ "$run" -le "$RUNS" ]; do
  seed=${MODEL_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ' | awk '{ print $1 % 2147483648 }')}
  log=$LOGS/run-$run.log
  start=$(date +%s)
  (cd "$BUILD" && MODEL_SEED=$seed ctest -R "$TESTS" -E '^valgrind\.' --output-on-failure \
     -j "$JOBS") >"$log" 2>&1
  rc=$?
  secs=$(($(date +%s) - start))
  ran=$(sed -n 's/.*tests passed, [0-9]* tests failed out of \([0-9]*\).*/\1/p' "$log")
  fails=$(sed -n '/The following tests FAILED:/,$s/^[[:space:]]*[0-9][0-9]* - \([^ ]*\) .*/\1/p' "$log")
  if [ "$rc" -eq 0 ] && [ -n "$ran" ]; then
    clean=$((clean + 1))
    echo "soak: run $run of $RUNS clean: ${ran} tests, ${secs} s, load $(load1), model seed $seed"
  else
    failed=$((failed + 1))
    n=$(echo "$fails" | grep -c .)
    echo "soak: run $run of $RUNS FAILED: $n of ${ran:-?} tests, ${secs} s, load $(load1), model seed $seed (log $log)"
    [ -n "$fails" ] || tail -20 "$log" | sed 's/^/    /'
    for t in $fails; do replay "$log" "$t" "$seed"; done
  fi
  run=$((run + 1))
done
stop_burners
echo "soak: $clean of $RUNS runs clean, $failed failed, $(($(date +%s) - total_start)) s in all," \
  "$LOAD busy loops, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
[ "$failed" -eq 0 ]
