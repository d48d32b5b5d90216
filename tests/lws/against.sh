#!/bin/sh
# make test-lws43: telescope built and tested against another libwebsockets
# than the system's (Debian 12's 4.1.6 stays the default). libwebsockets
# VERSION is built from Debian's source package of SUITE, downloaded by apt
# with a deb-src line that exists only for this run (a private source list,
# list directory and cache: /etc/apt and /var/lib/apt are not touched, and no
# root is needed), and installed into a cache outside the tree, keyed by the
# version and the build options:
#
#   $TELESCOPE_CACHE (default ~/.cache/telescope)/lws-VERSION
#
# Then telescope is configured against it in its own build tree (BUILD), and
# the unit, integration and sim tests run there.
#
# Usage: sh tests/lws/against.sh [VERSION [SUITE [BUILD]]]
set -eu
VERSION=${1:-4.3.5}
SUITE=${2:-trixie}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${3:-build-lws$VERSION}
CACHE=${TELESCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/telescope}
PREFIX=$CACHE/lws-$VERSION
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
# As Debian's debian/rules configures it (libuv as a runtime plugin, OpenSSL,
# zlib and permessage-deflate, IPv6, unix sockets), less the test apps, the
# static library and the other event libraries, which telescope does not use.
LWS_OPTIONS="-DLWS_WITH_LIBUV=ON -DLWS_WITH_EVLIB_PLUGINS=ON -DLWS_WITH_SSL=ON
 -DLWS_WITH_ZLIB=ON -DLWS_WITHOUT_EXTENSIONS=OFF -DLWS_IPV6=ON -DLWS_UNIX_SOCK=ON
 -DLWS_WITHOUT_TESTAPPS=ON -DLWS_WITH_MINIMAL_EXAMPLES=OFF -DLWS_WITH_STATIC=OFF
 -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS=-Wno-error=deprecated-declarations"
STAMP="lws $VERSION from $SUITE: $(echo $LWS_OPTIONS)"

say() { echo "test-lws: $*"; }

fetch_and_build() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/telescope-lws.XXXXXX")
  trap 'rm -rf "$work"' EXIT INT TERM
  chmod 755 "$work" # apt's _apt user downloads into it
  mkdir -p "$work/apt/sources.list.d" "$work/apt/lists/partial" "$work/apt/cache/archives/partial"
  cat >"$work/apt/sources.list.d/telescope-lws-src.sources" <<SRC
Types: deb-src
URIs: $MIRROR
Suites: $SUITE
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  set -- -o Dir::Etc::SourceList=/dev/null \
    -o Dir::Etc::SourceParts="$work/apt/sources.list.d" \
    -o Dir::State::Lists="$work/apt/lists" -o Dir::Cache="$work/apt/cache" \
    -o Debug::NoLocking=1
  say "apt-get update ($SUITE deb-src only)"
  apt-get "$@" -qq update
  # The record of VERSION (SUITE may carry one revision only; sid more).
  apt-cache "$@" showsrc libwebsockets | awk -v v="$VERSION" '
    /^Package:/ { keep = 0 }
    /^Version:/ { keep = index($2, v "-") == 1 && !done; if (keep) done = 1 }
    keep' >"$work/record"
  rev=$(awk '/^Version:/ { print $2 }' "$work/record")
  [ -n "$rev" ] || { say "$SUITE has no libwebsockets $VERSION source"; exit 1; }
  orig=libwebsockets_$VERSION.orig.tar.gz
  dir=$(awk '/^Directory:/ { print $2 }' "$work/record")
  sha=$(awk -v f="$orig" '/^Checksums-Sha256:/ { in_sums = 1; next }
    /^[^ ]/ { in_sums = 0 } in_sums && $3 == f { print $1 }' "$work/record")
  say "apt-get source libwebsockets=$rev"
  # A revision's .dsc or Debian tarball can be missing from the pool while
  # the upstream tarball is there; that tarball is all the build needs.
  if ! (cd "$work" && apt-get "$@" -qq source --download-only "libwebsockets=$rev"); then
    [ -f "$work/$orig" ] || {
      say "fetching $orig alone"
      /usr/lib/apt/apt-helper download-file "$MIRROR/$dir/$orig" "$work/$orig" "SHA256:$sha"
    }
  fi
  echo "$sha  $work/$orig" | sha256sum -c --quiet - # the hash the signed index gives
  tar -xzf "$work/$orig" -C "$work"
  say "building libwebsockets $VERSION into $PREFIX"
  # shellcheck disable=SC2086 # the options are words
  cmake -S "$work/libwebsockets-$VERSION" -B "$work/build" -DCMAKE_INSTALL_PREFIX="$PREFIX" \
    $LWS_OPTIONS >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
  cmake --build "$work/build" -j "$JOBS" >"$work/build.log" 2>&1 || { tail -50 "$work/build.log"; exit 1; }
  # Installed whole or not at all: staged, then moved into place.
  DESTDIR="$work/stage" cmake --install "$work/build" >/dev/null
  rm -rf "$PREFIX"
  mkdir -p "$(dirname "$PREFIX")"
  mv "$work/stage$PREFIX" "$PREFIX"
  echo "$STAMP" >"$PREFIX/telescope-stamp"
}

if [ -f "$PREFIX/telescope-stamp" ] && [ "$(cat "$PREFIX/telescope-stamp")" = "$STAMP" ]; then
  say "libwebsockets $VERSION cached in $PREFIX"
else
  start=$(date +%s)
  (fetch_and_build)
  say "libwebsockets $VERSION fetched and built in $(($(date +%s) - start)) s"
fi

pc=$(find "$PREFIX" -name libwebsockets.pc | head -1)
libdir=$(dirname "$(dirname "$pc")")
export PKG_CONFIG_PATH="$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# A tree configured against another libwebsockets (another cache) starts over:
# CMake keeps what pkg-config found the first time.
if [ -f "$ROOT/$BUILD/CMakeCache.txt" ] && ! grep -q "^LWS_CONFIG_H:FILEPATH=$PREFIX/" "$ROOT/$BUILD/CMakeCache.txt"; then
  rm -rf "${ROOT:?}/$BUILD"
fi
start=$(date +%s)
cmake -S "$ROOT" -B "$ROOT/$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_BUILD_RPATH="$libdir" >/dev/null
cmake --build "$ROOT/$BUILD" -j "$JOBS" >/dev/null || cmake --build "$ROOT/$BUILD" -j 1
say "telescope built against libwebsockets $VERSION in $(($(date +%s) - start)) s"
ldd "$ROOT/$BUILD/telescope-mcp" | grep -q "$libdir/libwebsockets" ||
  { say "telescope-mcp does not load $libdir's libwebsockets"; ldd "$ROOT/$BUILD/telescope-mcp"; exit 1; }
cd "$ROOT/$BUILD"
# Which libwebsockets the tests load, said once (unit.lws_version checks it).
tests/lws_version "$(pkg-config --modversion libwebsockets)"
start=$(date +%s)
# shellcheck disable=SC2086 # CTEST_ARGS are words
ctest --output-on-failure -j "$JOBS" -L 'unit|integration|sim' -LE valgrind ${CTEST_ARGS:-}
say "the tests against libwebsockets $VERSION took $(($(date +%s) - start)) s"
