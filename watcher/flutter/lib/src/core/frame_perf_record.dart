// FramePerfRecord (DESIGN §6, `schema/frame_perf_record.json`) and the
// engine-independent form of a FrameTiming it is built from.

import 'block_attribution.dart';
import 'interaction.dart';

/// One FrameTiming as plain numbers (µs on the engine clock), so the core
/// needs no `dart:ui`. The binding copies `FrameTiming` into it.
class FrameTimingSample {
  /// A sample with every phase timestamp.
  const FrameTimingSample({
    required this.frameNumber,
    required this.vsyncStartUs,
    required this.buildStartUs,
    required this.buildFinishUs,
    required this.rasterStartUs,
    required this.rasterFinishUs,
    this.layerCacheCount = 0,
    this.pictureCacheCount = 0,
  });

  /// `FrameTiming.frameNumber`; -1 when the engine reports none.
  final int frameNumber;

  /// `FramePhase.vsyncStart`.
  final int vsyncStartUs;

  /// `FramePhase.buildStart`.
  final int buildStartUs;

  /// `FramePhase.buildFinish`.
  final int buildFinishUs;

  /// `FramePhase.rasterStart`.
  final int rasterStartUs;

  /// `FramePhase.rasterFinish`.
  final int rasterFinishUs;

  /// `FrameTiming.layerCacheCount`.
  final int layerCacheCount;

  /// `FrameTiming.pictureCacheCount`.
  final int pictureCacheCount;
}

int _nonNegative(int value) => value > 0 ? value : 0;

/// One frame as the watcher reports it: magnitude from its FrameTiming,
/// attribution from the drain of the same frame.
class FramePerfRecord {
  /// The record of [timing] with sequence number [seq], the drained
  /// [blocks] and the [interaction] current when the frame was drawn, at
  /// [atUs] (`FlutterTimeline.now` at the drain).
  FramePerfRecord({
    required this.seq,
    required this.atUs,
    required this.timing,
    required this.blocks,
    this.interaction,
  });

  /// Monotonically increasing from 1 within a run.
  final int seq;

  /// `FlutterTimeline.now` when the frame was drained; for a frame with no
  /// drain, the timing's buildFinish.
  final int atUs;

  /// The engine's numbers for this frame.
  final FrameTimingSample timing;

  /// Per-name block aggregate; empty while attribution is off.
  final Map<String, BlockStats> blocks;

  /// The interaction current when the frame was drawn, if any.
  final Interaction? interaction;

  /// The estimated size of the record's protocol-1 encoding, the unit of
  /// the ring's and a read's byte bounds: 160 + per block (40 + name
  /// length) + with an interaction (32 + id length + linkedBy length),
  /// lengths in UTF-16 code units (the same formula as `wm_record_cost` in
  /// `watcher/sim/model.c`). Computed once: a record never changes.
  late final int cost = _cost();

  int _cost() {
    int cost = 160;
    for (final String name in blocks.keys) {
      cost += 40 + name.length;
    }
    final Interaction? current = interaction;
    if (current != null) {
      cost += 32 + current.interactionId.length + current.linkedBy.length;
    }
    return cost;
  }

  /// The protocol-2 wire form: [toJson] with `blocks` as a flat list of
  /// `[nameIndex, micros, selfMicros, count]` quadruples, the index into the
  /// reply's block-name table, which [names] collects (name → index, in
  /// first-use order).
  Map<String, Object?> toJsonV2(Map<String, int> names) => _fields(_flatBlocks(names));

  List<int> _flatBlocks(Map<String, int> names) {
    final List<int> flat = <int>[];
    for (final MapEntry<String, BlockStats> e in blocks.entries) {
      final int index = names.putIfAbsent(e.key, () => names.length);
      flat
        ..add(index)
        ..add(e.value.micros)
        ..add(e.value.selfMicros)
        ..add(e.value.count);
    }
    return flat;
  }

  /// The protocol-3 wire form: an array of `[seq, frameNumber, atUs,
  /// vsyncStartUs, buildUs, rasterUs, vsyncOverheadUs, totalSpanUs,
  /// layerCacheCount, pictureCacheCount, blocks]` (blocks as in [toJsonV2]),
  /// and with an interaction a 12th element: its index into the reply's
  /// interactions table, which [interactions] collects (`id\nlinkedBy` →
  /// index, first use first; neither may hold a control character).
  List<Object> toJsonV3(Map<String, int> names, Map<String, int> interactions) {
    final List<Object> json = <Object>[
      seq,
      timing.frameNumber,
      atUs,
      timing.vsyncStartUs,
      _nonNegative(timing.buildFinishUs - timing.buildStartUs),
      _nonNegative(timing.rasterFinishUs - timing.rasterStartUs),
      _nonNegative(timing.buildStartUs - timing.vsyncStartUs),
      _nonNegative(timing.rasterFinishUs - timing.vsyncStartUs),
      _nonNegative(timing.layerCacheCount),
      _nonNegative(timing.pictureCacheCount),
      _flatBlocks(names),
    ];
    final Interaction? current = interaction;
    if (current != null) {
      final String key = '${current.interactionId}\n${current.linkedBy}';
      json.add(interactions.putIfAbsent(key, () => interactions.length));
    }
    return json;
  }

  /// The wire form, every field of the schema.
  Map<String, Object?> toJson() => _fields(<String, Object?>{
        for (final MapEntry<String, BlockStats> e in blocks.entries) e.key: e.value.toJson(),
      });

  Map<String, Object?> _fields(Object blocksJson) {
    final Map<String, Object?> json = <String, Object?>{
      'seq': seq,
      'frameNumber': timing.frameNumber,
      'atUs': atUs,
      'vsyncStartUs': timing.vsyncStartUs,
      'buildUs': _nonNegative(timing.buildFinishUs - timing.buildStartUs),
      'rasterUs': _nonNegative(timing.rasterFinishUs - timing.rasterStartUs),
      'vsyncOverheadUs': _nonNegative(timing.buildStartUs - timing.vsyncStartUs),
      'totalSpanUs': _nonNegative(timing.rasterFinishUs - timing.vsyncStartUs),
      'layerCacheCount': _nonNegative(timing.layerCacheCount),
      'pictureCacheCount': _nonNegative(timing.pictureCacheCount),
      'blocks': blocksJson,
    };
    final Interaction? current = interaction;
    if (current != null) {
      json['interactionId'] = current.interactionId;
      json['linkedBy'] = current.linkedBy;
    }
    return json;
  }
}
