// The bounded ring of FramePerfRecords.

import 'frame_perf_record.dart';

/// One page of a read: records after a cursor and whether more follow.
class RecordPage {
  /// [records], oldest first; [more] when held records follow the last one.
  const RecordPage(this.records, this.more);

  /// The records of this page, oldest first.
  final List<FramePerfRecord> records;

  /// Whether records newer than the last in [records] are held.
  final bool more;
}

/// Keeps the newest [capacity] records; `seq` grows by one per record from
/// 1 and never repeats within a run.
class RecordRing {
  /// A ring of [capacity] records.
  RecordRing({this.capacity = 4096}) : assert(capacity > 0);

  /// Most records held.
  final int capacity;

  final List<FramePerfRecord> _slots = <FramePerfRecord>[];
  int _head = 0;
  int _length = 0;
  int _nextSeq = 1;

  /// The seq the next record gets.
  int get nextSeq => _nextSeq;

  /// Seq of the newest record written (0 before any).
  int get lastSeq => _nextSeq - 1;

  /// Seq of the oldest record held (0 when empty).
  int get firstSeq => _length == 0 ? 0 : _nextSeq - _length;

  /// Records held.
  int get length => _length;

  /// Appends the record [build] makes for seq [nextSeq]; a full ring drops
  /// its oldest record.
  void add(FramePerfRecord Function(int seq) build) {
    final FramePerfRecord record = build(_nextSeq);
    _nextSeq++;
    if (_slots.length < capacity) {
      _slots.add(record);
      _length++;
      return;
    }
    // Full (slots only grow until reset): overwrite the oldest.
    _slots[_head] = record;
    _head = (_head + 1) % capacity;
  }

  /// Records with seq > [since], oldest first, at most [limit].
  RecordPage after(int since, int limit) {
    final int first = firstSeq;
    int skip = 0;
    if (first > 0 && since >= first) {
      skip = since - first + 1;
    }
    final int available = skip < _length ? _length - skip : 0;
    final int take = available < limit ? available : limit;
    final List<FramePerfRecord> records = <FramePerfRecord>[
      for (int i = 0; i < take; i++) _slots[(_head + skip + i) % capacity],
    ];
    return RecordPage(records, take < available);
  }

  /// Forgets every record and starts seq at 1 again (hot restart).
  void reset() {
    _slots.clear();
    _head = 0;
    _length = 0;
    _nextSeq = 1;
  }
}
