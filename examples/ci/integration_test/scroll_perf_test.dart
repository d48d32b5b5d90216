// The app under measurement: an integration_test that scrolls the app's
// list for a fixed time while `telescope-mcp check` measures its frames
// beside it (run_check.sh starts both). The app's main() registers the
// telescope watcher under `!kReleaseMode`, so this profile build serves it.

import 'package:flutter/material.dart';
import 'package:flutter_test/flutter_test.dart';
import 'package:integration_test/integration_test.dart';

import 'package:my_app/main.dart' as app;

/// How long the test keeps the app busy: longer than check's --duration-ms,
/// so every measured frame is a frame of this workload.
const Duration scrollFor = Duration(seconds: 25);

void main() {
  final IntegrationTestWidgetsFlutterBinding binding =
      IntegrationTestWidgetsFlutterBinding.ensureInitialized();
  // Frames at the display's pace, as a user sees them, not only when the
  // test pumps: these are the frames check measures.
  binding.framePolicy = LiveTestWidgetsFlutterBindingFramePolicy.fullyLive;

  testWidgets('scrolls the feed', (WidgetTester tester) async {
    app.main();
    await tester.pumpAndSettle();
    final Finder list = find.byType(Scrollable).first;
    final Stopwatch clock = Stopwatch()..start();
    while (clock.elapsed < scrollFor) {
      await tester.fling(list, const Offset(0, -800), 3000);
      await tester.pumpAndSettle();
      await tester.fling(list, const Offset(0, 800), 3000);
      await tester.pumpAndSettle();
    }
  });
}
