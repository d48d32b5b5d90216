# The model-based test of the session core (issue 11): random sequences of
# tool calls, some overlapping, with faults injected into telescope-sim, and
# a reference model checked after every step (tests/model/model.mjs). The
# regressions file holds one named test per user-visible failure of issue 11.
# MODEL_SEQUENCES (e.g. from make check-hard) raises the number of sequences.
set(_model_env
  "TELESCOPE_BINARY_DIR=${CMAKE_BINARY_DIR}"
  "TELESCOPE_SOURCE_DIR=${CMAKE_SOURCE_DIR}"
  "TELESCOPE_NODE_MODULES=${CMAKE_SOURCE_DIR}/tests/client/node_modules")
add_test(NAME model.sessions
         COMMAND node --test --test-reporter=spec ${CMAKE_CURRENT_SOURCE_DIR}/model/sessions.test.mjs)
set_tests_properties(model.sessions PROPERTIES LABELS "model;integration" TIMEOUT 1800
  ENVIRONMENT "${_model_env}")
add_test(NAME model.regressions
         COMMAND node --test --test-reporter=spec ${CMAKE_CURRENT_SOURCE_DIR}/model/regressions.test.mjs)
set_tests_properties(model.regressions PROPERTIES LABELS "model;integration" TIMEOUT 600
  ENVIRONMENT "${_model_env}")
# The same model on an app without the watcher (issue 15): frames from its
# Flutter.Frame events, every invariant unchanged, positions checked by frame
# number. Bounded by time (90 s) whatever MODEL_SEQUENCES says.
add_test(NAME model.frame_events
         COMMAND node --test --test-reporter=spec ${CMAKE_CURRENT_SOURCE_DIR}/model/sessions.test.mjs)
set_tests_properties(model.frame_events PROPERTIES LABELS "model;integration" TIMEOUT 600
  ENVIRONMENT "${_model_env};MODEL_SIM_ARGS=--no-watcher;MODEL_BUDGET_S=90")
# Under the sanitizers the sim and the server run about three times slower,
# and two model runs side by side on two cores starve each other: at 6 000 fps
# a page of records then takes longer than any call timeout (seen in this
# round's check-hard: "unresponsive" on a healthy app). Each runs alone there.
if(TELESCOPE_SANITIZE)
  set_tests_properties(model.sessions model.regressions model.frame_events PROPERTIES RUN_SERIAL TRUE)
endif()
