# Fuzz targets (tests/fuzz/, README there). Two builds of the same sources:
#
#  * always: fuzz_replay_<t>, the target with tests/fuzz/replay_main.c, a
#    plain-C main that runs saved inputs once. ctest fuzz.replay.<t> runs the
#    seed corpus and the regression inputs through it, so `make test` executes
#    them with gcc too (and under ASan+UBSan in `make check-hard`).
#  * with -DTELESCOPE_FUZZ=ON and clang: fuzz_<t>, a libFuzzer binary linking
#    a copy of the core compiled with -fsanitize=fuzzer-no-link (coverage for
#    the fuzzer; the product's own targets stay uninstrumented). Configure it
#    together with -DTELESCOPE_SANITIZE=ON so ASan+UBSan watch every input.
#    ctest fuzz.corpus.<t> executes the corpus and regressions (-runs=0); the
#    fuzz-long label (skipped unless TELESCOPE_FUZZ_LONG=1) fuzzes each
#    target for 60 s or 1e6 runs; tests/fuzz/run.sh does the same with a
#    chosen duration and prints the stats.
set(FUZZ_DIR ${CMAKE_SOURCE_DIR}/tests/fuzz)
set(FUZZ_TARGETS mcp_line validate record vm_uri vmtl)

foreach(t ${FUZZ_TARGETS})
  set(inputs ${FUZZ_DIR}/corpus/${t})
  if(EXISTS ${FUZZ_DIR}/regressions/${t})
    list(APPEND inputs ${FUZZ_DIR}/regressions/${t})
  endif()
  add_executable(fuzz_replay_${t} ${FUZZ_DIR}/fuzz_${t}.c ${FUZZ_DIR}/replay_main.c)
  target_link_libraries(fuzz_replay_${t} PRIVATE telescope_core)
  add_test(NAME fuzz.replay.${t} COMMAND fuzz_replay_${t} ${inputs})
  set_tests_properties(fuzz.replay.${t} PROPERTIES LABELS "fuzz;unit" TIMEOUT 120)
endforeach()

if(NOT TELESCOPE_FUZZ)
  return()
endif()
if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(WARNING "TELESCOPE_FUZZ needs clang (-DCMAKE_C_COMPILER=clang): libFuzzer targets skipped")
  return()
endif()
if(NOT TELESCOPE_SANITIZE)
  message(STATUS "TELESCOPE_FUZZ without TELESCOPE_SANITIZE: the fuzzers run without ASan/UBSan")
endif()

add_library(telescope_core_fuzz STATIC ${CORE_SOURCES} ${CMAKE_BINARY_DIR}/schema_embed.c)
target_include_directories(telescope_core_fuzz PUBLIC ${CMAKE_SOURCE_DIR}/server)
target_compile_options(telescope_core_fuzz PRIVATE -fsanitize=fuzzer-no-link)
target_link_libraries(telescope_core_fuzz PUBLIC PkgConfig::JANSSON PkgConfig::LIBUV
                      PkgConfig::LWS m)

foreach(t ${FUZZ_TARGETS})
  set(inputs ${FUZZ_DIR}/corpus/${t})
  if(EXISTS ${FUZZ_DIR}/regressions/${t})
    list(APPEND inputs ${FUZZ_DIR}/regressions/${t})
  endif()
  add_executable(fuzz_${t} ${FUZZ_DIR}/fuzz_${t}.c)
  target_compile_options(fuzz_${t} PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz_${t} PRIVATE -fsanitize=fuzzer)
  target_link_libraries(fuzz_${t} PRIVATE telescope_core_fuzz)
  set(dict)
  if(EXISTS ${FUZZ_DIR}/${t}.dict)
    set(dict -dict=${FUZZ_DIR}/${t}.dict)
  endif()
  # -runs=0: read and execute every saved input once, fuzz nothing.
  add_test(NAME fuzz.corpus.${t} COMMAND fuzz_${t} -runs=0 ${inputs})
  set_tests_properties(fuzz.corpus.${t} PROPERTIES LABELS "fuzz" TIMEOUT 120)
  # The long run writes what it finds into the build tree, never the sources.
  # It is skipped (exit 77) unless TELESCOPE_FUZZ_LONG=1, so a plain ctest
  # run never spends the minutes: TELESCOPE_FUZZ_LONG=1 ctest -L fuzz-long
  add_test(NAME fuzz.long.${t}
           COMMAND sh ${FUZZ_DIR}/run.sh --ctest ${CMAKE_BINARY_DIR} 60 ${t})
  set_tests_properties(fuzz.long.${t} PROPERTIES LABELS "fuzz-long" TIMEOUT 240
                       SKIP_RETURN_CODE 77)
endforeach()
