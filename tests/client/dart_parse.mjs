// The Dart parse check (ctest dart.parse): no Flutter SDK runs here, so every
// .dart file of the watcher package is at least parsed with tree-sitter's
// Dart grammar. Fails naming the file and the line of the first ERROR or
// MISSING node, and fails when it finds no file, so it cannot pass vacuously.
//
//   node tests/client/dart_parse.mjs <dir>
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import Parser from '@sengac/tree-sitter';
import Dart from '@sengac/tree-sitter-dart';

const root = process.argv[2];
if (!root) {
  console.error('usage: node dart_parse.mjs <dir>');
  process.exit(2);
}

const parser = new Parser();
parser.setLanguage(Dart);

// The first ERROR or MISSING node in document order, or null.
function firstProblem(node) {
  if (node.type === 'ERROR' || node.isMissing) return node;
  if (!node.hasError && !node.isMissing) return null;
  for (let i = 0; i < node.childCount; i++) {
    const found = firstProblem(node.child(i));
    if (found) return found;
  }
  return node.hasError ? node : null;
}

// Null when src parses cleanly, else "line L:C: what".
function problemOf(src) {
  const tree = parser.parse(src);
  if (!tree.rootNode.hasError) return null;
  const bad = firstProblem(tree.rootNode) ?? tree.rootNode;
  const what = bad.isMissing ? `missing ${bad.type}` : `syntax error near ${JSON.stringify(bad.text.slice(0, 40))}`;
  return `line ${bad.startPosition.row + 1}:${bad.startPosition.column + 1}: ${what}`;
}

// Self-check: a broken snippet must be reported, a good one must not.
const broken = 'class A {\n  void f( {\n    final x = ;\n  }\n';
const good = "import 'dart:math';\n\n/// Doc.\nclass A {\n  final int x = 1;\n}\n";
if (problemOf(broken) === null) {
  console.error('self-check failed: a broken Dart snippet parsed without error');
  process.exit(1);
}
if (problemOf(good) !== null) {
  console.error(`self-check failed: a valid Dart snippet was reported: ${problemOf(good)}`);
  process.exit(1);
}

function dartFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    if (name.startsWith('.') || name === 'build') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...dartFiles(path));
    else if (name.endsWith('.dart')) out.push(path);
  }
  return out;
}

const files = dartFiles(root);
if (files.length === 0) {
  console.error(`no .dart files found under ${root}`);
  process.exit(1);
}
const flutterImport = /^\s*(?:import|export)\s+['"](?:package:flutter[/_]|dart:ui['"])/m;
let failed = 0;
for (const file of files) {
  const src = readFileSync(file, 'utf8');
  const problem = problemOf(src);
  if (problem) {
    console.error(`${relative(process.cwd(), file)}: ${problem}`);
    failed++;
  }
  if (/[/\\]lib[/\\]src[/\\]core[/\\]/.test(file)) {
    const m = src.match(flutterImport);
    if (m) {
      const line = src.slice(0, m.index).split('\n').length + (m[0].startsWith('\n') ? 1 : 0);
      console.error(`${relative(process.cwd(), file)}: line ${line}: the pure core must not import Flutter (${m[0].trim()})`);
      failed++;
    }
  }
}
console.log(`parsed ${files.length} Dart files, ${failed} with errors`);
process.exit(failed ? 1 : 0);
