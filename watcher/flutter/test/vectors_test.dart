// Runs every shared vector (tests/vectors/watcher/*.json, format in its
// README.md) through the pure core, exactly as
// tests/unit/test_watcher_vectors.c runs them through the C model.

import 'dart:convert';
import 'dart:io';

import 'package:flutter_test/flutter_test.dart';
import 'package:telescope/telescope.dart';

/// Relative to the package root, where `flutter test` runs.
const String vectorDir = '../../tests/vectors/watcher';

/// Fewer vectors than this means the directory was not found or emptied.
const int minVectors = 25;

typedef Json = Map<String, Object?>;

void main() {
  final List<File> files = Directory(vectorDir)
      .listSync()
      .whereType<File>()
      .where((File f) => f.path.endsWith('.json'))
      .toList()
    ..sort((File a, File b) => a.path.compareTo(b.path));

  test('finds at least $minVectors vectors in $vectorDir', () {
    expect(files.length, greaterThanOrEqualTo(minVectors));
  });

  test('the comparison can fail', () {
    expect(jsonDiff(<String, Object?>{'y': 60}, <String, Object?>{'y': 60.0}, ''), isNull);
    expect(jsonDiff(<String, Object?>{'y': 60}, <String, Object?>{'y': 61}, ''), '.y');
    expect(jsonDiff(<String, Object?>{'y': 60}, <String, Object?>{'y': 60, 'z': 1}, ''),
        '.z(unexpected)');
  });

  for (final File file in files) {
    final Json vector = jsonDecode(file.readAsStringSync()) as Json;
    test('${vector['name']}', () => runVector(vector));
  }
}

/// Null when [want] and [got] are the same JSON value (numbers by value),
/// else the path of the first difference.
String? jsonDiff(Object? want, Object? got, String path) {
  if (want is num && got is num) {
    return want == got ? null : path;
  }
  if (want is Map<String, Object?>) {
    if (got is! Map<String, Object?>) {
      return path;
    }
    for (final String key in got.keys) {
      if (!want.containsKey(key)) {
        return '$path.$key(unexpected)';
      }
    }
    for (final MapEntry<String, Object?> e in want.entries) {
      if (!got.containsKey(e.key)) {
        return '$path.${e.key}(missing)';
      }
      final String? d = jsonDiff(e.value, got[e.key], '$path.${e.key}');
      if (d != null) {
        return d;
      }
    }
    return null;
  }
  if (want is List<Object?>) {
    if (got is! List<Object?> || got.length != want.length) {
      return '$path(length)';
    }
    for (int i = 0; i < want.length; i++) {
      final String? d = jsonDiff(want[i], got[i], '$path[$i]');
      if (d != null) {
        return d;
      }
    }
    return null;
  }
  return want == got ? null : path;
}

/// Every key of [want] equals the same key of [got].
void expectFields(Json want, Json got, String what) {
  for (final MapEntry<String, Object?> e in want.entries) {
    final String? d = jsonDiff(e.value, got[e.key], '.${e.key}');
    expect(d, isNull, reason: '$what differs at $d: want ${jsonEncode(want)}, got ${jsonEncode(got)}');
  }
}

int _int(Json o, String key, int fallback) => (o[key] as num?)?.toInt() ?? fallback;

void runVector(Json vector) {
  final String name = vector['name']! as String;
  expect(vector['description'], isA<String>(), reason: '$name needs a description');
  final Json c = (vector['config'] as Json?) ?? <String, Object?>{};
  final WatcherCore core = WatcherCore(
    config: WatcherConfig(
      ringCapacity: _int(c, 'ringCapacity', 4096),
      pendingCapacity: _int(c, 'pendingCapacity', 256),
      readLimitCap: _int(c, 'readLimitCap', 500),
      watcherVersion: (c['watcherVersion'] as String?) ?? telescopeWatcherVersion,
      buildMode: (c['buildMode'] as String?) ?? 'profile',
      ringBytes: _int(c, 'ringBytes', 4 << 20),
      readBytesCap: _int(c, 'readBytesCap', 256 << 10),
      autoOff: Duration(microseconds: _int(c, 'autoOffUs', 30000000)),
      timingsMissingFrames: _int(c, 'timingsMissingFrames', 120),
      timingsMissingAfter: Duration(microseconds: _int(c, 'timingsMissingUs', 2000000)),
      pendingBlocks: _int(c, 'pendingBlocks', 65536),
      joinByTime: c['joinByTime'] == true,
    ),
    runId: (c['runId'] as String?) ?? 'run-1',
  );
  final num? refresh = c['refreshRate'] as num?;
  if (refresh != null) {
    core.refreshRate = refresh.toDouble();
  }

  final List<Object?> steps = vector['steps']! as List<Object?>;
  for (int i = 0; i < steps.length; i++) {
    final Json step = steps[i]! as Json;
    final String op = step['op']! as String;
    final String where = '$name: step $i ($op)';
    switch (op) {
      case 'frameDrawn':
        core.frameDrawn(_int(step, 'frameNumber', -1), _int(step, 'nowUs', 0), <TimelineEvent>[
          for (final Object? e in step['events']! as List<Object?>)
            TimelineEvent((e! as Json)['name']! as String, _int(e as Json, 'startUs', 0),
                _int(e, 'durUs', 0)),
        ]);
      case 'timings':
        core.timings(<FrameTimingSample>[
          for (final Object? t in step['timings']! as List<Object?>)
            FrameTimingSample(
              frameNumber: _int(t! as Json, 'frameNumber', -1),
              vsyncStartUs: _int(t as Json, 'vsyncStartUs', 0),
              buildStartUs: _int(t, 'buildStartUs', 0),
              buildFinishUs: _int(t, 'buildFinishUs', 0),
              rasterStartUs: _int(t, 'rasterStartUs', 0),
              rasterFinishUs: _int(t, 'rasterFinishUs', 0),
              layerCacheCount: _int(t, 'layerCacheCount', 0),
              pictureCacheCount: _int(t, 'pictureCacheCount', 0),
            ),
        ]);
      case 'ext':
        runExt(core, step, where);
      case 'setForeignCollection':
        core.foreignCollection = step['on']! as bool;
      case 'drainFailed':
        core.drainFailed(step['error']! as String);
      case 'restart':
        core.restart(step['runId']! as String);
      case 'setLifecycle':
        core.lifecycle = step['lifecycle'] as String?;
      case 'setFramesEnabled':
        core.framesEnabled = step['enabled']! as bool;
      case 'takeProbe':
        expect(core.takeProbe(), step['expect']! as bool, reason: where);
      case 'state':
        expectFields(step['expect']! as Json, <String, Object?>{
          'livenessCounter': core.livenessCounter,
          'pending': core.pending,
          'droppedAttributions': core.droppedAttributions,
          'firstSeq': core.firstSeq,
          'lastSeq': core.lastSeq,
          'collecting': core.collecting,
          'runId': core.runId,
          'ringBytes': core.ringBytes,
          'timingsMissing': core.timingsMissing,
          'collectionAutoOff': core.collectionAutoOff,
          'drainError': core.drainError,
          'collectionTakenOver': core.collectionTakenOver,
        }, where);
      default:
        fail('$where: unknown op');
    }
  }

  for (final int protocol in <int>[1, 2, 3]) {
    final List<Object?> all = <Object?>[];
    int since = 0;
    while (true) {
      final Json reply = core.handle(<String, String>{
        'action': 'read',
        'since': '$since',
        if (protocol >= 2) 'protocol': '$protocol',
      }, 0);
      expect(reply['protocol'], protocol, reason: '$name: asked for protocol $protocol');
      if (protocol == 3) {
        reply['records'] = recordsFromV3(reply, name);
      }
      final List<Object?> records =
          protocol >= 2 ? recordsFromV2(reply, name) : reply['records']! as List<Object?>;
      for (final Object? r in records) {
        all.add(r);
        since = (r! as Json)['seq']! as int;
      }
      if (reply['more'] != true || records.isEmpty) {
        break;
      }
    }
    // Through JSON text, as the VM sends it: the encoding must not change it.
    final Object? wire = jsonDecode(jsonEncode(all));
    final String? d = jsonDiff(vector['expectedRecords'], wire, '');
    expect(d, isNull,
        reason: '$name: expectedRecords (protocol $protocol) differ at $d\n  got ${jsonEncode(all)}');
  }
}

/// The record fields protocol 3 sends before blocks, in wire order.
const List<String> v3Fields = <String>[
  'seq', 'frameNumber', 'atUs', 'vsyncStartUs', 'buildUs', 'rasterUs', //
  'vsyncOverheadUs', 'totalSpanUs', 'layerCacheCount', 'pictureCacheCount',
];

/// A protocol-3 read reply's records back in the protocol-2 form, checking
/// the form on the way (arrays of 11 or 12, the 12th an index into the
/// reply's interactions table of [interactionId, linkedBy] pairs).
List<Object?> recordsFromV3(Json reply, String name) {
  final List<Object?> pairs = reply['interactions']! as List<Object?>;
  return <Object?>[
    for (final Object? r in reply['records']! as List<Object?>)
      () {
        final List<Object?> a = r! as List<Object?>;
        expect(a.length == 11 || a.length == 12, isTrue,
            reason: '$name: a protocol 3 record is an array of 11 or 12');
        final Json record = <String, Object?>{
          for (int k = 0; k < v3Fields.length; k++) v3Fields[k]: a[k],
          'blocks': a[10],
        };
        if (a.length == 12) {
          final List<Object?> pair = pairs[a[11]! as int]! as List<Object?>;
          record['interactionId'] = pair[0];
          record['linkedBy'] = pair[1];
        }
        return record;
      }(),
  ];
}

/// A protocol-2 read reply's records back in the protocol-1 form, checking
/// the form on the way (every index in the table, quadruples, no name twice).
List<Object?> recordsFromV2(Json reply, String name) {
  final List<Object?> names = reply['blockNames']! as List<Object?>;
  return <Object?>[
    for (final Object? r in reply['records']! as List<Object?>)
      () {
        final Json record = Map<String, Object?>.of(r! as Json);
        final List<Object?> flat = record['blocks']! as List<Object?>;
        expect(flat.length % 4, 0, reason: '$name: protocol 2 blocks must be quadruples');
        final Json blocks = <String, Object?>{};
        for (int k = 0; k < flat.length; k += 4) {
          final String block = names[flat[k]! as int]! as String;
          expect(blocks.containsKey(block), isFalse, reason: '$name: $block named twice');
          blocks[block] = <String, Object?>{
            'micros': flat[k + 1],
            'selfMicros': flat[k + 2],
            'count': flat[k + 3],
          };
        }
        record['blocks'] = blocks;
        return record;
      }(),
  ];
}

void runExt(WatcherCore core, Json step, String where) {
  final Map<String, String> params = <String, String>{
    for (final MapEntry<String, Object?> e in (step['params']! as Json).entries)
      e.key: e.value! as String,
  };
  final String? wantError = step['expectError'] as String?;
  Json? reply;
  String? error;
  try {
    reply = core.handle(params, _int(step, 'nowUs', 0));
  } on WatcherParamError catch (e) {
    error = e.detail;
  }
  if (wantError != null) {
    expect(reply, isNull, reason: '$where: expected an error');
    expect(error, contains(wantError), reason: where);
    return;
  }
  expect(error, isNull, reason: '$where: unexpected error');
  final Json? exact = step['expectReply'] as Json?;
  if (exact != null) {
    final String? d = jsonDiff(exact, reply, '');
    expect(d, isNull, reason: '$where: reply differs at $d\n  got ${jsonEncode(reply)}');
  }
  final Json? fields = step['expect'] as Json?;
  if (fields != null) {
    expectFields(fields, reply!, where);
  }
}
