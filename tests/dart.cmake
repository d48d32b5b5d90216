# The Dart package watcher/flutter: a tree-sitter parse check that runs
# everywhere (Node), and `flutter test` where a Flutter SDK is installed.

find_program(NODE_EXECUTABLE node)
if(NODE_EXECUTABLE)
  add_test(NAME dart.parse
           COMMAND ${NODE_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/client/dart_parse.mjs
                   ${CMAKE_SOURCE_DIR}/watcher/flutter
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
else()
  # Node is a declared dependency (make deps installs it): its absence is a
  # failure to report, not a reason to skip the only Dart check we have.
  add_test(NAME dart.parse
           COMMAND ${CMAKE_COMMAND} -E echo "dart.parse needs node: run make deps")
  set_tests_properties(dart.parse PROPERTIES WILL_FAIL TRUE)
endif()
set_tests_properties(dart.parse PROPERTIES LABELS dart TIMEOUT 120)

# No Flutter SDK on the CI machine: the test then reports itself skipped
# (exit 77) instead of passing silently.
add_test(NAME dart.flutter_test
         COMMAND sh -c "command -v flutter >/dev/null 2>&1 || { echo 'skipped: flutter is not on PATH (no Flutter SDK on this machine)'; exit 77; }; flutter test"
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}/watcher/flutter)
set_tests_properties(dart.flutter_test PROPERTIES LABELS dart TIMEOUT 900 SKIP_RETURN_CODE 77)

# The package's analysis, and the example app's own test and analysis
# (issue 12 item 16: both clean after `flutter create .` in example/).
add_test(NAME dart.flutter_analyze
         COMMAND sh -c "command -v flutter >/dev/null 2>&1 || { echo 'skipped: flutter is not on PATH (no Flutter SDK on this machine)'; exit 77; }; flutter analyze"
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}/watcher/flutter)
add_test(NAME dart.example
         COMMAND sh -c "command -v flutter >/dev/null 2>&1 || { echo 'skipped: flutter is not on PATH (no Flutter SDK on this machine)'; exit 77; }; flutter test && flutter analyze"
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}/watcher/flutter/example)
set_tests_properties(dart.flutter_analyze dart.example PROPERTIES LABELS dart TIMEOUT 900
                     SKIP_RETURN_CODE 77)

# The shared watcher vectors (run by the C model's unit test and the Dart
# vector test) must themselves satisfy the record and reply schemas.
if(NODE_EXECUTABLE)
  add_test(NAME vectors.schema
           COMMAND ${NODE_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/vectors/watcher/schema_check.mjs
                   ${CMAKE_SOURCE_DIR})
  set_tests_properties(vectors.schema PROPERTIES LABELS "dart;vectors" TIMEOUT 120)
endif()
