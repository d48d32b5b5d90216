# Reliability (issue 6 items 4-7): the fault matrix, load and security checks
# against the real telescope-sim and telescope-mcp (tests/reliability/*.test.mjs,
# one ctest each, label `reliability`), and the integration suite again with
# telescope-mcp under valgrind memcheck (label `valgrind`). RELIABILITY.md says
# what each one proves and how to run the long variants (TELESCOPE_LONG=1).
find_program(NODE_EXECUTABLE node)
if(NOT NODE_EXECUTABLE)
  message(WARNING "node not found: reliability tests are not registered")
  return()
endif()

set(_rel_env
  "TELESCOPE_BINARY_DIR=${CMAKE_BINARY_DIR}"
  "TELESCOPE_SIM=${CMAKE_BINARY_DIR}/telescope-sim"
  "TELESCOPE_SOURCE_DIR=${CMAKE_SOURCE_DIR}"
  "TELESCOPE_NODE_MODULES=${CMAKE_SOURCE_DIR}/tests/client/node_modules")
if(TELESCOPE_SANITIZE)
  # ASan's quarantine keeps freed memory resident: memory figures mean
  # nothing there, the behaviour checks still hold.
  # It is also several times slower: 1 000 calls queued on one loop need
  # longer than the tests' usual 10 s call timeout.
  list(APPEND _rel_env "TELESCOPE_SANITIZED=1" "TELESCOPE_TEST_CALL_TIMEOUT_MS=60000")
endif()

file(GLOB RELIABILITY_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/reliability/*.test.mjs)
foreach(t ${RELIABILITY_TESTS})
  get_filename_component(name ${t} NAME_WE)
  add_test(NAME reliability.${name}
           COMMAND ${NODE_EXECUTABLE} --test --test-reporter=spec ${t})
  # RUN_SERIAL: RSS, fd counts and latencies are measured; a parallel build
  # or test on the same two cores would make them noise.
  set_tests_properties(reliability.${name} PROPERTIES LABELS reliability TIMEOUT 1200
    RUN_SERIAL ON ENVIRONMENT "${_rel_env}")
endforeach()

# valgrind memcheck over the whole integration suite: every telescope-mcp the
# tests start runs under valgrind (TELESCOPE_MCP_WRAPPER, read by
# tests/integration/harness.mjs), call timeouts are scaled by 20, and each
# server's exit status must be 0 (99 = a memcheck error or a definite or
# indirect leak). -q keeps valgrind's banner, which repeats the command line
# and so a token passed in --vm-service-uri, out of the scanned output.
set(_vg_ok ON)
if(TELESCOPE_SANITIZE OR (CMAKE_C_COMPILER_ID MATCHES "Clang" AND NOT CMAKE_C_FLAGS MATCHES "-gdwarf-4"))
  set(_vg_ok OFF)
endif()
find_program(VALGRIND_EXECUTABLE valgrind)
if(VALGRIND_EXECUTABLE AND _vg_ok)
  file(GLOB _int_tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/integration/*.test.mjs)
  foreach(t ${_int_tests})
    get_filename_component(name ${t} NAME_WE)
    add_test(NAME valgrind.integration.${name}
             COMMAND ${NODE_EXECUTABLE} --experimental-websocket --no-warnings --test
                     --test-reporter=spec ${t})
    set_tests_properties(valgrind.integration.${name} PROPERTIES LABELS valgrind TIMEOUT 900
      ENVIRONMENT "${_rel_env};TELESCOPE_MCP_WRAPPER=${VALGRIND_EXECUTABLE} -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect;TELESCOPE_TIMEOUT_SCALE=20")
  endforeach()
endif()
