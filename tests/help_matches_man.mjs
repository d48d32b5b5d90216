// `telescope-mcp --help` and docs/telescope-mcp.1 document the same flags and
// environment variables: every one in either is in the other.
//
//   node tests/help_matches_man.mjs BINARY MAN_PAGE
//
// From --help: the flags that start an option line ("  --flag ...", "  --a, -b")
// and the TELESCOPE_* names. From the man page: the flags named on the line
// after each .TP (its tag), and the TELESCOPE_* names, with roff's \- unescaped.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const [bin, manPath] = process.argv.slice(2);
const help = execFileSync(bin, ['--help'], { encoding: 'utf8' });
const man = readFileSync(manPath, 'utf8');

const flagsIn = (text) => new Set(text.match(/(?<![\w-])--?[a-z][a-z-]*/g) ?? []);
const helpFlags = new Set();
for (const line of help.split('\n')) {
  const m = line.match(/^  (-{1,2}[a-z][^ ,]*(?:, -{1,2}[a-z][^ ,]*)*)/);
  if (m) for (const f of flagsIn(m[1])) helpFlags.add(f);
}
const manLines = man.split('\n');
const manFlags = new Set();
manLines.forEach((line, i) => {
  if (line.startsWith('.TP') && manLines[i + 1]) {
    // Only the tag's first words: the flags it names, not its argument.
    for (const f of flagsIn(manLines[i + 1].replace(/\\-/g, '-').replace(/\\f[BIRP]/g, '').replace(/"[^"]*"/g, '')))
      manFlags.add(f);
  }
});
const envIn = (text) => new Set(text.match(/TELESCOPE_[A-Z_]+/g) ?? []);
const helpEnv = envIn(help), manEnv = envIn(man.replace(/\\_/g, '_'));

const failures = [];
const diff = (a, b, what) => [...a].filter((x) => !b.has(x)).forEach((x) => failures.push(`${x}: ${what}`));
diff(helpFlags, manFlags, 'in --help, not an option of the man page');
diff(manFlags, helpFlags, 'an option of the man page, not in --help');
diff(helpEnv, manEnv, 'in --help, not in the man page');
diff(manEnv, helpEnv, 'in the man page, not in --help');
if (helpFlags.size < 8) failures.push(`only ${helpFlags.size} flags found in --help: the parser is broken`);
if (failures.length) {
  console.error('FAIL\n' + failures.join('\n'));
  process.exit(1);
}
console.log(`ok: ${helpFlags.size} flags (${[...helpFlags].join(' ')}) and ${helpEnv.size} variables match`);
