/* One logging entry point. Logs go to stderr only (stdout carries MCP and
 * nothing else), are quiet by default (warn), and every line passes through
 * the redactor so a VM-service token never reaches a log. */
#ifndef TELESCOPE_LOG_H
#define TELESCOPE_LOG_H

typedef enum { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG, LOG_TRACE } log_level_t;

void log_set_level(log_level_t level);
log_level_t log_get_level(void);
/* Parses "error|warn|info|debug|trace"; returns -1 when unknown. */
int log_level_parse(const char *s);
/* Prefix for lines of this process, e.g. "telescope-mcp". */
void log_set_name(const char *name);
void log_msg(log_level_t level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Writes src into dst (size n) with every VM-service auth token replaced by
 * "…redacted…": the first path segment after host:port of any ws/wss/http/https
 * URI, and any uri= query value's token likewise. Always NUL-terminates. */
void log_redact(const char *src, char *dst, unsigned long n);

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
