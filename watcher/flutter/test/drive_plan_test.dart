// Runs every shared drive vector (tests/vectors/drive/*.json, format in its
// README.md) through the pure plan, as tests/unit/test_drive_plan.c runs them
// through the C plan; then the step parser's errors and the drive status.

import 'dart:convert';
import 'dart:io';

import 'package:flutter_test/flutter_test.dart';
import 'package:telescope/telescope.dart';

/// Relative to the package root, where `flutter test` runs.
const String driveVectorDir = '../../tests/vectors/drive';

/// DRIVE.md §2 asks for at least these cases: scroll at 60/90/120 Hz, a
/// diagonal scroll, fling default and given velocity, a very short fling,
/// tap, empty drag.
const int minDriveVectors = 9;

/// Positions compare within this (DRIVE.md §2); times exactly.
const double tolerance = 1e-6;

typedef Json = Map<String, Object?>;

void main() {
  final Directory dir = Directory(driveVectorDir);
  final List<File> files = dir.existsSync()
      ? (dir
          .listSync()
          .whereType<File>()
          .where((File f) => f.path.endsWith('.json'))
          .toList()
        ..sort((File a, File b) => a.path.compareTo(b.path)))
      : <File>[];

  test('finds at least $minDriveVectors vectors in $driveVectorDir', () {
    expect(files.length, greaterThanOrEqualTo(minDriveVectors));
  });

  for (final File file in files) {
    final Json vector = jsonDecode(file.readAsStringSync()) as Json;
    test(file.uri.pathSegments.last, () => runDriveVector(vector, file.path));
  }

  group('parseDriveSteps', () {
    test('reads every kind, with the defaults', () {
      final List<DriveStep> steps = parseDriveSteps('[{"scroll":{"dy":-2000,"in":"key:feed"}},'
          '{"fling":{"dx":10}},{"tap":"text:Settings"},{"wait":300},{"back":true}]');
      expect(steps.map((DriveStep s) => s.kind), DriveStepKind.values);
      expect(steps[0].ms, 800);
      expect(steps[0].finder, 'key:feed');
      expect(steps[0].describe(), 'scroll key:feed');
      expect(steps[1].velocity, 4000);
      expect(steps[1].finder, isNull);
      expect(steps[2].finder, 'text:Settings');
      expect(steps[3].ms, 300);
    });

    void rejects(String text, String detail) {
      expect(() => parseDriveSteps(text),
          throwsA(isA<WatcherParamError>().having((WatcherParamError e) => e.detail, 'detail',
              contains(detail))),
          reason: text);
    }

    test('names the step and the field of what it refuses', () {
      rejects('not json', 'steps must be JSON');
      rejects('[]', 'steps must be a JSON array of 1-32 steps');
      rejects(jsonEncode(List<Object>.filled(33, <String, Object>{'wait': 1})), '1-32 steps');
      rejects('[{"wait":1},{"jump":1}]', 'steps[1]: unknown key "jump"');
      rejects('[{"scroll":{"dy":1,"speed":3}}]', 'steps[0].scroll: unknown key "speed"');
      rejects('[{"fling":{"dy":1,"ms":300}}]', 'steps[0].fling: unknown key "ms"');
      rejects('[{"scroll":{"dy":1,"ms":20}}]', 'steps[0].scroll.ms must be a number 50-10000');
      rejects('[{"fling":{"dy":1,"velocity":50}}]', 'steps[0].fling.velocity must be a number');
      rejects('[{"scroll":{"dy":"1"}}]', 'steps[0].scroll.dy must be a number');
      rejects('[{"tap":"feed"}]', 'steps[0].tap must be a finder');
      rejects('[{"tap":"key:"}]', 'steps[0].tap must be a finder');
      rejects('[{"scroll":{"dy":1,"in":"id:x"}}]', 'steps[0].scroll.in must be a finder');
      rejects('[{"wait":10001}]', 'steps[0].wait must be a number 0-10000');
      rejects('[{"back":false}]', 'steps[0].back must be true');
      rejects('[{"wait":1,"back":true}]', 'steps[0] must be an object with one of');
      rejects('[{"wait":1},{"fling":{"velocity":300}}]', 'steps[1].fling: empty drag');
    });

    test('repeat is a decimal 1-10', () {
      expect(parseDriveRepeat(<String, String>{}), 1);
      expect(parseDriveRepeat(<String, String>{'repeat': '10'}), 10);
      for (final String bad in <String>['0', '11', '-1', 'x', '1.5', '']) {
        expect(() => parseDriveRepeat(<String, String>{'repeat': bad}),
            throwsA(isA<WatcherParamError>()), reason: bad);
      }
    });
  });

  group('the drive in replies', () {
    test('carried while it runs and exactly once more after it ended', () {
      final WatcherCore core = WatcherCore(runId: 'run-drive');
      final DriveStatus drive = DriveStatus('d1', runs: 2, of: 3);
      core.drive = drive;
      expect(core.handle(<String, String>{'action': 'status'}, 0)['drive'],
          <String, Object?>{
            'id': 'd1', 'state': 'running', 'run': 1, 'runs': 2, 'step': 1, 'of': 3, //
          });
      drive
        ..run = 2
        ..step = 3
        ..cut.add('1/2')
        ..state = 'done';
      expect(drive.interactionId, 'd1/r2/s3');
      final Json last = core.handle(<String, String>{'action': 'read'}, 0)['drive']! as Json;
      expect(last['state'], 'done');
      expect(last['cut'], <String>['1/2']);
      expect(core.handle(<String, String>{'action': 'status'}, 0).containsKey('drive'), isFalse);
    });

    test('a failed finder says why and what is on screen', () {
      final DriveStatus drive = DriveStatus('d2', runs: 1, of: 1)
        ..fail('tap text:Buy: no widget', onScreen: <String>['key:feed', 'text:Item 1']);
      final Json json = drive.toJson();
      expect(json['state'], 'failed');
      expect(json['error'], contains('no widget'));
      expect(json['candidates'], <String>['key:feed', 'text:Item 1']);
      expect(json.containsKey('cut'), isFalse);
    });

    test('action drive is known to the core', () {
      expect(parseAction(<String, String>{'action': 'drive'}), WatcherAction.drive);
    });
  });
}

double _num(Object? v) => (v! as num).toDouble();

void runDriveVector(Json vector, String name) {
  expect(vector['description'], isA<String>(), reason: '$name needs a description');
  final Json start = vector['start']! as Json;
  final double hz = vector['hz'] == null ? 60 : _num(vector['hz']);
  // Parsed as the drive action parses it.
  final DriveStep step = parseDriveStep(vector['step'], 0);
  final Json expected = vector['expect']! as Json;
  final Object? error = expected['error'];
  if (error != null) {
    expect(() => planDriveStep(step, _num(start['x']), _num(start['y']), hz: hz),
        throwsA(isA<DrivePlanError>().having((DrivePlanError e) => e.message, 'message', error)),
        reason: name);
    return;
  }
  final DrivePlan plan = planDriveStep(step, _num(start['x']), _num(start['y']), hz: hz);
  final List<Object?> want = expected['events']! as List<Object?>;
  expect(plan.events.length, want.length, reason: '$name: event count');
  for (int i = 0; i < want.length; i++) {
    final Json w = want[i]! as Json;
    final DriveEvent g = plan.events[i];
    final String at = '$name: event $i';
    expect(g.tUs, w['t'], reason: '$at: t');
    expect(g.kind.name, w['kind'], reason: '$at: kind');
    expect(g.x, closeTo(_num(w['x']), tolerance), reason: '$at: x');
    expect(g.y, closeTo(_num(w['y']), tolerance), reason: '$at: y');
  }
  expect(plan.durationUs, expected['durationUs'], reason: '$name: durationUs');
  final Json? velocity = expected['velocity'] as Json?;
  if (velocity == null) {
    expect(plan.velocityX, isNull, reason: '$name: only a fling has a velocity');
  } else {
    expect(plan.velocityX, closeTo(_num(velocity['x']), tolerance), reason: '$name: velocity x');
    expect(plan.velocityY, closeTo(_num(velocity['y']), tolerance), reason: '$name: velocity y');
  }
}
