# Can this libwebsockets drive telescope's libuv loop? It must be built with
# LWS_WITH_LIBUV; and where its event libs are plugins (LWS_WITH_EVLIB_PLUGINS,
# the default on Unix since lws 4.1) the libuv one, libwebsockets-evlib_uv,
# must be installed where lws looks for it, or no context can be created
# (Debian and Ubuntu ship it apart: libwebsockets-evlib-uv). Built with libuv
# and without plugins (lws 4.0, or -DLWS_WITH_EVLIB_PLUGINS=OFF) it is in the
# library itself. scripts/deps.sh makes the same check before the build.
#
# CMakeLists.txt includes this file and calls the function; the test runs it
# alone: cmake -DLWS_CONFIG_H=FILE -DLWS_PLUGIN_DIRS="DIR;..." -P lws_libuv.cmake
function(telescope_check_lws_libuv config_h plugin_dirs)
  if(NOT EXISTS "${config_h}")
    message(FATAL_ERROR "libwebsockets' lws_config.h was not found: is libwebsockets-dev installed? (make deps)")
  endif()
  file(STRINGS "${config_h}" with_uv REGEX "^#define LWS_WITH_LIBUV$")
  file(STRINGS "${config_h}" plugins REGEX "^#define LWS_WITH_EVLIB_PLUGINS$")
  if(NOT with_uv)
    message(FATAL_ERROR "libwebsockets (${config_h}) is built without libuv support "
                        "(LWS_WITH_LIBUV): telescope cannot run on it. Build libwebsockets with "
                        "-DLWS_WITH_LIBUV=ON: docs/install.md, \"No libuv support\"")
  endif()
  if(plugins)
    foreach(dir ${plugin_dirs})
      foreach(name libwebsockets-evlib_uv.so libwebsockets-evlib_uv.dylib)
        if(EXISTS "${dir}/${name}")
          return()
        endif()
      endforeach()
    endforeach()
    message(FATAL_ERROR "libwebsockets loads its libuv support from a plugin, libwebsockets-evlib_uv, "
                        "found in none of: ${plugin_dirs}. Debian, Ubuntu: apt-get install "
                        "libwebsockets-evlib-uv; Alpine: apk add libwebsockets-evlib_uv; elsewhere "
                        "docs/install.md, \"No libuv support\"")
  endif()
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  telescope_check_lws_libuv("${LWS_CONFIG_H}" "${LWS_PLUGIN_DIRS}")
  message("libuv support: ok")
endif()
