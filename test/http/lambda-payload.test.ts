import { describe, expect, it } from 'vitest';
import { gzippedAnswerBytes, mayGzipOver } from '../../shared/http/lambda-payload.js';

/** A seeded stream, so a failure repeats. */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Text deflate cannot shrink: random characters from ASCII, the BMP's three-byte range and astral pairs. */
function incompressible(length: number, random: () => number): string {
  let text = '';
  while (text.length < length) {
    const kind = random();
    const code = kind < 0.3 ? 0x20 + Math.floor(random() * 95) : kind < 0.8 ? 0x4e00 + Math.floor(random() * 0x5000) : 0x1f300 + Math.floor(random() * 0x300);
    text += String.fromCodePoint(code);
  }
  return text.slice(0, length);
}

describe('mayGzipOver', () => {
  it('never calls a text short that weighs more than the limit gzipped and base64-encoded', () => {
    const random = lcg(7);
    for (const length of [0, 1, 10, 100, 1_000, 21_845, 65_535, 65_536, 200_000]) {
      const text = incompressible(length, random);
      const bytes = gzippedAnswerBytes(text);
      // The tightest limit it may be short for is the one its own size just exceeds.
      expect(mayGzipOver(text, bytes - 1), `length ${length}, ${bytes} bytes`).toBe(true);
    }
  });

  it('lets a text far under the limit go unmeasured, and measures one that could be over', () => {
    expect(mayGzipOver('x'.repeat(1_000), 6 * 1024 * 1024)).toBe(false);
    expect(mayGzipOver('x'.repeat(2_000_000), 6 * 1024 * 1024)).toBe(true);
  });
});
