// Parsing the string parameters of `ext.telescope.frames` (DESIGN §5).

/// Largest `limit` accepted; a larger one is a caller bug, not a wish.
const int readLimitMax = 1000000;

/// A bad parameter; the extension answers -32602 with [detail].
class WatcherParamError implements Exception {
  /// An error explained by [detail], which names the parameter.
  const WatcherParamError(this.detail);

  /// What was wrong, naming the parameter.
  final String detail;

  @override
  String toString() => 'WatcherParamError: $detail';
}

/// The actions of `ext.telescope.frames`.
enum WatcherAction {
  /// Records after `since` (the default action).
  read,

  /// Switch attribution on; optionally set the interaction.
  start,

  /// Switch attribution off and end the interaction.
  stop,

  /// Set (with `interactionId`) or clear (without) the interaction.
  mark,

  /// Ask the engine for one frame.
  probe,

  /// Metadata only.
  status,

  /// Play a workload (`steps`, `repeat`): the binding starts it before the
  /// core answers (DRIVE.md §3); the core only reports it.
  drive,
}

final RegExp _decimal = RegExp(r'^[0-9]{1,19}$');

/// The action named by [params] (`read` when absent).
WatcherAction parseAction(Map<String, String> params) {
  final String? name = params['action'];
  if (name == null) {
    return WatcherAction.read;
  }
  for (final WatcherAction action in WatcherAction.values) {
    if (action.name == name) {
      return action;
    }
  }
  throw WatcherParamError(
      'action must be one of read, start, stop, mark, probe, status, drive; got "$name"');
}

/// The value of the decimal parameter [key] (digits only, 0 up to the
/// largest 64-bit integer), [fallback] when absent.
int parseDecimal(Map<String, String> params, String key, int fallback, {int? max}) {
  final String? text = params[key];
  if (text == null) {
    return fallback;
  }
  final int? value = _decimal.hasMatch(text) ? int.tryParse(text) : null;
  if (value == null || value < 0 || (max != null && value > max)) {
    throw WatcherParamError(max == null
        ? '$key must be a decimal integer >= 0, got "$text"'
        : '$key must be a decimal integer 0-$max, got "$text"');
  }
  return value;
}

/// The wire protocol of the reply: the param `protocol` (a decimal >= 1,
/// default 1) capped at [newest], the newest this watcher speaks. A server
/// asks for the newest it reads; an older watcher ignores the param.
int parseProtocol(Map<String, String> params, int newest) {
  final String? text = params['protocol'];
  if (text == null) {
    return 1;
  }
  final int? value = _decimal.hasMatch(text) ? int.tryParse(text) : null;
  if (value == null || value < 1) {
    throw WatcherParamError('protocol must be a decimal integer >= 1, got "$text"');
  }
  return value < newest ? value : newest;
}
