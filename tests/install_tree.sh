#!/bin/sh
# `cmake --install` into a temporary prefix gives a working tree: both
# binaries run, the schemas and the man page are where they belong, and the
# installed telescope-mcp finds the installed telescope-sim for --sim.
#
#   install_tree.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/log" 2>&1 || { cat "$tmp/log" >&2; fail "cmake --install"; }
p=$tmp/prefix

[ -x "$p/bin/telescope-mcp" ] || fail "bin/telescope-mcp missing"
[ -x "$p/bin/telescope-sim" ] || fail "bin/telescope-sim missing"
[ -x "$p/bin/telescope-dtd" ] || fail "bin/telescope-dtd missing"
v=$("$p/bin/telescope-mcp" --version) || fail "telescope-mcp --version exited $?"
case $v in "telescope-mcp "[0-9]*) ;; *) fail "telescope-mcp --version printed '$v'" ;; esac
"$p/bin/telescope-sim" --help > "$tmp/simhelp" 2>&1 || fail "telescope-sim --help exited non-zero"
grep -q -- --scenario "$tmp/simhelp" || fail "telescope-sim --help does not list --scenario"

for s in telescope_frames.input.json telescope_frames.output.json frame_perf_record.json extension_reply.json check_report.json; do
  f=$p/share/telescope/schema/$s
  [ -s "$f" ] || fail "share/telescope/schema/$s missing"
  cmp -s "$f" "$src/schema/$s" || fail "share/telescope/schema/$s differs from schema/$s"
done

man1=$p/share/man/man1/telescope-mcp.1
[ -s "$man1" ] || fail "share/man/man1/telescope-mcp.1 missing"
grep -q "^\.TH TELESCOPE-MCP 1 .* \"telescope ${v#telescope-mcp }\"" "$man1" \
  || fail "the man page's .TH line does not name version ${v#telescope-mcp } (update docs/telescope-mcp.1)"
if command -v man >/dev/null 2>&1; then
  # groff's warnings (-ww) go to stderr: a clean page renders silently.
  MANWIDTH=80 man --warnings=w -l "$man1" > "$tmp/man.txt" 2> "$tmp/man.err" || fail "man -l exited non-zero"
  [ ! -s "$tmp/man.err" ] || { cat "$tmp/man.err" >&2; fail "the man page has roff warnings"; }
  tr -s " " < "$tmp/man.txt" | grep -q "telescope-mcp - an MCP server" || fail "the man page does not render its NAME"
fi
[ -s "$p/share/doc/telescope/telescope-sim.md" ] || fail "share/doc/telescope/telescope-sim.md missing"
[ -s "$p/share/doc/telescope/examples/flutter/main.dart" ] || fail "the Flutter example is not installed"

# The installed pair works together: --sim finds the sim next to itself.
if command -v node >/dev/null 2>&1; then
  node "$src/tests/examples_jsonrpc.mjs" "$p/bin/telescope-mcp" "$src/examples/jsonrpc/sim_idle.jsonl" \
    || fail "the installed telescope-mcp --sim session"
fi
echo "ok: the installed tree under $p works"
