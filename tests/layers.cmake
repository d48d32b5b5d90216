# No loop among the server's files (tests/layers.mjs): read from the core
# library's symbol tables, so it needs node and nm, nothing else.
find_program(NODE_EXECUTABLE node)
find_program(NM_EXECUTABLE nm)
if(NODE_EXECUTABLE AND NM_EXECUTABLE)
  add_test(NAME unit.layers
           COMMAND ${NODE_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/layers.mjs
                   $<TARGET_FILE:telescope_core>)
  set_tests_properties(unit.layers PROPERTIES LABELS unit TIMEOUT 60)
else()
  message(WARNING "node or nm not found: unit.layers is not registered")
endif()
