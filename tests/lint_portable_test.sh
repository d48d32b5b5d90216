#!/bin/sh
# lint.portable_selftest: the lint finds what it should in a made-up tree,
# and nothing under #ifdef __linux__ or in comments.
# Usage: sh tests/lint_portable_test.sh LINT_SCRIPT
set -u
lint=$1
t=$(mktemp -d "${TMPDIR:-/tmp}/lint-portable.XXXXXX")
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/server" "$t/watcher/sim" "$t/tests/unit"
cat >"$t/server/a.c" <<'C'
#include <sys/epoll.h>
/* MSG_NOSIGNAL in a comment is no call */
#ifdef __linux__
#include <sys/prctl.h>
static int f(int s) { return send(s, "", 0, MSG_NOSIGNAL); }
#else
static int f(int s) { return pipe2(p, 0); }
#endif
#if defined(__APPLE__) || defined(__linux__)
static int g(void) { return accept4(0, 0, 0, SOCK_CLOEXEC); }
#endif
#ifndef __linux__
static const char *p = "/proc/self/status";
#endif
static char *h(char *s) { return strchrnul(s, 'x'); } // memrchr( in a comment
C
cat >"$t/watcher/sim/b.h" <<'C'
#define _GNU_SOURCE
extern char *program_invocation_name;
static int my_prctl_count; /* a name that only contains prctl */
C
cat >"$t/tests/unit/c.c" <<'C'
#ifdef __GLIBC__
static void *m(void *s) { return memrchr(s, 0, 1); }
#endif
static void *n(void *d) { return mempcpy(d, d, 0); }
C
got=$(sh "$lint" "$t" | sed 's/: Linux-only.*//' | sort | tr '\n' ' ')
want="server/a.c:1 server/a.c:10 server/a.c:13 server/a.c:15 server/a.c:7 tests/unit/c.c:4 watcher/sim/b.h:1 watcher/sim/b.h:2 "
if [ "$got" != "$want" ]; then
  echo "lint found: $got"
  echo "expected:   $want"
  exit 1
fi
sh "$lint" "$t" >/dev/null && { echo "lint exited 0 on a tree with hits"; exit 1; }
echo "lint.portable: 8 of 8 planted hits found, none in comments or under __linux__"
