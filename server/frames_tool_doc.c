#include "frames_tool_doc.h"

/* The Dart MCP server (dart-lang/ai, pkgs/dart_mcp_server) offers
 * flutter_driver tools to tap and scroll but no performance tool; telescope
 * measures but does not drive: the two compose. */
const char frames_tool_description[] =
    "Frame performance of a running Flutter app. Actions: status (always safe); start; mark (tag the following frames with interactionId); read (the next "
    "frames); stop (summary with findings: the causes of jank, ranked); capture (start, "
    "blocks for durationMs, stop); compare (two stopped sessions). "
    "telescope does not drive the app: between start and stop ask the user to use it, or drive "
    "it with the Dart MCP server's flutter_driver tools. Blocks name widgets only with "
    "trackWidgets: true. Profile builds (flutter run --profile) give real timings. budgetMs is "
    "fixed at start. On isError or no frames, follow diagnosis.hint.";

const char frames_tool_instructions[] =
    "telescope measures a running Flutter app's frame performance with the tool "
    "telescope_frames. Call action=status first (pass vmServiceUri, the URI `flutter run` "
    "prints, or dtdUri, the Dart Tooling Daemon's, if it is not connected). Then action=start with trackWidgets: true (without it "
    "blocks do not name widgets), make the app draw the frames to measure, and call "
    "action=stop: it answers with the jank verdict and findings, the ranked causes. telescope "
    "does not drive the app: ask the user to use it, or drive it with the Dart MCP server's "
    "flutter_driver tools; they compose. action=capture with durationMs does start, wait and "
    "stop in one call and blocks for durationMs. A session's budgetMs is fixed at start. Debug "
    "builds inflate timings: measure a profile build (flutter run --profile) for real ones. "
    "When frames are empty or a call fails, read diagnosis and do what its hint says.";
