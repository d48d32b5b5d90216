# The wire contract (tests/wire/README.md): telescope-sim's and telescope-dtd's
# replies and events have the shapes of upstream examples. In the normal
# suite (label sim), not under valgrind.
find_program(NODE_EXECUTABLE node)
if(TARGET telescope-sim AND TARGET telescope-dtd AND NODE_EXECUTABLE)
  add_test(NAME wire.contract
           COMMAND ${NODE_EXECUTABLE} --experimental-websocket --no-warnings
                   ${CMAKE_CURRENT_SOURCE_DIR}/wire/contract.mjs)
  set_tests_properties(wire.contract PROPERTIES
    LABELS "sim;wire" TIMEOUT 120 SKIP_RETURN_CODE 77
    ENVIRONMENT "TELESCOPE_SIM=$<TARGET_FILE:telescope-sim>;TELESCOPE_DTD=$<TARGET_FILE:telescope-dtd>")
endif()
