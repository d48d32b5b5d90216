# install.tree: `cmake --install` to a temporary prefix gives a working tree.
# help.matches_man: --help and the man page document the same flags.
add_test(NAME install.tree
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/install_tree.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
set_tests_properties(install.tree PROPERTIES LABELS examples TIMEOUT 120)
find_program(NODE_EXECUTABLE node)
if(NODE_EXECUTABLE)
  add_test(NAME help.matches_man
           COMMAND ${NODE_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/help_matches_man.mjs
                   $<TARGET_FILE:telescope-mcp> ${CMAKE_SOURCE_DIR}/docs/telescope-mcp.1)
  set_tests_properties(help.matches_man PROPERTIES LABELS examples TIMEOUT 30)
endif()

# The Flutter registration snippet of examples/flutter parses as Dart (the
# same tree-sitter check as dart.parse, which covers watcher/flutter).
if(NODE_EXECUTABLE)
  add_test(NAME dart.parse_examples
           COMMAND ${NODE_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/client/dart_parse.mjs
                   ${CMAKE_SOURCE_DIR}/examples
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(dart.parse_examples PROPERTIES LABELS "dart;examples" TIMEOUT 60)
endif()
