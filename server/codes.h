/* Every code the server speaks, each list in one place (libuv's UV_ERRNO_MAP
 * pattern): the enum, the name and the message are generated from it, and
 * nothing else in the tree spells a code number. */
#ifndef TELESCOPE_CODES_H
#define TELESCOPE_CODES_H

/* JSON-RPC 2.0 and MCP protocol errors: XX(enum suffix, code, message). */
#define RPC_ERROR_MAP(XX)                                                     \
  XX(PARSE_ERROR, -32700, "Parse error")                                      \
  XX(INVALID_REQUEST, -32600, "Invalid Request")                              \
  XX(METHOD_NOT_FOUND, -32601, "Method not found")                            \
  XX(INVALID_PARAMS, -32602, "Invalid params")                                \
  XX(INTERNAL_ERROR, -32603, "Internal error")                                \
  XX(SERVER_ERROR, -32000, "Server error")                                    \
  XX(HEADER_MISMATCH, -32020, "Header mismatch")                              \
  XX(MISSING_CLIENT_CAPABILITY, -32021, "Missing required client capability") \
  XX(UNSUPPORTED_PROTOCOL_VERSION, -32022, "Unsupported protocol version")

typedef enum {
#define XX(name, code, msg) RPC_##name = (code),
  RPC_ERROR_MAP(XX)
#undef XX
} rpc_error_t;

/* Diagnoses the tool reports: XX(enum suffix, wire name, is an error for
 * actions other than status, message, hint for the agent). */
#define DIAG_MAP(XX)                                                          \
  XX(NOT_CONNECTED, "not_connected", 1,                                       \
     "No Flutter app is connected.",                                          \
     "Pass vmServiceUri (the URI `flutter run` prints) or start the app.")   \
  XX(CONNECTION_REJECTED, "connection_rejected", 1,                           \
     "The VM service refused the connection.",                                \
     "Use the exact URI `flutter run` printed, token included; a non-loopback host needs --allow-remote.") \
  XX(WATCHER_MISSING, "watcher_missing", 1,                                   \
     "No isolate of the app serves ext.telescope.frames.",                    \
     "Add `if (!kReleaseMode) { TelescopePlugin.install(); TelescopePlugin.registerWatcher(FramePerfWatcher()); }` to main() and run a debug or profile build.") \
  XX(NOT_FLUTTER, "not_flutter", 1,                                           \
     "Not a Flutter app: the isolate registers no Flutter extension (ext.flutter.*, ext.ui.*) and posts no Flutter.Frame event; it is a plain Dart program.", \
     "telescope measures Flutter frames, which a plain Dart program does not draw. Point vmServiceUri at the VM service of the Flutter app (the URI `flutter run` prints).") \
  XX(ISOLATE_PAUSED, "isolate_paused", 1,                                     \
     "The app's isolate is paused in the debugger.",                          \
     "Resume it in the debugger; calls into the app would hang until then.") \
  XX(UNRESPONSIVE, "unresponsive", 1,                                         \
     "The app did not answer within the call timeout.",                       \
     "The app is busy, or its browser tab is in the background with a debugger attached; retry, or raise --call-timeout-ms.") \
  XX(INVALID_REPLY, "invalid_reply", 1,                                       \
     "The app's reply to ext.telescope.frames was malformed or too large and was rejected.", \
     "Make sure the app's telescope package matches this server (protocol 1); the rejected field is in evidence.") \
  XX(WATCHER_ERROR, "watcher_error", 1,                                       \
     "The watcher in the app failed to answer: its handler reported an error.", \
     "The app's log has the exception; evidence.detail has the error the app sent. Retry after fixing or restarting the app.") \
  XX(APP_RESTARTED, "app_restarted", 0,                                       \
     "The app was hot-restarted.",                                            \
     "The session continues on the new run; frames before the restart stay counted.") \
  XX(APP_IDLE, "app_idle", 0,                                                 \
     "No new frames: the engine renders, but nothing on screen is changing.", \
     "Drive the app (scroll, tap, navigate) while measuring.")                \
  XX(ENGINE_STALLED, "engine_stalled", 0,                                     \
     "No new frames, and none was drawn even when one was requested.",        \
     "Rendering is suspended: a backgrounded browser tab, a minimised window or an app in the background (see lifecycle).") \
  XX(FRAMES_PENDING, "frames_pending", 0,                                     \
     "Frames were drawn but their timings have not arrived yet.",             \
     "Timings are batched (about 100 ms); read again or use waitMs.")         \
  XX(FRAMES_LOST, "frames_lost", 0,                                           \
     "The watcher's buffer overflowed between drains; some frames were lost.", \
     "The app outran the drain; the count is in session.framesLost.")       \
  XX(ATTRIBUTION_OFF, "attribution_off", 0,                                   \
     "Frames carry no per-block attribution outside a session.",              \
     "`start` a session for per-block attribution.")                        \
  XX(NO_FRAMES, "no_frames", 0,                                               \
     "No new frames, and this build offers no way to request one: idle and suspended rendering cannot be told apart.", \
     "Drive the app while measuring; the telescope watcher (or a debug build) lets telescope request a frame to tell them apart.") \
  XX(DTD_UNUSABLE, "dtd_unusable", 1,                                          \
     "The Dart Tooling Daemon at dtdUri could not be used to find the app.",  \
     "evidence.detail says why. Pass the URI `flutter run --print-dtd`, the IDE or `dart tooling-daemon` prints (ws://127.0.0.1:PORT/SECRET) as dtdUri; a VM-service URI goes in vmServiceUri.") \
  XX(NO_APP, "no_app", 1,                                                      \
     "The Dart Tooling Daemon lists no running app.",                         \
     "Start the app (from the IDE, or `flutter run` with this DTD), or check that the IDE that launched it uses this DTD; then call again.") \
  XX(APP_CHOICE, "app_choice", 1,                                              \
     "Several apps are running and the call named none (or one that is not known); telescope never guesses.", \
     "Call again with app set to one of them: its name in `apps` or `dtd.apps`, or its vmServiceUri as listed there (redacted as it is: the server knows the token), or the full URI `flutter run` or the IDE printed.")

typedef enum {
  DIAG_NONE = 0,
#define XX(name, wire, is_err, msg, hint) DIAG_##name,
  DIAG_MAP(XX)
#undef XX
  DIAG__COUNT
} diag_code_t;

const char *rpc_error_message(int code);   /* "Unknown error" for others */
const char *diag_name(diag_code_t code);   /* wire name, NULL for NONE */
const char *diag_message(diag_code_t code);
const char *diag_hint(diag_code_t code);
int diag_is_error(diag_code_t code);       /* isError for non-status actions */
diag_code_t diag_from_name(const char *name); /* DIAG_NONE if unknown */

#endif
