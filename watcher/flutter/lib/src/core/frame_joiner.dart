// The frame-number join between drains and FrameTimings.

import 'block_attribution.dart';
import 'interaction.dart';

/// A drained block map waiting for its FrameTiming.
class PendingFrame {
  /// The drain of frame [frameNumber] at [atUs].
  const PendingFrame({
    required this.frameNumber,
    required this.atUs,
    required this.blocks,
    this.interaction,
  });

  /// `PlatformDispatcher.instance.frameData.frameNumber` read in the frame.
  final int frameNumber;

  /// `FlutterTimeline.now` at the drain.
  final int atUs;

  /// What the drain attributed (empty while attribution is off).
  final Map<String, BlockStats> blocks;

  /// The interaction current when the frame was drawn.
  final Interaction? interaction;
}

/// Parks drained maps by frame number until the FrameTiming of the same
/// frame arrives (timings come in batches, ~100 ms late in debug/profile).
///
/// Rules (the same as `watcher/sim/model.c`, documented with the vectors in
/// `tests/vectors/watcher/README.md`):
/// * a number already parked is a warm-up frame repeating a stale
///   `frameData` number: the first map stays, the repeat is dropped;
/// * a number at or below the newest reported one can never match: dropped;
/// * a full map evicts its oldest entry;
/// * a timing numbered -1 takes the oldest entry (FIFO);
/// * a numbered timing takes the entry with its number, else the oldest
///   entry parked under -1: Flutter web before flutter#171592 (mid 2025)
///   reads `frameData.frameNumber` as -1 in every frame while web
///   `FrameTiming.frameNumber` defaults to 1, so the two never meet;
/// * after a batch, numbered entries at or below the newest reported number
///   are pruned (a frame that never got a FrameTiming); entries parked
///   under -1 are never pruned by number (the capacity bounds them).
///
/// Every drop is counted in [droppedAttributions].
class FrameJoiner {
  /// A joiner holding at most [capacity] pending maps.
  FrameJoiner({this.capacity = 256}) : assert(capacity > 0);

  /// Most maps parked at once.
  final int capacity;

  final List<PendingFrame> _pending = <PendingFrame>[];
  int _droppedAttributions = 0;
  int _maxReported = -1;

  /// Maps parked now.
  int get pending => _pending.length;

  /// Maps dropped before a timing could claim them.
  int get droppedAttributions => _droppedAttributions;

  /// Parks [frame] unless its number can never or must not match.
  void park(PendingFrame frame) {
    final int number = frame.frameNumber;
    if (number >= 0 && (number <= _maxReported || _indexOf(number) >= 0)) {
      _droppedAttributions++;
      return;
    }
    if (_pending.length >= capacity) {
      _pending.removeAt(0);
      _droppedAttributions++;
    }
    _pending.add(frame);
  }

  /// The parked map of the frame [frameNumber] reported, removed; null when
  /// none was parked.
  PendingFrame? take(int frameNumber) {
    int index;
    if (frameNumber < 0) {
      index = _pending.isEmpty ? -1 : 0;
    } else {
      index = _indexOf(frameNumber);
      if (index < 0) {
        index = _indexOf(-1);
      }
    }
    if (frameNumber > _maxReported) {
      _maxReported = frameNumber;
    }
    return index < 0 ? null : _pending.removeAt(index);
  }

  /// Drops every entry at or below the newest reported frame number (none
  /// while no timing carried a number). Call after each batch.
  void prune() {
    if (_maxReported < 0) {
      return;
    }
    final int before = _pending.length;
    _pending.removeWhere(
        (PendingFrame p) => p.frameNumber >= 0 && p.frameNumber <= _maxReported);
    _droppedAttributions += before - _pending.length;
  }

  /// Forgets everything (hot restart).
  void reset() {
    _pending.clear();
    _droppedAttributions = 0;
    _maxReported = -1;
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
