#!/bin/sh
# Registers telescope with Claude Code for this project (writes .mcp.json).
# Options go before the server name; the command follows `--`.
claude mcp add --transport stdio --scope project telescope -- \
  /usr/local/bin/telescope-mcp --vm-service-uri-file /tmp/telescope-vmservice.uri
