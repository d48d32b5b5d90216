// The join between drains and FrameTimings: by frame number on native
// engines, by time on the web.

import 'block_attribution.dart';
import 'interaction.dart';

/// One frame's drain waiting for its FrameTiming.
///
/// The frame only parks what `FlutterTimeline.debugCollect()` returned
/// ([events], unconverted); [blocks] attributes them on first use, which is
/// in the timings callback, outside any frame (issue 21: the watcher's own
/// work in the frame delays the next one, and on older engines lands in the
/// build time it measures).
class PendingFrame {
  /// The drain of frame [frameNumber] at [atUs].
  PendingFrame({
    required this.frameNumber,
    required this.atUs,
    required this.events,
    this.interaction,
  });

  /// `PlatformDispatcher.instance.frameData.frameNumber` read in the frame;
  /// -1 for a drain joined by time (the web, or no number yet).
  final int frameNumber;

  /// `FlutterTimeline.now` at the drain.
  final int atUs;

  /// The blocks the drain returned, in finish order (empty while
  /// attribution is off).
  final List<TimelineEvent> events;

  /// The interaction current when the frame was drawn.
  final Interaction? interaction;

  Map<String, BlockStats>? _blocks;

  /// The per-name aggregate of [events], computed once, when first asked.
  Map<String, BlockStats> get blocks => _blocks ??= BlockAttribution.attribute(events);
}

/// Parks drains until the FrameTiming of the same frame arrives (native
/// engines send timings in batches, at most 100 ms late in debug/profile;
/// the web engine at the first frame more than 100 ms after its last batch).
///
/// Rules (the same as `watcher/sim/model.c`, documented with the vectors in
/// `tests/vectors/watcher/README.md`):
/// * numbered drains (native): a number already parked is a warm-up frame
///   repeating a stale `frameData` number: the first stays, the repeat is
///   dropped; a number at or below the newest reported one can never match:
///   dropped; a timing takes the drain with its number;
/// * unnumbered drains (parked under -1: the web, where numbers are -1, a
///   constant or a warm-up's stale one) join by time: the drain runs inside
///   its frame, after the frame's vsyncStart and before the next frame's, on
///   the same clock. A timing first drops every unnumbered drain older than
///   its vsyncStart (its frame got no timing), then takes the oldest one left
///   if it drained before the next timing's vsyncStart plus
///   [clockToleranceUs] (a coarse `performance.now()`, 1 ms in Firefox, can
///   stamp a slow frame's drain with the next frame's vsync); a timing that
///   repeats the vsyncStart of the timing that last took a drain and whose
///   buildFinish is not after that drain is another view of the same frame
///   (a multi-view web app gets one timing per view) and takes none;
/// * parking evicts the oldest drains while the map is full by count
///   ([capacity]) or the raw blocks would exceed [blockCapacity] (the newest
///   is always kept);
/// * after a batch, numbered drains at or below the newest reported number
///   are pruned (frames that never got a FrameTiming).
///
/// Every drop is counted in [droppedAttributions].
class FrameJoiner {
  /// A joiner holding at most [capacity] drains and [blockCapacity] raw
  /// blocks.
  FrameJoiner({this.capacity = 256, this.blockCapacity = 65536}) : assert(capacity > 0);

  /// Most drains parked at once.
  final int capacity;

  /// Most raw blocks parked at once (with `trackWidgets` a frame holds
  /// hundreds, and without timings nothing would take them).
  final int blockCapacity;

  /// How far after the next timing's vsyncStart an unnumbered drain may be
  /// stamped and still belong to the timing before it: one tick of the
  /// coarsest `performance.now()` (Firefox: 1 ms). A drain runs after its
  /// frame's build, so the next frame's own drain comes at least that
  /// frame's build later than its vsync; a frame quicker to build than one
  /// tick is indistinguishable on such a clock anyway.
  static const int clockToleranceUs = 1000;

  final List<PendingFrame> _pending = <PendingFrame>[];
  int _blocks = 0;
  int _droppedAttributions = 0;
  int _maxReported = -1;
  // The vsyncStart of the last unnumbered timing that took a drain, and that
  // drain's atUs: the views of one multi-view web frame share them.
  int _takenVsyncUs = -1;
  int _takenAtUs = -1;

  /// Drains parked now.
  int get pending => _pending.length;

  /// Drains dropped before a timing could claim them.
  int get droppedAttributions => _droppedAttributions;

  /// Parks [frame] unless its number can never or must not match.
  void park(PendingFrame frame) {
    final int number = frame.frameNumber;
    if (number >= 0 && (number <= _maxReported || _indexOf(number) >= 0)) {
      _droppedAttributions++;
      return;
    }
    while (_pending.isNotEmpty &&
        (_pending.length >= capacity || _blocks + frame.events.length > blockCapacity)) {
      _removeAt(0);
      _droppedAttributions++;
    }
    _pending.add(frame);
    _blocks += frame.events.length;
  }

  /// The drain of the frame a timing numbered [frameNumber] with vsyncStart
  /// [vsyncStartUs] and buildFinish [buildFinishUs] reported, removed; null
  /// when none. [nextVsyncUs] is the vsyncStart of the next timing of the
  /// batch when it is later, else -1 (a web warm-up frame's timing repeats
  /// the previous vsyncStart, and so does each view's timing of a
  /// multi-view web frame).
  PendingFrame? take(int frameNumber, int vsyncStartUs, int nextVsyncUs,
      {required int buildFinishUs}) {
    for (int i = 0; i < _pending.length;) {
      if (_pending[i].frameNumber < 0 && _pending[i].atUs < vsyncStartUs) {
        _removeAt(i);
        _droppedAttributions++;
      } else {
        i++;
      }
    }
    if (frameNumber > _maxReported) {
      _maxReported = frameNumber;
    }
    if (frameNumber >= 0) {
      final int index = _indexOf(frameNumber);
      if (index >= 0) {
        return _removeAt(index);
      }
    }
    // Another view's timing of the frame whose drain the previous timing
    // took: the views render in one onDrawFrame, before its one drain. A
    // warm-up frame repeating the vsync builds after that drain.
    if (vsyncStartUs == _takenVsyncUs && buildFinishUs <= _takenAtUs) {
      return null;
    }
    for (int i = 0; i < _pending.length; i++) {
      if (_pending[i].frameNumber >= 0) {
        continue;
      }
      if (nextVsyncUs >= 0 && _pending[i].atUs >= nextVsyncUs + clockToleranceUs) {
        return null; // its own drain is missing; this one is the next frame's
      }
      final PendingFrame frame = _removeAt(i);
      _takenVsyncUs = vsyncStartUs;
      _takenAtUs = frame.atUs;
      return frame;
    }
    return null;
  }

  /// Drops every numbered drain at or below the newest reported frame
  /// number (none while no timing carried a number). Call after each batch.
  void prune() {
    if (_maxReported < 0) {
      return;
    }
    for (int i = 0; i < _pending.length;) {
      final int number = _pending[i].frameNumber;
      if (number >= 0 && number <= _maxReported) {
        _removeAt(i);
        _droppedAttributions++;
      } else {
        i++;
      }
    }
  }

  /// Forgets everything (hot restart).
  void reset() {
    _pending.clear();
    _blocks = 0;
    _droppedAttributions = 0;
    _maxReported = -1;
    _takenVsyncUs = -1;
    _takenAtUs = -1;
  }

  PendingFrame _removeAt(int index) {
    final PendingFrame frame = _pending.removeAt(index);
    _blocks -= frame.events.length;
    return frame;
  }

  int _indexOf(int frameNumber) {
    for (int i = 0; i < _pending.length; i++) {
      if (_pending[i].frameNumber == frameNumber) {
        return i;
      }
    }
    return -1;
  }
}
