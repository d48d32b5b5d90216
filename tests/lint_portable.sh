#!/bin/sh
# lint.portable: no Linux-only (or glibc-only) header, call or flag in the C of
# server/, watcher/sim/ and tests/ outside an #ifdef __linux__ block: the
# server and the sim build on macOS and the BSDs as well. A block counts as
# Linux-only when its condition names __linux__ or __GLIBC__ with no negation
# and no || (#ifdef __linux__, #if defined(__linux__) && ...), until its #else
# or #endif. Comments are not code.
#
# Usage: sh tests/lint_portable.sh [SOURCE_DIR]   (exit 1 on a hit)
ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$ROOT" || exit 2
find server watcher/sim tests -name node_modules -prune -o -type f \( -name '*.c' -o -name '*.h' \) -print |
  sort | xargs awk '
BEGIN {
  # What exists on Linux (or glibc) only, or with another meaning elsewhere.
  bad = "sys/(epoll|inotify|signalfd|eventfd|timerfd|sysinfo|prctl|sendfile|fanotify)\\.h|<linux/|<malloc\\.h>|<features\\.h>" \
        "|(^|[^A-Za-z0-9_])(epoll_[a-z_]+|inotify_[a-z_]+|signalfd|eventfd|timerfd_[a-z]+|sysinfo|prctl|pipe2|accept4|dup3|ppoll|splice|sendfile)[ \t]*\\(" \
        "|(^|[^A-Za-z0-9_])(memrchr|strchrnul|mempcpy|rawmemchr|strdupa|strndupa|get_current_dir_name|canonicalize_file_name|secure_getenv|gettid|getrandom|sched_getaffinity|mallinfo2?|malloc_usable_size|qsort_r|strerror_l|pthread_setname_np)[ \t]*\\(" \
        "|(^|[^A-Za-z0-9_])(MSG_NOSIGNAL|SOCK_CLOEXEC|SOCK_NONBLOCK|O_PATH|O_TMPFILE|CLOCK_BOOTTIME|PR_SET_[A-Z_]+|program_invocation_(short_)?name|__GLIBC__|__GLIBC_MINOR__|_GNU_SOURCE|_DEFAULT_SOURCE|_BSD_SOURCE)([^A-Za-z0-9_]|$)" \
        "|\"/proc/"
}
FNR == 1 { depth = 0; linux = 0; in_comment = 0 }
{
  line = $0
  # Strip comments (a /* may span lines).
  out = ""
  while (line != "") {
    if (in_comment) {
      e = index(line, "*/")
      if (!e) { line = ""; break }
      line = substr(line, e + 2); in_comment = 0
    } else {
      s = index(line, "/*"); d = index(line, "//")
      if (d && (!s || d < s)) { out = out substr(line, 1, d - 1); line = ""; break }
      if (!s) { out = out line; line = ""; break }
      out = out substr(line, 1, s - 1); line = substr(line, s + 2); in_comment = 1
    }
  }
  code = out
  if (code ~ /^[ \t]*#[ \t]*if/) {
    depth++
    guard[depth] = code ~ /__linux__|__GLIBC__/ && code !~ /ifndef|!|\|\|/
    if (guard[depth]) linux++
    next
  }
  if (code ~ /^[ \t]*#[ \t]*(else|elif)/) {
    if (depth && guard[depth]) { linux--; guard[depth] = 0 }
    next
  }
  if (code ~ /^[ \t]*#[ \t]*endif/) {
    if (depth && guard[depth]) linux--
    if (depth) depth--
    next
  }
  if (!linux && match(code, bad)) {
    sub(/^[ \t]+/, "", code)
    printf "%s:%d: Linux-only outside #ifdef __linux__: %s\n", FILENAME, FNR, code
    hits++
  }
}
END { exit hits ? 1 : 0 }' || exit 1
