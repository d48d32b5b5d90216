# telescope-sim driven over real WebSockets by Node's built-in client
# (Node 20: behind --experimental-websocket). One ctest per script in
# tests/sim/ (lib.mjs is the shared helper).
find_program(NODE_EXECUTABLE node)
if(TARGET telescope-sim AND NODE_EXECUTABLE)
  file(GLOB SIM_TEST_SCRIPTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/sim/*.mjs)
  list(FILTER SIM_TEST_SCRIPTS EXCLUDE REGEX ".*/lib\\.mjs$")
  foreach(script ${SIM_TEST_SCRIPTS})
    get_filename_component(name ${script} NAME_WE)
    add_test(NAME sim.${name}
             COMMAND ${NODE_EXECUTABLE} --experimental-websocket --no-warnings ${script})
    set_tests_properties(sim.${name} PROPERTIES
      LABELS sim TIMEOUT 60 SKIP_RETURN_CODE 77
      ENVIRONMENT "TELESCOPE_SIM=$<TARGET_FILE:telescope-sim>")
  endforeach()
elseif(TARGET telescope-sim)
  message(WARNING "node not found: the telescope-sim tests are not registered")
endif()
