// Only Unicode text enters (shared/http/README.md): escapesLoneSurrogate finds an escaped lone
// surrogate in JSON text exactly (escaped backslashes, pairs, member names), and wellFormed makes
// each one U+FFFD in a parsed value, however deep, without turning a member into a prototype.
import { describe, expect, it } from 'vitest';
import { escapesLoneSurrogate, wellFormed } from '../../shared/text.js';

/** String.prototype.isWellFormed / toWellFormed (ES2024, past this project's lib; Node 20 has them). */
const isWellFormed = (text: string) => (text as unknown as { isWellFormed(): boolean }).isWellFormed();
const toWellFormed = (text: string) => (text as unknown as { toWellFormed(): string }).toWellFormed();

/** Every string and member name of a parsed value. */
function texts(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(texts);
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([key, item]) => [key, ...texts(item)]);
  return [];
}

/** `value` rebuilt with toWellFormed on every string and name. */
function mended(value: unknown): unknown {
  if (typeof value === 'string') return toWellFormed(value);
  if (Array.isArray(value)) return value.map(mended);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [toWellFormed(key), mended(item)]));
  return value;
}

/** A random JSON document whose strings mix plain text, escaped backslashes and escapes of any UTF-16 unit near the surrogates. */
function randomJson(random: () => number): string {
  const units = ['a', 'é', '🚀', '\\\\', '\\n', '\\"', '\\u0041', '\\ud83d', '\\ude80', '\\uD800', '\\uDBFF', '\\uDC00', '\\uDFFF', '\\uE000', 'u', 'd800'];
  const text = (prefix = '') => `"${prefix}${Array.from({ length: Math.floor(random() * 6) }, () => units[Math.floor(random() * units.length)]).join('')}"`;
  // Names unique by their first letter: a name given twice keeps only its last value, which no check could see.
  const members = Array.from({ length: 1 + Math.floor(random() * 3) }, (_, i) => `${text(String(i))}: [${text()}, {${text()}: ${text()}}]`);
  return `{${members.join(', ')}}`;
}

describe('Unicode text in JSON', () => {
  it('finds an escaped lone surrogate exactly as parsing and checking every string does', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    let lone = 0;
    for (let n = 0; n < 20_000; n++) {
      const json = randomJson(random);
      const parsed: unknown = JSON.parse(json);
      const expected = !texts(parsed).every(isWellFormed);
      if (expected) lone++;
      expect(escapesLoneSurrogate(json), json).toBe(expected);
      // And wellFormed leaves what toWellFormed would, in values and names (two names made one: the last value, as JSON.parse takes a name twice).
      const reference = texts(mended(parsed));
      expect(texts(wellFormed(parsed)), json).toEqual(reference);
    }
    expect(lone).toBeGreaterThan(1_000);
  });

  it('reads escaped backslashes as text: only a real escape makes a surrogate', () => {
    expect(escapesLoneSurrogate(String.raw`{"a": "\\ud800"}`)).toBe(false);
    expect(escapesLoneSurrogate(String.raw`{"a": "\\\ud800"}`)).toBe(true);
    expect(escapesLoneSurrogate(String.raw`{"a": "\\uD800\uDC00"}`)).toBe(true);
    expect(escapesLoneSurrogate(String.raw`{"a": "\ud83d\ude80"}`)).toBe(false);
    expect(escapesLoneSurrogate(String.raw`{"a": "\ud83d", "b": "\ude80"}`)).toBe(true);
    expect(escapesLoneSurrogate('{"a": "🚀"}')).toBe(false);
  });

  it('mends member names in place and in order, however deep, and keeps a __proto__ member a member', () => {
    const deep = JSON.parse(`${'['.repeat(50_000)}{"k\\ud800": "v\\udc00", "b": 1, "__proto__": {"x": "\\ud800"}}${']'.repeat(50_000)}`);
    let inner = wellFormed(deep) as unknown;
    while (Array.isArray(inner)) inner = inner[0];
    expect(Object.keys(inner as object)).toEqual(['k\uFFFD', 'b', '__proto__']);
    expect(Object.getPrototypeOf(inner)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(inner, '__proto__')?.value).toEqual({ x: '\uFFFD' });
    expect((inner as Record<string, unknown>)['k\uFFFD']).toBe('v\uFFFD');
    expect(wellFormed('\udc00a')).toBe('\uFFFDa');
  });
});
