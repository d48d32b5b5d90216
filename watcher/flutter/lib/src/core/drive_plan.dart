// The drive plan (issue 32, DRIVE.md §1-2): a workload step as the agent
// writes it, and the timed pointer events that play it. Pure: no Flutter
// import, no clock. `watcher/sim/model_drive_plan.c` is its C twin; both
// pass the shared vectors of tests/vectors/drive/.

import 'dart:convert';
import 'dart:math' as math;

import 'params.dart';

/// The distance a pointer travels before a drag is accepted: Flutter's
/// `kTouchSlop` (`packages/flutter/lib/src/gestures/constants.dart`), 18
/// logical px. The plan adds it to every drag so the content moves by the
/// drag asked for, as `WidgetController.drag` does.
const double driveTouchSlop = 18.0;

/// Most steps in one drive.
const int driveMaxSteps = 32;

/// Most runs of the steps (`repeat`).
const int driveMaxRepeat = 10;

/// Longest finder, in UTF-8 bytes, its prefix included.
const int driveFinderMax = 200;

/// A step not finished in this long is cut (its pointer released).
const Duration driveStepCut = Duration(seconds: 10);

/// A scroll's default duration, ms.
const double driveDefaultScrollMs = 800;

/// A fling's default release speed, px/s.
const double driveDefaultVelocity = 4000;

/// What a step does.
enum DriveStepKind {
  /// Drag at an even pace over `ms`, one move per frame.
  scroll,

  /// A quick drag released at `velocity`, then wait for the scroll to settle.
  fling,

  /// Down and up at the target's centre.
  tap,

  /// Nothing for `ms`.
  wait,

  /// The top route's `maybePop`.
  back,
}

/// One step of a drive, parsed.
class DriveStep {
  /// A step; see [parseDriveSteps] for the bounds.
  const DriveStep(
    this.kind, {
    this.dx = 0,
    this.dy = 0,
    this.ms = driveDefaultScrollMs,
    this.velocity = driveDefaultVelocity,
    this.finder,
  });

  /// What it does.
  final DriveStepKind kind;

  /// The drag, logical px (scroll, fling).
  final double dx;

  /// The drag, logical px (scroll, fling).
  final double dy;

  /// A scroll's duration or a wait's, ms.
  final double ms;

  /// A fling's release speed, px/s.
  final double velocity;

  /// The tap's target, or the scroll's or fling's `in` (null: the largest
  /// visible Scrollable).
  final String? finder;

  /// One line for replies and logs, e.g. `fling key:feed`.
  String describe() => finder == null ? kind.name : '${kind.name} $finder';
}

/// `down`, `move` or `up`.
enum DriveEventKind {
  /// The pointer touches.
  down,

  /// The pointer moves.
  move,

  /// The pointer leaves.
  up,
}

/// One timed pointer event of a plan.
class DriveEvent {
  /// [kind] at ([x], [y]) logical px, [tUs] µs after the step's start.
  const DriveEvent(this.tUs, this.kind, this.x, this.y);

  /// µs from the step's start.
  final int tUs;

  /// What happens.
  final DriveEventKind kind;

  /// Logical px.
  final double x;

  /// Logical px.
  final double y;
}

/// A step's events: [events] in order, the last at [durationUs]; a fling
/// also says the velocity the pointer leaves with.
class DrivePlan {
  /// A plan of [events].
  const DrivePlan(this.events, this.durationUs, {this.velocityX, this.velocityY});

  /// No events (wait, back).
  static const DrivePlan none = DrivePlan(<DriveEvent>[], 0);

  /// In order.
  final List<DriveEvent> events;

  /// The last event's time (0 without events).
  final int durationUs;

  /// A fling's release velocity, px/s (null otherwise).
  final double? velocityX;

  /// A fling's release velocity, px/s (null otherwise).
  final double? velocityY;
}

/// A step that plans no event (`empty drag`).
class DrivePlanError implements Exception {
  /// Explained by [message].
  const DrivePlanError(this.message);

  /// What is wrong.
  final String message;

  @override
  String toString() => 'DrivePlanError: $message';
}

/// The events that play [step] from ([x0], [y0]), the centre of its
/// target, at [hz] frames a second (not above 0: 60).
///
/// scroll: `n = max(1, round(ms·1000/T))` moves at `round(i·T)`, `T = 1e6/hz`;
/// fling: `D = |P|/velocity` s, `n = max(2, round(D/T))` moves at
/// `round(i·D/n)`; both move to `start + P·i/n`, where `P` is the drag plus
/// the touch slop along it, and `up` where and when the last move is. tap:
/// `down` and `up` at 0. wait, back: none. Throws [DrivePlanError] for a
/// scroll or fling of length 0.
DrivePlan planDriveStep(DriveStep step, double x0, double y0, {double hz = 60}) {
  final double frameUs = 1e6 / (hz > 0 ? hz : 60);
  switch (step.kind) {
    case DriveStepKind.wait:
    case DriveStepKind.back:
      return DrivePlan.none;
    case DriveStepKind.tap:
      return DrivePlan(<DriveEvent>[
        DriveEvent(0, DriveEventKind.down, x0, y0),
        DriveEvent(0, DriveEventKind.up, x0, y0),
      ], 0);
    case DriveStepKind.scroll:
    case DriveStepKind.fling:
      break;
  }
  final double length = math.sqrt(step.dx * step.dx + step.dy * step.dy);
  if (length == 0) {
    throw const DrivePlanError('empty drag');
  }
  // The slop is spent before the drag is accepted, so the pointer travels
  // the drag plus the slop along it and the content moves by the drag.
  final double px = step.dx + driveTouchSlop * step.dx / length;
  final double py = step.dy + driveTouchSlop * step.dy / length;
  final bool fling = step.kind == DriveStepKind.fling;
  // A fling's moves spread over D = |P| / velocity; a scroll's come one a
  // frame.
  final double flingUs = fling ? math.sqrt(px * px + py * py) / step.velocity * 1e6 : 0;
  final int n = fling
      ? math.max(2, (flingUs / frameUs).round())
      : math.max(1, (step.ms * 1000 / frameUs).round());
  final List<DriveEvent> events = <DriveEvent>[DriveEvent(0, DriveEventKind.down, x0, y0)];
  for (int i = 1; i <= n; i++) {
    final int t = fling ? (i * flingUs / n).round() : (i * frameUs).round();
    events.add(DriveEvent(t, DriveEventKind.move, x0 + px * i / n, y0 + py * i / n));
  }
  final DriveEvent last = events.last;
  events.add(DriveEvent(last.tUs, DriveEventKind.up, last.x, last.y));
  if (!fling) {
    return DrivePlan(events, last.tUs);
  }
  final double seconds = flingUs / 1e6;
  return DrivePlan(events, last.tUs, velocityX: px / seconds, velocityY: py / seconds);
}

/// The steps of a drive from the JSON text an agent wrote (an array of
/// 1–[driveMaxSteps] steps, DRIVE.md §1). Throws [WatcherParamError] naming
/// the step (`steps[2]`, 0-based) and the field.
List<DriveStep> parseDriveSteps(String text) {
  Object? json;
  try {
    json = jsonDecode(text);
  } on FormatException catch (error) {
    throw WatcherParamError('steps must be JSON: ${error.message}');
  }
  if (json is! List<Object?> || json.isEmpty || json.length > driveMaxSteps) {
    throw const WatcherParamError('steps must be a JSON array of 1-$driveMaxSteps steps');
  }
  final List<DriveStep> steps = <DriveStep>[
    for (int i = 0; i < json.length; i++) parseDriveStep(json[i], i),
  ];
  // A drag of length 0 plans no event: refused before anything starts.
  for (int i = 0; i < steps.length; i++) {
    final DriveStep step = steps[i];
    final bool drag = step.kind == DriveStepKind.scroll || step.kind == DriveStepKind.fling;
    if (drag && step.dx == 0 && step.dy == 0) {
      throw WatcherParamError('steps[$i].${step.kind.name}: empty drag (dx and dy are 0)');
    }
  }
  return steps;
}

/// Step [index] of a drive (one object with one of scroll, fling, tap,
/// wait, back). Throws [WatcherParamError] naming the step and the field.
DriveStep parseDriveStep(Object? json, int index) {
  if (json is! Map<String, Object?> || json.length != 1) {
    throw WatcherParamError(
        'steps[$index] must be an object with one of scroll, fling, tap, wait, back');
  }
  final String key = json.keys.single;
  final Object? body = json[key];
  final String at = 'steps[$index].$key';
  switch (key) {
    case 'scroll':
      return _dragParse(DriveStepKind.scroll, body, at);
    case 'fling':
      return _dragParse(DriveStepKind.fling, body, at);
    case 'tap':
      return DriveStep(DriveStepKind.tap, finder: _finder(body, at));
    case 'wait':
      return DriveStep(DriveStepKind.wait, ms: _number(body, at, 0, 10000));
    case 'back':
      if (body != true) {
        throw WatcherParamError('$at must be true');
      }
      return const DriveStep(DriveStepKind.back);
  }
  throw WatcherParamError('steps[$index]: unknown key "$key" (scroll, fling, tap, wait, back)');
}

/// `repeat`: a decimal 1–[driveMaxRepeat], 1 when absent.
int parseDriveRepeat(Map<String, String> params) {
  final String? text = params['repeat'];
  if (text == null) {
    return 1;
  }
  final int? repeat = RegExp(r'^[0-9]{1,2}$').hasMatch(text) ? int.parse(text) : null;
  if (repeat == null || repeat < 1 || repeat > driveMaxRepeat) {
    throw WatcherParamError('repeat must be a decimal integer 1-$driveMaxRepeat, got "$text"');
  }
  return repeat;
}

DriveStep _dragParse(DriveStepKind kind, Object? body, String at) {
  if (body is! Map<String, Object?>) {
    throw WatcherParamError('$at must be an object');
  }
  final bool fling = kind == DriveStepKind.fling;
  double dx = 0;
  double dy = 0;
  double ms = driveDefaultScrollMs;
  double velocity = driveDefaultVelocity;
  String? finder;
  for (final MapEntry<String, Object?> e in body.entries) {
    final String where = '$at.${e.key}';
    switch (e.key) {
      case 'dx':
        dx = _number(e.value, where, -1e6, 1e6);
      case 'dy':
        dy = _number(e.value, where, -1e6, 1e6);
      case 'ms' when !fling:
        ms = _number(e.value, where, 50, 10000);
      case 'velocity' when fling:
        velocity = _number(e.value, where, 100, 20000);
      case 'in':
        finder = _finder(e.value, where);
      default:
        throw WatcherParamError(
            '$at: unknown key "${e.key}" (${fling ? 'dx, dy, velocity, in' : 'dx, dy, ms, in'})');
    }
  }
  return DriveStep(kind, dx: dx, dy: dy, ms: ms, velocity: velocity, finder: finder);
}

double _number(Object? value, String where, double lo, double hi) {
  if (value is! num || value.isNaN || value < lo || value > hi) {
    throw WatcherParamError('$where must be a number ${_g(lo)}-${_g(hi)}');
  }
  return value.toDouble();
}

String _g(double v) => v == v.roundToDouble() && v.abs() < 1e6 ? v.toInt().toString() : '$v';

/// Whether [finder] is `key:`, `text:` or `type:` with at least one
/// character after it, at most [driveFinderMax] UTF-8 bytes.
bool isDriveFinder(String finder) {
  if (utf8.encode(finder).length > driveFinderMax) {
    return false;
  }
  for (final String prefix in const <String>['key:', 'text:', 'type:']) {
    if (finder.startsWith(prefix)) {
      return finder.length > prefix.length;
    }
  }
  return false;
}

String _finder(Object? value, String where) {
  if (value is! String || !isDriveFinder(value)) {
    throw WatcherParamError('$where must be a finder "key:NAME", "text:LABEL" or '
        '"type:WidgetType" (at most $driveFinderMax bytes)');
  }
  return value;
}

/// A drive's progress as replies report it (DRIVE.md §3), owned by the
/// binding that plays it; [WatcherCore] puts it in every reply while it
/// runs and once more after it ended.
class DriveStatus {
  /// Drive [id] of [runs] runs of [of] steps, running from run 1 step 1.
  DriveStatus(this.id, {required this.runs, required this.of});

  /// `d` and a counter per run of the watcher.
  final String id;

  /// Runs asked for (`repeat`).
  final int runs;

  /// Steps per run.
  final int of;

  /// `running`, `done` or `failed`.
  String state = 'running';

  /// The run playing now (the last played once ended), 1-based.
  int run = 1;

  /// The step playing now (the last played once ended), 1-based.
  int step = 1;

  /// Why it failed.
  String? error;

  /// Finders of what is on screen, when a finder failed (at most 5).
  List<String>? candidates;

  /// `run/step` of each step cut at [driveStepCut].
  final List<String> cut = <String>[];

  /// Whether it ended (done or failed).
  bool get ended => state != 'running';

  /// The interaction the frames of the step playing now carry.
  String get interactionId => '$id/r$run/s$step';

  /// Marks it failed with [why] (and [onScreen] finders when a finder failed).
  void fail(String why, {List<String>? onScreen}) {
    state = 'failed';
    error = why;
    candidates = onScreen;
  }

  /// The reply form.
  Map<String, Object?> toJson() => <String, Object?>{
        'id': id,
        'state': state,
        'run': run,
        'runs': runs,
        'step': step,
        'of': of,
        if (error != null) 'error': error,
        if (candidates != null) 'candidates': candidates,
        if (cut.isNotEmpty) 'cut': List<String>.of(cut),
      };
}
