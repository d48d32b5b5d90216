# unit.lws_version: the libwebsockets that runs is the one configured and
# compiled against (make test-lws43 relies on it).
add_executable(lws_version lws/version.c)
target_link_libraries(lws_version PRIVATE PkgConfig::LWS)
add_test(NAME unit.lws_version COMMAND lws_version ${LWS_VERSION})
set_tests_properties(unit.lws_version PROPERTIES LABELS unit TIMEOUT 30)

# tests/lws/two_contexts.c under valgrind (label valgrind): the loss of
# libwebsockets 4.1 that RELIABILITY.md documents ("Two lws contexts alive at
# once"). What the server does (one context at a time) must lose nothing; two
# contexts alive at once must lose exactly the older one's SSL_CTX while lws is
# 4.1. When that stops (lws upgraded past the upstream fix), the test says so:
# the note, and the one-context rule, can then go.
find_program(VALGRIND_EXECUTABLE valgrind)
if(VALGRIND_EXECUTABLE AND NOT TELESCOPE_SANITIZE)
  add_executable(lws_two_contexts lws/two_contexts.c)
  target_link_libraries(lws_two_contexts PRIVATE PkgConfig::LWS)
  add_test(NAME valgrind.lws_two_contexts
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/lws/two_contexts.sh ${VALGRIND_EXECUTABLE}
                   $<TARGET_FILE:lws_two_contexts> ${LWS_VERSION})
  set_tests_properties(valgrind.lws_two_contexts PROPERTIES LABELS valgrind TIMEOUT 120)
endif()
