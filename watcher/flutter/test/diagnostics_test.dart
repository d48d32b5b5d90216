// What the watcher reports about itself, through the real binding: a drain
// that fails stops draining and is reported; collection switches itself off
// when no call came; frames without FrameTimings are reported. Its own file:
// a drain failure leaves FlutterTimeline's static block stack unbalanced
// for the rest of the isolate, and the watcher's config differs.

import 'dart:convert';
import 'dart:developer' as developer;
import 'dart:ui' show FrameTiming;

import 'package:flutter/foundation.dart';
import 'package:flutter/widgets.dart';
import 'package:flutter_test/flutter_test.dart';
import 'package:telescope/telescope.dart';

typedef Json = Map<String, Object?>;

int fakeFrameNumber = 0;

final FramePerfWatcher watcher = FramePerfWatcher(
  frameNumberSource: () => ++fakeFrameNumber,
  config: const WatcherConfig(
    autoOff: Duration(milliseconds: 20),
    timingsMissingFrames: 3,
    timingsMissingAfter: Duration(microseconds: 1),
  ),
);

Future<Json> callExt(WidgetTester tester, Map<String, String> params) async {
  TelescopePlugin.install();
  TelescopePlugin.registerWatcher(watcher);
  final developer.ServiceExtensionResponse? response =
      await tester.runAsync(() => watcher.handleExtension(params));
  expect(response!.errorCode, isNull, reason: response.errorDetail);
  return jsonDecode(response.result!) as Json;
}

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

Future<void> drawFrame(WidgetTester tester) async {
  tester.state<CounterState>(find.byType(Counter)).bump();
  await tester.pump();
}

void main() {
  testWidgets('frames without any FrameTiming are reported as timingsMissing',
      (WidgetTester tester) async {
    await tester.pumpWidget(const Counter());
    await callExt(tester, <String, String>{'action': 'status'});
    // The app took onReportTimings for itself: ours never runs again.
    tester.binding.platformDispatcher.onReportTimings = (List<FrameTiming> _) {};
    for (int i = 0; i < 3; i++) {
      await drawFrame(tester);
    }
    expect((await callExt(tester, <String, String>{'action': 'status'}))['timingsMissing'], isTrue);
  });

  testWidgets('collection switches itself off when nobody reads', (WidgetTester tester) async {
    await tester.pumpWidget(const Counter());
    final Json started = await callExt(tester, <String, String>{'action': 'start'});
    expect(started['collecting'], isTrue);
    expect(FlutterTimeline.debugCollectionEnabled, isTrue);
    // FlutterTimeline.now is the real clock: wait past autoOff for real.
    await tester.runAsync(() => Future<void>.delayed(const Duration(milliseconds: 60)));
    await drawFrame(tester);
    expect(FlutterTimeline.debugCollectionEnabled, isFalse);
    final Json status = await callExt(tester, <String, String>{'action': 'status'});
    expect(status['collecting'], isFalse);
    expect(status['collectionAutoOff'], isTrue);
    // The next start clears it.
    final Json again = await callExt(tester, <String, String>{'action': 'start'});
    expect(again['collectionAutoOff'], isFalse);
    await callExt(tester, <String, String>{'action': 'stop'});
  });

  // Last in the file: the open block is never finished.
  testWidgets('a failed drain stops draining and is reported', (WidgetTester tester) async {
    await tester.pumpWidget(const Counter());
    await callExt(tester, <String, String>{'action': 'start'});
    FlutterTimeline.startSync('left-open'); // an app bug: never finished
    await drawFrame(tester); // debugCollect asserts in this frame
    expect(FlutterTimeline.debugCollectionEnabled, isFalse, reason: 'collection put back');
    Json status = await callExt(tester, <String, String>{'action': 'status'});
    expect(status['drainError'], contains('startSync'));
    // Later frames neither assert nor get blocks; a new start keeps it off.
    final int before = watcher.core!.livenessCounter;
    await drawFrame(tester);
    expect(watcher.core!.livenessCounter, before + 1);
    status = await callExt(tester, <String, String>{'action': 'start'});
    expect(status['drainError'], isNotNull);
    expect(FlutterTimeline.debugCollectionEnabled, isFalse);
  });
}
