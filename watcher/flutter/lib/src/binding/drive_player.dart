// Plays a drive (issue 32, DRIVE.md §3): finds each step's target by
// walking the element tree, turns the step into pointer events with the
// pure plan (core/drive_plan.dart), dispatches them one a frame through
// GestureBinding.handlePointerEvent, and waits for the scroll to settle.
// No flutter_test import: it runs in profile builds.
//
// The Flutter behaviour relied on here is listed, with its source file, in
// docs/flutter-apis.md ("Driving the app").

import 'dart:async';
import 'dart:collection';

import 'package:flutter/gestures.dart';
import 'package:flutter/rendering.dart';
import 'package:flutter/scheduler.dart';
import 'package:flutter/widgets.dart';

import '../core/drive_plan.dart';
import '../core/interaction.dart';
import '../core/watcher_core.dart';

/// What `linkedBy` the frames of a drive carry.
const String driveLinkedBy = 'drive';

/// Most finders a failed step lists as `candidates`.
const int driveMaxCandidates = 5;

/// A widget a finder matched, with the box it paints in.
class _Target {
  _Target(this.element, this.box);

  final Element element;
  final RenderBox box;

  Offset get centre => box.localToGlobal(box.size.center(Offset.zero));

  // The view the box is in (pointer events are hit-tested per view): the
  // RenderView at the root of its render tree.
  int get viewId {
    RenderObject? object = box;
    while (object != null && object is! RenderView) {
      object = object.parent;
    }
    return object is RenderView
        ? object.flutterView.viewId
        : WidgetsBinding.instance.platformDispatcher.implicitView?.viewId ?? 0;
  }
}

/// Plays one drive at a time for a [WatcherCore]; the core reports it.
class DrivePlayer {
  /// A player reporting to [core]; [refreshRate] gives the display's Hz.
  DrivePlayer(this._core, {required double Function() refreshRate}) : _refreshRate = refreshRate;

  final WatcherCore _core;
  final double Function() _refreshRate;

  // Pointer ids and a device far from the engine's (which count up from 1),
  // so a drive's pointer never meets a finger's in the gesture arena.
  static const int _pointerBase = 1 << 30;
  static const int _device = 0x7e1e;

  int _serial = 0;
  int _pointers = 0;
  DriveStatus? _status;
  Interaction? _previous;
  // The pointer a step holds down now, to release it on a cut or a stop.
  int? _downPointer;
  Offset _lastAt = Offset.zero;
  int _downView = 0;

  /// The drive being played (null when none runs).
  DriveStatus? get running => _status != null && !_status!.ended ? _status : null;

  /// Starts playing [steps] [repeat] times; the caller checked that none
  /// runs. Returns at once: the drive plays on frames to come.
  DriveStatus start(List<DriveStep> steps, int repeat) {
    final DriveStatus status = DriveStatus('d${++_serial}', runs: repeat, of: steps.length);
    _status = status;
    _core.drive = status;
    _previous = _core.interaction;
    unawaited(_play(status, steps));
    return status;
  }

  /// Ends the running drive as failed with [why] (the watcher's `stop`):
  /// its pointer is cancelled and the interaction it replaced comes back,
  /// now, before the caller's reply is built.
  void cancel(String why) {
    final DriveStatus? status = running;
    if (status == null) {
      return;
    }
    status.fail(why);
    _release();
    _restoreInteraction(status);
  }

  Future<void> _play(DriveStatus status, List<DriveStep> steps) async {
    try {
      for (int run = 1; run <= status.runs; run++) {
        for (int i = 0; i < steps.length; i++) {
          if (status.ended) {
            return;
          }
          status
            ..run = run
            ..step = i + 1;
          _core.setInteraction(Interaction(status.interactionId, driveLinkedBy));
          final bool finished = await _playStep(status, steps[i]);
          if (status.ended) {
            return;
          }
          if (!finished) {
            status.cut.add('$run/${i + 1}');
          }
        }
      }
      status.state = 'done';
    } on Object catch (error) {
      // Whatever the app's gesture handlers threw: the drive says so rather
      // than dying silently, and its pointer does not stay down.
      _release();
      if (!status.ended) {
        status.fail('${steps[status.step - 1].describe()}: $error');
      }
    } finally {
      _restoreInteraction(status);
      if (identical(_status, status)) {
        _status = null;
      }
    }
  }

  // Plays one step; false when it was cut at driveStepCut.
  Future<bool> _playStep(DriveStatus status, DriveStep step) async {
    final Stopwatch clock = Stopwatch()..start();
    bool overdue() => clock.elapsed >= driveStepCut;
    switch (step.kind) {
      case DriveStepKind.wait:
        await Future<void>.delayed(Duration(microseconds: (step.ms * 1000).round()));
        return true;
      case DriveStepKind.back:
        final NavigatorState? navigator = _topNavigator();
        if (navigator == null) {
          status.fail('back: no Navigator on screen');
          return true;
        }
        unawaited(navigator.maybePop());
        await _nextFrame();
        return true;
      case DriveStepKind.tap:
      case DriveStepKind.scroll:
      case DriveStepKind.fling:
        break;
    }
    final _Target? target = _resolve(status, step);
    if (target == null) {
      return true; // status failed, naming the finder
    }
    final Offset start = target.centre;
    final DrivePlan plan = planDriveStep(step, start.dx, start.dy, hz: _refreshRate());
    final int pointer = _pointerBase + ++_pointers;
    final int viewId = target.viewId;
    Duration? base;
    for (final DriveEvent event in plan.events) {
      // One event a frame; an up goes with the move (or the tap's down)
      // before it, as the plan times them together.
      if (event.kind != DriveEventKind.up) {
        final Duration frame = await _nextFrame();
        base ??= frame;
      }
      if (status.ended) {
        return true; // stopped: cancel() released the pointer
      }
      if (overdue()) {
        _release();
        return false;
      }
      _dispatch(event, pointer, viewId, base!);
    }
    if (step.kind == DriveStepKind.tap) {
      await _nextFrame();
      return true;
    }
    // The pointer is up; the step ends once no Scrollable's position moves
    // any more (the ballistic scroll settled).
    final List<ScrollPosition> positions = _scrollPositions();
    while (positions.any((ScrollPosition p) => p.isScrollingNotifier.value)) {
      await _nextFrame();
      if (status.ended) {
        return true;
      }
      if (overdue()) {
        return false;
      }
    }
    return true;
  }

  // The next frame's timestamp, asking for that frame. The caller resumes
  // in the frame's mid-frame microtasks: after the transient callbacks,
  // before the build, where an input event's effects land in this frame.
  Future<Duration> _nextFrame() {
    final Completer<Duration> done = Completer<Duration>();
    SchedulerBinding.instance
        .scheduleFrameCallback((Duration timeStamp) => done.complete(timeStamp));
    return done.future;
  }

  void _dispatch(DriveEvent event, int pointer, int viewId, Duration base) {
    final Offset at = Offset(event.x, event.y);
    final Duration timeStamp = base + Duration(microseconds: event.tUs);
    final PointerEvent pointerEvent;
    switch (event.kind) {
      case DriveEventKind.down:
        _downPointer = pointer;
        _downView = viewId;
        pointerEvent = PointerDownEvent(
            viewId: viewId, timeStamp: timeStamp, pointer: pointer, device: _device, position: at);
      case DriveEventKind.move:
        pointerEvent = PointerMoveEvent(
            viewId: viewId,
            timeStamp: timeStamp,
            pointer: pointer,
            device: _device,
            position: at,
            delta: at - _lastAt);
      case DriveEventKind.up:
        _downPointer = null;
        pointerEvent = PointerUpEvent(
            viewId: viewId, timeStamp: timeStamp, pointer: pointer, device: _device, position: at);
    }
    _lastAt = at;
    GestureBinding.instance.handlePointerEvent(pointerEvent);
  }

  // Cancels the pointer a step holds down (a cut or a stop), so no
  // recognizer waits for an up that never comes.
  void _release() {
    final int? pointer = _downPointer;
    if (pointer == null) {
      return;
    }
    _downPointer = null;
    GestureBinding.instance.handlePointerEvent(PointerCancelEvent(
        viewId: _downView, pointer: pointer, device: _device, position: _lastAt));
  }

  void _restoreInteraction(DriveStatus status) {
    final Interaction? current = _core.interaction;
    // Only a drive's own interaction is replaced: a stop already cleared it,
    // a mark set another.
    if (current != null &&
        current.linkedBy == driveLinkedBy &&
        current.interactionId.startsWith('${status.id}/')) {
      _core.setInteraction(_previous);
    }
  }

  // The step's target: its finder, or without one (scroll, fling) the
  // largest visible Scrollable. Null after failing the drive.
  _Target? _resolve(DriveStatus status, DriveStep step) {
    final String? finder = step.finder;
    if (finder == null) {
      _Target? largest;
      double area = 0;
      _walk((Element e) {
        if (e.widget is Scrollable) {
          final RenderBox? box = _boxOf(e);
          if (box != null && box.size.width * box.size.height > area) {
            area = box.size.width * box.size.height;
            largest = _Target(e, box);
          }
        }
      });
      if (largest == null) {
        status.fail('${step.describe()}: no Scrollable on screen', onScreen: _candidates());
      }
      return largest;
    }
    final List<_Target> found = _find(finder);
    if (found.length == 1) {
      return found.single;
    }
    final String count = found.isEmpty ? 'no widget matches' : '${found.length} widgets match';
    status.fail('${step.describe()}: $count $finder', onScreen: _candidates());
    return null;
  }

  // Widgets on stage [finder] matches, one per box: a Text and the
  // RichText it builds share one RenderParagraph and count once.
  List<_Target> _find(String finder) {
    final int colon = finder.indexOf(':');
    final String kind = finder.substring(0, colon);
    final String value = finder.substring(colon + 1);
    bool matches(Widget widget) {
      switch (kind) {
        case 'key':
          final Key? key = widget.key;
          return key is ValueKey<String> && key.value == value;
        case 'text':
          return _plainText(widget) == value;
        default:
          return widget.runtimeType.toString() == value;
      }
    }

    final Map<RenderBox, _Target> found = LinkedHashMap<RenderBox, _Target>.identity();
    _walk((Element e) {
      if (matches(e.widget)) {
        final RenderBox? box = _boxOf(e);
        if (box != null) {
          found.putIfAbsent(box, () => _Target(e, box));
        }
      }
    });
    return found.values.toList();
  }

  // Up to driveMaxCandidates finders of what is on screen: keys first, then
  // texts, then the types of the scroll views.
  List<String> _candidates() {
    final Set<String> keys = <String>{};
    final Set<String> texts = <String>{};
    final Set<String> scrollables = <String>{};
    _walk((Element e) {
      final Widget widget = e.widget;
      if (_boxOf(e) == null) {
        return;
      }
      final Key? key = widget.key;
      if (key is ValueKey<String> && isDriveFinder('key:${key.value}')) {
        keys.add('key:${key.value}');
      }
      final String? text = _plainText(widget);
      if (text != null && isDriveFinder('text:$text')) {
        texts.add('text:$text');
      }
      if (widget is ScrollView || widget is SingleChildScrollView || widget is PageView) {
        scrollables.add('type:${widget.runtimeType}');
      }
    });
    return <String>[...keys, ...texts, ...scrollables].take(driveMaxCandidates).toList();
  }

  NavigatorState? _topNavigator() {
    NavigatorState? top;
    _walk((Element e) {
      if (e is StatefulElement && e.state is NavigatorState) {
        top = e.state as NavigatorState; // the last on stage is the innermost
      }
    });
    return top;
  }

  List<ScrollPosition> _scrollPositions() {
    final List<ScrollPosition> positions = <ScrollPosition>[];
    _walk((Element e) {
      if (e is StatefulElement && e.state is ScrollableState) {
        positions.add((e.state as ScrollableState).position);
      }
    });
    return positions;
  }

  // Every element on stage, parents first. debugVisitOnstageChildren skips
  // what Offstage, Overlay and the Navigator's hidden routes keep off
  // stage; despite its name it is not limited to debug builds.
  static void _walk(void Function(Element element) visit) {
    void each(Element element) {
      visit(element);
      element.debugVisitOnstageChildren(each);
    }

    final Element? root = WidgetsBinding.instance.rootElement;
    if (root != null) {
      each(root);
    }
  }

  static RenderBox? _boxOf(Element element) {
    final RenderObject? object = element.renderObject;
    return object is RenderBox && object.attached && object.hasSize ? object : null;
  }

  static String? _plainText(Widget widget) {
    if (widget is Text) {
      return widget.data ?? widget.textSpan?.toPlainText();
    }
    if (widget is RichText) {
      return widget.text.toPlainText();
    }
    return null;
  }
}
