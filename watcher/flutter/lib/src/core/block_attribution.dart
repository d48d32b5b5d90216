// Self-time attribution of the blocks `FlutterTimeline.debugCollect()`
// returns. Pure Dart: no Flutter import, so it is tested alone.

/// One finished timeline block, in whole microseconds.
///
/// The binding converts each `TimedBlock` (fractional µs on the web) by
/// rounding its start and end, which keeps containment between blocks.
class TimelineEvent {
  /// A block named [name] that started at [startUs] and lasted [durUs].
  const TimelineEvent(this.name, this.startUs, this.durUs);

  /// The block name, e.g. `BUILD`, `LAYOUT (root)` or a widget type.
  final String name;

  /// Start timestamp in µs on the timeline clock.
  final int startUs;

  /// Duration in µs; a negative value is read as 0.
  final int durUs;

  /// End timestamp in µs.
  int get endUs => startUs + (durUs > 0 ? durUs : 0);
}

/// The aggregate of every block of one name within one frame.
class BlockStats {
  /// Stats with the given totals.
  BlockStats({this.micros = 0, this.selfMicros = 0, this.count = 0});

  /// Inclusive time: the sum of the durations of every block of this name,
  /// nested same-name blocks included (as DevTools counts them).
  int micros;

  /// Exclusive time: [micros] minus the time of directly nested children.
  int selfMicros;

  /// How many blocks of this name finished in the frame.
  int count;

  /// The record form: `{"micros", "selfMicros", "count"}`.
  Map<String, Object?> toJson() => <String, Object?>{
        'micros': micros,
        'selfMicros': selfMicros,
        'count': count,
      };
}

/// Rebuilds the nesting of a frame's blocks and sums inclusive and self
/// time per block name.
///
/// Blocks arrive in finish order (children before their parents), so every
/// direct child of a block finished before it and sits on top of a stack of
/// finished subtrees. A stack entry is a child when it lies within the block
/// (start ≥ block start and end ≤ block end); ties count as nesting, so of
/// two identical intervals the later-finishing one is the parent. This is
/// the same algorithm as `blocks_attribute` in `watcher/sim/model.c`.
class BlockAttribution {
  const BlockAttribution._();

  /// The per-name aggregate of [events] (finish order), in first-finished
  /// order of names.
  static Map<String, BlockStats> attribute(List<TimelineEvent> events) {
    final Map<String, BlockStats> blocks = <String, BlockStats>{};
    final List<TimelineEvent> stack = <TimelineEvent>[];
    for (final TimelineEvent event in events) {
      final int duration = event.durUs > 0 ? event.durUs : 0;
      int children = 0;
      while (stack.isNotEmpty &&
          stack.last.startUs >= event.startUs &&
          stack.last.endUs <= event.endUs) {
        final TimelineEvent child = stack.removeLast();
        children += child.endUs - child.startUs;
      }
      final int self = duration - children > 0 ? duration - children : 0;
      final BlockStats stats = blocks.putIfAbsent(event.name, BlockStats.new);
      stats.micros += duration;
      stats.selfMicros += self;
      stats.count += 1;
      stack.add(event);
    }
    return blocks;
  }
}
