// The thin binding layer against the real scheduler of flutter_test:
// idempotent registration, the liveness counter, the extension handler
// switching FlutterTimeline collection, and the join end to end.

import 'dart:convert';
import 'dart:developer' as developer;
import 'dart:ui' show FrameTiming;

import 'package:flutter/foundation.dart';
import 'package:flutter/widgets.dart';
import 'package:flutter_test/flutter_test.dart';
import 'package:telescope/telescope.dart';

typedef Json = Map<String, Object?>;

Future<Json> callExtension(WidgetTester tester, Map<String, String> params) async {
  // The handler awaits a zero timer (as Flutter's own extensions do), which
  // only fires outside the fake-async zone of testWidgets.
  final developer.ServiceExtensionResponse? response =
      await tester.runAsync(() => TelescopePlugin.watcher!.handleExtension(params));
  expect(response, isNotNull);
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
  Widget build(BuildContext context) =>
      Text('$value', textDirection: TextDirection.ltr);
}

void main() {
  testWidgets('registration is idempotent and frames count', (WidgetTester tester) async {
    TelescopePlugin.install();
    final String? runId = TelescopePlugin.runId;
    TelescopePlugin.install();
    expect(TelescopePlugin.runId, runId);

    final FramePerfWatcher watcher = FramePerfWatcher();
    TelescopePlugin.registerWatcher(watcher);
    // A second registration would throw in registerExtension if unguarded.
    TelescopePlugin.registerWatcher(FramePerfWatcher());
    expect(TelescopePlugin.watcher, same(watcher));

    final int before = FramePerfWatcher.livenessCounter;
    await tester.pumpWidget(const Counter());
    await tester.pump();
    expect(FramePerfWatcher.livenessCounter, greaterThanOrEqualTo(before + 2));

    final Json status = await callExtension(tester, <String, String>{'action': 'status'});
    expect(status['protocol'], 1);
    expect(status['runId'], runId);
    expect(status['livenessCounter'], FramePerfWatcher.livenessCounter);
    expect(status['collecting'], isFalse);
    expect(status.containsKey('records'), isFalse);
  });

  testWidgets('start/stop switch FlutterTimeline collection and frames get blocks',
      (WidgetTester tester) async {
    TelescopePlugin.install();
    TelescopePlugin.registerWatcher(FramePerfWatcher());
    await tester.pumpWidget(const Counter());

    final Json started = await callExtension(tester, <String, String>{
      'action': 'start',
      'interactionId': 'bump',
    });
    expect(started['collecting'], isTrue);
    expect(FlutterTimeline.debugCollectionEnabled, isTrue);

    tester.state<CounterState>(find.byType(Counter)).bump();
    await tester.pump();

    // flutter_test has no engine to report timings: report one synthetic
    // unnumbered FrameTiming per parked drain through the binding's own
    // timings dispatch. Unnumbered timings join FIFO, whatever number the
    // drains were parked under.
    final int pending = TelescopePlugin.watcher!.core!.pending;
    expect(pending, greaterThan(0));
    tester.binding.platformDispatcher.onReportTimings!(<FrameTiming>[
      for (int i = 0; i < pending; i++)
        FrameTiming(
          vsyncStart: 1000 * i,
          buildStart: 1000 * i + 10,
          buildFinish: 1000 * i + 400,
          rasterStart: 1000 * i + 450,
          rasterFinish: 1000 * i + 900,
          rasterFinishWallTime: 1000 * i + 900,
        ),
    ]);

    final Json read = await callExtension(tester, <String, String>{'action': 'read', 'since': '0'});
    final List<Object?> records = read['records']! as List<Object?>;
    expect(records, isNotEmpty);
    final Json last = records.last! as Json;
    expect(last['buildUs'], 390);
    expect(last['rasterUs'], 450);
    // The newest drain is the frame that rebuilt Counter after start.
    expect((last['blocks']! as Json).containsKey('BUILD'), isTrue);
    expect(last['interactionId'], 'bump');
    expect(last['linkedBy'], 'agent');

    final Json stopped = await callExtension(tester, <String, String>{'action': 'stop'});
    expect(stopped['collecting'], isFalse);
    expect(stopped['interaction'], isNull);
    expect(FlutterTimeline.debugCollectionEnabled, isFalse);
  });

  testWidgets('bad params answer invalidParams', (WidgetTester tester) async {
    TelescopePlugin.install();
    TelescopePlugin.registerWatcher(FramePerfWatcher());
    final developer.ServiceExtensionResponse? response = await tester.runAsync(() =>
        TelescopePlugin.watcher!.handleExtension(<String, String>{'action': 'read', 'since': 'x'}));
    expect(response!.errorCode, developer.ServiceExtensionResponse.invalidParams);
    expect(response.errorDetail, contains('since'));
  });

  testWidgets('beginInteraction tags the current interaction', (WidgetTester tester) async {
    TelescopePlugin.install();
    TelescopePlugin.registerWatcher(FramePerfWatcher());
    TelescopePlugin.beginInteraction('checkout');
    expect(TelescopePlugin.watcher!.core!.interaction!.linkedBy, 'app');
    expect(() => TelescopePlugin.beginInteraction(''), throwsArgumentError);
    TelescopePlugin.endInteraction();
    expect(TelescopePlugin.watcher!.core!.interaction, isNull);
  });
}
