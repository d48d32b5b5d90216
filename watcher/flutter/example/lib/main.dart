// A list that janks on demand: with the switch on, every item build burns
// 30 ms, so scrolling drops frames and telescope shows where.

import 'package:flutter/foundation.dart';
import 'package:flutter/material.dart';
import 'package:telescope/telescope.dart';

void main() {
  if (!kReleaseMode) {
    TelescopePlugin.install();
    TelescopePlugin.registerWatcher(FramePerfWatcher(linkPointerInteractions: true));
  }
  runApp(const ExampleApp());
}

/// The example app.
class ExampleApp extends StatefulWidget {
  /// Creates the app.
  const ExampleApp({super.key});

  @override
  State<ExampleApp> createState() => _ExampleAppState();
}

class _ExampleAppState extends State<ExampleApp> {
  bool _jank = false;

  @override
  Widget build(BuildContext context) {
    return MaterialApp(
      title: 'telescope example',
      home: Scaffold(
        appBar: AppBar(
          title: const Text('telescope example'),
          actions: <Widget>[
            const Center(child: Text('Jank')),
            Switch(
              value: _jank,
              onChanged: (bool value) {
                setState(() => _jank = value);
                if (value) {
                  TelescopePlugin.beginInteraction('jank-on');
                } else {
                  TelescopePlugin.endInteraction();
                }
              },
            ),
          ],
        ),
        body: ListView.builder(
          itemCount: 1000,
          itemBuilder: (BuildContext context, int index) =>
              JankyItem(index: index, burn: _jank ? const Duration(milliseconds: 30) : Duration.zero),
        ),
      ),
    );
  }
}

/// One list row that busy-waits for [burn] while it builds.
class JankyItem extends StatelessWidget {
  /// Row [index], burning [burn] per build.
  const JankyItem({super.key, required this.index, required this.burn});

  /// The row number shown.
  final int index;

  /// How long each build busy-waits.
  final Duration burn;

  @override
  Widget build(BuildContext context) {
    if (burn > Duration.zero) {
      final Stopwatch watch = Stopwatch()..start();
      while (watch.elapsed < burn) {
        // Busy-wait on purpose: this is the jank being demonstrated.
      }
    }
    return ListTile(
      leading: CircleAvatar(child: Text('${index % 100}')),
      title: Text('Item $index'),
      subtitle: Text(burn > Duration.zero ? 'burning ${burn.inMilliseconds} ms per build' : 'fast'),
    );
  }
}
