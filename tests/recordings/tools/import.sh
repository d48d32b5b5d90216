#!/bin/sh
# Re-creates every tests/recordings/<name>/trace.json from its public source.
# Usage: tools/import.sh DEVTOOLS_GIT_DIR   (a clone of github.com/flutter/devtools)
# Values are never edited: a JSON file is copied as it is (re-serialised
# compactly); a Dart file is converted by dart2json.mjs; the only trimming is
# dropping whole top-level keys that are not the trace (named per recording).
set -eu
git_dir=${1:?usage: tools/import.sh DEVTOOLS_GIT_DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
show() { git --git-dir="$git_dir" show "$1"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Keeps the keys telescope's replay and expect.mjs read, drops the rest:
# flutterFrames, displayRefreshRate, and rebuildCountModel when the export
# has one (DevTools writes null when it saw no Flutter.RebuiltWidgets event).
# trim MS: also drops the trace events that begin more than MS before the
# first frame's vsync or after the last frame's raster finish (idle head and
# tail: counters only; no value changes).
trim() {
  node -e '
    const d = JSON.parse(require("fs").readFileSync(0, "utf8"));
    const cut = Number(process.argv[1] ?? NaN);
    const ff = d.performance?.flutterFrames ?? [];
    if (cut >= 0 && ff.length) {
      const first = Math.min(...ff.map((f) => f.startTime - f.vsyncOverhead));
      const last = Math.max(...ff.map((f) => f.startTime - f.vsyncOverhead + f.elapsed));
      d.traceEvents = d.traceEvents.filter((e) => e.ph === "M" || (e.ts >= first - cut * 1000 && e.ts <= last + cut * 1000));
    }
    const p = d.performance ?? {};
    const out = { ...d, performance: { flutterFrames: p.flutterFrames, displayRefreshRate: p.displayRefreshRate,
      rebuildCountModel: p.rebuildCountModel } };
    if (!p.flutterFrames) delete out.performance.flutterFrames;
    if (!p.rebuildCountModel) delete out.performance.rebuildCountModel;
    process.stdout.write(JSON.stringify(out) + "\n");' "$@"
}

# Flutter 3.4 Android "world clock" demo (DevTools performance export).
show 25be86a88565c10bdbbffd42da134ff62cd18de8:packages/devtools_app/test/test_infra/test_data/performance/performance_diagnosis_world_clock.json \
  | trim > "$here/android-world-clock-3.4/trace.json"

# Flutter 3.7 iOS (Skia/Metal) app (DevTools performance export as a Dart map
# literal), as first committed, before "prune test data" (445e398) cut it to 4 frames.
# 3.5 s of counters before the first frame and 2 s after the last: cut 1 s from them.
show ef8192f086ebcd14c3ef52e80fb12b17a535f478:packages/devtools_test/lib/src/integration_test/test_data/performance.dart > "$tmp/ios37.dart"
node "$here/tools/dart2json.mjs" "$tmp/ios37.dart" samplePerformanceData | trim 1000 > "$here/ios-metal-3.7/trace.json"

# Flutter 3.20 iOS (Impeller) app: a DevTools export whose trace is a Perfetto
# protobuf (performance.traceBinary), inside json.decode('''…''') in Dart.
show 289bde29a9e4828128e29c534df3576d619a3df4:packages/devtools_test/lib/src/test_data/_performance_data.dart > "$tmp/ios320.dart"
node "$here/tools/dart2json.mjs" "$tmp/ios320.dart" samplePerformanceData > "$tmp/ios320.json"
# Its trace runs 19 s past the last frame with nothing but counters: cut 1 s after it.
node "$here/tools/perfetto2json.mjs" "$tmp/ios320.json" | trim 1000 > "$here/ios-impeller-3.20/trace.json"
