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

  /// The wire form, every field of the schema.
  Map<String, Object?> toJson() {
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
      'blocks': <String, Object?>{
        for (final MapEntry<String, BlockStats> e in blocks.entries) e.key: e.value.toJson(),
      },
    };
    final Interaction? current = interaction;
    if (current != null) {
      json['interactionId'] = current.interactionId;
      json['linkedBy'] = current.linkedBy;
    }
    return json;
  }
}
