// Matching text against a pattern with two wildcards (a run of characters, one character):
// the issue rules' globs (`*`, `?`) and the LIKE filters of lists (`%`, `_`). Not a regular
// expression: a pattern from a request or a rule set must not be able to make the match
// backtrack exponentially (`%%%%%%%%%%#` against a long name).

/**
 * Does all of `text` fit `pattern`, where `any` stands for any run of characters (empty
 * included) and `one` for any one character? The classic two-pointer match with one
 * backtrack point: O(text × pattern) at worst, never exponential. Case-sensitive: lower
 * both first for a case-insensitive match.
 */
export function wildcardFits(pattern: string, text: string, any: string, one: string): boolean {
  let p = 0;
  let t = 0;
  let starP = -1;
  let starT = 0;
  while (t < text.length) {
    // The wildcard first: a text holding the wildcard's own character (`100% Pure`) must not use it up as a literal.
    if (p < pattern.length && pattern[p] === any) {
      starP = p++;
      starT = t;
    } else if (p < pattern.length && (pattern[p] === one || pattern[p] === text[t])) {
      p++;
      t++;
    } else if (starP >= 0) {
      p = starP + 1;
      t = ++starT;
    } else return false;
  }
  while (p < pattern.length && pattern[p] === any) p++;
  return p === pattern.length;
}
