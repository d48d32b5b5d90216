// The drive action against flutter_test's real binding (no engine): the
// player finds its targets on the element tree, plays pointer events one a
// frame, and reports in every reply. Frames come from tester.pump(); the
// handler is called in the fake-async zone so the drive's own awaits run on
// the pumped frames.

import 'dart:convert';
import 'dart:developer' as developer;

import 'package:flutter/widgets.dart';
import 'package:flutter_test/flutter_test.dart';
import 'package:telescope/telescope.dart';

typedef Json = Map<String, Object?>;

final FramePerfWatcher watcher = FramePerfWatcher();

/// Most frames a drive may take here: 10 s of 60 Hz frames (the step cut),
/// far more than any drive below needs.
const int maxFrames = 600;

void register() {
  TelescopePlugin.install();
  TelescopePlugin.registerWatcher(watcher);
}

// Calls the extension in the fake-async zone: the handler's zero timer fires
// on a pump.
Future<developer.ServiceExtensionResponse> send(
    WidgetTester tester, Map<String, String> params) async {
  final Future<developer.ServiceExtensionResponse> response =
      TelescopePlugin.watcher!.handleExtension(params);
  await tester.pump();
  return response;
}

Future<Json> ok(WidgetTester tester, Map<String, String> params) async {
  final developer.ServiceExtensionResponse response = await send(tester, params);
  expect(response.errorCode, isNull, reason: response.errorDetail);
  return jsonDecode(response.result!) as Json;
}

// Pumps 60 Hz frames until the drive ended; returns the reply that reports
// it ended (the last one carrying it).
Future<Json> untilEnded(WidgetTester tester) async {
  for (int i = 0; i < maxFrames; i++) {
    final DriveStatus? drive = TelescopePlugin.watcher!.core!.drive;
    if (drive == null || drive.ended) {
      break;
    }
    await tester.pump(const Duration(microseconds: 16667));
  }
  return ok(tester, <String, String>{'action': 'status'});
}

Widget feed(ScrollController controller) => Directionality(
      textDirection: TextDirection.ltr,
      child: ListView.builder(
        key: const ValueKey<String>('feed'),
        controller: controller,
        itemExtent: 50,
        itemCount: 1000,
        itemBuilder: (BuildContext context, int i) => Text('Item $i'),
      ),
    );

void main() {
  testWidgets('a drive scrolls the feed, names its frames, and reports done once',
      (WidgetTester tester) async {
    register();
    final ScrollController controller = ScrollController();
    await tester.pumpWidget(feed(controller));
    TelescopePlugin.beginInteraction('before');

    final Json started = await ok(tester, <String, String>{
      'action': 'drive',
      'steps': '[{"scroll":{"dy":-600,"ms":300,"in":"key:feed"}},{"wait":50}]',
      'repeat': '2',
    });
    final Json drive = started['drive']! as Json;
    expect(drive['state'], 'running');
    expect(drive['runs'], 2);
    expect(drive['of'], 2);
    final String id = drive['id']! as String;

    // A second drive while this one runs is refused, naming it.
    final developer.ServiceExtensionResponse second = await send(tester, <String, String>{
      'action': 'drive',
      'steps': '[{"wait":1}]',
    });
    expect(second.errorCode, developer.ServiceExtensionResponse.extensionError);
    expect(second.errorDetail, 'a drive is running ($id)');

    await tester.pump(const Duration(microseconds: 16667));
    final Interaction? playing = TelescopePlugin.watcher!.core!.interaction;
    expect(playing?.interactionId, '$id/r1/s1');
    expect(playing?.linkedBy, 'drive');

    final Json ended = await untilEnded(tester);
    expect((ended['drive']! as Json)['state'], 'done', reason: jsonEncode(ended['drive']));
    expect((ended['drive']! as Json)['run'], 2);
    expect((ended['drive']! as Json)['step'], 2);
    // Two drags of 600 px (the first move's slop aside) and their flings.
    expect(controller.offset, greaterThan(1000));
    expect(TelescopePlugin.watcher!.core!.interaction?.interactionId, 'before',
        reason: 'the interaction the drive replaced comes back');
    final Json after = await ok(tester, <String, String>{'action': 'status'});
    expect(after.containsKey('drive'), isFalse, reason: 'reported once after it ended');
    TelescopePlugin.endInteraction();
  });

  testWidgets('a finder that matches nothing fails the drive with what is on screen',
      (WidgetTester tester) async {
    register();
    await tester.pumpWidget(feed(ScrollController()));
    await ok(tester, <String, String>{'action': 'drive', 'steps': '[{"tap":"text:Buy"}]'});
    final Json ended = await untilEnded(tester);
    final Json drive = ended['drive']! as Json;
    expect(drive['state'], 'failed');
    expect(drive['error'], contains('text:Buy'));
    expect(drive['error'], contains('no widget'));
    final List<Object?> candidates = drive['candidates']! as List<Object?>;
    expect(candidates.first, 'key:feed', reason: 'keys first');
    expect(candidates, contains('text:Item 0'));
    expect(candidates.length, lessThanOrEqualTo(5));
  });

  testWidgets('a finder that matches several widgets says how many', (WidgetTester tester) async {
    register();
    await tester.pumpWidget(feed(ScrollController()));
    await ok(tester, <String, String>{'action': 'drive', 'steps': '[{"tap":"type:Text"}]'});
    final Json drive = (await untilEnded(tester))['drive']! as Json;
    expect(drive['state'], 'failed');
    expect(drive['error'], matches(RegExp(r'[0-9]+ widgets match type:Text')));
  });

  testWidgets('a tap reaches the widget; bad steps start nothing', (WidgetTester tester) async {
    register();
    int taps = 0;
    await tester.pumpWidget(Directionality(
      textDirection: TextDirection.ltr,
      child: Center(
        child: GestureDetector(onTap: () => taps++, child: const Text('Buy')),
      ),
    ));
    final developer.ServiceExtensionResponse bad = await send(tester, <String, String>{
      'action': 'drive',
      'steps': '[{"tap":"text:Buy"},{"scroll":{"dy":0}}]',
    });
    expect(bad.errorCode, developer.ServiceExtensionResponse.invalidParams);
    expect(bad.errorDetail, contains('steps[1]'));
    expect(TelescopePlugin.watcher!.core!.drive, isNull);

    await ok(tester, <String, String>{'action': 'drive', 'steps': '[{"tap":"text:Buy"}]'});
    final Json drive = (await untilEnded(tester))['drive']! as Json;
    expect(drive['state'], 'done');
    expect(taps, 1);
  });

  testWidgets('stop cancels a running drive', (WidgetTester tester) async {
    register();
    await tester.pumpWidget(feed(ScrollController()));
    await ok(tester, <String, String>{
      'action': 'drive',
      'steps': '[{"scroll":{"dy":-3000,"ms":5000}}]',
    });
    await tester.pump(const Duration(microseconds: 16667));
    await tester.pump(const Duration(microseconds: 16667));
    final Json stopped = await ok(tester, <String, String>{'action': 'stop'});
    final Json drive = stopped['drive']! as Json;
    expect(drive['state'], 'failed');
    expect(drive['error'], 'cancelled by stop');
    expect(stopped['interaction'], isNull);
    // The pointer was cancelled: nothing keeps the list dragged.
    for (int i = 0; i < 10; i++) {
      await tester.pump(const Duration(microseconds: 16667));
    }
    expect(TelescopePlugin.watcher!.core!.drive, isNull);
  });
}
