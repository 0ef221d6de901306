// AI text (Markdown a model wrote) as the plain words a list cell shows: no `##`, `**`, `>`, list bullets or link
// addresses, as the rendered text reads (components/markdown.tsx renders the whole where a page has room). Lists
// cannot wait for marked and DOMPurify, loaded lazily, for every row: this is a line-by-line reading of the marks
// Markdown writes, and whatever it misses stays text (React escapes it), never markup.

/** One line's inline marks removed: emphasis, strong, strikethrough, code spans, links and images (their text), HTML tags, escapes. */
export function inlineText(line: string): string {
  // A code span's content is verbatim (no mark inside it is one: `max_connections`, `__init__`, `a*b`), and an escaped
  // mark (`\*`) is the character itself: both are set aside first, so no rule below reads them as marks. A code span is
  // opened by a run of backticks not escaped and closed by a run of the same length; one space each side is padding.
  const kept: string[] = [];
  const keep = (text: string) => `\uE000${kept.push(text) - 1}\uE001`;
  return (
    line
      .replace(
        /(^|[^\\`])(`+)(?!`)(.*?[^`])\2(?!`)/g,
        (_, before: string, _ticks: string, code: string) => before + keep(/^ .*[^ ].* $/.test(code) ? code.slice(1, -1) : code),
      )
      .replace(/\\([\\`*_{}[\]()#+\-.!>~|])/g, (_, c: string) => keep(c))
      .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
      .replace(/<\/?[a-zA-Z][^>]*>/g, '')
      .replace(/(\*\*|__)(?=\S)(.+?)(?<=\S)\1/g, '$2')
      .replace(/~~(?=\S)(.+?)(?<=\S)~~/g, '$1')
      .replace(/\*(?=\S)(.+?)(?<=\S)\*/g, '$1')
      // `_` is emphasis only at a word's edge: disk_used_pct keeps its underscores.
      .replace(/(^|[^\p{L}\p{N}_])_(?=\S)(.+?)(?<=\S)_(?![\p{L}\p{N}_])/gu, '$1$2')
      .replace(/\uE000(\d+)\uE001/g, (_, i: string) => kept[Number(i)] ?? '')
      .replace(/\s+/g, ' ')
      .trim()
  );
}

interface Line {
  text: string;
  heading: boolean;
}

/** The text lines of a Markdown source, block marks removed; rules, fences and table rulers are no text. */
function lines(source: string): Line[] {
  return source.split(/\r?\n/).flatMap((raw) => {
    let line = raw.trim();
    if (/^(```|~~~)/.test(line) || /^([-*_]\s*){3,}$/.test(line) || /^\|?\s*:?-{2,}/.test(line)) return [];
    line = line.replace(/^(>\s?)+/, '');
    const heading = /^#{1,6}(\s|$)/.test(line);
    line = line
      .replace(/^#{1,6}(\s+|$)/, '')
      .replace(/\s+#+$/, '')
      .replace(/^([-*+]|\d+[.)])\s+/, '')
      .replace(/^\|(.*)\|$/, '$1')
      .replace(/\s*\|\s*/g, ' · ');
    const text = inlineText(line);
    return text ? [{ text, heading }] : [];
  });
}

/**
 * The first line of what the Markdown reads as, for a list cell: a heading that opens it ("## Summary") is skipped
 * when text follows, since it names the text rather than says it; cut to `max` characters with an ellipsis.
 */
export function firstLine(source: string, max = Number.POSITIVE_INFINITY): string {
  const all = lines(source);
  const line = (all.find((l) => !l.heading) ?? all[0])?.text ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** The whole text without marks, its lines joined: a cell's tooltip. */
export const plainText = (source: string): string =>
  lines(source)
    .map((l) => l.text)
    .join(' ');
