# chart "svg" (issue 8): the chart end to end through the SDK client against
# telescope-sim, and rendered by headless Chromium (skipped, exit 77, when
# Debian's chromium is not installed).
find_program(NODE_EXECUTABLE node)
if(NODE_EXECUTABLE)
  set(CHART_TEST_ENV
    "TELESCOPE_BINARY_DIR=${CMAKE_BINARY_DIR};TELESCOPE_SOURCE_DIR=${CMAKE_SOURCE_DIR};TELESCOPE_NODE_MODULES=${CMAKE_SOURCE_DIR}/tests/client/node_modules")
  add_test(NAME chart.capture
           COMMAND ${NODE_EXECUTABLE} --test --test-reporter=spec ${CMAKE_CURRENT_SOURCE_DIR}/chart/capture.test.mjs)
  set_tests_properties(chart.capture PROPERTIES LABELS "chart;integration" TIMEOUT 120
    ENVIRONMENT "${CHART_TEST_ENV}")
  add_test(NAME chart.render
           COMMAND ${NODE_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/chart/render.mjs)
  set_tests_properties(chart.render PROPERTIES LABELS chart TIMEOUT 90 SKIP_RETURN_CODE 77
    ENVIRONMENT "${CHART_TEST_ENV}")
endif()
