// The example's own test, in place of the one `flutter create .` would
// generate (which references a `MyApp` this example does not have; create
// keeps files that exist). Runs with `flutter test` in example/.

import 'package:flutter/material.dart';
import 'package:flutter_test/flutter_test.dart';
import 'package:telescope_example/main.dart';

void main() {
  testWidgets('the list builds and the jank switch toggles', (WidgetTester tester) async {
    await tester.pumpWidget(const ExampleApp());
    expect(find.text('telescope example'), findsOneWidget);
    final Switch before = tester.widget<Switch>(find.byType(Switch));
    expect(before.value, isFalse);
    await tester.tap(find.byType(Switch));
    await tester.pump();
    expect(tester.widget<Switch>(find.byType(Switch)).value, isTrue);
  });
}
