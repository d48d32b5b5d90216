# Client conformance: the official MCP SDK clients (pinned in
# tests/client/package-lock.json, installed by `make node-deps`) drive the real
# binary. Each script fails with a clear message when node_modules is missing.
find_program(NODE_EXECUTABLE node)
if(NOT NODE_EXECUTABLE)
  message(WARNING "node not found: client conformance tests are not registered")
  return()
endif()
foreach(script sdk_v1 sdk_v2)
  add_test(NAME client.${script}
           COMMAND ${NODE_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/client/${script}.mjs
                   $<TARGET_FILE:telescope-mcp>)
  set_tests_properties(client.${script} PROPERTIES LABELS client TIMEOUT 120)
endforeach()
