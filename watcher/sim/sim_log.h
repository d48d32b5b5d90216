/* The simulator's one logging entry point: stderr, only with --verbose
 * (stdout carries the banner and the answers to stdin commands). */
#ifndef TELESCOPE_SIM_LOG_H
#define TELESCOPE_SIM_LOG_H

/* Turns logging on or off (main.c, from --verbose). Off by default. */
void sim_log_set_verbose(int on);
/* One line "telescope-sim: ...\n" on stderr when verbose. */
void sim_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The same line whatever --verbose says: what a test must be able to read
 * (the ext.flutter.driver calls of --flutter-driver). */
void sim_log_always(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
