// The thin binding layer against the real scheduler of flutter_test:
// idempotent registration, the liveness counter, the extension handler
// switching FlutterTimeline collection (and putting back what it found),
// the join end to end, and the display fallback.
//
// flutter_test has no engine: frameData.frameNumber never changes and no
// FrameTiming is reported. So the watcher reads frame numbers from an
// injected counter, and timings are reported by hand with the numbers the
// frames were drawn under. Nothing here depends on real-engine timing.

import 'dart:convert';
import 'dart:developer' as developer;
import 'dart:ui' show Display, FlutterView, FrameTiming, PlatformDispatcher;

import 'package:flutter/foundation.dart';
import 'package:flutter/widgets.dart';
import 'package:flutter_test/flutter_test.dart';
import 'package:telescope/telescope.dart';

typedef Json = Map<String, Object?>;

/// The frame number the watcher reads in the frame being drawn.
int fakeFrameNumber = 100;

/// One watcher per isolate: every test registers this one (idempotent).
final FramePerfWatcher watcher = FramePerfWatcher(frameNumberSource: () => ++fakeFrameNumber);

void register() {
  TelescopePlugin.install();
  TelescopePlugin.registerWatcher(watcher);
}

Future<Json> callExtension(WidgetTester tester, Map<String, String> params) async {
  // The handler awaits a zero timer (as Flutter's own extensions do), which
  // only fires outside the fake-async zone of testWidgets.
  final developer.ServiceExtensionResponse? response =
      await tester.runAsync(() => TelescopePlugin.watcher!.handleExtension(params));
  expect(response, isNotNull);
  expect(response!.errorCode, isNull, reason: response.errorDetail);
  return jsonDecode(response.result!) as Json;
}

/// A FrameTiming of frame [number] with build 390 µs and raster 450 µs.
FrameTiming timingOf(int number, int at) => FrameTiming(
      vsyncStart: at,
      buildStart: at + 10,
      buildFinish: at + 400,
      rasterStart: at + 450,
      rasterFinish: at + 900,
      rasterFinishWallTime: at + 900,
      frameNumber: number,
    );

class Counter extends StatefulWidget {
  const Counter({super.key});

  @override
  State<Counter> createState() => CounterState();
}

class CounterState extends State<Counter> {
  int value = 0;

  void bump() => setState(() => value++);

  @override
  Widget build(BuildContext context) => Text('$value', textDirection: TextDirection.ltr);
}

class FakeDisplay implements Display {
  FakeDisplay(this.refreshRate);

  @override
  final double refreshRate;

  @override
  dynamic noSuchMethod(Invocation invocation) => super.noSuchMethod(invocation);
}

/// A view whose display is not among the platform's displays: the real
/// FlutterView.display then asserts or fails a null check.
class ViewWithoutDisplay implements FlutterView {
  @override
  Display get display => throw StateError('no display for this view');

  @override
  dynamic noSuchMethod(Invocation invocation) => super.noSuchMethod(invocation);
}

class FakeDispatcher implements PlatformDispatcher {
  FakeDispatcher(this.displays, this.implicitView);

  @override
  final Iterable<Display> displays;

  @override
  final FlutterView? implicitView;

  @override
  dynamic noSuchMethod(Invocation invocation) => super.noSuchMethod(invocation);
}

void main() {
  testWidgets('registration is idempotent and each drawn frame counts once',
      (WidgetTester tester) async {
    register();
    final String? runId = TelescopePlugin.runId;
    TelescopePlugin.install();
    expect(TelescopePlugin.runId, runId);
    // A second registration would throw in registerExtension if unguarded.
    TelescopePlugin.registerWatcher(FramePerfWatcher());
    expect(TelescopePlugin.watcher, same(watcher));

    final int before = FramePerfWatcher.livenessCounter;
    await tester.pumpWidget(const Counter());
    final int afterFirst = FramePerfWatcher.livenessCounter;
    expect(afterFirst, greaterThan(before));
    // pump() draws only a frame that was scheduled: nothing is dirty here.
    await tester.pump();
    expect(FramePerfWatcher.livenessCounter, afterFirst);
    tester.state<CounterState>(find.byType(Counter)).bump();
    await tester.pump();
    expect(FramePerfWatcher.livenessCounter, afterFirst + 1);

    final Json status = await callExtension(tester, <String, String>{'action': 'status'});
    expect(status['protocol'], 1);
    expect(status['runId'], runId);
    expect(status['livenessCounter'], FramePerfWatcher.livenessCounter);
    expect(status['collecting'], isFalse);
    expect(status['buildMode'], 'debug'); // flutter test runs debug builds
    expect(status['drainError'], isNull);
    expect(status.containsKey('records'), isFalse);
  });

  testWidgets('start/stop switch collection and a frame joins its own timing by number',
      (WidgetTester tester) async {
    register();
    await tester.pumpWidget(const Counter());
    expect(FlutterTimeline.debugCollectionEnabled, isFalse);

    final Json started = await callExtension(tester, <String, String>{
      'action': 'start',
      'interactionId': 'bump',
    });
    expect(started['collecting'], isTrue);
    expect(FlutterTimeline.debugCollectionEnabled, isTrue);

    tester.state<CounterState>(find.byType(Counter)).bump();
    await tester.pump();
    final int bumped = fakeFrameNumber; // the number the bump frame read
    expect(TelescopePlugin.watcher!.core!.pending, greaterThan(0));

    // Reported out of order and with a number no frame had: the join is by
    // number, so the bump frame's record carries the bump frame's blocks.
    tester.binding.platformDispatcher.onReportTimings!(<FrameTiming>[
      timingOf(bumped + 50, 5000),
      timingOf(bumped, 1000),
    ]);
    // The engine numbers frames from one counter that only grows, across a
    // hot restart too (docs/flutter-apis.md): later frames of this run are
    // numbered past any number a timing already carried.
    fakeFrameNumber = bumped + 50;

    final Json read = await callExtension(
        tester, <String, String>{'action': 'read', 'since': '0', 'protocol': '2'});
    expect(read['protocol'], 2);
    final List<Object?> records = read['records']! as List<Object?>;
    expect(records, hasLength(2));
    final Json unmatched = records[0]! as Json;
    expect(unmatched['frameNumber'], bumped + 50);
    expect(unmatched['blocks'], isEmpty);
    final Json joined = records[1]! as Json;
    expect(joined['frameNumber'], bumped);
    expect(joined['buildUs'], 390);
    expect(joined['rasterUs'], 450);
    expect(joined['interactionId'], 'bump');
    expect(joined['linkedBy'], 'agent');
    // Protocol 2: the frame's blocks name entries of the reply's table.
    final List<Object?> names = read['blockNames']! as List<Object?>;
    final List<Object?> flat = joined['blocks']! as List<Object?>;
    expect(flat.length % 4, 0);
    final List<Object?> named = <Object?>[
      for (int k = 0; k < flat.length; k += 4) names[flat[k]! as int],
    ];
    expect(named, contains('BUILD'));

    final Json stopped = await callExtension(tester, <String, String>{'action': 'stop'});
    expect(stopped['collecting'], isFalse);
    expect(stopped['interaction'], isNull);
    expect(FlutterTimeline.debugCollectionEnabled, isFalse);
  });

  testWidgets('stop puts back collection someone else had switched on', (WidgetTester tester) async {
    register();
    await tester.pumpWidget(const Counter());
    FlutterTimeline.debugCollectionEnabled = true; // in-app code: a benchmark, a profiler
    await callExtension(tester, <String, String>{'action': 'start'});
    expect(FlutterTimeline.debugCollectionEnabled, isTrue);
    await callExtension(tester, <String, String>{'action': 'stop'});
    expect(FlutterTimeline.debugCollectionEnabled, isTrue, reason: 'restored, not forced off');
    FlutterTimeline.debugCollectionEnabled = false;
    await callExtension(tester, <String, String>{'action': 'start'});
    await callExtension(tester, <String, String>{'action': 'stop'});
    expect(FlutterTimeline.debugCollectionEnabled, isFalse);
  });

  testWidgets("a start over someone else's collection drops their buffer and says so",
      (WidgetTester tester) async {
    register();
    await tester.pumpWidget(const Counter());
    FlutterTimeline.debugCollectionEnabled = true; // in-app code: a benchmark, a profiler
    FlutterTimeline.startSync('SomeoneElsesBlock');
    FlutterTimeline.finishSync();
    final Json started = await callExtension(tester, <String, String>{'action': 'start'});
    expect(started['collectionTakenOver'], isTrue);
    // The handler emptied their buffer: the first frame's drain is its own.
    expect(FlutterTimeline.debugCollect().timedBlocks, isEmpty);
    final int pendingBefore = TelescopePlugin.watcher!.core!.pending;

    tester.state<CounterState>(find.byType(Counter)).bump();
    await tester.pump();
    final int first = fakeFrameNumber;
    tester.state<CounterState>(find.byType(Counter)).bump();
    await tester.pump();
    final int second = fakeFrameNumber;
    // Both drains were parked: a frame number at or below one a timing
    // already carried would be dropped at park.
    expect(TelescopePlugin.watcher!.core!.pending, pendingBefore + 2);
    tester.binding.platformDispatcher.onReportTimings!(<FrameTiming>[
      timingOf(first, 1000),
      timingOf(second, 2000),
    ]);
    // Both records carry their drain's clock, not the timing's buildFinish
    // (1400, 2400) that a record without a drain gets.
    final Json read = await callExtension(tester, <String, String>{'action': 'read', 'since': '0'});
    final List<Object?> records = read['records']! as List<Object?>;
    final Json firstRecord = records.cast<Json>().firstWhere((Json r) => r['frameNumber'] == first);
    final Json own = records.cast<Json>().firstWhere((Json r) => r['frameNumber'] == second);
    expect(firstRecord['atUs'], isNot(1400), reason: 'the first frame joined its drain');
    expect(own['atUs'], isNot(2400), reason: 'the second frame joined its drain');
    expect((firstRecord['blocks']! as Json).keys, contains('BUILD'),
        reason: 'the first frame keeps its own blocks (the reset ran at start)');
    expect((firstRecord['blocks']! as Json).keys, isNot(contains('SomeoneElsesBlock')));
    expect((own['blocks']! as Json).keys, contains('BUILD'));

    final Json stopped = await callExtension(tester, <String, String>{'action': 'stop'});
    expect(stopped['collectionTakenOver'], isTrue, reason: 'the stop reply says it too');
    expect(FlutterTimeline.debugCollectionEnabled, isTrue, reason: 'theirs again');
    FlutterTimeline.debugCollectionEnabled = false;
    final Json again = await callExtension(tester, <String, String>{'action': 'start'});
    expect(again['collectionTakenOver'], isFalse);
    await callExtension(tester, <String, String>{'action': 'stop'});
  });

  testWidgets('collection switched off by someone else stays off at stop, and is reported',
      (WidgetTester tester) async {
    register();
    await tester.pumpWidget(const Counter());
    FlutterTimeline.debugCollectionEnabled = true; // in-app code collects
    await callExtension(tester, <String, String>{'action': 'start'});
    FlutterTimeline.debugCollectionEnabled = false; // ... and switches it off mid-session
    tester.state<CounterState>(find.byType(Counter)).bump();
    await tester.pump();
    expect(TelescopePlugin.watcher!.core!.collectionLost, isTrue);
    final Json stopped = await callExtension(tester, <String, String>{'action': 'stop'});
    expect(stopped['collectionLost'], isTrue);
    expect(FlutterTimeline.debugCollectionEnabled, isFalse,
        reason: 'nobody drains it any more: restored "on" it would grow for ever');
    final Json again = await callExtension(tester, <String, String>{'action': 'start'});
    expect(again.containsKey('collectionLost'), isFalse, reason: 'a new session starts clean');
    await callExtension(tester, <String, String>{'action': 'stop'});
    expect(FlutterTimeline.debugCollectionEnabled, isFalse);
  });

  testWidgets('bad params answer invalidParams', (WidgetTester tester) async {
    register();
    final developer.ServiceExtensionResponse? response = await tester.runAsync(() =>
        TelescopePlugin.watcher!.handleExtension(<String, String>{'action': 'read', 'since': 'x'}));
    expect(response!.errorCode, developer.ServiceExtensionResponse.invalidParams);
    expect(response.errorDetail, contains('since'));
  });

  testWidgets('beginInteraction tags the current interaction', (WidgetTester tester) async {
    register();
    TelescopePlugin.beginInteraction('checkout');
    expect(TelescopePlugin.watcher!.core!.interaction!.linkedBy, 'app');
    expect(() => TelescopePlugin.beginInteraction(''), throwsArgumentError);
    TelescopePlugin.endInteraction();
    expect(TelescopePlugin.watcher!.core!.interaction, isNull);
  });

  test('the refresh rate falls back when the view has no display', () {
    final FlutterView broken = ViewWithoutDisplay();
    expect(FramePerfWatcher.refreshRateOf(FakeDispatcher(const <Display>[], broken)), 60.0);
    expect(FramePerfWatcher.refreshRateOf(FakeDispatcher(<Display>[FakeDisplay(120)], broken)),
        120.0);
    expect(FramePerfWatcher.refreshRateOf(FakeDispatcher(<Display>[FakeDisplay(0)], null)), 60.0);
    expect(FramePerfWatcher.refreshRateOf(FakeDispatcher(<Display>[FakeDisplay(90)], null)), 90.0);
  });
}
