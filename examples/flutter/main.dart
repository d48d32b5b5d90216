// The telescope registration in a minimal Flutter app: add the `telescope`
// package (watcher/flutter in this repository) to pubspec.yaml, then register
// the watcher before runApp. Release builds leave it out: the VM service,
// and so telescope-mcp, only reach debug and profile builds anyway.
//
// Run the app with `flutter run --vmservice-out-file /tmp/telescope-vmservice.uri`
// and start telescope-mcp with `--vm-service-uri-file /tmp/telescope-vmservice.uri`
// (examples/clients has the MCP client entries that do this).

import 'package:flutter/foundation.dart';
import 'package:flutter/material.dart';
import 'package:telescope/telescope.dart';

void main() {
  // !kReleaseMode: debug and profile builds (kDebugMode would leave out
  // profile builds, whose timings are the ones close to what users see).
  // Register after any other binding set-up the app does (Sentry,
  // integration_test), so telescope's timings callback joins theirs.
  if (!kReleaseMode) {
    TelescopePlugin.install();
    TelescopePlugin.registerWatcher(FramePerfWatcher());
  }
  runApp(const MyApp());
}

/// The app: whatever it was before telescope; nothing else changes.
class MyApp extends StatelessWidget {
  /// Creates the app.
  const MyApp({super.key});

  @override
  Widget build(BuildContext context) {
    return MaterialApp(
      title: 'My app',
      home: Scaffold(
        appBar: AppBar(title: const Text('My app')),
        body: ListView.builder(
          itemCount: 1000,
          itemBuilder: (BuildContext context, int index) => ListTile(title: Text('Item $index')),
        ),
      ),
    );
  }
}
