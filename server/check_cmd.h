/* check_cmd: `telescope-mcp check`, the CI command (docs/tool.md "The check
 * command", man page CHECK). It measures a running app for --duration-ms by
 * driving the real pipeline in-process — a libuv loop, the frames tool and
 * an MCP session fed `initialize` and one `tools/call` of telescope_frames
 * with action "capture" — then judges the summary against --budgets, prints
 * a short summary on stdout, and writes --report.
 *
 * Exit status: CHECK_EXIT_PASS within budgets, CHECK_EXIT_FAIL when a budget
 * failed, CHECK_EXIT_UNMEASURED when nothing could be measured (the
 * diagnosis is printed), CHECK_EXIT_USAGE on a bad command line (sysexits'
 * EX_USAGE).
 *
 * Not named check.h: the build puts server/ on the include path, where that
 * name would shadow the Check unit-test framework's <check.h>. */
#ifndef TELESCOPE_CHECK_CMD_H
#define TELESCOPE_CHECK_CMD_H

#define CHECK_EXIT_PASS 0
#define CHECK_EXIT_FAIL 1
#define CHECK_EXIT_UNMEASURED 2
#define CHECK_EXIT_USAGE 64

/* argv[0] is "check"; the options follow. Returns the exit status. */
int check_main(int argc, char **argv);

#endif
