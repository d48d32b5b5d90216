// Opt-in pointer-linked interactions (its own file: one watcher per isolate).

import 'package:flutter/widgets.dart';
import 'package:flutter_test/flutter_test.dart';
import 'package:telescope/telescope.dart';

void main() {
  testWidgets('a tap opens pointer-1, settled frames close it', (WidgetTester tester) async {
    TelescopePlugin.install();
    TelescopePlugin.registerWatcher(FramePerfWatcher(linkPointerInteractions: true));
    await tester.pumpWidget(GestureDetector(
      onTap: () {},
      child: const SizedBox(width: 100, height: 100),
    ));

    await tester.tap(find.byType(GestureDetector));
    final Interaction? open = TelescopePlugin.watcher!.core!.interaction;
    expect(open?.interactionId, 'pointer-1');
    expect(open?.linkedBy, 'pointer');

    // 400 ms with no frame: the 300 ms settle timer fires.
    await tester.pump(const Duration(milliseconds: 400));
    expect(TelescopePlugin.watcher!.core!.interaction, isNull);

    // An interaction the app named is not replaced by a tap.
    TelescopePlugin.beginInteraction('checkout');
    await tester.tap(find.byType(GestureDetector));
    expect(TelescopePlugin.watcher!.core!.interaction!.interactionId, 'checkout');
  });
}
