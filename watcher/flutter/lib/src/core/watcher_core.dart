// The whole watcher without Flutter: attribution, join, ring, interactions
// and the `ext.telescope.frames` handler. The binding feeds it; the shared
// vectors test it; `watcher/sim/model.c` is its C twin.

import 'block_attribution.dart';
import 'drive_plan.dart';
import 'frame_joiner.dart';
import 'frame_perf_record.dart';
import 'interaction.dart';
import 'params.dart';
import 'record_ring.dart';

/// The version reported as `watcherVersion`.
const String telescopeWatcherVersion = '0.1.0';

/// The newest wire protocol this watcher speaks. A call with the param
/// `protocol` "2" gets the protocol-2 form (a block-name table per reply,
/// blocks as quadruples), "3" (or more) protocol 3 (records as arrays, an
/// interactions table too); every other call gets protocol 1.
const int telescopeProtocol = 3;

/// The build modes reported as `buildMode`.
const List<String> watcherBuildModes = <String>['debug', 'profile', 'release'];

/// Sizes and fixed reply values of a [WatcherCore].
class WatcherConfig {
  /// A configuration; the defaults are the ones the app uses.
  const WatcherConfig({
    this.ringCapacity = 4096,
    this.pendingCapacity = 256,
    this.readLimitCap = 500,
    this.watcherVersion = telescopeWatcherVersion,
    this.buildMode = 'profile',
    this.ringBytes = 4 << 20,
    this.readBytesCap = 256 << 10,
    this.autoOff = const Duration(seconds: 30),
    this.timingsMissingFrames = 120,
    this.timingsMissingAfter = const Duration(seconds: 2),
    this.pendingBlocks = 65536,
    this.joinByTime = false,
  });

  /// Records kept.
  final int ringCapacity;

  /// Drains awaiting their FrameTiming.
  final int pendingCapacity;

  /// Raw blocks the drains awaiting their FrameTiming may hold: they are
  /// attributed only when the timing comes, outside the frame.
  final int pendingBlocks;

  /// Join every drain by time, ignoring frame numbers (the web, where they
  /// are -1, a constant, or a warm-up frame's stale one). The binding sets
  /// [WatcherCore.joinByTime] from `kIsWeb` whatever this says.
  final bool joinByTime;

  /// Most records in one read reply.
  final int readLimitCap;

  /// Reported as `watcherVersion`.
  final String watcherVersion;

  /// Reported as `buildMode`: `debug`, `profile` or `release` (the binding
  /// passes what `kDebugMode`/`kProfileMode` say).
  final String buildMode;

  /// Estimated bytes the ring may hold ([FramePerfRecord.cost]).
  final int ringBytes;

  /// Estimated bytes in one read reply: a read encodes on the UI isolate,
  /// so a page is kept small enough not to cost a frame.
  final int readBytesCap;

  /// Collection switches itself off at the first frame this long after the
  /// last call: the server polls every 200 ms while a session runs, so a
  /// silence this long means it is gone (exited without `stop`).
  final Duration autoOff;

  /// `timingsMissing` needs at least this many frames drawn ...
  final int timingsMissingFrames;

  /// ... over at least this long with no FrameTiming arriving. The engine
  /// reports timings in batches about every 100 ms (debug/profile) to 1 s
  /// (release), so two seconds of frames without one means the callback
  /// was replaced.
  final Duration timingsMissingAfter;
}

/// FramePerfWatcher's state and rules, fed with plain data.
class WatcherCore {
  /// A core for run [runId].
  WatcherCore({this.config = const WatcherConfig(), required String runId})
      : _runId = runId,
        buildMode = config.buildMode,
        joinByTime = config.joinByTime,
        _joiner = FrameJoiner(capacity: config.pendingCapacity, blockCapacity: config.pendingBlocks),
        _ring = RecordRing(capacity: config.ringCapacity, byteBudget: config.ringBytes);

  /// Sizes and fixed values.
  final WatcherConfig config;

  final FrameJoiner _joiner;
  final RecordRing _ring;
  String _runId;
  int _livenessCounter = 0;
  bool _collecting = false;
  Interaction? _interaction;
  bool _probe = false;
  String? _drainError;
  bool _autoOff = false;
  int _lastCallUs = 0;
  int _untimed = 0;
  int _untimedFromUs = 0;
  int _lastFrameUs = 0;
  bool _takenOver = false;
  bool _resetBuffer = false;
  bool _collectionLost = false;

  /// The drive being played, or the one that ended and was not reported
  /// since (DRIVE.md §3): every reply carries it while it runs and exactly
  /// once more after it ended, then it is dropped. Set by the binding that
  /// plays it.
  DriveStatus? drive;

  /// The app's lifecycle as reported (`resumed`, …, or null); set by the
  /// binding before each reply.
  String? lifecycle = 'resumed';

  /// Whether the scheduler draws frames; set by the binding.
  bool framesEnabled = true;

  /// The display's refresh rate in Hz; set by the binding.
  double refreshRate = 60.0;

  /// Reported as `buildMode` (from [WatcherConfig.buildMode]; the binding
  /// sets what the build really is).
  String buildMode;

  /// Whether drains join their timings by time rather than by frame number
  /// (from [WatcherConfig.joinByTime]; the binding sets `kIsWeb`).
  bool joinByTime;

  /// Whether FlutterTimeline collection is on while this watcher did not
  /// switch it on: in-app code (a benchmark harness, a profiler) collects.
  /// Set by the binding before each call.
  bool foreignCollection = false;

  /// Chosen at install; new on hot restart.
  String get runId => _runId;

  /// Calls of [frameDrawn] (the framework's persistent frame callbacks, not
  /// engine frames) since install, collecting or not.
  int get livenessCounter => _livenessCounter;

  /// Whether attribution is on (FlutterTimeline collection).
  bool get collecting => _collecting;

  /// Whether the binding should drain FlutterTimeline in each frame (and
  /// keep its collection on): collecting, and no drain has failed.
  bool get draining => _collecting && _drainError == null;

  /// The first drain failure (null while draining works).
  String? get drainError => _drainError;

  /// Whether collection switched itself off because no call came.
  bool get collectionAutoOff => _autoOff;

  /// Whether the `start` that switched collection on found another tool's
  /// collection on and took its buffer over (until the next such start).
  bool get collectionTakenOver => _takenOver;

  /// True once after a `start` took another tool's collection over: the
  /// buffer holds that tool's blocks since it switched collection on, and
  /// the binding empties it (`FlutterTimeline.debugReset()`, O(1)) in the
  /// handler, so the first frame's drain holds that frame's blocks only.
  bool takeBufferReset() {
    final bool reset = _resetBuffer;
    _resetBuffer = false;
    return reset;
  }

  /// Whether someone else switched FlutterTimeline collection off while this
  /// session collected: the frames since then have no blocks, and `stop`
  /// left it off. Reported as `collectionLost` (only when true) until the
  /// next `start` that switches collection on.
  bool get collectionLost => _collectionLost;

  /// The binding saw collection off that it had switched on.
  void noteCollectionLost() {
    _collectionLost = true;
  }

  /// Whether frames are drawn but no FrameTiming arrives (the app assigned
  /// `PlatformDispatcher.onReportTimings` itself, dropping ours).
  bool get timingsMissing =>
      _untimed >= config.timingsMissingFrames &&
      _lastFrameUs - _untimedFromUs >= config.timingsMissingAfter.inMicroseconds;

  /// The summed cost of the records held ([FramePerfRecord.cost]).
  int get ringBytes => _ring.bytes;

  /// The interaction that tags frames drawn now.
  Interaction? get interaction => _interaction;

  /// Drained maps awaiting their FrameTiming.
  int get pending => _joiner.pending;

  /// Maps dropped before a timing claimed them.
  int get droppedAttributions => _joiner.droppedAttributions;

  /// Draining FlutterTimeline threw [error]: no frame gets blocks from now
  /// on (the binding stops draining and restores collection), and replies
  /// report the first error as `drainError`, cut to 256 characters.
  void drainFailed(String error) {
    if (_drainError != null) {
      return;
    }
    final String text = error.isEmpty ? 'drain failed' : error;
    final List<int> runes = text.runes.toList();
    _drainError = runes.length > 256 ? String.fromCharCodes(runes.take(256)) : text;
  }

  /// Seq of the oldest record held (0 when empty).
  int get firstSeq => _ring.firstSeq;

  /// Seq of the newest record written (0 before any).
  int get lastSeq => _ring.lastSeq;

  /// The persistent frame callback of frame [frameNumber] at [nowUs], with
  /// the blocks drained since the previous frame ([events], finish order;
  /// ignored while not collecting, as FlutterTimeline records nothing then).
  ///
  /// The frame only parks [events], unconverted and unattributed: the
  /// timings callback attributes them, outside the frame.
  ///
  /// First, collection switches itself off (as `stop`, with
  /// [collectionAutoOff] set) when no call came for [WatcherConfig.autoOff].
  void frameDrawn(int frameNumber, int nowUs, List<TimelineEvent> events) {
    _livenessCounter++;
    if (_untimed++ == 0) {
      _untimedFromUs = nowUs;
    }
    _lastFrameUs = nowUs;
    if (_collecting && nowUs - _lastCallUs >= config.autoOff.inMicroseconds) {
      _collecting = false;
      _autoOff = true;
      _interaction = null;
    }
    _joiner.park(PendingFrame(
      frameNumber: joinByTime || frameNumber < 0 ? -1 : frameNumber,
      atUs: nowUs,
      events: draining ? events : const <TimelineEvent>[],
      interaction: _interaction,
    ));
  }

  /// The timings callback: one record per timing, the only writer of
  /// records, and where the drained blocks are attributed. A timing without
  /// a drain gets empty blocks, no interaction and its own buildFinish as
  /// `atUs`.
  void timings(List<FrameTimingSample> batch) {
    if (batch.isNotEmpty) {
      _untimed = 0;
    }
    for (int i = 0; i < batch.length; i++) {
      final FrameTimingSample timing = batch[i];
      // Two timings of one vsync (a web warm-up frame) bound nothing.
      final int nextVsyncUs =
          i + 1 < batch.length && batch[i + 1].vsyncStartUs > timing.vsyncStartUs
              ? batch[i + 1].vsyncStartUs
              : -1;
      final PendingFrame? frame = _joiner.take(timing.frameNumber, timing.vsyncStartUs, nextVsyncUs,
          buildFinishUs: timing.buildFinishUs);
      _ring.add((int seq) => FramePerfRecord(
            seq: seq,
            atUs: frame?.atUs ?? timing.buildFinishUs,
            timing: timing,
            blocks: frame?.blocks ?? <String, BlockStats>{},
            interaction: frame?.interaction,
          ));
    }
    _joiner.prune();
  }

  /// Makes [interaction] current (null clears it).
  void setInteraction(Interaction? interaction) {
    _interaction = interaction;
  }

  /// True once after a probe asked for a frame.
  bool takeProbe() {
    final bool probe = _probe;
    _probe = false;
    return probe;
  }

  /// Hot restart: a new run with nothing carried over.
  void restart(String runId) {
    _runId = runId;
    _joiner.reset();
    _ring.reset();
    _livenessCounter = 0;
    _collecting = false;
    _interaction = null;
    _probe = false;
    _drainError = null;
    _autoOff = false;
    _lastCallUs = 0;
    _untimed = 0;
    _untimedFromUs = 0;
    _lastFrameUs = 0;
    foreignCollection = false;
    _takenOver = false;
    _resetBuffer = false;
    _collectionLost = false;
    drive = null;
  }

  /// `ext.telescope.frames` with the VM's string [params] at [nowUs].
  ///
  /// Returns the reply; throws [WatcherParamError] for bad params, having
  /// changed nothing.
  Map<String, Object?> handle(Map<String, String> params, int nowUs) {
    final WatcherAction action = parseAction(params);
    final int protocol = parseProtocol(params, telescopeProtocol);
    int since = 0;
    int limit = config.readLimitCap;
    if (action == WatcherAction.read) {
      since = parseDecimal(params, 'since', 0);
      limit = parseDecimal(params, 'limit', config.readLimitCap, max: readLimitMax);
      if (limit > config.readLimitCap) {
        limit = config.readLimitCap;
      }
    } else if (action == WatcherAction.start || action == WatcherAction.mark) {
      final Interaction? requested = _requestedInteraction(params);
      if (action == WatcherAction.start) {
        // Collection on that this watcher did not switch: another tool's
        // buffer, whose first drain would land in one frame; the binding
        // empties it now (takeBufferReset). A start while already
        // collecting changes nothing.
        if (!_collecting) {
          _takenOver = foreignCollection;
          _resetBuffer = foreignCollection;
          _collectionLost = false;
        }
        _collecting = true;
        _autoOff = false;
      }
      if (requested != null) {
        _interaction = requested;
      } else if (action == WatcherAction.mark) {
        _interaction = null;
      }
    } else if (action == WatcherAction.stop) {
      // The session is over: its interaction ends with it.
      _collecting = false;
      _interaction = null;
    } else if (action == WatcherAction.probe) {
      _probe = true;
    }
    _lastCallUs = nowUs;
    final Map<String, Object?> reply = _reply(nowUs, protocol);
    final DriveStatus? driving = drive;
    if (driving != null) {
      reply['drive'] = driving.toJson();
      if (driving.ended) {
        drive = null; // reported once after it ended
      }
    }
    if (action == WatcherAction.read) {
      final RecordPage page = _ring.after(since, limit, byteCap: config.readBytesCap);
      if (protocol >= 3) {
        final Map<String, int> names = <String, int>{};
        final Map<String, int> interactions = <String, int>{};
        final List<List<Object>> records = <List<Object>>[
          for (final FramePerfRecord record in page.records) record.toJsonV3(names, interactions),
        ];
        reply['blockNames'] = names.keys.toList();
        reply['interactions'] = <List<String>>[
          for (final String key in interactions.keys) key.split('\n'),
        ];
        reply['records'] = records;
      } else if (protocol >= 2) {
        final Map<String, int> names = <String, int>{};
        final List<Map<String, Object?>> records = <Map<String, Object?>>[
          for (final FramePerfRecord record in page.records) record.toJsonV2(names),
        ];
        // A map keeps insertion order, which is index order here.
        reply['blockNames'] = names.keys.toList();
        reply['records'] = records;
      } else {
        reply['records'] = <Map<String, Object?>>[
          for (final FramePerfRecord record in page.records) record.toJson(),
        ];
      }
      reply['more'] = page.more;
    }
    return reply;
  }

  /// The interaction `interactionId`/`linkedBy` name, validated; null when
  /// no `interactionId` was given (a lone `linkedBy` is ignored).
  Interaction? _requestedInteraction(Map<String, String> params) {
    final String? id = params['interactionId'];
    if (id == null) {
      return null;
    }
    final String? idError = checkInteractionText('interactionId', id, interactionIdMaxLength);
    if (idError != null) {
      throw WatcherParamError(idError);
    }
    final String linkedBy = params['linkedBy'] ?? 'agent';
    final String? linkError = checkInteractionText('linkedBy', linkedBy, linkedByMaxLength);
    if (linkError != null) {
      throw WatcherParamError(linkError);
    }
    return Interaction(id, linkedBy);
  }

  Map<String, Object?> _reply(int nowUs, int protocol) => <String, Object?>{
        'protocol': protocol,
        'watcherVersion': config.watcherVersion,
        'runId': _runId,
        'livenessCounter': _livenessCounter,
        'nowUs': nowUs,
        'collecting': _collecting,
        'lifecycle': lifecycle,
        'framesEnabled': framesEnabled,
        'refreshRate': refreshRate,
        'interaction': _interaction?.toJson(),
        'firstSeq': _ring.firstSeq,
        'lastSeq': _ring.lastSeq,
        'pending': _joiner.pending,
        'droppedAttributions': _joiner.droppedAttributions,
        'buildMode': buildMode,
        'drainError': _drainError,
        'timingsMissing': timingsMissing,
        'collectionAutoOff': _autoOff,
        'collectionTakenOver': _takenOver,
        // Only when true: older readers and the shared vectors' exact
        // replies know the reply without it.
        if (_collectionLost) 'collectionLost': true,
      };
}
