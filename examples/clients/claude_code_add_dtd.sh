#!/bin/sh
# Registers telescope with Claude Code for this project (writes .mcp.json),
# finding the app through the Dart Tooling Daemon whose URI is $1 (the line
# `flutter run --print-dtd` prints, or the IDE's "Copy DTD URI").
# Options go before the server name; the command follows `--`.
claude mcp add --transport stdio --scope project telescope -- \
  /usr/local/bin/telescope-mcp --dtd-uri "$1"
