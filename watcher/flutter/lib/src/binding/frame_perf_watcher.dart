// The thin layer between the scheduler and WatcherCore: it reads the
// frame number and the timeline in the frame, hands FrameTimings over, and
// serves ext.telescope.frames. Every rule lives in the core.
//
// The Flutter and dart:ui behaviour relied on here is listed, with its
// source file, in docs/flutter-apis.md.

import 'dart:async';
import 'dart:collection';
import 'dart:convert';
import 'dart:developer' as developer;
import 'dart:ui' show Display, FlutterView, FramePhase, FrameTiming, PlatformDispatcher;

import 'package:flutter/foundation.dart';
import 'package:flutter/gestures.dart';
import 'package:flutter/scheduler.dart';

import '../core/block_attribution.dart';
import '../core/drive_plan.dart';
import '../core/frame_perf_record.dart';
import '../core/interaction.dart';
import '../core/params.dart';
import '../core/watcher_core.dart';
import 'drive_player.dart';

/// Per-frame performance: frame magnitude from
/// `SchedulerBinding.addTimingsCallback` joined by frame number with the
/// blocks drained from `FlutterTimeline` in the same frame, served through
/// the VM service extension `ext.telescope.frames`.
///
/// Register it with `TelescopePlugin.registerWatcher(FramePerfWatcher())`.
class FramePerfWatcher {
  /// A watcher; [linkPointerInteractions] opens one interaction
  /// `pointer-<n>` (linkedBy `pointer`) per gesture while no other
  /// interaction is current (see [settleDelay] for when it ends).
  ///
  /// [frameNumberSource] replaces `PlatformDispatcher.frameData.frameNumber`
  /// for tests: flutter_test's engine-less frames all read the same number.
  FramePerfWatcher({
    this.linkPointerInteractions = false,
    this.settleDelay = const Duration(milliseconds: 300),
    this.config = const WatcherConfig(),
    @visibleForTesting this.frameNumberSource,
  });

  /// The VM service extension this watcher serves.
  static const String extensionName = 'ext.telescope.frames';

  /// Most times the settle period is extended while frames keep coming (an
  /// endless animation would otherwise keep an interaction open for ever):
  /// the first period plus 10 extensions, 11 × 300 ms = 3.3 s after the last
  /// pointer event by default.
  static const int maxSettleExtensions = 10;

  /// Whether pointer gestures open interactions.
  final bool linkPointerInteractions;

  /// A pointer interaction ends once no pointer is down and a whole
  /// [settleDelay] passed with no pointer event and no frame drawn (a fling
  /// keeps it open), or [maxSettleExtensions] of them passed since the last
  /// pointer event, frames or not.
  final Duration settleDelay;

  /// Ring and pending sizes.
  final WatcherConfig config;

  /// The frame number of the frame being drawn; null reads
  /// `PlatformDispatcher.frameData.frameNumber`.
  final int Function()? frameNumberSource;

  // Per isolate: an extension cannot be registered twice and a persistent
  // frame callback cannot be removed, so both are added once and dispatch
  // to the active watcher.
  static bool _extensionRegistered = false;
  static bool _frameCallbackAdded = false;
  static FramePerfWatcher? _active;

  WatcherCore? _core;
  DrivePlayer? _driver;
  // Pointers down, by id, PointerPanZoom sessions (trackpad) included.
  final Set<int> _pointersDown = <int>{};
  int _pointerSerial = 0;
  Interaction? _pointerInteraction;
  Timer? _settleTimer;
  int _framesSeen = 0;
  int _framesAtArm = 0;
  int _settleExtensions = 0;
  // Whether this watcher switched FlutterTimeline collection on, and what
  // it was before, so stop (or auto-off) puts back what someone else set.
  bool _collectionOurs = false;
  bool _collectionBefore = false;

  /// Runs of the framework's persistent frame callbacks since the watcher
  /// started, whether or not a session runs: the frames the framework drew,
  /// warm-up frames included (`scheduleWarmUpFrame` runs them without an
  /// engine vsync), counted whether or not the engine then shows them (a web
  /// scene dropped behind one still rasterizing counts too). Not a count of
  /// engine frames; the proof that the app is drawing.
  static int get livenessCounter => _active?._core?.livenessCounter ?? 0;

  /// The core this watcher feeds (null before [attach]).
  WatcherCore? get core => _core;

  /// Starts watching for run [runId]. Called by
  /// `TelescopePlugin.registerWatcher`; a second call does nothing.
  void attach(String runId) {
    if (_core != null) {
      return;
    }
    _core = WatcherCore(config: config, runId: runId)
      ..buildMode = kDebugMode ? 'debug' : (kProfileMode ? 'profile' : 'release')
      // Web frame numbers do not tell frames apart (-1 before flutter#171592,
      // a warm-up frame's stale number after it): join by time there.
      ..joinByTime = kIsWeb;
    _active = this;
    _driver = DrivePlayer(_core!,
        refreshRate: () => refreshRateOf(SchedulerBinding.instance.platformDispatcher));
    final SchedulerBinding scheduler = SchedulerBinding.instance;
    // Appends to the binding's list: other listeners keep their timings.
    // An app that assigns PlatformDispatcher.onReportTimings itself after
    // this replaces the binding's dispatcher: frames still count but no
    // timing comes, which the core reports as timingsMissing.
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

  // Runs inside the frame, after the framework's own drawFrame. That is
  // after the frame's buildFinish on current engines: native engines record
  // it in Animator::EndFrame, which RuntimeController::Render reaches
  // through OnAllViewsRendered once the last view rendered (engine PR
  // #51186, multi-view pipeline), inside the binding's drawFrame; the web
  // records it in renderScene. So this work is not in the buildUs it
  // measures (it was on older native engines, which ended the build after
  // onDrawFrame returned), but it still delays the next frame. It does only
  // what cannot wait: read the frame number and the clock, and cut the
  // frame's blocks out of FlutterTimeline's buffer. The blocks are parked as
  // debugCollect() returned them; converting and attributing them waits for
  // the timings callback, which the engine calls outside any frame. The
  // drained blocks need not fit in buildUs: FINALIZE TREE finishes after
  // buildFinish, POST_FRAME comes from the previous frame.
  // (docs/flutter-apis.md cites the engine sources.)
  void _onFrame() {
    final WatcherCore? core = _core;
    if (core == null) {
      return;
    }
    _framesSeen++;
    // Read inside the frame, during onDrawFrame: the engine updates frameData
    // after onBeginFrame and before onDrawFrame (hooks.dart _beginFrame), and
    // the FrameTiming of this frame carries the same number on native engines.
    // On the web the core ignores it and joins by time.
    final int frameNumber = frameNumberSource?.call() ??
        SchedulerBinding.instance.platformDispatcher.frameData.frameNumber;
    final int nowUs = FlutterTimeline.now;
    List<TimelineEvent> events = const <TimelineEvent>[];
    // Only while our session collects and no drain failed: a buffer someone
    // else (in-app code: a benchmark, a profiler) turned on is left to them.
    if (core.draining && _collectionOurs && !FlutterTimeline.debugCollectionEnabled) {
      // Someone switched our collection off mid-session: no blocks from
      // now on, and stop must not switch it back on for nobody.
      core.noteCollectionLost();
    }
    if (core.draining && _collectionOurs && FlutterTimeline.debugCollectionEnabled) {
      try {
        events = _TimedBlockEvents(FlutterTimeline.debugCollect().timedBlocks);
      } on Object catch (error) {
        // debugCollect asserts (debug builds) when someone left a block
        // open. Every later drain would assert again, so draining stops for
        // this run: the buffer is emptied, collection is put back below,
        // and status reports the error as drainError.
        FlutterTimeline.debugReset();
        core.drainFailed('$error');
        debugPrint('telescope: FlutterTimeline drain failed, attribution off until a hot '
            'restart: $error');
      }
    }
    core.frameDrawn(frameNumber, nowUs, events);
    // No timeline block is open here (see attach), so collection may be
    // switched: off after a drain failure or when no call came for a while.
    _syncCollection(core);
  }

  // Makes FlutterTimeline collection follow core.draining: on, remembering
  // the value it had; off, restoring that value if collection is still on
  // (someone who switched it off mid-session meant it off: restoring "on"
  // then would leave a buffer nobody drains growing for ever). Called only where no
  // timeline block of the framework is open (the extension handler and the
  // persistent frame callback): toggling inside an open block breaks the
  // buffer's static start stack.
  void _syncCollection(WatcherCore core) {
    final bool want = core.draining;
    if (want && !_collectionOurs) {
      _collectionBefore = FlutterTimeline.debugCollectionEnabled;
      FlutterTimeline.debugCollectionEnabled = true;
      _collectionOurs = true;
    } else if (!want && _collectionOurs) {
      final bool stillOn = FlutterTimeline.debugCollectionEnabled;
      if (!stillOn) {
        core.noteCollectionLost();
      }
      FlutterTimeline.debugCollectionEnabled = _collectionBefore && stillOn;
      _collectionOurs = false;
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
    core.refreshRate = refreshRateOf(scheduler.platformDispatcher);
    // Collection on that we did not switch is another tool's (in-app code:
    // a benchmark harness, a profiler): a start then takes its buffer over,
    // and says so.
    core.foreignCollection = !_collectionOurs && FlutterTimeline.debugCollectionEnabled;
    if (_collectionOurs && core.draining && !FlutterTimeline.debugCollectionEnabled) {
      core.noteCollectionLost(); // before the reply is built: a stop says so
    }
    final Map<String, Object?> reply;
    try {
      final String? action = params['action'];
      if (action == 'drive') {
        // Everything is checked before the drive starts: a bad call starts
        // nothing (-32602), a second drive is refused (-32000).
        parseProtocol(params, telescopeProtocol);
        final String? text = params['steps'];
        if (text == null) {
          throw const WatcherParamError('steps is required: the steps as JSON text');
        }
        final List<DriveStep> steps = parseDriveSteps(text);
        final int repeat = parseDriveRepeat(params);
        final DriveStatus? running = _driver!.running;
        if (running != null) {
          return developer.ServiceExtensionResponse.error(
            developer.ServiceExtensionResponse.extensionError,
            'a drive is running (${running.id})',
          );
        }
        _driver!.start(steps, repeat);
      } else if (action == 'stop') {
        // Before the reply is built, so the stop's reply reports it.
        _driver!.cancel('cancelled by stop');
      }
      reply = core.handle(params, FlutterTimeline.now);
    } on WatcherParamError catch (error) {
      return developer.ServiceExtensionResponse.error(
        developer.ServiceExtensionResponse.invalidParams,
        error.detail,
      );
    }
    // No FlutterTimeline block is open while an extension handler runs.
    _syncCollection(core);
    if (core.takeBufferReset()) {
      // The other tool's blocks since it switched collection on: dropped
      // unread (O(1)) now, so the first frame's drain is that frame's own.
      FlutterTimeline.debugReset();
    }
    if (core.takeProbe()) {
      scheduler.scheduleFrame();
    }
    return developer.ServiceExtensionResponse.result(jsonEncode(reply));
  }

  /// The refresh rate of the implicit view's display, else of the first
  /// display the platform reports, else 60 Hz.
  ///
  /// `FlutterView.display` asserts (debug) or fails a `!` (profile) when
  /// the embedder reports no display for the view (some custom embedders,
  /// flutter_test's fake views), which would turn every reply into an
  /// error; `PlatformDispatcher.displays` may then still list one.
  @visibleForTesting
  static double refreshRateOf(PlatformDispatcher dispatcher) {
    double rate = 0;
    final FlutterView? view = dispatcher.implicitView;
    if (view != null && dispatcher.displays.isNotEmpty) {
      try {
        rate = view.display.refreshRate;
      } on Object {
        rate = 0; // the view's display id is not among the displays
      }
    }
    if (!(rate > 0)) {
      for (final Display display in dispatcher.displays) {
        if (display.refreshRate > 0) {
          rate = display.refreshRate;
          break;
        }
      }
    }
    return rate > 0 ? rate : 60.0;
  }

  void _onPointerEvent(PointerEvent event) {
    final WatcherCore? core = _core;
    if (core == null) {
      return;
    }
    final bool starts = event is PointerDownEvent || event is PointerPanZoomStartEvent;
    final bool ends = event is PointerUpEvent ||
        event is PointerCancelEvent ||
        event is PointerPanZoomEndEvent;
    final bool tick = event is PointerSignalEvent; // wheel, trackpad inertia, scale
    if (!starts && !ends && !tick && !(event is PointerMoveEvent || event is PointerPanZoomUpdateEvent)) {
      return; // hover, add, remove: not a gesture
    }
    _settleExtensions = 0;
    if (starts || tick) {
      _openPointerInteraction(core);
    }
    if (starts) {
      _pointersDown.add(event.pointer);
      _settleTimer?.cancel();
      _settleTimer = null;
    } else if (ends) {
      _pointersDown.remove(event.pointer);
    }
    // One timer per pointer event that can end a gesture, never per frame.
    if (_pointerInteraction != null && _pointersDown.isEmpty && (ends || tick)) {
      _armSettle();
    }
  }

  // The first pointer of a gesture opens its interaction; later ones (a
  // second finger, the next wheel tick) join it. One the agent or the app
  // named wins over pointer links.
  void _openPointerInteraction(WatcherCore core) {
    final Interaction? current = core.interaction;
    if (_pointerInteraction != null && identical(current, _pointerInteraction)) {
      return;
    }
    if (current != null) {
      return;
    }
    _pointerSerial++;
    _pointerInteraction = Interaction('pointer-$_pointerSerial', 'pointer');
    core.setInteraction(_pointerInteraction);
  }

  void _armSettle() {
    _settleTimer?.cancel();
    _framesAtArm = _framesSeen;
    _settleTimer = Timer(settleDelay, _onSettle);
  }

  // Frames drawn during the last settleDelay (a fling, an ink splash)
  // extend the interaction by one more period, up to maxSettleExtensions
  // after the last pointer event.
  void _onSettle() {
    _settleTimer = null;
    if (_pointersDown.isNotEmpty || _pointerInteraction == null) {
      return;
    }
    if (_framesSeen != _framesAtArm && _settleExtensions < maxSettleExtensions) {
      _settleExtensions++;
      _armSettle();
      return;
    }
    final WatcherCore? core = _core;
    if (core != null && identical(core.interaction, _pointerInteraction)) {
      core.setInteraction(null);
    }
    _pointerInteraction = null;
  }
}

/// The blocks `FlutterTimeline.debugCollect()` returned, seen as
/// [TimelineEvent]s without a copy: the frame parks this view, and each
/// block is converted (start and end rounded to whole µs, which keeps
/// containment) only when the timings callback attributes it, outside the
/// frame.
class _TimedBlockEvents extends ListBase<TimelineEvent> {
  _TimedBlockEvents(this._blocks);

  final List<TimedBlock> _blocks;

  @override
  int get length => _blocks.length;

  @override
  set length(int newLength) => throw UnsupportedError('read-only');

  @override
  TimelineEvent operator [](int index) {
    final TimedBlock block = _blocks[index];
    final int start = block.start.round();
    return TimelineEvent(block.name, start, block.end.round() - start);
  }

  @override
  void operator []=(int index, TimelineEvent value) => throw UnsupportedError('read-only');
}
