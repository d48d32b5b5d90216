// The whole watcher without Flutter: attribution, join, ring, interactions
// and the `ext.telescope.frames` handler. The binding feeds it; the shared
// vectors test it; `watcher/sim/model.c` is its C twin.

import 'block_attribution.dart';
import 'frame_joiner.dart';
import 'frame_perf_record.dart';
import 'interaction.dart';
import 'params.dart';
import 'record_ring.dart';

/// The version reported as `watcherVersion`.
const String telescopeWatcherVersion = '0.1.0';

/// The wire protocol version reported as `protocol`.
const int telescopeProtocol = 1;

/// Sizes and fixed reply values of a [WatcherCore].
class WatcherConfig {
  /// A configuration; the defaults are the ones the app uses.
  const WatcherConfig({
    this.ringCapacity = 4096,
    this.pendingCapacity = 256,
    this.readLimitCap = 500,
    this.watcherVersion = telescopeWatcherVersion,
  });

  /// Records kept.
  final int ringCapacity;

  /// Drained maps awaiting their FrameTiming.
  final int pendingCapacity;

  /// Most records in one read reply.
  final int readLimitCap;

  /// Reported as `watcherVersion`.
  final String watcherVersion;
}

/// FramePerfWatcher's state and rules, fed with plain data.
class WatcherCore {
  /// A core for run [runId].
  WatcherCore({this.config = const WatcherConfig(), required String runId})
      : _runId = runId,
        _joiner = FrameJoiner(capacity: config.pendingCapacity),
        _ring = RecordRing(capacity: config.ringCapacity);

  /// Sizes and fixed values.
  final WatcherConfig config;

  final FrameJoiner _joiner;
  final RecordRing _ring;
  String _runId;
  int _livenessCounter = 0;
  bool _collecting = false;
  Interaction? _interaction;
  bool _probe = false;

  /// The app's lifecycle as reported (`resumed`, …, or null); set by the
  /// binding before each reply.
  String? lifecycle = 'resumed';

  /// Whether the scheduler draws frames; set by the binding.
  bool framesEnabled = true;

  /// The display's refresh rate in Hz; set by the binding.
  double refreshRate = 60.0;

  /// Chosen at install; new on hot restart.
  String get runId => _runId;

  /// Frames drawn since install, collecting or not.
  int get livenessCounter => _livenessCounter;

  /// Whether attribution is on (FlutterTimeline collection).
  bool get collecting => _collecting;

  /// The interaction that tags frames drawn now.
  Interaction? get interaction => _interaction;

  /// Drained maps awaiting their FrameTiming.
  int get pending => _joiner.pending;

  /// Maps dropped before a timing claimed them.
  int get droppedAttributions => _joiner.droppedAttributions;

  /// Seq of the oldest record held (0 when empty).
  int get firstSeq => _ring.firstSeq;

  /// Seq of the newest record written (0 before any).
  int get lastSeq => _ring.lastSeq;

  /// The persistent frame callback of frame [frameNumber] at [nowUs], with
  /// the blocks drained since the previous frame ([events], finish order;
  /// ignored while not collecting, as FlutterTimeline records nothing then).
  void frameDrawn(int frameNumber, int nowUs, List<TimelineEvent> events) {
    _livenessCounter++;
    final Map<String, BlockStats> blocks = _collecting
        ? BlockAttribution.attribute(events)
        : <String, BlockStats>{};
    _joiner.park(PendingFrame(
      frameNumber: frameNumber,
      atUs: nowUs,
      blocks: blocks,
      interaction: _interaction,
    ));
  }

  /// The timings callback: one record per timing, the only writer of
  /// records. A timing without a parked map gets empty blocks, no
  /// interaction and its own buildFinish as `atUs`.
  void timings(List<FrameTimingSample> batch) {
    for (final FrameTimingSample timing in batch) {
      final PendingFrame? frame = _joiner.take(timing.frameNumber);
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
  }

  /// `ext.telescope.frames` with the VM's string [params] at [nowUs].
  ///
  /// Returns the reply; throws [WatcherParamError] for bad params, having
  /// changed nothing.
  Map<String, Object?> handle(Map<String, String> params, int nowUs) {
    final WatcherAction action = parseAction(params);
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
        _collecting = true;
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
    final Map<String, Object?> reply = _reply(nowUs);
    if (action == WatcherAction.read) {
      final RecordPage page = _ring.after(since, limit);
      reply['records'] = <Map<String, Object?>>[
        for (final FramePerfRecord record in page.records) record.toJson(),
      ];
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

  Map<String, Object?> _reply(int nowUs) => <String, Object?>{
        'protocol': telescopeProtocol,
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
      };
}
