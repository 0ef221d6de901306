// The investigations list's customer filter (SQL LIKE as a substring match): the same
// answers as a regular expression, without one's backtracking on hostile patterns.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { likeMatcher } from '../../shared/agents/queries.js';

/** LIKE as a regular expression, for short inputs only. */
const reference = (pattern: string, value: string) =>
  new RegExp([...pattern.trim().toLowerCase()].map((c) => (c === '%' ? '.*' : c === '_' ? '.' : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join(''), 's').test(
    value.toLowerCase(),
  );

describe('likeMatcher', () => {
  it('matches a substring, case-insensitive, with % and _ as wildcards and every other character literal', () => {
    expect(likeMatcher('CME')('Acme Corporation')).toBe(true);
    expect(likeMatcher('a%n')('Acme Corporation')).toBe(true);
    expect(likeMatcher('acme_corp')('Acme Corporation')).toBe(true);
    expect(likeMatcher('acme_corp')('AcmeCorporation')).toBe(false);
    expect(likeMatcher('a.c')('abc')).toBe(false);
    expect(likeMatcher('a*c')('a*c ltd')).toBe(true);
    expect(likeMatcher('a*c')('abc')).toBe(false);
    expect(likeMatcher('?')('what?')).toBe(true);
    expect(likeMatcher('  globex ')('Globex')).toBe(true);
  });

  it('keeps % and _ wildcards in the pattern when the name holds them too', () => {
    const names = ['100% Pure Co', '%off sale', 'a%xb', 'a_b'];
    expect(names.filter(likeMatcher('100%co'))).toEqual(['100% Pure Co']);
    expect(names.filter(likeMatcher('sale'))).toEqual(['%off sale']);
    expect(names.filter(likeMatcher('a%b'))).toEqual(['a%xb', 'a_b']);
  });

  // Checked for the right answer, not timed: a regular expression took about a minute per name on the first.
  it('answers right on the patterns that made the regular expression backtrack for minutes', () => {
    expect(likeMatcher(`${'%'.repeat(20)}#`)('Acme Corporation')).toBe(false);
    expect(likeMatcher(`${'%_'.repeat(99)}#`)('a'.repeat(200))).toBe(false);
    expect(likeMatcher(`${'%_'.repeat(99)}#`)(`${'a'.repeat(200)}#`)).toBe(true);
    expect(likeMatcher(`${'%a'.repeat(100)}b`)('a'.repeat(200))).toBe(false);
  });

  it('agrees with the regular expression on any pattern of a, b, %, _, * and . over any text of the same', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('a', 'B', '%', '_', '*', '.'), maxLength: 10 }),
        fc.string({ unit: fc.constantFrom('A', 'b', '%', '_', '*', '.'), maxLength: 20 }),
        (pattern, value) => {
          expect(likeMatcher(pattern)(value)).toBe(reference(pattern, value));
        },
      ),
      { numRuns: 3_000 },
    );
  });
});
