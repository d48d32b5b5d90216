# vm integration tests: vm_app against the real telescope-sim (tests/vm/).
# Registered only when the simulator is part of the build.
if(TARGET telescope-sim)
  add_executable(test_vm_sim ${CMAKE_CURRENT_SOURCE_DIR}/vm/test_vm_sim.c)
  target_link_libraries(test_vm_sim PRIVATE telescope_core PkgConfig::CHECK)
  target_compile_definitions(test_vm_sim PRIVATE
    TELESCOPE_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
    TELESCOPE_BINARY_DIR="${CMAKE_BINARY_DIR}")
  add_dependencies(test_vm_sim telescope-sim)
  add_test(NAME vm.sim COMMAND test_vm_sim)
  set_tests_properties(vm.sim PROPERTIES LABELS "vm;integration" TIMEOUT 120)
endif()
