# Portable C (issue 33): the strict POSIX build of the server and the sim,
# and the lint of Linux-only headers and calls (with its self-test).
add_test(NAME lint.portable COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/lint_portable.sh ${CMAKE_SOURCE_DIR})
add_test(NAME lint.portable_selftest
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/lint_portable_test.sh
                 ${CMAKE_CURRENT_SOURCE_DIR}/lint_portable.sh)
set_tests_properties(lint.portable lint.portable_selftest PROPERTIES LABELS lint TIMEOUT 60)
# A second build tree: its first run compiles the three programs (~1 min on
# two cores), later runs only what changed.
add_test(NAME posix.strict_build
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/posix_build.sh ${CMAKE_SOURCE_DIR}
                 ${CMAKE_BINARY_DIR}/posix)
set_tests_properties(posix.strict_build PROPERTIES LABELS posix TIMEOUT 900)
