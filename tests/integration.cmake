# Integration: the real telescope-mcp driven by the official MCP SDK client
# against the real telescope-sim. One ctest per file (node's test runner).
# Some also talk to the sim as a second VM-service client (tests/sim/lib.mjs:
# Node 20's WebSocket, behind --experimental-websocket).
file(GLOB INTEGRATION_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/integration/*.test.mjs)
foreach(t ${INTEGRATION_TESTS})
  get_filename_component(name ${t} NAME_WE)
  add_test(NAME integration.${name}
           COMMAND node --experimental-websocket --no-warnings --test --test-reporter=spec ${t})
  set_tests_properties(integration.${name} PROPERTIES LABELS integration TIMEOUT 240
    ENVIRONMENT "TELESCOPE_BINARY_DIR=${CMAKE_BINARY_DIR};TELESCOPE_SIM=${CMAKE_BINARY_DIR}/telescope-sim;TELESCOPE_SOURCE_DIR=${CMAKE_SOURCE_DIR};TELESCOPE_NODE_MODULES=${CMAKE_SOURCE_DIR}/tests/client/node_modules")
endforeach()
# check.test.mjs (the CI command's exit codes and report) is picked up by the
# glob above like every *.test.mjs.

# The corpus's expected answers are generated (tests/recordings/expect.mjs):
# regenerating them must give the committed bytes.
add_test(NAME recordings.expected
         COMMAND node ${CMAKE_CURRENT_SOURCE_DIR}/recordings/expect.mjs --check)
set_tests_properties(recordings.expected PROPERTIES LABELS integration TIMEOUT 60)
