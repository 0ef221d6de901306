// Finding the JSON object in a model's answer (shared/llm/structured.ts jsonIn): the whole
// text, a fence, or the outermost braces; and, checked for the answer rather than timed, the
// shapes of text that made the earlier regular expression backtrack for hours.
import { describe, expect, it } from 'vitest';
import { jsonIn } from '../../shared/llm/structured.js';

describe('jsonIn', () => {
  it('reads the whole text, a ```json or bare fence, or the outermost braces', () => {
    expect(jsonIn('{"a":1}')).toEqual({ a: 1 });
    expect(jsonIn('Here it is:\n```json\n{"a":2}\n```\nDone.')).toEqual({ a: 2 });
    expect(jsonIn('```\n{"a":3}\n```')).toEqual({ a: 3 });
    expect(jsonIn('```json{"a":4}```')).toEqual({ a: 4 });
    expect(jsonIn('The answer is {"a":{"b":5}} as asked.')).toEqual({ a: { b: 5 } });
    // The first fence is the one read; one that does not parse leaves the braces.
    expect(jsonIn('```json\n{"a":6}\n```\n```json\n{"a":7}\n```')).toEqual({ a: 6 });
    expect(jsonIn('```yaml\na: 8\n``` then {"a":9}')).toEqual({ a: 9 });
  });

  it('answers undefined when there is no JSON: no fence end, no braces, nothing', () => {
    expect(jsonIn('')).toBeUndefined();
    expect(jsonIn('no json here')).toBeUndefined();
    expect(jsonIn('```json\n{"a":1')).toBeUndefined();
  });

  it('answers right on a fence followed by megabytes of whitespace', () => {
    const runaway = `\`\`\`json${' '.repeat(4 << 20)}`;
    expect(jsonIn(runaway)).toBeUndefined();
    expect(jsonIn(`${runaway}{"a":1}\`\`\``)).toEqual({ a: 1 });
    expect(jsonIn(`\`\`\`${'\n'.repeat(1 << 20)}`)).toBeUndefined();
  });
});
