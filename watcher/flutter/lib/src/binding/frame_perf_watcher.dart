// The thin layer between the scheduler and WatcherCore: it reads the
// frame number and the timeline in the frame, hands FrameTimings over, and
// serves ext.telescope.frames. Every rule lives in the core.

import 'dart:async';
import 'dart:convert';
import 'dart:developer' as developer;
import 'dart:ui' show FlutterView, FramePhase, FrameTiming;

import 'package:flutter/foundation.dart';
import 'package:flutter/gestures.dart';
import 'package:flutter/scheduler.dart';

import '../core/block_attribution.dart';
import '../core/frame_perf_record.dart';
import '../core/interaction.dart';
import '../core/params.dart';
import '../core/watcher_core.dart';

/// Per-frame performance: frame magnitude from
/// `SchedulerBinding.addTimingsCallback` joined by frame number with the
/// blocks drained from `FlutterTimeline` in the same frame, served through
/// the VM service extension `ext.telescope.frames`.
///
/// Register it with `TelescopePlugin.registerWatcher(FramePerfWatcher())`.
class FramePerfWatcher {
  /// A watcher; [linkPointerInteractions] opens an interaction `pointer-<n>`
  /// (linkedBy `pointer`) at each pointer down while no other interaction is
  /// current, closed once no frame was drawn for [settleDelay].
  FramePerfWatcher({
    this.linkPointerInteractions = false,
    this.settleDelay = const Duration(milliseconds: 300),
    this.config = const WatcherConfig(),
  });

  /// The VM service extension this watcher serves.
  static const String extensionName = 'ext.telescope.frames';

  /// Whether pointer downs open interactions.
  final bool linkPointerInteractions;

  /// How long without a frame closes a pointer interaction.
  final Duration settleDelay;

  /// Ring and pending sizes.
  final WatcherConfig config;

  // Per isolate: an extension cannot be registered twice and a persistent
  // frame callback cannot be removed, so both are added once and dispatch
  // to the active watcher.
  static bool _extensionRegistered = false;
  static bool _frameCallbackAdded = false;
  static FramePerfWatcher? _active;

  WatcherCore? _core;
  int _pointersDown = 0;
  int _pointerSerial = 0;
  Interaction? _pointerInteraction;
  Timer? _settleTimer;

  /// Frames drawn in this isolate since the watcher started, whether or not
  /// a session runs: the proof that the engine renders.
  static int get livenessCounter => _active?._core?.livenessCounter ?? 0;

  /// The core this watcher feeds (null before [attach]).
  WatcherCore? get core => _core;

  /// Starts watching for run [runId]. Called by
  /// `TelescopePlugin.registerWatcher`; a second call does nothing.
  void attach(String runId) {
    if (_core != null) {
      return;
    }
    _core = WatcherCore(config: config, runId: runId);
    _active = this;
    final SchedulerBinding scheduler = SchedulerBinding.instance;
    // Appends to the binding's list: other listeners keep their timings.
    scheduler.addTimingsCallback(_onTimings);
    if (!_frameCallbackAdded) {
      _frameCallbackAdded = true;
      // Registered after the binding's own drawFrame callback, so it runs
      // after FINALIZE TREE with no timeline block open. A post-frame
      // callback would run inside POST_FRAME, where debugCollect asserts.
      scheduler.addPersistentFrameCallback((Duration _) => _active?._onFrame());
    }
    if (!_extensionRegistered) {
      _extensionRegistered = true;
      developer.registerExtension(
        extensionName,
        (String method, Map<String, String> params) => _active!.handleExtension(params),
      );
    }
    if (linkPointerInteractions) {
      GestureBinding.instance.pointerRouter.addGlobalRoute(_onPointerEvent);
    }
  }

  /// Makes [interaction] current (null ends it).
  void setInteraction(Interaction? interaction) {
    _core?.setInteraction(interaction);
  }

  void _onFrame() {
    final WatcherCore? core = _core;
    if (core == null) {
      return;
    }
    // Read inside the frame: the engine set it in _beginFrame, and the
    // FrameTiming of this frame carries the same number.
    final int frameNumber = SchedulerBinding.instance.platformDispatcher.frameData.frameNumber;
    final int nowUs = FlutterTimeline.now;
    List<TimelineEvent> events = const <TimelineEvent>[];
    // Only our own session drains: a buffer someone else (DevTools) turned
    // on is left to them.
    if (core.collecting && FlutterTimeline.debugCollectionEnabled) {
      try {
        events = <TimelineEvent>[
          for (final TimedBlock block in FlutterTimeline.debugCollect().timedBlocks)
            TimelineEvent(
              block.name,
              block.start.round(),
              block.end.round() - block.start.round(),
            ),
        ];
      } on Object catch (error) {
        // debugCollect asserts when someone left a block open. This frame
        // loses its attribution, but it is still counted and recorded, and
        // the buffer is emptied so it cannot grow frame after frame.
        debugPrint('telescope: FlutterTimeline drain failed: $error');
        FlutterTimeline.debugReset();
      }
    }
    core.frameDrawn(frameNumber, nowUs, events);
    if (_pointerInteraction != null && _pointersDown == 0) {
      _armSettle();
    }
  }

  void _onTimings(List<FrameTiming> timings) {
    // The list is shared with every other listener: read it, never change it.
    _core?.timings(<FrameTimingSample>[
      for (final FrameTiming t in timings)
        FrameTimingSample(
          frameNumber: t.frameNumber,
          vsyncStartUs: t.timestampInMicroseconds(FramePhase.vsyncStart),
          buildStartUs: t.timestampInMicroseconds(FramePhase.buildStart),
          buildFinishUs: t.timestampInMicroseconds(FramePhase.buildFinish),
          rasterStartUs: t.timestampInMicroseconds(FramePhase.rasterStart),
          rasterFinishUs: t.timestampInMicroseconds(FramePhase.rasterFinish),
          layerCacheCount: t.layerCacheCount,
          pictureCacheCount: t.pictureCacheCount,
        ),
    ]);
  }

  /// The `ext.telescope.frames` handler (public so tests can call it; the
  /// VM calls it through `registerExtension`).
  Future<developer.ServiceExtensionResponse> handleExtension(Map<String, String> params) async {
    // The VM runs extension handlers out of band, possibly inside a
    // microtask loop; step out first, as BindingBase's extensions do.
    await Future<void>.delayed(Duration.zero);
    final WatcherCore core = _core!;
    final SchedulerBinding scheduler = SchedulerBinding.instance;
    core.lifecycle = scheduler.lifecycleState?.name;
    core.framesEnabled = scheduler.framesEnabled;
    core.refreshRate = _refreshRate(scheduler);
    final Map<String, Object?> reply;
    try {
      reply = core.handle(params, FlutterTimeline.now);
    } on WatcherParamError catch (error) {
      return developer.ServiceExtensionResponse.error(
        developer.ServiceExtensionResponse.invalidParams,
        error.detail,
      );
    }
    final String? action = params['action'];
    if (action == 'start' || action == 'stop') {
      // Only here: no FlutterTimeline block is open while an extension
      // handler runs, and toggling inside an open block breaks its stack.
      FlutterTimeline.debugCollectionEnabled = core.collecting;
    }
    if (core.takeProbe()) {
      scheduler.scheduleFrame();
    }
    return developer.ServiceExtensionResponse.result(jsonEncode(reply));
  }

  static double _refreshRate(SchedulerBinding scheduler) {
    final FlutterView? view = scheduler.platformDispatcher.implicitView;
    final double rate = view?.display.refreshRate ?? 0;
    return rate > 0 ? rate : 60.0;
  }

  void _onPointerEvent(PointerEvent event) {
    final WatcherCore? core = _core;
    if (core == null) {
      return;
    }
    if (event is PointerDownEvent || event is PointerSignalEvent) {
      if (event is PointerDownEvent) {
        _pointersDown++;
      }
      _settleTimer?.cancel();
      final Interaction? current = core.interaction;
      // An interaction the agent or the app named wins over pointer links.
      if (current == null || identical(current, _pointerInteraction)) {
        _pointerSerial++;
        _pointerInteraction = Interaction('pointer-$_pointerSerial', 'pointer');
        core.setInteraction(_pointerInteraction);
      }
      if (_pointersDown == 0) {
        _armSettle();
      }
    } else if (event is PointerUpEvent || event is PointerCancelEvent) {
      if (_pointersDown > 0) {
        _pointersDown--;
      }
      if (_pointersDown == 0) {
        _armSettle();
      }
    }
  }

  // (Re)starts the countdown that closes the pointer interaction once
  // frames have settled: every drawn frame pushes it back.
  void _armSettle() {
    if (_pointerInteraction == null) {
      return;
    }
    _settleTimer?.cancel();
    _settleTimer = Timer(settleDelay, () {
      final WatcherCore? core = _core;
      if (core != null && identical(core.interaction, _pointerInteraction)) {
        core.setInteraction(null);
      }
      _pointerInteraction = null;
    });
  }
}
