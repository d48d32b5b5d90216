# Benchmarks (tests/bench, `make bench`) and the callgrind regression check
# (ctest label `callgrind`, part of `make test`).
#
# bench_core drives the server's hot paths in-process on replies made by the
# C watcher model; tests/bench/callgrind_check.mjs runs it under
# valgrind --tool=callgrind and compares instruction counts (Ir) with the
# figures committed in tests/bench/callgrind_baseline.json (10 % margin).
add_executable(bench_core ${CMAKE_SOURCE_DIR}/tests/bench/bench_core.c)
target_link_libraries(bench_core PRIVATE telescope_core telescope_simmodel)

find_program(VALGRIND_EXECUTABLE valgrind)
find_program(NODE_EXECUTABLE node)
if(VALGRIND_EXECUTABLE AND NODE_EXECUTABLE AND NOT TELESCOPE_SANITIZE)
  # The figures are per compiler, major version and build type: instruction
  # counts differ between them, never between runs of one build.
  string(REGEX MATCH "^[0-9]+" bench_cc_major "${CMAKE_C_COMPILER_VERSION}")
  add_test(NAME bench.callgrind
           COMMAND ${NODE_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/bench/callgrind_check.mjs
                   --bench-core $<TARGET_FILE:bench_core>
                   --config "${CMAKE_C_COMPILER_ID}-${bench_cc_major}-${CMAKE_BUILD_TYPE}"
                   --valgrind ${VALGRIND_EXECUTABLE})
  set_tests_properties(bench.callgrind PROPERTIES
    LABELS "callgrind;valgrind" TIMEOUT 120 SKIP_RETURN_CODE 77)
endif()
