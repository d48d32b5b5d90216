#!/bin/sh
# posix.strict_build: telescope-mcp, telescope-sim and telescope-dtd compile
# with the standard feature macros only: _POSIX_C_SOURCE=200809L, plus
# _XOPEN_SOURCE=700 in the files that need an XSI call (realpath), which they
# define themselves. Whatever the main CMakeLists.txt adds, the glibc and BSD
# catch-alls are undefined again on the command line, so a call that only
# _DEFAULT_SOURCE or _GNU_SOURCE declares is an implicit declaration, an
# error. Built by clang when there is one (macOS's compiler), at -O0, in its
# own tree, kept between runs.
#
# Usage: sh tests/posix_build.sh SOURCE_DIR BUILD_DIR
set -eu
src=$1
dir=$2
cc=$(command -v clang || command -v cc)
flags="-U_DEFAULT_SOURCE -U_GNU_SOURCE -U_BSD_SOURCE -U_SVID_SOURCE -U_POSIX_C_SOURCE"
flags="$flags -D_POSIX_C_SOURCE=200809L -Werror=implicit-function-declaration"
cmake -S "$src" -B "$dir" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_C_FLAGS="$flags" >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
cmake --build "$dir" -j "${JOBS:-2}" --target telescope-mcp telescope-sim telescope-dtd
