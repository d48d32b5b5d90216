# The client configurations in examples/clients parse and name the installed binary.
include(GNUInstallDirs)
add_test(NAME examples.client_configs
         COMMAND node ${CMAKE_SOURCE_DIR}/tests/client/examples_check.mjs
                 ${CMAKE_SOURCE_DIR}/examples/clients /usr/local/bin/telescope-mcp)
set_tests_properties(examples.client_configs PROPERTIES LABELS examples TIMEOUT 30)
