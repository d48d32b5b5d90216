#include "frames_tool_doc.h"

/* The Dart MCP server (dart-lang/ai, pkgs/dart_mcp_server) offers
 * flutter_driver tools to tap and scroll but no performance tool; telescope
 * measures, and plays a workload itself (issue 32) through its watcher or
 * the app's own ext.flutter.driver: the two still compose. */
const char frames_tool_description[] =
    "Frame performance of a running Flutter app. Actions: status (always safe); start; mark; read; stop "
    "(summary, findings: jank's causes ranked); capture (start, "
    "blocks for durationMs, stop); compare (two stopped sessions). "
    "A workload plays steps in the app (watcher or flutter_driver), or ask the user. "
    "Blocks name widgets only with "
    "trackWidgets: true. Profile builds (flutter run --profile) give real timings. budgetMs is "
    "fixed at start. On isError or no frames, follow diagnosis.hint.";

const char frames_tool_instructions[] =
    "telescope measures a running Flutter app's frame performance with the tool "
    "telescope_frames. Call action=status first (pass vmServiceUri, the URI `flutter run` "
    "prints, or dtdUri, the Dart Tooling Daemon's, if it is not connected). Then action=start with trackWidgets: true (without it "
    "blocks do not name widgets), make the app draw the frames to measure, and call "
    "action=stop: it answers with the jank verdict and findings, the ranked causes. telescope "
    "plays a workload for you: pass workload {steps: [scroll, fling, tap, wait, back], repeat} "
    "to start or capture (with the watcher, or an app that called enableFlutterDriverExtension() "
    "for flutter_driver), so before and after an edit run the same motion; else ask the user "
    "to use the app. action=capture with durationMs does start, wait and "
    "stop in one call and blocks for durationMs. A session's budgetMs is fixed at start. Debug "
    "builds inflate timings: measure a profile build (flutter run --profile) for real ones. "
    "When frames are empty or a call fails, read diagnosis and do what its hint says.";
