// The checks both chart tests make on an SVG file: well-formed XML (a
// small checker — balanced tags, quoted attributes, only the five XML
// entities — enough for what chart.c writes, stricter than a browser), and
// the red bars counted from the markup.
export const JANK_FILL = '#d62728';

// Throws with the reason when text is not one well-formed <svg> element.
export function assertWellFormedSvg(text) {
  let i = 0;
  const stack = [];
  let roots = 0;
  const fail = (why) => { throw new Error(`SVG not well-formed at ${i}: ${why}: ${JSON.stringify(text.slice(i, i + 40))}`); };
  const entity = () => {
    const m = /^&(amp|lt|gt|quot|#39|#[0-9]+|#x[0-9a-fA-F]+);/.exec(text.slice(i, i + 12));
    if (!m) fail('bad entity');
    i += m[0].length;
  };
  if (text.startsWith('<?xml')) { i = text.indexOf('?>'); if (i < 0) fail('declaration'); i += 2; }
  while (i < text.length) {
    const c = text[i];
    if (c === '&') { entity(); continue; }
    if (c !== '<') {
      if (c === '>') fail('raw >');
      if (!stack.length && !/\s/.test(c)) fail('text outside the root');
      i++; continue;
    }
    if (text[i + 1] === '/') {
      const m = /^<\/([A-Za-z][\w:-]*)>/.exec(text.slice(i, i + 80));
      if (!m || stack.pop() !== m[1]) fail(`mismatched end tag`);
      i += m[0].length; continue;
    }
    const m = /^<([A-Za-z][\w:-]*)/.exec(text.slice(i, i + 80));
    if (!m) fail('bad tag');
    if (!stack.length && roots++) fail('second root');
    if (!stack.length && m[1] !== 'svg') fail('root is not <svg>');
    i += m[0].length;
    const seen = new Set();
    for (;;) {
      while (/\s/.test(text[i])) i++;
      if (text[i] === '>') { stack.push(m[1]); i++; break; }
      if (text.startsWith('/>', i)) { i += 2; break; }
      const a = /^([A-Za-z][\w:.-]*)="/.exec(text.slice(i, i + 80));
      if (!a) fail('bad attribute');
      if (seen.has(a[1])) fail(`duplicate attribute ${a[1]}`);
      seen.add(a[1]);
      i += a[0].length;
      while (text[i] !== '"') {
        if (i >= text.length || text[i] === '<') fail('bad attribute value');
        if (text[i] === '&') entity(); else i++;
      }
      i++;
    }
  }
  if (stack.length) fail(`unclosed <${stack.at(-1)}>`);
  if (roots !== 1) fail('no root');
}

// The bars drawn red because they are over the budget.
export function redBars(text) {
  return [...text.matchAll(/<rect class="(build|raster) jank[^"]*"[^>]*fill="([^"]+)"/g)]
    .filter((m) => m[2] === JANK_FILL).length;
}
