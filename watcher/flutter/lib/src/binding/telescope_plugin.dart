// The entry point an app calls in main(): install once, register the
// watcher once, optionally name interactions.

import 'dart:math' as math;

import 'package:flutter/foundation.dart';
import 'package:flutter/widgets.dart';

import '../core/interaction.dart';
import 'frame_perf_watcher.dart';

/// Installs telescope in the running isolate.
///
/// ```dart
/// if (!kReleaseMode) {
///   TelescopePlugin.install();
///   TelescopePlugin.registerWatcher(FramePerfWatcher());
/// }
/// ```
///
/// Both calls are idempotent per isolate: a VM service extension cannot be
/// registered twice, so a second call does nothing. A hot restart runs
/// `main()` again with fresh statics, so it installs again with a new run id:
/// in a new isolate on native platforms; on the web in the same page, where
/// DWDS replaces the isolate it shows the VM service. In release
/// builds both calls do nothing (FlutterTimeline collection and the VM
/// service are not available there).
class TelescopePlugin {
  TelescopePlugin._();

  static String? _runId;
  static FramePerfWatcher? _watcher;

  /// Whether [install] ran in this isolate.
  static bool get isInstalled => _runId != null;

  /// The run id chosen at [install]; the server uses it to notice restarts.
  static String? get runId => _runId;

  /// The registered watcher, if any.
  static FramePerfWatcher? get watcher => _watcher;

  /// Makes sure the Flutter binding exists and chooses this run's id.
  static void install() {
    if (kReleaseMode || _runId != null) {
      return;
    }
    WidgetsFlutterBinding.ensureInitialized();
    final int micros = DateTime.now().microsecondsSinceEpoch;
    final int salt = math.Random().nextInt(0x7fffffff);
    _runId = '${micros.toRadixString(36)}-${salt.toRadixString(36)}';
  }

  /// Starts [watcher]: timings callback, frame callback and the extension
  /// `ext.telescope.frames`. Installs first if needed. Only the first
  /// watcher registered in an isolate is used; later calls do nothing.
  static void registerWatcher(FramePerfWatcher watcher) {
    if (kReleaseMode) {
      return;
    }
    install();
    if (_watcher != null) {
      return;
    }
    _watcher = watcher;
    watcher.attach(_runId!);
  }

  /// Tags the frames drawn from now on with interaction [interactionId]
  /// (1–128 printable characters), identified by [linkedBy] (1–64).
  ///
  /// Throws [ArgumentError] for an id or linkedBy out of those bounds. Does
  /// nothing before [registerWatcher].
  static void beginInteraction(String interactionId, {String linkedBy = 'app'}) {
    final String? idError =
        checkInteractionText('interactionId', interactionId, interactionIdMaxLength);
    if (idError != null) {
      throw ArgumentError.value(interactionId, 'interactionId', idError);
    }
    final String? linkError = checkInteractionText('linkedBy', linkedBy, linkedByMaxLength);
    if (linkError != null) {
      throw ArgumentError.value(linkedBy, 'linkedBy', linkError);
    }
    _watcher?.setInteraction(Interaction(interactionId, linkedBy));
  }

  /// Ends the current interaction: frames drawn from now on carry none.
  static void endInteraction() {
    _watcher?.setInteraction(null);
  }
}
