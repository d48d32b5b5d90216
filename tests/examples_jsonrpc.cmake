# The hand-written JSON-RPC sessions of examples/jsonrpc: each NAME.jsonl is
# piped into the binary (with NAME.args, if any: the --sim ones start the
# real telescope-sim) and its stdout compared with NAME.expected.jsonl by the
# transcript cases' comparator. One ctest each: example.jsonrpc.NAME.
find_program(NODE_EXECUTABLE node)
if(NOT NODE_EXECUTABLE)
  message(WARNING "node not found: the examples/jsonrpc sessions are not registered")
  return()
endif()
file(GLOB EXAMPLE_SESSIONS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/examples/jsonrpc/*.jsonl)
list(FILTER EXAMPLE_SESSIONS EXCLUDE REGEX "\\.expected\\.jsonl$")
foreach(session ${EXAMPLE_SESSIONS})
  get_filename_component(name ${session} NAME_WE)
  add_test(NAME example.jsonrpc.${name}
           COMMAND ${NODE_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/examples_jsonrpc.mjs
                   $<TARGET_FILE:telescope-mcp> ${session})
  set_tests_properties(example.jsonrpc.${name} PROPERTIES LABELS examples TIMEOUT 60)
endforeach()
