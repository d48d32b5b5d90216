# No loop among the files of the server, the simulator or telescope-dtd
# (tests/layers.mjs): read from their libraries' symbol tables, so it needs
# node and nm, nothing else.
find_program(NODE_EXECUTABLE node)
find_program(NM_EXECUTABLE nm)
if(NODE_EXECUTABLE AND NM_EXECUTABLE)
  add_test(NAME unit.layers
           COMMAND ${NODE_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/layers.mjs
                   $<TARGET_FILE:telescope_core> ${CMAKE_SOURCE_DIR}/server
                   $<TARGET_FILE:telescope_sim_core> ${CMAKE_SOURCE_DIR}/watcher/sim
                   $<TARGET_FILE:telescope_dtd_core> ${CMAKE_SOURCE_DIR}/watcher/sim)
  set_tests_properties(unit.layers PROPERTIES LABELS unit TIMEOUT 60)
else()
  message(WARNING "node or nm not found: unit.layers is not registered")
endif()
