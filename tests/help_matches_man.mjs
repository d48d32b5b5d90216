// `telescope-mcp --help` and docs/telescope-mcp.1 document the same flags and
// environment variables: every one in either is in the other. The man page's
// CHECK section is compared with `telescope-mcp check --help` instead.
//
//   node tests/help_matches_man.mjs BINARY MAN_PAGE
//
// From --help: the flags that start an option line ("  --flag ...", "  --a, -b")
// and the TELESCOPE_* names. From the man page: the flags named on the line
// after each .TP (its tag), and the TELESCOPE_* names, with roff's \- unescaped.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const [bin, manPath] = process.argv.slice(2);
const failures = [];
const manAll = readFileSync(manPath, 'utf8');
// The CHECK section runs from its .SH to the next .SH.
const checkAt = manAll.indexOf('\n.SH CHECK\n');
const checkEnd = checkAt < 0 ? -1 : manAll.indexOf('\n.SH ', checkAt + 1);
if (checkAt < 0 || checkEnd < 0) failures.push('the man page has no CHECK section');
const sections = [
  { what: '', args: ['--help'], man: checkAt < 0 ? manAll : manAll.slice(0, checkAt) + manAll.slice(checkEnd), min: 8 },
  { what: 'check ', args: ['check', '--help'], man: checkAt < 0 ? '' : manAll.slice(checkAt, checkEnd), min: 8 },
];
const summaries = [];
for (const { what, args, man, min } of sections) {
  const help = execFileSync(bin, args, { encoding: 'utf8' });

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

const diff = (a, b, why) => [...a].filter((x) => !b.has(x)).forEach((x) => failures.push(`${what}${x}: ${why}`));
diff(helpFlags, manFlags, `in ${what}--help, not an option of the man page`);
diff(manFlags, helpFlags, `an option of the man page, not in ${what}--help`);
diff(helpEnv, manEnv, `in ${what}--help, not in the man page`);
diff(manEnv, helpEnv, `in the man page, not in ${what}--help`);
if (helpFlags.size < min) failures.push(`only ${helpFlags.size} flags found in ${what}--help: the parser is broken`);
summaries.push(`${what}${helpFlags.size} flags (${[...helpFlags].join(' ')}) and ${helpEnv.size} variables`);
}
if (failures.length) {
  console.error('FAIL\n' + failures.join('\n'));
  process.exit(1);
}
console.log(`ok: ${summaries.join('; ')} match`);
