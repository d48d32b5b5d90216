# telescope-mcp --setup CLIENT for the six clients (tests/setup.test.mjs): the
# printed configuration parses back, with the absolute path and the arguments.
find_program(NODE_EXECUTABLE node)
if(NODE_EXECUTABLE)
  add_test(NAME setup.clients
           COMMAND ${NODE_EXECUTABLE} --test --test-reporter=spec
                   ${CMAKE_CURRENT_SOURCE_DIR}/setup.test.mjs)
  set_tests_properties(setup.clients PROPERTIES LABELS examples TIMEOUT 60
    ENVIRONMENT "TELESCOPE_BINARY_DIR=$<TARGET_FILE_DIR:telescope-mcp>")
endif()
