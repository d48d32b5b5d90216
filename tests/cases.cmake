# Transcript cases: tests/cases/<name>/input.jsonl → expected.jsonl, one ctest
# per case and stdin kind (a pipe, and a regular file `< input`), plus the
# whole suite under valgrind and the process-level checks (exit codes, prompt
# shutdown, signals). The comparison needs plain node, no node_modules.
find_program(NODE_EXECUTABLE node)
if(NOT NODE_EXECUTABLE)
  message(WARNING "node not found: transcript cases are not registered")
  return()
endif()
file(GLOB CASE_INPUTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/cases/*/input.jsonl)
foreach(input ${CASE_INPUTS})
  get_filename_component(dir ${input} DIRECTORY)
  get_filename_component(name ${dir} NAME)
  foreach(mode pipe file)
    add_test(NAME case.${name}.${mode}
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cases/run_case.sh
                     $<TARGET_FILE:telescope-mcp> ${dir} ${mode})
    set_tests_properties(case.${name}.${mode} PROPERTIES LABELS case TIMEOUT 60)
  endforeach()
endforeach()

# valgrind and ASan cannot share a process: the sanitizer build skips these.
# valgrind 3.19 cannot read the DWARF 5 that clang 14 writes by default
# ("possibly corrupted debuginfo"), so the clang build skips them too.
set(TELESCOPE_VALGRIND_OK ON)
if(TELESCOPE_SANITIZE OR (CMAKE_C_COMPILER_ID MATCHES "Clang" AND NOT CMAKE_C_FLAGS MATCHES "-gdwarf-4"))
  set(TELESCOPE_VALGRIND_OK OFF)
  message(STATUS "valgrind tests not registered (sanitizer build, or clang without -gdwarf-4)")
endif()
if(TELESCOPE_VALGRIND_OK)
  add_test(NAME case.valgrind
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cases/valgrind_cases.sh $<TARGET_FILE:telescope-mcp>)
  set_tests_properties(case.valgrind PROPERTIES LABELS valgrind TIMEOUT 300)
endif()

add_test(NAME process.lifecycle
         COMMAND ${NODE_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/cases/process.mjs
                 $<TARGET_FILE:telescope-mcp>)
set_tests_properties(process.lifecycle PROPERTIES LABELS case TIMEOUT 60)

# The pure cores' unit tests under valgrind too (no fork, so leaks in the
# test process itself are seen).
find_program(VALGRIND_EXECUTABLE valgrind)
if(VALGRIND_EXECUTABLE AND TELESCOPE_VALGRIND_OK)
  foreach(t test_framing test_jsonrpc test_mcp test_validate test_stdio test_cpuprof test_appsrc_timeline)
    if(TARGET ${t})
      add_test(NAME valgrind.${t}
               COMMAND ${CMAKE_COMMAND} -E env CK_FORK=no
                       ${VALGRIND_EXECUTABLE} -q --error-exitcode=99 --leak-check=full
                       --errors-for-leak-kinds=definite,indirect $<TARGET_FILE:${t}>)
      set_tests_properties(valgrind.${t} PROPERTIES LABELS valgrind TIMEOUT 120)
    endif()
  endforeach()
endif()

# The demo runs end to end and ends with a clean exit.
add_test(NAME demo.smoke
         COMMAND sh ${CMAKE_SOURCE_DIR}/examples/demo.sh $<TARGET_FILE_DIR:telescope-mcp>)
set_tests_properties(demo.smoke PROPERTIES LABELS case TIMEOUT 60
                     PASS_REGULAR_EXPRESSION "telescope-mcp exited with 0")
