#!/bin/sh
# Installs what one part of telescope needs, and only what is missing, with
# this system's own package manager (what make deps-build, deps-demo and
# deps-test run):
#
#   sh scripts/deps.sh build|demo|test
#
#   build  the compiler, cmake, pkg-config, jansson, libuv, libwebsockets
#   demo   Node.js and npm (a node already on PATH, from nvm or elsewhere, counts)
#   test   Check, and where the system has them valgrind, clang and chromium
#
# The system: macOS (uname Darwin, Homebrew), else /etc/os-release's ID, then
# each word of its ID_LIKE: debian, ubuntu (apt-get), fedora (dnf; rhel and
# centos alike), arch (pacman), alpine (apk).
#   TELESCOPE_OS=NAME          use that system, no detection
#   TELESCOPE_DEPS_DRY_RUN=1   print the commands instead of running them
#   TELESCOPE_OS_RELEASE=FILE  read FILE instead of /etc/os-release (tests)
# Package names, where each comes from, and what to do where a system's
# libwebsockets lacks libuv support: docs/install.md.
#
# Installs as root, or through password-less sudo; otherwise prints the
# command and fails. Exit status: 0 nothing missing (or installed); 1 cannot
# install, or libwebsockets cannot run on libuv (the fix is printed); 2 bad
# usage or an unknown system.
set -eu

group=${1:-}
case $group in
  build|demo|test) ;;
  *) echo "usage: sh scripts/deps.sh build|demo|test" >&2; exit 2 ;;
esac
dry=${TELESCOPE_DEPS_DRY_RUN:-}
[ "$dry" = 0 ] && dry=

detect_os() {
  if [ "$(uname -s)" = Darwin ]; then echo macos; return; fi
  f=${TELESCOPE_OS_RELEASE:-/etc/os-release}
  [ -r "$f" ] || { echo "unknown (no $f)"; return; }
  # os-release is shell assignments; read it in a subshell.
  words=$(. "$f"; echo "${ID:-} ${ID_LIKE:-}")
  for word in $words; do
    case $word in
      debian|ubuntu|fedora|arch|alpine) echo "$word"; return ;;
      rhel|centos) echo fedora; return ;;
      archlinux) echo arch; return ;;
    esac
  done
  echo "${words%% *}"
}
os=${TELESCOPE_OS:-$(detect_os)}

# need: always installed. maybe: installed when the package index has them
# (each is named where it is missing on some release). Node's packages are
# skipped when node and npm are on PATH.
case $os in
  debian|ubuntu)
    # libwebsockets >= 4.1 loads libuv support from a plugin that Debian and
    # Ubuntu ship apart: libwebsockets-evlib-uv (not in Ubuntu 22.04, whose
    # 4.0 has it built in). chromium: a snap wrapper on Ubuntu, not a deb.
    build="build-essential cmake pkg-config libjansson-dev libuv1-dev libwebsockets-dev"
    build_maybe="libwebsockets-evlib-uv"
    demo="nodejs npm"
    test="check valgrind clang"
    test_maybe="libclang-rt-14-dev chromium" ;;
  fedora)
    build="gcc make cmake pkgconf-pkg-config jansson-devel libuv-devel libwebsockets-devel"
    demo="nodejs npm"
    test="check-devel valgrind clang chromium" ;;
  arch)
    build="base-devel cmake pkgconf jansson libuv libwebsockets"
    demo="nodejs npm"
    test="check valgrind clang chromium" ;;
  alpine)
    # Alpine ships libwebsockets' libuv plugin apart too: libwebsockets-evlib_uv.
    build="build-base cmake pkgconf jansson-dev libuv-dev libwebsockets-dev libwebsockets-evlib_uv"
    demo="nodejs npm"
    test="check-dev valgrind clang chromium" ;;
  macos)
    # The compiler is Xcode's command line tools (xcode-select --install).
    # valgrind and chromium are not Homebrew formulae: those tests are not run.
    build="cmake pkg-config jansson libuv libwebsockets"
    demo="node"
    test="check" ;;
  *)
    echo "deps: unknown system '$os': set TELESCOPE_OS to one of debian ubuntu fedora arch alpine macos," >&2
    echo "deps: or install by hand what docs/install.md lists" >&2
    exit 2 ;;
esac
eval "need=\$$group"
eval "maybe=\${${group}_maybe:-}"

installed() {
  case $1 in
    nodejs|node) command -v node >/dev/null 2>&1 && return 0 ;;
    npm) command -v npm >/dev/null 2>&1 && return 0 ;;
  esac
  case $os in
    debian|ubuntu) dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed" ;;
    fedora) rpm -q "$1" >/dev/null 2>&1 ;;
    arch) pacman -Q "$1" >/dev/null 2>&1 ;;
    alpine) apk info -e "$1" >/dev/null 2>&1 ;;
    macos) brew list --formula "$1" >/dev/null 2>&1 ;;
  esac
}

available() {
  case $os in
    debian|ubuntu) apt-cache show "$1" >/dev/null 2>&1 ;;
    *) return 0 ;;
  esac
}

if [ "$os" = macos ]; then
  sudo=""
  command -v brew >/dev/null 2>&1 || [ -n "$dry" ] || {
    echo "deps: Homebrew is needed on macOS: https://brew.sh" >&2; exit 1; }
elif [ "$(id -u)" = 0 ]; then
  sudo=""
else
  sudo="sudo "
fi

# The commands that install $*, one per line.
install_commands() {
  case $os in
    debian|ubuntu)
      echo "${sudo}apt-get update"
      echo "${sudo}env DEBIAN_FRONTEND=noninteractive apt-get install -y $*" ;;
    fedora) echo "${sudo}dnf install -y $*" ;;
    arch) echo "${sudo}pacman -S --needed --noconfirm $*" ;;
    alpine) echo "${sudo}apk add $*" ;;
    macos) echo "brew install $*" ;;
  esac
}

missing=""
for p in $need; do
  installed "$p" || missing="$missing $p"
done
for p in $maybe; do
  installed "$p" || ! available "$p" || missing="$missing $p"
done
missing=${missing# }

if [ -z "$missing" ]; then
  [ -n "$dry" ] && echo "# nothing missing for $group on $os"
elif [ -n "$dry" ]; then
  install_commands "$missing"
elif [ -n "$sudo" ] && ! sudo -n true 2>/dev/null; then
  echo "deps: missing packages: $missing" >&2
  echo "deps: run:" >&2
  install_commands "$missing" | sed 's/^/  /' >&2
  exit 1
else
  echo "deps: installing: $missing"
  install_commands "$missing" | while IFS= read -r cmd; do
    sh -c "$cmd" >/dev/null || exit 1
  done
fi

# libwebsockets must drive telescope's libuv loop: built with LWS_WITH_LIBUV,
# and where libuv support is a plugin (LWS_WITH_EVLIB_PLUGINS, lws >= 4.1's
# default) the plugin file must be there, or no context can be created.
# CMakeLists.txt checks the same at configure time.
[ "$group" = build ] || exit 0
incdir=$(pkg-config --variable=includedir libwebsockets 2>/dev/null) || incdir=""
if [ -z "$incdir" ] || [ ! -r "$incdir/lws_config.h" ]; then
  [ -n "$dry" ] && echo "# libwebsockets is not installed yet: its libuv support is checked after the install"
  exit 0
fi
fix_source="build libwebsockets from source with libuv support built in, then point pkg-config at it:
  cmake -S libwebsockets -B lws-build -DLWS_WITH_LIBUV=ON -DLWS_WITH_EVLIB_PLUGINS=OFF -DLWS_WITHOUT_TESTAPPS=ON
  cmake --build lws-build && ${sudo}cmake --install lws-build
  export PKG_CONFIG_PATH=/usr/local/lib/pkgconfig   (docs/install.md, \"No libuv support\")"
if ! grep -q '^#define LWS_WITH_LIBUV$' "$incdir/lws_config.h"; then
  echo "deps: this system's libwebsockets ($incdir/lws_config.h) is built without libuv support" >&2
  echo "deps: (LWS_WITH_LIBUV): telescope cannot run on it. Fix: $fix_source" >&2
  exit 1
fi
if grep -q '^#define LWS_WITH_EVLIB_PLUGINS$' "$incdir/lws_config.h"; then
  libdir=$(pkg-config --variable=libdir libwebsockets 2>/dev/null) || libdir=""
  for f in "$libdir"/libwebsockets-evlib_uv.so "$libdir"/libwebsockets-evlib_uv.dylib \
           "$libdir"/libwebsockets/libwebsockets-evlib_uv.so; do
    [ -e "$f" ] && exit 0
  done
  echo "deps: libwebsockets loads its libuv support from a plugin, libwebsockets-evlib_uv," >&2
  echo "deps: which is not in $libdir: no context can be created without it. Fix:" >&2
  case $os in
    debian|ubuntu) echo "  ${sudo}apt-get install libwebsockets-evlib-uv" >&2 ;;
    alpine) echo "  ${sudo}apk add libwebsockets-evlib_uv" >&2 ;;
    *) echo "  $fix_source" >&2 ;;
  esac
  exit 1
fi
exit 0
