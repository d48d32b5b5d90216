/// telescope: frame performance of a Flutter app for AI coding agents.
///
/// Register in `main()`, in debug and profile builds only:
///
/// ```dart
/// if (!kReleaseMode) {
///   TelescopePlugin.install();
///   TelescopePlugin.registerWatcher(FramePerfWatcher());
/// }
/// ```
///
/// The pure core (`BlockAttribution`, `FrameJoiner`, `RecordRing`,
/// `WatcherCore`) is exported too, for tests and tools.
library telescope;

export 'src/binding/frame_perf_watcher.dart' show FramePerfWatcher;
export 'src/binding/telescope_plugin.dart' show TelescopePlugin;
export 'src/core/block_attribution.dart';
export 'src/core/drive_plan.dart';
export 'src/core/frame_joiner.dart';
export 'src/core/frame_perf_record.dart';
export 'src/core/interaction.dart';
export 'src/core/params.dart';
export 'src/core/record_ring.dart';
export 'src/core/watcher_core.dart';
