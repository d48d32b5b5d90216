# scripts/deps.sh (make deps) on debian, ubuntu, fedora, arch, alpine and
# macos, with stand-in package managers (tests/deps.test.mjs): the dry run's
# commands, the detection, and a libwebsockets without libuv support.
find_program(NODE_EXECUTABLE node)
if(NODE_EXECUTABLE)
  add_test(NAME deps.systems
           COMMAND ${NODE_EXECUTABLE} --test --test-reporter=spec ${CMAKE_CURRENT_SOURCE_DIR}/deps.test.mjs)
  set_tests_properties(deps.systems PROPERTIES LABELS examples TIMEOUT 60)
endif()

# .github/workflows/ci.yml parses and has a workflow's keys (it cannot run
# here): skipped where python3 has no PyYAML.
if(NODE_EXECUTABLE)
  add_test(NAME ci.workflow
           COMMAND ${NODE_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/ci_workflow.mjs
                   ${CMAKE_SOURCE_DIR}/.github/workflows/ci.yml ${CMAKE_SOURCE_DIR}/README.md)
  set_tests_properties(ci.workflow PROPERTIES LABELS examples TIMEOUT 30 SKIP_RETURN_CODE 77)
endif()
