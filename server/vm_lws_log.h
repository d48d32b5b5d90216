/* vm_lws_log: libwebsockets' log lines, into ours (log_debug), with the
 * tokens of the last few URIs dialled scrubbed: lws's log callback has no
 * user pointer, and its client logs print the bare request path. The secrets
 * are process-wide (lws's log callback is process-wide too). */
#ifndef TELESCOPE_VM_LWS_LOG_H
#define TELESCOPE_VM_LWS_LOG_H

/* The path about to be dialled ("/TOKEN=/ws", a DTD's "/SECRET"): its token
 * is scrubbed from now on (with the three dialled before it). */
void vm_lws_log_path(const char *path);
/* lws_set_log_level's emit callback. */
void vm_lws_log_emit(int level, const char *line);

#endif
