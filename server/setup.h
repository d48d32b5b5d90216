/* setup: `telescope-mcp --setup CLIENT [-- ARGS...]` prints what registers
 * this server with an MCP client, naming this binary by its absolute path
 * (GUI clients do not inherit the shell's PATH) and starting it with ARGS.
 *
 * stdout carries only the configuration, so it can be redirected into a file
 * or parsed: the `claude mcp add` command line for claude-code, the JSON
 * object for claude-desktop, cursor, vscode and gemini, the TOML table for
 * codex. stderr says where it goes on Linux, macOS and Windows, and the form
 * a client running on Windows needs to start the server inside WSL (through
 * wsl.exe). Client formats and file locations: docs/install.md. */
#ifndef TELESCOPE_SETUP_H
#define TELESCOPE_SETUP_H

#include <stdio.h>

#include "config.h" /* SETUP_CLIENTS: the clients --setup knows */

/* Writes CLIENT's configuration for the server at exe (an absolute path)
 * started with args to out, and where it goes to err. Returns 0, or 2 after
 * a message on err (an unknown client, an argument that is not UTF-8). */
int setup_print(const char *client, const char *exe, char *const *args, int nargs, FILE *out,
                FILE *err);

/* The whole of --setup: finds this executable's absolute path, checks that
 * args are a valid server command line, and prints. Returns the exit status
 * (0, 1 when the path cannot be found, 2 on a bad command line). */
int setup_main(const char *client, char **args, int nargs);

#endif
