// Opt-in pointer-linked interactions (its own file: one watcher per
// isolate): one interaction per gesture, whatever its pointers, wheel ticks
// or trackpad pan-zoom events, ended by time.

import 'package:flutter/gestures.dart';
import 'package:flutter/material.dart';
import 'package:flutter_test/flutter_test.dart';
import 'package:telescope/telescope.dart';

Interaction? current() => TelescopePlugin.watcher!.core!.interaction;

Future<void> prepare(WidgetTester tester, {Widget? child}) async {
  TelescopePlugin.install();
  TelescopePlugin.registerWatcher(FramePerfWatcher(linkPointerInteractions: true));
  TelescopePlugin.endInteraction();
  await tester.pumpWidget(child ??
      GestureDetector(
        onTap: () {},
        child: const SizedBox(width: 100, height: 100),
      ));
  // Let any interaction of an earlier test settle.
  await tester.pump(const Duration(seconds: 5));
}

void main() {
  testWidgets('a tap opens one interaction, settled once nothing happens',
      (WidgetTester tester) async {
    await prepare(tester);
    await tester.tap(find.byType(GestureDetector));
    final Interaction? open = current();
    expect(open?.interactionId, startsWith('pointer-'));
    expect(open?.linkedBy, 'pointer');
    // 400 ms with no pointer event and no frame: the 300 ms settle ends it.
    await tester.pump(const Duration(milliseconds: 400));
    expect(current(), isNull);
  });

  testWidgets('a second finger joins the gesture instead of starting one',
      (WidgetTester tester) async {
    await prepare(tester);
    final TestGesture first = await tester.startGesture(const Offset(20, 20), pointer: 1);
    final Interaction? open = current();
    expect(open, isNotNull);
    final TestGesture second = await tester.startGesture(const Offset(60, 60), pointer: 2);
    expect(current(), same(open));
    await first.up();
    await tester.pump(const Duration(milliseconds: 400));
    expect(current(), same(open), reason: 'a finger is still down');
    await second.up();
    await tester.pump(const Duration(milliseconds: 400));
    expect(current(), isNull);
  });

  testWidgets('wheel ticks make one interaction, not one per tick', (WidgetTester tester) async {
    await prepare(tester);
    final TestPointer mouse = TestPointer(1, PointerDeviceKind.mouse);
    mouse.hover(const Offset(50, 50)); // sets where the wheel ticks land
    await tester.sendEventToBinding(mouse.scroll(const Offset(0, 20)));
    final Interaction? open = current();
    expect(open, isNotNull);
    for (int i = 0; i < 5; i++) {
      await tester.pump(const Duration(milliseconds: 100));
      await tester.sendEventToBinding(mouse.scroll(const Offset(0, 20)));
      expect(current(), same(open));
    }
    await tester.pump(const Duration(milliseconds: 400));
    expect(current(), isNull);
  });

  testWidgets('trackpad pan-zoom is a gesture too', (WidgetTester tester) async {
    await prepare(tester);
    final TestGesture pad = await tester.createGesture(kind: PointerDeviceKind.trackpad);
    await pad.panZoomStart(const Offset(50, 50));
    final Interaction? open = current();
    expect(open, isNotNull);
    await pad.panZoomUpdate(const Offset(50, 50), pan: const Offset(0, 30));
    await pad.panZoomEnd();
    expect(current(), same(open));
    await tester.pump(const Duration(milliseconds: 400));
    expect(current(), isNull);
  });

  testWidgets('an endless animation does not keep the interaction open',
      (WidgetTester tester) async {
    await prepare(tester,
        child: GestureDetector(
          onTap: () {},
          child: const Directionality(
            textDirection: TextDirection.ltr,
            child: SizedBox(width: 100, height: 100, child: CircularProgressIndicator()),
          ),
        ));
    await tester.tap(find.byType(GestureDetector));
    expect(current(), isNotNull);
    // Frames every 16 ms for 4 s: settle periods extend while frames come,
    // at most FramePerfWatcher.maxSettleExtensions times (3.3 s in all).
    for (int i = 0; i < 250; i++) {
      await tester.pump(const Duration(milliseconds: 16));
    }
    expect(current(), isNull);
  });

  testWidgets('an interaction the app named is not replaced by a tap', (WidgetTester tester) async {
    await prepare(tester);
    TelescopePlugin.beginInteraction('checkout');
    await tester.tap(find.byType(GestureDetector));
    expect(current()!.interactionId, 'checkout');
    await tester.pump(const Duration(milliseconds: 400));
    expect(current()!.interactionId, 'checkout');
    TelescopePlugin.endInteraction();
  });
}
