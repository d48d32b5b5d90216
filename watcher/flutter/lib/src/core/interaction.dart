// The interaction a frame belongs to.

/// Longest interaction id, in characters (Unicode code points).
const int interactionIdMaxLength = 128;

/// Longest `linkedBy`, in characters (Unicode code points).
const int linkedByMaxLength = 64;

/// A named interaction (a scroll, a tap, a test step) that tags every frame
/// drawn while it is current.
class Interaction {
  /// Interaction [interactionId], identified by [linkedBy] (`agent`, `app`,
  /// `pointer`, …).
  const Interaction(this.interactionId, this.linkedBy);

  /// What the interaction is called, 1–128 printable characters.
  final String interactionId;

  /// Who or what identified it, 1–64 printable characters.
  final String linkedBy;

  /// The reply form: `{"interactionId", "linkedBy"}`.
  Map<String, Object?> toJson() => <String, Object?>{
        'interactionId': interactionId,
        'linkedBy': linkedBy,
      };
}

/// Null when [value] is 1–[max] printable characters, else why not.
///
/// Characters are Unicode code points; C0 controls, DEL and C1 controls are
/// not printable (the same rule as `check_text` in `watcher/sim/model.c`).
String? checkInteractionText(String name, String value, int max) {
  int length = 0;
  for (final int rune in value.runes) {
    if (rune < 0x20 || (rune >= 0x7f && rune <= 0x9f)) {
      return '$name must be 1-$max printable characters';
    }
    length++;
  }
  if (length < 1 || length > max) {
    return '$name must be 1-$max printable characters';
  }
  return null;
}
