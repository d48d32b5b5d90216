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

/// Keeps the newest records, at most [capacity] of them and at most
/// [byteBudget] by their summed [FramePerfRecord.cost]; `seq` grows by one
/// per record from 1 and never repeats within a run.
///
/// The byte bound is what keeps the app's memory in check: with
/// `trackWidgets` a record holds hundreds of blocks, and 4 096 of them would
/// be tens of MB on the UI isolate's heap.
class RecordRing {
  /// A ring of [capacity] records and [byteBudget] estimated bytes.
  RecordRing({this.capacity = 4096, this.byteBudget = 4 << 20}) : assert(capacity > 0);

  /// Most records held.
  final int capacity;

  /// Most estimated bytes held (the newest record is kept even when it
  /// alone is larger).
  final int byteBudget;

  int _bytes = 0;

  /// The summed cost of the records held.
  int get bytes => _bytes;

  final List<FramePerfRecord?> _slots = <FramePerfRecord?>[];
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

  /// Appends the record [build] makes for seq [nextSeq]; the oldest records
  /// go while the ring is full by count or the new one would take it over
  /// [byteBudget].
  void add(FramePerfRecord Function(int seq) build) {
    final FramePerfRecord record = build(_nextSeq);
    _nextSeq++;
    final int cost = record.cost;
    while (_length > 0 && (_length == capacity || _bytes + cost > byteBudget)) {
      _bytes -= _slots[_head]!.cost;
      _slots[_head] = null;
      _head = (_head + 1) % capacity;
      _length--;
    }
    if (_slots.length < capacity) {
      // Slots grow to capacity once, then are reused in place.
      _slots.add(null);
    }
    _slots[(_head + _length) % capacity] = record;
    _length++;
    _bytes += cost;
  }

  /// Records with seq > [since], oldest first, at most [limit] and no more
  /// than [byteCap] by summed cost (the first one always, when any).
  RecordPage after(int since, int limit, {int? byteCap}) {
    final int first = firstSeq;
    int skip = 0;
    if (first > 0 && since >= first) {
      skip = since - first + 1;
    }
    final int available = skip < _length ? _length - skip : 0;
    final List<FramePerfRecord> records = <FramePerfRecord>[];
    int bytes = 0;
    while (records.length < available && records.length < limit) {
      final FramePerfRecord record = _slots[(_head + skip + records.length) % capacity]!;
      if (byteCap != null && records.isNotEmpty && bytes + record.cost > byteCap) {
        break;
      }
      bytes += record.cost;
      records.add(record);
    }
    return RecordPage(records, records.length < available);
  }

  /// Forgets every record and starts seq at 1 again (hot restart).
  void reset() {
    _slots.clear();
    _head = 0;
    _length = 0;
    _bytes = 0;
    _nextSeq = 1;
  }
}
