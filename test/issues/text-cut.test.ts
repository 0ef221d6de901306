// cutText and sliceChars (shared/text.ts): the one way text is cut to a receiver's limit.
import { describe, expect, it } from 'vitest';
import { cellOf } from '../../shared/chat/sql-query.js';
import { reasonOf } from '../../shared/fleet/records.js';
import { cutText, sliceChars } from '../../shared/text.js';
import * as z from '../../shared/zod.js';

const SMILE = '\u{1F600}'; // two UTF-16 units
/** No lone surrogate (String.prototype.isWellFormed is ES2024, past this project's lib). */
const wellFormed = (text: string) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);

describe('text cuts', () => {
  it('keeps text within the limit, marks a cut, and never splits a surrogate pair', () => {
    expect(cutText('abc', 3)).toBe('abc');
    expect(cutText('abcd', 3)).toBe('ab…');
    expect(cutText(`a${SMILE}bc`, 3)).toBe('a…'); // the pair would end at unit 2 of 2: dropped whole
    expect(sliceChars(`a${SMILE}`, 2)).toBe('a');
    expect(sliceChars(`a${SMILE}`, 3)).toBe(`a${SMILE}`);
    for (let max = 1; max < 12; max++) {
      const cut = cutText(SMILE.repeat(8), max);
      expect(cut.length).toBeLessThanOrEqual(max);
      expect(wellFormed(cut)).toBe(true);
    }
  });

  it('cuts a SQL cell and an error key the same way, whole characters only', () => {
    expect(cellOf(`${'x'.repeat(4)}${SMILE}tail`, 6)).toBe('xxxx…');
    const key = `${'k'.repeat(10)}${SMILE}`.repeat(20);
    const error = z.record(z.string(), z.number()).safeParse({ [key]: 'x' }).error!;
    const reason = reasonOf(error);
    expect(wellFormed(reason)).toBe(true);
    expect(reason).toMatch(/…: /);
  });
});
