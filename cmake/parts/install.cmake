# What `cmake --install` adds beyond the binaries and schemas (top-level
# CMakeLists.txt): the man page, the sim's README, and the examples a user
# copies from (client configs, the Flutter registration snippet).
include(GNUInstallDirs)
install(FILES ${CMAKE_SOURCE_DIR}/docs/telescope-mcp.1
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${CMAKE_SOURCE_DIR}/watcher/sim/README.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR} RENAME telescope-sim.md)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/examples/clients ${CMAKE_SOURCE_DIR}/examples/flutter
                  ${CMAKE_SOURCE_DIR}/examples/jsonrpc
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
